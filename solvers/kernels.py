"""CUDA kernels for the few steps that are slow as array calls on a GPU.

The DSL is written once in array calls (NumPy or CuPy). Measured on an H100 on a real depth-3
search block (``benchmarks/primitive_costs.py``), a few steps cost far more on the GPU than their
work: scans along the lines of a grid (gravity, rays, lines between pixels) ran as sorts and
log-step scans over int64 temporaries, and objects as CuPy's general-purpose labelling followed by
sorts over every object cell.
Here each of those is one small kernel: a thread per line of a grid, or a thread block per grid
working in shared memory. The search's own steps have kernels for the same reason: moving grids
between the flat and the padded layouts (``copy_rows``: the array calls built several int64
indices per cell), comparing grids with their train outputs (``match_cells``) and mixing hashes
(one fused kernel instead of nine elementwise launches); and the coordinate-map gather that many
geometric primitives share (``remap``), which broadcasts its sources instead of building int64
index stacks. Each function gives exactly what its array-call version in the DSL
gives (the GPU tests compare them); the primitives call it only when :func:`enabled` says so, and
the CPU always runs the array calls.

Set ``ARCBATT_NO_KERNELS=1`` to run the array-call versions on the GPU too (tests, benchmarks).
"""
from __future__ import annotations

import functools
import os

import numpy as np

