"""Stamps: a many-coloured template object copied onto its one-colour look-alikes."""
from __future__ import annotations

from solvers.batch import bounding_boxes
from solvers.primitives.draw import first_last
from solvers.primitives.objects import label_objects, pick_per_grid
from solvers.ragged import Padded, per_grid
from solvers.registry import primitive


def object_colour_counts(xp, g, labels, total):
    """Per label of a labelling (``label_objects``), how many colours its cells have."""
    cells = labels > 0
    pairs = xp.unique(labels[cells].astype(xp.int64) * 16 + g[cells])
    return xp.bincount(pairs // 16, minlength=total + 1)


@primitive(layout="padded", keeps_shape=True)
def stamp_template(xp, g, h, w):
    """Copy the template, the object (4-connected, any colours) with the most colours (two or
    more; ties: the larger, then the first in reading order), onto every one-colour object whose
    bounding box has the template's sides: each of its cells takes the template cell at the same
    place in the box. Grids with no template or no such object give no result."""
    n = g.shape[0]
    labels, owner, sizes, first = label_objects(xp, g, 4, False)
    total = owner.shape[0] - 1
    colours = object_colour_counts(xp, g, labels, total)
    chosen = pick_per_grid(xp, owner, -(colours * 64 + xp.minimum(sizes, 63)), first, g.shape)
    chosen = xp.where(colours[chosen] >= 2, chosen, 0)
    mask = (labels == per_grid(chosen)) & (per_grid(chosen) > 0)
    top, left, th, tw, has = bounding_boxes(xp, mask)
    gi, r, c = xp.nonzero(labels)
    lab = labels[gi, r, c].astype(xp.int64)
    otop, obottom = first_last(xp, lab, r, total)
    oleft, oright = first_last(xp, lab, c, total)
    fits = ((colours[lab] == 1) & (obottom[lab] - otop[lab] + 1 == th[gi])
            & (oright[lab] - oleft[lab] + 1 == tw[gi]))
    gi, r, c, lab = gi[fits], r[fits], c[fits], lab[fits]
    src_r, src_c = top[gi] + r - otop[lab], left[gi] + c - oleft[lab]
    out = g.copy()
    out[gi, r, c] = xp.where(mask[gi, src_r, src_c], g[gi, src_r, src_c], g.dtype.type(0))
    found = xp.bincount(gi, minlength=n) > 0
    return Padded(out, h, w, has & found)
