"""Grids divided into cells by separator lines (full rows and columns of one colour)."""
from __future__ import annotations

from solvers.batch import Parts
from solvers.registry import primitive


def separator_colour(xp, g):
    """The colour with the most full rows plus full columns in each grid (ties: the lower colour).

    Returns ``(colour (n,) uint8, has (n,) bool)``; ``has`` is false where no row or column is of a
    single colour.
    """
    n, h, w = g.shape
    full_row = (g == g[:, :, :1]).all(axis=2)          # (n, h): the row is one colour
    full_col = (g == g[:, :1, :]).all(axis=1)          # (n, w)
    grid = xp.arange(n, dtype=xp.int64)[:, None] * 10
    keys = xp.concatenate([(grid + g[:, :, 0].astype(xp.int64))[full_row],
                           (grid + g[:, 0, :].astype(xp.int64))[full_col]])
    lines = xp.bincount(keys, minlength=n * 10).reshape(n, 10)
    return lines.argmax(axis=1).astype(g.dtype), lines.max(axis=1) > 0


def _runs(xp, sep):
    """Index of the run of non-separator lines each line belongs to (-1 on separators), and the count."""
    start = ~sep
    start[:, 1:] &= sep[:, :-1]
    run = xp.cumsum(start, axis=1) - 1
    return xp.where(sep, -1, run), start.sum(axis=1)


def split_cells(xp, g):
    """Cells of each grid: per row and column the index of its cell row / column (-1 on separator
    lines), the numbers of cell rows and columns, and the separator colour."""
    s, has = separator_colour(xp, g)
    rid, R = _runs(xp, (g == s[:, None, None]).all(axis=2))
    cid, C = _runs(xp, (g == s[:, None, None]).all(axis=1))
    return rid, cid, xp.where(has, R, 0), xp.where(has, C, 0), s


@primitive((("major",), ("count",)))
def cell_summary(xp, g, mode):
    """Shrink a grid divided by separator lines to one cell per part.

    The separators are the full rows and columns of the colour that has the most of them; each
    part (a block between separators) becomes one cell: with ``major`` its most frequent colour
    other than the separator colour (ties: the lower colour); with ``count`` the number of its
    cells that are neither 0 nor of the separator colour (capped at 9). Grids with fewer than two
    parts give no result.
    """
    rid, cid, R, C, s = split_cells(xp, g)
    ok = xp.nonzero(R * C >= 2)[0]
    if ok.shape[0] == 0:
        return Parts([])
    g, rid, cid, R, C, s = g[ok], rid[ok], cid[ok], R[ok], C[ok], s[ok]
    m, h, w = g.shape
    Rm, Cm = int(R.max()), int(C.max())
    cell = rid[:, :, None] * Cm + cid[:, None, :]
    inside = (rid[:, :, None] >= 0) & (cid[:, None, :] >= 0)
    key = ((xp.arange(m)[:, None, None] * (Rm * Cm) + cell) * 10 + g.astype(xp.int64))[inside]
    hist = xp.bincount(key, minlength=m * Rm * Cm * 10).reshape(m, Rm * Cm, 10)
    hist[xp.arange(m), :, s.astype(xp.int64)] = -1
    if mode == "major":
        summary = hist.argmax(axis=2)
    else:
        hist[:, :, 0] = 0
        summary = xp.minimum(xp.maximum(hist, 0).sum(axis=2), 9)
    summary = summary.astype(g.dtype).reshape(m, Rm, Cm)
    shape = R * 64 + C
    parts = []
    for k in sorted(int(v) for v in xp.unique(shape).tolist()):
        hh, ww = divmod(k, 64)
        sel = xp.nonzero(shape == k)[0]
        parts.append((ok[sel], summary[sel, :hh, :ww]))
    return Parts(parts)
