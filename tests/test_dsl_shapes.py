"""The primitives of ``solvers.primitives.shapes``: hand-checked cases, and every argument tuple
against a plain per-grid reference written here.

``SHAPES_CASES`` has the layout of ``CASES`` in ``tests/test_dsl.py`` (name, args, input, expected),
which takes it in for its completeness checks; every expected grid is written out by hand.
"""
from __future__ import annotations

import numpy as np

from dsl_reference import case, module_tests, reference_objects

MODULE = "solvers.primitives.shapes"

# Three objects of one shape (two cells side by side, colours 1, 2, 4) and one of another (3).
OBJECTS = [[1, 1, 0, 2, 2, 0, 3],
           [0, 0, 0, 0, 0, 0, 3],
           [4, 4, 0, 0, 0, 0, 0]]

SHAPES_CASES = [
    case("common_shape_object", (), OBJECTS, [[1, 1]]),
    # Two L shapes of 5 and 6 (one of them mirrored) and two bars of 7: the bars' shape wins.
    case("common_shape_object", (),
         [[5, 0, 0, 6, 6, 0], [5, 5, 0, 0, 6, 0], [0, 0, 0, 0, 0, 0], [7, 7, 0, 7, 7, 0]],
         [[7, 7]], "common_shape_object-mirror-is-another-shape"),
]

NO_RESULT = [
    case("common_shape_object", (), [[1, 0, 2, 2]], None, "common_shape_object-no-repeated-shape"),
]


def ref_common_shape_object(grid):
    objs = reference_objects(grid, diagonal=True, one_colour=True)
    shapes = []
    for o in objs:
        top, left = min(y for y, _ in o), min(x for _, x in o)
        shapes.append(frozenset((y - top, x - left) for y, x in o))
    count = [shapes.count(s) for s in shapes]
    if not objs or max(count) < 2:
        return None
    return _crop(grid, objs[count.index(max(count))])


def _crop(grid, cells):
    top, left = min(y for y, _ in cells), min(x for _, x in cells)
    out = np.zeros((max(y for y, _ in cells) - top + 1, max(x for _, x in cells) - left + 1), dtype=grid.dtype)
    for y, x in cells:
        out[y - top, x - left] = grid[y, x]
    return out


REFERENCES = {"common_shape_object": ref_common_shape_object}
globals().update(module_tests(MODULE, REFERENCES, SHAPES_CASES, NO_RESULT, cells=[0, 0, 0, 1, 2, 3], examples=300))
