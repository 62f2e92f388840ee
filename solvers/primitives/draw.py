"""Drawing on the background: lines between pixels, halos around shapes, filled bounding boxes.

Where the new cells need a colour of their own, they get the *mark* of the colour they come from:
``mark(c) = c % 9 + 1`` (the next colour). The search's learned final colour table then renames the
mark to whatever the task wants, so one transform covers every "draw in colour X" variant as long
as the next colour is not otherwise in use.
"""
from __future__ import annotations

from solvers.registry import primitive
from solvers.xp import ndimage


def mark(xp, colours):
    """The marking colour of each colour: ``c % 9 + 1`` (0 stays 0)."""
    c = colours.astype(xp.int16)
    return xp.where(c > 0, c % 9 + 1, 0).astype(xp.uint8)


def _nearest_before(xp, g, axis):
    """For each cell, the colour of the nearest non-zero cell strictly before it along ``axis``
    (0 where none); ``axis`` is 1 (rows: above) or 2 (columns: to the left)."""
    n = g.shape[axis]
    shape = [1, 1, 1]
    shape[axis] = n
    idx = xp.arange(n).reshape(shape)
    pos = xp.where(g != 0, idx, -1)
    last = xp.maximum.accumulate(pos, axis=axis)
    # Shift by one so that a cell does not see itself.
    prev = xp.full_like(last, -1)
    if axis == 1:
        prev[:, 1:] = last[:, :-1]
    else:
        prev[:, :, 1:] = last[:, :, :-1]
    found = xp.take_along_axis(g, xp.maximum(prev, 0), axis=axis)
    return xp.where(prev >= 0, found, g.dtype.type(0))


def _between(xp, g, axis):
    """Colour of the two nearest non-zero cells on either side along ``axis`` where they agree."""
    before = _nearest_before(xp, g, axis)
    flip = (slice(None),) * axis + (slice(None, None, -1),)
    after = _nearest_before(xp, g[flip], axis)[flip]
    return xp.where((before == after) & (g == 0), before, g.dtype.type(0))


CONNECT = tuple((axis, marked) for marked in (False, True) for axis in ("h", "v", "hv"))


@primitive(CONNECT, pad="inplace")
def connect(xp, g, axis, marked):
    """Draw lines between pixels of one colour facing each other across the background.

    A background cell whose nearest non-zero cells to the left and to the right (``h``), or above
    and below (``v``), have the same colour takes that colour; ``hv`` does both, vertical lines
    crossing over horizontal ones. With ``marked`` the lines get the mark (next colour) instead.
    """
    line = None
    for ax in {"h": (2,), "v": (1,), "hv": (2, 1)}[axis]:
        part = _between(xp, g, ax)
        line = part if line is None else xp.where(part != 0, part, line)
    if marked:
        line = mark(xp, line)
    return xp.where(line != 0, line, g)


_NEIGHBOURS = ((-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))


def _shifted(xp, g, dy, dx):
    """``out[i, j] = g[i + dy, j + dx]`` (0 outside the grid)."""
    n, h, w = g.shape
    p = xp.pad(g, ((0, 0), (1, 1), (1, 1)))
    return p[:, 1 + dy:1 + dy + h, 1 + dx:1 + dx + w]


@primitive(((4,), (8,)), pad="inplace")
def halo(xp, g, conn):
    """Surround shapes: background cells next to a non-zero cell (4 or 8 neighbours) get its mark.

    Where several neighbours touch a cell, the first in the order up, down, left, right, then the
    diagonals decides.
    """
    out = xp.zeros_like(g)
    for dy, dx in _NEIGHBOURS[:conn]:
        nb = _shifted(xp, g, dy, dx)
        out = xp.where(out == 0, nb, out)
    return xp.where((g == 0) & (out != 0), mark(xp, out), g)


@primitive(pad="inplace")
def fill_bbox(xp, g):
    """Paint the background inside each object's bounding box with the object's mark.

    Objects are 8-connected and of one colour; where boxes of different colours overlap, the lower
    colour wins.
    """
    nd = ndimage(xp)
    n, h, w = g.shape
    structure = xp.ones((3, 3, 3), dtype=bool)
    structure[0] = False
    structure[2] = False
    out = g.copy()
    free = g == 0
    for c in range(1, 10):
        mask = g == c
        if not bool(mask.any()):
            continue
        labels, total = nd.label(mask, structure=structure)
        total = int(total)
        flat = labels.ravel()
        sel = xp.nonzero(flat)[0]
        lab = flat[sel].astype(xp.int64)
        grid = sel // (h * w)
        r = (sel // w) % h
        q = sel % w
        # Box of each label from sorted keys: first and last row / column of every label.
        top = xp.zeros(total + 1, dtype=xp.int64)
        bottom = xp.zeros(total + 1, dtype=xp.int64)
        left = xp.zeros(total + 1, dtype=xp.int64)
        right = xp.zeros(total + 1, dtype=xp.int64)
        owner = xp.zeros(total + 1, dtype=xp.int64)
        owner[lab] = grid
        for key_of, lo, hi in ((r, top, bottom), (q, left, right)):
            key = xp.sort(lab * 64 + key_of)
            ids = key // 64
            start = xp.ones(key.shape[0], dtype=bool)
            start[1:] = ids[1:] != ids[:-1]
            end = xp.ones(key.shape[0], dtype=bool)
            end[:-1] = ids[1:] != ids[:-1]
            lo[ids[start]] = key[start] % 64
            hi[ids[end]] = key[end] % 64
        ids = xp.arange(1, total + 1)
        # Coverage count by a 2-D difference array over (n, h + 1, w + 1).
        W1 = w + 1
        base = owner[ids] * (h + 1) * W1
        plus = xp.concatenate([base + top[ids] * W1 + left[ids],
                               base + (bottom[ids] + 1) * W1 + right[ids] + 1])
        minus = xp.concatenate([base + top[ids] * W1 + right[ids] + 1,
                                base + (bottom[ids] + 1) * W1 + left[ids]])
        size = n * (h + 1) * W1
        diff = xp.bincount(plus, minlength=size) - xp.bincount(minus, minlength=size)
        cover = diff.reshape(n, h + 1, W1).cumsum(axis=1).cumsum(axis=2)[:, :h, :w] > 0
        paint = cover & free
        out = xp.where(paint, mark(xp, xp.asarray(c)).astype(g.dtype), out)
        free = free & ~paint
    return out
