"""Regions and structure: enclosed areas, outlines, symmetry completion, halves, deduplication."""
from __future__ import annotations

import numpy as np

from solvers.batch import Parts, select_rows, transpose_parts
from solvers.primitives.colour import COLOURS
from solvers.registry import primitive
from solvers.xp import ndimage


def _padded(xp, mask, value):
    return xp.pad(mask, ((0, 0), (1, 1), (1, 1)), constant_values=value)


@primitive(COLOURS, pad="inplace")
def fill_enclosed(xp, g, c):
    """Paint with ``c`` the background cells that cannot reach the border (4-connected)."""
    nd = ndimage(xp)
    structure = np.zeros((3, 3, 3), dtype=bool)  # host array: both ndimage modules take it
    structure[1] = ((0, 1, 0), (1, 1, 1), (0, 1, 0))
    # A background frame around every grid joins all border-touching regions into one.
    labels, _ = nd.label(_padded(xp, g == 0, True), structure=structure)
    outside = labels[:, :1, :1]
    inner = (labels[:, 1:-1, 1:-1] != outside) & (g == 0)
    return xp.where(inner, g.dtype.type(c), g)


def _neighbours_all(xp, mask, outside_value):
    p = _padded(xp, mask, outside_value)
    return p[:, :-2, 1:-1] & p[:, 2:, 1:-1] & p[:, 1:-1, :-2] & p[:, 1:-1, 2:]


@primitive(pad="inplace")
def outline(xp, g):
    """Keep only the edge cells of shapes (a non-zero cell with a background or border neighbour)."""
    solid = g != 0
    inner = _neighbours_all(xp, solid, False)
    return xp.where(solid & ~inner, g, g.dtype.type(0))


@primitive(pad="inplace")
def interior(xp, g):
    """Keep only the inner cells of shapes (all four neighbours non-zero)."""
    solid = g != 0
    return xp.where(solid & _neighbours_all(xp, solid, False), g, g.dtype.type(0))


@primitive((("lr",), ("ud",), ("rot180",), ("diag",), ("all",)))
def symmetrize(xp, g, kind):
    """Complete a symmetric pattern: fill background cells from their mirror images.

    ``lr``/``ud``: mirror axes; ``rot180``: point symmetry; ``diag``: transpose (square grids);
    ``all``: left-right, top-bottom and point symmetry together.
    """
    if kind == "diag" and g.shape[1] != g.shape[2]:
        return Parts([])
    mirrors = {
        "lr": (lambda a: a[:, :, ::-1],),
        "ud": (lambda a: a[:, ::-1, :],),
        "rot180": (lambda a: a[:, ::-1, ::-1],),
        "diag": (lambda a: a.transpose(0, 2, 1),),
        "all": (lambda a: a[:, :, ::-1], lambda a: a[:, ::-1, :], lambda a: a[:, ::-1, ::-1]),
    }[kind]
    out = g
    for mirror in mirrors:
        out = xp.where(out == 0, mirror(out), out)
    return out


def _halves(xp, g):
    """Left and right halves; with an odd width the middle column is the separator."""
    w = g.shape[2]
    half = w // 2
    return g[:, :, :half], g[:, :, w - half:]


HALF_OPS = tuple((axis, op) for axis in ("lr", "ud") for op in ("and", "or", "xor", "nor"))


@primitive(HALF_OPS)
def overlay_halves(xp, g, axis, op):
    """Split into two halves (``lr``: left/right, ``ud``: top/bottom) and combine them cellwise.

    ``and``: cells set in both (first half's colour); ``or``: first half over second; ``xor``:
    cells set in exactly one; ``nor``: cells set in neither, painted 1.
    """
    if axis == "ud":
        g = g.transpose(0, 2, 1)
    if g.shape[2] < 2:
        return Parts([])
    a, b = _halves(xp, g)
    sa, sb = a != 0, b != 0
    zero = g.dtype.type(0)
    if op == "and":
        out = xp.where(sa & sb, a, zero)
    elif op == "or":
        out = xp.where(sa, a, b)
    elif op == "xor":
        out = xp.where(sa ^ sb, xp.where(sa, a, b), zero)
    else:
        out = xp.where(~sa & ~sb, g.dtype.type(1), zero)
    return out.transpose(0, 2, 1) if axis == "ud" else out


def _dedup_rows(xp, g):
    keep = xp.ones(g.shape[:2], dtype=bool)
    keep[:, 1:] = (g[:, 1:] != g[:, :-1]).any(axis=2)
    return select_rows(xp, g, keep)


def _then_columns(xp, parts, row_fn):
    out = []
    for idx, arr in parts:
        for sub, res in transpose_parts(row_fn(xp, arr.transpose(0, 2, 1))):
            out.append((idx[sub], res))
    return Parts(out)


@primitive((("rows",), ("cols",), ("both",)))
def dedup_lines(xp, g, axis):
    """Remove rows (or columns, or both) equal to the one before them."""
    n = g.shape[0]
    parts = Parts([(xp.arange(n), g)])
    if axis in ("rows", "both"):
        parts = _dedup_rows(xp, g)
    if axis in ("cols", "both"):
        parts = _then_columns(xp, parts, _dedup_rows)
    return parts


def _nonempty_rows(xp, g):
    return select_rows(xp, g, (g != 0).any(axis=2))


@primitive()
def compress(xp, g):
    """Remove every all-zero row and column."""
    return _then_columns(xp, _nonempty_rows(xp, g), _nonempty_rows)
