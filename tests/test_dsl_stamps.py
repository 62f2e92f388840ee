"""The primitives of ``solvers.primitives.stamps``: hand-checked cases, and every argument tuple
against a plain per-grid reference written here.

``STAMPS_CASES`` has the layout of ``CASES`` in ``tests/test_dsl.py`` (name, args, input, expected),
which takes it in for its completeness checks; every expected grid is written out by hand.
"""
from __future__ import annotations

from dsl_reference import case, module_tests, reference_objects

MODULE = "solvers.primitives.stamps"

# A template 7 7 over 6 6 6, a look-alike of 8 below it, and a 2 x 2 block of 8 and a 4 (other boxes).
SHAPED = [[7, 7, 0, 0, 0, 0],
          [6, 6, 6, 0, 8, 8],
          [0, 0, 0, 0, 8, 8],
          [8, 8, 0, 0, 0, 0],
          [8, 8, 8, 0, 4, 0]]

STAMPS_CASES = [
    case("stamp_template", (), SHAPED,
         [[7, 7, 0, 0, 0, 0], [6, 6, 6, 0, 8, 8], [0, 0, 0, 0, 8, 8], [7, 7, 0, 0, 0, 0], [6, 6, 6, 0, 4, 0]]),
    # A look-alike of another shape in a box of the template's sides: each of its cells takes the
    # template's cell at its place, background where the template has none.
    case("stamp_template", (), [[1, 2, 0, 5, 0], [0, 3, 0, 5, 5]], [[1, 2, 0, 1, 0], [0, 3, 0, 0, 3]],
         "stamp_template-other-shape"),
]

NO_RESULT = [
    case("stamp_template", (), [[1, 0, 2]], None, "stamp_template-no-template"),
    case("stamp_template", (), [[1, 2, 0, 4]], None, "stamp_template-no-look-alike"),
]


def _box(cells):
    rows, cols = [y for y, _ in cells], [x for _, x in cells]
    return min(rows), min(cols), max(rows) - min(rows) + 1, max(cols) - min(cols) + 1


def ref_stamp_template(grid):
    h, w = grid.shape
    objs = reference_objects(grid, diagonal=False, one_colour=False)
    ncol = [len({int(grid[y, x]) for y, x in o}) for o in objs]
    if not objs or max(ncol) < 2:
        return None
    best = max(range(len(objs)), key=lambda i: (ncol[i], min(len(objs[i]), 63), -i))
    tmpl = objs[best]
    top, left, th, tw = _box(tmpl)
    others = [o for i, o in enumerate(objs) if i != best]
    out = grid.copy()
    members = set(tmpl)
    fits = [o for o in others if len({int(grid[y, x]) for y, x in o}) == 1 and _box(o)[2:] == (th, tw)]
    if not fits:
        return None
    for o in fits:
        otop, oleft, _, _ = _box(o)
        for y, x in o:
            src = (top + y - otop, left + x - oleft)
            out[y, x] = grid[src] if src in members else 0
    return out


REFERENCES = {"stamp_template": ref_stamp_template}
globals().update(module_tests(MODULE, REFERENCES, STAMPS_CASES, NO_RESULT, cells=[0, 0, 0, 0, 0, 1, 2, 8],
                            padded_grids=[SHAPED, [[1, 2, 0, 5, 0], [0, 3, 0, 5, 5]], [[1, 2, 0, 0], [0, 0, 0, 5]], [[3]]], examples=300))
