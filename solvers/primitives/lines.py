"""Movement and lines: gravity and rays drawn from pixels, as scans along one axis of the stack."""
from __future__ import annotations

from solvers import fused, kernels
from solvers.registry import primitive
from solvers.ragged import real_mask, same_shape
from solvers.xp import cummax, stable_argsort

# Each direction is computed as "towards the bottom" on a rotated view, then rotated back.
_TO_DOWN = {"down": 0, "left": 1, "up": 2, "right": 3}


def _as_down(xp, g, direction, fn):
    k = _TO_DOWN[direction]
    rotated = xp.rot90(g, k, axes=(1, 2))
    return xp.rot90(fn(xp, rotated), -k, axes=(1, 2))


def _ray_down(xp, g):
    # Each cell takes the colour of the last non-zero cell at or above it: the running maximum of
    # row * 16 + colour carries that colour in its low bits.
    rows = xp.arange(g.shape[1], dtype=xp.int16)[None, :, None]
    last = cummax(xp, xp.where(g != 0, rows * 16 + g, xp.int16(0)), axis=1)
    return xp.where(g == 0, (last & 15).astype(g.dtype), g)


@primitive((("down",), ("up",), ("left",), ("right",)), layout="padded", keeps_shape=True)
def gravity(xp, g, h, w, direction):
    """Let every non-zero cell fall towards ``direction``, keeping the order within its line."""
    axis = 1 if direction in ("down", "up") else 2
    towards_end = direction in ("down", "right")
    if kernels.enabled(xp):
        return same_shape(xp, g, h, w, kernels.line_compact(xp, g, h, w, axis, towards_end))
    solid = g != 0
    # Sort key per line: padding always last; then zeros before cells (falling to the end) or after.
    key = xp.where(solid, 0 if not towards_end else 1, 1 if not towards_end else 0).astype(xp.int8)
    key = xp.where(real_mask(xp, g, h, w), key, xp.int8(2))
    order = stable_argsort(xp, key, axis=axis)
    return same_shape(xp, g, h, w, xp.take_along_axis(g, order, axis=axis))


RAYS = (("down",), ("up",), ("left",), ("right",), ("lr",), ("ud",), ("all",))


@primitive(RAYS, pad="inplace")
def rays(xp, g, direction):
    """Extend every non-zero cell as a line towards ``direction`` over the background.

    ``lr``: both left and right; ``ud``: both up and down; ``all``: the four directions. Where
    lines cross, the line drawn first (in the order down, up, left, right) wins.
    """
    dirs = {"lr": ("left", "right"), "ud": ("down", "up"), "all": ("down", "up", "left", "right")}
    if kernels.enabled(xp):
        return fused.rays(xp, g, dirs.get(direction, (direction,)))
    out = None
    for d in dirs.get(direction, (direction,)):
        ray = _as_down(xp, g, d, _ray_down)
        out = ray if out is None else xp.where(out == 0, ray, out)
    return out
