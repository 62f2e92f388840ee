"""Object labelling on the CPU (the array-call path of ``objects.label_objects``): milliseconds per
call on stacks of real ARC-1 train grids of three shapes, tiled to about 6 M cells each, for three
kinds of labelling (4- and 8-connected one-colour objects, 8-connected any-colour objects); best
of five.

    python benchmarks/bench_labelling.py
"""
from __future__ import annotations

import time

import numpy as np

from pipeline.run.tasks import load_tasks
from solvers.primitives import objects


def main() -> None:
    """Print one line per grid shape: grids, then milliseconds per labelling kind."""
    tasks, _ = load_tasks("arc1-train", 400)
    for shape in [(10, 10), (3, 3), (15, 15)]:
        grids = [g for t in tasks for g in t.train_inputs + t.test_inputs if g.shape == shape]
        g = np.stack(grids).astype(np.uint8)
        g = np.tile(g, (max(1, 6_000_000 // g[0].size // len(g)), 1, 1))
        res = []
        for conn, by_colour in ((4, True), (8, True), (8, False)):
            best = float("inf")
            for _ in range(5):
                t = time.perf_counter()
                objects._label_objects(np, g, conn, by_colour)
                best = min(best, time.perf_counter() - t)
            res.append(f"{conn}-{'colour' if by_colour else 'any'} {best * 1e3:.0f}")
        print(f"{shape[0]}x{shape[1]}: {g.shape[0]} grids; " + ", ".join(res) + " ms")


if __name__ == "__main__":
    main()
