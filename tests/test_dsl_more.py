"""Hand-checked answers for the primitives of ``recolour``, ``draw``, ``cells``, ``repair``, ``arrange``.

Every expected grid is written out literally (worked out by hand from the docstrings), never
computed by the code under test. ``MORE_CASES`` has the same layout as ``CASES`` in
``tests/test_dsl.py`` (name, args, input, expected) and holds only cases with an answer, so that
table can take it in (``CASES += MORE_CASES``) for its completeness checks; cases where a primitive
gives no result are in ``NO_RESULT``.
"""

from __future__ import annotations

import numpy as np
import pytest

import solvers.primitives  # noqa: F401  (registers every primitive)
from solvers import dsl
from solvers.registry import PRIMITIVES
from solvers.primitives import transforms

NEW_MODULES = ("recolour", "draw", "cells", "repair", "arrange")


def g(rows):
    """A uint8 grid from nested lists."""
    return np.array(rows, dtype=np.uint8)


def case(name, args, inp, expected, id_=None):
    return pytest.param(name, tuple(args), inp, expected, id=id_ or f"{name}{tuple(args)}")


# Lines: 1 . . 1 and 3 . . . 3 face each other across rows, 4 / 4 down column 2 (crossing row 2).
CONN = [[1, 0, 0, 1, 0],
        [0, 0, 4, 0, 0],
        [3, 0, 0, 0, 3],
        [0, 0, 0, 0, 0],
        [0, 0, 4, 0, 2]]

DIAG = [[2, 0, 0, 0, 5],
        [0, 0, 0, 0, 0],
        [0, 0, 0, 0, 0],
        [0, 0, 0, 0, 0],
        [5, 0, 0, 0, 2]]

HALO = [[0, 0, 0, 0],
        [0, 2, 0, 0],
        [0, 0, 0, 0],
        [0, 0, 0, 9]]

# A 2 x 3 tile [[1, 2, 3], [4, 5, 6]] repeated, with a 2 x 2 hole.
WALLPAPER = [[1, 2, 3, 1, 2, 3],
             [4, 0, 0, 4, 5, 6],
             [1, 0, 0, 1, 2, 3],
             [4, 5, 6, 4, 5, 6]]

# A symmetric picture with a patch of noise (colour 7) over two cells.
NOISY = [[1, 7, 2, 1],
         [3, 7, 4, 3],
         [3, 4, 4, 3],
         [1, 2, 2, 1]]

