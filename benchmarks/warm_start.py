"""What a fresh search process pays before it searches at full speed, and what warming it up buys.

Runs two fresh processes on one device, one after the other, each timing its steps:
``cold``: import, then the search of ``--count`` tasks at ``--depth``; ``warm``: import, the
warm-up (``pipeline.search.shards.warm_up``: CuPy, the device's context, the search's own kernels), the warm-up
again (now loaded), then the same search; then, in both, the search once more (everything loaded).
The search's time in ``cold`` minus ``warm`` is the loading that a warm-up moves out of a shard's
critical path; the first search minus the second, what the warm-up leaves in it. Each search's
time is also split out for building the problem's arrays and turning the boards into programs.

    python benchmarks/warm_start.py --gpu 0 --depth 3 --count 200
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time


def child(args) -> None:
    t0 = time.perf_counter()
    from pipeline.search.shards import search_shard, warm_up
    from pipeline.run.tasks import load_tasks
    if args.gpu is not None:
        import cupy
        cupy.cuda.Device(args.gpu).use()
        cupy.zeros(1).sum()
    steps = {"import and context": time.perf_counter() - t0}
    if args.child == "warm":
        steps["warm-up"] = warm_up(args.gpu)
        steps["warm-up again"] = warm_up(args.gpu)
    tasks, _ = load_tasks(args.dataset, args.count)
    for name in ("search", "search again"):  # the second: every kernel loaded, the pool grown
        t0 = time.perf_counter()
        res = search_shard(tasks, args.depth, 0, None, 8000, args.gpu)
        steps[name] = time.perf_counter() - t0
        for stage in ("search.problem", "search.programs"):
            steps[f"{name}: {stage}"] = res.stage_seconds.get(stage, 0.0)
    print(json.dumps(steps))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="arc1-train")
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--gpu", type=int, default=None, help="GPU id (default: the CPU)")
    parser.add_argument("--child", choices=["cold", "warm"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    base = [sys.executable, __file__, "--dataset", args.dataset, "--depth", str(args.depth), "--count", str(args.count)]
    if args.gpu is not None:
        base += ["--gpu", str(args.gpu)]
    for mode in ("cold", "warm"):
        t0 = time.perf_counter()
        out = subprocess.run(base + ["--child", mode], capture_output=True, text=True, check=True).stdout
        steps = json.loads(out.strip().splitlines()[-1])
        print(f"{mode:5} process {time.perf_counter() - t0:6.2f} s: " + ", ".join(f"{k} {v:.2f} s" for k, v in steps.items()))


if __name__ == "__main__":
    main()
