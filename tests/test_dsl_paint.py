"""The primitives of ``solvers.primitives.paint_more``: hand-checked cases, and every argument tuple
against a plain per-grid reference written here (loops over cells).

``PAINT_CASES`` has the layout of ``CASES`` in ``tests/test_dsl.py`` (name, args, input, expected),
which takes it in for its completeness checks; every expected grid is written out by hand. Padded
stacks against single grids are checked for every primitive in ``tests/test_dsl_batch.py``.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsl_reference import case, check_against_reference, g, stacks
from solvers import dsl
from solvers.primitives import transforms
from solvers.ragged import same_shape
from solvers.xp import ndimage

MODULE = "solvers.primitives.paint_more"


# Vertical stripes 1 | 2 with noise: columns agree with themselves, rows do not.
STRIPES = [[1, 1, 2],
           [1, 3, 2],
           [4, 1, 2],
           [1, 1, 2]]

# Two L-shapes of 3 and 4 (the same shape), a bar of 6 (its own shape).
SHAPES = [[3, 0, 0, 4, 0],
          [3, 3, 0, 4, 4],
          [0, 0, 0, 0, 0],
          [6, 6, 6, 0, 0]]

# Content in columns 1..4: the columns 1 2 repeat once (period 2); rows 1..2 hold the content.
BAND = [[0, 0, 0, 0, 0, 0],
        [0, 1, 2, 1, 2, 0],
        [0, 3, 0, 3, 0, 0],
        [0, 0, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 0]]

PAINT_CASES = [
    case("line_majority", ("rows",), STRIPES, [[1, 1, 1], [1, 1, 1], [1, 1, 1], [1, 1, 1]]),
    case("line_majority", ("cols",), STRIPES, [[1, 1, 2], [1, 1, 2], [1, 1, 2], [1, 1, 2]]),
    case("line_majority", ("auto",), STRIPES, [[1, 1, 2], [1, 1, 2], [1, 1, 2], [1, 1, 2]]),
    # Rows change one cell, columns two (a tie between colours goes to the lower one).
    case("line_majority", ("auto",), [[1, 2], [3, 3]], [[1, 1], [3, 3]], "line_majority-auto-rows"),
    case("colour_boxes", (), [[0, 1, 0, 0], [0, 0, 0, 0], [2, 0, 0, 1], [0, 0, 2, 0]],
         [[0, 1, 1, 1], [0, 1, 1, 1], [2, 1, 1, 1], [2, 2, 2, 0]]),
    case("frame", (1,), [[0, 0, 0], [0, 3, 0], [0, 0, 0], [2, 0, 0]],
         [[1, 1, 1], [1, 3, 1], [1, 0, 1], [1, 1, 1]]),
    case("mark_unique_shape", (), SHAPES, [[3, 0, 0, 4, 0], [3, 3, 0, 4, 4], [0, 0, 0, 0, 0], [7, 7, 7, 0, 0]]),
    # A lone object is unique; its mark wraps 9 to 1.
    case("mark_unique_shape", (), [[0, 9], [9, 0]], [[0, 1], [1, 0]], "mark_unique_shape-lone"),
    case("extend_period", ("across", "period"), BAND,
         [[0, 0, 0, 0, 0, 0], [2, 1, 2, 1, 2, 1], [0, 3, 0, 3, 0, 3], [0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0]]),
    case("extend_period", ("across", "span"), BAND,
         [[0, 0, 0, 0, 0, 0], [2, 1, 2, 1, 2, 1], [0, 3, 0, 3, 0, 3], [0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0]]),
    case("extend_period", ("down", "period"), BAND,
         [[0, 3, 0, 3, 0, 0], [0, 1, 2, 1, 2, 0], [0, 3, 0, 3, 0, 0], [0, 1, 2, 1, 2, 0], [0, 3, 0, 3, 0, 0]]),
    case("extend_period", ("down", "span"), BAND,
         [[0, 3, 0, 3, 0, 0], [0, 1, 2, 1, 2, 0], [0, 3, 0, 3, 0, 0], [0, 1, 2, 1, 2, 0], [0, 3, 0, 3, 0, 0]]),
    # A period shorter than the content, but the whole content is the tile with ``span``.
    case("extend_period", ("down", "period"), [[1], [2], [1], [0], [0], [0]], [[1], [2], [1], [2], [1], [2]],
         "extend_period-down-period-2"),
    case("extend_period", ("down", "span"), [[1], [2], [1], [0], [0], [0]], [[1], [2], [1], [1], [2], [1]],
         "extend_period-down-span-3"),
    case("direction_codes", (), [[0, 0, 0, 0], [0, 3, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]],
         [[5, 1, 6, 0], [3, 9, 4, 0], [7, 2, 8, 0], [0, 0, 0, 0]]),
    # Between two cells: right of the 1 and left of the 2 is "left" (3, earlier in the order than
    # "right"); down right of the 1 and down left of the 2 is "down left" (7).
    case("direction_codes", (), [[1, 0, 2], [0, 0, 0]], [[9, 3, 9], [2, 7, 2]], "direction_codes-between"),
]


# --------------------------------------------------------------------------------------------------
# Plain references, one grid at a time
# --------------------------------------------------------------------------------------------------

def _majority(line):
    counts = np.bincount(line, minlength=10)
    return int(counts.argmax())


def ref_line_majority(grid, axis):
    rows = np.array([[_majority(r)] * grid.shape[1] for r in grid], dtype=grid.dtype)
    cols = np.array([[_majority(c)] * grid.shape[0] for c in grid.T], dtype=grid.dtype).T
    if axis == "rows":
        return rows
    if axis == "cols":
        return cols
    return cols if (cols != grid).sum() < (rows != grid).sum() else rows


def ref_colour_boxes(grid):
    out = grid.copy()
    for c in range(1, 10):
        rs, cs = np.nonzero(grid == c)
        if rs.size == 0:
            continue
        for r in range(rs.min(), rs.max() + 1):
            for col in range(cs.min(), cs.max() + 1):
                if out[r, col] == 0:
                    out[r, col] = c
    return out


def ref_frame(grid, c):
    out = grid.copy()
    out[0, :] = out[-1, :] = out[:, 0] = out[:, -1] = c
    return out


def ref_mark_unique_shape(grid):
    structure = np.ones((3, 3), dtype=bool)
    shapes = []  # (colour, cells, shape)
    for colour in range(1, 10):
        labels, count = ndimage(np).label(grid == colour, structure=structure)
        for k in range(1, count + 1):
            rs, cs = np.nonzero(labels == k)
            shapes.append((colour, (rs, cs), frozenset(zip(rs - rs.min(), cs - cs.min()))))
    out = grid.copy()
    for colour, (rs, cs), shape in shapes:
        if sum(s == shape for _, _, s in shapes) == 1:
            out[rs, cs] = colour % 9 + 1
    return out


def ref_direction_codes(grid):
    h, w = grid.shape
    order = ((1, (-1, 0)), (2, (1, 0)), (3, (0, -1)), (4, (0, 1)),
             (5, (-1, -1)), (6, (-1, 1)), (7, (1, -1)), (8, (1, 1)))
    out = np.where(grid != 0, 9, 0).astype(grid.dtype)
    for r in range(h):
        for c in range(w):
            if grid[r, c] != 0:
                continue
            for code, (dy, dx) in order:
                y, x = r - dy, c - dx  # the shape's cell this one would lie (dy, dx) from
                if 0 <= y < h and 0 <= x < w and grid[y, x] != 0:
                    out[r, c] = code
                    break
    return out


def ref_extend_period(grid, axis, tile):
    if axis == "down":
        return ref_extend_period(grid.T, "across", tile).T
    h, w = grid.shape
    cols = [c for c in range(w) if grid[:, c].any()]
    if not cols:
        return grid.copy()
    first, last = cols[0], cols[-1]
    span = last - first + 1
    period = span
    if tile == "period":
        period = next(p for p in range(1, span + 1)
                      if p == span or all((grid[:, c] == grid[:, c + p]).all() for c in range(first, last - p + 1)))
    out = grid.copy()
    for c in range(w):
        out[:, c] = grid[:, first + (c - first) % period]
    return out


REFERENCES = {"line_majority": ref_line_majority, "colour_boxes": ref_colour_boxes,
              "frame": ref_frame, "mark_unique_shape": ref_mark_unique_shape,
              "direction_codes": ref_direction_codes, "extend_period": ref_extend_period}
PAINT = [t for t in transforms() if t.primitive.fn.__module__ == MODULE]


def test_every_primitive_of_the_module_has_a_reference():
    assert {t.name for t in PAINT} == set(REFERENCES)


@pytest.mark.parametrize("name, args, inp, expected", PAINT_CASES)
def test_hand_made_cases(name, args, inp, expected):
    assert getattr(dsl, name)(g(inp), *args).tolist() == expected


@pytest.mark.parametrize("name, args, inp, expected", PAINT_CASES)
def test_references_agree_with_the_hand_made_cases(name, args, inp, expected):
    assert REFERENCES[name](g(inp), *args).tolist() == expected


CELLS = [0, 0, 0, 0, 0, 0, 1, 2, 3, 9]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(t=st.sampled_from(PAINT), stack=stacks(CELLS))
def test_batched_primitive_matches_the_reference(t, stack):
    check_against_reference(t, stack, REFERENCES[t.name])


@pytest.mark.parametrize("t", PAINT, ids=str)
def test_padded_stack_matches_single_grids(t):
    """Grids of several shapes padded into one stack give what each gives alone."""
    rng = np.random.default_rng(5)
    grids = [rng.choice(np.array([0, 0, 0, 1, 2, 5], dtype=np.uint8), size=s) for s in ((3, 4), (5, 2), (6, 6))]
    stack = np.zeros((len(grids), 6, 6), dtype=np.uint8)
    for i, grid in enumerate(grids):
        stack[i, :grid.shape[0], :grid.shape[1]] = grid
    h, w = np.array([s.shape[0] for s in grids]), np.array([s.shape[1] for s in grids])
    if t.primitive.layout == "padded":
        res = t.primitive.fn(np, stack, h, w, *t.args)
    else:
        res = same_shape(np, stack, h, w, t.primitive.fn(np, stack, *t.args))
    for i, grid in enumerate(grids):
        np.testing.assert_array_equal(res.arr[i, :h[i], :w[i]], REFERENCES[t.name](grid, *t.args), err_msg=str(t))
