"""The primitives of ``solvers.primitives.fills``: hand-checked cases, and every argument tuple
against a plain per-grid reference written here (loops over cells).

``FILLS_CASES`` has the layout of ``CASES`` in ``tests/test_dsl.py`` (name, args, input, expected),
which takes it in for its completeness checks; every expected grid is written out by hand.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsl_reference import case, check_against_reference, g, stacks
from solvers import dsl
from solvers.primitives import transforms
from solvers.xp import ndimage

MODULE = "solvers.primitives.fills"

# Separators of 5 cut the grid into 2 x 3 cells of 1 x 2; the cells hold 0, 1, 2 or 3 marks.
LATTICE = [[1, 0, 5, 0, 0, 5, 3, 3],
           [5, 5, 5, 5, 5, 5, 5, 5],
           [2, 2, 5, 0, 4, 5, 0, 0]]

FILLS_CASES = [
    case("fill_cells", ("major",), LATTICE,
         [[1, 1, 5, 0, 0, 5, 3, 3], [5, 5, 5, 5, 5, 5, 5, 5], [2, 2, 5, 4, 4, 5, 0, 0]]),
    case("fill_cells", ("fullest",), LATTICE,
         [[0, 0, 5, 0, 0, 5, 3, 3], [5, 5, 5, 5, 5, 5, 5, 5], [2, 2, 5, 0, 0, 5, 0, 0]]),
    # Ties between colours in a cell go to the lower colour.
    case("fill_cells", ("major",), [[2, 1, 7, 0, 0]], [[1, 1, 7, 0, 0]], "fill_cells-colour-tie"),
    case("count_row", ("cells",), [[0, 4, 0], [4, 2, 0]], [[4, 4, 4]]),
    case("count_row", ("objects",), [[3, 0, 3], [0, 0, 0], [3, 3, 0]], [[3, 3, 3]]),
]

NO_RESULT = [
    case("fill_cells", ("major",), [[1, 2], [3, 4]], None, "fill_cells-no-lattice"),
    case("count_row", ("cells",), [[0, 0], [0, 0]], None, "count_row-empty"),
    case("count_row", ("cells",), [[1] * 31], None, "count_row-past-30"),
]


# --------------------------------------------------------------------------------------------------
# Plain references, one grid at a time
# --------------------------------------------------------------------------------------------------

def _lattice(grid):
    """Per axis, the runs of non-separator lines (start, stop) of the grid's separator lattice,
    worked out line by line as :func:`solvers.primitives.split.lattice` defines it; None if none."""
    best = None
    for colour in range(1, 10):
        rows = [bool((grid[r] == colour).all()) for r in range(grid.shape[0])]
        cols = [bool((grid[:, c] == colour).all()) for c in range(grid.shape[1])]
        runs = []
        for sep in (rows, cols):
            found, start = [], None
            for i, s in enumerate(sep + [True]):
                if not s and start is None:
                    start = i
                if s and start is not None:
                    found.append((start, i))
                    start = None
            runs.append(found)
        lines = sum(rows) + sum(cols)
        sizes = [{b - a for a, b in r} for r in runs]
        if (lines and all(len(s) == 1 for s in sizes) and len(runs[0]) * len(runs[1]) >= 2
                and (best is None or lines > best[0])):
            best = (lines, runs)
    return None if best is None else best[1]


def ref_fill_cells(grid, mode):
    runs = _lattice(grid)
    if runs is None:
        return None
    cells = []
    for r0, r1 in runs[0]:
        for c0, c1 in runs[1]:
            block = grid[r0:r1, c0:c1]
            counts = np.bincount(block.ravel(), minlength=10)[1:]
            cells.append(((r0, r1, c0, c1), int(counts.sum()), int(counts.argmax()) + 1 if counts.any() else 0))
    most = max(n for _, n, _ in cells)
    out = grid.copy()
    for (r0, r1, c0, c1), n, colour in cells:
        out[r0:r1, c0:c1] = colour if mode == "major" or n == most else 0
    return out


def ref_count_row(grid, what):
    counts = np.bincount(grid.ravel(), minlength=10)[1:]
    if what == "cells":
        k = int(counts.sum())
    else:
        k = sum(ndimage(np).label(grid == c, structure=np.ones((3, 3), dtype=bool))[1] for c in range(1, 10))
    if not 1 <= k <= 30:
        return None
    return np.full((1, k), counts.argmax() + 1, dtype=grid.dtype)


REFERENCES = {"fill_cells": ref_fill_cells, "count_row": ref_count_row}
FILLS = [t for t in transforms() if t.primitive.fn.__module__ == MODULE]


def test_every_primitive_of_the_module_has_a_reference():
    assert {t.name for t in FILLS} == set(REFERENCES)


@pytest.mark.parametrize("name, args, inp, expected", FILLS_CASES)
def test_hand_made_cases(name, args, inp, expected):
    assert getattr(dsl, name)(g(inp), *args).tolist() == expected


@pytest.mark.parametrize("name, args, inp, expected", FILLS_CASES + NO_RESULT)
def test_references_agree_with_the_hand_made_cases(name, args, inp, expected):
    out = REFERENCES[name](g(inp), *args)
    assert (None if out is None else out.tolist()) == expected


@pytest.mark.parametrize("name, args, inp, expected", NO_RESULT)
def test_no_result(name, args, inp, expected):
    with pytest.raises(ValueError):
        getattr(dsl, name)(g(inp), *args)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(t=st.sampled_from(FILLS), stack=stacks([0, 0, 0, 1, 2, 5, 5]))
def test_batched_primitive_matches_the_reference(t, stack):
    check_against_reference(t, stack, REFERENCES[t.name])


@pytest.mark.parametrize("t", FILLS, ids=str)
def test_padded_stack_matches_single_grids(t):
    """Grids of several shapes padded into one stack give what each gives alone."""
    grids = [g(LATTICE), g([[1, 0, 1], [5, 5, 5], [0, 2, 2], [5, 5, 5], [3, 0, 0]]), g([[0, 3], [3, 0]])]
    stack = np.zeros((len(grids), 5, 8), dtype=np.uint8)
    for i, grid in enumerate(grids):
        stack[i, :grid.shape[0], :grid.shape[1]] = grid
    h = np.array([x.shape[0] for x in grids])
    w = np.array([x.shape[1] for x in grids])
    res = t.padded(np, stack, h, w)
    for i, grid in enumerate(grids):
        expected = REFERENCES[t.name](grid, *t.args)
        assert bool(res.valid[i]) == (expected is not None)
        if expected is not None:
            assert res.arr[i, :res.h[i], :res.w[i]].tolist() == expected.tolist()
