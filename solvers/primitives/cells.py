"""Grids divided into cells by separator lines (full rows and columns of one colour)."""
from __future__ import annotations

from solvers import fused, kernels
from solvers.padded import Padded
from solvers.ragged import coords, no_result, per_grid, real_mask, scatter_results
from solvers.registry import primitive


def separator_colour(xp, g, real):
    """The colour with the most full rows plus full columns in each grid (ties: the lower colour).

    ``g`` is a zero-padded stack and ``real`` its :func:`solvers.ragged.real_mask`. Returns
    ``(colour (n,) uint8, has (n,) bool)``; ``has`` is false where no row or column is of a single
    colour.
    """
    n = g.shape[0]
    rows, cols = _lines_of(g, real, g[:, :, :1], 2), _lines_of(g, real, g[:, :1, :], 1)
    grid = xp.arange(n, dtype=xp.int64)[:, None] * 10
    keys = xp.concatenate([(grid + g[:, :, 0].astype(xp.int64))[rows],
                           (grid + g[:, 0, :].astype(xp.int64))[cols]])
    lines = xp.bincount(keys, minlength=n * 10).reshape(n, 10)
    return lines.argmax(axis=1).astype(g.dtype), lines.max(axis=1) > 0


def _lines_of(g, real, colour, across: int):
    """Real rows (``across=2``) or columns (``across=1``) whose cells all equal ``colour``
    (broadcast against ``g``): (n, H) or (n, W) bool. Padding lines never count; padding cells
    are ignored."""
    full = ((g == colour) | ~real).all(axis=across)
    return full & (real[:, :, 0] if across == 2 else real[:, 0, :])


def _runs(xp, sep):
    """Index of the run of non-separator lines each line belongs to (-1 on separators), and the count."""
    start = ~sep
    start[:, 1:] &= sep[:, :-1]
    run = xp.cumsum(start, axis=1) - 1
    return xp.where(sep, -1, run), start.sum(axis=1)


def split_cells(xp, g, h, w):
    """Cells of each grid: per row and column the index of its cell row / column (-1 on separator
    lines and padding), the numbers of cell rows and columns, and the separator colour."""
    real = real_mask(xp, g, h, w)
    s, has = separator_colour(xp, g, real)
    colour = s[:, None, None]
    # Padding lines count as separators, so they start no run.
    rid, n_rows = _runs(xp, _lines_of(g, real, colour, 2) | ~real[:, :, 0])
    cid, n_cols = _runs(xp, _lines_of(g, real, colour, 1) | ~real[:, 0, :])
    return rid, cid, xp.where(has, n_rows, 0), xp.where(has, n_cols, 0), s


@primitive((("major",), ("count",)), layout="padded")
def cell_summary(xp, g, h, w, mode):
    """Shrink a grid divided by separator lines to one cell per part.

    The separators are the full rows and columns of the colour that has the most of them; each
    part (a block between separators) becomes one cell: with ``major`` its most frequent colour
    other than the separator colour (ties: the lower colour); with ``count`` the number of its
    cells that are neither 0 nor of the separator colour (capped at 9). Grids with fewer than two
    parts give no result.
    """
    if kernels.enabled(xp):
        return fused.cell_summary(xp, g, h, w, mode == "count")
    rid, cid, R, C, s = split_cells(xp, g, h, w)
    ok = xp.nonzero(R * C >= 2)[0]
    if ok.shape[0] == 0:
        return no_result(xp, g)
    sub, rid, cid, s, R_ok, C_ok = g[ok], rid[ok], cid[ok], s[ok], R[ok], C[ok]
    m = sub.shape[0]
    Rm, Cm = int(R_ok.max()), int(C_ok.max())
    cell = rid[:, :, None] * Cm + cid[:, None, :]
    inside = (rid[:, :, None] >= 0) & (cid[:, None, :] >= 0)
    key = ((xp.arange(m)[:, None, None] * (Rm * Cm) + cell) * 10 + sub.astype(xp.int64))[inside]
    hist = xp.bincount(key, minlength=m * Rm * Cm * 10).reshape(m, Rm * Cm, 10)
    hist[xp.arange(m), :, s.astype(xp.int64)] = -1
    if mode == "major":
        summary = hist.argmax(axis=2)
    else:
        hist[:, :, 0] = 0
        summary = xp.minimum(xp.maximum(hist, 0).sum(axis=2), 9)
    summary = summary.astype(g.dtype).reshape(m, Rm, Cm)
    rows, cols = coords(xp, Rm, Cm)
    summary = xp.where((rows < per_grid(R_ok)) & (cols < per_grid(C_ok)), summary, g.dtype.type(0))
    return scatter_results(xp, g, R, C, ok, Padded(summary, R_ok, C_ok, xp.ones(m, dtype=bool)))
