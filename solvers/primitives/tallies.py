"""Grids drawn from counts and orders: colour histograms as bars, an object count as a row or a
diagonal, one-colour bars sorted by length, scattered dots gathered into a square, the colour next to
enclosed or rarest cells as a single cell."""
from __future__ import annotations

from solvers.batch import MAX_SIDE, colour_counts
from solvers.padded import Padded
from solvers.primitives.arrange import colour_column
from solvers.primitives.objects import label_objects
from solvers.primitives.regions import enclosed_background
from solvers.ragged import coords, no_result, per_grid, real_mask, scatter_results
from solvers.xp import stable_argsort
from solvers.registry import primitive


@primitive(layout="padded")
def colour_bars(xp, g, h, w):
    """A histogram of the grid's non-zero colours: one column per colour, most frequent first
    (ties: the lower colour), each as many cells tall as the colour has cells, from the top; the
    grid is as tall as the longest bar. Grids with fewer than two colours, or a bar past 30, give no
    result."""
    column = colour_column(xp, g, h, w, 0)
    order = column.arr[:, :, 0].astype(xp.int64)  # (n, K): the colours, 0 past the last
    counts = colour_counts(xp, g)
    bars = xp.where(order > 0, xp.take_along_axis(counts, order, axis=1), 0)
    tall = bars.max(axis=1) if bars.shape[1] else xp.zeros(g.shape[0], dtype=xp.int64)
    k = column.h.astype(xp.int64)
    rows = max(1, min(MAX_SIDE, int(tall.max()) if g.shape[0] else 1))
    R, _ = coords(xp, rows, 1)
    out = xp.where(R < bars[:, None, :], order[:, None, :].astype(g.dtype), g.dtype.type(0))
    valid = column.valid & (k >= 2) & (tall <= MAX_SIDE)
    return Padded(out, xp.where(valid, tall, 1), xp.where(valid, k, 1), valid)


@primitive((("row",), ("diagonal",)), layout="padded")
def count_objects(xp, g, h, w, shape):
    """The number ``m`` of objects (8-connected non-zero cells, any colours) drawn in the grid's
    most frequent non-zero colour (ties: the lower colour): ``row`` a 1 x m row of it, ``diagonal``
    an m x m grid with it on the main diagonal. Grids with fewer than two objects, or more than 30,
    give no result."""
    n = g.shape[0]
    _, owner, _, _ = label_objects(xp, g, 8, False)
    if owner.shape[0] > 1:
        m = xp.bincount(owner[1:], minlength=n)[:n].astype(xp.int64)
    else:  # no object in the stack (CuPy's bincount takes no empty array)
        m = xp.zeros(n, dtype=xp.int64)
    counts = colour_counts(xp, g)
    counts[:, 0] = -1
    colour = per_grid(counts.argmax(axis=1).astype(g.dtype))
    valid = (m >= 2) & (m <= MAX_SIDE)
    side = max(1, min(MAX_SIDE, int(m.max()) if n else 1))
    mm = per_grid(m)
    if shape == "row":
        R, C = coords(xp, 1, side)
        out = xp.where(C < mm, colour, g.dtype.type(0))
        return Padded(out, xp.ones_like(m), xp.clip(m, 1, MAX_SIDE), valid)
    R, C = coords(xp, side, side)
    out = xp.where((R == C) & (C < mm), colour, g.dtype.type(0))
    return Padded(out, xp.clip(m, 1, MAX_SIDE), xp.clip(m, 1, MAX_SIDE), valid)


@primitive((("right",), ("left",)), layout="padded", keeps_shape=True)
def sort_bars(xp, g, h, w, side):
    """Rows of one-colour bars sorted by length: when every row of the grid is empty or holds one
    unbroken run of one colour (and some row holds one), the rows are reordered by bar length,
    shortest (empty rows) at the top, longest at the bottom (ties keep their order), and each bar
    is pushed against the ``side`` edge. Other grids (or fewer than two bars) give no result."""
    n, H, W = g.shape
    solid = g != 0
    length = solid.sum(axis=2)
    _, C = coords(xp, 1, W)
    first = xp.where(solid, C, W).min(axis=2)
    last = xp.where(solid, C, -1).max(axis=2)
    top = g.max(axis=2)
    low = xp.where(solid, g, g.dtype.type(10)).min(axis=2)
    row_ok = (length == 0) | ((last - first + 1 == length) & (top == low))
    valid = row_ok.all(axis=1) & ((length > 0).sum(axis=1) >= 2)
    R, _ = coords(xp, H, 1)
    real = R[:, :, 0] < h[:, None]
    order = stable_argsort(xp, xp.where(real, length, MAX_SIDE + 1), axis=1)
    bar = xp.take_along_axis(length, order, axis=1)[:, :, None]
    colour = xp.take_along_axis(top, order, axis=1)[:, :, None]
    if side == "right":
        inside = C >= per_grid(w) - bar
    else:
        inside = C < bar
    out = xp.where(inside & real_mask(xp, g, h, w), colour, g.dtype.type(0))
    return Padded(out, h, w, valid)


