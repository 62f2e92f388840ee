"""Grids divided into cells by separator lines (full rows and columns of one colour)."""
from __future__ import annotations

from solvers.batch import Parts
from solvers.registry import primitive


def separator_colour(xp, g):
    """The colour with the most full rows plus full columns in each grid (ties: the lower colour).

    Returns ``(colour (n,) uint8, has (n,) bool)``; ``has`` is false where no row or column is of a
    single colour.
    """
    lines = xp.stack([(g == c).all(axis=2).sum(axis=1) + (g == c).all(axis=1).sum(axis=1)
                      for c in range(10)], axis=1)
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


@primitive()
def cell_summary(xp, g):
    """Shrink a grid divided by separator lines to one cell per part: its most frequent colour.

    The separators are the full rows and columns of the colour that has the most of them; each
    part (a block between separators) becomes one cell holding its most frequent colour other than
    the separator colour (ties: the lower colour). Grids with fewer than two parts give no result.
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
    summary = hist.argmax(axis=2).astype(g.dtype).reshape(m, Rm, Cm)
    shape = R * 64 + C
    parts = []
    for k in sorted(int(v) for v in xp.unique(shape).tolist()):
        hh, ww = divmod(k, 64)
        sel = xp.nonzero(shape == k)[0]
        parts.append((ok[sel], summary[sel, :hh, :ww]))
    return Parts(parts)
