"""Warm scaling of the search over GPUs: one process keeps its shard workers and searches the same
tasks on 1 GPU and on N GPUs, alternating, several times; per search its wall time and each
shard's own search time. Fresh-process start-up is left out (see bench_search.py for whole runs).

    python benchmarks/shard_scaling.py --gpus 2 --depth 3 --repeat 3
"""
from __future__ import annotations

import argparse
import json
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="arc1-train")
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--count", type=int, default=0)
    parser.add_argument("--gpus", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args()

    from pipeline.search.shards import ShardWorkers, split_tasks
    from pipeline.run.tasks import load_tasks

    tasks, _ = load_tasks(args.dataset, args.count)
    rows = []
    one = ShardWorkers([0])
    many = ShardWorkers(list(range(args.gpus)))
    many.ready()
    try:
        for rep in range(args.repeat):
            for name, workers in (("1 GPU", one), (f"{args.gpus} GPUs", many)):
                groups = split_tasks(tasks, len(workers.slots))
                t0 = time.perf_counter()
                res = workers.search(groups, args.depth, 0, None, 8000)
                wall = time.perf_counter() - t0
                rows.append({"run": rep, "mode": name, "wall_s": round(wall, 3),
                             "shard_s": [round(x, 3) for x in res.shard_seconds],
                             "grid_transforms_per_s": round(res.grid_transforms / wall, 1)})
                print(json.dumps(rows[-1]), flush=True)
    finally:
        one.close()
        many.close()
    for name in ("1 GPU", f"{args.gpus} GPUs"):
        walls = [r["wall_s"] for r in rows if r["mode"] == name]
        print(f"{name}: wall {min(walls):.3f}-{max(walls):.3f} s")
    w1 = [r["wall_s"] for r in rows if r["mode"] == "1 GPU"]
    wn = [r["wall_s"] for r in rows if r["mode"] != "1 GPU"]
    print(f"speed-up, run by run: {', '.join(f'{a / b:.2f}x' for a, b in zip(w1, wn))}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