MORE_CASES = [
    # ---- recolour -------------------------------------------------------------------------------
    case("color_by_size", (), [[1, 1, 0, 2], [0, 0, 0, 2], [3, 0, 2, 0]],
         [[2, 2, 0, 2], [0, 0, 0, 2], [1, 0, 1, 0]]),
    case("color_by_size", (), [[1, 2]], [[1, 1]], "color_by_size-colours-apart"),
    case("color_by_size", (), [[5] * 10], [[9] * 10], "color_by_size-capped"),
    case("color_by_rank", (), [[3, 3, 3, 0, 4], [0, 0, 0, 0, 4], [5, 0, 6, 6, 0]],
         [[1, 1, 1, 0, 2], [0, 0, 0, 0, 2], [3, 0, 2, 2, 0]]),
    case("color_by_rank", (), [[0, 0], [0, 0]], [[0, 0], [0, 0]], "color_by_rank-empty"),
    case("mark_hollow", (),
         [[1, 1, 1, 0, 2],
          [1, 0, 1, 0, 2],
          [1, 1, 1, 0, 0],
          [0, 0, 0, 3, 3]],
         [[2, 2, 2, 0, 2],
          [2, 0, 2, 0, 2],
          [2, 2, 2, 0, 0],
          [0, 0, 0, 3, 3]]),
    case("mark_hollow", (), [[9, 9, 9], [9, 0, 9], [9, 9, 9]], [[1, 1, 1], [1, 0, 1], [1, 1, 1]],
         "mark_hollow-9-marks-1"),
    case("mark_hollow", (), [[1, 1, 1], [1, 0, 1], [1, 0, 1]], [[1, 1, 1], [1, 0, 1], [1, 0, 1]],
         "mark_hollow-open-to-border"),
    # ---- draw -----------------------------------------------------------------------------------
    case("connect", ("h", False), CONN,
         [[1, 1, 1, 1, 0],
          [0, 0, 4, 0, 0],
          [3, 3, 3, 3, 3],
          [0, 0, 0, 0, 0],
          [0, 0, 4, 0, 2]]),
    case("connect", ("hv", False), CONN,  # the vertical 4-line crosses over the 3-line
         [[1, 1, 1, 1, 0],
          [0, 0, 4, 0, 0],
          [3, 3, 4, 3, 3],
          [0, 0, 4, 0, 0],
          [0, 0, 4, 0, 2]]),
    case("connect", ("h", True), CONN,
         [[1, 2, 2, 1, 0],
          [0, 0, 4, 0, 0],
          [3, 4, 4, 4, 3],
          [0, 0, 0, 0, 0],
          [0, 0, 4, 0, 2]]),
    case("connect", ("hv", True), CONN,
         [[1, 2, 2, 1, 0],
          [0, 0, 4, 0, 0],
          [3, 4, 5, 4, 3],
          [0, 0, 5, 0, 0],
          [0, 0, 4, 0, 2]]),
    case("connect", ("h", True), [[9, 0, 9, 0, 8]], [[9, 1, 9, 0, 8]], "connect-mark-of-9-is-1"),
    case("connect", ("v", False), CONN,
         [[1, 0, 0, 1, 0],
          [0, 0, 4, 0, 0],
          [3, 0, 4, 0, 3],
          [0, 0, 4, 0, 0],
          [0, 0, 4, 0, 2]]),
    case("connect", ("v", True), CONN,
         [[1, 0, 0, 1, 0],
          [0, 0, 4, 0, 0],
          [3, 0, 5, 0, 3],
          [0, 0, 5, 0, 0],
          [0, 0, 4, 0, 2]]),
    case("connect", ("diagonal", False), DIAG,  # the down-right line crosses over the down-left one
         [[2, 0, 0, 0, 5],
          [0, 2, 0, 5, 0],
          [0, 0, 2, 0, 0],
          [0, 5, 0, 2, 0],
          [5, 0, 0, 0, 2]]),
    case("connect", ("diagonal", True), DIAG,
         [[2, 0, 0, 0, 5],
          [0, 3, 0, 6, 0],
          [0, 0, 3, 0, 0],
          [0, 6, 0, 3, 0],
          [5, 0, 0, 0, 2]]),
    case("connect", ("diagonal", False), [[1, 0, 0], [0, 0, 0], [0, 0, 1], [0, 0, 0]],
         [[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0]], "connect-diagonal-not-square"),
    case("connect", ("diagonal", False), [[1, 0, 0], [0, 4, 0], [0, 0, 1]], [[1, 0, 0], [0, 4, 0], [0, 0, 1]],
         "connect-diagonal-blocked"),
    case("halo", (4,), HALO, [[0, 3, 0, 0], [3, 2, 3, 0], [0, 3, 0, 1], [0, 0, 1, 9]]),
    case("halo", (8,), HALO, [[3, 3, 3, 0], [3, 2, 3, 0], [3, 3, 3, 1], [0, 0, 1, 9]]),
    case("fill_bbox", (), [[0, 0, 0, 0], [0, 2, 0, 0], [0, 0, 2, 0], [3, 0, 0, 3]],
         [[0, 0, 0, 0], [0, 2, 3, 0], [0, 3, 2, 0], [3, 0, 0, 3]]),
    case("fill_bbox", (),  # (2, 1) lies in the boxes of the 3s and of the 5s: the lower colour wins
         [[3, 3, 3, 0],
          [3, 0, 0, 0],
          [3, 0, 5, 0],
          [0, 5, 0, 0]],
         [[3, 3, 3, 0],
          [3, 4, 4, 0],
          [3, 4, 5, 0],
          [0, 5, 6, 0]], "fill_bbox-overlap"),
    # ---- cells ----------------------------------------------------------------------------------
    case("cell_summary", ("major",), [[1, 0, 2, 2], [1, 0, 2, 1], [0, 0, 0, 0], [3, 0, 0, 4]],
         [[1, 2], [3, 4]]),
    case("cell_summary", ("major",), [[3, 7, 3, 3], [7, 7, 7, 7], [3, 7, 3, 3]], [[3, 3], [3, 3]],
         "cell_summary-coloured-separators"),
    case("cell_summary", ("major",), [[5, 5, 0, 6], [0, 0, 0, 0], [5, 0, 0, 6]], [[5, 6], [5, 6]],
         "cell_summary-uneven-cells"),
    case("cell_summary", ("count",),  # separators 8; the parts hold 1, 2, 0 and 3 cells of 6
         [[6, 0, 8, 6, 6],
          [0, 0, 8, 0, 0],
          [8, 8, 8, 8, 8],
          [0, 0, 8, 6, 6],
          [0, 0, 8, 6, 0]],
         [[1, 2], [0, 3]]),
    case("cell_summary", ("count",), [[1, 1, 0, 2], [1, 0, 0, 2]], [[3, 2]],
         "cell_summary-count-separator-tie"),
    # ---- repair ---------------------------------------------------------------------------------
    case("complete_period", (False,), WALLPAPER,
         [[1, 2, 3, 1, 2, 3], [4, 5, 6, 4, 5, 6], [1, 2, 3, 1, 2, 3], [4, 5, 6, 4, 5, 6]]),
    case("complete_period", (True,), WALLPAPER, [[5, 6], [2, 3]]),
    case("complete_period", (False,),  # diagonal stripes: the lattice steps one row, two columns
         [[1, 2, 3, 1], [2, 0, 1, 2], [3, 1, 0, 3], [1, 2, 3, 1]],
         [[1, 2, 3, 1], [2, 3, 1, 2], [3, 1, 2, 3], [1, 2, 3, 1]], "complete_period-diagonal"),
    case("repair_symmetry", (False,), NOISY,
         [[1, 2, 2, 1], [3, 4, 4, 3], [3, 4, 4, 3], [1, 2, 2, 1]]),
    case("repair_symmetry", (True,), NOISY, [[2], [4]]),
    case("repair_symmetry", (True,),  # the noise is 0 here
         [[5, 6, 6, 5], [0, 0, 8, 7], [7, 8, 8, 7], [5, 6, 6, 5]], [[7, 8]],
         "repair_symmetry-zero-noise"),
    # ---- arrange --------------------------------------------------------------------------------
    case("rotations_4", (), [[1, 2], [3, 0]],
         [[1, 2, 3, 1],
          [3, 0, 0, 2],
          [2, 0, 0, 3],
          [1, 3, 2, 1]]),
    case("fractal_by_major", (), [[1, 0], [2, 1]],
         [[1, 0, 0, 0], [2, 1, 0, 0], [0, 0, 1, 0], [0, 0, 2, 1]]),
    case("fractal_by_major", (), [[3, 4, 4]],  # 4 is the most frequent: its cells get the copies
         [[0, 0, 0, 3, 4, 4, 3, 4, 4]], "fractal_by_major-1x3"),
    case("upscale_by_colours", (), [[1, 0], [0, 2]],
         [[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 2, 2], [0, 0, 2, 2]]),
    case("upscale_by_colours", (), [[0, 7]], [[0, 7]], "upscale_by_colours-one-colour"),
    case("crop_period", (), [[1, 2, 1, 2, 1], [3, 4, 3, 4, 3], [1, 2, 1, 2, 1]], [[1, 2], [3, 4]]),
    case("crop_period", (), [[5, 6, 5, 6]], [[5, 6]], "crop_period-across-only"),
    case("crop_period", (), [[0], [0], [0]], [[0]], "crop_period-uniform"),
    case("colour_column", (0,), [[1, 2, 2], [3, 3, 3], [0, 0, 4]], [[3], [2], [1], [4]]),
    case("colour_column", (1,), [[1, 2, 2], [3, 3, 3], [0, 0, 4]], [[2], [1], [4]]),
    case("colour_column", (0,), [[0, 6, 0]], [[6]], "colour_column-one-colour"),
]