@primitive((("rows", False), ("columns", False), ("rows", True), ("columns", True)), layout="padded")
def gather_dots(xp, g, h, w, order, snake):
    """Scattered dots gathered into a square: when no two non-zero cells of the grid touch by a
    side, its ``k`` non-zero cells, taken in reading order (``rows``) or column by column, top to
    bottom (``columns``), fill a ceil(sqrt(k)) square row by row from the top left, every second
    row right to left when ``snake``; cells past the k-th are 0. Other grids (touching cells, or
    fewer than two) give no result."""
    solid = g != 0
    touch = (solid[:, 1:, :] & solid[:, :-1, :]).any(axis=(1, 2)) | (solid[:, :, 1:] & solid[:, :, :-1]).any(axis=(1, 2))
    k = solid.sum(axis=(1, 2)).astype(xp.int64)
    s = xp.ceil(xp.sqrt(k.astype(xp.float64))).astype(xp.int64)
    # Few grids are scattered dots: the gathering runs on those only.
    idx = xp.nonzero(~touch & (k >= 2) & (s <= MAX_SIDE))[0]
    if not int(idx.shape[0]):
        return no_result(xp, g)
    return scatter_results(xp, g, h, w, idx, _gather(xp, g[idx], solid[idx], k[idx], s[idx], order, snake))


def _gather(xp, g, solid, k, s, order, snake) -> Padded:
    """:func:`gather_dots` on grids of scattered dots (``solid``: their non-zero cells, ``k`` of
    them, ``s`` the square's side)."""
    n, H, W = g.shape
    R, C = coords(xp, H, W)
    place = (R * W + C) if order == "rows" else (C * H + R)
    key = xp.where(solid, place, H * W).reshape(n, H * W)
    taken = min(H * W, MAX_SIDE * MAX_SIDE)
    idx = stable_argsort(xp, key, axis=1)[:, :taken]
    vals = xp.take_along_axis(g.reshape(n, H * W), idx, axis=1)
    side = max(1, min(MAX_SIDE, int(s.max())))
    Ro, Co = coords(xp, side, side)
    ss = per_grid(s)
    col = xp.where(Ro % 2 == 1, ss - 1 - Co, Co) if snake else Co
    at = xp.broadcast_to(Ro * ss + col, (n, side, side))
    inside = (Ro < ss) & (Co < ss) & (at < per_grid(k))
    out = xp.take_along_axis(vals, xp.clip(at, 0, taken - 1).reshape(n, side * side), axis=1)
    out = xp.where(inside, out.reshape(n, side, side), g.dtype.type(0))
    return Padded(out, s, s, xp.ones(n, dtype=bool))


@primitive((("enclosing",), ("around_rarest",)), layout="padded")
def colour_cell(xp, g, h, w, rule):
    """A 1 x 1 grid of the non-zero colour most frequent among the cells next (by a side) to the
    ``rule``'s cells: ``enclosing``, the background cells that cannot reach the border (the colour
    that encloses them); ``around_rarest``, the cells of the rarest non-zero colour (ties: the lower
    colour; that colour itself not counted). Ties: the lower colour. Grids where no such cell has
    a non-zero neighbour (or ``around_rarest`` with fewer than two colours) give no result."""
    n, H, W = g.shape
    counts = colour_counts(xp, g)
    if rule == "enclosing":
        src = enclosed_background(xp, g)
        rare = xp.zeros(n, dtype=xp.int64)
        enough = xp.ones(n, dtype=bool)
    else:
        present = counts[:, 1:] > 0
        rare = xp.where(present, counts[:, 1:], 1 << 20).argmin(axis=1).astype(xp.int64) + 1
        enough = present.sum(axis=1) >= 2
        src = g == per_grid(rare).astype(g.dtype)
    near = xp.zeros_like(src)
    near[:, 1:, :] |= src[:, :-1, :]
    near[:, :-1, :] |= src[:, 1:, :]
    near[:, :, 1:] |= src[:, :, :-1]
    near[:, :, :-1] |= src[:, :, 1:]
    flat = (g.astype(xp.int64) + (xp.arange(n, dtype=xp.int64) * 10)[:, None, None])[near]
    votes = xp.bincount(flat, minlength=n * 10).reshape(n, 10) if flat.shape[0] else xp.zeros((n, 10), dtype=xp.int64)
    votes[:, 0] = 0
    votes[xp.arange(n), rare] = 0
    best = votes.argmax(axis=1)
    valid = enough & (votes.max(axis=1) > 0)
    one = xp.ones(n, dtype=xp.int64)
    return Padded(best.astype(g.dtype)[:, None, None], one, one, valid)
