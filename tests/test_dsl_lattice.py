"""The primitives of ``solvers.primitives.lattice``: hand-checked cases, and every argument tuple
against a plain per-grid reference written here (loops over the cells of the lattice).

``LATTICE_CASES`` has the layout of ``CASES`` in ``tests/test_dsl.py`` (name, args, input, expected),
which takes it in for its completeness checks; every expected grid is written out by hand.
"""
from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsl_reference import case, check_against_reference, module_tests
from solvers.primitives import transforms
from test_dsl_split import _pick, lattices, ref_lattice_cells

MODULE = "solvers.primitives.lattice"

# A 2 x 2 lattice of 2 x 2 cells cut by a row and a column of 5: the top left cell has three
# non-zero pixels (two of 1), the bottom right three of 2, the others one each.
QUADS = [[1, 3, 5, 2, 0],
         [1, 0, 5, 0, 0],
         [5, 5, 5, 5, 5],
         [0, 0, 5, 2, 2],
         [4, 0, 5, 0, 2]]

# Three cells side by side, cut by columns of 5: one pixel, two pixels, none.
THREE = [[1, 0, 5, 2, 2, 5, 0, 0],
         [0, 0, 5, 0, 0, 5, 0, 0]]

# Three cells side by side: the first two of one shape, the third of another.
ODD_ONE = [[1, 0, 5, 2, 0, 5, 0, 0],
           [0, 0, 5, 0, 0, 5, 0, 3]]

LATTICE_CASES = [
    case("fill_cells", ("all",), QUADS, [[1, 1, 5, 2, 2], [1, 1, 5, 2, 2], [5, 5, 5, 5, 5],
                                         [4, 4, 5, 2, 2], [4, 4, 5, 2, 2]]),
    case("fill_cells", ("most",), QUADS, [[1, 1, 5, 0, 0], [1, 1, 5, 0, 0], [5, 5, 5, 5, 5],
                                          [0, 0, 5, 2, 2], [0, 0, 5, 2, 2]]),
    case("fill_cells", ("most",), THREE, [[0, 0, 5, 2, 2, 5, 0, 0], [0, 0, 5, 2, 2, 5, 0, 0]], "fill_cells-three-most"),
    case("spread_part", ("largest",), QUADS, [[1, 3, 5, 1, 3], [1, 0, 5, 1, 0], [5, 5, 5, 5, 5],
                                              [1, 3, 5, 1, 3], [1, 0, 5, 1, 0]]),
    case("spread_part", ("unique_shape",), ODD_ONE, [[0, 0, 5, 0, 0, 5, 0, 0], [0, 3, 5, 0, 3, 5, 0, 3]]),
    case("part_to_lattice", ("smallest",), QUADS, [[2, 2, 5, 0, 0], [2, 2, 5, 0, 0], [5, 5, 5, 5, 5],
                                                   [0, 0, 5, 0, 0], [0, 0, 5, 0, 0]]),
    case("part_to_lattice", ("largest",), QUADS, [[1, 1, 5, 3, 3], [1, 1, 5, 3, 3], [5, 5, 5, 5, 5],
                                                  [1, 1, 5, 0, 0], [1, 1, 5, 0, 0]]),
]

NO_RESULT = [
    case("fill_cells", ("all",), [[1, 1, 0], [0, 2, 0]], None, "fill_cells-no-lattice"),
    case("part_to_lattice", ("smallest",), THREE, None, "part_to_lattice-cells-not-lattice-sized"),
    case("spread_part", ("unique_shape",), THREE, None, "spread_part-three-unique-shapes"),
]


def _majority(part):
    values = part[part != 0]
    return int(np.bincount(values, minlength=10)[1:].argmax() + 1) if values.size else 0


def ref_fill_cells(grid, which):
    cells = ref_lattice_cells(grid)
    if cells is None:
        return None
    counts = [int((grid[a:b, c:d] != 0).sum()) for a, b, c, d in cells]
    out = grid.copy()
    for (a, b, c, d), n in zip(cells, counts):
        out[a:b, c:d] = _majority(grid[a:b, c:d]) if which == "all" or n == max(counts) else 0
    return out


def ref_part_to_lattice(grid, criterion):
    cells = ref_lattice_cells(grid)
    if cells is None:
        return None
    tops, lefts = sorted({a for a, _, _, _ in cells}), sorted({c for _, _, c, _ in cells})
    a, b, c, d = cells[0]
    if (b - a, d - c) != (len(tops), len(lefts)):
        return None
    part = _pick([grid[a:b, c:d] for a, b, c, d in cells], criterion)
    out = grid.copy()
    for a, b, c, d in cells:
        out[a:b, c:d] = part[tops.index(a), lefts.index(c)]
    return out


def ref_spread_part(grid, criterion):
    cells = ref_lattice_cells(grid)
    if cells is None:
        return None
    part = _pick([grid[a:b, c:d] for a, b, c, d in cells], criterion)
    if part is None:
        return None
    out = grid.copy()
    for a, b, c, d in cells:
        out[a:b, c:d] = part
    return out


REFERENCES = {"fill_cells": ref_fill_cells, "part_to_lattice": ref_part_to_lattice, "spread_part": ref_spread_part}
globals().update(module_tests(MODULE, REFERENCES, LATTICE_CASES, no_result=NO_RESULT, cells=[0, 0, 1, 2, 5],
                              padded_grids=[QUADS, THREE, ODD_ONE, [[1, 2], [0, 5]], [[0]]], examples=200))

LATTICE = [t for t in transforms() if t.primitive.fn.__module__ == MODULE]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(t=st.sampled_from(LATTICE), stack=lattices())
def test_batched_primitive_matches_the_reference_on_lattices(t, stack):
    check_against_reference(t, stack, REFERENCES[t.name])
