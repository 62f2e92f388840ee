"""The primitives of ``solvers.primitives.shapes``: hand-checked cases, and every argument tuple
against a plain per-grid reference written here.

``SHAPES_CASES`` has the layout of ``CASES`` in ``tests/test_dsl.py`` (name, args, input, expected),
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

MODULE = "solvers.primitives.shapes"

# Three objects of one shape (two cells side by side, colours 1, 2, 4) and one of another (3).
OBJECTS = [[1, 1, 0, 2, 2, 0, 3],
           [0, 0, 0, 0, 0, 0, 3],
           [4, 4, 0, 0, 0, 0, 0]]

SHAPES_CASES = [
    case("common_shape_object", (), OBJECTS, [[1, 1]]),
    # Two L shapes of 5 and 6 (one of them mirrored) and two bars of 7: the bars' shape wins.
    case("common_shape_object", (),
         [[5, 0, 0, 6, 6, 0], [5, 5, 0, 0, 6, 0], [0, 0, 0, 0, 0, 0], [7, 7, 0, 7, 7, 0]],
         [[7, 7]], "common_shape_object-mirror-is-another-shape"),
]

NO_RESULT = [
    case("common_shape_object", (), [[1, 0, 2, 2]], None, "common_shape_object-no-repeated-shape"),
]


def _objects(grid):
    """The 8-connected one-colour objects of a grid, in reading order of their first cells."""
    h, w = grid.shape
    seen = np.zeros((h, w), dtype=bool)
    found = []
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
                            if 0 <= yy < h and 0 <= xx < w and not seen[yy, xx] \
                                    and grid[yy, xx] == grid[r, c]:
                                seen[yy, xx] = True
                                todo.append((yy, xx))
                found.append(cells)
    return found


def ref_common_shape_object(grid):
    objs = _objects(grid)
    shapes = []
    for o in objs:
        top, left = min(y for y, _ in o), min(x for _, x in o)
        shapes.append(frozenset((y - top, x - left) for y, x in o))
    count = [shapes.count(s) for s in shapes]
    if not objs or max(count) < 2:
        return None
    return _crop(grid, objs[count.index(max(count))])


def _crop(grid, cells):
    top, left = min(y for y, _ in cells), min(x for _, x in cells)
    out = np.zeros((max(y for y, _ in cells) - top + 1, max(x for _, x in cells) - left + 1), dtype=grid.dtype)
    for y, x in cells:
        out[y - top, x - left] = grid[y, x]
    return out


REFERENCES = {"common_shape_object": ref_common_shape_object}
SHAPE_TRANSFORMS = [t for t in transforms() if t.primitive.fn.__module__ == MODULE]


def test_every_primitive_of_the_module_has_a_reference():
    assert {t.name for t in SHAPE_TRANSFORMS} == set(REFERENCES)


@pytest.mark.parametrize("name, args, inp, expected", SHAPES_CASES)
def test_hand_made_cases(name, args, inp, expected):
    assert getattr(dsl, name)(g(inp), *args).tolist() == expected


@pytest.mark.parametrize("name, args, inp, expected", SHAPES_CASES + NO_RESULT)
def test_references_agree_with_the_hand_made_cases(name, args, inp, expected):
    out = REFERENCES[name](g(inp), *args)
    assert (None if out is None else out.tolist()) == expected


@pytest.mark.parametrize("name, args, inp, expected", NO_RESULT)
def test_no_result(name, args, inp, expected):
    with pytest.raises(ValueError):
        getattr(dsl, name)(g(inp), *args)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(t=st.sampled_from(SHAPE_TRANSFORMS), stack=stacks([0, 0, 0, 1, 2, 3]))
def test_batched_primitive_matches_the_reference(t, stack):
    check_against_reference(t, stack, REFERENCES[t.name])
