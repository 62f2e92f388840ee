"""Stamps: a many-coloured template object copied onto markers or onto one-colour look-alikes."""
from __future__ import annotations

from solvers.batch import bounding_boxes
from solvers.primitives.objects import label_objects, pick_per_grid
from solvers.ragged import Padded, coords, per_grid
from solvers.registry import primitive
from solvers.xp import repeat_index


def _first_per_label(xp, labels, values, total):
    """Per label, the smallest of ``values`` (0..1023) over its cells (0 for labels without cells)."""
    cells = labels > 0
    key = xp.sort(labels[cells].astype(xp.int64) * 1024 + values[cells])
    lowest = xp.zeros(total + 1, dtype=xp.int64)
    lead = xp.ones(key.shape[0], dtype=bool)
    lead[1:] = key[1:] // 1024 != key[:-1] // 1024
    lowest[key[lead] // 1024] = key[lead] % 1024
    return lowest


def _colour_counts(xp, g, labels, total):
    """Per label, how many colours its cells have."""
    cells = labels > 0
    pairs = xp.unique(labels[cells].astype(xp.int64) * 16 + g[cells])
    return xp.bincount(pairs // 16, minlength=total + 1)


def _paint_each_colour(xp, out, gi, r, c, colour):
    """``out[gi, r, c] = colour``, colour by colour: where two writes meet, the higher colour wins
    on every backend (the order of a scatter's duplicates is not promised on a GPU)."""
    for k in range(10):
        sel = colour == k
        out[gi[sel], r[sel], c[sel]] = out.dtype.type(k)


@primitive((("markers",), ("shapes", True), ("shapes", False)), layout="padded")
def stamp_template(xp, g, h, w, target, keep=True):
    """Copy the template, the object (4-connected, any colours) with the most colours (two or
    more; ties: the larger, then the first), onto other objects. ``markers``: centred (its box's
    middle cell; of two, the lower or right one) on every single cell, which it replaces (stamps meeting: the
    higher colour wins). ``shapes``: onto every one-colour object whose bounding box has the
    template's sides, each of its cells taking the template cell at the same place in the box;
    without ``keep`` the template itself is erased. Grids with no template or no such object give
    no result."""
    n, H, W = g.shape
    labels, owner, sizes, first = label_objects(xp, g, 4, False)
    total = owner.shape[0] - 1
    colours = _colour_counts(xp, g, labels, total)
    chosen = pick_per_grid(xp, owner, -(colours * 64 + xp.minimum(sizes, 63)), first, g.shape)
    chosen = xp.where(colours[chosen] >= 2, chosen, 0)
    mask = (labels == per_grid(chosen)) & (per_grid(chosen) > 0)
    top, left, th, tw, has = bounding_boxes(xp, mask)
    template = xp.where(mask, g, g.dtype.type(0))
    others = (labels > 0) & ~mask
    if target == "markers":
        marker = others & (sizes[labels] == 1)
        out = xp.where(marker, g.dtype.type(0), g)
        mg, mr, mc = xp.nonzero(marker)
        tg, tr, tc = xp.nonzero(mask)
        # Every (marker, template cell) pair of a grid: markers repeated once per template cell.
        per = xp.bincount(tg, minlength=n)
        start = xp.cumsum(per) - per
        pair = repeat_index(xp, per[mg])
        step = xp.arange(pair.shape[0]) - (xp.cumsum(per[mg]) - per[mg])[pair]
        cell = start[mg[pair]] + step
        gi = mg[pair]
        r = mr[pair] + tr[cell] - top[gi] - th[gi] // 2
        c = mc[pair] + tc[cell] - left[gi] - tw[gi] // 2
        inside = (r >= 0) & (c >= 0) & (r < h[gi]) & (c < w[gi])
        _paint_each_colour(xp, out, gi[inside], r[inside], c[inside], g[tg[cell], tr[cell], tc[cell]][inside])
        found = xp.bincount(mg, minlength=n) > 0
        return Padded(out, h, w, has & found)
    R, C = coords(xp, H, W)
    rows = xp.broadcast_to(R, g.shape).astype(xp.int64)
    cols = xp.broadcast_to(C, g.shape).astype(xp.int64)
    otop, oleft = _first_per_label(xp, labels, rows, total), _first_per_label(xp, labels, cols, total)
    obottom = -_first_per_label(xp, labels, 1023 - rows, total) + 1023
    oright = -_first_per_label(xp, labels, 1023 - cols, total) + 1023
    grid = xp.arange(n)[:, None, None]
    fits = others & (colours[labels] == 1) & (obottom[labels] - otop[labels] + 1 == per_grid(th)) \
        & (oright[labels] - oleft[labels] + 1 == per_grid(tw))
    src_r = xp.clip(per_grid(top) + rows - otop[labels], 0, H - 1)
    src_c = xp.clip(per_grid(left) + cols - oleft[labels], 0, W - 1)
    out = xp.where(fits, template[xp.broadcast_to(grid, g.shape), src_r, src_c], g)
    if not keep:
        out = xp.where(mask, g.dtype.type(0), out)
    return Padded(out, h, w, has & fits.any(axis=(1, 2)))
