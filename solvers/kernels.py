"""CUDA kernels of the DSL's primitives, for the few steps that are slow as array calls on a GPU.

The DSL is written once in array calls (NumPy or CuPy). Measured on an H100 on a real depth-3
search block (``benchmarks/primitive_costs.py``), a few steps cost far more on the GPU than their
work: gravity ran as sorts over int64 temporaries, objects as CuPy's general-purpose labelling
followed by sorts over every object cell, colour counts as a bincount over int64 keys.
Here each of those is one small kernel: a thread per line of a grid, a warp or a thread block per
grid working in shared memory. (Whole primitives fused into one kernel each are in
:mod:`solvers.fused`.) The coordinate-map gather that many geometric primitives share (``remap``)
broadcasts its sources instead of building int64 index stacks; running sums and sums to one
number (``cumsum``, ``sum_into``) avoid CUB's modules. Each function gives exactly what its
array-call version in the DSL gives (the GPU tests compare them); the primitives call it only when
:func:`enabled` says so, and the CPU always runs the array calls.

Set ``ARCBATT_NO_KERNELS=1`` to run the array-call versions on the GPU too (tests, benchmarks).
"""
from __future__ import annotations

import functools
from pathlib import Path
import os

import numpy as np

# Row and column of a cell index k < 1024 in a grid w <= 64 wide (every grid here: at most 30 x 30,
# 32 x 32 framed) by a multiply and a shift, m = ceil(2^16 / w), instead of a division: exact there
# (k * (m * w - 2^16) < 2^16). The division giving m is the same for every cell, so the compiler
# takes it out of the loops. Shared by the sources of this module and solvers.fused.
CELL_INDEX = r"""
__device__ __forceinline__ int cell_row(int k, int w) {
    return (int)(((unsigned int)k * ((65535u + (unsigned int)w) / (unsigned int)w)) >> 16);
}
__device__ __forceinline__ int cell_col(int k, int w) { return k - cell_row(k, w) * w; }
"""

# A block's labelling of the grid it holds in shared memory (``object_roots``, ``slide_to_colour``):
# on entry lab[k] is k on object cells (col[k] != 0) and above every index elsewhere; on return each
# object cell holds the lowest cell index of its object (4 or 8 neighbours; of one colour when
# by_colour). Every thread of the block must call it.
LABEL_SHARED = CELL_INDEX + r"""
__device__ __forceinline__ void label_shared(const unsigned char* col, int* lab, int H, int W, int conn, int by_colour) {
    int cells = H * W, t = threadIdx.x;
    while (true) {
        int changed = 0;
        for (int k = t; k < cells; k += blockDim.x) {
            unsigned char v = col[k];
            if (!v) continue;
            int y = cell_row(k, W), x = cell_col(k, W), best = lab[k];
            for (int dy = -1; dy <= 1; ++dy) {
                for (int dx = -1; dx <= 1; ++dx) {
                    if ((dy == 0 && dx == 0) || (conn == 4 && dy != 0 && dx != 0)) continue;
                    int yy = y + dy, xx = x + dx;
                    if (yy < 0 || yy >= H || xx < 0 || xx >= W) continue;
                    int nb = yy * W + xx;
                    if (col[nb] == 0 || (by_colour && col[nb] != v)) continue;
                    int lv = lab[nb];
                    if (lv < best) best = lv;
                }
            }
            if (best < lab[k]) { lab[k] = best; changed = 1; }
        }
        __syncthreads();
        // Pointer jumping: a label is the index of a cell of the same object, whose own label is
        // no larger; following them shortens chains (few rounds instead of one per cell of path).
        for (int k = t; k < cells; k += blockDim.x) {
            if (!col[k]) continue;
            int l = lab[k], m = lab[l];
            while (m < l) { l = m; m = lab[l]; }
            if (l < lab[k]) { lab[k] = l; changed = 1; }
        }
        if (!__syncthreads_or(changed)) break;
    }
}
"""

# The kernels' CUDA source is kernels.cu beside this file.
_SOURCE = LABEL_SHARED + "\n" + Path(__file__).with_name("kernels.cu").read_text()

_THREADS = 256


def source() -> str:
    """The CUDA source of this module's kernels, as it is compiled."""
    return _SOURCE


def enabled(xp) -> bool:
    """True when ``xp`` is CuPy and the kernels are not switched off (``ARCBATT_NO_KERNELS``)."""
    return xp is not np and os.environ.get("ARCBATT_NO_KERNELS", "") in ("", "0")


