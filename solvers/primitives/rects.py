"""Rectangles of one colour: the largest solid block, as found among noise.

The rectangles are found by growing their height one row at a time over the whole stack (each
step a few elementwise calls), so a batch costs about ``h`` passes over its cells, not one loop
per grid.
"""
from __future__ import annotations

from solvers import fused, kernels
from solvers.ragged import coords, per_grid
from solvers.registry import primitive
from solvers.xp import cummax


def _largest_block(xp, g):
    """The largest rectangle (by cells, both sides 2 or more) of one non-zero colour of each grid.
    Ties: the one whose top-left corner comes first in reading order, then the taller. Returns its
    cells (bool, g's shape); none in a grid that has no such rectangle."""
    n, h, w = g.shape
    best = xp.full(n, -1, dtype=xp.int32)
    top, left, height, width = (xp.zeros(n, dtype=xp.int32) for _ in range(4))
    col = xp.arange(w, dtype=xp.int32)[None, None, :]
    # Rows of the grids still growing (those whose columns hold a segment of the current height).
    alive = xp.arange(n)
    grids, same_left = g, g[:, :, 1:] == g[:, :, :-1]
    # seg[:, i, j]: rows i..i+a-1 of column j are all of one colour of the wanted kind.
    seg = g != 0
    for a in range(2, h + 1):
        rows = h - a + 1
        seg = seg[:, :-1] & (grids[:, a - 1:] == grids[:, :rows])
        growing = seg.any(axis=(1, 2))
        count = int(growing.sum())
        if count == 0:
            break
        if count < 0.75 * int(alive.shape[0]):
            keep = xp.nonzero(growing)[0]
            alive, grids, same_left, seg = alive[keep], grids[keep], same_left[keep], seg[keep]
        m = int(alive.shape[0])
        # A run of columns whose segments join into one a x len block of one colour.
        joined = xp.zeros(seg.shape, dtype=bool)
        joined[:, :, 1:] = seg[:, :, 1:] & seg[:, :, :-1] & same_left[:, :rows]
        end = seg.copy()
        end[:, :, :-1] &= ~joined[:, :, 1:]
        start = cummax(xp, xp.where(seg & ~joined, col, xp.int32(-1)), 2)
        length = col - start + 1
        ok = end & (length >= 2)
        pos = xp.arange(rows, dtype=xp.int32)[None, :, None] * w + start
        score = xp.where(ok, ((a * length) * 1024 + 1023 - pos) * 32 + a, xp.int32(-1)).reshape(m, rows * w)
        k = score.argmax(axis=1)
        s = score[xp.arange(m), k]
        better = s > best[alive]
        at, k = alive[better], k[better]
        run = length.reshape(m, rows * w)[better, k]
        best[at] = s[better]
        top[at] = (k // w).astype(xp.int32)
        left[at] = (k % w - run + 1).astype(xp.int32)
        height[at] = a
        width[at] = run
    R, C = coords(xp, h, w)
    return ((best >= 0)[:, None, None] & (R >= per_grid(top)) & (R < per_grid(top + height))
            & (C >= per_grid(left)) & (C < per_grid(left + width)))


@primitive(pad="inplace")
def keep_largest_block(xp, g):
    """Keep only the largest rectangle of one non-zero colour (by cell count, both sides 2 or
    more; ties: the one whose top-left corner comes first in reading order, then the taller);
    everything else becomes 0. Grids with none become all 0."""
    if kernels.enabled(xp) and g.dtype == xp.uint8:
        return fused.keep_largest_block(xp, g)
    return xp.where(_largest_block(xp, g), g, g.dtype.type(0))
