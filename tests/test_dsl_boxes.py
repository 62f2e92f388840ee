"""The primitives of ``solvers.primitives.boxes``: hand-checked cases, and every argument tuple
against a plain per-grid reference written here.

``BOXES_CASES`` has the layout of ``CASES`` in ``tests/test_dsl.py`` (name, args, input, expected),
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

MODULE = "solvers.primitives.boxes"

# A frame of 5 (the largest object) holding a 2, with a 1 beside it and a 3 outside the box.
FRAMED = [[0, 0, 0, 0, 3],
          [1, 5, 5, 5, 0],
          [0, 5, 2, 5, 0],
          [0, 5, 1, 5, 0],
          [0, 5, 5, 5, 0]]

BOXES_CASES = [
    case("largest_object_box", (8, True, False), FRAMED, [[5, 5, 5], [5, 2, 5], [5, 1, 5], [5, 5, 5]]),
    case("largest_object_box", (8, True, True), FRAMED, [[2], [1]]),
    # 4-connected (not enumerated by the search): the frame is 4-connected too.
    case("largest_object_box", (4, True, False), FRAMED, [[5, 5, 5], [5, 2, 5], [5, 1, 5], [5, 5, 5]]),
    case("largest_object_box", (4, True, True), [[1, 0, 0, 0], [0, 6, 6, 6], [0, 6, 6, 6], [0, 6, 6, 6]],
         [[6]], "largest_object_box-4-inner"),
]

NO_RESULT = [
    case("largest_object_box", (8, True, False), [[0, 0], [0, 0]], None, "largest_object_box-empty"),
    case("largest_object_box", (8, True, True), [[0, 7], [7, 0]], None, "largest_object_box-nothing-inside"),
]


# --------------------------------------------------------------------------------------------------
# Plain references, one grid at a time
# --------------------------------------------------------------------------------------------------

def ref_largest_object_box(grid, conn, by_colour, inner):
    structure = np.ones((3, 3), dtype=bool) if conn == 8 else None
    best = None  # (size, first cell in reading order, cells)
    for colour in (range(1, 10) if by_colour else (None,)):
        mask = grid == colour if by_colour else grid != 0
        labels, count = ndimage(np).label(mask, structure=structure)
        for k in range(1, count + 1):
            rs, cs = np.nonzero(labels == k)
            first = int((rs * grid.shape[1] + cs).min())
            if best is None or (len(rs), -first) > (best[0], -best[1]):
                best = (len(rs), first, (rs, cs))
    if best is None:
        return None
    rs, cs = best[2]
    top, bottom, left, right = rs.min(), rs.max() + 1, cs.min(), cs.max() + 1
    if inner:
        top, bottom, left, right = top + 1, bottom - 1, left + 1, right - 1
        if bottom <= top or right <= left:
            return None
    return grid[top:bottom, left:right].copy()


REFERENCES = {"largest_object_box": ref_largest_object_box}
BOXES = [t for t in transforms() if t.primitive.fn.__module__ == MODULE]


def test_every_primitive_of_the_module_has_a_reference():
    assert {t.name for t in BOXES} == set(REFERENCES)


@pytest.mark.parametrize("name, args, inp, expected", BOXES_CASES)
def test_hand_made_cases(name, args, inp, expected):
    assert getattr(dsl, name)(g(inp), *args).tolist() == expected


@pytest.mark.parametrize("name, args, inp, expected", BOXES_CASES + NO_RESULT)
def test_references_agree_with_the_hand_made_cases(name, args, inp, expected):
    out = REFERENCES[name](g(inp), *args)
    assert (None if out is None else out.tolist()) == expected


@pytest.mark.parametrize("name, args, inp, expected", NO_RESULT)
def test_no_result(name, args, inp, expected):
    with pytest.raises(ValueError):
        getattr(dsl, name)(g(inp), *args)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(t=st.sampled_from(BOXES), stack=stacks([0, 0, 0, 1, 2, 5]))
def test_batched_primitive_matches_the_reference(t, stack):
    check_against_reference(t, stack, REFERENCES[t.name])


@pytest.mark.parametrize("t", BOXES, ids=str)
def test_padded_stack_matches_single_grids(t):
    """Grids of several shapes padded into one stack give what each gives alone."""
    grids = [g(FRAMED), g([[4, 0, 4], [0, 2, 0], [4, 0, 4]]), g([[0, 3, 3], [2, 0, 3]])]
    stack = np.zeros((len(grids), 5, 5), dtype=np.uint8)
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
