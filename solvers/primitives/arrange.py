"""Arrangements of copies: rotated quadrants, scaling by a count, tiles found in the grid."""
from __future__ import annotations

from solvers.batch import MAX_SIDE, Parts, colour_counts
from solvers.registry import primitive


@primitive()
def rotations_4(xp, g):
    """Four quarter-turned copies of a square grid in a 2 x 2 block: the grid top left, turned
    clockwise top right, counter-clockwise bottom left, a half turn bottom right."""
    n, h, w = g.shape
    if h != w or 2 * h > MAX_SIDE:
        return Parts([])
    top = xp.concatenate([g, xp.rot90(g, 3, axes=(1, 2))], axis=2)
    bottom = xp.concatenate([xp.rot90(g, 1, axes=(1, 2)), g[:, ::-1, ::-1]], axis=2)
    return xp.concatenate([top, bottom], axis=1)


@primitive()
def fractal_by_major(xp, g):
    """Self-similar scaling keyed by colour: each cell of the grid's most frequent non-zero colour
    (ties: the lower colour) becomes a copy of the grid, every other cell a blank block. Grids
    whose square would pass 30 cells a side give no result."""
    n, h, w = g.shape
    if h * h > MAX_SIDE or w * w > MAX_SIDE:
        return Parts([])
    counts = colour_counts(xp, g)
    counts[:, 0] = -1
    major = counts.argmax(axis=1).astype(g.dtype)[:, None, None]
    big = (g == major)[:, :, None, :, None] * g[:, None, :, None, :]
    return big.reshape(n, h * h, w * w).astype(g.dtype)


@primitive()
def upscale_by_colours(xp, g):
    """Scale up by the number of non-zero colours ``k``: every cell becomes a k x k block.

    Grids with no colour, or that would grow past 30 cells, give no result.
    """
    n, h, w = g.shape
    k = (colour_counts(xp, g)[:, 1:] > 0).sum(axis=1)
    parts = []
    for kk in sorted(int(v) for v in xp.unique(k).tolist()):
        if kk < 1 or h * kk > MAX_SIDE or w * kk > MAX_SIDE:
            continue
        idx = xp.nonzero(k == kk)[0]
        parts.append((idx, xp.repeat(xp.repeat(g[idx], kk, axis=1), kk, axis=2)))
    return Parts(parts)


@primitive()
def crop_period(xp, g):
    """The repeating tile of an exactly periodic grid: its top-left ``py x px`` block, with ``py``
    and ``px`` the smallest periods down and across. Grids that do not repeat give no result."""
    n, h, w = g.shape
    py = xp.full(n, h, dtype=xp.int64)
    for p in range(h - 1, 0, -1):
        same = (g[:, p:, :] == g[:, :h - p, :]).all(axis=(1, 2))
        py = xp.where(same, p, py)
    px = xp.full(n, w, dtype=xp.int64)
    for p in range(w - 1, 0, -1):
        same = (g[:, :, p:] == g[:, :, :w - p]).all(axis=(1, 2))
        px = xp.where(same, p, px)
    shape = py * 64 + px
    parts = []
    for key in sorted(int(v) for v in xp.unique(shape).tolist()):
        hh, ww = divmod(key, 64)
        if hh == h and ww == w:
            continue
        idx = xp.nonzero(shape == key)[0]
        parts.append((idx, g[idx, :hh, :ww]))
    return Parts(parts)


@primitive(((0,), (1,)))
def colour_column(xp, g, skip):
    """A one-column grid of the grid's non-zero colours, most frequent first (ties: the lower
    colour), leaving out the ``skip`` most frequent. Grids with nothing left give no result."""
    n = g.shape[0]
    counts = colour_counts(xp, g)[:, 1:]
    present = counts > 0
    k = present.sum(axis=1) - skip
    # Sort key: absent colours last, then by count descending, then by colour.
    key = xp.where(present, (1000 - counts) * 16 + xp.arange(1, 10)[None, :], 1 << 20)
    order = xp.argsort(key, axis=1) + 1
    parts = []
    for kk in sorted(int(v) for v in xp.unique(k).tolist()):
        if kk < 1:
            continue
        idx = xp.nonzero(k == kk)[0]
        parts.append((idx, order[idx, skip:skip + kk].astype(g.dtype)[:, :, None]))
    return Parts(parts)
