"""Many concurrent ``run_card.sh`` instances on one task set, sharing one cache.

Runs one instance alone (cold cache), then N instances started together (fresh cold cache), and
prints: wall time of each instance, the slowest/fastest ratio, the total search CPU work (summed
search seconds of all instances vs the lone instance), tasks searched per instance (each task
should be searched once in all), and whether every submission is identical to the lone one.

    python benchmarks/bench_instances.py --instances 8 --depth 2            # shared disk cache
    python benchmarks/bench_instances.py --instances 8 --redis 127.0.0.1:6390   # private redis-server
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def launch(out, cache, args, local=None):
    cmd = ["bash", os.path.join(ROOT, "run_card.sh"), "-d", args.dataset, "-D", str(args.depth), "-m",
           "-O", out, "-C", cache]
    if args.count:
        cmd += ["-c", str(args.count)]
    if local:
        cmd = [sys.executable, "-m", "pipeline", "run"] + cmd[2:] + ["--local-cache", local]
    return subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _children_cpu() -> float:
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def collect(procs_outs):
    """Wait for the instances; returns their figures and the CPU seconds they (and their workers) used."""
    cpu0 = _children_cpu()
    rows = []
    for proc, out, start in procs_outs:
        _, err = proc.communicate()
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            raise SystemExit(f"instance failed ({proc.returncode}): {err[-1500:]}")
        rep = json.load(open(os.path.join(out, "report.json")))
        rows.append({"wall_s": round(wall, 1), "searched": rep["run"]["searched_tasks"], "states": rep["search"]["states"],
            "hit_rate": rep["cache"]["hit_rate"], "sub": open(os.path.join(out, "submission.json"), "rb").read()})
    return rows, _children_cpu() - cpu0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="arc1-train")
    parser.add_argument("--depth", type=int, default=2)
    parser.add_argument("--count", type=int, default=0)
    parser.add_argument("--instances", type=int, default=8)
    parser.add_argument("--redis", help="host:port of a redis-server to start privately (binary on PATH)")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="arcbatt-inst-")
    server = None
    try:
        if args.redis:
            host, port = args.redis.split(":")
            server = subprocess.Popen(["redis-server", "--port", port, "--bind", host, "--save", "",
                                       "--appendonly", "no"], stdout=subprocess.DEVNULL)
            time.sleep(0.5)
        def cache_for(tag):
            return f"redis://{args.redis}/{tag}" if args.redis else f"disk:{os.path.join(work, 'cache' + str(tag))}"
        out = os.path.join(work, "alone")
        alone_rows, alone_cpu = collect([(launch(out, cache_for(1), args,
                                                 os.path.join(work, "local-alone") if args.redis else None),
                                          out, time.perf_counter())])
        alone = alone_rows[0]
        procs = []
        for i in range(args.instances):
            out = os.path.join(work, f"inst{i}")
            local = os.path.join(work, f"local{i}") if args.redis else None
            procs.append((launch(out, cache_for(2), args, local), out, time.perf_counter()))
        rows, total_cpu = collect(procs)
        walls = [r["wall_s"] for r in rows]
        states_ratio = sum(r["states"] for r in rows) / max(alone["states"], 1)
        print(f"{args.dataset} depth {args.depth}, {'redis' if args.redis else 'shared disk'} cache, "
              f"{os.cpu_count()} CPUs")
        print(f"alone: wall {alone['wall_s']} s, CPU {alone_cpu:.1f} s (all processes), states {alone['states']}")
        for i, r in enumerate(rows):
            print(f"instance {i}: wall {r['wall_s']} s, searched {r['searched']} tasks, "
                  f"states {r['states']}, hit rate {r['hit_rate']}")
        print(f"tasks searched in all: {sum(r['searched'] for r in rows)} (each once: "
              f"{sum(r['searched'] for r in rows) == (args.count or len(json.loads(alone['sub'])))})")
        print(f"total work vs alone: states {states_ratio:.2f}x, CPU seconds {total_cpu / alone_cpu:.2f}x "
              f"({total_cpu:.1f} s vs {alone_cpu:.1f} s); slowest/fastest instance: {max(walls) / min(walls):.2f}x; "
              f"slowest instance vs alone: {max(walls) / alone['wall_s']:.2f}x")
        print(f"submissions identical to the lone run: {all(r['sub'] == alone['sub'] for r in rows)}")
    finally:
        if server:
            server.kill()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
