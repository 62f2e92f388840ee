"""Rigid transforms (the 8 rotations/reflections) and crops: plain slicing of the whole stack."""
from __future__ import annotations

from solvers.batch import bounding_boxes, colour_counts, crop_boxes
from solvers.registry import primitive


@primitive()
def rot90(xp, g):
    """Rotate a quarter turn counter-clockwise."""
    return xp.rot90(g, 1, axes=(1, 2))


@primitive()
def rot180(xp, g):
    """Rotate a half turn."""
    return g[:, ::-1, ::-1]


@primitive()
def rot270(xp, g):
    """Rotate a quarter turn clockwise."""
    return xp.rot90(g, 3, axes=(1, 2))


@primitive()
def flip_lr(xp, g):
    """Mirror left-right."""
    return g[:, :, ::-1]


@primitive()
def flip_ud(xp, g):
    """Mirror top-bottom."""
    return g[:, ::-1, :]


@primitive()
def transpose(xp, g):
    """Mirror along the main diagonal."""
    return g.transpose(0, 2, 1)


@primitive()
def antitranspose(xp, g):
    """Mirror along the anti-diagonal."""
    return g.transpose(0, 2, 1)[:, ::-1, ::-1]


@primitive(pad="crop")
def crop_content(xp, g):
    """Crop to the bounding box of the non-zero cells (dropped when there are none)."""
    top, left, hh, ww, has = bounding_boxes(xp, g != 0)
    return crop_boxes(xp, g, top, left, hh, ww, has)


@primitive()
def crop_minority(xp, g):
    """Crop to the bounding box of the cells that differ from the grid's most frequent colour."""
    major = colour_counts(xp, g).argmax(axis=1).astype(g.dtype)
    top, left, hh, ww, has = bounding_boxes(xp, g != major[:, None, None])
    return crop_boxes(xp, g, top, left, hh, ww, has)