NO_RESULT = [
    case("cell_summary", ("major",), [[1, 2], [3, 4]], None, "cell_summary-no-separator"),
    case("cell_summary", ("count",), [[5, 5], [5, 5]], None, "cell_summary-all-separators"),
    case("rotations_4", (), [[1, 2, 3], [4, 5, 6]], None, "rotations_4-not-square"),
    case("rotations_4", (), [[1] * 16] * 16, None, "rotations_4-past-30"),
    case("upscale_by_colours", (), [[0, 0], [0, 0]], None, "upscale_by_colours-no-colour"),
    case("fractal_by_major", (), [[1] * 6], None, "fractal_by_major-too-big"),
    case("upscale_by_colours", (), [[1, 2, 3] * 4], None, "upscale_by_colours-past-30"),
    case("crop_period", (), [[1, 2, 3], [4, 5, 6]], None, "crop_period-no-repeat"),
    case("colour_column", (1,), [[0, 6, 0]], None, "colour_column-nothing-left"),
    case("colour_column", (0,), [[0, 0]], None, "colour_column-empty"),
    case("complete_period", (False,), [[1, 2, 1, 2]], None, "complete_period-no-hole"),
    case("complete_period", (True,), [[1, 0, 0, 0]], None, "complete_period-too-sparse"),
    case("complete_period", (False,), [[1, 2, 0, 0, 0, 0, 3, 4]], None,
         "complete_period-no-period"),
    case("repair_symmetry", (False,), [[1, 2, 1], [3, 4, 3]], None, "repair_symmetry-symmetric"),
    case("repair_symmetry", (True,), [[1, 2, 3], [4, 5, 6]], None, "repair_symmetry-no-noise"),
]