_SOURCE = r"""
// One thread per line (a column for axis 1, a row for axis 2) of every grid of an (n, H, W) stack.
extern "C" __global__ void line_carry(const unsigned char* g, unsigned char* out, long long n,
                                      int H, int W, int axis, int reverse, int inclusive) {
    long long t = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    int lines = axis == 1 ? W : H, len = axis == 1 ? H : W, step = axis == 1 ? W : 1;
    if (t >= n * lines) return;
    long long i = t / lines;
    int j = (int)(t % lines);
    long long base = i * H * W + (axis == 1 ? j : (long long)j * W);
    unsigned char carry = 0;
    for (int k = 0; k < len; ++k) {
        long long at = base + (long long)(reverse ? len - 1 - k : k) * step;
        unsigned char v = g[at];
        if (inclusive) { if (v) carry = v; out[at] = carry; }
        else { out[at] = carry; if (v) carry = v; }
    }
}

// Gravity: in every real line, the non-zero cells in order, moved to its end (to_end) or start.
extern "C" __global__ void line_compact(const unsigned char* g, unsigned char* out, long long n,
                                        int H, int W, const long long* h, const long long* w,
                                        int axis, int to_end) {
    long long t = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    int lines = axis == 1 ? W : H, len = axis == 1 ? H : W, step = axis == 1 ? W : 1;
    if (t >= n * lines) return;
    long long i = t / lines;
    int j = (int)(t % lines);
    long long base = i * H * W + (axis == 1 ? j : (long long)j * W);
    int real_lines = (int)(axis == 1 ? w[i] : h[i]);
    int real_len = (int)(axis == 1 ? h[i] : w[i]);
    if (j >= real_lines) real_len = 0;
    int solid = 0;
    for (int k = 0; k < real_len; ++k) solid += g[base + (long long)k * step] != 0;
    int pos = to_end ? real_len - solid : 0;
    for (int k = 0; k < real_len; ++k) {
        unsigned char v = g[base + (long long)k * step];
        if (v) out[base + (long long)(pos++) * step] = v;
    }
    int zero_lo = to_end ? 0 : solid, zero_hi = to_end ? real_len - solid : real_len;
    for (int k = zero_lo; k < zero_hi; ++k) out[base + (long long)k * step] = 0;
    for (int k = real_len; k < len; ++k) out[base + (long long)k * step] = g[base + (long long)k * step];
}

// One block per grid: background cells (0) that reach the grid's border through background
// (4-connected); ``inner`` is 1 on the background cells that do not.
extern "C" __global__ void enclosed_background(const unsigned char* g, unsigned char* inner,
                                               int H, int W) {
    __shared__ unsigned char open_[1024];
    __shared__ unsigned char reach[1024];
    int FH = H + 2, FW = W + 2, cells = FH * FW, t = threadIdx.x;
    long long i = blockIdx.x;
    int y = t / FW, x = t % FW;
    bool active = t < cells;
    bool frame = active && (y == 0 || x == 0 || y == FH - 1 || x == FW - 1);
    unsigned char v = 0;
    if (active && !frame) v = g[i * H * W + (long long)(y - 1) * W + (x - 1)];
    if (active) { open_[t] = frame || v == 0; reach[t] = frame; }
    __syncthreads();
    while (true) {
        int changed = 0;
        if (active && open_[t] && !reach[t]) {
            if ((y > 0 && reach[t - FW]) || (y < FH - 1 && reach[t + FW]) ||
                (x > 0 && reach[t - 1]) || (x < FW - 1 && reach[t + 1])) {
                reach[t] = 1;
                changed = 1;
            }
        }
        if (!__syncthreads_or(changed)) break;
    }
    if (active && !frame) inner[i * H * W + (long long)(y - 1) * W + (x - 1)] = v == 0 && !reach[t];
}

// One block per grid of an (n, H, W) uint8 stack: each non-zero cell gets the flat index (in its
// grid) of the first cell in reading order of its object (4 or 8 neighbours; of one colour when
// by_colour, else any non-zero colours), -1 on the background.
extern "C" __global__ void object_roots(const unsigned char* g, int* root, int* size, int H, int W,
                                        int conn, int by_colour) {
    __shared__ int lab[1024];
    __shared__ unsigned char col[1024];
    int cells = H * W, t = threadIdx.x;
    long long i = blockIdx.x;
    int y = t / W, x = t % W;
    unsigned char v = t < cells ? g[i * cells + t] : 0;
    bool on = v != 0;
    const int BIG = 1 << 30;
    if (t < cells) { lab[t] = on ? t : BIG; col[t] = v; }
    __syncthreads();
    while (true) {
        int changed = 0;
        if (on) {
            int best = lab[t];
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
            if (best < lab[t]) { lab[t] = best; changed = 1; }
        }
        __syncthreads();
        // Pointer jumping: a label is the index of a cell of the same object, whose own label is
        // no larger; following them shortens chains (few rounds instead of one per cell of path).
        if (on) {
            int l = lab[t], m = lab[l];
            while (m < l) { l = m; m = lab[l]; }
            if (l < lab[t]) { lab[t] = l; changed = 1; }
        }
        if (!__syncthreads_or(changed)) break;
    }
    // Object sizes, counted in shared memory: the root cell of each object holds its size.
    __shared__ int count[1024];
    if (t < cells) count[t] = 0;
    __syncthreads();
    if (on) atomicAdd(&count[lab[t]], 1);
    __syncthreads();
    if (t < cells) {
        root[i * cells + t] = on ? lab[t] : -1;
        size[i * cells + t] = (on && lab[t] == t) ? count[t] : 0;
    }
}

// Global labels from roots: ``number`` is the inclusive count of object roots up to each cell of
// the stack, so the object whose root is cell r of grid i gets label number[i * cells + r].
extern "C" __global__ void roots_to_labels(const int* root, const int* number, int* labels,
                                           long long total, int cells) {
    long long t = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (t >= total) return;
    int r = root[t];
    labels[t] = r < 0 ? 0 : number[(t / cells) * cells + r];
}

// Copy grids between two layouts of one flat uint8 buffer each: one thread per row (up to 30 per
// grid). Row r of grid i is w[i] bytes at src_base[i] + r * src_pitch[i] in src and at
// dst_base[i] + r * dst_pitch[i] in dst (pitch = the width of the stack the grid lies in).
extern "C" __global__ void copy_rows(const unsigned char* src, unsigned char* dst, long long n,
                                     const long long* src_base, const long long* src_pitch,
                                     const long long* dst_base, const long long* dst_pitch,
                                     const long long* h, const long long* w) {
    long long t = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (t >= n * 30) return;
    long long i = t / 30;
    int r = (int)(t % 30);
    if (r >= h[i]) return;
    const unsigned char* s = src + src_base[i] + r * src_pitch[i];
    unsigned char* d = dst + dst_base[i] + r * dst_pitch[i];
    for (int c = 0; c < (int)w[i]; ++c) d[c] = s[c];
}

// One thread per grid: how many of its cells equal its target's (same size), and where slot[j] >= 0
// the (grid colour, target colour) pairs counted into hist[slot[j]] (10 x 10 per slot).
extern "C" __global__ void match_cells(const unsigned char* cells, const long long* start,
                                       const long long* size, const long long* target_start,
                                       const unsigned char* target, const long long* slot,
                                       long long n, long long* correct, int* hist) {
    long long j = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (j >= n) return;
    const unsigned char* a = cells + start[j];
    const unsigned char* b = target + target_start[j];
    long long s = slot[j];
    int len = (int)size[j], ok = 0;
    for (int k = 0; k < len; ++k) {
        unsigned char x = a[k], y = b[k];
        ok += x == y;
        if (s >= 0) atomicAdd(&hist[s * 100 + x * 10 + y], 1);
    }
    correct[j] = ok;
}

// Fill every object's bounding box (one block per grid): each background cell inside boxes of
// objects takes the mark (c % 9 + 1) of the lowest colour among them. ``first[label]`` is the
// stack position of the object's first cell, which indexes its box in shared memory.
extern "C" __global__ void fill_boxes(const unsigned char* g, const int* labels, const long long* first,
                                      unsigned char* out, int H, int W) {
    __shared__ int top[1024], bottom[1024], left[1024], right[1024], roots[1024];
    __shared__ unsigned char colour[1024];
    __shared__ int count;
    int cells = H * W, t = threadIdx.x;
    long long i = blockIdx.x;
    int y = t / W, x = t % W;
    unsigned char v = t < cells ? g[i * cells + t] : 0;
    int lab = t < cells ? labels[i * cells + t] : 0;
    if (t < cells) { top[t] = 1 << 30; bottom[t] = -1; left[t] = 1 << 30; right[t] = -1; }
    if (t == 0) count = 0;
    __syncthreads();
    if (lab > 0) {
        int r = (int)(first[lab] - i * cells);
        atomicMin(&top[r], y); atomicMax(&bottom[r], y);
        atomicMin(&left[r], x); atomicMax(&right[r], x);
        if (r == t) { colour[t] = v; roots[atomicAdd(&count, 1)] = t; }
    }
    __syncthreads();
    if (t >= cells) return;
    unsigned char o = v;
    if (v == 0) {
        int best = 10;
        for (int k = 0; k < count; ++k) {
            int q = roots[k];
            if (y >= top[q] && y <= bottom[q] && x >= left[q] && x <= right[q] && colour[q] < best) best = colour[q];
        }
        if (best < 10) o = (unsigned char)(best % 9 + 1);
    }
    out[i * cells + t] = o;
}

// Grid hashes (pipeline.hashing): one warp per grid of an (m, cells) uint8 stack sums six integer
// projections of its cells (coef: (cells, 6) int32; every sum < 2**24, so it equals the float32
// matrix product of the array-call path), then mixes them with the grid's shape key.
extern "C" __global__ void hash_grids(const unsigned char* g, long long m, int cells, const int* coef,
                                      const unsigned long long* mix, const long long* shape_key,
                                      unsigned long long* out) {
    long long gi = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (gi >= m) return;  // the whole warp: all its lanes share gi
    const unsigned char* a = g + gi * cells;
    unsigned int p[6] = {0, 0, 0, 0, 0, 0};
    for (int k = lane; k < cells; k += 32) {
        unsigned int v = a[k];
        if (v) for (int j = 0; j < 6; ++j) p[j] += v * (unsigned int)coef[k * 6 + j];
    }
    for (int j = 0; j < 6; ++j)
        for (int off = 16; off > 0; off >>= 1) p[j] += __shfl_down_sync(0xffffffffu, p[j], off);
    if (lane == 0) {
        unsigned long long s = 0;
        for (int j = 0; j < 6; ++j) s += (unsigned long long)p[j] * mix[j];
        out[gi] = splitmix(s ^ ((unsigned long long)shape_key[gi] * 0x2545F4914F6CDD1Dull));
    }
}

// Shift agreements (repair._agreements): one block per grid of an (n, H, W) stack, a thread per
// shift (dy, dx): whether every pair of non-zero cells (i, j), (i + dy, j + dx) has one colour.
extern "C" __global__ void shift_agreements(const unsigned char* g, int H, int W, const long long* h,
                                            const long long* w, int dy0, int ndy, int dx0, int ndx,
                                            bool* out) {
    __shared__ unsigned char cell[1024];
    long long i = blockIdx.x;
    int cells = H * W;
    for (int t = threadIdx.x; t < cells; t += blockDim.x) cell[t] = g[i * cells + t];
    __syncthreads();
    for (int s = threadIdx.x; s < ndy * ndx; s += blockDim.x) {
        int dy = dy0 + s / ndx, dx = dx0 + s % ndx;
        bool agree = dy < h[i] && (dx < 0 ? -dx : dx) < w[i];
        for (int y = 0; agree && y + dy < H; ++y) {
            for (int x = 0; x < W; ++x) {
                int xx = x + dx;
                if (xx < 0 || xx >= W) continue;
                unsigned char a = cell[y * W + x], b = cell[(y + dy) * W + xx];
                if (a && b && a != b) { agree = false; break; }
            }
        }
        out[i * ndy * ndx + s] = agree;
    }
}
"""

