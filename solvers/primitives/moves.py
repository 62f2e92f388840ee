"""Moves: shifting by one cell, diagonal rays, half crops."""
from __future__ import annotations

import numpy as np

from solvers import fused, kernels
from solvers.primitives.recolour import shifted
from solvers.ragged import coords, per_grid, real_mask, remap, same_shape
from solvers.registry import primitive

STEPS = tuple((dy, dx) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if (dy, dx) != (0, 0))


@primitive(STEPS, pad="inplace")
def shift(xp, g, dy, dx):
    """Move every cell one step down ``dy`` and across ``dx`` rows/columns; cells moved off the
    grid are lost and the vacated cells become 0."""
    return xp.ascontiguousarray(shifted(xp, g, -dy, -dx))


def _ray_down_right(xp, g):
    """Rays towards the bottom right: each background cell takes the colour of the cell up left
    of it, as already rayed, one row at a time over the whole stack (at most 30 steps)."""
    out = g.copy()
    for r in range(1, g.shape[1]):
        out[:, r, 1:] = xp.where(g[:, r, 1:] == 0, out[:, r - 1, :-1], g[:, r, 1:])
    return out


# Each diagonal as a flip of the stack (rows, columns) that turns it into "down right".
_DIAGONALS = {"down_right": (False, False), "down_left": (False, True), "up_right": (True, False),
              "up_left": (True, True)}
_DIAGONAL_SETS = {"main": ("down_right", "up_left"), "anti": ("down_left", "up_right"),
                  "x": ("down_right", "down_left", "up_right", "up_left")}
DIAGONAL_RAYS = tuple((d,) for d in tuple(_DIAGONALS) + tuple(_DIAGONAL_SETS))


@primitive(DIAGONAL_RAYS, pad="inplace")
def diagonal_rays(xp, g, direction):
    """Extend every non-zero cell as a diagonal line towards ``direction`` over the background.

    A line stops before the next non-zero cell, which continues it in its own colour. ``main``:
    both ways along the main diagonal (down right, up left); ``anti``: down left and up right;
    ``x``: all four. Where lines cross, the line drawn first (in the order down right, down left,
    up right, up left) wins.
    """
    if kernels.enabled(xp) and g.dtype == xp.uint8 and g.shape[1] <= 30 and g.shape[2] <= 30:
        return fused.diagonal_rays(xp, g, _DIAGONAL_SETS.get(direction, (direction,)))
    out = None
    for d in _DIAGONAL_SETS.get(direction, (direction,)):
        flip_rows, flip_cols = _DIAGONALS[d]
        view = (slice(None), slice(None, None, -1 if flip_rows else 1), slice(None, None, -1 if flip_cols else 1))
        ray = _ray_down_right(xp, g[view])[view]
        out = ray if out is None else xp.where(out == 0, ray, out)
    return xp.ascontiguousarray(out)


HALVES = (("left",), ("right",), ("top",), ("bottom",))


@primitive(HALVES, layout="padded")
def half(xp, g, h, w, side):
    """The ``left``, ``right``, ``top`` or ``bottom`` half of the grid; with an odd side the middle
    line belongs to neither half. Grids one cell wide (or high) give no result."""
    n, H, W = g.shape
    across = side in ("left", "right")
    full = w if across else h
    part = full // 2
    start = per_grid(full - part) if side in ("right", "bottom") else 0
    rows, cols = (H, max(1, W // 2)) if across else (max(1, H // 2), W)
    R, C = coords(xp, rows, cols)
    if across:
        return remap(xp, g, h, part, rows, cols, R, C + start, valid=full >= 2)
    return remap(xp, g, part, w, rows, cols, R + start, C, valid=full >= 2)