@functools.lru_cache(maxsize=None)
def _module():
    """All kernels of this module as one compiled module (compiled, or loaded from CuPy's disk
    cache, once per process and device context)."""
    import cupy

    return cupy.RawModule(code=source(), options=("-std=c++14",))


@functools.lru_cache(maxsize=None)
def _kernel(name: str):
    return _module().get_function(name)


def preload() -> None:
    """Load the compiled kernels now (on the current GPU), so a search does not wait for it."""
    _module()


# Fused elementwise kernels (CuPy ElementwiseKernel arguments), compiled on first use.
_ELEMENTWISE = {
    "remap_ok": ("int64 h, int64 w, bool valid", "bool ok", "ok = valid && h >= 1 && w >= 1 && h <= 30 && w <= 30"),
    # objects.keep_largest_object / remove_largest_object: cells of the chosen label c kept (others
    # erased), or erased (c > 0), in one pass over the int32 labels.
    "keep_label": ("int32 lab, int64 c, uint8 g", "uint8 out", "out = lab == c ? g : (unsigned char)0"),
    "erase_label": ("int32 lab, int64 c, uint8 g", "uint8 out", "out = (lab == c && lab > 0) ? (unsigned char)0 : g"),
}


@functools.lru_cache(maxsize=None)
def _elementwise(name: str):
    import cupy

    params, out, body = _ELEMENTWISE[name]
    return cupy.ElementwiseKernel(params, out, body, "arcbatt_" + name)


