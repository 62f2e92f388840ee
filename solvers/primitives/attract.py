"""Attraction: cells and objects moved straight along their rows or columns until they touch
what pulls them (the larger object of a dot's colour, the cells of one colour)."""
from __future__ import annotations

from solvers import fused, kernels
from solvers.primitives.objects import label_objects
from solvers.ragged import Padded, coords
from solvers.registry import primitive
from solvers.xp import cummax, scatter_min

FAR = 63  # a distance no grid reaches: nothing in that direction

# The four directions as (row step, column step), in the order that breaks ties between them.
DIRECTIONS = ((1, 0), (-1, 0), (0, -1), (0, 1))


def paint_cells(xp, out, gi, r, c, colours):
    """``out`` with ``colours`` written at ``(gi, r, c)``; where several land on one cell, the
    highest colour (the same on every device, whatever order a scatter writes in)."""
    n, h, w = out.shape
    flat = (gi * h + r) * w + c
    order = xp.argsort(flat * 16 + colours.astype(xp.int64))
    flat, colours = flat[order], colours[order]
    last = xp.ones(flat.shape[0], dtype=bool)
    last[:-1] = flat[1:] != flat[:-1]
    painted = out.reshape(-1).copy()
    painted[flat[last]] = colours[last].astype(out.dtype)
    return painted.reshape(n, h, w)


def _distances(xp, pull):
    """For every cell, the distance to the nearest ``pull`` cell strictly beyond it in each of the
    :data:`DIRECTIONS` (``FAR`` where there is none): a (4, n, h, w) int16 array."""
    n, h, w = pull.shape
    R, C = coords(xp, h, w)
    none = xp.int16(FAR * 4)
    out = []
    for dy, dx in DIRECTIONS:
        axis = 1 if dy else 2
        pos = (R if dy else C).astype(xp.int16)
        ahead = dy + dx > 0
        # The nearest pull position at or beyond each cell, then the one strictly beyond it.
        key = xp.where(pull, -pos if ahead else pos, -none)
        if ahead:
            key = xp.flip(key, axis)
        near = cummax(xp, key, axis)
        if ahead:
            near = xp.flip(near, axis)
        near = xp.abs(near)
        shifted = xp.full_like(near, none)
        if axis == 1:
            if ahead:
                shifted[:, :-1] = near[:, 1:]
            else:
                shifted[:, 1:] = near[:, :-1]
        elif ahead:
            shifted[:, :, :-1] = near[:, :, 1:]
        else:
            shifted[:, :, 1:] = near[:, :, :-1]
        out.append(xp.where(shifted < none, xp.minimum(xp.abs(shifted - pos), xp.int16(FAR)), xp.int16(FAR)))
    return xp.stack(out)


def _label_minima(xp, lab, keys, total):
    """Per row of ``keys`` (k, cells) and label of ``lab`` (the cells' labels, 1..total): the
    smallest key of the label's cells, a (k, total + 1) int32 array (``FAR`` for labels without
    cells); one scatter for all rows."""
    k = keys.shape[0]
    out = xp.full(k * (total + 1), FAR, dtype=xp.int32)
    index = (xp.arange(k, dtype=xp.int64)[:, None] * (total + 1) + lab[None, :]).ravel()
    scatter_min(xp, out, index, keys.astype(xp.int32).ravel())
    return out.reshape(k, total + 1)


@primitive(pad="inplace")
def pull_dots(xp, g):
    """Move every single cell (a one-cell object, 8-connected, one colour) along its row or column
    next to the nearest cell of its colour that belongs to a larger object, whatever lies between
    (ties: down, up, left, right); single cells with no such cell in their row or column are
    erased."""
    labels, _, sizes, _ = label_objects(xp, g, 8, True)
    dot = (labels > 0) & (sizes[labels] == 1)
    gi, r, c = xp.nonzero(dot)
    colour = g[gi, r, c]
    anchor = (g > 0) & ~dot
    n, h, w = g.shape
    same_row = anchor[gi, r, :] & (g[gi, r, :] == colour[:, None])
    same_col = anchor[gi, :, c] & (g[gi, :, c] == colour[:, None])
    dr = xp.arange(h)[None, :] - r[:, None]
    dc = xp.arange(w)[None, :] - c[:, None]
    dist = xp.stack([xp.where(same_col & (dr > 0), dr, FAR).min(axis=1),
                     xp.where(same_col & (dr < 0), -dr, FAR).min(axis=1),
                     xp.where(same_row & (dc < 0), -dc, FAR).min(axis=1),
                     xp.where(same_row & (dc > 0), dc, FAR).min(axis=1)])
    best = dist.argmin(axis=0)
    step = dist.min(axis=0) - 1
    moved = step < FAR - 1
    ys, xs = xp.asarray([d[0] for d in DIRECTIONS]), xp.asarray([d[1] for d in DIRECTIONS])
    gi, colour = gi[moved], colour[moved]
    r, c = r[moved] + ys[best[moved]] * step[moved], c[moved] + xs[best[moved]] * step[moved]
    return paint_cells(xp, xp.where(dot, g.dtype.type(0), g), gi, r, c, colour)


@primitive(tuple((c,) for c in range(1, 10)), layout="padded", keeps_shape=True)
def slide_to_colour(xp, g, h, w, c):
    """Move every object (8-connected, of any colours but ``c``) straight along its rows or columns
    until it touches a cell of colour ``c``: in the direction where the nearest such cell ahead of
    one of its cells is closest (ties: down, up, left, right), whatever lies between, stopping at
    the grid's edge if that comes first. Objects with no cell of ``c`` in any of their rows or
    columns stay."""
    if kernels.enabled(xp) and g.dtype == xp.uint8:
        return Padded(fused.slide_to_colour(xp, g, h, w, c), h, w, xp.ones(g.shape[0], dtype=bool))
    # Only the grids that hold ``c`` change: the others are copied, and the work runs on these.
    holding = xp.nonzero((g == c).any(axis=(1, 2)))[0]
    out = g.copy()
    if int(holding.shape[0]):
        out[holding] = _slide(xp, g[holding], h[holding], w[holding], c)
    return Padded(out, h, w, xp.ones(g.shape[0], dtype=bool))


def _slide(xp, g, h, w, c):
    """:func:`slide_to_colour` on grids that each hold a cell of ``c``."""
    pull = g == c
    movers = xp.where(pull, g.dtype.type(0), g)
    labels, owner, _, _ = label_objects(xp, movers, 8, False)
    total = owner.shape[0] - 1
    dist = _distances(xp, pull)
    gi, r, cc = xp.nonzero(labels)
    lab = labels[gi, r, cc].astype(xp.int64)
    nearest = _label_minima(xp, lab, dist[:, gi, r, cc], total)  # (4, labels)
    room = _label_minima(xp, lab, xp.minimum(xp.stack((h[gi] - 1 - r, r, cc, w[gi] - 1 - cc)), FAR), total)
    best = nearest.argmin(axis=0)
    step = nearest.min(axis=0) - 1
    step = xp.where(step < FAR - 1, xp.minimum(step, xp.take_along_axis(room, best[None], 0)[0]), 0)
    ys, xs = xp.asarray([d[0] for d in DIRECTIONS]), xp.asarray([d[1] for d in DIRECTIONS])
    r, cc = r + ys[best[lab]] * step[lab], cc + xs[best[lab]] * step[lab]
    return paint_cells(xp, xp.where(movers > 0, g.dtype.type(0), g), gi, r, cc, movers[labels > 0])
