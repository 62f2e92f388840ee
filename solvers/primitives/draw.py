"""Drawing on the background: lines between pixels, halos around shapes, filled bounding boxes.

Where the new cells need a colour of their own, they get the *mark* of the colour they come from:
``mark(c) = c % 9 + 1`` (the next colour). The search's learned final colour table then renames the
mark to whatever the task wants, so one transform covers every "draw in colour X" variant as long
as the next colour is not otherwise in use.
"""
from __future__ import annotations

from solvers import fused, kernels
from solvers.primitives.objects import label_objects
from solvers.primitives.recolour import mark, shifted
from solvers.registry import primitive
from solvers.xp import scatter_max, scatter_min


def _nearest_before(xp, g, axis):
    """For each cell, the colour of the nearest non-zero cell strictly before it along ``axis``
    (0 where none); ``axis`` is 1 (rows: above) or 2 (columns: to the left).

    A forward fill, one step per line of the grid (at most 30), each step over the whole batch.
    """
    a = xp.moveaxis(g, axis, 0)
    out = xp.zeros_like(a)
    for j in range(1, a.shape[0]):
        out[j] = xp.where(a[j - 1] != 0, a[j - 1], out[j - 1])
    return xp.moveaxis(out, 0, axis)


def _between(xp, g, axis):
    """Colour of the two nearest non-zero cells on either side along ``axis`` where they agree."""
    before = _nearest_before(xp, g, axis)
    flip = (slice(None),) * axis + (slice(None, None, -1),)
    after = _nearest_before(xp, g[flip], axis)[flip]
    return xp.where((before == after) & (g == 0), before, g.dtype.type(0))


def _row_shifts(xp, H: int, sign: int):
    """How far :func:`_sheared` moves each of ``H`` rows right: row ``r`` by ``r`` (``sign`` 1) or
    by ``H - 1 - r`` (``sign`` -1)."""
    rows = xp.arange(H)
    return rows if sign > 0 else H - 1 - rows


def _sheared(xp, g, sign: int):
    """The stack with its rows moved sideways into a wider zero array, so that each diagonal of
    ``g`` becomes a column: with ``sign`` 1 row ``r`` moves ``r`` cells right (the down-left
    diagonals, ``r + c`` constant), with -1 ``H - 1 - r`` cells (the down-right ones)."""
    n, H, W = g.shape
    cols = xp.arange(W + H - 1)[None, :] - _row_shifts(xp, H, sign)[:, None]  # the column of g each holds
    inside = (cols >= 0) & (cols < W)
    taken = g[:, xp.arange(H)[:, None], xp.where(inside, cols, 0)]
    return xp.where(inside[None], taken, g.dtype.type(0))


def _unsheared(xp, s, W: int, sign: int):
    """:func:`_sheared` undone: the ``(n, H, W)`` stack read back from its sheared form."""
    H = s.shape[1]
    return s[:, xp.arange(H)[:, None], _row_shifts(xp, H, sign)[:, None] + xp.arange(W)[None, :]]


def _between_diagonals(xp, g):
    """:func:`_between` along both diagonals (down right over down left where both join a cell).
    Cells between two cells of one diagonal are cells of the grid: padding never joins them."""
    line = None
    for sign in (-1, 1):
        part = _unsheared(xp, _between(xp, _sheared(xp, g, sign), 1), g.shape[2], sign)
        line = part if line is None else xp.where(line != 0, line, part)
    return line


CONNECT = tuple((axis, marked) for marked in (False, True) for axis in ("h", "v", "hv", "diagonal"))


@primitive(CONNECT, pad="inplace")
def connect(xp, g, axis, marked):
    """Draw lines between pixels of one colour facing each other across the background.

    A background cell whose nearest non-zero cells to the left and to the right (``h``) have the
    same colour takes that colour; ``v`` joins cells above and below instead; ``hv`` both, vertical
    lines crossing over horizontal ones; ``diagonal`` joins cells along both diagonals (the down-right
    diagonal over the down-left one). With ``marked`` the lines get the mark (next colour) instead.
    """
    if kernels.enabled(xp) and axis in ("h", "hv"):  # the fused kernel joins rows, then columns
        return fused.connect(xp, g, axis == "hv", marked)
    if kernels.enabled(xp) and axis == "v":  # columns are the transposed stack's rows
        return xp.ascontiguousarray(fused.connect(xp, g.transpose(0, 2, 1), False, marked).transpose(0, 2, 1))
    if axis == "diagonal":
        line = _between_diagonals(xp, g)
    else:
        line = None
        for ax in {"h": (2,), "v": (1,), "hv": (2, 1)}[axis]:
            part = _between(xp, g, ax)
            line = part if line is None else xp.where(part != 0, part, line)
    if marked:
        line = mark(xp, line)
    return xp.where(line != 0, line, g)


