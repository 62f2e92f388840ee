"""Benchmark of the inline step: microseconds per solver.

Usage: ``python benchmarks/bench_inline.py [-n 10000] [-s SEED]``

Builds random solver sources (seeded) and times :func:`pipeline.finish.inline.inline` on
each, one call at a time, on one core:

* ``chain 1-8``: unary chains of length 1 to 8 from :func:`chain_source` (the
  DSL's primitive names and argument values where ``solvers.registry`` is
  importable, else a fixed list of names);
* ``multi-use``: straight-line programs of 3 to 10 lines over unary and binary
  functions, where later lines read earlier values at random, so that some values
  are used several times and some lines are dead;
* ``long chain 100``: one chain of 100 calls (beyond the nesting cap), a bound
  rather than a typical case.

For scale it also times ``ast.parse`` alone on the same sources: the floor for any
ast-based pass. Prints mean, median, 99th percentile and max per solver.
"""

from __future__ import annotations

import argparse
import ast
import os
import platform
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from pipeline.finish.inline import chain_source, inline  # noqa: E402

FALLBACK = [
    ("rot90", [()]), ("flip_lr", [()]), ("transpose", [()]), ("crop_content", [()]),
    ("recolor", [(c,) for c in range(1, 10)]), ("gravity", [("down",), ("up",)]),
    ("tile", [(1, 2), (2, 2)]), ("colormap", [({1: 2, 3: 4},)]),
]


def primitive_table():
    """[(name, [arg tuples])] from the DSL registry if importable, else a fixed list."""
    try:
        import solvers.dsl  # noqa: F401  (registers the primitives)
        from solvers.registry import PRIMITIVES

        table = [(n, [tuple(a) for a in p.arg_values] or [({1: 2, 3: 4},)]) for n, p in sorted(PRIMITIVES.items())]
        if table:
            return table, "solvers.registry"
    except Exception:
        pass
    return FALLBACK, "fixed list"


def chain_programs(n, rnd, table):
    """``n`` random unary chains of length 1-8."""
    out = []
    for _ in range(n):
        steps = []
        for _ in range(rnd.randint(1, 8)):
            name, values = rnd.choice(table)
            steps.append((name, rnd.choice(values)))
        out.append(chain_source(steps))
    return out


def multi_use_programs(n, rnd):
    """``n`` random straight-line programs of 3-10 lines with shared and dead values."""
    unary = ["rot90", "flip_lr", "transpose", "crop_content", "outline"]
    binary = ["overlay", "cellwise_and", "paste"]
    out = []
    for _ in range(n):
        k = rnd.randint(3, 10)
        names = ["I"]
        lines = ["def solve(I):"]
        for i in range(1, k + 1):
            var = "O" if i == k else f"x{i}"
            # bias towards recent values, but reuse older ones often
            pick = lambda: names[max(0, len(names) - 1 - int(rnd.expovariate(0.7)))]  # noqa: E731
            r = rnd.random()
            if r < 0.45:
                expr = f"{rnd.choice(unary)}({pick()})"
            elif r < 0.6:
                expr = f"recolor({pick()}, {rnd.randint(1, 9)})"
            else:
                expr = f"{rnd.choice(binary)}({pick()}, {pick()})"
            lines.append(f"    {var} = {expr}")
            names.append(var)
        lines.append("    return O")
        out.append("\n".join(lines) + "\n")
    return out


def time_each(fn, sources):
    """Per-call times in microseconds (one warm-up pass first)."""
    for s in sources[:200]:
        fn(s)
    clock = time.perf_counter_ns
    times = []
    for s in sources:
        t0 = clock()
        fn(s)
        times.append((clock() - t0) / 1000.0)
    return times


def summary(times):
    """mean, median, p99, max of a list of microsecond times."""
    t = sorted(times)
    n = len(t)
    return sum(t) / n, t[n // 2], t[min(n - 1, int(n * 0.99))], t[-1]


def main(argv=None):
    """Run the benchmark and print a table of microseconds per solver."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=10000, help="programs per family (default 10000)")
    ap.add_argument("-s", "--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rnd = random.Random(args.seed)
    table, origin = primitive_table()

    families = [
        ("chain 1-8", chain_programs(args.n, rnd, table)),
        ("multi-use 3-10", multi_use_programs(args.n, rnd)),
        ("long chain 100", [chain_source([("rot90", ())] * 100)] * max(1, args.n // 10)),
    ]
    print(f"inline benchmark: python {platform.python_version()}, {platform.machine()}, "
          f"{platform.processor() or platform.platform()}; primitives from {origin}; seed {args.seed}")
    print(f"{'family':<16} {'programs':>8} {'calls/prog':>10} {'mean us':>8} {'p50 us':>7} {'p99 us':>7} "
          f"{'max us':>8} {'parse-only mean us':>19} {'solvers/s':>10}")
    for name, sources in families:
        sizes = [inline(s).size for s in sources]
        times = time_each(inline, sources)
        parse = time_each(ast.parse, sources)
        mean, p50, p99, mx = summary(times)
        print(f"{name:<16} {len(sources):>8} {sum(sizes) / len(sizes):>10.1f} {mean:>8.1f} {p50:>7.1f} "
              f"{p99:>7.1f} {mx:>8.1f} {summary(parse)[0]:>19.1f} {1e6 / mean:>10.0f}")


if __name__ == "__main__":
    main()
