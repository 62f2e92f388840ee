"""Hand-checked answers for every DSL primitive, through the single-grid face ``solvers.dsl``.

Every expected grid below is written out literally (worked out by hand from the primitive's
docstring), never computed by the code under test. ``RAISES`` marks "no result": the single-grid
face must raise ``ValueError``. ``test_every_primitive_has_a_case`` and
``test_every_enumerated_argument_tuple_has_a_case`` keep this table complete when primitives or
argument variants are added. Batch-versus-single consistency lives in ``tests/test_dsl_batch.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

import solvers.primitives  # noqa: F401  (registers every primitive)
from solvers import dsl
from solvers.registry import PRIMITIVES
from solvers.primitives import transforms

RAISES = "raises ValueError"


def g(rows):
    """A uint8 grid from nested lists."""
    return np.array(rows, dtype=np.uint8)


# --------------------------------------------------------------------------------------------------
# Input grids shared by several cases
# --------------------------------------------------------------------------------------------------

G23 = [[1, 2, 3],
       [4, 5, 6]]

# Objects: 1 and 2 touch only diagonally (different colours); 3 is a separate vertical bar.
OBJ_A = [[1, 1, 0, 0, 0],
         [1, 0, 0, 0, 0],
         [0, 2, 0, 0, 3],
         [0, 2, 0, 0, 3],
         [0, 0, 0, 0, 3]]

# Objects: two 4s touching diagonally (one object only with 8-connectivity), a 5 bar, a 6 bar.
OBJ_B = [[4, 0, 0, 0],
         [0, 4, 0, 5],
         [0, 0, 0, 5],
         [6, 6, 0, 0]]

# Objects: 1 and 2 are 4-adjacent (one multicolour object), 3 is alone.
OBJ_C = [[1, 2, 0],
         [0, 0, 0],
         [3, 0, 0]]

# The largest object's bounding box holds a foreign cell (7) that must be erased.
OBJ_F = [[3, 3, 3],
         [3, 0, 0],
         [3, 0, 7]]

# 1 and 2 touch diagonally: one object only for (8, multicolour).
OBJ_H = [[1, 0, 0, 0],
         [0, 2, 0, 0],
         [0, 0, 0, 3],
         [0, 0, 0, 3]]

ZERO_3x3 = [[0, 0, 0]] * 3

GRAV = [[0, 1, 0],
        [2, 0, 0],
        [0, 3, 5],
        [0, 0, 0]]

RAY = [[0, 0, 0, 0, 0],
       [0, 1, 0, 0, 0],
       [0, 0, 0, 2, 0],
       [0, 0, 0, 0, 0]]

# Left half | separator column of 5s | right half.
HALVES_LR = [[1, 0, 5, 2, 2],
             [0, 3, 5, 0, 4],
             [6, 0, 5, 0, 0]]
# The same grid transposed: top half / separator row / bottom half.
HALVES_UD = [[1, 0, 6],
             [0, 3, 0],
             [5, 5, 5],
             [2, 0, 0],
             [2, 4, 0]]

DEDUP = [[1, 1, 2],
         [1, 1, 2],
         [3, 3, 3],
         [1, 1, 2]]


def case(name, args, inp, expected, id_=None):
    return pytest.param(name, tuple(args), inp, expected, id=id_ or f"{name}{tuple(args)}")


CASES = [
    # ---- geometry -------------------------------------------------------------------------------
    case("rot90", (), G23, [[3, 6], [2, 5], [1, 4]]),
    case("rot180", (), G23, [[6, 5, 4], [3, 2, 1]]),
    case("rot270", (), G23, [[4, 1], [5, 2], [6, 3]]),
    case("flip_lr", (), G23, [[3, 2, 1], [6, 5, 4]]),
    case("flip_ud", (), G23, [[4, 5, 6], [1, 2, 3]]),
    case("transpose", (), G23, [[1, 4], [2, 5], [3, 6]]),
    case("antitranspose", (), G23, [[6, 3], [5, 2], [4, 1]]),
    case("antitranspose", (), [[1, 2], [3, 4]], [[4, 2], [3, 1]], "antitranspose-square"),
    case("crop_content", (), [[0, 0, 0, 0], [0, 3, 0, 0], [0, 0, 4, 0], [0, 0, 0, 0]],
         [[3, 0], [0, 4]]),
    case("crop_content", (), [[0, 0, 0], [0, 0, 9]], [[9]], "crop_content-corner"),
    case("crop_content", (), [[5, 0], [0, 0]], [[5]], "crop_content-origin"),
    case("crop_content", (), ZERO_3x3, RAISES, "crop_content-empty"),
    case("crop_minority", (), [[5, 5, 5, 5], [5, 1, 5, 5], [5, 5, 0, 5], [5, 5, 5, 5]],
         [[1, 5], [5, 0]]),
    case("crop_minority", (), [[0, 0, 0], [0, 0, 2], [0, 3, 0]], [[0, 2], [3, 0]],
         "crop_minority-zero-majority"),
    case("crop_minority", (), [[7, 7], [7, 7]], RAISES, "crop_minority-uniform"),
    case("crop_minority", (), ZERO_3x3, RAISES, "crop_minority-empty"),
    # ---- colour ---------------------------------------------------------------------------------
    case("recolor", (3,), [[0, 1, 2], [5, 0, 9]], [[0, 3, 3], [3, 0, 3]]),
    case("recolor", (9,), [[4, 0], [0, 9]], [[9, 0], [0, 9]]),
    case("recolor", (1,), ZERO_3x3, ZERO_3x3, "recolor(1,)-empty"),
    case("remove_color", (2,), [[0, 1, 2], [2, 0, 9]], [[0, 1, 0], [0, 0, 9]]),
    case("remove_color", (7,), [[0, 1, 2], [2, 0, 9]], [[0, 1, 2], [2, 0, 9]]),
    case("keep_color", (2,), [[0, 1, 2], [2, 0, 9]], [[0, 0, 2], [2, 0, 0]]),
    case("keep_color", (9,), [[0, 1, 2], [2, 0, 9]], [[0, 0, 0], [0, 0, 9]]),
    case("keep_majority_color", (), [[1, 2, 2], [0, 0, 0], [1, 2, 3]],
         [[0, 2, 2], [0, 0, 0], [0, 2, 0]]),
    case("keep_majority_color", (), [[3, 3, 1], [1, 0, 0]], [[0, 0, 1], [1, 0, 0]],
         "keep_majority_color-tie-lower"),
    case("keep_majority_color", (), [[0, 0, 0], [0, 4, 0]], [[0, 0, 0], [0, 4, 0]],
         "keep_majority_color-ignores-background"),
    case("keep_minority_color", (), [[1, 2, 2], [0, 0, 0], [1, 2, 3]],
         [[0, 0, 0], [0, 0, 0], [0, 0, 3]]),
    case("keep_minority_color", (), [[4, 1, 1, 3]], [[0, 0, 0, 3]],
         "keep_minority_color-tie-lower"),
    case("keep_minority_color", (), [[0, 0], [0, 0]], [[0, 0], [0, 0]],
         "keep_minority_color-empty"),
    case("invert", (), [[0, 1, 1], [2, 0, 1]], [[1, 0, 0], [0, 1, 0]]),
    case("invert", (), [[0, 6], [6, 6]], [[6, 0], [0, 0]], "invert-single-colour"),
    case("majority_cell", (), [[0, 2, 2], [3, 0, 0]], [[2]]),
    case("majority_cell", (), [[0, 0, 0, 8], [8, 7, 7, 7]], [[7]], "majority_cell-ignores-0"),
    case("colormap", ({1: 2, 2: 1, 5: 0},), [[1, 2, 5], [0, 3, 1]], [[2, 1, 0], [0, 3, 2]]),
    case("colormap", ({0: 7},), [[0, 1], [1, 0]], [[7, 1], [1, 7]], "colormap-background"),
    case("colormap", ({},), [[0, 1], [9, 4]], [[0, 1], [9, 4]], "colormap-empty"),
    # Keys: colour * 16 + 8 above + 4 below + 2 left + 1 right (a non-zero cell that way in its column / row).
    case("ray_table", ({8: 7},), [[0, 1, 0], [0, 0, 0], [2, 0, 0]], [[0, 1, 0], [0, 7, 0], [2, 0, 0]]),
    case("ray_table", ({16: 3, 4: 5},), [[0, 1, 0], [0, 0, 0], [2, 0, 0]], [[0, 3, 0], [5, 0, 0], [2, 0, 0]],
         "ray_table-colour-and-below"),
    case("ray_table", ({200: 1},), [[0, 1], [1, 0]], RAISES, "ray_table-bad-key"),
    case("paint", ([[0, 2], [0, 0]], [[3, 0], [0, 0]]), [[1, 1], [0, 1]], [[3, 2], [0, 1]]),
    case("paint", ([[0, 2, 0]],), [[1, 1], [0, 1]], RAISES, "paint-other-shape"),
    case("erase", ([[0, 2], [5, 0]],), [[1, 1], [0, 1]], [[0, 1], [0, 0]]),
    case("erase", ([[0, 2, 0]],), [[1, 1], [0, 1]], RAISES, "erase-other-shape"),
    case("constant", (((1, 0, 2),),), [[1, 1], [0, 1]], [[1, 0, 2]]),
    case("constant", (((1, 10),),), [[1, 1], [0, 1]], RAISES, "constant-not-a-colour"),
    case("normalise_colours", ((0,),), [[0, 7, 7], [7, 3, 0]], [[0, 1, 1], [1, 2, 0]]),
    case("normalise_colours", ((0, 3),), [[0, 7, 7], [7, 3, 0]], [[0, 1, 1], [1, 3, 0]], "normalise-fixed"),
    case("restore_colours", ([[0, 7, 7], [7, 3, 0]], (0,)), [[0, 1, 1], [1, 2, 0]], [[0, 7, 7], [7, 3, 0]]),
    # ---- objects: largest / smallest (crop, other cells erased) --------------------------------
    case("largest_object", (4, True), OBJ_A, [[1, 1], [1, 0]], "largest_object-A-4-colour"),
    case("largest_object", (8, True), OBJ_A, [[1, 1], [1, 0]], "largest_object-A-8-colour"),
    case("largest_object", (4, False), OBJ_A, [[1, 1], [1, 0]], "largest_object-A-4-multi"),
    case("largest_object", (8, False), OBJ_A, [[1, 1], [1, 0], [0, 2], [0, 2]],
         "largest_object-A-8-multi"),
    case("largest_object", (4, True), OBJ_B, [[5], [5]], "largest_object-B-4-colour"),
    case("largest_object", (8, True), OBJ_B, [[4, 0], [0, 4]], "largest_object-B-8-colour"),
    case("largest_object", (4, False), OBJ_B, [[5], [5]], "largest_object-B-4-multi"),
    case("largest_object", (8, False), OBJ_B, [[4, 0], [0, 4]], "largest_object-B-8-multi"),
    case("largest_object", (4, True), OBJ_C, [[1]], "largest_object-C-4-colour"),
    case("largest_object", (4, False), OBJ_C, [[1, 2]], "largest_object-C-4-multi"),
    case("largest_object", (4, True), OBJ_F, [[3, 3, 3], [3, 0, 0], [3, 0, 0]],
         "largest_object-F-erases-foreign"),
    case("largest_object", (8, False), ZERO_3x3, RAISES, "largest_object-empty"),
    case("smallest_object", (4, True), OBJ_A, [[2], [2]], "smallest_object-A-4-colour"),
    case("smallest_object", (8, True), OBJ_A, [[2], [2]], "smallest_object-A-8-colour"),
    case("smallest_object", (4, False), OBJ_A, [[2], [2]], "smallest_object-A-4-multi"),
    case("smallest_object", (8, False), OBJ_A, [[3], [3], [3]], "smallest_object-A-8-multi"),
    case("smallest_object", (4, True), OBJ_B, [[4]], "smallest_object-B-4-colour"),
    case("smallest_object", (8, True), OBJ_B, [[4, 0], [0, 4]], "smallest_object-B-8-colour"),
    case("smallest_object", (4, False), OBJ_B, [[4]], "smallest_object-B-4-multi"),
    case("smallest_object", (8, False), OBJ_B, [[4, 0], [0, 4]], "smallest_object-B-8-multi"),
    case("smallest_object", (4, False), OBJ_C, [[3]], "smallest_object-C-4-multi"),
    case("smallest_object", (4, True), ZERO_3x3, RAISES, "smallest_object-empty"),
    # ---- objects: in place ---------------------------------------------------------------------
    case("keep_largest_object", (8, True), OBJ_H,
         [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 3], [0, 0, 0, 3]]),
    case("keep_largest_object", (8, False), OBJ_H,
         [[1, 0, 0, 0], [0, 2, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]),
    case("keep_largest_object", (8, True), ZERO_3x3, ZERO_3x3, "keep_largest_object-empty"),
    case("remove_largest_object", (8, True), OBJ_H,
         [[1, 0, 0, 0], [0, 2, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]),
    case("remove_largest_object", (8, False), OBJ_H,
         [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 3], [0, 0, 0, 3]]),
    case("remove_largest_object", (8, False), ZERO_3x3, ZERO_3x3, "remove_largest_object-empty"),
    case("remove_noise", (),
         [[1, 0, 2, 2],
          [0, 1, 5, 0],
          [3, 0, 0, 4],
          [0, 0, 4, 0]],
         [[1, 0, 2, 2],
          [0, 1, 0, 0],
          [0, 0, 0, 4],
          [0, 0, 4, 0]]),
    case("remove_noise", (), [[0, 0], [0, 7]], [[0, 0], [0, 0]], "remove_noise-single-cell"),
    case("rarest_color_object", (),
         [[1, 1, 0, 0, 0],
          [1, 0, 2, 0, 0],
          [0, 0, 0, 0, 0],
          [0, 0, 0, 0, 3],
          [0, 0, 0, 3, 3]],
         [[1, 1, 0], [1, 0, 2]]),
    case("rarest_color_object", (),
         [[4, 0, 0],
          [0, 0, 0],
          [6, 6, 8]],
         [[4]], "rarest_color_object-tie-lower-colour"),
    case("rarest_color_object", (), ZERO_3x3, RAISES, "rarest_color_object-empty"),
    # ---- scaling --------------------------------------------------------------------------------
    case("upscale", (2,), [[1, 2], [3, 0]],
         [[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 0, 0], [3, 3, 0, 0]]),
    case("upscale", (3,), [[5, 6]], [[5, 5, 5, 6, 6, 6]] * 3),
    case("upscale", (4,), [[7]], [[7, 7, 7, 7]] * 4),
    case("upscale", (2,), [[1]] * 15, [[1, 1]] * 30, "upscale(2,)-to-30"),
    case("upscale", (2,), [[1]] * 16, RAISES, "upscale(2,)-past-30-rows"),
    case("upscale", (4,), [[1] * 8], RAISES, "upscale(4,)-past-30-cols"),
    case("downscale", (2,), [[1, 9, 2, 8], [7, 7, 7, 7]], [[1, 2]]),
    case("downscale", (3,), [[1, 0, 0, 2, 0, 0], [0] * 6, [0] * 6], [[1, 2]]),
    case("downscale", (2,), [[1, 1, 2, 2]] * 3, RAISES, "downscale(2,)-odd-height"),
    case("downscale", (3,), [[1, 1, 1, 1]] * 3, RAISES, "downscale(3,)-width-4"),
    case("fractal", (), [[1, 0], [0, 2]],
         [[1, 0, 0, 0], [0, 2, 0, 0], [0, 0, 1, 0], [0, 0, 0, 2]]),
    case("fractal", (), [[3, 0, 4]], [[3, 0, 4, 0, 0, 0, 3, 0, 4]], "fractal-1x3"),
    case("fractal", (), [[1]] * 6, RAISES, "fractal-too-big"),
    case("tile", (1, 2), [[1, 2]], [[1, 2, 1, 2]]),
    case("tile", (2, 1), [[1, 2]], [[1, 2], [1, 2]]),
    case("tile", (2, 2), [[1], [2]], [[1, 1], [2, 2], [1, 1], [2, 2]]),
    case("tile", (1, 3), [[1, 2]], [[1, 2, 1, 2, 1, 2]]),
    case("tile", (3, 1), [[4]], [[4], [4], [4]]),
    case("tile", (3, 3), [[1, 2]], [[1, 2, 1, 2, 1, 2]] * 3),
    case("tile", (3, 1), [[1]] * 10, [[1]] * 30, "tile(3, 1)-to-30"),
    case("tile", (1, 3), [[1] * 11], RAISES, "tile(1, 3)-past-30"),
    case("mirror_lr", (), [[1, 2, 0], [3, 0, 0]], [[1, 2, 0, 0, 2, 1], [3, 0, 0, 0, 0, 3]]),
    case("mirror_lr", (), [[1] * 16], RAISES, "mirror_lr-past-30"),
    case("mirror_ud", (), [[1, 2], [3, 4]], [[1, 2], [3, 4], [3, 4], [1, 2]]),
    case("mirror_ud", (), [[1]] * 16, RAISES, "mirror_ud-past-30"),
    case("mirror_4", (), [[1, 2], [3, 0]],
         [[1, 2, 2, 1], [3, 0, 0, 3], [3, 0, 0, 3], [1, 2, 2, 1]]),
    case("mirror_4", (), [[1]] * 16, RAISES, "mirror_4-past-30"),
    # ---- lines ----------------------------------------------------------------------------------
    case("gravity", ("down",), GRAV, [[0, 0, 0], [0, 0, 0], [0, 1, 0], [2, 3, 5]]),
    case("gravity", ("up",), GRAV, [[2, 1, 5], [0, 3, 0], [0, 0, 0], [0, 0, 0]]),
    case("gravity", ("left",), GRAV, [[1, 0, 0], [2, 0, 0], [3, 5, 0], [0, 0, 0]]),
    case("gravity", ("right",), GRAV, [[0, 0, 1], [0, 0, 2], [0, 3, 5], [0, 0, 0]]),
    case("gravity", ("down",), [[4], [0], [6], [0]], [[0], [0], [4], [6]], "gravity-keeps-order"),
    case("rays", ("down",), RAY,
         [[0, 0, 0, 0, 0], [0, 1, 0, 0, 0], [0, 1, 0, 2, 0], [0, 1, 0, 2, 0]]),
    case("rays", ("up",), RAY,
         [[0, 1, 0, 2, 0], [0, 1, 0, 2, 0], [0, 0, 0, 2, 0], [0, 0, 0, 0, 0]]),
    case("rays", ("left",), RAY,
         [[0, 0, 0, 0, 0], [1, 1, 0, 0, 0], [2, 2, 2, 2, 0], [0, 0, 0, 0, 0]]),
    case("rays", ("right",), RAY,
         [[0, 0, 0, 0, 0], [0, 1, 1, 1, 1], [0, 0, 0, 2, 2], [0, 0, 0, 0, 0]]),
    case("rays", ("lr",), RAY,
         [[0, 0, 0, 0, 0], [1, 1, 1, 1, 1], [2, 2, 2, 2, 2], [0, 0, 0, 0, 0]]),
    case("rays", ("ud",), RAY, [[0, 1, 0, 2, 0]] * 4),
    case("rays", ("all",), RAY,  # crossings: down beats up beats left beats right
         [[0, 1, 0, 2, 0], [1, 1, 1, 2, 1], [2, 1, 2, 2, 2], [0, 1, 0, 2, 0]]),
    case("rays", ("down",), [[1], [0], [2], [0]], [[1], [1], [2], [2]], "rays-down-blocked"),
    # ---- regions --------------------------------------------------------------------------------
    case("fill_enclosed", (4,),
         [[0, 0, 0, 0, 0],
          [0, 1, 1, 1, 0],
          [0, 1, 0, 1, 0],
          [0, 1, 1, 1, 0],
          [0, 0, 0, 0, 0]],
         [[0, 0, 0, 0, 0],
          [0, 1, 1, 1, 0],
          [0, 1, 4, 1, 0],
          [0, 1, 1, 1, 0],
          [0, 0, 0, 0, 0]]),
    case("fill_enclosed", (7,),  # a diagonal gap does not let the background out (4-connected)
         [[1, 1, 1, 0],
          [1, 0, 0, 1],
          [1, 0, 0, 1],
          [0, 1, 1, 1]],
         [[1, 1, 1, 0],
          [1, 7, 7, 1],
          [1, 7, 7, 1],
          [0, 1, 1, 1]]),
    case("fill_enclosed", (2,), [[1, 1, 1], [1, 0, 0], [1, 1, 1]], [[1, 1, 1], [1, 0, 0], [1, 1, 1]],
         "fill_enclosed-open-to-border"),
    case("fill_enclosed", (3,),  # walls of several colours
         [[5, 6, 5], [6, 0, 6], [5, 6, 5]], [[5, 6, 5], [6, 3, 6], [5, 6, 5]],
         "fill_enclosed-multicolour-wall"),
    case("outline", (),
         [[0, 0, 0, 0, 0],
          [0, 2, 2, 2, 0],
          [0, 2, 2, 2, 0],
          [0, 2, 2, 2, 0],
          [0, 0, 0, 0, 0]],
         [[0, 0, 0, 0, 0],
          [0, 2, 2, 2, 0],
          [0, 2, 0, 2, 0],
          [0, 2, 2, 2, 0],
          [0, 0, 0, 0, 0]]),
    case("outline", (), [[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[1, 2, 3], [4, 0, 6], [7, 8, 9]],
         "outline-border-counts-as-edge"),
    case("interior", (),
         [[0, 0, 0, 0, 0],
          [0, 2, 2, 2, 0],
          [0, 2, 2, 2, 0],
          [0, 2, 2, 2, 0],
          [0, 0, 0, 0, 0]],
         [[0, 0, 0, 0, 0],
          [0, 0, 0, 0, 0],
          [0, 0, 2, 0, 0],
          [0, 0, 0, 0, 0],
          [0, 0, 0, 0, 0]]),
    case("interior", (), [[3, 3, 3, 3]] * 3, [[0, 0, 0, 0], [0, 3, 3, 0], [0, 0, 0, 0]],
         "interior-3x4"),
    case("interior", (), [[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[0, 0, 0], [0, 5, 0], [0, 0, 0]],
         "interior-multicolour"),
    case("symmetrize", ("lr",), [[1, 0, 0], [0, 0, 2]], [[1, 0, 1], [2, 0, 2]]),
    case("symmetrize", ("lr",), [[1, 0, 2]], [[1, 0, 2]], "symmetrize-lr-keeps-non-zero"),
    case("symmetrize", ("ud",), [[1, 0], [0, 0], [0, 3]], [[1, 3], [0, 0], [1, 3]]),
    case("symmetrize", ("rot180",), [[1, 2, 0], [0, 0, 0]], [[1, 2, 0], [0, 2, 1]]),
    case("symmetrize", ("diag",), [[1, 2], [0, 0]], [[1, 2], [2, 0]]),
    case("symmetrize", ("diag",), [[1, 2, 0], [0, 0, 0]], RAISES, "symmetrize-diag-not-square"),
    case("symmetrize", ("all",), [[0, 2, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]],
         [[0, 2, 2, 0], [0, 0, 0, 0], [0, 2, 2, 0]]),
    case("symmetrize", ("all",), [[1, 0, 0], [0, 0, 0], [0, 0, 0]],
         [[1, 0, 1], [0, 0, 0], [1, 0, 1]], "symmetrize-all-corner"),
    case("overlay_halves", ("lr", "and"), HALVES_LR, [[1, 0], [0, 3], [0, 0]]),
    case("overlay_halves", ("lr", "or"), HALVES_LR, [[1, 2], [0, 3], [6, 0]]),
    case("overlay_halves", ("lr", "xor"), HALVES_LR, [[0, 2], [0, 0], [6, 0]]),
    case("overlay_halves", ("lr", "nor"), HALVES_LR, [[0, 0], [1, 0], [0, 1]]),
    case("overlay_halves", ("ud", "and"), HALVES_UD, [[1, 0, 0], [0, 3, 0]]),
    case("overlay_halves", ("ud", "or"), HALVES_UD, [[1, 0, 6], [2, 3, 0]]),
    case("overlay_halves", ("ud", "xor"), HALVES_UD, [[0, 0, 6], [2, 0, 0]]),
    case("overlay_halves", ("ud", "nor"), HALVES_UD, [[0, 1, 0], [0, 0, 1]]),
    case("overlay_halves", ("lr", "or"), [[1, 0, 0, 2]], [[1, 2]], "overlay_halves-even-width"),
    case("overlay_halves", ("lr", "and"), [[1], [2]], RAISES, "overlay_halves-lr-width-1"),
    case("overlay_halves", ("ud", "xor"), [[1, 2, 3]], RAISES, "overlay_halves-ud-height-1"),
    case("dedup_lines", ("rows",), DEDUP, [[1, 1, 2], [3, 3, 3], [1, 1, 2]]),
    case("dedup_lines", ("cols",), DEDUP, [[1, 2], [1, 2], [3, 3], [1, 2]]),
    case("dedup_lines", ("both",), DEDUP, [[1, 2], [3, 3], [1, 2]]),
    case("dedup_lines", ("both",), [[4, 4], [4, 4]], [[4]], "dedup_lines-uniform"),
    case("compress", (), [[0, 0, 0, 0], [0, 1, 0, 2], [0, 0, 0, 0], [0, 3, 0, 0]], [[1, 2], [3, 0]]),
    case("compress", (), ZERO_3x3, RAISES, "compress-empty"),
]


from test_dsl_more import MORE_CASES  # noqa: E402  (hand-made cases of the later primitive modules)
from test_dsl_moves import MOVES_CASES  # noqa: E402
from test_dsl_paint import PAINT_CASES  # noqa: E402
from test_dsl_sizes import SIZES_CASES  # noqa: E402
from test_dsl_split import SPLIT_CASES  # noqa: E402
from test_dsl_counts import COUNTS_CASES  # noqa: E402
from test_dsl_boxes import BOXES_CASES  # noqa: E402
from test_dsl_rings import RINGS_CASES  # noqa: E402
from test_dsl_reach import REACH_CASES  # noqa: E402
from test_dsl_stamps import STAMPS_CASES  # noqa: E402
from test_dsl_shapes import SHAPES_CASES  # noqa: E402
from test_dsl_stride import STRIDE_CASES  # noqa: E402
from test_dsl_attract import ATTRACT_CASES  # noqa: E402
from test_dsl_dot_stamps import DOT_STAMPS_CASES  # noqa: E402
from test_dsl_lattice import LATTICE_CASES  # noqa: E402
from test_dsl_copies import COPIES_CASES  # noqa: E402
from test_dsl_rects import RECTS_CASES  # noqa: E402
from test_dsl_parts import PARTS_CASES  # noqa: E402
from test_dsl_tallies import TALLIES_CASES  # noqa: E402
from test_dsl_paths import PATHS_CASES  # noqa: E402

CASES += (MORE_CASES + MOVES_CASES + PAINT_CASES + SIZES_CASES + SPLIT_CASES + COUNTS_CASES + BOXES_CASES
          + RINGS_CASES + REACH_CASES + STAMPS_CASES + SHAPES_CASES
          + STRIDE_CASES + ATTRACT_CASES + DOT_STAMPS_CASES + LATTICE_CASES + COPIES_CASES + RECTS_CASES
          + PARTS_CASES + TALLIES_CASES + PATHS_CASES)


@pytest.mark.parametrize("name, args, inp, expected", CASES)
def test_hand_made_case(name, args, inp, expected):
    fn = getattr(dsl, name)
    before = g(inp)
    grid = before.copy()
    if expected is RAISES:
        with pytest.raises(ValueError):
            fn(grid, *args)
    else:
        out = fn(grid, *args)
        assert isinstance(out, np.ndarray)
        assert out.dtype == np.uint8
        assert out.shape == g(expected).shape, out.tolist()
        assert out.tolist() == g(expected).tolist()
    np.testing.assert_array_equal(grid, before)  # the input is never modified


# Ties between objects of the same size go to the object met first in reading order, also when
# objects are taken per colour.

TIE = [[2, 2, 0, 1, 1]]
TIE_SMALL = [[3, 0, 1]]


@pytest.mark.parametrize("conn", [4, 8])
def test_largest_object_by_colour_tie_is_reading_order(conn):
    assert dsl.largest_object(g(TIE), conn, True).tolist() == [[2, 2]]


@pytest.mark.parametrize("conn", [4, 8])
def test_smallest_object_by_colour_tie_is_reading_order(conn):
    assert dsl.smallest_object(g(TIE_SMALL), conn, True).tolist() == [[3]]


def test_keep_largest_object_by_colour_tie_is_reading_order():
    assert dsl.keep_largest_object(g(TIE), 8, True).tolist() == [[2, 2, 0, 0, 0]]


def test_remove_largest_object_by_colour_tie_is_reading_order():
    assert dsl.remove_largest_object(g(TIE), 8, True).tolist() == [[0, 0, 0, 1, 1]]


@pytest.mark.parametrize("conn", [4, 8])
def test_multicolour_objects_tie_is_reading_order(conn):
    """The same ties with multicolour objects (labels in raster order) do follow reading order."""
    grid = g([[2, 2, 0, 1, 1]])
    assert dsl.largest_object(grid, conn, False).tolist() == [[2, 2]]
    assert dsl.smallest_object(g([[3, 0, 1]]), conn, False).tolist() == [[3]]
    assert dsl.keep_largest_object(grid, 8, False).tolist() == [[2, 2, 0, 0, 0]]
    assert dsl.remove_largest_object(grid, 8, False).tolist() == [[0, 0, 0, 1, 1]]


# --------------------------------------------------------------------------------------------------
# Completeness of the table above, the registry and the single-grid face
# --------------------------------------------------------------------------------------------------

# Primitives whose only argument is a colour: two colours are enough, not all nine.
COLOUR_ARG = {"recolor", "remove_color", "keep_color", "fill_enclosed", "slide_to_colour"}


def test_every_primitive_has_a_case():
    names = {p.values[0] for p in CASES}
    with_answer = {p.values[0] for p in CASES if p.values[3] is not RAISES}
    assert set(PRIMITIVES) <= names, sorted(set(PRIMITIVES) - names)
    assert set(PRIMITIVES) <= with_answer, sorted(set(PRIMITIVES) - with_answer)


def test_every_enumerated_argument_tuple_has_a_case():
    covered = {(p.values[0], p.values[1]) for p in CASES
               if p.values[3] is not RAISES and p.values[0] not in ("colormap", "paint", "erase", "restore_colours", "constant", "ray_table",
                                                                     "fit_to", "tile_to", "mirror_tile_to",
                                                                     "resample_to")}  # dict / grid args
    missing = [str(t) for t in transforms()
               if t.name not in COLOUR_ARG and (t.name, t.args) not in covered]
    assert not missing, missing
    for name in COLOUR_ARG:
        colours = {args for n, args in covered if n == name}
        assert len(colours) >= 2, name


def test_transform_count():
    assert len(transforms()) >= 80


def test_transforms_are_stable_and_named():
    first, second = transforms(), transforms()
    assert [str(t) for t in first] == [str(t) for t in second]
    assert len({str(t) for t in first}) == len(first)  # no transform enumerated twice
    for t in first:
        assert t.name in PRIMITIVES
        assert t.call_source("I").startswith(t.name + "(I")


def test_primitives_applied_after_the_search_are_not_enumerated():
    assert {"colormap", "paint", "normalise_colours", "restore_colours", "constant", "output_size", "fit_to",
            "tile_to", "mirror_tile_to", "resample_to", "ray_table"}.isdisjoint({t.name for t in transforms()})


def test_dsl_exports_every_primitive():
    assert sorted(dsl.__all__) == sorted(PRIMITIVES)
    for name in PRIMITIVES:
        fn = getattr(dsl, name)
        assert fn.__name__ == name
        assert fn.__doc__ == PRIMITIVES[name].doc


def test_dsl_accepts_nested_lists_and_other_dtypes():
    assert dsl.rot90([[1, 2], [3, 4]]).tolist() == [[2, 4], [1, 3]]
    assert dsl.flip_lr(np.array([[1, 2, 3]], dtype=np.int64)).tolist() == [[3, 2, 1]]
    assert dsl.flip_lr(np.array([[1, 2, 3]], dtype=np.int64)).dtype == np.uint8


def test_dsl_rejects_non_2d_input():
    with pytest.raises(ValueError):
        dsl.rot90(np.zeros((1, 2, 2), dtype=np.uint8))
    with pytest.raises(ValueError):
        dsl.rot90(np.zeros(3, dtype=np.uint8))


def test_dsl_results_are_contiguous_copies():
    grid = g([[1, 2], [3, 4]])
    out = dsl.flip_lr(grid)
    assert out.flags.c_contiguous
    out[0, 0] = 9
    assert grid.tolist() == [[1, 2], [3, 4]]


def test_star_import_gives_the_face():
    namespace: dict = {}
    exec("from solvers.dsl import *", namespace)
    assert namespace["recolor"](g([[0, 5]]), 3).tolist() == [[0, 3]]
    assert namespace["largest_object"](g(OBJ_A), 8, True).tolist() == [[1, 1], [1, 0]]


def test_fill_primitives_paint_their_mask_with_their_colour():
    """A ``fill`` declaration is what the GPU's fill runs rely on: the primitive's result is its
    colour where the mask holds and the grid elsewhere (checked on random grids); it needs an
    in-place primitive of one colour argument."""
    from solvers.registry import primitive

    rng = np.random.default_rng(0)
    grids = rng.integers(0, 4, size=(50, 7, 9)).astype(np.uint8)
    grids[:, 2:5, 3:6] = 0
    grids[:, 1, 2:7] = grids[:, 5, 2:7] = grids[:, 1:6, 2] = grids[:, 1:6, 6] = 2  # closed rings
    fills = [p for p in PRIMITIVES.values() if p.fill is not None]
    assert fills
    for p in fills:
        mask = p.fill(np, grids)
        assert mask.any() and not mask.all()
        for (c,) in p.arg_values:
            assert np.array_equal(p.fn(np, grids, c), np.where(mask, np.uint8(c), grids)), (p.name, c)
    with pytest.raises(ValueError, match="fill needs"):
        primitive(((1,),), pad="crop", fill=lambda xp, g: g == 0)
    with pytest.raises(ValueError, match="fill needs"):
        primitive(((1, 2),), pad="inplace", fill=lambda xp, g: g == 0)
