"""Lines drawn relative to objects: full lines through the centres of a few objects, the elbow
path that joins two single cells, and the cells where single cells' rays hit an object.

Each gives no result on grids where its rule does not apply (nothing to draw), so it adds few
states to a search.
"""
from __future__ import annotations

from solvers.primitives.draw import object_boxes
from solvers.primitives.objects import label_objects
from solvers.primitives.reach import _nearest_code
from solvers.ragged import Padded, coords, per_grid, real_mask
from solvers.registry import primitive
from solvers.stack_cache import per_stack
from solvers.xp import scatter_max

COLOURS = tuple(range(1, 10))
MOST_OBJECTS = 4


def _last_per_key(xp, key, value, size):
    """An array of ``size`` with, at each ``key``, the largest ``value`` (0..15) given it (0: none)."""
    out = xp.zeros(size, dtype=xp.int32)  # CuPy's scatter max takes no int64
    if key.shape[0]:
        scatter_max(xp, out, key, value.astype(xp.int32))
    return out.astype(xp.int64)


def _centre_lines(xp, g, h, w):
    """:func:`centre_lines`' row and column lines (each line's highest object colour, 0: none) and
    the cells it paints, on the grids that hold one to four objects; the same for every colour."""
    n, H, W = g.shape
    labels, owner, sizes, _ = label_objects(xp, g, 8, True)
    total = owner.shape[0] - 1
    count = xp.bincount(owner[1:], minlength=n)[:n] if total else xp.zeros(n, dtype=xp.int64)
    ok = (count >= 1) & (count <= MOST_OBJECTS)
    colour, top, bottom, left, right = object_boxes(xp, g, labels, total)
    colour = colour.astype(xp.int64)
    ids = xp.arange(1, total + 1)
    use = ok[owner[ids]]
    own, col = owner[ids], colour[ids]
    odd_h = use & ((bottom[ids] - top[ids]) % 2 == 0)
    odd_w = use & ((right[ids] - left[ids]) % 2 == 0)
    rows = _last_per_key(xp, (own * H + (top[ids] + bottom[ids]) // 2)[odd_h], col[odd_h], n * H).reshape(n, H)
    cols = _last_per_key(xp, (own * W + (left[ids] + right[ids]) // 2)[odd_w], col[odd_w], n * W).reshape(n, W)
    hor, ver = rows[:, :, None], cols[:, None, :]
    paint = (g == 0) & real_mask(xp, g, h, w) & ((hor > 0) | (ver > 0)) & ok[:, None, None]
    return hor, ver, paint, paint.any(axis=(1, 2))


CENTRE_LINES = tuple((mode, c) for mode in ("one", "own") for c in COLOURS)


@primitive(CENTRE_LINES, layout="padded", keeps_shape=True)
def centre_lines(xp, g, h, w, mode, c):
    """Draw full lines over the background through the centres of the objects (8-connected, one
    colour) of grids that hold one to four of them: an object whose bounding box has an odd
    height gives the whole row through its middle, one with an odd width the whole column through
    its middle (a one-cell object both; a straight segment only the line along it). ``mode``
    ``one``: every line cell painted ``c``; ``own``: a cell on a row line only or a column line only
    takes its object's colour (several: the highest), a cell on both kinds ``c``. Grids with no
    object, more than four or nothing to paint give no result."""
    hor, ver, paint, valid = per_stack(g, ("centre lines",), lambda: _centre_lines(xp, g, h, w))
    if mode == "one":
        value = g.dtype.type(c)
    else:
        value = xp.where((hor > 0) & (ver > 0), c, xp.maximum(hor, ver)).astype(g.dtype)
    out = xp.where(paint, value, g)
    return Padded(xp.where(valid[:, None, None], out, g.dtype.type(0)), h, w, valid)


def _elbow_path(xp, g, corner):
    """:func:`elbow`'s path cells and the grids that have one; the same for every colour."""
    n, H, W = g.shape
    labels, _, sizes, _ = label_objects(xp, g, 8, True)
    dot = (labels > 0) & (sizes[labels] == 1)
    gi, r, cc = xp.nonzero(dot)
    count = xp.bincount(gi, minlength=n)[:n] if gi.shape[0] else xp.zeros(n, dtype=xp.int64)
    colour = g[gi, r, cc].astype(xp.int64)
    order = xp.argsort(gi * 16 + colour)
    gi, r, cc, colour = gi[order], r[order], cc[order], colour[order]
    # The lower-colour single cell of a grid with two comes first, the higher one right after it.
    start = xp.cumsum(count) - count
    two = count == 2
    lo = xp.where(two, start, 0)
    hi = xp.where(two, start + 1, 0)
    if gi.shape[0] == 0:
        return xp.zeros(g.shape, dtype=bool), xp.zeros(n, dtype=bool)
    lo, hi = xp.minimum(lo, gi.shape[0] - 1), xp.minimum(hi, gi.shape[0] - 1)
    two = two & (colour[lo] != colour[hi])
    first, second = (lo, hi) if corner == "low" else (hi, lo)
    ra, ca, rb, cb = (per_grid(v) for v in (r[first], cc[first], r[second], cc[second]))
    R, C = coords(xp, H, W)
    along_row = (R == ra) & (C >= xp.minimum(ca, cb)) & (C <= xp.maximum(ca, cb))
    along_col = (C == cb) & (R >= xp.minimum(ra, rb)) & (R <= xp.maximum(ra, rb))
    path = (along_row | along_col) & (g == 0) & per_grid(two)
    return path, path.any(axis=(1, 2))


ELBOWS = tuple((c, corner) for corner in ("low", "high") for c in COLOURS)


@primitive(ELBOWS, layout="padded", keeps_shape=True)
def elbow(xp, g, h, w, c, corner):
    """Join the two single cells (one-cell objects, 8-connected, one colour) of a grid that has
    exactly two, of different colours, by a path of ``c`` over the background: along the row of one
    to the column of the other, then along that column to it (``low``: along the row of the one of
    the lower colour; ``high``: of the higher colour). Grids with another number of single cells,
    two of one colour, or no background on the path give no result."""
    path, valid = per_stack(g, ("elbow", corner), lambda: _elbow_path(xp, g, corner))
    out = xp.where(path, g.dtype.type(c), g)
    return Padded(xp.where(valid[:, None, None], out, g.dtype.type(0)), h, w, valid)


@primitive(layout="padded", keeps_shape=True)
def dot_hits(xp, g, h, w):
    """Paint the colour of each single cell (a one-cell object, 8-connected, one colour) onto the
    cell of a larger object (an anchor) nearest to it along its row or column with only background
    between: the cell where a ray from the single cell would hit the anchor. Where several hit one
    cell, the first in the order from above, below, left, right. Grids where no single cell faces an
    anchor give no result."""
    n = g.shape[0]
    labels, _, sizes, _ = label_objects(xp, g, 8, True)
    dot = (sizes[labels] == 1) & (labels > 0)
    anchor = (labels > 0) & ~dot
    code = xp.where(dot, g.astype(xp.int16) + 10, g.astype(xp.int16))
    out = g
    hit = xp.zeros(g.shape, dtype=bool)
    for axis in (1, 2):
        for reverse in (False, True):
            near = _nearest_code(xp, code, axis, reverse)
            now = anchor & ~hit & (near >= 10)
            out = xp.where(now, (near - 10).astype(g.dtype), out)
            hit |= now
    valid = hit.any(axis=(1, 2))
    return Padded(xp.where(valid[:, None, None], out, g.dtype.type(0)), h, w, valid)

