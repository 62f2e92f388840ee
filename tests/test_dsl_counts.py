"""The primitives of ``solvers.primitives.counts``: hand-checked cases, and every argument tuple
against a plain per-grid reference written here.

``COUNTS_CASES`` has the layout of ``CASES`` in ``tests/test_dsl.py`` (name, args, input,
expected), which takes it in for its completeness checks; every expected grid is written out by hand.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsl_reference import case, check_against_reference, g, stacks
from solvers import dsl
from solvers.primitives import transforms

MODULE = "solvers.primitives.counts"

COUNTS_CASES = [
    case("count_row", (), [[0, 4, 0], [4, 2, 0]], [[4, 4, 4]]),
    # Ties between colours go to the lower colour.
    case("count_row", (), [[3, 0], [0, 1]], [[1, 1]], "count_row-colour-tie"),
]

NO_RESULT = [
    case("count_row", (), [[0, 0], [0, 0]], None, "count_row-empty"),
    case("count_row", (), [[1] * 31], None, "count_row-past-30"),
]


def ref_count_row(grid):
    counts = np.bincount(grid.ravel(), minlength=10)[1:]
    k = int(counts.sum())
    if not 1 <= k <= 30:
        return None
    return np.full((1, k), counts.argmax() + 1, dtype=grid.dtype)


REFERENCES = {"count_row": ref_count_row}
COUNTS = [t for t in transforms() if t.primitive.fn.__module__ == MODULE]


def test_later_modules_come_after_split():
    """counts, boxes, rings and the modules after them come last, in their order: the indices of
    every earlier transform are unchanged."""
    modules = [t.primitive.fn.__module__ for t in transforms()]
    first = modules.index(MODULE)
    assert "solvers.primitives.split" in modules[:first]
    later = ("solvers.primitives.counts", "solvers.primitives.boxes", "solvers.primitives.rings",
             "solvers.primitives.reach", "solvers.primitives.stamps",
             "solvers.primitives.shapes", "solvers.primitives.stride")
    assert modules[first:] == sorted(modules[first:], key=later.index)


def test_every_primitive_of_the_module_has_a_reference():
    assert {t.name for t in COUNTS} == set(REFERENCES)


@pytest.mark.parametrize("name, args, inp, expected", COUNTS_CASES)
def test_hand_made_cases(name, args, inp, expected):
    assert getattr(dsl, name)(g(inp), *args).tolist() == expected


@pytest.mark.parametrize("name, args, inp, expected", COUNTS_CASES + NO_RESULT)
def test_references_agree_with_the_hand_made_cases(name, args, inp, expected):
    out = REFERENCES[name](g(inp), *args)
    assert (None if out is None else out.tolist()) == expected


@pytest.mark.parametrize("name, args, inp, expected", NO_RESULT)
def test_no_result(name, args, inp, expected):
    with pytest.raises(ValueError):
        getattr(dsl, name)(g(inp), *args)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(t=st.sampled_from(COUNTS), stack=stacks([0, 0, 0, 1, 2, 5]))
def test_batched_primitive_matches_the_reference(t, stack):
    check_against_reference(t, stack, REFERENCES[t.name])


@pytest.mark.parametrize("t", COUNTS, ids=str)
def test_padded_stack_matches_single_grids(t):
    """Grids of several shapes padded into one stack give what each gives alone."""
    grids = [g([[1, 0, 1], [0, 2, 0]]), g([[0, 0], [0, 0], [0, 0]]), g([[3] * 8] * 4)]
    stack = np.zeros((len(grids), 4, 8), dtype=np.uint8)
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
