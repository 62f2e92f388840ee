"""Arrangements of copies: rotated quadrants, scaling by a count, tiles found in the grid."""
from __future__ import annotations

from solvers import fused, kernels
from solvers.batch import MAX_SIDE, colour_counts, shared_colour_counts
from solvers.padded import Padded
from solvers.ragged import coords, map_coords, per_grid
from solvers.registry import primitive


@primitive(layout="padded", max_sides=lambda: (MAX_SIDE // 2, MAX_SIDE // 2))
def rotations_4(xp, g, h, w):
    """Four quarter-turned copies of a square grid in a 2 x 2 block: the grid top left, turned
    clockwise top right, counter-clockwise bottom left, a half turn bottom right."""
    n, H, W = g.shape
    valid = (h == w) & (2 * h <= MAX_SIDE)
    if kernels.enabled(xp):  # one kernel (the four turns as gathers and selections: 372 launches at depth 3)
        out = fused.rotations_4(xp, g, h, w, min(MAX_SIDE, 2 * H), min(MAX_SIDE, 2 * W))
        return Padded(out, 2 * h, 2 * w, kernels.remap_ok(xp, 2 * h, 2 * w, valid))
    s = per_grid(h)

    def source(R, C):
        right, below = C >= s, R >= s
        r, c = R - below * s, C - right * s
        # Top right: the clockwise turn g[s-1-c, r]; bottom left: the counter-clockwise turn
        # g[c, s-1-r]; bottom right: the half turn g[s-1-r, s-1-c].
        src_r = xp.where(right, xp.where(below, s - 1 - r, s - 1 - c), xp.where(below, c, r))
        src_c = xp.where(right, xp.where(below, s - 1 - c, r), xp.where(below, s - 1 - r, c))
        return src_r, src_c

    return map_coords(xp, g, 2 * h, 2 * w, 2 * H, 2 * W, source, valid=valid)


def _major_colour(xp, g):
    """Each grid's most frequent non-zero colour (ties: the lower colour; 1 when there is none)."""
    counts = colour_counts(xp, g)
    counts[:, 0] = -1
    return counts.argmax(axis=1).astype(g.dtype)


@primitive(layout="padded", max_sides=lambda: (5, 5))  # 6 x 6 would grow to 36 x 36
def fractal_by_major(xp, g, h, w):
    """Self-similar scaling keyed by colour: each cell of the grid's most frequent non-zero colour
    (ties: the lower colour) becomes a copy of the grid, every other cell a blank block. Grids
    whose square would pass 30 cells a side give no result."""
    n, H, W = g.shape
    hh, ww = per_grid(h), per_grid(w)
    outer = map_coords(xp, g, h * h, w * w, H * H, W * W, lambda R, C: (R // hh, C // ww))
    inner = map_coords(xp, g, h * h, w * w, H * H, W * W, lambda R, C: (R % hh, C % ww))
    major = per_grid(_major_colour(xp, g))
    outer.arr = xp.where(outer.arr == major, inner.arr, g.dtype.type(0))
    return outer


@primitive(layout="padded")
def upscale_by_colours(xp, g, h, w):
    """Scale up by the number of non-zero colours ``k``: every cell becomes a k x k block.

    Grids with no colour, or that would grow past 30 cells, give no result.
    """
    n, H, W = g.shape
    k = (colour_counts(xp, g)[:, 1:] > 0).sum(axis=1)
    kk = per_grid(xp.maximum(k, 1))
    return map_coords(xp, g, h * k, w * k, MAX_SIDE, MAX_SIDE, lambda R, C: (R // kk, C // kk),
                      valid=k >= 1)


@primitive(layout="padded")
def crop_period(xp, g, h, w):
    """The repeating tile of an exactly periodic grid: its top-left ``py x px`` block, with ``py``
    and ``px`` the smallest periods down and across. Grids that do not repeat give no result."""
    n, H, W = g.shape
    if kernels.enabled(xp):
        py, px = fused.smallest_periods(xp, g, h, w)
    else:
        R, C = coords(xp, H, W)
        py = _smallest_period(xp, g, h, R[:, :, 0])
        px = _smallest_period(xp, g.transpose(0, 2, 1), w, C[:, 0, :])
    return map_coords(xp, g, py, px, H, W, lambda R, C: (R, C), valid=(py < h) | (px < w))


def _smallest_period(xp, g, side, index):
    """Per grid, the smallest shift ``p < side`` down the rows under which the grid equals itself
    (rows past the end ignored), else ``side``; ``index`` (1, L) numbers the rows. Padding cells
    are 0 on both sides of every comparison of two real rows, so only rows from ``side - p`` on
    must be masked."""
    L = g.shape[1]
    period = side.copy()
    for p in range(L - 1, 0, -1):
        differ = (g[:, p:, :] != g[:, :L - p, :]).any(axis=2) & (index[:, :L - p] < (side - p)[:, None])
        period = xp.where(~differ.any(axis=1) & (p < side), p, period)
    return period


@primitive(((0,), (1,)), layout="padded")
def colour_column(xp, g, h, w, skip):
    """A one-column grid of the grid's non-zero colours, most frequent first (ties: the lower
    colour), leaving out the ``skip`` most frequent. Grids with nothing left give no result."""
    if kernels.enabled(xp):  # one kernel (the array calls below: three row sums, CUB's on a GPU)
        return fused.colour_column(xp, shared_colour_counts(xp, g), skip)
    counts = colour_counts(xp, g)[:, 1:]
    present = counts > 0
    k = present.sum(axis=1) - skip
    # Sort key: absent colours last, then by count descending, then by colour (all distinct). Each
    # colour's place is the number of keys below its own, and the colour at place r the one whose
    # place is r: a few array calls over (n, 9, 9), where CuPy's sort along rows costs dozens of
    # launches per call.
    colours = xp.arange(1, 10)
    key = xp.where(present, (1000 - counts) * 16, 1 << 20) + colours[None, :]
    place = (key[:, None, :] < key[:, :, None]).sum(axis=2)
    order = ((place[:, None, :] == xp.arange(9)[None, :, None]) * colours).sum(axis=2)[:, skip:].astype(g.dtype)
    rows = xp.arange(order.shape[1])[None, :]
    column = xp.where(rows < k[:, None], order, g.dtype.type(0))[:, :, None]
    return Padded(column, xp.maximum(k, 0), xp.ones_like(k), k >= 1)
