"""The budget benchmark: tasks solved against time in one ``-B`` run, and whether it used its budget.

    python benchmarks/budget_curve.py -B 20m --device=-g [-d arc1-train] [--out DIR]

One fresh ``python -m pipeline run -B BUDGET`` (its own empty cache), then from its report.json:
the tasks solved at each tenth of the budget, the correct test outputs (with design / check halves
of ARC-1 train), the iterations and why the run stopped, and when its last task was solved as a
share of the budget. A run used its budget when that share is at least 80%, or when it stopped
early because every task was solved or nothing was left to try. The curve is also written as
``solved_over_time.svg`` beside the run's report.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from solved import half_of  # noqa: E402

from cache import parse_duration  # noqa: E402
from pipeline.run.score import score_submission  # noqa: E402
from pipeline.run.tasks import load_solutions  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
USED_SHARE = 0.8  # the last solved task at or after this share of the budget: the budget was used
EARLY_STOPS = ("every task solved", "nothing left to try")


def solved_times(report: dict) -> list[float]:
    """Run seconds at which each solved task of a report was solved, in order."""
    return sorted(t["solved_at"] for t in report.get("tasks", []) if t.get("solved_at") is not None)


def curve_svg(times: list[float], budget: float, total: int, width: int = 640, height: int = 320) -> str:
    """Solved tasks against run time as a step line in an SVG image (the budget on the x axis)."""
    pad = 40
    x = lambda s: pad + (width - 2 * pad) * min(s, budget) / budget  # noqa: E731
    y = lambda n: height - pad - (height - 2 * pad) * n / max(1, total)  # noqa: E731
    points = [(x(0), y(0))]
    for n, s in enumerate(times, 1):
        points += [(x(s), y(n - 1)), (x(s), y(n))]
    points.append((x(budget), y(len(times))))
    line = " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
            f'font-size="12">\n<rect width="100%" height="100%" fill="white"/>\n'
            f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" stroke="black"/>\n'
            f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="black"/>\n'
            f'<line x1="{x(USED_SHARE * budget):.1f}" y1="{pad}" x2="{x(USED_SHARE * budget):.1f}" '
            f'y2="{height - pad}" stroke="grey" stroke-dasharray="4"/>\n'
            f'<polyline points="{line}" fill="none" stroke="steelblue" stroke-width="2"/>\n'
            f'<text x="{width / 2}" y="{height - 8}" text-anchor="middle">run time (budget {budget:.0f} s)</text>\n'
            f'<text x="{pad}" y="{pad - 10}">tasks solved: {len(times)} of {total}</text>\n</svg>\n')


def main(argv=None) -> int:
    """Run once with the budget, print its curve and figures, write the SVG."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-B", "--budget", required=True, help="the run's budget: 90s, 20m, 1h")
    parser.add_argument("-d", "--dataset", default="arc1-train")
    parser.add_argument("-c", "--count", type=int, default=0)
    parser.add_argument("--device", default="-m", choices=["-m", "-g"])
    parser.add_argument("--out", help="the run's folder (default: a temporary folder)")
    parser.add_argument("--json", help="write the figures to this file too")
    args = parser.parse_args(argv)
    budget = parse_duration(args.budget)
    out = Path(args.out or tempfile.mkdtemp(prefix="budget_curve_"))
    out.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pipeline", "run", "-d", args.dataset, args.device, "-B", args.budget,
           "-O", str(out), "-C", f"disk:{out}/cache"]
    if args.count:
        cmd += ["-c", str(args.count)]
    start = time.perf_counter()
    with open(out / "run.log", "w") as log:  # the run's progress and budget decisions
        subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=log)
    wall = time.perf_counter() - start
    report = json.loads((out / "report.json").read_text())
    submission = json.loads((out / "submission.json").read_text())
    solutions = {k: v for k, v in load_solutions(args.dataset).items() if k in submission}
    correct, total, per_task = score_submission(submission, solutions)
    halves: dict = {}
    for task_id, hits in per_task.items():
        half = halves.setdefault(half_of(task_id), [0, 0])
        half[0] += sum(hits)
        half[1] += len(hits)
    times = solved_times(report)
    run = report["run"]
    last_share = times[-1] / budget if times else 0.0
    stop = run.get("stop_reason")
    used = last_share >= USED_SHARE or stop in EARLY_STOPS
    n_tasks = len(report.get("tasks", []))
    print(f"{args.dataset} {args.device} -B {args.budget}: wall {wall:.0f} s, {run.get('iterations')} iterations, "
          f"stopped: {stop}")
    print("| share of budget | run time | tasks solved |")
    print("|---|---|---|")
    for tenth in range(1, 11):
        until = budget * tenth / 10
        print(f"| {tenth * 10}% | {until:.0f} s | {sum(1 for s in times if s <= until)} |")
    print(f"correct {correct}/{total} " + " ".join(f"{k} {v[0]}/{v[1]}" for k, v in sorted(halves.items())))
    print(f"last task solved at {times[-1] if times else 0:.0f} s ({100 * last_share:.0f}% of the budget); "
          f"budget used: {'yes' if used else 'no'}")
    (out / "solved_over_time.svg").write_text(curve_svg(times, budget, n_tasks))
    if args.json:
        Path(args.json).write_text(json.dumps({
            "budget": budget, "wall": wall, "iterations": run.get("iterations"), "stop_reason": stop,
            "solved_at": times, "correct": correct, "total": total, "halves": halves,
            "last_share": last_share, "used": used}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
