"""Benchmark the validation pool's overhead per solver.

Validates N trivial solvers (``def solve(I): return I``, each source distinct so nothing is
served from the worker's compile cache) on one real-size identity task (3 train pairs and 1 test
input, 24x24 to 30x30 grids), with 1, 2 and 4 workers, chunked (default) and unchunked
(``max_chunk=1``).  The pool is warmed first (workers spawned and initialised), so the figures are
the steady state of a long run.

Printed per configuration: wall time, throughput, and the overhead per solver.  The solver's own
work is about a microsecond, so the overhead per solver is the wall time per solver times the
CPUs the workers can use (``min(workers, usable CPUs)``): CPU time per solver spent on anything
but the solver (transfer, exec of the source, checks, bookkeeping).  ``in-worker`` is the part
of it measured inside the worker (compile and exec of the source, runs, output checks).

Usage: ``python benchmarks/bench_validate.py [--solvers 1000] [--workers 1 2 4] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from pipeline.run.resources import usable_cpus  # noqa: E402
from pipeline.finish.validate import ValidationJob, ValidationPool  # noqa: E402


def make_task(seed: int = 0) -> tuple[list, list, list]:
    """A real-size identity task: 3 train pairs and 1 test input of random colours."""
    rng = np.random.default_rng(seed)
    shapes = [(30, 30), (24, 27), (28, 30), (26, 26)]
    grids = [rng.integers(0, 10, size=s).tolist() for s in shapes]
    return grids[:3], [g for g in grids[:3]], grids[3:]


def run(workers: int, n: int, max_chunk: int, repeat: int) -> dict:
    """Time ``validate_many`` on ``n`` trivial solvers; return the best of ``repeat`` runs."""
    train_in, train_out, test_in = make_task()
    best = None
    with ValidationPool(workers, timeout=5.0, max_chunk=max_chunk) as pool:
        warm = [ValidationJob(f"def solve(I):\n    # warm {i}\n    return I\n", train_in, train_out,
                              test_in) for i in range(4 * workers)]
        assert all(r.ok for r in pool.validate_many(warm))
        for rep in range(repeat):
            jobs = [ValidationJob(f"def solve(I):\n    # variant {rep}-{i}\n    return I\n",
                                  train_in, train_out, test_in) for i in range(n)]
            t0 = time.perf_counter()
            results = pool.validate_many(jobs)
            wall = time.perf_counter() - t0
            bad = [r for r in results if not r.ok]
            if bad:
                raise SystemExit(f"unexpected failures: {bad[:3]}")
            in_worker = sum(r.seconds for r in results)
            if best is None or wall < best["wall"]:
                best = {"wall": wall, "in_worker": in_worker, "stats": dict(pool.stats)}
    assert best is not None
    par = min(workers, usable_cpus())
    best.update(workers=workers, n=n, max_chunk=max_chunk, parallel=par,
                per_solver_ms=1e3 * best["wall"] / n,
                overhead_ms=1e3 * best["wall"] * par / n,
                in_worker_ms=1e3 * best["in_worker"] / n,
                throughput=n / best["wall"])
    return best


def main() -> None:
    """Parse arguments, run every configuration, print a table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--solvers", type=int, default=1000)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-unchunked", action="store_true", help="skip the max_chunk=1 comparison")
    args = ap.parse_args()
    print(f"bench_validate: {args.solvers} trivial solvers, 3 train pairs + 1 test (24..30 sides), "
          f"best of {args.repeat}; {platform.processor() or platform.machine()}, "
          f"usable CPUs {usable_cpus()}, Python {platform.python_version()}")
    print(f"{'workers':>7} {'chunk':>5} {'wall s':>7} {'solvers/s':>9} {'wall/solver ms':>14} "
          f"{'overhead/solver ms':>18} {'in-worker ms':>12}")
    chunks = [16] if args.no_unchunked else [16, 1]
    for max_chunk in chunks:
        for w in args.workers:
            r = run(w, args.solvers, max_chunk, args.repeat)
            print(f"{w:>7} {max_chunk:>5} {r['wall']:>7.3f} {r['throughput']:>9.0f} "
                  f"{r['per_solver_ms']:>14.3f} {r['overhead_ms']:>18.3f} {r['in_worker_ms']:>12.3f}",
                  flush=True)
    print("overhead/solver = wall/solver x min(workers, usable CPUs); target <= 5 ms with 4 workers")


if __name__ == "__main__":
    main()
