"""The primitives of ``solvers.primitives.holes``: hand-checked cases, and every argument tuple
against a plain per-grid reference written here.

``HOLES_CASES`` has the layout of ``CASES`` in ``tests/test_dsl.py`` (name, args, input, expected),
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

MODULE = "solvers.primitives.holes"

# Frames of 5 holding: a 2 x 2 square hole, a 1 x 3 hole, an L-shaped hole; a 3 beside the
# square's frame (so the highest colour around that hole is still 5: the 3 does not touch it).
HOLES = [[5, 5, 5, 5, 0, 5, 5, 5, 5, 5],
         [5, 0, 0, 5, 3, 5, 0, 0, 0, 5],
         [5, 0, 0, 5, 0, 5, 5, 5, 5, 5],
         [5, 5, 5, 5, 0, 5, 5, 5, 5, 0],
         [0, 0, 0, 0, 0, 5, 0, 5, 5, 0],
         [0, 0, 0, 0, 0, 5, 0, 0, 5, 0],
         [0, 0, 0, 0, 0, 5, 5, 5, 5, 0]]

HOLES_CASES = [
    case("fill_rect_holes", ("rect",), HOLES,
         [[5, 5, 5, 5, 0, 5, 5, 5, 5, 5], [5, 6, 6, 5, 3, 5, 6, 6, 6, 5], [5, 6, 6, 5, 0, 5, 5, 5, 5, 5],
          [5, 5, 5, 5, 0, 5, 5, 5, 5, 0], [0, 0, 0, 0, 0, 5, 0, 5, 5, 0], [0, 0, 0, 0, 0, 5, 0, 0, 5, 0],
          [0, 0, 0, 0, 0, 5, 5, 5, 5, 0]]),
    case("fill_rect_holes", ("square",), HOLES,
         [[5, 5, 5, 5, 0, 5, 5, 5, 5, 5], [5, 6, 6, 5, 3, 5, 0, 0, 0, 5], [5, 6, 6, 5, 0, 5, 5, 5, 5, 5],
          [5, 5, 5, 5, 0, 5, 5, 5, 5, 0], [0, 0, 0, 0, 0, 5, 0, 5, 5, 0], [0, 0, 0, 0, 0, 5, 0, 0, 5, 0],
          [0, 0, 0, 0, 0, 5, 5, 5, 5, 0]]),
    # The hole touches 2 and 9: it gets the mark of 9, which is 1.
    case("fill_rect_holes", ("rect",), [[2, 2, 2], [2, 0, 9], [2, 2, 2]], [[2, 2, 2], [2, 1, 9], [2, 2, 2]],
         "fill_rect_holes-highest-colour"),
]


def _regions(grid):
    """The background regions (4-connected) of a grid, as lists of cells."""
    h, w = grid.shape
    seen = np.zeros((h, w), dtype=bool)
    for r in range(h):
        for c in range(w):
            if grid[r, c] == 0 and not seen[r, c]:
                todo, cells = [(r, c)], []
                seen[r, c] = True
                while todo:
                    y, x = todo.pop()
                    cells.append((y, x))
                    for yy, xx in ((y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)):
                        if 0 <= yy < h and 0 <= xx < w and grid[yy, xx] == 0 and not seen[yy, xx]:
                            seen[yy, xx] = True
                            todo.append((yy, xx))
                yield cells


def ref_fill_rect_holes(grid, shape):
    h, w = grid.shape
    out = grid.copy()
    for cells in _regions(grid):
        rows, cols = [y for y, _ in cells], [x for _, x in cells]
        height, width = max(rows) - min(rows) + 1, max(cols) - min(cols) + 1
        if min(rows) == 0 or min(cols) == 0 or max(rows) == h - 1 or max(cols) == w - 1:
            continue
        if len(cells) != height * width or (shape == "square" and height != width):
            continue
        around = max(int(grid[yy, xx]) for y, x in cells
                     for yy, xx in ((y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)))
        for y, x in cells:
            out[y, x] = around % 9 + 1
    return out


REFERENCES = {"fill_rect_holes": ref_fill_rect_holes}
HOLES_TRANSFORMS = [t for t in transforms() if t.primitive.fn.__module__ == MODULE]


def test_every_primitive_of_the_module_has_a_reference():
    assert {t.name for t in HOLES_TRANSFORMS} == set(REFERENCES)


@pytest.mark.parametrize("name, args, inp, expected", HOLES_CASES)
def test_hand_made_cases(name, args, inp, expected):
    assert getattr(dsl, name)(g(inp), *args).tolist() == expected


@pytest.mark.parametrize("name, args, inp, expected", HOLES_CASES)
def test_references_agree_with_the_hand_made_cases(name, args, inp, expected):
    assert REFERENCES[name](g(inp), *args).tolist() == expected


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(t=st.sampled_from(HOLES_TRANSFORMS), stack=stacks([0, 0, 5, 5, 5, 2]))
def test_batched_primitive_matches_the_reference(t, stack):
    check_against_reference(t, stack, REFERENCES[t.name])


@pytest.mark.parametrize("t", HOLES_TRANSFORMS, ids=str)
def test_padded_stack_matches_single_grids(t):
    """Grids of several shapes padded into one stack give what each gives alone: a hole is
    never closed off by the padding."""
    grids = [g(HOLES), g([[5, 5, 5], [5, 0, 5]]), g([[5, 5, 5], [5, 0, 5], [5, 5, 5]]), g([[0]])]
    stack = np.zeros((len(grids), 7, 10), dtype=np.uint8)
    for i, grid in enumerate(grids):
        stack[i, :grid.shape[0], :grid.shape[1]] = grid
    h = np.array([x.shape[0] for x in grids])
    w = np.array([x.shape[1] for x in grids])
    res = t.padded(np, stack, h, w)
    for i, grid in enumerate(grids):
        expected = REFERENCES[t.name](grid, *t.args)
        assert res.arr[i, :grid.shape[0], :grid.shape[1]].tolist() == expected.tolist()
