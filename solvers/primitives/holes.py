"""Holes by shape: enclosed background regions told apart by the shape they have."""
from __future__ import annotations

import numpy as np

from solvers.primitives.recolour import mark, shifted
from solvers.ragged import coords, per_grid, real_mask, same_shape
from solvers.registry import primitive
from solvers.xp import ndimage


def _not_rectangles(xp, labels, total):
    """Per label, whether its region is no rectangle: some 2 x 2 window holds three of its cells,
    or two diagonal ones only (a 4-connected region without either is a rectangle)."""
    bad = xp.zeros(total + 1, dtype=bool)
    a, b = labels[:, :-1, :-1], labels[:, :-1, 1:]
    c, d = labels[:, 1:, :-1], labels[:, 1:, 1:]
    for x, side1, side2, diag in ((a, b, c, d), (b, a, d, c), (c, a, d, b), (d, b, c, a)):
        count = 1 + (x == side1).astype(xp.int8) + (x == side2) + (x == diag)
        hit = (x > 0) & ((count == 3) | ((count == 2) & (x == diag)))
        bad[x[hit]] = True
    bad[0] = False
    return bad


def _highest_neighbour(xp, g, labels, total):
    """Per label, the highest colour among its region's 4 neighbours (0 where none)."""
    nb = g.astype(xp.int64) * 0
    for dy, dx in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        nb = xp.maximum(nb, shifted(xp, g, dy, dx).astype(xp.int64))
    cells = labels > 0
    key = xp.sort(labels[cells].astype(xp.int64) * 16 + nb[cells])
    highest = xp.zeros(total + 1, dtype=xp.int64)
    # Keys sorted by label then colour: each label's last key holds its highest colour.
    last = xp.ones(key.shape[0], dtype=bool)
    last[:-1] = key[1:] // 16 != key[:-1] // 16
    highest[key[last] // 16] = key[last] % 16
    return highest


@primitive((("rect",), ("square",)), layout="padded")
def fill_rect_holes(xp, g, h, w, shape):
    """Give each enclosed background region (4-connected, not touching the border) that is a
    rectangle (with ``square``: a square) the mark (next colour, ``c % 9 + 1``) of the highest
    colour around it; other regions stay background."""
    real = real_mask(xp, g, h, w)
    structure = np.zeros((3, 3, 3), dtype=bool)
    structure[1] = ((0, 1, 0), (1, 1, 1), (0, 1, 0))
    labels, total = ndimage(xp).label((g == 0) & real, structure=structure)
    total = int(total)
    R, C = coords(xp, g.shape[1], g.shape[2])
    border = real & ((R == 0) | (C == 0) | (R == per_grid(h) - 1) | (C == per_grid(w) - 1))
    keep = xp.ones(total + 1, dtype=bool)
    keep[labels[border]] = False
    keep &= ~_not_rectangles(xp, labels, total)
    if shape == "square":
        width = xp.bincount(labels[(labels > 0) & (shifted(xp, labels, -1, 0) != labels)], minlength=total + 1)
        height = xp.bincount(labels[(labels > 0) & (shifted(xp, labels, 0, -1) != labels)], minlength=total + 1)
        keep &= width == height
    keep[0] = False
    colour = mark(xp, _highest_neighbour(xp, g, labels, total))
    return same_shape(xp, g, h, w, xp.where(keep[labels], colour[labels], g))
