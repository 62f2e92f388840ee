"""Grids of different shapes in one zero-padded stack, with per-grid sides ``h`` and ``w``.

Primitives with ``layout="padded"`` take ``(g, h, w)``: grid ``i`` is ``g[i, :h[i], :w[i]]`` and
every cell outside it is 0. They describe their result as a coordinate map (for every output cell,
which input cell it reads) and :func:`remap` turns that into one gather over the whole stack, so
a batch of many shapes costs a handful of array calls on the CPU and a few kernels on the GPU.
A stack of one shape is the special case of constant ``h`` and ``w``.
"""
from __future__ import annotations

import functools

from solvers import kernels
from solvers.batch import MAX_SIDE
from solvers.coord_maps import COORD_MAPS
from solvers.padded import Padded
from solvers.xp import stable_argsort


def coords(xp, rows: int, cols: int):
    """Row and column index grids of shapes (1, rows, 1) and (1, 1, cols), made once per device
    (a search asks for the same few dozens of times per transform; callers must not modify them)."""
    device = xp.cuda.Device().id if hasattr(xp, "cuda") else None
    return _coords(xp, rows, cols, device)


@functools.lru_cache(maxsize=4096)
def _coords(xp, rows: int, cols: int, device):
    R, C = xp.arange(rows)[None, :, None], xp.arange(cols)[None, None, :]
    if xp.__name__ == "numpy":
        R.flags.writeable = C.flags.writeable = False  # NumPy: a caller writing to them fails loudly
    return R, C


def per_grid(v):
    """Per-grid values shaped to broadcast against (n, rows, cols)."""
    return v[:, None, None]


def remap(xp, g, out_h, out_w, rows: int, cols: int, src_r, src_c, valid=None) -> Padded:
    """Gather ``out[i, r, c] = g[i, src_r, src_c]`` inside each grid's output box ``out_h x out_w``.

    ``rows``/``cols`` bound the output stack (at most 30); grids whose output is empty or larger
    than 30 on a side, or where ``valid`` is false, have no result.
    """
    n, H, W = g.shape
    rows, cols = max(1, min(MAX_SIDE, rows)), max(1, min(MAX_SIDE, cols))
    R, C = coords(xp, rows, cols)
    if kernels.enabled(xp) and g.dtype == xp.uint8:
        ok = xp.broadcast_to(kernels.remap_ok(xp, out_h, out_w, valid), (n,))
        return Padded(kernels.remap(xp, g, out_h, out_w, R, C, src_r, src_c), out_h, out_w, ok)
    ok = (out_h >= 1) & (out_w >= 1) & (out_h <= MAX_SIDE) & (out_w <= MAX_SIDE)
    if valid is not None:
        ok = ok & valid
    inside = (R < per_grid(out_h)) & (C < per_grid(out_w))
    # Clip the sources before they broadcast (they are usually per row or per column), then take
    # from the flat stack with one index array.
    flat = (xp.arange(n)[:, None, None] * H + xp.clip(src_r, 0, H - 1)) * W + xp.clip(src_c, 0, W - 1)
    vals = xp.take(xp.ascontiguousarray(g).reshape(-1), xp.broadcast_to(flat, (n, rows, cols)))
    return Padded(xp.where(inside, vals, g.dtype.type(0)), out_h, out_w, ok)


def map_coords(xp, g, out_h, out_w, rows: int, cols: int, src, valid=None) -> Padded:
    """:func:`remap` with the source given as ``src(R, C) -> (src_r, src_c)`` over the output's
    row and column index grids (``rows``/``cols`` are clipped to 1..30)."""
    rows, cols = max(1, min(MAX_SIDE, rows)), max(1, min(MAX_SIDE, cols))
    R, C = coords(xp, rows, cols)
    src_r, src_c = src(R, C)
    return remap(xp, g, out_h, out_w, rows, cols, src_r, src_c, valid)


def apply_coord_map(xp, g, h, w, name: str, a: int = 0, b: int = 0) -> Padded:
    """The coordinate map ``name`` of :data:`solvers.coord_maps.COORD_MAPS`, with arguments ``a``,
    ``b``, on a zero-padded stack ``g`` with real sides ``h``, ``w``."""
    m = COORD_MAPS[name]
    n, H, W = g.shape
    out_h, out_w = m.sides(h, w, a, b)
    rows, cols = m.sides(H, W, a, b)
    hh, ww = per_grid(h), per_grid(w)
    return map_coords(xp, g, out_h, out_w, rows, cols, lambda R, C: m.source(R, C, hh, ww, a, b),
                      valid=m.is_valid(h, w, a, b))


def no_result(xp, g) -> Padded:
    """A result in which no grid of the stack ``g`` has an output."""
    n = g.shape[0]
    one = xp.ones(n, dtype=xp.int64)
    return Padded(xp.zeros((n, 1, 1), dtype=g.dtype), one, one, xp.zeros(n, dtype=bool))


def scatter_results(xp, g, h, w, idx, res: Padded) -> Padded:
    """The results ``res`` of the grids ``idx`` of the stack ``g`` (real sides ``h``, ``w``) as a
    result for the whole stack: the other grids have none."""
    n = g.shape[0]
    arr = xp.zeros((n,) + res.arr.shape[1:], dtype=g.dtype)
    arr[idx] = res.arr
    out_h, out_w, valid = h.copy(), w.copy(), xp.zeros(n, dtype=bool)
    out_h[idx], out_w[idx], valid[idx] = res.h, res.w, res.valid
    return Padded(arr, out_h, out_w, valid)


def real_mask(xp, g, h, w):
    """True on each grid's own cells, False on its padding."""
    R, C = coords(xp, g.shape[1], g.shape[2])
    return (R < per_grid(h)) & (C < per_grid(w))


def same_shape(xp, g, h, w, out) -> Padded:
    """A result of the input's shapes (``out`` already 0 on the padding)."""
    return Padded(out, h, w, xp.ones(g.shape[0], dtype=bool))


def keep_lines(xp, g, h, w, keep) -> Padded:
    """Keep the rows where ``keep`` (n, H) is true, in order (rows of padding are never kept)."""
    R, _ = coords(xp, g.shape[1], 1)
    keep = keep & (R[:, :, 0] < h[:, None])
    order = stable_argsort(xp, ~keep, axis=1)
    moved = xp.take_along_axis(g, order[:, :, None], axis=1)
    new_h = keep.sum(axis=1)
    rows_in = R < per_grid(new_h)
    return Padded(xp.where(rows_in, moved, g.dtype.type(0)), new_h, w, new_h > 0)


def transposed(p: Padded) -> Padded:
    """Swap rows and columns of a padded result."""
    return Padded(p.arr.transpose(0, 2, 1), p.w, p.h, p.valid)