_THREADS = 256


def enabled(xp) -> bool:
    """True when ``xp`` is CuPy and the kernels are not switched off (``ARCBATT_NO_KERNELS``)."""
    return xp is not np and os.environ.get("ARCBATT_NO_KERNELS", "") in ("", "0")


@functools.lru_cache(maxsize=None)
def _kernel(name: str):
    import cupy

    return cupy.RawModule(code=_SPLITMIX + _SOURCE, options=("-std=c++14",)).get_function(name)


_SPLITMIX = r"""
__device__ unsigned long long splitmix(unsigned long long z) {
    z ^= z >> 30; z *= 0xBF58476D1CE4E5B9ull;
    z ^= z >> 27; z *= 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
"""


# Fused elementwise kernels (CuPy ElementwiseKernel arguments), compiled on first use.
_ELEMENTWISE = {
    "splitmix64": ("uint64 v", "uint64 out", "out = splitmix(v)"),
}


@functools.lru_cache(maxsize=None)
def _elementwise(name: str):
    import cupy

    params, out, body = _ELEMENTWISE[name]
    return cupy.ElementwiseKernel(params, out, body, "arcbatt_" + name, preamble=_SPLITMIX)


@functools.lru_cache(maxsize=None)
def _remap_kernel():
    import cupy

    return cupy.ElementwiseKernel(
        "raw uint8 g, int64 sr, int64 sc, int64 r, int64 c, int64 oh, int64 ow, int64 grid, int64 H, int64 W",
        "uint8 out",
        """if (r < oh && c < ow) {
               long long a = sr < 0 ? 0 : (sr > H - 1 ? H - 1 : sr);
               long long b = sc < 0 ? 0 : (sc > W - 1 ? W - 1 : sc);
               out = g[(grid * H + a) * W + b];
           } else {
               out = 0;
           }""",
        "arcbatt_remap")


