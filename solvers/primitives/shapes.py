"""Objects picked by their shape among the shapes of their grid's other objects."""
from __future__ import annotations

from solvers.primitives.objects import _crop_chosen, label_objects, pick_per_grid
from solvers.primitives.paint_more import shape_counts
from solvers.registry import primitive


@primitive(pad="crop")
def common_shape_object(xp, g):
    """Crop to the first object (8-connected, one colour; others erased) in reading order of the
    shape (its cells relative to its bounding box) that most objects have; grids where no two
    objects share a shape give no result."""
    labels, owner, _, first = label_objects(xp, g, 8, True)
    count = shape_counts(xp, labels, owner)
    chosen = pick_per_grid(xp, owner, -xp.minimum(count, 1023), first, g.shape)
    return _crop_chosen(xp, g, labels, xp.where(count[chosen] >= 2, chosen, 0))
