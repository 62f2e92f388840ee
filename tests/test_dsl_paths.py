"""The primitives of ``solvers.primitives.paths``: hand-checked cases, and every argument tuple
against a plain per-grid reference written here (loops over objects, lines and cells).

``PATHS_CASES`` has the layout of ``CASES`` in ``tests/test_dsl.py`` (name, args, input, expected),
which takes it in for its completeness checks; every expected grid is written out by hand.
"""
from __future__ import annotations

from dsl_reference import case, module_tests, reference_objects

MODULE = "solvers.primitives.paths"

X = -1  # in a template: the painted colour


def _with(colour, rows):
    """A template grid with its ``X`` cells in ``colour``."""
    return [[colour if v == X else v for v in row] for row in rows]


# Templates written out by hand; every painted colour gets its case (the colour does not change
# which cells are painted).
_CENTRE_OWN = ([[0, 0, 8, 0], [0, 0, 8, 0], [0, 0, 0, 0], [2, 2, 0, 0], [0, 0, 0, 0]],
               # A vertical segment gives its column, a horizontal one its row; the crossing is X.
               [[0, 0, 8, 0], [0, 0, 8, 0], [0, 0, 8, 0], [2, 2, X, 2], [0, 0, 8, 0]])
_CENTRE_ONE = ([[0, 0, 0, 0, 0], [0, 1, 1, 1, 0], [0, 1, 0, 1, 0], [0, 1, 1, 1, 0]],
               # A 3 x 3 ring: its middle row and column, inside it too.
               [[0, 0, X, 0, 0], [0, 1, 1, 1, 0], [X, 1, X, 1, X], [0, 1, 1, 1, 0]])
_LOW = ([[0, 2, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 3]],
        [[0, 2, X, X], [0, 0, 0, X], [0, 0, 0, X], [0, 0, 0, 3]])
_HIGH = (_LOW[0], [[0, 2, 0, 0], [0, X, 0, 0], [0, X, 0, 0], [0, X, X, 3]])
PATHS_CASES = [case(name, args(c), template[0], _with(c, template[1]), f"{name}{args(c)}")
               for name, args, template in (
                   ("centre_lines", lambda c: ("own", c), _CENTRE_OWN),
                   ("centre_lines", lambda c: ("one", c), _CENTRE_ONE),
                   ("elbow", lambda c: (c, "low"), _LOW),
                   ("elbow", lambda c: (c, "high"), _HIGH))
               for c in range(1, 10)]
PATHS_CASES += [
    case("dot_hits", (), [[0, 9, 0, 0], [0, 0, 0, 0], [0, 8, 8, 0], [6, 8, 8, 0], [0, 0, 0, 0], [0, 0, 4, 0]],
         [[0, 9, 0, 0], [0, 0, 0, 0], [0, 9, 8, 0], [6, 6, 4, 0], [0, 0, 0, 0], [0, 0, 4, 0]]),
]
NO_RESULT = [
    case("dot_hits", (), [[0, 9, 0, 0], [0, 0, 0, 0], [0, 0, 8, 8]], None, "dot_hits-none"),
    case("centre_lines", ("one", 6), [[0, 0], [0, 0]], None, "centre_lines-empty"),
    case("centre_lines", ("own", 4), [[1, 0, 2, 0, 3, 0, 4, 0, 5]], None, "centre_lines-many"),
    case("elbow", (8, "low"), [[1, 0, 0], [0, 0, 0], [0, 0, 1]], None, "elbow-one-colour"),
    case("elbow", (8, "low"), [[1, 0, 2], [0, 0, 0], [0, 3, 0]], None, "elbow-three"),
]


def _singles(grid):
    return {cells[0] for cells in reference_objects(grid, True, True) if len(cells) == 1}


def ref_centre_lines(grid, mode, c):
    h, w = grid.shape
    objects = reference_objects(grid, True, True)
    if not 1 <= len(objects) <= 4:
        return None
    rows, cols = {}, {}
    for cells in objects:
        colour = int(grid[cells[0]])
        top, bottom = min(r for r, _ in cells), max(r for r, _ in cells)
        left, right = min(x for _, x in cells), max(x for _, x in cells)
        if (bottom - top) % 2 == 0:
            rows[(top + bottom) // 2] = max(rows.get((top + bottom) // 2, 0), colour)
        if (right - left) % 2 == 0:
            cols[(left + right) // 2] = max(cols.get((left + right) // 2, 0), colour)
    out = grid.copy()
    for r in range(h):
        for x in range(w):
            if grid[r, x] or (r not in rows and x not in cols):
                continue
            if mode == "one" or (r in rows and x in cols):
                out[r, x] = c
            else:
                out[r, x] = rows.get(r, cols.get(x))
    return None if (out == grid).all() else out


def ref_elbow(grid, c, corner):
    singles = sorted(_singles(grid), key=lambda p: int(grid[p]))
    if len(singles) != 2 or grid[singles[0]] == grid[singles[1]]:
        return None
    (ra, ca), (rb, cb) = singles if corner == "low" else singles[::-1]
    out = grid.copy()
    cells = [(ra, x) for x in range(min(ca, cb), max(ca, cb) + 1)]
    cells += [(r, cb) for r in range(min(ra, rb), max(ra, rb) + 1)]
    for p in cells:
        if grid[p] == 0:
            out[p] = c
    return None if (out == grid).all() else out


def ref_dot_hits(grid):
    h, w = grid.shape
    singles = _singles(grid)
    out = grid.copy()
    hit = set()
    # From above (rays going down), below, left, right: the first to hit a cell wins.
    for dy, dx in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        for r, x in sorted(singles):
            y, z = r + dy, x + dx
            while 0 <= y < h and 0 <= z < w and grid[y, z] == 0:
                y, z = y + dy, z + dx
            if 0 <= y < h and 0 <= z < w and (y, z) not in singles and (y, z) not in hit:
                out[y, z] = grid[r, x]
                hit.add((y, z))
    return out if hit else None


REFERENCES = {"dot_hits": ref_dot_hits, "centre_lines": ref_centre_lines, "elbow": ref_elbow}
globals().update(module_tests(MODULE, REFERENCES, PATHS_CASES, no_result=NO_RESULT,
    cells=[0, 0, 0, 0, 0, 0, 1, 2, 3], padded_grids=[[[0, 2, 0], [0, 0, 0], [0, 0, 3]], [[1, 0, 1], [0, 0, 0]],
                                                    [[3, 0, 0, 0, 4]], [[0]]], examples=300))
