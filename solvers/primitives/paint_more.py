"""More painting in place: per-line majority, colour boxes, the grid's frame, marking the objects
of a shape that occurs once, codes for the sides of shapes, and repeating the content's period."""
from __future__ import annotations

import numpy as np

from solvers import fused, kernels
from solvers.primitives.draw import first_last
from solvers.primitives.objects import label_objects
from solvers.primitives.recolour import mark, shifted
from solvers.ragged import coords, per_grid, real_mask, same_shape
from solvers.registry import primitive


def _line_majority(xp, g, real, axis):
    """Each line along ``axis`` (2: rows, 1: columns) painted with its most frequent colour (0
    counts; ties: the lower colour), with the number of cells that changed per grid."""
    n, H, W = g.shape
    R, C = coords(xp, H, W)
    lines = H if axis == 2 else W
    line = R if axis == 2 else C
    # One histogram of (grid, line, colour) over the stack; the padding is left out.
    key = (xp.arange(n)[:, None, None] * lines + line) * 10 + g.astype(xp.int64)
    counts = xp.bincount(key[real], minlength=n * lines * 10).reshape(n, lines, 10)
    major = counts.argmax(axis=2).astype(g.dtype)
    out = xp.where(real, xp.expand_dims(major, axis), g.dtype.type(0))
    return out, (out != g).sum(axis=(1, 2))


@primitive((("auto",),), layout="padded", keeps_shape=True)  # searched as auto only: rows or columns alone added nothing
def line_majority(xp, g, h, w, axis):
    """Paint every row (``rows``) or column (``cols``) with its most frequent colour, which erases
    the noise of a striped picture; ``auto`` takes, per grid, whichever of the two changes fewer
    cells (ties: rows). Background counts as a colour; ties between colours go to the lower."""
    if kernels.enabled(xp) and g.dtype == xp.uint8:
        return fused.line_majority(xp, g, h, w, axis)
    real = real_mask(xp, g, h, w)
    by_rows, changed_rows = _line_majority(xp, g, real, 2)
    if axis == "rows":
        return same_shape(xp, g, h, w, by_rows)
    by_cols, changed_cols = _line_majority(xp, g, real, 1)
    if axis == "cols":
        return same_shape(xp, g, h, w, by_cols)
    return same_shape(xp, g, h, w, xp.where(per_grid(changed_cols < changed_rows), by_cols, by_rows))


@primitive(pad="inplace")
def colour_boxes(xp, g):
    """Paint the background inside the bounding box of all the cells of each colour with that
    colour (two cells of a colour span a rectangle); where boxes overlap, the lower colour wins."""
    if kernels.enabled(xp) and g.dtype == xp.uint8:
        return fused.colour_boxes(xp, g)
    n, H, W = g.shape
    R, C = coords(xp, H, W)
    out = g.copy()
    for c in range(1, 10):
        cells = g == c
        rows, cols = cells.any(axis=2), cells.any(axis=1)
        top, left = rows.argmax(axis=1), cols.argmax(axis=1)
        bottom, right = H - 1 - rows[:, ::-1].argmax(axis=1), W - 1 - cols[:, ::-1].argmax(axis=1)
        inside = (R >= per_grid(top)) & (R <= per_grid(bottom)) & (C >= per_grid(left)) & (C <= per_grid(right))
        out = xp.where(inside & (out == 0) & per_grid(rows.any(axis=1)), g.dtype.type(c), out)
    return out


@primitive(((1,),), layout="padded", keeps_shape=True)
def frame(xp, g, h, w, c):
    """Paint the outermost ring of cells of the grid (its first and last rows and columns) with
    colour ``c``; the learned final colour table renames it."""
    R, C = coords(xp, g.shape[1], g.shape[2])
    hh, ww = per_grid(h), per_grid(w)
    ring = (R == 0) | (C == 0) | (R == hh - 1) | (C == ww - 1)
    return same_shape(xp, g, h, w, xp.where(ring & real_mask(xp, g, h, w), g.dtype.type(c), g))


# Per offset (row * 32 + column) inside an object's box, a random weight below 2**43: sums over
# at most 900 cells stay exact in float64, so a shape's hash is its weights' sum.
_SHAPE_WEIGHTS = np.random.default_rng(20240611).integers(0, 2 ** 43, size=32 * 32).astype(np.float64)


@primitive(pad="inplace")
def mark_unique_shape(xp, g):
    """Give the mark (next colour, ``c % 9 + 1``) to every object whose shape no other object of
    its grid has; other objects keep their colour.

    Objects are 8-connected and of one colour; a shape is the set of an object's cells relative to
    its bounding box (colour, place and size of the grid do not count; rotations are different
    shapes).
    """
    labels, owner, _, _ = label_objects(xp, g, 8, True)
    if owner.shape[0] == 1:
        return g.copy()
    return xp.where(shape_counts(xp, labels, owner)[labels] == 1, mark(xp, g), g)


