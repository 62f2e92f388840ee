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

# Lines of 3 and 4; single cells of 3 and 4 on either side; a 2 with no line of its colour.
LINES = [[0, 3, 0, 0, 4, 0],
         [3, 3, 0, 0, 4, 0],
         [0, 3, 0, 3, 4, 4],
         [0, 3, 2, 0, 4, 0],
         [0, 3, 0, 0, 4, 0]]

REACH_CASES = [
    case("dots_to_anchors", ("ray",), DOTS,
         [[1, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 6], [0, 0, 3, 3, 1, 1, 1], [0, 0, 3, 3, 0, 0, 0],
          [0, 0, 6, 0, 0, 0, 0], [0, 0, 6, 0, 0, 0, 0]]),
    # The 3 at (2, 3) moves left next to the 3 line (the 4 line is not its colour), the 3 at (1, 0)
    # and the 4 at (2, 5) stay (they touch their lines: not single cells), the 2 is erased.
    case("dots_to_anchors", ("move",), LINES,
         [[0, 3, 0, 0, 4, 0], [3, 3, 0, 0, 4, 0], [0, 3, 3, 0, 4, 4], [0, 3, 0, 0, 4, 0], [0, 3, 0, 0, 4, 0]]),
    case("dots_to_anchors", ("move",), [[5, 0, 0, 0], [0, 0, 0, 0], [5, 0, 5, 5]],
         [[0, 0, 0, 0], [0, 0, 0, 0], [0, 5, 5, 5]], "dots_to_anchors-single-cells-are-no-anchors"),
    case("dots_to_anchors", ("stamp",), DOTS,
         [[1, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 6], [0, 0, 3, 1, 0, 0, 1], [0, 0, 6, 3, 0, 0, 0],
          [0, 0, 0, 0, 0, 0, 0], [0, 0, 6, 0, 0, 0, 0]]),
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


def ref_dots_to_anchors(grid, mode):
    h, w = grid.shape
    dot = _labels8(grid) == 1
    anchor = (grid != 0) & ~dot
    out = grid.copy()
    if mode == "move":
        out[dot] = 0
        landed = {}
        for r, c in zip(*np.nonzero(dot)):
            best = None
            for dy, dx in ((1, 0), (-1, 0), (0, -1), (0, 1)):
                s, y, x = 0, r + dy, c + dx
                while 0 <= y < h and 0 <= x < w and not (anchor[y, x] and grid[y, x] == grid[r, c]):
                    s, y, x = s + 1, y + dy, x + dx
                if 0 <= y < h and 0 <= x < w and (best is None or s < best[0]):
                    best = (s, r + dy * s, c + dx * s)
            if best is not None:
                landed[best[1:]] = max(landed.get(best[1:], 0), int(grid[r, c]))
        for (y, x), colour in landed.items():
            out[y, x] = colour
        return out
    if mode == "stamp":
        for r, c in zip(*np.nonzero(anchor)):
            for dy, dx in ((-1, 0), (1, 0), (0, -1), (0, 1)):
                y, x = r + dy, c + dx
                while 0 <= y < h and 0 <= x < w and grid[y, x] == 0:
                    y, x = y + dy, x + dx
                if 0 <= y < h and 0 <= x < w and dot[y, x]:
                    out[r, c] = grid[y, x]
                    break
        return out
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


REFERENCES = {"dots_to_anchors": ref_dots_to_anchors}
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
    grids = [g(DOTS), g(LINES), g([[0, 1, 0], [1, 0, 0]]), g([[2, 0, 0, 2]]), g([[0]])]
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
