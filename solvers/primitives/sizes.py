"""Output sizes: a size rule's size for each grid, and transforms that make a grid that size.

A size rule is a small literal tuple naming how a task's output size follows from its input:

- ``("const", h, w)``: always ``h x w``;
- ``("scale", nh, dh, nw, dw)``: rows times ``nh / dh``, columns times ``nw / dw`` (exact only);
- ``("offset", dh, dw)``: ``dh`` more rows, ``dw`` more columns (negative: fewer);
- ``("transpose",)``: the input's sides swapped;
- ``("content",)``: the bounding box of the non-zero cells;
- ``("largest_object", conn, by_colour)``: the bounding box of the largest object;
- ``("colour_scale",)``: both sides times the number of non-zero colours.

:func:`output_size` gives a blank grid of the rule's size; the size-taking transforms
(:func:`fit_to`, :func:`tile_to`, :func:`mirror_tile_to`, :func:`resample_to`) take such a grid
(any grid: only its sides count) as the size to make, so a program reads
``O = resample_to(x1, output_size(I, ("const", 3, 3)), "majority")``. None is enumerated by the
search: the sizes stage (:mod:`pipeline.search.sizes`) fits the rules on a task's train pairs
and tries the transforms after it.
"""
from __future__ import annotations

from solvers.batch import MAX_SIDE, NUM_COLOURS, bounding_boxes, colour_counts
from solvers.padded import Padded
from solvers.primitives.objects import _by_size
from solvers.ragged import coords, per_grid, remap
from solvers.registry import primitive
from solvers.stack_cache import per_stack

ANCHORS = ("top_left", "top_right", "bottom_left", "bottom_right", "centre")
RESAMPLE_MODES = ("nearest", "majority", "any_colour")


