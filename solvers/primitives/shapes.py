"""Objects picked by their shape among the shapes of their grid's other objects."""
from __future__ import annotations

from solvers.primitives.objects import _crop_chosen, label_objects, pick_per_grid
from solvers.primitives.paint_more import shape_counts
from solvers.registry import primitive


@primitive((("common",), ("unique",)), pad="crop")
def shape_object(xp, g, which):
    """Crop to an object (8-connected, one colour; others erased) picked by its shape (its cells
    relative to its bounding box): ``common``, the first in reading order of the shape that most
    objects have (two or more); ``unique``, the one object whose shape no other has, where three
    or more objects and exactly one such. Other grids give no result."""
    labels, owner, _, first = label_objects(xp, g, 8, True)
    count = shape_counts(xp, labels, owner)
    n = g.shape[0]
    score = -xp.minimum(count, 1023) if which == "common" else xp.minimum(count, 1023)
    chosen = pick_per_grid(xp, owner, score, first, g.shape)
    if which == "common":
        ok = count[chosen] >= 2
    else:
        lone = xp.bincount(owner[1:][count[1:] == 1], minlength=n)
        objects = xp.bincount(owner[1:], minlength=n)
        ok = (lone == 1) & (objects >= 3)
    return _crop_chosen(xp, g, labels, xp.where(ok & (chosen > 0), chosen, 0))
