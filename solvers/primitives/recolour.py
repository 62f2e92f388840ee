"""Recolouring by object properties.

These primitives write a *code* into each object (its size, its size rank, ...) instead of a final
colour: the search learns a colour table from the train pairs as its last step, which turns the
code into whatever colours the task wants ("size 1 -> 3, size 2 -> 2"). One transform thus covers
every colour assignment that is a function of the property.
"""
from __future__ import annotations

from solvers import fused, kernels
from solvers.primitives.objects import label_objects
from solvers.primitives.regions import enclosed_background
from solvers.registry import primitive


def mark(xp, colours):
    """The marking colour of each colour: ``c % 9 + 1`` (0 stays 0).

    Cells that a primitive adds or singles out get the mark of their source colour, so that the
    learned final colour table can rename them (see :mod:`solvers.primitives.draw`).
    """
    c = colours.astype(xp.int16)
    return xp.where(c > 0, c % 9 + 1, 0).astype(xp.uint8)


def shifted(xp, g, dy, dx, padded=None):
    """``out[i, j] = g[i + dy, j + dx]`` (0 outside the grid), for ``|dy|, |dx| <= 1``;
    ``padded`` may pass ``g`` already padded by one cell all round."""
    n, h, w = g.shape
    p = xp.pad(g, ((0, 0), (1, 1), (1, 1))) if padded is None else padded
    return p[:, 1 + dy:1 + dy + h, 1 + dx:1 + dx + w]


def _code(xp, values):
    """Clip integer codes to the colours 1..9."""
    return xp.clip(values, 1, 9).astype(xp.uint8)


@primitive(pad="inplace")
def color_by_size(xp, g):
    """Paint every object (4-connected, one colour) with its cell count, capped at 9."""
    labels, _, sizes, _ = label_objects(xp, g, 4, True)
    if kernels.enabled(xp):
        return fused.label_paint(xp, g, labels, sizes, erase_single=False)
    return xp.where(labels > 0, _code(xp, sizes)[labels], g.dtype.type(0))


def size_ranks(xp, owner, sizes):
    """Dense rank of each label's size within its grid, largest first (1 = largest; entry 0: 0)."""
    total = owner.shape[0]
    if total <= 1:
        return xp.zeros(total, dtype=xp.int64)
    # One key per (grid, size), larger sizes first; distinct keys of a grid are its distinct sizes.
    key = owner[1:] * 1024 + (1023 - xp.minimum(sizes[1:], 1023))
    uniq = xp.unique(key)
    grid_of = uniq // 1024
    first = xp.searchsorted(grid_of, grid_of, side="left")
    rank_of_uniq = xp.arange(uniq.shape[0]) - first + 1
    ranks = xp.zeros(total, dtype=xp.int64)
    ranks[1:] = rank_of_uniq[xp.searchsorted(uniq, key)]
    return ranks


@primitive(pad="inplace")
def color_by_rank(xp, g):
    """Paint every object (4-connected, one colour) with the rank of its size: 1 for the largest.

    Objects of equal size share a rank (dense ranking); ranks past 9 are painted 9.
    """
    labels, owner, sizes, _ = label_objects(xp, g, 4, True)
    if kernels.enabled(xp):
        return fused.size_rank_paint(xp, labels, sizes)
    ranks = size_ranks(xp, owner, sizes)
    return xp.where(labels > 0, _code(xp, ranks)[labels], g.dtype.type(0))


@primitive(pad="inplace")
def mark_hollow(xp, g):
    """Give the mark (next colour, ``c % 9 + 1``) to every object that encloses background.

    Objects are 8-connected and of one colour; an object encloses background when it touches
    (4 neighbours) a background cell cut off from the border. Other objects keep their colour.
    """
    labels, _, _, first = label_objects(xp, g, 8, True)
    hole = enclosed_background(xp, g)
    if kernels.enabled(xp):
        return fused.mark_hollow(xp, g, labels, first, hole)
    touch = xp.zeros(int(labels.max()) + 1 if labels.size else 1, dtype=bool)
    for dy, dx in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        touch[shifted(xp, labels, dy, dx)[hole]] = True
    touch[0] = False
    return xp.where(touch[labels], mark(xp, g), g)
