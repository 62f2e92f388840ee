"""The primitives of ``solvers.primitives.moves``: hand-checked cases, and every argument tuple
against a plain per-grid reference written here (loops over cells).

``MOVES_CASES`` has the layout of ``CASES`` in ``tests/test_dsl.py`` (name, args, input, expected),
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

MODULE = "solvers.primitives.moves"


DOTS = [[0, 0, 0, 0, 0],
        [0, 3, 0, 0, 0],
        [0, 0, 0, 0, 0],
        [0, 0, 0, 2, 0]]

# A wall of 5 closing the top-left corner around a seed 2; a seed 3 in the open part.
ROOMS = [[0, 0, 5, 0, 0],
         [0, 2, 5, 0, 0],
         [5, 5, 5, 0, 0],
         [0, 0, 0, 0, 3]]

MOVES_CASES = [
    case("shift", (-1, -1), DOTS, [[3, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 2, 0, 0], [0, 0, 0, 0, 0]]),
    case("shift", (-1, 0), DOTS, [[0, 3, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 2, 0], [0, 0, 0, 0, 0]]),
    case("shift", (-1, 1), DOTS, [[0, 0, 3, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 2], [0, 0, 0, 0, 0]]),
    case("shift", (0, -1), DOTS, [[0, 0, 0, 0, 0], [3, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 2, 0, 0]]),
    case("shift", (0, 1), DOTS, [[0, 0, 0, 0, 0], [0, 0, 3, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 2]]),
    case("shift", (1, -1), DOTS, [[0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [3, 0, 0, 0, 0], [0, 0, 0, 0, 0]]),
    case("shift", (1, 0), DOTS, [[0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 3, 0, 0, 0], [0, 0, 0, 0, 0]]),
    case("shift", (1, 1), DOTS, [[0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 3, 0, 0], [0, 0, 0, 0, 0]]),
    case("diagonal_rays", ("down_right",), DOTS,
         [[0, 0, 0, 0, 0], [0, 3, 0, 0, 0], [0, 0, 3, 0, 0], [0, 0, 0, 2, 0]]),
    case("diagonal_rays", ("down_left",), DOTS,
         [[0, 0, 0, 0, 0], [0, 3, 0, 0, 0], [3, 0, 0, 0, 0], [0, 0, 0, 2, 0]]),
    case("diagonal_rays", ("up_right",), DOTS,
         [[0, 0, 3, 0, 0], [0, 3, 0, 0, 0], [0, 0, 0, 0, 2], [0, 0, 0, 2, 0]]),
    case("diagonal_rays", ("up_left",), DOTS,
         [[3, 0, 0, 0, 0], [0, 3, 0, 0, 0], [0, 0, 2, 0, 0], [0, 0, 0, 2, 0]]),
    # The 3's ray down right and the 2's up left meet at (2, 2): the one drawn first wins.
    case("diagonal_rays", ("main",), DOTS,
         [[3, 0, 0, 0, 0], [0, 3, 0, 0, 0], [0, 0, 3, 0, 0], [0, 0, 0, 2, 0]]),
    case("diagonal_rays", ("anti",), DOTS,
         [[0, 0, 3, 0, 0], [0, 3, 0, 0, 0], [3, 0, 0, 0, 2], [0, 0, 0, 2, 0]]),
    case("diagonal_rays", ("x",), DOTS,
         [[3, 0, 3, 0, 0], [0, 3, 0, 0, 0], [3, 0, 3, 0, 2], [0, 0, 0, 2, 0]]),
    case("diagonal_rays", ("down_right",), [[1, 0, 0], [0, 0, 0], [0, 0, 4]],
         [[1, 0, 0], [0, 1, 0], [0, 0, 4]], "diagonal_rays-stops-at-a-cell"),
    case("half", ("left",), ROOMS, [[0, 0], [0, 2], [5, 5], [0, 0]]),
    case("half", ("right",), ROOMS, [[0, 0], [0, 0], [0, 0], [0, 3]]),
    case("half", ("top",), ROOMS, [[0, 0, 5, 0, 0], [0, 2, 5, 0, 0]]),
    case("half", ("bottom",), ROOMS, [[5, 5, 5, 0, 0], [0, 0, 0, 0, 3]]),
    case("half", ("top",), [[1, 2], [3, 4], [5, 6]], [[1, 2]], "half-odd-rows"),
    case("half", ("right",), [[1, 2]], [[2]], "half-two-wide"),
]

NO_RESULT = [
    case("half", ("left",), [[1], [2]], None, "half-one-wide"),
    case("half", ("bottom",), [[1, 2, 3]], None, "half-one-high"),
]


@pytest.mark.parametrize("name, args, inp, expected", NO_RESULT)
def test_no_result(name, args, inp, expected):
    with pytest.raises(ValueError):
        getattr(dsl, name)(g(inp), *args)


def test_moves_come_after_the_earlier_modules():
    """The module's transforms come in one run after those of the modules registered before it
    (only modules added later follow): the indices of the earlier transforms are unchanged."""
    modules = [t.primitive.fn.__module__ for t in transforms()]
    first = modules.index(MODULE)
    last = len(modules) - modules[::-1].index(MODULE)
    assert first >= 130 and set(modules[first:last]) == {MODULE}
    assert {"solvers.primitives.paint_more", "solvers.primitives.split"} <= set(modules[last:])


# --------------------------------------------------------------------------------------------------
# Plain references, one grid at a time
# --------------------------------------------------------------------------------------------------

def ref_shift(grid, dy, dx):
    h, w = grid.shape
    out = np.zeros_like(grid)
    for r in range(h):
        for c in range(w):
            if 0 <= r + dy < h and 0 <= c + dx < w:
                out[r + dy, c + dx] = grid[r, c]
    return out


_STEP = {"down_right": (1, 1), "down_left": (1, -1), "up_right": (-1, 1), "up_left": (-1, -1)}
_SETS = {"main": ("down_right", "up_left"), "anti": ("down_left", "up_right"),
         "x": ("down_right", "down_left", "up_right", "up_left")}


def ref_diagonal_rays(grid, direction):
    h, w = grid.shape
    out = grid.copy()
    for d in _SETS.get(direction, (direction,)):
        dy, dx = _STEP[d]
        for r in range(h):
            for c in range(w):
                if grid[r, c] == 0:
                    continue
                y, x = r + dy, c + dx
                while 0 <= y < h and 0 <= x < w and grid[y, x] == 0:
                    if out[y, x] == 0:
                        out[y, x] = grid[r, c]
                    y, x = y + dy, x + dx
    return out


def ref_half(grid, side):
    h, w = grid.shape
    if side in ("left", "right") and w < 2 or side in ("top", "bottom") and h < 2:
        return None
    return {"left": grid[:, :w // 2], "right": grid[:, w - w // 2:],
            "top": grid[:h // 2], "bottom": grid[h - h // 2:]}[side]


REFERENCES = {"shift": ref_shift, "diagonal_rays": ref_diagonal_rays, "half": ref_half}
MOVES = [t for t in transforms() if t.primitive.fn.__module__ == MODULE]


def test_every_primitive_of_the_module_has_a_reference():
    assert {t.name for t in MOVES} == set(REFERENCES)


@pytest.mark.parametrize("name, args, inp, expected", MOVES_CASES)
def test_references_agree_with_the_hand_made_cases(name, args, inp, expected):
    assert REFERENCES[name](g(inp), *args).tolist() == expected


CELLS = [0, 0, 0, 0, 0, 0, 1, 2, 3, 5]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(t=st.sampled_from(MOVES), stack=stacks(CELLS))
def test_batched_primitive_matches_the_reference(t, stack):
    check_against_reference(t, stack, REFERENCES[t.name])
