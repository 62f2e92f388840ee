"""The primitives of ``solvers.primitives.stride``: hand-checked cases, and every argument tuple
against a plain per-grid reference written here.

``STRIDE_CASES`` has the layout of ``CASES`` in ``tests/test_dsl.py`` (name, args, input, expected),
which takes it in for its completeness checks; every expected grid is written out by hand.
"""
from __future__ import annotations

from dsl_reference import case, module_tests

MODULE = "solvers.primitives.stride"

STRIDE_CASES = [
    case("mark_alternate_lines", ("cols",), [[4, 4, 4, 4]], [[4, 5, 4, 5]]),
    case("mark_alternate_lines", ("cols",), [[4, 4, 4], [9, 0, 9]], [[5, 4, 5], [1, 0, 1]], "mark_alternate_lines-odd"),
    case("mark_alternate_lines", ("rows",), [[4, 0], [4, 4]], [[4, 0], [5, 5]]),
]


def ref_mark_alternate_lines(grid, axis):
    out = grid.copy() if axis == "cols" else grid.T.copy()
    w = out.shape[1]
    for c in range(w - 1, -1, -2):
        out[:, c] = [v % 9 + 1 if v else 0 for v in out[:, c]]
    return out if axis == "cols" else out.T


REFERENCES = {"mark_alternate_lines": ref_mark_alternate_lines}
globals().update(module_tests(MODULE, REFERENCES, STRIDE_CASES, cells=[0, 0, 1, 2, 9],
                            padded_grids=[[[2, 2, 0], [0, 1, 0], [1, 1, 1], [3, 0, 0]], [[0, 5], [5, 5]], [[7, 0, 7, 7, 0]], [[0]]], examples=200))
