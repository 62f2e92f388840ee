"""Benchmark the whole search pipeline (``python -m pipeline run``) and print its figures.

For each mode (``cpu``: ``-m``; ``gpu``: ``-g``; ``gpuN``: ``-g`` on at most N GPUs; ``gpuNxP``: the
same with P search processes sharing each GPU; a suffix ``-arrays``: without the CUDA kernels of
``solvers.kernels``) it runs a cold
run (fresh cache) and prints: test outputs correct (Kaggle rule, 2 attempts), wall seconds, search
seconds, deduplicated states, states per second (and per core on the CPU), grid transforms per
second, and peak memory of the run's processes. Modes given together run one after the other in
this one command, so their ratio is measured under the same conditions.

    python benchmarks/bench_search.py --dataset arc1-train --depth 2 --modes cpu
    python benchmarks/bench_search.py --depth 2 --modes cpu,gpu1     # GPU speed-up, one run
    python benchmarks/bench_search.py --depth 2 --modes gpu1,cpu --repeat 3   # three rounds: medians
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import psutil

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _peak_rss(proc: subprocess.Popen, stop: threading.Event, out: list) -> None:
    """Poll the summed RSS of a process tree (the run and its workers) until ``stop``."""
    peak = 0
    try:
        root = psutil.Process(proc.pid)
    except psutil.Error:
        return
    while not stop.is_set():
        try:
            total = sum(p.memory_info().rss for p in [root] + root.children(recursive=True))
            peak = max(peak, total)
        except psutil.Error:
            pass
        stop.wait(0.2)
    out.append(peak)


def run_mode(mode: str, args, work: str, warm: bool = False) -> dict:
    """One run in ``mode``: cold (cache cleared first) or warm (reusing the cold run's cache)."""
    out = os.path.join(work, f"out-{mode}{'-warm' if warm else ''}")
    cmd = [sys.executable, "-m", "pipeline", "run", "-d", args.dataset, "-D", str(args.depth),
           "-O", out, "-C", f"disk:{os.path.join(work, 'cache-' + mode)}", "-o",
           "--states-per-task", str(args.states_per_task)] + ([] if warm else ["-i"])
    if args.count:
        cmd += ["-c", str(args.count)]
    env = dict(os.environ)
    base_mode, _, variant = mode.partition("-")
    if variant == "arrays":  # the GPU without solvers.kernels: every primitive as array calls
        env["ARCBATT_NO_KERNELS"] = "1"
    if base_mode == "cpu":
        cmd.append("-m")
    else:
        cmd.append("-g")
        if base_mode != "gpu":
            gpus, _, procs = base_mode[3:].partition("x")
            cmd += ["--gpus", gpus] + (["--procs-per-gpu", procs] if procs else [])
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    stop, peak = threading.Event(), []
    watcher = threading.Thread(target=_peak_rss, args=(proc, stop, peak), daemon=True)
    watcher.start()
    _, err = proc.communicate()
    wall = time.perf_counter() - start
    stop.set()
    watcher.join()
    if proc.returncode != 0:
        raise SystemExit(f"{mode}: run failed ({proc.returncode}):\n{err[-6000:]}")
    report = json.load(open(os.path.join(out, "report.json")))
    score = subprocess.run([sys.executable, "-m", "pipeline", "score", os.path.join(out, "submission.json"),
                            "-d", args.dataset] + (["-c", str(args.count)] if args.count else []),
                           cwd=ROOT, capture_output=True, text=True, check=True).stdout
    correct, total = score.strip().splitlines()[-1].split()[-1].split("/")
    search = report["search"]
    run = report["run"]
    cores = run["search_shards"] if run["device"] == "cpu" else None
    return {"mode": mode + ("-warm" if warm else ""), "hit_rate": report["cache"]["hit_rate"], "device": run["device"], "gpus": [g["name"] for g in run["gpus"]],
            "correct": int(correct), "total": int(total), "wall_s": round(wall, 1),
            "search_s": search["seconds"], "warm_up_s": run["stages"].get("warm_up", 0.0),
            "states": search["states"],
            "states_per_s": search["states_per_second"],
            "states_per_s_per_core": round(search["states_per_second"] / cores, 1) if cores else None,
            "grid_transforms_per_s": search["grid_transforms_per_second"],
            "grid_transforms_computed": search.get("grid_transforms_computed"),
            "shard_slowest_s": search.get("shard_slowest_seconds"),
            "shard_balance": round(search["shard_slowest_seconds"] / search["shard_mean_seconds"], 3)
            if search.get("shard_mean_seconds") else None,
            "peak_rss_gb": round(peak[0] / 2**30, 2) if peak else None,
            "solved_tasks": sum(t["status"] == "solved" for t in report["tasks"]),
            "stages": run["stages"], "submission": os.path.join(out, "submission.json")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="arc1-train")
    parser.add_argument("--depth", type=int, default=2)
    parser.add_argument("--count", type=int, default=0)
    parser.add_argument("--modes", default="cpu", help="comma list of cpu, gpu, gpu1, gpu2, gpu4, gpu1x4 (4 processes per GPU), ...")
    parser.add_argument("--states-per-task", type=int, default=8000)
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--warm", action="store_true", help="after each cold run, rerun it on its warm cache")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run the modes this many rounds, in turn (a lent machine's runs vary by tens of "
                             "percent: the rounds give each mode's median and, with cpu, each round's speed-up)")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="arcbatt-bench-") as work:
        for rnd in range(args.repeat):
            for mode in args.modes.split(","):
                rows.append(dict(run_mode(mode.strip(), args, work), round=rnd))
                print(json.dumps(rows[-1]), flush=True)
                if args.warm:
                    rows.append(dict(run_mode(mode.strip(), args, work, warm=True), round=rnd))
                    print(json.dumps(rows[-1]), flush=True)
        subs = {(r["mode"], r["round"]): open(r["submission"], "rb").read() for r in rows}
    base = rows[0]
    print(f"\n{args.dataset} depth {args.depth} ({base['total']} test outputs)")
    print(f"{'mode':9} {'correct':>8} {'wall s':>8} {'search s':>9} {'states':>10} {'states/s':>10} "
          f"{'per core':>9} {'transforms/s':>13} {'peak GB':>8} {'hit rate':>8} {'wall vs 1st':>11} "
          f"{'slowest shard s':>15} {'balance':>7} {'warm-up s':>9}")
    for r in rows:
        speed = base["wall_s"] / r["wall_s"] if r["wall_s"] else float("nan")
        print(f"{r['mode']:9} {r['correct']:>8} {r['wall_s']:>8} {r['search_s']:>9.3f} {r['states']:>10} "
              f"{r['states_per_s']:>10.0f} {str(r['states_per_s_per_core'] or '-'):>9} "
              f"{r['grid_transforms_per_s']:>13.3g} {str(r['peak_rss_gb']):>8} {r['hit_rate']:>8.2f} "
              f"{speed:>10.1f}x {str(r['shard_slowest_s']):>15} {str(r['shard_balance']):>7} {r['warm_up_s']:>9.2f}")
    same = len(set(subs.values())) == 1
    if args.repeat > 1:
        summary = repeat_summary(rows)
        for mode, fig in summary.items():
            print(f"{mode}: search median {fig['search_median_s']} s ({fig['search_min_s']}-{fig['search_max_s']})"
                  + (f", cpu/{mode} per round {fig['speedups']}, median {fig['speedup_median']}x"
                     if fig.get("speedups") else ""))
    print(f"submissions identical across modes: {same}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "identical": same,
                       "summary": repeat_summary(rows) if args.repeat > 1 else None}, f, indent=1)
    return 0


def repeat_summary(rows: list) -> dict:
    """Per mode of several rounds: its search seconds' median and range, and (for a mode other than
    cpu, where cpu ran too) the CPU's search seconds over the mode's, round by round, and their median."""
    modes = list(dict.fromkeys(r["mode"] for r in rows))
    out = {}
    for mode in modes:
        secs = {r["round"]: r["search_s"] for r in rows if r["mode"] == mode}
        fig = {"search_median_s": round(statistics.median(secs.values()), 3),
               "search_min_s": min(secs.values()), "search_max_s": max(secs.values())}
        cpu = {r["round"]: r["search_s"] for r in rows if r["mode"] == "cpu"}
        if mode != "cpu" and cpu:
            ratios = [cpu[k] / secs[k] for k in sorted(secs) if k in cpu and secs[k]]
            fig["speedups"] = [round(x, 1) for x in ratios]
            fig["speedup_median"] = round(statistics.median(ratios), 1) if ratios else None
        out[mode] = fig
    return out


if __name__ == "__main__":
    sys.exit(main())
