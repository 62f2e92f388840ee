"""The search-power benchmark: test outputs right per half of a dataset, with each mechanism
switched off in turn (the ablation table of benchmarks/RESULTS.md).

    python benchmarks/search_power.py -d arc1-train -D 2 --device=-m [--ablate] [--out DIR]

Each configuration is one fresh ``python -m pipeline run`` (its own empty cache), timed as a
user would time it; the submission is scored with benchmarks/solved.py's split (design / check
halves of ARC-1 train by a hash of the task id). Prints one markdown row per configuration.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from solved import half_of  # noqa: E402

from pipeline.search.mechanisms import MECHANISMS  # noqa: E402
from pipeline.run.score import score_submission  # noqa: E402
from pipeline.run.tasks import load_solutions  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def run_once(args, without: tuple, out: Path) -> dict:
    """One run with the mechanisms ``without`` switched off; its figures."""
    cmd = [sys.executable, "-m", "pipeline", "run", "-d", args.dataset, "-D", str(args.depth), args.device,
           "-O", str(out), "-C", f"disk:{out}/cache"]
    if args.count:
        cmd += ["-c", str(args.count)]
    for name in without:
        cmd += ["--without", name]
    start = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    submission = json.loads((out / "submission.json").read_text())
    report = json.loads((out / "report.json").read_text())
    solutions = {k: v for k, v in load_solutions(args.dataset).items() if k in submission}
    correct, total, per_task = score_submission(submission, solutions)
    halves = {}
    for task_id, hits in per_task.items():
        half = halves.setdefault(half_of(task_id), [0, 0])
        half[0] += sum(hits)
        half[1] += len(hits)
    return {"without": list(without), "correct": correct, "total": total, "halves": halves, "wall": wall,
            "search": report["run"]["stages"].get("search", 0.0)}


def main(argv=None) -> int:
    """Run the configurations and print their rows."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-d", "--dataset", default="arc1-train")
    parser.add_argument("-D", "--depth", type=int, default=2)
    parser.add_argument("-c", "--count", type=int, default=0)
    parser.add_argument("--device", default="-m", choices=["-m", "-g"])
    parser.add_argument("--ablate", action="store_true", help="also run with each mechanism off, and all off")
    parser.add_argument("--out", help="keep the runs' folders here (default: a temporary folder)")
    parser.add_argument("--json", help="write the rows to this file too")
    args = parser.parse_args(argv)
    configs = [()]
    if args.ablate:
        configs += [(m,) for m in MECHANISMS] + [tuple(MECHANISMS)]
    base = Path(args.out or tempfile.mkdtemp(prefix="search_power_"))
    rows = []
    print(f"| {args.dataset} depth {args.depth} {args.device} | correct | design | check | wall s | search s |")
    print("|---|---|---|---|---|---|")
    for without in configs:
        name = "all mechanisms" if not without else "without " + ", ".join(without)
        row = run_once(args, without, base / (name.replace(" ", "_").replace(",", "")))
        rows.append(row)
        h = row["halves"]
        print(f"| {name} | {row['correct']}/{row['total']} | "
              + " | ".join(f"{h[k][0]}/{h[k][1]}" if k in h else "-" for k in ("design", "check"))
              + f" | {row['wall']:.1f} | {row['search']:.1f} |", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
