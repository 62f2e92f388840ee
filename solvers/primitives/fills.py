"""Whole parts of a divided grid painted at once, and rows as long as a count."""
from __future__ import annotations

from solvers.batch import MAX_SIDE, colour_counts
from solvers.padded import Padded
from solvers.primitives.objects import label_objects
from solvers.primitives.split import shared_lattice
from solvers.ragged import coords, no_result, per_grid, scatter_results
from solvers.registry import primitive


@primitive((("major",), ("fullest",)), layout="padded")
def fill_cells(xp, g, h, w, mode):
    """Paint every cell of the separator lattice (see :func:`pick_part`: full rows and columns of
    one non-zero colour cutting the grid into two or more cells of one size) whole.

    A cell's colour is its most frequent non-zero colour (ties: the lower colour; 0 where it has
    none). ``major``: every cell takes its colour; ``fullest``: the cells with the most non-zero
    cells take theirs, the others become 0. Separator lines stay. Grids without a lattice give no
    result.
    """
    whole = shared_lattice(xp, g, h, w)
    ok = xp.flatnonzero(whole.ok)
    if ok.shape[0] == 0:
        return no_result(xp, g)
    sub, rp, cp = g[ok], whole.row_part[ok], whole.col_part[ok]
    m = sub.shape[0]
    Cm = int(whole.n_cols[ok].max())
    P = int(whole.n_rows[ok].max()) * Cm
    inside = (rp[:, :, None] >= 0) & (cp[:, None, :] >= 0)
    part = xp.arange(m)[:, None, None] * P + xp.maximum(rp, 0)[:, :, None] * Cm + xp.maximum(cp, 0)[:, None, :]
    hist = xp.bincount((part * 10 + sub.astype(xp.int64))[inside], minlength=m * P * 10).reshape(m, P, 10)
    hist[:, :, 0] = 0
    cells = hist.sum(axis=2)
    colour = xp.where(cells > 0, hist.argmax(axis=2), 0).astype(g.dtype)
    if mode == "fullest":
        colour = xp.where(cells == cells.max(axis=1, keepdims=True), colour, g.dtype.type(0))
    out = xp.where(inside, colour.reshape(-1)[part], sub)
    return scatter_results(xp, g, h, w, ok, Padded(out, h[ok], w[ok], xp.ones(m, dtype=bool)))


@primitive((("cells",), ("objects",)), layout="padded")
def count_row(xp, g, h, w, what):
    """A one-row grid of the most frequent non-zero colour (ties: the lower colour), one cell per
    non-zero cell (``cells``) or per object (``objects``: 8-connected, of one colour) of the grid.
    Grids with none, or more than 30, give no result."""
    n = g.shape[0]
    counts = colour_counts(xp, g)
    counts[:, 0] = 0
    if what == "cells":
        k = counts.sum(axis=1)
    else:
        _, owner, _, _ = label_objects(xp, g, 8, True)
        k = xp.bincount(owner[1:], minlength=n)[:n]
    k = k.astype(xp.int64)
    length = max(1, min(MAX_SIDE, int(k.max()) if n else 1))
    _, C = coords(xp, 1, length)
    row = xp.where(C < per_grid(k), per_grid(counts.argmax(axis=1).astype(g.dtype)), g.dtype.type(0))
    return Padded(row, xp.ones_like(k), xp.clip(k, 1, MAX_SIDE), (k >= 1) & (k <= MAX_SIDE))