@pytest.mark.parametrize("name, args, inp, expected", MORE_CASES)
def test_hand_made_case(name, args, inp, expected):
    before = g(inp)
    grid = before.copy()
    out = getattr(dsl, name)(grid, *args)
    assert isinstance(out, np.ndarray) and out.dtype == np.uint8
    assert out.tolist() == g(expected).tolist()
    np.testing.assert_array_equal(grid, before)  # the input is never modified


@pytest.mark.parametrize("name, args, inp, expected", NO_RESULT)
def test_no_result(name, args, inp, expected):
    with pytest.raises(ValueError):
        getattr(dsl, name)(g(inp), *args)


def _new_primitives():
    return {name for name, p in PRIMITIVES.items()
            if p.fn.__module__.rsplit(".", 1)[-1] in NEW_MODULES}


def test_every_new_primitive_and_argument_tuple_has_a_case():
    covered = {(p.values[0], p.values[1]) for p in MORE_CASES}
    new = _new_primitives()
    assert new, "no primitives found in the new modules"
    missing = [str(t) for t in transforms() if t.name in new and (t.name, t.args) not in covered]
    assert not missing, missing


def test_new_primitives_are_enumerated_after_the_original_ones():
    """Appending keeps the indices of the 108 transforms that came first (stored programs)."""
    names = [t.name for t in transforms()]
    new = _new_primitives()
    first_new = min(i for i, n in enumerate(names) if n in new)
    assert first_new >= 108
    assert all(n in new for n in names[first_new:] if n in new)


# --------------------------------------------------------------------------------------------------
# Properties beyond single cases
# --------------------------------------------------------------------------------------------------

def test_mark_is_the_next_colour():
    from solvers.primitives.recolour import mark

    assert mark(np, g(list(range(10)))).tolist() == [0, 2, 3, 4, 5, 6, 7, 8, 9, 1]


def test_size_ranks_are_dense_and_per_grid():
    """Two grids in one batch: ranks restart in each grid and equal sizes share a rank."""
    stack = g([[[1, 1, 0, 2], [0, 0, 0, 2], [3, 0, 0, 0]],
               [[4, 0, 5, 0], [0, 0, 0, 0], [6, 6, 6, 0]]])
    out = PRIMITIVES["color_by_rank"].fn(np, stack)
    assert out[0].tolist() == [[1, 1, 0, 1], [0, 0, 0, 1], [2, 0, 0, 0]]
    assert out[1].tolist() == [[2, 0, 2, 0], [0, 0, 0, 0], [1, 1, 1, 0]]


def test_cell_summary_mixed_batch_shapes():
    """Grids of one input shape may split into different numbers of cells: one part per shape."""
    stack = g([[[1, 0, 2], [0, 0, 0], [3, 0, 4]],     # 2 x 2 cells
               [[1, 1, 0], [2, 2, 0], [3, 3, 0]],     # a single cell: no result
               [[1, 0, 2], [1, 0, 2], [1, 0, 2]]])    # 1 x 2 cells
    from solvers.batch import as_parts
    from solvers.registry import Transform

    result = as_parts(np, Transform(PRIMITIVES["cell_summary"], ("major",))(np, stack), 3)
    parts = {tuple(idx.tolist()): out.tolist() for idx, out in result}
    assert parts == {(0,): [[[1, 2], [3, 4]]], (2,): [[[1, 2]]]}


def test_complete_period_with_offset_rows():
    """A wallpaper whose rows shift by one cell each step down (484b58aa-like skew)."""
    full = [[1, 2, 3, 4, 1, 2, 3, 4],
            [4, 1, 2, 3, 4, 1, 2, 3],
            [3, 4, 1, 2, 3, 4, 1, 2],
            [2, 3, 4, 1, 2, 3, 4, 1]]
    holed = [row[:] for row in full]
    holed[1][5] = holed[2][5] = holed[2][6] = 0
    assert dsl.complete_period(g(holed), False).tolist() == full
    assert dsl.complete_period(g(holed), True).tolist() == [[1, 2], [4, 1]]
