"""The primitives of ``solvers.primitives.attract``: hand-checked cases, and every argument tuple
against a plain per-grid reference written here.

``ATTRACT_CASES`` has the layout of ``CASES`` in ``tests/test_dsl.py`` (name, args, input, expected),
which takes it in for its completeness checks; every expected grid is written out by hand.
"""
from __future__ import annotations

from dsl_reference import case, module_tests, reference_objects

MODULE = "solvers.primitives.attract"

ATTRACT_CASES = [
    case("pull_dots", (), [[0, 0, 0, 0, 0], [3, 0, 0, 0, 3], [3, 0, 0, 2, 0], [3, 0, 0, 0, 0]],
         [[0, 0, 0, 0, 0], [3, 3, 0, 0, 0], [3, 0, 0, 0, 0], [3, 0, 0, 0, 0]]),
    case("pull_dots", (), [[4, 4, 4], [0, 0, 0], [0, 0, 0], [5, 4, 5]],
         [[4, 4, 4], [0, 4, 0], [0, 0, 0], [0, 0, 0]], "pull_dots-over-others"),
    case("slide_to_colour", (8,), [[2, 2, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 8, 8, 0]],
         [[0, 0, 0, 0], [0, 0, 0, 0], [2, 2, 0, 0], [0, 8, 8, 0]]),
    case("slide_to_colour", (3,), [[6, 0, 0, 3], [0, 0, 0, 0]], [[0, 0, 6, 3], [0, 0, 0, 0]], "slide_to_colour-3"),
    case("slide_to_colour", (8,), [[1, 0], [0, 1], [0, 1], [8, 0]], [[0, 0], [1, 0], [0, 1], [8, 1]],
         "slide_to_colour-edge"),
    case("slide_to_colour", (8,), [[0, 0, 0, 0, 0], [1, 3, 0, 0, 8], [0, 0, 0, 0, 0], [5, 0, 0, 0, 0]],
         [[0, 0, 0, 0, 0], [0, 0, 1, 3, 8], [0, 0, 0, 0, 0], [5, 0, 0, 0, 0]], "slide_to_colour-right"),
]

DIRECTIONS = ((1, 0), (-1, 0), (0, -1), (0, 1))


def _paint(out, cells):
    for (r, c), colour in sorted(cells, key=lambda cell: cell[1]):  # the highest colour on top
        out[r, c] = colour
    return out


def ref_pull_dots(grid):
    h, w = grid.shape
    dots = [cells[0] for cells in reference_objects(grid, True, True) if len(cells) == 1]
    out = grid.copy()
    for r, c in dots:
        out[r, c] = 0
    moved = []
    for r, c in dots:
        colour, best = grid[r, c], None
        for dy, dx in DIRECTIONS:
            y, x, k = r + dy, c + dx, 1
            while 0 <= y < h and 0 <= x < w:
                if grid[y, x] == colour and (y, x) not in dots:
                    if best is None or k < best[0]:
                        best = (k, dy, dx)
                    break
                y, x, k = y + dy, x + dx, k + 1
        if best is not None:
            k, dy, dx = best
            moved.append(((r + dy * (k - 1), c + dx * (k - 1)), colour))
    return _paint(out, moved)


def ref_slide_to_colour(grid, colour):
    h, w = grid.shape
    movers = grid.copy()
    movers[grid == colour] = 0
    out = grid.copy()
    out[movers > 0] = 0
    moved = []
    for cells in reference_objects(movers, True, False):
        best = None
        for dy, dx in DIRECTIONS:
            for r, c in cells:
                y, x, k = r + dy, c + dx, 1
                while 0 <= y < h and 0 <= x < w:
                    if grid[y, x] == colour:
                        if best is None or k < best[0]:
                            best = (k, dy, dx)
                        break
                    y, x, k = y + dy, x + dx, k + 1
        k, dy, dx = best if best is not None else (1, 0, 0)
        room = min((h - 1 - r if dy > 0 else r if dy < 0 else w - 1 - c if dx > 0 else c) for r, c in cells)
        k = min(k, room + 1) if best is not None else 1
        moved += [((r + dy * (k - 1), c + dx * (k - 1)), movers[r, c]) for r, c in cells]
    return _paint(out, moved)


REFERENCES = {"pull_dots": ref_pull_dots, "slide_to_colour": ref_slide_to_colour}
globals().update(module_tests(MODULE, REFERENCES, ATTRACT_CASES, cells=[0, 0, 0, 1, 2, 8],
                            padded_grids=[[[2, 0, 2], [0, 0, 0], [1, 0, 8], [8, 8, 0]], [[0, 1], [1, 1]],
                                          [[8, 0, 2, 0, 8]], [[0]]], examples=200))
