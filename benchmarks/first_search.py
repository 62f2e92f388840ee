"""A fresh process's first GPU searches: what they import, compile and allocate after the warm-up.

    python benchmarks/first_search.py [--depth 2] [--grow-gib 0]

Warms up GPU 0 as a run does (``engine.warm_up``), optionally grows CuPy's memory pool by one
allocation of ``--grow-gib`` GiB (freed at once: the pool keeps it), then searches all of
arc1-train twice (``engine.search_shard``, as a run's search process does) and prints each
search's seconds and the pool's size, the modules the first search imported and the kernels that
NVRTC compiled during the searches (with their sources' first characters).
"""
from __future__ import annotations

import argparse
import sys
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=2)
    parser.add_argument("--grow-gib", type=float, default=0.0)
    args = parser.parse_args()
    from pipeline.search import shards as engine
    from pipeline.run.tasks import load_tasks

    tasks, _ = load_tasks("arc1-train", 0)
    warm = engine.warm_up(0)
    import cupy
    import cupy.cuda.compiler as compiler

    pool = cupy.get_default_memory_pool()
    t0 = time.perf_counter()
    if args.grow_gib:
        pool.malloc(int(args.grow_gib * 2**30))  # dropped at once: the pool keeps the memory
    grow = time.perf_counter() - t0
    print(f"warm-up {warm:.3f} s, pool grown by {args.grow_gib} GiB in {grow:.3f} s")
    real_compile = compiler._NVRTCProgram.compile

    def compile_logged(self, *a, **k):
        t = time.perf_counter()
        out = real_compile(self, *a, **k)
        print(f"  NVRTC compiled in {time.perf_counter() - t:.3f} s: {self.src[:120]!r}")
        return out

    compiler._NVRTCProgram.compile = compile_logged
    before = set(sys.modules)
    for rep in range(2):
        t = time.perf_counter()
        engine.search_shard(tasks, args.depth, 0, None, 8000, 0)
        print(f"search {rep + 1}: {time.perf_counter() - t:.3f} s, CuPy's pool {pool.total_bytes() / 2**30:.2f} GiB")
        if rep == 0:
            print("modules the first search imported:", sorted(set(sys.modules) - before))


if __name__ == "__main__":
    main()
