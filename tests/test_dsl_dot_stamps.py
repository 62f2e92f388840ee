"""The primitives of ``solvers.primitives.dot_stamps``: hand-checked cases, and every argument tuple
against a plain per-grid reference written here.

``DOT_STAMPS_CASES`` has the layout of ``CASES`` in ``tests/test_dsl.py`` (name, args, input,
expected), which takes it in for its completeness checks; every expected grid is written out by hand.
"""
from __future__ import annotations

from dsl_reference import case, module_tests, reference_objects

MODULE = "solvers.primitives.dot_stamps"

DOT_STAMPS_CASES = [
    case("stamp_on_dots", (), [[2, 1, 0, 0, 0], [3, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 5, 0]],
         [[2, 1, 0, 0, 0], [3, 0, 0, 0, 0], [0, 0, 2, 1, 0], [0, 0, 3, 0, 0]]),
    case("stamp_on_dots", (), [[0, 0, 0, 0, 0], [0, 7, 8, 0, 4], [0, 7, 7, 0, 0], [0, 0, 0, 0, 0], [4, 0, 0, 0, 0]],
         [[0, 0, 0, 7, 8], [0, 7, 8, 7, 7], [0, 7, 7, 0, 0], [8, 0, 0, 0, 0], [7, 0, 0, 0, 0]], "stamp_on_dots-edge"),
]
NO_TEMPLATE = [case("stamp_on_dots", (), [[0, 0, 0], [0, 4, 0], [0, 0, 6], [0, 0, 6]], None, "stamp_on_dots-none")]


def ref_stamp_on_dots(grid):
    h, w = grid.shape
    objects = reference_objects(grid, True, False)
    best = None
    for cells in objects:
        colours = len({int(grid[r, c]) for r, c in cells})
        key = (colours, min(len(cells), 63))
        if colours >= 2 and (best is None or key > best[0]):
            best = (key, cells)
    dots = [cells[0] for cells in objects if len(cells) == 1]
    if best is None or not dots:
        return None
    cells = best[1]
    top, left = min(r for r, _ in cells), min(c for _, c in cells)
    th, tw = max(r for r, _ in cells) - top + 1, max(c for _, c in cells) - left + 1
    out = grid.copy()
    for r, c in dots:
        out[r, c] = 0
    painted = {}
    for r, c in dots:
        for y, x in cells:
            ty, tx = r - th // 2 + y - top, c - tw // 2 + x - left
            if 0 <= ty < h and 0 <= tx < w:
                painted[ty, tx] = max(painted.get((ty, tx), 0), int(grid[y, x]))
    for (y, x), colour in painted.items():
        out[y, x] = colour
    return out


REFERENCES = {"stamp_on_dots": ref_stamp_on_dots}
globals().update(module_tests(MODULE, REFERENCES, DOT_STAMPS_CASES, no_result=NO_TEMPLATE,
    cells=[0, 0, 0, 0, 1, 2, 3], padded_grids=[[[2, 1, 0], [0, 0, 0], [0, 0, 5]], [[0, 1], [1, 2]],
                                          [[3, 0, 2, 1, 0]], [[0]]], examples=200))