_NEIGHBOURS = ((-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))


@primitive(((4,), (8,)), pad="inplace")
def halo(xp, g, conn):
    """Surround shapes: background cells next to a non-zero cell (4 or 8 neighbours) get its mark.

    Where several neighbours touch a cell, the first in the order up, down, left, right, then the
    diagonals decides.
    """
    if kernels.enabled(xp):
        return fused.halo(xp, g, conn)
    out = xp.zeros_like(g)
    padded = xp.pad(g, ((0, 0), (1, 1), (1, 1)))
    for dy, dx in _NEIGHBOURS[:conn]:
        out = xp.where(out == 0, shifted(xp, g, dy, dx, padded), out)
    return xp.where((g == 0) & (out != 0), mark(xp, out), g)


def first_last(xp, lab, key, total):
    """Smallest and largest ``key`` (0..63) of every label (int64 arrays indexed by label, 0 for
    labels without cells)."""
    lo = xp.full(total + 1, 64, dtype=xp.int32)
    hi = xp.full(total + 1, -1, dtype=xp.int32)
    key = key.astype(xp.int32)
    scatter_min(xp, lo, lab, key)
    scatter_max(xp, hi, lab, key)
    return xp.where(lo > 63, 0, lo).astype(xp.int64), xp.maximum(hi, 0).astype(xp.int64)


def object_boxes(xp, g, labels, total):
    """Per label of a labelling of one-colour objects (``label_objects`` with ``by_colour``): its
    colour (g's dtype) and its box's top, bottom, left and right (int64; 0 for labels without cells)."""
    gi, r, c = xp.nonzero(labels)
    lab = labels[gi, r, c].astype(xp.int64)
    colour = xp.zeros(total + 1, dtype=g.dtype)
    colour[lab] = g[gi, r, c]
    top, bottom = first_last(xp, lab, r, total)
    left, right = first_last(xp, lab, c, total)
    return colour, top, bottom, left, right


@primitive(pad="inplace")
def fill_bbox(xp, g):
    """Paint the background inside each object's bounding box with the object's mark.

    Objects are 8-connected and of one colour; where boxes of different colours overlap, the lower
    colour wins.
    """
    n, h, w = g.shape
    labels, owner, sizes, first = label_objects(xp, g, 8, True)
    if kernels.enabled(xp):
        return kernels.fill_boxes(xp, g, labels, first)
    total = owner.shape[0] - 1
    out = g.copy()
    if total == 0:
        return out
    colour, top, bottom, left, right = object_boxes(xp, g, labels, total)
    # Only objects that leave some of their box empty paint anything.
    holed = (bottom - top + 1) * (right - left + 1) > sizes
    holed[0] = False
    ids = xp.nonzero(holed)[0]
    if ids.shape[0] == 0:
        return out
    # Coverage count of the boxes of one colour by a 2-D difference array over (m, h + 1, w + 1),
    # for the m grids that have such objects.
    grids = xp.unique(owner[ids])
    slot = xp.zeros(n, dtype=xp.int64)
    slot[grids] = xp.arange(grids.shape[0])
    m = int(grids.shape[0])
    W1, size = w + 1, m * (h + 1) * (w + 1)
    base = slot[owner[ids]] * (h + 1) * W1
    t, b, lft, rgt = top[ids], bottom[ids] + 1, left[ids], right[ids] + 1
    corners = (base + t * W1 + lft, base + b * W1 + rgt, base + t * W1 + rgt, base + b * W1 + lft)
    sub = out[grids]
    free = sub == 0
    cols = colour[ids]
    for col in sorted(int(v) for v in xp.unique(cols).tolist()):
        sel = cols == col
        plus = xp.concatenate([corners[0][sel], corners[1][sel]])
        minus = xp.concatenate([corners[2][sel], corners[3][sel]])
        diff = xp.bincount(plus, minlength=size) - xp.bincount(minus, minlength=size)
        cover = diff.reshape(m, h + 1, W1).cumsum(axis=1).cumsum(axis=2)[:, :h, :w] > 0
        paint = cover & free
        sub = xp.where(paint, mark(xp, xp.asarray(col)).astype(g.dtype), sub)
        free = free & ~paint
    out[grids] = sub
    return out
