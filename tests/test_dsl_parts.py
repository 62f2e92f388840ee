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
from test_dsl_split import _pick

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

# Four 2 x 2 parts cut by an empty row and column: overlaid cellwise.
QUARTERS = [[1, 0, 0, 2, 0],
            [0, 1, 0, 0, 2],
            [0, 0, 0, 0, 0],
            [3, 3, 0, 0, 4],
            [0, 0, 0, 4, 0]]

# A 2 x 3 picture drawn at scale 2, inside a border of zeros.
SCALED = [[0, 0, 0, 0, 0, 0, 0],
          [0, 1, 1, 0, 0, 2, 2],
          [0, 1, 1, 0, 0, 2, 2],
          [0, 0, 0, 1, 1, 0, 0],
          [0, 0, 0, 1, 1, 0, 0]]

PARTS_CASES = [
    case("pick_cell", ("largest",), UNEQUAL, [[2, 2, 2]], "pick_cell-unequal-largest"),
    case("pick_cell", ("smallest",), UNEQUAL, [[1, 0]], "pick_cell-unequal-smallest"),
    case("pick_cell", ("fewest_colours",), UNEQUAL, [[1, 0]]),
    case("pick_cell", ("most_colours",), BLANK, [[1, 1], [0, 1]]),
    case("pick_cell", ("largest",), BLANK, [[1, 1], [0, 1]], "pick_cell-blank-largest"),
    case("pick_cell", ("smallest",), BLANK, [[3, 3]], "pick_cell-blank-smallest"),
    case("pick_cell", ("unique_shape",), BLOCKS, [[0, 2], [2, 0]]),
    case("pick_cell", ("common",), BLOCKS, None, "pick_cell-common-none"),
    case("combine_cells", ("or",), QUARTERS, [[1, 3], [4, 1]], "combine_cells-quarters-or"),
    case("combine_cells", ("one",), QUARTERS, [[0, 0], [4, 0]]),
    case("combine_cells", ("and",), BLOCKS, [[0, 0], [0, 0]]),
    case("combine_cells", ("nor",), BLOCKS, [[0, 0], [0, 0]]),
    case("combine_cells", ("or",), BLOCKS, [[1, 2], [2, 1]]),
    case("unit_scale", ("content",), SCALED, [[1, 0, 2], [0, 1, 0]]),
    case("unit_scale", ("grid",), [[1, 1, 2, 2], [1, 1, 2, 2]], [[1, 2]]),
]
# A case with no result is listed in NO_RESULT only.
PARTS_CASES = [c for c in PARTS_CASES if c.values[3] is not None]

NO_RESULT = [
    case("pick_cell", ("common",), BLOCKS, None, "pick_cell-common-none"),
    case("pick_cell", ("largest",), [[1, 2], [3, 0]], None, "pick_cell-no-parts"),
    case("combine_cells", ("or",), UNEQUAL, None, "combine_cells-unequal"),
    case("unit_scale", ("grid",), SCALED, None, "unit_scale-grid-not-scaled"),
]


def _runs(seps, n):
    """Runs [a, b) of the lines 0..n-1 not in ``seps``."""
    runs, start = [], None
    for i in range(n + 1):
        if i < n and i not in seps:
            start = i if start is None else start
        elif start is not None:
            runs.append((start, i))
            start = None
    return runs


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


def ref_combine_cells(grid, op):
    cells = ref_loose_cells(grid)
    if cells is None or len(cells) < 2 or len({(b - a, d - c) for a, b, c, d in cells}) != 1:
        return None
    if len({a for a, _, _, _ in cells}) > 4 or len({c for _, _, c, _ in cells}) > 4:
        return None
    parts = [grid[a:b, c:d] for a, b, c, d in cells]
    count = sum((p != 0).astype(int) for p in parts)
    first = np.zeros_like(parts[0])
    for p in parts:
        first = np.where(first == 0, p, first)
    if op == "or":
        return first
    if op == "and":
        return np.where(count == len(parts), first, 0).astype(np.uint8)
    if op == "one":
        return np.where(count == 1, first, 0).astype(np.uint8)
    return np.where(count == 0, 1, 0).astype(np.uint8)


def ref_unit_scale(grid, region):
    if region == "content":
        rows, cols = np.nonzero(grid)
        if rows.size == 0:
            return None
        grid = grid[rows.min():rows.max() + 1, cols.min():cols.max() + 1]
    h, w = grid.shape
    for k in range(10, 1, -1):
        if h % k == 0 and w % k == 0:
            small = grid[::k, ::k]
            if (np.kron(small, np.ones((k, k), dtype=np.uint8)) == grid).all():
                return small
    return None


REFERENCES = {"pick_cell": ref_pick_cell, "combine_cells": ref_combine_cells, "unit_scale": ref_unit_scale}
globals().update(module_tests(MODULE, REFERENCES, PARTS_CASES, no_result=NO_RESULT, cells=[0, 0, 1, 2, 5],
                              padded_grids=[UNEQUAL, BLANK, BLOCKS, QUARTERS, SCALED, [[1, 2], [0, 5]], [[0]]],
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


@st.composite
def scaled(draw):
    """Small pictures scaled up by 1 to 4, in a zero border."""
    h, w, k, n = draw(st.integers(1, 4)), draw(st.integers(1, 4)), draw(st.integers(1, 4)), draw(st.integers(1, 3))
    small = draw(hnp.arrays(np.uint8, (n, h, w), elements=st.sampled_from([0, 1, 2])))
    big = np.kron(small, np.ones((1, k, k), dtype=np.uint8))
    top, left = draw(st.integers(0, 2)), draw(st.integers(0, 2))
    out = np.zeros((n, big.shape[1] + top + 1, big.shape[2] + left), dtype=np.uint8)
    out[:, top:top + big.shape[1], left:left + big.shape[2]] = big
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(t=st.sampled_from(PARTS), stack=loose_lattices())
def test_batched_primitive_matches_the_reference_on_loose_lattices(t, stack):
    check_against_reference(t, stack, REFERENCES[t.name])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(t=st.sampled_from(PARTS), stack=scaled())
def test_batched_primitive_matches_the_reference_on_scaled_pictures(t, stack):
    check_against_reference(t, stack, REFERENCES[t.name])
