"""The primitives of ``solvers.primitives.rects``: hand-checked cases, and every argument tuple
against a plain per-grid reference written here (every rectangle of the grid tried in turn).

``RECTS_CASES`` has the layout of ``CASES`` in ``tests/test_dsl.py`` (name, args, input, expected),
which takes it in for its completeness checks; every expected grid is written out by hand.
"""
from __future__ import annotations

import numpy as np

from dsl_reference import case, module_tests

MODULE = "solvers.primitives.rects"

RECTS_CASES = [
    # Blocks: 2 x 2 of 3 (4 cells), 2 x 3 of 4 (6 cells, the largest), a 1 x 4 bar of 2 (too thin).
    case("keep_largest_block", (), [[3, 3, 0, 2, 2, 2, 2],
                                    [3, 3, 4, 4, 4, 0, 1],
                                    [0, 1, 4, 4, 4, 3, 0]],
         [[0, 0, 0, 0, 0, 0, 0],
          [0, 0, 4, 4, 4, 0, 0],
          [0, 0, 4, 4, 4, 0, 0]]),
    # Two colours side by side make no block; ties go to the first corner in reading order.
    case("keep_largest_block", (), [[1, 2, 0, 0], [1, 2, 0, 0], [0, 0, 5, 5], [7, 7, 5, 5]],
         [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 5, 5], [0, 0, 5, 5]], "keep_largest_block-colours"),
]


def _rectangles(grid):
    """Every rectangle (area, top, left, height, width) of one non-zero colour with both sides 2
    or more."""
    h, w = grid.shape
    found = []
    for r in range(h):
        for c in range(w):
            colour = grid[r, c]
            if colour == 0:
                continue
            for a in range(2, h - r + 1):
                for b in range(2, w - c + 1):
                    if (grid[r:r + a, c:c + b] == colour).all():
                        found.append((a * b, r, c, a, b))
    return found


def _largest(grid):
    """The cells of the largest rectangle (ties: first corner in reading order, then the taller)."""
    mask = np.zeros(grid.shape, dtype=bool)
    found = _rectangles(grid)
    if found:
        _, r, c, a, b = max(found, key=lambda x: (x[0], -x[1], -x[2], x[3]))
        mask[r:r + a, c:c + b] = True
    return mask


def ref_keep_largest_block(grid):
    return np.where(_largest(grid), grid, 0).astype(grid.dtype)


REFERENCES = {"keep_largest_block": ref_keep_largest_block}
globals().update(module_tests(MODULE, REFERENCES, RECTS_CASES, cells=[0, 0, 0, 0, 1, 2],
                              padded_grids=[[[0, 0, 0], [0, 1, 0], [0, 0, 0]], [[1, 1], [1, 1]],
                                            [[2, 2, 2, 0], [2, 0, 2, 0], [2, 2, 2, 0]], [[0]]], examples=300))
