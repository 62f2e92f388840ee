"""Crops to the bounding box of an object, with everything that lies inside it."""
from __future__ import annotations

from solvers.batch import bounding_boxes, crop_boxes
from solvers.primitives.objects import _by_size
from solvers.ragged import per_grid
from solvers.registry import primitive


def _crop_box(xp, g, mask, inner):
    """Crop each grid to the bounding box of its ``mask`` cells (with ``inner``, without the box's
    outermost ring of cells); grids with no such cells, or nothing inside the ring, give none."""
    top, left, height, width, has = bounding_boxes(xp, mask)
    if inner:
        top, left, height, width = top + 1, left + 1, height - 2, width - 2
        has = has & (height >= 1) & (width >= 1)
    return crop_boxes(xp, g, top, left, xp.maximum(height, 1), xp.maximum(width, 1), has)


@primitive(((8, True, False), (8, True, True)), pad="crop")
def largest_object_box(xp, g, conn, by_colour, inner):
    """Crop to the bounding box of the largest object (by cell count; ties: first in reading
    order), keeping every cell inside the box (other objects too); with ``inner`` to the box
    without its outermost ring of cells (what a frame encloses; no result where that is empty)."""
    labels, chosen = _by_size(xp, g, conn, by_colour, largest=True)
    return _crop_box(xp, g, (labels == per_grid(chosen)) & (per_grid(chosen) > 0), inner)
