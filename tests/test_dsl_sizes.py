"""The primitives of ``solvers.primitives.sizes``: hand-checked cases (taken in by
``tests/test_dsl.py`` for its completeness checks), and the batched forms on zero-padded stacks of
many shapes against the single-grid face."""
from __future__ import annotations

import numpy as np
import pytest

from solvers import dsl
from solvers.batch import as_parts
from solvers.padded import Padded
from solvers.primitives import sizes

RAISES = "raises ValueError"


def case(name, args, inp, expected, id_=None):
    return pytest.param(name, tuple(args), inp, expected, id=id_ or f"{name}{tuple(args)}")


SMALL = [[1, 2, 3],
         [4, 5, 6]]
BLANK_4x5 = [[0] * 5 for _ in range(4)]
BLANK_1x2 = [[0, 0]]
# 2 x 2 blocks of 3 x 3: a stray 5 in the first; the last block mostly 0 with four 3s.
BLOCKS = [[5, 1, 1, 0, 0, 0],
          [1, 1, 1, 0, 0, 0],
          [1, 1, 1, 0, 0, 0],
          [2, 2, 2, 0, 0, 3],
          [2, 2, 2, 0, 0, 3],
          [2, 2, 2, 3, 3, 0]]
OBJECTS = [[0, 0, 0, 0, 0],
           [0, 7, 7, 0, 4],
           [0, 7, 0, 0, 0],
           [0, 7, 0, 0, 0]]

SIZES_CASES = [
    case("output_size", (("const", 2, 4),), SMALL, [[0, 0, 0, 0], [0, 0, 0, 0]]),
    case("output_size", (("scale", 1, 2, 2, 3),), SMALL, [[0, 0]]),
    case("output_size", (("offset", -1, 1),), SMALL, [[0, 0, 0, 0]]),
    case("output_size", (("transpose",),), SMALL, [[0, 0], [0, 0], [0, 0]]),
    case("output_size", (("content",),), OBJECTS, [[0] * 4] * 3),
    case("output_size", (("largest_object", 4, True),), OBJECTS, [[0, 0]] * 3),
    case("output_size", (("colour_scale",),), [[0, 7], [4, 0]], [[0] * 4] * 4),
    case("fit_to", (BLANK_4x5, "top_left"), SMALL,
         [[1, 2, 3, 0, 0], [4, 5, 6, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0]]),
    case("fit_to", (BLANK_4x5, "bottom_right"), SMALL,
         [[0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 1, 2, 3], [0, 0, 4, 5, 6]]),
    case("fit_to", (BLANK_4x5, "centre"), SMALL,
         [[0, 0, 0, 0, 0], [0, 1, 2, 3, 0], [0, 4, 5, 6, 0], [0, 0, 0, 0, 0]]),
    case("fit_to", (BLANK_1x2, "top_right"), SMALL, [[2, 3]]),
    case("fit_to", (BLANK_1x2, "bottom_left"), SMALL, [[4, 5]]),
    case("tile_to", (BLANK_4x5,), SMALL, [[1, 2, 3, 1, 2], [4, 5, 6, 4, 5], [1, 2, 3, 1, 2], [4, 5, 6, 4, 5]]),
    case("mirror_tile_to", (BLANK_4x5,), SMALL,
         [[1, 2, 3, 3, 2], [4, 5, 6, 6, 5], [4, 5, 6, 6, 5], [1, 2, 3, 3, 2]]),
    case("resample_to", ([[0, 0], [0, 0]], "nearest"), BLOCKS, [[5, 0], [2, 0]]),
    case("resample_to", ([[0, 0], [0, 0]], "majority"), BLOCKS, [[1, 0], [2, 0]]),
    case("resample_to", ([[0, 0], [0, 0]], "any_colour"), BLOCKS, [[1, 0], [2, 3]]),
    case("resample_to", ([[0, 0, 0]] * 4, "majority"), SMALL, [[1, 2, 3], [1, 2, 3], [4, 5, 6], [4, 5, 6]]),
]

# No result (the face raises ValueError).
RAISING_CASES = [
    case("output_size", (("scale", 1, 3, 1, 1),), SMALL, RAISES, "output_size-inexact-scale"),
    case("output_size", (("const", 31, 1),), SMALL, RAISES, "output_size-too-large"),
    case("output_size", (("unknown",),), SMALL, RAISES, "output_size-unknown-rule"),
    case("fit_to", (BLANK_1x2, "middle"), SMALL, RAISES, "fit_to-bad-anchor"),
    case("resample_to", ([[0]], "sharpest"), SMALL, RAISES, "resample_to-bad-mode"),
]


@pytest.mark.parametrize("name, args, inp, expected", SIZES_CASES + RAISING_CASES)
def test_hand_made_case(name, args, inp, expected):
    fn = getattr(dsl, name)
    grid = np.array(inp, dtype=np.uint8)
    if expected is RAISES:
        with pytest.raises(ValueError):
            fn(grid, *args)
    else:
        assert fn(grid, *args).tolist() == expected


def _padded_stack(grids):
    H, W = max(x.shape[0] for x in grids), max(x.shape[1] for x in grids)
    stack = np.zeros((len(grids), H, W), dtype=np.uint8)
    for i, x in enumerate(grids):
        stack[i, :x.shape[0], :x.shape[1]] = x
    sides = np.array([x.shape for x in grids], dtype=np.int64)
    return stack, sides[:, 0], sides[:, 1]


@pytest.mark.parametrize("name, args", [("fit_to", (a,)) for a in sizes.ANCHORS] + [("tile_to", ()),
                         ("mirror_tile_to", ())] + [("resample_to", (m,)) for m in sizes.RESAMPLE_MODES])
def test_padded_stack_of_many_shapes_matches_the_single_grids(name, args):
    rng = np.random.default_rng(7)
    grids = [rng.integers(0, 4, hw).astype(np.uint8) for hw in [(3, 5), (7, 2), (6, 6), (1, 4), (12, 9)]]
    targets = [(4, 4), (2, 9), (3, 2), (5, 5), (4, 3)]
    stack, h, w = _padded_stack(grids)
    size = Padded(None, np.array([t[0] for t in targets]), np.array([t[1] for t in targets]), None)
    res = getattr(sizes, name)(np, stack, h, w, size, *args)
    for i, (x, t) in enumerate(zip(grids, targets)):
        expected = getattr(dsl, name)(x, np.zeros(t, dtype=np.uint8), *args)
        assert res.valid[i] and (res.h[i], res.w[i]) == t
        assert res.arr[i, :t[0], :t[1]].tolist() == expected.tolist()
        assert not res.arr[i, t[0]:].any() and not res.arr[i, :, t[1]:].any()


def test_rule_sides_on_a_padded_stack_match_the_single_grids():
    grids = [np.array(OBJECTS, dtype=np.uint8), np.array(BLOCKS, dtype=np.uint8), np.array(SMALL, dtype=np.uint8)]
    stack, h, w = _padded_stack(grids)
    for rule in [("content",), ("largest_object", 8, False), ("colour_scale",), ("scale", 1, 2, 1, 1)]:
        th, tw = sizes.rule_sides(np, stack, h, w, rule)
        for i, x in enumerate(grids):
            parts = list(as_parts(np, sizes.output_size(np, x[None], rule), 1))
            single = parts[0][1].shape[1:] if parts else (0, 0)
            assert (int(th[i]), int(tw[i])) == single or not parts, (rule, i)
