"""Grids made from a count: a row as long as the grid has non-zero cells."""
from __future__ import annotations

from solvers.batch import MAX_SIDE, colour_counts
from solvers.padded import Padded
from solvers.ragged import coords, per_grid
from solvers.registry import primitive


@primitive(layout="padded")
def count_row(xp, g, h, w):
    """A one-row grid of the most frequent non-zero colour (ties: the lower colour), one cell per
    non-zero cell of the grid. Grids with none, or more than 30, give no result."""
    counts = colour_counts(xp, g)
    counts[:, 0] = 0
    k = counts.sum(axis=1).astype(xp.int64)
    length = max(1, min(MAX_SIDE, int(k.max()) if g.shape[0] else 1))
    _, C = coords(xp, 1, length)
    row = xp.where(C < per_grid(k), per_grid(counts.argmax(axis=1).astype(g.dtype)), g.dtype.type(0))
    return Padded(row, xp.ones_like(k), xp.clip(k, 1, MAX_SIDE), (k >= 1) & (k <= MAX_SIDE))
