"""The primitives of ``solvers.primitives.parts``: hand-checked cases, and every argument tuple
against a plain per-grid reference written here (loops over lines, parts and block scales).

``PARTS_CASES`` has the layout of ``CASES`` in ``tests/test_dsl.py`` (name, args, input, expected),
which takes it in for its completeness checks; every expected grid is written out by hand.
"""
from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from dsl_reference import case, check_against_reference, module_tests
from solvers.primitives import transforms
from test_dsl_split import _pick, _runs

MODULE = "solvers.primitives.parts"

# Cut by a row and a column of 5 into cells of unequal sizes: 1 x 2, 1 x 3, 2 x 2, 2 x 3.
UNEQUAL = [[1, 0, 5, 2, 2, 2],
           [5, 5, 5, 5, 5, 5],
           [3, 3, 5, 0, 4, 0],
           [0, 3, 5, 0, 4, 4]]

# Cut by an empty row and an empty column; the bottom left rectangle is empty, so three parts.
BLANK = [[1, 1, 0, 2, 0],
         [0, 1, 0, 2, 2],
         [0, 0, 0, 0, 0],
         [0, 0, 0, 3, 3]]

# No separator lines: three 2 x 2 blocks side by side, the second of a shape of its own.
BLOCKS = [[1, 0, 0, 2, 3, 0],
          [0, 1, 2, 0, 0, 3]]

# Four 2 x 2 parts cut by an empty row and column.
QUARTERS = [[1, 0, 0, 2, 0],
            [0, 1, 0, 0, 2],
            [0, 0, 0, 0, 0],
            [3, 3, 0, 0, 4],
            [0, 0, 0, 4, 0]]

PARTS_CASES = [
    case("pick_cell", ("largest",), UNEQUAL, [[2, 2, 2]], "pick_cell-unequal-largest"),
    case("pick_cell", ("smallest",), UNEQUAL, [[1, 0]], "pick_cell-unequal-smallest"),
    case("pick_cell", ("fewest_colours",), UNEQUAL, [[1, 0]]),
    case("pick_cell", ("most_colours",), BLANK, [[1, 1], [0, 1]]),
    case("pick_cell", ("largest",), BLANK, [[1, 1], [0, 1]], "pick_cell-blank-largest"),
    case("pick_cell", ("fewest_colours",), QUARTERS, [[1, 0], [0, 1]], "pick_cell-quarters-fewest"),
    case("pick_cell", ("smallest",), BLANK, [[3, 3]], "pick_cell-blank-smallest"),
    case("pick_cell", ("unique_shape",), BLOCKS, [[0, 2], [2, 0]]),
    case("pick_cell", ("unique_colours",), [[1, 0, 1, 1, 0, 2], [0, 1, 0, 0, 2, 0]], [[0, 2], [2, 0]]),
    case("pick_cell", ("common",), [[1, 0, 1, 0, 0, 2], [0, 1, 0, 1, 2, 0]], [[1, 0], [0, 1]]),
]

NO_RESULT = [
    case("pick_cell", ("common",), BLOCKS, None, "pick_cell-common-none"),
    case("pick_cell", ("unique_colours",), QUARTERS, None, "pick_cell-four-colour-sets"),
    case("pick_cell", ("largest",), [[1, 2], [3, 0]], None, "pick_cell-no-parts"),
]


def ref_loose_cells(grid):
    """The parts (top, bottom, left, right) of the grid's loose lattice in reading order, or None."""
    h, w = grid.shape
    best = None
    for s in range(1, 10):
        rows = {r for r in range(h) if (grid[r] == s).all()}
        cols = {c for c in range(w) if (grid[:, c] == s).all()}
        r_runs, c_runs = _runs(rows, h), _runs(cols, w)
        if len(r_runs) * len(c_runs) >= 2 and rows | cols and (best is None or len(rows) + len(cols) > best[0]):
            best = (len(rows) + len(cols), r_runs, c_runs)
    if best is not None:
        return [(a, b, c, d) for a, b in best[1] for c, d in best[2]]
    rows = {r for r in range(h) if (grid[r] == 0).all()}
    cols = {c for c in range(w) if (grid[:, c] == 0).all()}
    r_runs, c_runs = _runs(rows, h), _runs(cols, w)
    if len(r_runs) * len(c_runs) >= 2 and rows | cols:
        return [(a, b, c, d) for a, b in r_runs for c, d in c_runs if grid[a:b, c:d].any()]
    for k in range(2, 5):
        if h == k * w:
            return [(i * w, (i + 1) * w, 0, w) for i in range(k)]
        if w == k * h:
            return [(0, h, i * h, (i + 1) * h) for i in range(k)]
    return None


def ref_pick_cell(grid, criterion):
    cells = ref_loose_cells(grid)
    return None if cells is None else _pick([grid[a:b, c:d] for a, b, c, d in cells], criterion)


REFERENCES = {"pick_cell": ref_pick_cell}
globals().update(module_tests(MODULE, REFERENCES, PARTS_CASES, no_result=NO_RESULT, cells=[0, 0, 1, 2, 5],
                              padded_grids=[UNEQUAL, BLANK, BLOCKS, QUARTERS, [[1, 2], [0, 5]], [[0]]],
                              examples=200))

PARTS = [t for t in transforms() if t.primitive.fn.__module__ == MODULE]


@st.composite
def loose_lattices(draw):
    """Grids cut by lines of one colour (5 or 0) at random places, cells of any sizes."""
    h, w, n = draw(st.integers(2, 10)), draw(st.integers(2, 10)), draw(st.integers(1, 3))
    line = draw(st.sampled_from([0, 5]))
    stack = draw(hnp.arrays(np.uint8, (n, h, w), elements=st.sampled_from([0, 0, 1, 2, 3])))
    for r in draw(st.sets(st.integers(0, h - 1), max_size=3)):
        stack[:, r] = line
    for c in draw(st.sets(st.integers(0, w - 1), max_size=3)):
        stack[:, :, c] = line
    return stack


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(t=st.sampled_from(PARTS), stack=loose_lattices())
def test_batched_primitive_matches_the_reference_on_loose_lattices(t, stack):
    check_against_reference(t, stack, REFERENCES[t.name])

