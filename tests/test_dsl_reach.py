"""The primitives of ``solvers.primitives.reach``: hand-checked cases, and every argument tuple
against a plain per-grid reference written here.

``REACH_CASES`` has the layout of ``CASES`` in ``tests/test_dsl.py`` (name, args, input, expected),
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

MODULE = "solvers.primitives.reach"

# A 2 x 2 block of 3; single cells: a 1 facing it from the right, a 6 facing it from below, a 6
# and a 1 facing nothing.
DOTS = [[1, 0, 0, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 0, 6],
        [0, 0, 3, 3, 0, 0, 1],
        [0, 0, 3, 3, 0, 0, 0],
        [0, 0, 0, 0, 0, 0, 0],
        [0, 0, 6, 0, 0, 0, 0]]

REACH_CASES = [
    case("dot_rays", (), DOTS,
         [[1, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 6], [0, 0, 3, 3, 1, 1, 1], [0, 0, 3, 3, 0, 0, 0],
          [0, 0, 6, 0, 0, 0, 0], [0, 0, 6, 0, 0, 0, 0]]),
    # The 2 draws to the 5 bar; the 4 faces only the 2, another single cell: no ray.
    case("dot_rays", (), [[2, 0, 0, 5, 5], [0, 0, 0, 0, 0], [4, 0, 0, 0, 0]],
         [[2, 2, 2, 5, 5], [0, 0, 0, 0, 0], [4, 0, 0, 0, 0]], "dot_rays-single-cells-are-no-anchors"),
]


def _labels8(grid):
    """Same-colour 8-connected object sizes, per cell (0 on the background)."""
    h, w = grid.shape
    size = np.zeros((h, w), dtype=int)
    seen = np.zeros((h, w), dtype=bool)
    for r in range(h):
        for c in range(w):
            if grid[r, c] and not seen[r, c]:
                todo, cells = [(r, c)], []
                seen[r, c] = True
                while todo:
                    y, x = todo.pop()
                    cells.append((y, x))
                    for dy in (-1, 0, 1):
                        for dx in (-1, 0, 1):
                            yy, xx = y + dy, x + dx
                            if 0 <= yy < h and 0 <= xx < w and not seen[yy, xx] and grid[yy, xx] == grid[r, c]:
                                seen[yy, xx] = True
                                todo.append((yy, xx))
                for y, x in cells:
                    size[y, x] = len(cells)
    return size


def ref_dot_rays(grid):
    h, w = grid.shape
    dot = _labels8(grid) == 1
    out = grid.copy()
    for vertical in (True, False):
        lines = range(w) if vertical else range(h)
        for i in lines:
            line = grid[:, i] if vertical else grid[i, :]
            kind = dot[:, i] if vertical else dot[i, :]
            filled = [j for j in range(len(line)) if line[j]]
            for a, b in zip(filled, filled[1:]):
                if kind[a] != kind[b]:
                    colour = line[a] if kind[a] else line[b]
                    for j in range(a + 1, b):
                        cell = (j, i) if vertical else (i, j)
                        if out[cell] == 0:
                            out[cell] = colour
    return out


REFERENCES = {"dot_rays": ref_dot_rays}
REACH = [t for t in transforms() if t.primitive.fn.__module__ == MODULE]


def test_every_primitive_of_the_module_has_a_reference():
    assert {t.name for t in REACH} == set(REFERENCES)


@pytest.mark.parametrize("name, args, inp, expected", REACH_CASES)
def test_hand_made_cases(name, args, inp, expected):
    assert getattr(dsl, name)(g(inp), *args).tolist() == expected


@pytest.mark.parametrize("name, args, inp, expected", REACH_CASES)
def test_references_agree_with_the_hand_made_cases(name, args, inp, expected):
    assert REFERENCES[name](g(inp), *args).tolist() == expected


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(t=st.sampled_from(REACH), stack=stacks([0, 0, 0, 0, 1, 2, 3]))
def test_batched_primitive_matches_the_reference(t, stack):
    check_against_reference(t, stack, REFERENCES[t.name])


@pytest.mark.parametrize("t", REACH, ids=str)
def test_padded_stack_matches_single_grids(t):
    """Grids of several shapes padded into one stack give what each gives alone."""
    grids = [g(DOTS), g([[0, 1, 0, 0], [1, 0, 0, 2], [1, 1, 0, 0]]), g([[0, 1, 0], [1, 0, 0]]),
             g([[2, 0, 0, 2]]), g([[0]])]
    stack = np.zeros((len(grids), 6, 7), dtype=np.uint8)
    for i, grid in enumerate(grids):
        stack[i, :grid.shape[0], :grid.shape[1]] = grid
    h = np.array([x.shape[0] for x in grids])
    w = np.array([x.shape[1] for x in grids])
    res = t.padded(np, stack, h, w)
    arr = res if isinstance(res, np.ndarray) else res.arr
    for i, grid in enumerate(grids):
        expected = REFERENCES[t.name](grid, *t.args)
        assert arr[i, :grid.shape[0], :grid.shape[1]].tolist() == expected.tolist()
