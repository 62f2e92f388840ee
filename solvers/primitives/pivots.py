"""Pivots: a pattern completed by mirror symmetry about the centre of one of its colours."""
from __future__ import annotations

from solvers.batch import bounding_boxes, colour_counts
from solvers.ragged import Padded, coords, per_grid
from solvers.registry import primitive


@primitive(layout="padded")
def mirror_about_rarest(xp, g, h, w):
    """Complete a four-fold mirror pattern about the centre of the bounding box of the cells of
    the least frequent non-zero colour (ties: the lower colour): background cells take the colour
    of their left-right, then top-bottom, then point mirror image about it (images off the grid
    count as background). Grids with fewer than two colours give no result."""
    n, H, W = g.shape
    counts = colour_counts(xp, g)[:, 1:]
    rarest = xp.where(counts > 0, counts, H * W + 1).argmin(axis=1) + 1
    top, left, hh, ww, _ = bounding_boxes(xp, g == per_grid(rarest).astype(g.dtype))
    has = (counts > 0).sum(axis=1) >= 2
    # Doubled centre coordinates: the mirror image of row r is (2 * top + hh - 1) - r.
    rows2, cols2 = per_grid(2 * top + hh - 1), per_grid(2 * left + ww - 1)
    R, C = coords(xp, H, W)
    inside = (R < per_grid(h)) & (C < per_grid(w))
    base = xp.arange(n)[:, None, None] * (H * W)
    out = g
    for flip_rows, flip_cols in ((False, True), (True, False), (True, True)):
        src_r = rows2 - R if flip_rows else R + 0 * rows2
        src_c = cols2 - C if flip_cols else C + 0 * cols2
        ok = inside & (src_r >= 0) & (src_c >= 0) & (src_r < per_grid(h)) & (src_c < per_grid(w))
        flat = base + xp.clip(src_r, 0, H - 1) * W + xp.clip(src_c, 0, W - 1)
        image = xp.where(ok, xp.take(out.reshape(-1), flat), g.dtype.type(0))
        out = xp.where(out == 0, image, out)
    return Padded(out, h, w, has)
