"""The primitives of ``solvers.primitives.counts``: hand-checked cases, and every argument tuple
against a plain per-grid reference written here.

``COUNTS_CASES`` has the layout of ``CASES`` in ``tests/test_dsl.py`` (name, args, input,
expected), which takes it in for its completeness checks; every expected grid is written out by hand.
"""
from __future__ import annotations

import numpy as np

from dsl_reference import case, module_tests
from solvers.primitives import transforms

MODULE = "solvers.primitives.counts"

COUNTS_CASES = [
    case("count_row", (), [[0, 4, 0], [4, 2, 0]], [[4, 4, 4]]),
    # Ties between colours go to the lower colour.
    case("count_row", (), [[3, 0], [0, 1]], [[1, 1]], "count_row-colour-tie"),
]

NO_RESULT = [
    case("count_row", (), [[0, 0], [0, 0]], None, "count_row-empty"),
    case("count_row", (), [[1] * 31], None, "count_row-past-30"),
]


def ref_count_row(grid):
    counts = np.bincount(grid.ravel(), minlength=10)[1:]
    k = int(counts.sum())
    if not 1 <= k <= 30:
        return None
    return np.full((1, k), counts.argmax() + 1, dtype=grid.dtype)


REFERENCES = {"count_row": ref_count_row}
globals().update(module_tests(MODULE, REFERENCES, COUNTS_CASES, NO_RESULT, cells=[0, 0, 0, 1, 2, 5],
                            padded_grids=[[[1, 0, 1], [0, 2, 0]], [[0, 0], [0, 0], [0, 0]], [[3] * 8] * 4], examples=200))
MODULE_TRANSFORMS = [t for t in transforms() if t.primitive.fn.__module__ == MODULE]


def test_later_modules_come_after_split():
    """counts, boxes, rings and the modules after them come last, in their order: the indices of
    every earlier transform are unchanged."""
    modules = [t.primitive.fn.__module__ for t in transforms()]
    first = modules.index(MODULE)
    assert "solvers.primitives.split" in modules[:first]
    later = ("solvers.primitives.counts", "solvers.primitives.boxes", "solvers.primitives.rings",
             "solvers.primitives.reach", "solvers.primitives.stamps",
             "solvers.primitives.shapes", "solvers.primitives.stride",
             "solvers.primitives.attract", "solvers.primitives.dot_stamps",
             "solvers.primitives.lattice", "solvers.primitives.copies", "solvers.primitives.rects",
             "solvers.primitives.parts", "solvers.primitives.tallies", "solvers.primitives.paths")
    assert modules[first:] == sorted(modules[first:], key=later.index)
