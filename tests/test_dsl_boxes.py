"""The primitives of ``solvers.primitives.boxes``: hand-checked cases, and every argument tuple
against a plain per-grid reference written here.

``BOXES_CASES`` has the layout of ``CASES`` in ``tests/test_dsl.py`` (name, args, input, expected),
which takes it in for its completeness checks; every expected grid is written out by hand.
"""
from __future__ import annotations

import numpy as np

from dsl_reference import case, module_tests
from solvers.xp import ndimage

MODULE = "solvers.primitives.boxes"

# A frame of 5 (the largest object) holding a 2, with a 1 beside it and a 3 outside the box.
FRAMED = [[0, 0, 0, 0, 3],
          [1, 5, 5, 5, 0],
          [0, 5, 2, 5, 0],
          [0, 5, 1, 5, 0],
          [0, 5, 5, 5, 0]]

BOXES_CASES = [
    case("largest_object_box", (8, True, False), FRAMED, [[5, 5, 5], [5, 2, 5], [5, 1, 5], [5, 5, 5]]),
    case("largest_object_box", (8, True, True), FRAMED, [[2], [1]]),
    # 4-connected (not enumerated by the search): the frame is 4-connected too.
    case("largest_object_box", (4, True, False), FRAMED, [[5, 5, 5], [5, 2, 5], [5, 1, 5], [5, 5, 5]]),
    case("largest_object_box", (4, True, True), [[1, 0, 0, 0], [0, 6, 6, 6], [0, 6, 6, 6], [0, 6, 6, 6]],
         [[6]], "largest_object_box-4-inner"),
]

NO_RESULT = [
    case("largest_object_box", (8, True, False), [[0, 0], [0, 0]], None, "largest_object_box-empty"),
    case("largest_object_box", (8, True, True), [[0, 7], [7, 0]], None, "largest_object_box-nothing-inside"),
]


# --------------------------------------------------------------------------------------------------
# Plain references, one grid at a time
# --------------------------------------------------------------------------------------------------

def ref_largest_object_box(grid, conn, by_colour, inner):
    structure = np.ones((3, 3), dtype=bool) if conn == 8 else None
    best = None  # (size, first cell in reading order, cells)
    for colour in (range(1, 10) if by_colour else (None,)):
        mask = grid == colour if by_colour else grid != 0
        labels, count = ndimage(np).label(mask, structure=structure)
        for k in range(1, count + 1):
            rs, cs = np.nonzero(labels == k)
            first = int((rs * grid.shape[1] + cs).min())
            if best is None or (len(rs), -first) > (best[0], -best[1]):
                best = (len(rs), first, (rs, cs))
    if best is None:
        return None
    rs, cs = best[2]
    top, bottom, left, right = rs.min(), rs.max() + 1, cs.min(), cs.max() + 1
    if inner:
        top, bottom, left, right = top + 1, bottom - 1, left + 1, right - 1
        if bottom <= top or right <= left:
            return None
    return grid[top:bottom, left:right].copy()


REFERENCES = {"largest_object_box": ref_largest_object_box}
globals().update(module_tests(MODULE, REFERENCES, BOXES_CASES, NO_RESULT, cells=[0, 0, 0, 1, 2, 5],
                            padded_grids=[FRAMED, [[4, 0, 4], [0, 2, 0], [4, 0, 4]], [[0, 3, 3], [2, 0, 3]]], examples=300))
