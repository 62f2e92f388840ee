"""The primitives of ``solvers.primitives.pivots``: hand-checked cases, and every argument tuple
against a plain per-grid reference written here.

``PIVOTS_CASES`` has the layout of ``CASES`` in ``tests/test_dsl.py`` (name, args, input, expected),
which takes it in for its completeness checks; every expected grid is written out by hand.
"""
from __future__ import annotations

import numpy as np
from dsl_reference import case, module_tests

MODULE = "solvers.primitives.pivots"

PIVOTS_CASES = [
    case("mirror_about_rarest", (), [[2, 2, 0], [0, 3, 0], [0, 0, 0]], [[2, 2, 2], [0, 3, 0], [2, 2, 2]]),
    case("mirror_about_rarest", (), [[1, 1, 0, 0, 0], [0, 0, 4, 0, 0], [0, 0, 0, 0, 0]],
         [[1, 1, 0, 1, 1], [0, 0, 4, 0, 0], [1, 1, 0, 1, 1]], "mirror_about_rarest-cell"),
]


def ref_mirror_about_rarest(grid):
    h, w = grid.shape
    counts = {c: int((grid == c).sum()) for c in range(1, 10) if (grid == c).any()}
    if len(counts) < 2:
        return None
    rarest = min(counts, key=lambda c: (counts[c], c))
    cells = [(r, c) for r, c in zip(*np.nonzero(grid == rarest))]
    rows2 = min(r for r, _ in cells) + max(r for r, _ in cells)
    cols2 = min(c for _, c in cells) + max(c for _, c in cells)
    out = grid.copy()
    for flip_rows, flip_cols in ((False, True), (True, False), (True, True)):
        before = out.copy()
        for r in range(h):
            for c in range(w):
                y, x = (rows2 - r if flip_rows else r), (cols2 - c if flip_cols else c)
                if out[r, c] == 0 and 0 <= y < h and 0 <= x < w:
                    out[r, c] = before[y, x]
    return out


REFERENCES = {"mirror_about_rarest": ref_mirror_about_rarest}
globals().update(module_tests(MODULE, REFERENCES, PIVOTS_CASES, no_result=[
    case("mirror_about_rarest", (), [[0, 5], [5, 0]], None, "mirror_about_rarest-one-colour")],
    cells=[0, 0, 0, 1, 2, 3], padded_grids=[[[2, 0, 0], [0, 3, 0], [0, 0, 0]], [[0, 1], [1, 1]],
                                          [[3, 0, 2, 2, 0]], [[0]]], examples=200))