def rule_sides(xp, g, h, w, rule):
    """Per grid of the zero-padded stack ``g`` (real sides ``h``, ``w``): the sides ``rule`` gives
    (int64 arrays), 0 where it gives none. Raises ``ValueError`` for an unknown rule."""
    kind, args = rule[0], tuple(rule[1:])
    h, w = h.astype(xp.int64), w.astype(xp.int64)
    zero = xp.zeros_like(h)
    if kind == "const":
        return zero + int(args[0]), zero + int(args[1])
    if kind == "scale":
        nh, dh, nw, dw = (int(a) for a in args)
        return (xp.where(h * nh % dh == 0, h * nh // dh, 0), xp.where(w * nw % dw == 0, w * nw // dw, 0))
    if kind == "offset":
        return h + int(args[0]), w + int(args[1])
    if kind == "transpose":
        return w, h
    if kind in ("content", "largest_object"):
        if kind == "content":
            mask = g != 0
        else:
            labels, chosen = _by_size(xp, g, int(args[0]), bool(args[1]), largest=True)
            mask = (labels == per_grid(chosen)) & (per_grid(chosen) > 0)
        _, _, hh, ww, has = bounding_boxes(xp, mask)
        return xp.where(has, hh, 0).astype(xp.int64), xp.where(has, ww, 0).astype(xp.int64)
    if kind == "colour_scale":
        k = (colour_counts(xp, g)[:, 1:] > 0).sum(axis=1).astype(xp.int64)
        return h * k, w * k
    raise ValueError(f"output_size: unknown size rule {rule!r}")


def _target(xp, size, n: int):
    """The sides to make, per grid of a stack of ``n``: from a :class:`Padded` (its grids' sides)
    or an array (its last two sides, for every grid); with the most rows and columns to hold
    them (1 to 30)."""
    if isinstance(size, Padded):
        th, tw = size.h.astype(xp.int64), size.w.astype(xp.int64)
    else:
        size = xp.asarray(size)
        th = xp.full(n, int(size.shape[-2]), dtype=xp.int64)
        tw = xp.full(n, int(size.shape[-1]), dtype=xp.int64)
    rows = max(1, min(MAX_SIDE, int(th.max()) if n else 1))
    cols = max(1, min(MAX_SIDE, int(tw.max()) if n else 1))
    return th, tw, rows, cols


def _sized(xp, g, out_h, out_w, rows, cols, src, inside=None) -> Padded:
    """Gather ``g[src(R, C)]`` into grids of ``out_h x out_w`` (0 where ``inside(R, C, src_r,
    src_c)`` is false), ``R`` and ``C`` the output's row and column indices."""
    R, C = coords(xp, rows, cols)
    src_r, src_c = src(R, C)
    res = remap(xp, g, out_h, out_w, rows, cols, src_r, src_c)
    if inside is not None:
        res.arr = xp.where(inside(src_r, src_c), res.arr, g.dtype.type(0))
    return res


@primitive(())  # fitted by the sizes stage, never enumerated
def output_size(xp, g, rule):
    """A blank grid (all 0) of the size the size rule ``rule`` gives for each grid (see the module);
    no result where it gives none, or more than 30 a side."""
    n = g.shape[0]
    th, tw = rule_sides(xp, g, xp.full(n, g.shape[1], dtype=xp.int64), xp.full(n, g.shape[2], dtype=xp.int64), rule)
    ok = (th >= 1) & (tw >= 1) & (th <= MAX_SIDE) & (tw <= MAX_SIDE)
    rows = max(1, min(MAX_SIDE, int(th.max()) if n else 1))
    cols = max(1, min(MAX_SIDE, int(tw.max()) if n else 1))
    return Padded(xp.zeros((n, rows, cols), dtype=g.dtype), xp.clip(th, 1, MAX_SIDE), xp.clip(tw, 1, MAX_SIDE), ok)


@primitive((), layout="padded")
def fit_to(xp, g, h, w, size, anchor):
    """Crop or pad (with 0) each grid to the sides of ``size``, keeping the corner or the centre
    ``anchor`` names (one of :data:`ANCHORS`) in place."""
    if anchor not in ANCHORS:
        raise ValueError(f"fit_to: anchor must be one of {ANCHORS}, not {anchor!r}")
    th, tw, rows, cols = _target(xp, size, g.shape[0])
    dr = {"top": 0 * h, "bottom": h - th, "centre": (h - th) // 2}[anchor.split("_")[0]]
    dc = {"left": 0 * w, "right": w - tw, "centre": (w - tw) // 2}[anchor.split("_")[-1]]
    return _sized(xp, g, th, tw, rows, cols, lambda R, C: (R + per_grid(dr), C + per_grid(dc)),
                  lambda r, c: (r >= 0) & (r < per_grid(h)) & (c >= 0) & (c < per_grid(w)))


@primitive((), layout="padded")
def tile_to(xp, g, h, w, size):
    """Repeat each grid across and down to the sides of ``size`` (the last copies cut off)."""
    th, tw, rows, cols = _target(xp, size, g.shape[0])
    return _sized(xp, g, th, tw, rows, cols, lambda R, C: (R % per_grid(h), C % per_grid(w)))


@primitive((), layout="padded")
def mirror_tile_to(xp, g, h, w, size):
    """Repeat each grid across and down to the sides of ``size``, every other copy mirrored (so
    neighbouring copies meet edge to edge as in a mirror)."""
    th, tw, rows, cols = _target(xp, size, g.shape[0])
    hh, ww = per_grid(h), per_grid(w)

    def src(R, C):
        r, c = R % (2 * hh), C % (2 * ww)
        return xp.where(r < hh, r, 2 * hh - 1 - r), xp.where(c < ww, c, 2 * ww - 1 - c)
    return _sized(xp, g, th, tw, rows, cols, src)


def _colour_prefix_sums(xp, g):
    """Per grid of the stack ``g`` (n, H, W) and colour: the 2-D prefix sums of its cells of that
    colour, (n, H + 1, W + 1, colours) int16 (a grid has at most 900 cells)."""
    n, H, W = g.shape
    cells = g[..., None] == xp.arange(NUM_COLOURS, dtype=g.dtype)
    sums = xp.zeros((n, H + 1, W + 1, NUM_COLOURS), dtype=xp.int16)
    sums[:, 1:, 1:] = cells.astype(xp.int16).cumsum(axis=1, dtype=xp.int16).cumsum(axis=2, dtype=xp.int16)
    return sums


@primitive((), layout="padded")
def resample_to(xp, g, h, w, size, mode):
    """Scale each grid to the sides of ``size``: output cell (r, c) reads the block of input rows
    ``r*h//H`` to ``(r+1)*h//H`` (at least one row; columns alike). ``mode`` (one of
    :data:`RESAMPLE_MODES`): ``"nearest"`` takes the block's first cell, ``"majority"`` its most
    frequent colour, ``"any_colour"`` its most frequent non-zero colour (0 where it has none);
    ties go to the smaller colour."""
    if mode not in RESAMPLE_MODES:
        raise ValueError(f"resample_to: mode must be one of {RESAMPLE_MODES}, not {mode!r}")
    n, H, W = g.shape
    th, tw, rows, cols = _target(xp, size, n)
    R, C = coords(xp, rows, cols)
    hh, ww, TH, TW = per_grid(h), per_grid(w), per_grid(xp.maximum(th, 1)), per_grid(xp.maximum(tw, 1))
    top, left = R * hh // TH, C * ww // TW
    if mode == "nearest":
        return _sized(xp, g, th, tw, rows, cols, lambda R, C: (top, left))
    bottom = xp.minimum(xp.maximum(top + 1, (R + 1) * hh // TH), H)
    right = xp.minimum(xp.maximum(left + 1, (C + 1) * ww // TW), W)
    top, left = xp.minimum(top, H), xp.minimum(left, W)
    # Per colour, the cells of each block from 2-D prefix sums (a block lies inside its grid).
    sums = per_stack(g, ("colour prefix sums",), lambda: _colour_prefix_sums(xp, g))
    corners = xp.stack([xp.broadcast_to(r * (W + 1) + c, (n, rows, cols))
                        for r, c in ((bottom, right), (top, right), (bottom, left), (top, left))])
    at = sums.reshape(n, -1, NUM_COLOURS)[xp.arange(n)[None, :, None, None], corners]
    counts = at[0] - at[1] - at[2] + at[3]  # (n, rows, cols, colours)
    if mode == "any_colour":
        counts[..., 0] = xp.where(counts[..., 1:].max(axis=-1) > 0, -1, counts[..., 0])
    colour = counts.argmax(axis=-1).astype(g.dtype)
    ok = (th >= 1) & (tw >= 1) & (th <= MAX_SIDE) & (tw <= MAX_SIDE)
    return Padded(xp.where((R < per_grid(th)) & (C < per_grid(tw)), colour, g.dtype.type(0)), th, tw, ok)
