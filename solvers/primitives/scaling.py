"""Scaling, tiling and mirror-tiling, as coordinate maps over zero-padded stacks."""
from __future__ import annotations

from solvers.batch import MAX_SIDE
from solvers.ragged import apply_coord_map, map_coords, per_grid
from solvers.registry import primitive


@primitive(((2,), (3,), (4,)), layout="padded", coord_map="upscale", max_sides=lambda k: (MAX_SIDE // k, MAX_SIDE // k))
def upscale(xp, g, h, w, k):
    """Scale up by ``k``: every cell becomes a k x k block."""
    return apply_coord_map(xp, g, h, w, "upscale", k)


@primitive(((2,), (3,)), layout="padded", coord_map="downscale")
def downscale(xp, g, h, w, k):
    """Scale down by ``k``: keep the top-left cell of every k x k block (sides must divide)."""
    return apply_coord_map(xp, g, h, w, "downscale", k)


@primitive(layout="padded", max_sides=lambda: (5, 5))  # 6 x 6 would grow to 36 x 36
def fractal(xp, g, h, w):
    """Self-similar scaling: each non-zero cell becomes a copy of the grid, each zero a blank."""
    n, H, W = g.shape
    hh, ww = per_grid(h), per_grid(w)
    outer = map_coords(xp, g, h * h, w * w, H * H, W * W, lambda R, C: (R // hh, C // ww))
    inner = map_coords(xp, g, h * h, w * w, H * H, W * W, lambda R, C: (R % hh, C % ww))
    outer.arr = xp.where(outer.arr != 0, inner.arr, g.dtype.type(0))
    return outer


@primitive(((1, 2), (2, 1), (2, 2), (1, 3), (3, 1), (3, 3)), layout="padded", coord_map="tile",
           max_sides=lambda ry, rx: (MAX_SIDE // ry, MAX_SIDE // rx))
def tile(xp, g, h, w, ry, rx):
    """Repeat the grid ``ry`` times down and ``rx`` times across."""
    return apply_coord_map(xp, g, h, w, "tile", ry, rx)


@primitive(layout="padded", coord_map="mirror_lr", max_sides=lambda: (MAX_SIDE, MAX_SIDE // 2))
def mirror_lr(xp, g, h, w):
    """The grid followed by its left-right mirror image."""
    return apply_coord_map(xp, g, h, w, "mirror_lr")


@primitive(layout="padded", coord_map="mirror_ud", max_sides=lambda: (MAX_SIDE // 2, MAX_SIDE))
def mirror_ud(xp, g, h, w):
    """The grid above its top-bottom mirror image."""
    return apply_coord_map(xp, g, h, w, "mirror_ud")


@primitive(layout="padded", coord_map="mirror_4", max_sides=lambda: (MAX_SIDE // 2, MAX_SIDE // 2))
def mirror_4(xp, g, h, w):
    """Four mirrored copies: the grid, its mirror across, below them their upside-down images."""
    return apply_coord_map(xp, g, h, w, "mirror_4")
