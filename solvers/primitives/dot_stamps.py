"""Dot stamps: a many-coloured template object copied, centred, onto every single cell."""
from __future__ import annotations

from solvers.batch import bounding_boxes
from solvers.primitives.attract import paint_cells
from solvers.primitives.objects import label_objects, pick_per_grid
from solvers.primitives.stamps import object_colour_counts
from solvers.ragged import Padded, per_grid
from solvers.registry import primitive


@primitive(layout="padded", keeps_shape=True)
def stamp_on_dots(xp, g, h, w):
    """Copy the template, the object (8-connected, any colours) with the most colours (two or more;
    ties: the larger, then the first in reading order), onto every single cell (a one-cell object):
    the template's box centred on the cell (its middle row and column, rounded down), its non-zero
    cells painted over the grid inside its sides, the single cell erased first; where stamps
    overlap, the highest colour. Grids with no template or no single cell give no result."""
    n = g.shape[0]
    labels, owner, sizes, first = label_objects(xp, g, 8, False)
    colours = object_colour_counts(xp, g, labels, owner.shape[0] - 1)
    chosen = pick_per_grid(xp, owner, -(colours * 64 + xp.minimum(sizes, 63)), first, g.shape)
    chosen = xp.where(colours[chosen] >= 2, chosen, 0)
    mask = (labels == per_grid(chosen)) & (per_grid(chosen) > 0)
    top, left, th, tw, has = bounding_boxes(xp, mask)
    dot = (labels > 0) & (sizes[labels] == 1)
    gi, r, c = xp.nonzero(dot)
    out = xp.where(dot, g.dtype.type(0), g)
    # One row per (dot of a grid with a template, cell of the largest template box).
    with_template = has[gi]
    gi, r, c = gi[with_template], r[with_template], c[with_template]
    H, W = g.shape[1], g.shape[2]
    box_h, box_w = (int(xp.where(has, side, 0).max()) if n else 0 for side in (th, tw))
    dy = xp.arange(box_h)[None, :, None]
    dx = xp.arange(box_w)[None, None, :]
    k = gi[:, None, None]
    src_r, src_c = top[k] + dy, left[k] + dx
    dst_r, dst_c = r[:, None, None] - th[k] // 2 + dy, c[:, None, None] - tw[k] // 2 + dx
    inside = (dy < th[k]) & (dx < tw[k]) & (dst_r >= 0) & (dst_c >= 0) & (dst_r < h[k]) & (dst_c < w[k])
    src_r, src_c = xp.minimum(src_r, H - 1), xp.minimum(src_c, W - 1)
    inside = inside & mask[k, src_r, src_c]
    kk, sr, sc, tr, tc = (xp.broadcast_to(a, inside.shape)[inside] for a in (k, src_r, src_c, dst_r, dst_c))
    out = paint_cells(xp, out, kk, tr, tc, g[kk, sr, sc])
    found = xp.bincount(gi, minlength=n) > 0
    return Padded(out, h, w, has & found)
