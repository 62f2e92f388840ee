"""Regions and structure: enclosed areas, outlines, symmetry completion, halves, deduplication."""
from __future__ import annotations

import numpy as np

from solvers import fused, kernels
from solvers.primitives.colour import COLOURS
from solvers.padded import Padded
from solvers.ragged import coords, keep_lines, per_grid, real_mask, remap, same_shape, transposed
from solvers.registry import primitive
from solvers.stack_cache import per_stack
from solvers.xp import ndimage


def _padded(xp, mask, value):
    return xp.pad(mask, ((0, 0), (1, 1), (1, 1)), constant_values=value)


def enclosed_background(xp, g):
    """Background cells that cannot reach the border through background (4-connected); shared by
    the transforms of a block (see :mod:`solvers.stack_cache`): callers must not modify it."""
    return per_stack(g, ("enclosed",), lambda: _enclosed_background(xp, g))


def _enclosed_background(xp, g):
    if kernels.enabled(xp):
        return kernels.enclosed_background(xp, g)
    structure = np.zeros((3, 3, 3), dtype=bool)
    structure[1] = ((0, 1, 0), (1, 1, 1), (0, 1, 0))
    # A background frame around every grid joins all border-touching regions into one.
    framed = _padded(xp, g == 0, True)
    labels, _ = ndimage(xp).label(framed, structure=structure)
    return (labels[:, 1:-1, 1:-1] != labels[:, :1, :1]) & (g == 0)


@primitive(COLOURS, pad="inplace", fill=enclosed_background)
def fill_enclosed(xp, g, c):
    """Paint with ``c`` the background cells that cannot reach the border (4-connected)."""
    return xp.where(enclosed_background(xp, g), g.dtype.type(c), g)


def _neighbours_all(xp, mask, outside_value):
    p = _padded(xp, mask, outside_value)
    return p[:, :-2, 1:-1] & p[:, 2:, 1:-1] & p[:, 1:-1, :-2] & p[:, 1:-1, 2:]


@primitive(pad="inplace")
def outline(xp, g):
    """Keep only the edge cells of shapes (a non-zero cell with a background or border neighbour)."""
    if kernels.enabled(xp):
        return fused.edge_cells(xp, g, interior=False)
    solid = g != 0
    inner = _neighbours_all(xp, solid, False)
    return xp.where(solid & ~inner, g, g.dtype.type(0))


@primitive(pad="inplace")
def interior(xp, g):
    """Keep only the inner cells of shapes (all four neighbours non-zero)."""
    if kernels.enabled(xp):
        return fused.edge_cells(xp, g, interior=True)
    solid = g != 0
    return xp.where(solid & _neighbours_all(xp, solid, False), g, g.dtype.type(0))


def _mirror(xp, g, h, w, kind):
    """The grid read through one mirror: ``lr``, ``ud``, ``rot180`` or ``diag`` (per-grid sides)."""
    n, H, W = g.shape
    R, C = coords(xp, H, W)
    hh, ww = per_grid(h), per_grid(w)
    src = {"lr": (R, ww - 1 - C), "ud": (hh - 1 - R, C), "rot180": (hh - 1 - R, ww - 1 - C),
           "diag": (C, R)}[kind]
    return remap(xp, g, h, w, H, W, *src).arr


@primitive((("lr",), ("ud",), ("rot180",), ("diag",), ("all",)), layout="padded", keeps_shape=True)
def symmetrize(xp, g, h, w, kind):
    """Complete a symmetric pattern: fill background cells from their mirror images.

    ``lr``/``ud``: mirror axes; ``rot180``: point symmetry; ``diag``: transpose (square grids);
    ``all``: left-right, top-bottom and point symmetry together.
    """
    if kernels.enabled(xp):
        out = fused.symmetrize(xp, g, h, w, kind)
    else:
        out = g
        for mirror in (("lr", "ud", "rot180") if kind == "all" else (kind,)):
            out = xp.where(out == 0, _mirror(xp, out, h, w, mirror), out)
    res = same_shape(xp, g, h, w, out)
    if kind == "diag":
        res.valid = h == w
    return res


HALF_OPS = tuple((axis, op) for axis in ("lr", "ud") for op in ("and", "or", "xor", "nor"))


@primitive(HALF_OPS, layout="padded")
def overlay_halves(xp, g, h, w, axis, op):
    """Split into two halves (``lr``: left/right, ``ud``: top/bottom) and combine them cellwise.

    With an odd side the middle line is a separator and belongs to neither half. ``and``: cells
    set in both (first half's colour); ``or``: first half over second; ``xor``: cells set in
    exactly one; ``nor``: cells set in neither, painted 1.
    """
    if kernels.enabled(xp):
        return fused.overlay_halves(xp, g, h, w, axis, op)
    if axis == "ud":
        return transposed(overlay_halves(xp, g.transpose(0, 2, 1), w, h, "lr", op))
    half = w // 2
    a, b = per_stack(g, ("left and right halves",), lambda: _left_right(xp, g, h, w))
    sa, sb = a.arr != 0, b != 0
    zero = g.dtype.type(0)
    if op == "and":
        out = xp.where(sa & sb, a.arr, zero)
    elif op == "or":
        out = xp.where(sa, a.arr, b)
    elif op == "xor":
        out = xp.where(sa ^ sb, xp.where(sa, a.arr, b), zero)
    else:
        out = xp.where(~sa & ~sb, g.dtype.type(1), zero)
    return Padded(xp.where(real_mask(xp, out, h, half), out, zero), a.h, a.w, a.valid)


def _left_right(xp, g, h, w):
    """The left and right halves of each grid (the middle column of an odd width in neither): the
    left as a result (none for grids one column wide), the right as a stack."""
    H, W = g.shape[1:]
    half = w // 2
    R, C = coords(xp, H, max(1, W // 2))
    left = remap(xp, g, h, half, H, W // 2, R, C, valid=w >= 2)
    return left, remap(xp, g, h, half, H, W // 2, R, per_grid(w - half) + C).arr


def _changed_rows(xp, g):
    keep = xp.ones(g.shape[:2], dtype=bool)
    keep[:, 1:] = (g[:, 1:] != g[:, :-1]).any(axis=2)
    return keep


@primitive((("rows",), ("cols",), ("both",)), layout="padded")
def dedup_lines(xp, g, h, w, axis):
    """Remove rows (or columns, or both) equal to the one before them."""
    if kernels.enabled(xp):
        return fused.keep_lines(xp, g, h, w, axis in ("rows", "both"), axis in ("cols", "both"), nonzero=False)
    res = same_shape(xp, g, h, w, g)
    if axis in ("rows", "both"):
        res = keep_lines(xp, g, h, w, _changed_rows(xp, g))
    if axis in ("cols", "both"):
        t = res.arr.transpose(0, 2, 1)
        valid = res.valid
        res = transposed(keep_lines(xp, t, res.w, res.h, _changed_rows(xp, t)))
        res.valid = res.valid & valid
    return res


@primitive(layout="padded")
def compress(xp, g, h, w):
    """Remove every all-zero row and column."""
    if kernels.enabled(xp):
        return fused.keep_lines(xp, g, h, w, True, True, nonzero=True)
    rows = keep_lines(xp, g, h, w, (g != 0).any(axis=2))
    t = rows.arr.transpose(0, 2, 1)
    cols = transposed(keep_lines(xp, t, rows.w, rows.h, (t != 0).any(axis=2)))
    cols.valid = cols.valid & rows.valid
    return cols
