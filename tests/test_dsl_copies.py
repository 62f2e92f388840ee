"""The primitives of ``solvers.primitives.copies``: hand-checked cases, and every argument tuple
against a plain per-grid reference written here (every placement of every template tried in turn).

``COPIES_CASES`` has the layout of ``CASES`` in ``tests/test_dsl.py`` (name, args, input, expected),
which takes it in for its completeness checks; every expected grid is written out by hand.
"""
from __future__ import annotations

from dsl_reference import case, module_tests, reference_objects

MODULE = "solvers.primitives.copies"

COPIES_CASES = [
    # The template 1 2; the lone 1 is the 1 of a copy, which gets its 2.
    case("complete_copies", (False,), [[1, 2, 0, 0], [0, 0, 0, 0], [0, 0, 1, 0]],
         [[1, 2, 0, 0], [0, 0, 0, 0], [0, 0, 1, 2]]),
    # At the right edge only the mirrored copy fits.
    case("complete_copies", (True,), [[1, 2, 0], [0, 0, 0], [0, 0, 1]],
         [[1, 2, 0], [0, 0, 0], [0, 2, 1]], "complete_copies-mirrored"),
    # The cross 8 6 8 completes its lone 6 and its 8s without their 6 (the 3 is no template's).
    case("complete_copies", (False,), [[0, 8, 0, 0, 0, 0, 0], [8, 6, 8, 0, 0, 6, 0], [0, 8, 0, 0, 0, 0, 0],
                                       [0, 0, 0, 0, 0, 0, 3], [0, 0, 0, 8, 0, 0, 0], [0, 0, 8, 0, 8, 0, 0],
                                       [0, 0, 0, 8, 0, 0, 0]],
         [[0, 8, 0, 0, 0, 8, 0], [8, 6, 8, 0, 8, 6, 8], [0, 8, 0, 0, 0, 8, 0],
          [0, 0, 0, 0, 0, 0, 3], [0, 0, 0, 8, 0, 0, 0], [0, 0, 8, 6, 8, 0, 0], [0, 0, 0, 8, 0, 0, 0]], "complete_copies-cross"),
]
NO_COPY = [case("complete_copies", (False,), [[1, 2, 0], [0, 0, 0], [0, 0, 1]], None, "complete_copies-none"),
           case("complete_copies", (True,), [[1, 1, 0], [0, 0, 1]], None, "complete_copies-one-colour")]


def _turn(dy, dx, bh, bw, symmetry):
    if symmetry & 1:
        dx = bw - 1 - dx
    if symmetry & 2:
        dy = bh - 1 - dy
    return (dx, dy) if symmetry & 4 else (dy, dx)


def ref_complete_copies(grid, turned):
    h, w = grid.shape
    objects = reference_objects(grid, True, False)
    colours = [len({int(grid[r, c]) for r, c in cells}) for cells in objects]
    most = max(colours, default=0)
    templates = [cells for cells, k in zip(objects, colours) if k >= 2 and k == most and len(cells) <= 40]
    in_template = {cell for cells in templates for cell in cells}
    object_of = {cell: i for i, cells in enumerate(objects) for cell in cells}
    painted = {}
    for pr, pc in sorted(object_of):
        colour = int(grid[pr, pc])
        if (pr, pc) in in_template:
            continue
        for cells in templates:
            top, left = min(r for r, _ in cells), min(c for _, c in cells)
            bh, bw = max(r for r, _ in cells) - top + 1, max(c for _, c in cells) - left + 1
            shape = [(r - top, c - left, int(grid[r, c])) for r, c in sorted(cells)]
            of_colour = [(dy, dx) for dy, dx, k in shape if k == colour]
            if not of_colour:
                continue
            for symmetry in range(8 if turned else 1):
                ay, ax = _turn(*of_colour[0], bh, bw, symmetry)
                sides = (bw, bh) if symmetry & 4 else (bh, bw)
                y0, x0 = pr - ay, pc - ax
                if y0 < 0 or x0 < 0 or y0 + sides[0] > h or x0 + sides[1] > w:
                    continue
                placed = [(y0 + y, x0 + x, k) for y, x, k in ((*_turn(dy, dx, bh, bw, symmetry), k)
                                                               for dy, dx, k in shape)]
                if any(grid[y, x] not in (0, k) for y, x, k in placed):
                    continue
                if not any(grid[y, x] == 0 for y, x, _ in placed):
                    continue
                if sum(grid[y, x] == k == colour for y, x, k in placed) != len(of_colour):
                    continue
                own = objects[object_of[pr, pc]]
                if sum((y, x) in set(own) and grid[y, x] == k for y, x, k in placed) != len(own):
                    continue
                for y, x, k in placed:
                    if grid[y, x] == 0:
                        painted[y, x] = max(painted.get((y, x), 0), k)
                break
    if not painted:
        return None
    out = grid.copy()
    for (y, x), k in painted.items():
        out[y, x] = k
    return out


REFERENCES = {"complete_copies": ref_complete_copies}
globals().update(module_tests(MODULE, REFERENCES, COPIES_CASES, no_result=NO_COPY,
    cells=[0, 0, 0, 0, 1, 1, 2, 3], padded_grids=[[[1, 2, 0], [0, 0, 0], [0, 0, 1]], [[0, 1], [1, 2]],
                                                  [[3, 0, 2, 1, 0, 1]], [[0]]], examples=300))
