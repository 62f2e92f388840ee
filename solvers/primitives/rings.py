"""Concentric rings: a grid read as nested square frames, each of one colour."""
from __future__ import annotations

from solvers.ragged import coords, per_grid, real_mask, remap
from solvers.registry import primitive


@primitive((("reverse",), ("inward",)), layout="padded", keeps_shape=True)
def ring_colours(xp, g, h, w, order):
    """Recolour the rings of a grid made of nested frames (ring ``d``: the cells ``d`` steps from
    the nearest border, all of one colour; two rings or more): ``reverse`` gives ring ``d`` the
    colour of ring ``D - 1 - d`` (the outermost swaps with the innermost); ``inward`` the colour
    of the ring outside it (the outermost the innermost's); ``outward`` the colour of the ring
    inside it (the innermost the outermost's). Other grids give no result."""
    n, H, W = g.shape
    R, C = coords(xp, H, W)
    hh, ww = per_grid(h), per_grid(w)
    depth = xp.minimum(xp.minimum(R, C), xp.minimum(hh - 1 - R, ww - 1 - C))
    rings = per_grid((xp.minimum(h, w) + 1) // 2)
    real = real_mask(xp, g, h, w)
    own = remap(xp, g, h, w, H, W, depth, depth).arr        # each cell's ring colour
    ok = ((own == g) | ~real).all(axis=(1, 2)) & (rings[:, 0, 0] >= 2)
    src = {"reverse": rings - 1 - depth, "outward": (depth + 1) % rings,
           "inward": (depth - 1) % rings}[order]
    return remap(xp, g, h, w, H, W, src, src, valid=ok)
