"""The primitives of ``solvers.primitives.stride``: hand-checked cases, and every argument tuple
against a plain per-grid reference written here.

``STRIDE_CASES`` has the layout of ``CASES`` in ``tests/test_dsl.py`` (name, args, input, expected),
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

MODULE = "solvers.primitives.stride"

STRIDE_CASES = [
    case("mark_alternate_lines", ("cols",), [[4, 4, 4, 4]], [[4, 5, 4, 5]]),
    case("mark_alternate_lines", ("cols",), [[4, 4, 4], [9, 0, 9]], [[5, 4, 5], [1, 0, 1]], "mark_alternate_lines-odd"),
    case("mark_alternate_lines", ("rows",), [[4, 0], [4, 4]], [[4, 0], [5, 5]]),
]


def ref_mark_alternate_lines(grid, axis):
    out = grid.copy() if axis == "cols" else grid.T.copy()
    w = out.shape[1]
    for c in range(w - 1, -1, -2):
        out[:, c] = [v % 9 + 1 if v else 0 for v in out[:, c]]
    return out if axis == "cols" else out.T


REFERENCES = {"mark_alternate_lines": ref_mark_alternate_lines}
STRIDE = [t for t in transforms() if t.primitive.fn.__module__ == MODULE]


def test_every_primitive_of_the_module_has_a_reference():
    assert {t.name for t in STRIDE} == set(REFERENCES)


@pytest.mark.parametrize("name, args, inp, expected", STRIDE_CASES)
def test_hand_made_cases(name, args, inp, expected):
    assert getattr(dsl, name)(g(inp), *args).tolist() == expected


@pytest.mark.parametrize("name, args, inp, expected", STRIDE_CASES)
def test_references_agree_with_the_hand_made_cases(name, args, inp, expected):
    assert REFERENCES[name](g(inp), *args).tolist() == expected


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(t=st.sampled_from(STRIDE), stack=stacks([0, 0, 1, 2, 9]))
def test_batched_primitive_matches_the_reference(t, stack):
    check_against_reference(t, stack, REFERENCES[t.name])


@pytest.mark.parametrize("t", STRIDE, ids=str)
def test_padded_stack_matches_single_grids(t):
    """Grids of several shapes padded into one stack give what each gives alone: lines are
    counted from each grid's own last line."""
    grids = [g([[2, 2, 0], [0, 1, 0], [1, 1, 1], [3, 0, 0]]), g([[0, 5], [5, 5]]), g([[7, 0, 7, 7, 0]]), g([[0]])]
    stack = np.zeros((len(grids), 4, 5), dtype=np.uint8)
    for i, grid in enumerate(grids):
        stack[i, :grid.shape[0], :grid.shape[1]] = grid
    h = np.array([x.shape[0] for x in grids])
    w = np.array([x.shape[1] for x in grids])
    res = t.padded(np, stack, h, w)
    for i, grid in enumerate(grids):
        assert res.arr[i, :grid.shape[0], :grid.shape[1]].tolist() == REFERENCES[t.name](grid, *t.args).tolist()