def shape_counts(xp, labels, owner):
    """Per label of a labelling (``label_objects``), how many objects of its grid have its shape
    (the set of its cells relative to its bounding box; entry 0: 0)."""
    total = owner.shape[0] - 1
    gi, r, c = xp.nonzero(labels)
    lab = labels[gi, r, c].astype(xp.int64)
    top, _ = first_last(xp, lab, r, total)
    left, _ = first_last(xp, lab, c, total)
    weight = xp.asarray(_SHAPE_WEIGHTS)[(r - top[lab]) * 32 + (c - left[lab])]
    shape_hash = xp.bincount(lab, weights=weight, minlength=total + 1).astype(xp.int64) % (2 ** 43)
    key = owner * (2 ** 43) + shape_hash
    _, inverse, counts = xp.unique(key[1:], return_inverse=True, return_counts=True)
    out = xp.zeros(total + 1, dtype=xp.int64)
    out[1:] = counts[inverse.reshape(-1)]
    return out


# Codes of the background cells next to a shape, by where they lie from it, in the order that
# decides between several neighbours: up, down, left, right, up left, up right, down left, down right.
_DIRECTION_CODES = ((1, (-1, 0)), (2, (1, 0)), (3, (0, -1)), (4, (0, 1)),
                    (5, (-1, -1)), (6, (-1, 1)), (7, (1, -1)), (8, (1, 1)))


@primitive(pad="inplace")
def direction_codes(xp, g):
    """A code grid of the eight neighbours of shapes: every non-zero cell becomes 9, every
    background cell next to one (8 neighbours) the code of its side of it (1 up, 2 down, 3 left,
    4 right, 5 up left, 6 up right, 7 down left, 8 down right), the rest 0.

    A cell next to several shapes' cells takes the first code in that order. The learned final
    colour table turns codes into colours ("above each cell a 2, below it an 8"); cells of
    several colours all become 9.
    """
    solid = g != 0
    padded = xp.pad(solid, ((0, 0), (1, 1), (1, 1)))
    out = xp.where(solid, g.dtype.type(9), g.dtype.type(0))
    for code, (dy, dx) in _DIRECTION_CODES:
        # The cell lies ``(dy, dx)`` from a shape's cell when that cell is at ``-(dy, dx)`` from it.
        beside = shifted(xp, solid, -dy, -dx, padded)
        out = xp.where((out == 0) & beside, g.dtype.type(code), out)
    return out


def _column_codes(xp, g):
    """Each column of the stack as a few int64 codes, 15 cells of 4 bits each (n, codes, W): two
    columns are equal exactly when their codes are."""
    n, H, W = g.shape
    codes = xp.zeros((n, (H + 14) // 15, W), dtype=xp.int64)
    for r in range(H):
        codes[:, r // 15] |= g[:, r].astype(xp.int64) << (4 * (r % 15))
    return codes


def _extend_columns(xp, g, h, w, tile):
    """:func:`extend_period` ``across`` (columns repeat), on a stack of real sides ``h`` x ``w``."""
    n, H, W = g.shape
    _, C = coords(xp, 1, W)
    used = (g != 0).any(axis=1)                                   # (n, W): columns with content
    first = used.argmax(axis=1)
    last = W - 1 - used[:, ::-1].argmax(axis=1)
    period = last - first + 1                                    # the content as one tile
    if tile == "period":
        found = xp.zeros(n, dtype=bool)
        columns = _column_codes(xp, g)
        for p in range(1, W):
            # Columns p apart agree wherever both lie inside the content.
            same = (columns[:, :, :-p] == columns[:, :, p:]).all(axis=1)  # (n, W - p)
            inside = (C[:, 0, :W - p] >= first[:, None]) & (C[:, 0, :W - p] + p <= last[:, None])
            agree = (same | ~inside).all(axis=1) & ~found & (p < period)
            period = xp.where(agree, p, period)
            found = found | agree
    src = per_grid(first) + (C - per_grid(first)) % per_grid(period)
    out = xp.take_along_axis(g, xp.broadcast_to(src, g.shape), axis=2)
    return xp.where(real_mask(xp, g, h, w) & per_grid(used.any(axis=1)), out, g)


EXTEND = tuple((axis, tile) for tile in ("period", "span") for axis in ("across", "down"))


@primitive(EXTEND, layout="padded", keeps_shape=True)
def extend_period(xp, g, h, w, axis, tile):
    """Repeat the content over the whole grid: ``across``, the columns from the first to the last
    that hold a non-zero cell repeat out to the left and right edges; ``down``, the rows repeat up
    to the top and down to the bottom. The tile is the content's smallest period (``period``; the
    whole content when none is shorter) or the whole content (``span``). Grids without content
    stay as they are."""
    if axis == "across":
        return same_shape(xp, g, h, w, _extend_columns(xp, g, h, w, tile))
    turned = xp.ascontiguousarray(xp.swapaxes(g, 1, 2))
    return same_shape(xp, g, h, w, xp.ascontiguousarray(xp.swapaxes(_extend_columns(xp, turned, w, h, tile), 1, 2)))
