"""Rigid transforms (the 8 rotations/reflections) and crops.

Written for zero-padded stacks of many shapes (``layout="padded"``, see :mod:`solvers.ragged`):
each rigid transform is a coordinate map read with one gather.
"""
from __future__ import annotations

from solvers import fused, kernels
from solvers.batch import colour_counts, crop_to_mask, shared_colour_counts
from solvers.ragged import apply_coord_map, per_grid, real_mask
from solvers.registry import primitive


@primitive(layout="padded", coord_map="rot90")
def rot90(xp, g, h, w):
    """Rotate a quarter turn counter-clockwise."""
    return apply_coord_map(xp, g, h, w, "rot90")


@primitive(layout="padded", coord_map="rot180", keeps_shape=True)
def rot180(xp, g, h, w):
    """Rotate a half turn."""
    return apply_coord_map(xp, g, h, w, "rot180")


@primitive(layout="padded", coord_map="rot270")
def rot270(xp, g, h, w):
    """Rotate a quarter turn clockwise."""
    return apply_coord_map(xp, g, h, w, "rot270")


@primitive(layout="padded", coord_map="flip_lr", keeps_shape=True)
def flip_lr(xp, g, h, w):
    """Mirror left-right."""
    return apply_coord_map(xp, g, h, w, "flip_lr")


@primitive(layout="padded", coord_map="flip_ud", keeps_shape=True)
def flip_ud(xp, g, h, w):
    """Mirror top-bottom."""
    return apply_coord_map(xp, g, h, w, "flip_ud")


@primitive(layout="padded", coord_map="transpose")
def transpose(xp, g, h, w):
    """Mirror along the main diagonal."""
    return apply_coord_map(xp, g, h, w, "transpose")


@primitive(layout="padded", coord_map="antitranspose")
def antitranspose(xp, g, h, w):
    """Mirror along the anti-diagonal."""
    return apply_coord_map(xp, g, h, w, "antitranspose")


@primitive(pad="crop")
def crop_content(xp, g):
    """Crop to the bounding box of the non-zero cells (dropped when there are none)."""
    return crop_to_mask(xp, g, g != 0)


@primitive(layout="padded")
def crop_minority(xp, g, h, w):
    """Crop to the bounding box of the cells that differ from the grid's most frequent colour."""
    if kernels.enabled(xp):
        return crop_to_mask(xp, g, fused.differs_from_major(xp, g, shared_colour_counts(xp, g), h, w))
    counts = colour_counts(xp, g)
    counts[:, 0] -= g.shape[1] * g.shape[2] - h * w  # padding is not part of the grid
    major = counts.argmax(axis=1).astype(g.dtype)
    return crop_to_mask(xp, g, (g != per_grid(major)) & real_mask(xp, g, h, w))
