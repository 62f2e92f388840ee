"""Scaling, tiling and mirror-tiling: repeats and slices of the whole stack."""
from __future__ import annotations

from solvers.batch import MAX_SIDE, Parts
from solvers.registry import primitive


def _empty(xp):
    return Parts([])


@primitive(((2,), (3,), (4,)))
def upscale(xp, g, k):
    """Scale up by ``k``: every cell becomes a k x k block."""
    if g.shape[1] * k > MAX_SIDE or g.shape[2] * k > MAX_SIDE:
        return _empty(xp)
    return xp.repeat(xp.repeat(g, k, axis=1), k, axis=2)


@primitive(((2,), (3,)))
def downscale(xp, g, k):
    """Scale down by ``k``: keep the top-left cell of every k x k block (sides must divide)."""
    if g.shape[1] % k or g.shape[2] % k:
        return _empty(xp)
    return g[:, ::k, ::k]


@primitive()
def fractal(xp, g):
    """Self-similar scaling: each non-zero cell becomes a copy of the grid, each zero a blank."""
    n, h, w = g.shape
    if h * h > MAX_SIDE or w * w > MAX_SIDE:
        return _empty(xp)
    big = (g != 0)[:, :, None, :, None] * g[:, None, :, None, :]
    return big.reshape(n, h * h, w * w).astype(g.dtype)


@primitive(((1, 2), (2, 1), (2, 2), (1, 3), (3, 1), (3, 3)))
def tile(xp, g, ry, rx):
    """Repeat the grid ``ry`` times down and ``rx`` times across."""
    if g.shape[1] * ry > MAX_SIDE or g.shape[2] * rx > MAX_SIDE:
        return _empty(xp)
    return xp.tile(g, (1, ry, rx))


@primitive()
def mirror_lr(xp, g):
    """The grid followed by its left-right mirror image."""
    if g.shape[2] * 2 > MAX_SIDE:
        return _empty(xp)
    return xp.concatenate([g, g[:, :, ::-1]], axis=2)


@primitive()
def mirror_ud(xp, g):
    """The grid above its top-bottom mirror image."""
    if g.shape[1] * 2 > MAX_SIDE:
        return _empty(xp)
    return xp.concatenate([g, g[:, ::-1, :]], axis=1)


@primitive()
def mirror_4(xp, g):
    """Four mirrored copies: the grid, its mirror across, below them their upside-down images."""
    if g.shape[1] * 2 > MAX_SIDE or g.shape[2] * 2 > MAX_SIDE:
        return _empty(xp)
    top = xp.concatenate([g, g[:, :, ::-1]], axis=2)
    return xp.concatenate([top, top[:, ::-1, :]], axis=1)