def remap(xp, g, out_h, out_w, R, C, src_r, src_c):
    """The gather of ``ragged.remap`` in one kernel: ``out[i, r, c] = g[i, src_r, src_c]`` (sources
    clipped into the stack) inside each grid's ``out_h`` x ``out_w`` box, 0 outside. ``R``, ``C``
    are the output's row and column index grids (they give its shape); the sources and sides
    broadcast against it and are read through their strides, so no per-cell index array is built.
    A warp per grid stages the grid in shared memory (at most 1024 cells)."""
    g = xp.ascontiguousarray(g)
    n, H, W = g.shape
    rows, cols = int(R.shape[1]), int(C.shape[2])
    if H * W > 1024:
        raise ValueError(f"grids up to 1024 cells, got {H}x{W}")
    out = xp.empty((n, rows, cols), dtype=g.dtype)
    if out.size == 0:
        return out
    args = []
    for v, shape in ((src_r, (n, rows, cols)), (src_c, (n, rows, cols)), (out_h, (n,)), (out_w, (n,))):
        v = xp.broadcast_to(xp.asarray(v, dtype=xp.int64), shape)
        args.append(v)
        args.extend(np.int64(st // 8) for st in v.strides)
    _kernel("remap")(((n + 7) // 8,), (256,), (g, np.int32(H), np.int32(W), np.int32(rows), np.int32(cols),
                                              np.int64(n), *args, out))
    return out


def remap_ok(xp, out_h, out_w, valid):
    """Which grids of ``ragged.remap`` have a result: output sides in 1..30 and ``valid`` (None:
    all), in one launch instead of seven."""
    as64 = (lambda v: v if isinstance(v, int) else xp.asarray(v, dtype=xp.int64))
    return _elementwise("remap_ok")(as64(out_h), as64(out_w), True if valid is None else valid)


def colour_counts(xp, g):
    """``batch.colour_counts`` in one kernel: (n, 10) int64 counts of each colour per grid."""
    g = xp.ascontiguousarray(g)
    n = g.shape[0]
    cells = g.size // n if n else 0
    if cells > 2016:  # 6-bit fields per lane hold 63 cells
        raise ValueError(f"grids up to 2016 cells, got {cells}")
    out = xp.zeros((n, 10), dtype=xp.int64)
    if n and cells:
        _kernel("colour_counts")(((n * 32 + _THREADS - 1) // _THREADS,), (_THREADS,),
                                 (g, np.int64(n), np.int32(cells), out))
    return out


def thread_launch(total: int):
    """Grid and block sizes for a kernel with one thread per item, ``total`` items."""
    return ((total + _THREADS - 1) // _THREADS,), (_THREADS,)


def per_grid_arg(xp, v, n: int):
    """``v`` (one value, or one per grid) as a contiguous int64 array of ``n`` values, as the
    kernels read per-grid arguments."""
    return xp.ascontiguousarray(xp.broadcast_to(xp.asarray(v, dtype=xp.int64), (n,)))


def line_compact(xp, g, h, w, axis: int, to_end: bool):
    """Gravity on a zero-padded stack with real sides ``h``, ``w``: in every real line along
    ``axis``, the non-zero cells keep their order and move to its end (``to_end``) or start."""
    g = xp.ascontiguousarray(g)
    n, H, W = g.shape
    out = xp.empty_like(g)
    if g.size:
        h, w = per_grid_arg(xp, h, n), per_grid_arg(xp, w, n)
        grid, block = thread_launch(n * (W if axis == 1 else H))
        _kernel("line_compact")(grid, block, (g, out, np.int64(n), np.int32(H), np.int32(W), h, w,
                                              np.int32(axis), np.int32(bool(to_end))))
    return out


def enclosed_background(xp, g):
    """True on the background (0) cells of each grid of ``g`` that cannot reach its border through
    background cells (4-connected)."""
    g = xp.ascontiguousarray(g)
    n, H, W = g.shape
    inner = xp.zeros(g.shape, dtype=xp.uint8)
    if n and H and W:
        if H > 30 or W > 30:  # a thread per line of the framed grid, 32 of each
            raise ValueError(f"grids up to 30x30, got {H}x{W}")
        _kernel("enclosed_background")((n,), (64,),
                                       (g, inner, np.int32(H), np.int32(W)))
    return inner.view(xp.bool_)


def object_roots(xp, g, conn: int, by_colour: bool):
    """Objects of every grid of the uint8 stack ``g`` numbered within their grid, in one kernel and
    with no wait: ``(local, size, objects, picks)``: per cell its object's number in its grid (1,
    2, ... in reading order of the objects' first cells; 0: background) and on each object's first
    cell its size (0 elsewhere), both (n, H, W) int32; per grid its count of objects, and the
    numbers of its largest and smallest objects ((n, 2) int64; ties: the first in reading order;
    0: none). Comparisons within a grid (an object's cells, a crop to it) need no more."""
    g = xp.ascontiguousarray(g)
    n, H, W = g.shape
    local = xp.empty(g.shape, dtype=xp.int32)
    size = xp.empty(g.shape, dtype=xp.int32)
    objects = xp.zeros(n, dtype=xp.int32)
    picks = xp.zeros((n, 2), dtype=xp.int64)
    if g.size:
        _kernel("object_roots")((n,), (loop_threads(H * W),),
                                (g, local, size, objects, picks, np.int32(H), np.int32(W), np.int32(conn),
                                 np.int32(bool(by_colour))))
    return local, size, objects, picks


def label_objects(xp, g, conn: int, by_colour: bool, roots=None):
    """Objects of every grid of the uint8 stack ``g``, as ``objects.label_objects`` returns them:
    ``labels`` (n, H, W) int32 and, per label, ``owner``, ``sizes`` and ``first`` (see there);
    then ``chosen`` (n, 2) int64: per grid the label of its largest and of its smallest object
    (ties: the first in reading order; 0: none), as ``objects.pick_per_grid`` picks them.
    ``roots``: :func:`object_roots` of ``g``, when made already.

    Labels are numbered in reading order of each object's first cell over the stack (the array-call
    version numbers them by grid and colour; no primitive depends on the numbering). Two kernels:
    :func:`object_roots`, then one that numbers the objects across the stack from the running
    count (no pass over every cell to find the objects' first cells, none to pick them), after a
    wait for how many there are (to size the per-label arrays).
    """
    g = xp.ascontiguousarray(g)
    n, H, W = g.shape
    cells = H * W
    local, size, objects, picks = object_roots(xp, g, conn, by_colour) if roots is None else roots
    base = cumsum(xp, objects, exclusive=True)
    total = int(base[-1] + objects[-1]) if n else 0
    labels = xp.zeros(g.shape, dtype=xp.int32)
    owner = xp.zeros(total + 1, dtype=xp.int64)
    first = xp.zeros(total + 1, dtype=xp.int64)
    sizes = xp.zeros(total + 1, dtype=xp.int64)
    chosen = xp.zeros((n, 2), dtype=xp.int64)
    if g.size:
        grid, block = thread_launch(n * cells)
        _kernel("number_objects")(grid, block, (local, size, base, picks, labels, owner, first, sizes,
                                                chosen, np.int64(n * cells), np.int32(cells)))
    sizes[0] = n * cells
    sum_into(xp, sizes[1:], sizes[:1], negate=True)  # the background: every cell not in an object
    return labels, owner, sizes, first, chosen


def sum_into(xp, x, out, negate: bool = False) -> None:
    """``out[0] += x.sum()`` (``-=`` when ``negate``) on the device, in one kernel, for a 1-D
    contiguous bool or int64 ``x`` and an int64 ``out``. CuPy's own reduction to one number runs
    in one thread block (slow on millions of values), CUB's loads a large module on first use."""
    n = int(x.shape[0])
    if n == 0:
        return
    name = {"bool": "count_into", "int64": "sum_int64_into"}[x.dtype.name]
    blocks = min(1024, (n + 255) // 256)
    _kernel(name)((blocks,), (256,), (xp.ascontiguousarray(x), np.int64(n), np.int64(-1 if negate else 1),
                                          out.view(xp.uint64)))


_SCAN_BLOCK = 256 * 4  # values per block of the scan kernels (SCAN_THREADS * SCAN_ITEMS)
# Up to this many blocks, each block sums the totals of those before it (two launches in all);
# past it their totals are scanned first (recursively).
SCAN_SUMMED_BLOCKS = 4096


def cumsum(xp, x, exclusive: bool = False):
    """``xp.cumsum(x)`` of a 1-D bool, int32 or int64 array, as int64 (with ``exclusive``, each
    value's sum of those before it: ``cumsum(x) - x``). On a GPU with the kernels, one launch of
    this module's up to 1,024 values, two up to about four million (CuPy's cumsum costs about 80 us
    of host time per call and loads CUB's scan kernels, per type, in a process's first search)."""
    if not enabled(xp) or x.ndim != 1 or x.dtype.name not in ("bool", "int32", "int64"):
        out = xp.cumsum(x, dtype=xp.int64)
        return out - x if exclusive else out
    n = int(x.shape[0])
    out = xp.empty(n, dtype=xp.int64)
    if n == 0:
        return out
    x = xp.ascontiguousarray(x)
    blocks = -(-n // _SCAN_BLOCK)
    offsets, mode = out, 0  # one block reads no offsets
    if blocks > 1:
        offsets = xp.empty(blocks, dtype=xp.int64)
        _kernel("scan_sums_" + x.dtype.name)((blocks,), (256,), (x, np.int64(n), offsets))
        mode = 1
        if blocks > SCAN_SUMMED_BLOCKS:
            offsets, mode = cumsum(xp, offsets), 2
    _kernel("scan_apply_" + x.dtype.name)((blocks,), (256,), (x, np.int64(n), offsets, np.int32(mode),
                                                              np.int32(bool(exclusive)), out))
    return out


def fill_boxes(xp, g, labels, first):
    """``draw.fill_bbox`` from the stack's 8-connected one-colour objects (``labels``, ``first`` as
    ``objects.label_objects`` gives them)."""
    g = xp.ascontiguousarray(g)
    n, H, W = g.shape
    out = xp.empty_like(g)
    if g.size:
        _kernel("fill_boxes")((n,), (block_threads(H * W),),
                              (g, xp.ascontiguousarray(labels), xp.ascontiguousarray(first), out,
                               np.int32(H), np.int32(W)))
    return out


def block_threads(cells: int) -> int:
    """Threads for a block-per-grid kernel with a thread per cell of ``cells``: a multiple of 32,
    at most 1024."""
    if cells > 1024:
        raise ValueError(f"grids up to 30x30 (with a frame: 1024 cells), got {cells} cells")
    return max(32, (cells + 31) // 32 * 32)


# Threads of a block-per-grid kernel that loops over its grid's cells. A thread per cell of a
# 30 x 30 grid (928) leaves an SM two grids at a time, each block idle in its serial parts.
LOOP_THREADS = 256


def loop_threads(cells: int, least: int = 32) -> int:
    """Threads for a block-per-grid kernel that loops over the ``cells`` cells of its grid: one per
    cell up to :data:`LOOP_THREADS`, and at least ``least`` (what its own serial parts need)."""
    return max(least, min(block_threads(cells), LOOP_THREADS))


def keep_label(xp, labels, chosen, g, keep: bool):
    """``where(labels == chosen[i], g, 0)`` (``keep``) or ``where((labels == chosen[i]) & (labels >
    0), 0, g)`` over an (n, H, W) stack, ``chosen`` (n,), in one launch."""
    per_grid = xp.asarray(chosen, dtype=xp.int64)[:, None, None]
    return _elementwise("keep_label" if keep else "erase_label")(labels, per_grid, g)