def remap(xp, g, out_h, out_w, R, C, src_r, src_c):
    """The gather of ``ragged.remap`` in one kernel: ``out[i, r, c] = g[i, src_r, src_c]`` (sources
    clipped into the stack) inside each grid's ``out_h`` x ``out_w`` box, 0 outside. ``R``, ``C``
    are the output's row and column index grids; the sources broadcast against them, so no
    per-cell index array is built."""
    n, H, W = g.shape
    flat = xp.ascontiguousarray(g).reshape(-1)
    grid = xp.arange(n, dtype=xp.int64)[:, None, None]
    sides = [xp.broadcast_to(xp.asarray(v, dtype=xp.int64), (n,))[:, None, None] for v in (out_h, out_w)]
    coords = [xp.asarray(v, dtype=xp.int64) for v in (src_r, src_c, R, C)]
    return _remap_kernel()(flat, *coords, *sides, grid, np.int64(H), np.int64(W))


def splitmix64(xp, v):
    """``hashing.splitmix64`` as one fused kernel (the array calls make nine launches)."""
    return _elementwise("splitmix64")(xp.asarray(v, dtype=xp.uint64))


def hash_grids(xp, arr, coef, mix, shape_key):
    """``GridHasher`` hashes of an (m, H, W) uint8 stack in one kernel (``coef``: its (H * W, 6)
    projection coefficients as int32; ``shape_key``: per grid, or one for all)."""
    arr = xp.ascontiguousarray(arr)
    m, H, W = arr.shape
    out = xp.empty(m, dtype=xp.uint64)
    if m:
        key = xp.ascontiguousarray(xp.broadcast_to(xp.asarray(shape_key, dtype=xp.int64), (m,)))
        _kernel("hash_grids")(((m * 32 + _THREADS - 1) // _THREADS,), (_THREADS,),
                              (arr, np.int64(m), np.int32(H * W), coef, mix, key, out))
    return out


def shift_agreements(xp, g, h, w, dys: range, dxs: range):
    """``repair._agreements`` in one kernel: (n, len(dys), len(dxs)) bool."""
    g = xp.ascontiguousarray(g)
    n, H, W = g.shape
    out = xp.empty((n, len(dys), len(dxs)), dtype=bool)
    if n:
        h = xp.ascontiguousarray(xp.asarray(h, dtype=xp.int64))
        w = xp.ascontiguousarray(xp.asarray(w, dtype=xp.int64))
        _kernel("shift_agreements")((n,), (block_threads(len(dys) * len(dxs)),),
                                    (g, np.int32(H), np.int32(W), h, w, np.int32(dys.start), np.int32(len(dys)),
                                     np.int32(dxs.start), np.int32(len(dxs)), out))
    return out


def _line_launch(n: int, lines: int):
    total = n * lines
    return ((total + _THREADS - 1) // _THREADS,), (_THREADS,)


def line_carry(xp, g, axis: int, reverse: bool, inclusive: bool):
    """For each cell of the uint8 stack ``g`` (n, H, W): the last non-zero value met scanning its
    line along ``axis`` (1: down the columns, 2: along the rows; ``reverse``: the other way), up to
    and including the cell (``inclusive``) or strictly before it; 0 where there is none."""
    g = xp.ascontiguousarray(g)
    n, H, W = g.shape
    out = xp.empty_like(g)
    if g.size:
        grid, block = _line_launch(n, W if axis == 1 else H)
        _kernel("line_carry")(grid, block, (g, out, np.int64(n), np.int32(H), np.int32(W), np.int32(axis),
                                            np.int32(bool(reverse)), np.int32(bool(inclusive))))
    return out


def line_compact(xp, g, h, w, axis: int, to_end: bool):
    """Gravity on a zero-padded stack with real sides ``h``, ``w``: in every real line along
    ``axis``, the non-zero cells keep their order and move to its end (``to_end``) or start."""
    g = xp.ascontiguousarray(g)
    n, H, W = g.shape
    out = xp.empty_like(g)
    if g.size:
        h = xp.ascontiguousarray(xp.broadcast_to(xp.asarray(h, dtype=xp.int64), (n,)))
        w = xp.ascontiguousarray(xp.broadcast_to(xp.asarray(w, dtype=xp.int64), (n,)))
        grid, block = _line_launch(n, W if axis == 1 else H)
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
        _kernel("enclosed_background")((n,), (block_threads((H + 2) * (W + 2)),),
                                       (g, inner, np.int32(H), np.int32(W)))
    return inner.view(xp.bool_)


def label_objects(xp, g, conn: int, by_colour: bool):
    """Objects of every grid of the uint8 stack ``g``, as ``objects.label_objects`` returns them:
    ``labels`` (n, H, W) int32 and, per label, ``owner``, ``sizes`` and ``first`` (see there).

    Labels are numbered in reading order of each object's first cell over the stack (the array-call
    version numbers them by grid and colour; no primitive depends on the numbering).
    """
    g = xp.ascontiguousarray(g)
    n, H, W = g.shape
    cells = H * W
    root = xp.empty(g.shape, dtype=xp.int32)
    size = xp.empty(g.shape, dtype=xp.int32)
    if g.size:
        _kernel("object_roots")((n,), (block_threads(cells),), (g, root, size, np.int32(H), np.int32(W),
                                                                np.int32(conn), np.int32(bool(by_colour))))
    flat = root.reshape(-1)
    is_first = (root.reshape(n, cells) == xp.arange(cells, dtype=xp.int32)[None, :]).reshape(-1)
    number = xp.cumsum(is_first, dtype=xp.int32)
    starts = xp.nonzero(is_first)[0]
    total = int(starts.shape[0])
    labels = xp.empty(g.shape, dtype=xp.int32)
    if g.size:
        grid, block = _line_launch(n * cells, 1)
        _kernel("roots_to_labels")(grid, block, (flat, number, labels, np.int64(n * cells), np.int32(cells)))
    owner = xp.zeros(total + 1, dtype=xp.int64)
    owner[1:] = starts // cells
    first = xp.zeros(total + 1, dtype=xp.int64)
    first[1:] = starts
    sizes = xp.zeros(total + 1, dtype=xp.int64)
    sizes[1:] = size.reshape(-1)[starts]
    sizes[0] = n * cells - sizes[1:].sum()
    return labels, owner, sizes, first


def copy_rows(xp, src, dst, src_base, src_pitch, dst_base, dst_pitch, h, w) -> None:
    """Copy grid ``i`` (``h[i]`` x ``w[i]`` cells) from the flat buffer ``src``, where its row r
    starts at ``src_base[i] + r * src_pitch[i]``, into ``dst`` at ``dst_base[i] + r * dst_pitch[i]``.

    One kernel for every change of layout (flat to padded buckets and back, gathers of grids):
    the array-call versions build several int64 indices per cell for the same copy.
    """
    n = int(h.shape[0])
    if n == 0:
        return
    src = xp.ascontiguousarray(src)
    args = [xp.ascontiguousarray(xp.broadcast_to(xp.asarray(a, dtype=xp.int64), (n,)))
            for a in (src_base, src_pitch, dst_base, dst_pitch, h, w)]
    grid, block = _line_launch(n, 30)
    _kernel("copy_rows")(grid, block, (src, dst, np.int64(n), *args))


def match_cells(xp, cells, start, size, target_start, target, slot, num_slots: int):
    """Cell-by-cell comparison of grids with their targets (see ``Search._cell_matches``).

    Returns ``correct`` (n,) int64 and ``hist`` (num_slots, 10, 10) int64.
    """
    n = int(start.shape[0])
    correct = xp.zeros(n, dtype=xp.int64)
    hist = xp.zeros(num_slots * 100, dtype=xp.int32)
    if n:
        args = [xp.ascontiguousarray(a, dtype=xp.int64) for a in (start, size, target_start, slot)]
        grid, block = _line_launch(n, 1)
        _kernel("match_cells")(grid, block, (xp.ascontiguousarray(cells), args[0], args[1], args[2],
                                             xp.ascontiguousarray(target), args[3], np.int64(n), correct, hist))
    return correct, hist.astype(xp.int64).reshape(num_slots, 10, 10)


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
    """Threads for a block-per-grid kernel over ``cells`` cells: a multiple of 32, at most 1024."""
    if cells > 1024:
        raise ValueError(f"grids up to 30x30 (with a frame: 1024 cells), got {cells} cells")
    return max(32, (cells + 31) // 32 * 32)
