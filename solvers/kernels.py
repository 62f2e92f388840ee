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

_SOURCE = CELL_INDEX + r"""
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

// One block of 64 threads per grid: background cells (0) that reach the grid's border through
// background (4-connected); ``inner`` is 1 on the background cells that do not. A background frame
// around the grid starts out reached; then threads 0-31 sweep the rows and threads 32-63 the
// columns of the framed grid, each both ways, until nothing changes: a sweep carries the reach
// along a whole line, so the rounds number the turns of the longest path, not its length.
// (Sweeps of rows and columns read each other's marks as they go: marks only ever get set, and a
// round in which no thread set one is a fixed point.)
extern "C" __global__ void enclosed_background(const unsigned char* g, unsigned char* inner,
                                               int H, int W) {
    __shared__ unsigned char open_[1024];
    __shared__ unsigned char reach[1024];
    int FH = H + 2, FW = W + 2, cells = FH * FW, t = threadIdx.x;
    long long i = blockIdx.x;
    for (int k = t; k < cells; k += blockDim.x) {
        int y = cell_row(k, FW), x = cell_col(k, FW);
        bool frame = y == 0 || x == 0 || y == FH - 1 || x == FW - 1;
        open_[k] = frame || g[i * H * W + (long long)(y - 1) * W + (x - 1)] == 0;
        reach[k] = frame;
    }
    __syncthreads();
    while (true) {
        int changed = 0;
        if (t < FH) {
            int base = t * FW;
            for (int x = 1; x < FW; ++x)
                if (open_[base + x] && !reach[base + x] && reach[base + x - 1]) { reach[base + x] = 1; changed = 1; }
            for (int x = FW - 2; x >= 0; --x)
                if (open_[base + x] && !reach[base + x] && reach[base + x + 1]) { reach[base + x] = 1; changed = 1; }
        } else if (t >= 32 && t - 32 < FW) {
            int x = t - 32;
            for (int y = 1; y < FH; ++y)
                if (open_[y * FW + x] && !reach[y * FW + x] && reach[(y - 1) * FW + x]) { reach[y * FW + x] = 1; changed = 1; }
            for (int y = FH - 2; y >= 0; --y)
                if (open_[y * FW + x] && !reach[y * FW + x] && reach[(y + 1) * FW + x]) { reach[y * FW + x] = 1; changed = 1; }
        }
        if (!__syncthreads_or(changed)) break;
    }
    for (int k = t; k < H * W; k += blockDim.x) {
        int at = (cell_row(k, W) + 1) * FW + cell_col(k, W) + 1;
        inner[i * H * W + k] = open_[at] && !reach[at];
    }
}

// One block per grid of an (n, H, W) uint8 stack, labelling its objects (4 or 8 neighbours; of one
// colour when by_colour, else any non-zero colours) in reading order of their first cells: each
// non-zero cell gets its object's number within the grid (1-based; 0 on the background), each
// object's first cell its size (0 elsewhere), ``objects`` the grid's count, and ``picks`` the
// numbers of its largest and smallest objects (0: none).
extern "C" __global__ void object_roots(const unsigned char* g, int* local, int* size, int* objects,
                                        long long* picks, int H, int W, int conn, int by_colour) {
    // The block's threads loop over the grid's cells (k = threadIdx.x, then every blockDim.x).
    __shared__ int lab[1024], count[1024], rank[1024];
    __shared__ unsigned char col[1024];
    __shared__ int before[33];
    int cells = H * W, t = threadIdx.x;
    long long i = blockIdx.x;
    const int BIG = 1 << 30;
    for (int k = t; k < cells; k += blockDim.x) {
        unsigned char v = g[i * cells + k];
        lab[k] = v ? k : BIG; col[k] = v; count[k] = 0;
    }
    __syncthreads();
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
    // Object sizes, counted in shared memory: the root cell of each object holds its size. The
    // objects' numbers: each root's rank among the grid's roots (block-wide prefix counts over
    // the cells, blockDim.x at a time).
    for (int k = t; k < cells; k += blockDim.x) if (col[k]) atomicAdd(&count[lab[k]], 1);
    int lane = t % 32, warp = t / 32, warps = (int)blockDim.x / 32, sum = 0;
    for (int from = 0; from < cells; from += blockDim.x) {
        int k = from + t;
        bool is_root = k < cells && col[k] && lab[k] == k;
        unsigned roots = __ballot_sync(0xffffffffu, is_root);
        if (lane == 0) before[warp] = __popc(roots);
        __syncthreads();
        if (t == 0) {
            int run = sum;
            for (int j = 0; j < warps; ++j) { int c = before[j]; before[j] = run; run += c; }
            before[warps] = run;
        }
        __syncthreads();
        if (k < cells) rank[k] = before[warp] + __popc(roots & ((1u << lane) - 1u));
        sum = before[warps];
        __syncthreads();
    }
    if (t == 0) objects[i] = sum;
    // The grid's largest and smallest objects (ties: the first in reading order), by number:
    // picks[2i], picks[2i + 1] (0: no object). Keyed by size (negated for the largest), then by
    // the first cell, in one int.
    if (t == 0) { before[0] = BIG; before[1] = BIG; }
    __syncthreads();
    for (int k = t; k < cells; k += blockDim.x) {
        bool on = col[k] != 0;
        local[i * cells + k] = on ? rank[lab[k]] + 1 : 0;
        size[i * cells + k] = on && lab[k] == k ? count[k] : 0;
        if (on && lab[k] == k) {
            atomicMin(&before[0], ((1024 - count[k]) << 10) | k);
            atomicMin(&before[1], ((1024 + count[k]) << 10) | k);
        }
    }
    __syncthreads();
    if (t < 2) picks[2 * i + t] = before[t] == BIG ? 0 : rank[before[t] & 1023] + 1;
}

// out[0] += sign * (the sum of the n values of x): each warp sums its share and adds it with one
// atomic (blocks stride over x). A reduction to one number without CUB's modules or temporaries.
template <class Values>  // a pointer type (the CUDA emulator's checked pointers too)
__device__ void sum_into(Values x, long long n, long long sign, unsigned long long* out) {
    unsigned long long s = 0;
    for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += (long long)gridDim.x * blockDim.x)
        s += (unsigned long long)(long long)x[k];
    for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
    if (threadIdx.x % 32 == 0 && s) atomicAdd(out, s * (unsigned long long)sign);
}
extern "C" __global__ void sum_int64_into(const long long* x, long long n, long long sign, unsigned long long* out) {
    sum_into(x, n, sign, out);
}
extern "C" __global__ void count_into(const bool* x, long long n, long long sign, unsigned long long* out) {
    sum_into(x, n, sign, out);
}

// Stack-wide labels from object_roots: grid i's objects are numbered from base[i] + 1; each
// object's first cell also records the object's grid, place in the stack and size; the picks give
// their grid's chosen labels (chosen[2i]: largest, [2i + 1]: smallest; 0: none).
extern "C" __global__ void number_objects(const int* local, const int* size, const long long* base,
                                          const long long* picks, int* labels, long long* owner, long long* first,
                                          long long* sizes, long long* chosen, long long total, int cells) {
    long long t = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (t >= total) return;
    int l = local[t];
    long long grid = t / cells, label = l == 0 ? 0 : base[grid] + l;
    labels[t] = (int)label;
    if (size[t] > 0) { owner[label] = grid; first[label] = t; sizes[label] = size[t]; }
    if (t == grid * cells)
        for (int j = 0; j < 2; ++j) chosen[2 * grid + j] = picks[2 * grid + j] ? base[grid] + picks[2 * grid + j] : 0;
}

// Running sums (cumsum): a block of SCAN_THREADS threads takes SCAN_ITEMS consecutive values per
// thread. scan_block_sums writes each block's total; scan_apply writes each value's running sum
// (inclusive, or exclusive) plus its block's offset: summed by the block itself from the blocks'
// totals (mode 1: a few thousand blocks at most), or read from their running sums (mode 2:
// scanned the same way first), or none (mode 0: one block). Two small launches: CuPy's cumsum
// (CUB) costs about 80 us of the host's time per call and loads CUB's scan kernels, for each
// type, in a process's first search.
#define SCAN_THREADS 256
#define SCAN_ITEMS 4
template <class Values>
__device__ long long scan_load(Values x, long long n, long long i) { return i < n ? (long long)x[i] : 0; }
// The block's inclusive running sum of the thread totals v (in thread order); returns the
// thread's exclusive prefix and writes the block's total to *total.
__device__ long long block_exclusive(long long v, long long* total) {
    __shared__ long long warp_sum[SCAN_THREADS / 32];
    int lane = threadIdx.x % 32, wid = threadIdx.x / 32;
    long long inc = v;
    for (int d = 1; d < 32; d <<= 1) {
        long long o = __shfl_up_sync(0xffffffffu, inc, d);
        if (lane >= d) inc += o;
    }
    if (lane == 31) warp_sum[wid] = inc;
    __syncthreads();
    if (wid == 0) {
        long long w = lane < SCAN_THREADS / 32 ? warp_sum[lane] : 0, wi = w;
        for (int d = 1; d < 32; d <<= 1) {
            long long o = __shfl_up_sync(0xffffffffu, wi, d);
            if (lane >= d) wi += o;
        }
        if (lane < SCAN_THREADS / 32) warp_sum[lane] = wi - w;  // exclusive over warps
        if (lane == SCAN_THREADS / 32 - 1) *total = wi;
    }
    __syncthreads();
    return warp_sum[wid] + inc - v;
}
template <class Values>
__device__ void scan_block_sums(Values x, long long n, long long* sums) {
    __shared__ long long total;
    long long base = (long long)blockIdx.x * SCAN_THREADS * SCAN_ITEMS + (long long)threadIdx.x * SCAN_ITEMS, v = 0;
    for (int j = 0; j < SCAN_ITEMS; ++j) v += scan_load(x, n, base + j);
    block_exclusive(v, &total);
    if (threadIdx.x == 0) sums[blockIdx.x] = total;
}
template <class Values>
__device__ void scan_apply(Values x, long long n, const long long* offsets, int mode, int exclusive,
                           long long* out) {
    __shared__ long long total, before;
    long long base = (long long)blockIdx.x * SCAN_THREADS * SCAN_ITEMS + (long long)threadIdx.x * SCAN_ITEMS, v = 0;
    long long vals[SCAN_ITEMS];
    for (int j = 0; j < SCAN_ITEMS; ++j) { vals[j] = scan_load(x, n, base + j); v += vals[j]; }
    long long offset = 0;
    if (mode == 1) {  // offsets: every block's total; this block's offset, the sum of those before it
        long long s = 0;
        for (long long b = threadIdx.x; b < blockIdx.x; b += SCAN_THREADS) s += offsets[b];
        block_exclusive(s, &before);
        offset = before;
    } else if (mode == 2 && blockIdx.x > 0) {  // offsets: the blocks' inclusive running sums
        offset = offsets[blockIdx.x - 1];
    }
    long long run = block_exclusive(v, &total) + offset;
    for (int j = 0; j < SCAN_ITEMS; ++j) {
        run += vals[j];
        if (base + j < n) out[base + j] = exclusive ? run - vals[j] : run;
    }
}
extern "C" __global__ void scan_sums_int64(const long long* x, long long n, long long* sums) { scan_block_sums(x, n, sums); }
extern "C" __global__ void scan_sums_int32(const int* x, long long n, long long* sums) { scan_block_sums(x, n, sums); }
extern "C" __global__ void scan_sums_bool(const bool* x, long long n, long long* sums) { scan_block_sums(x, n, sums); }
extern "C" __global__ void scan_apply_int64(const long long* x, long long n, const long long* offsets, int mode,
                                          int exclusive, long long* out) {
    scan_apply(x, n, offsets, mode, exclusive, out);
}
extern "C" __global__ void scan_apply_int32(const int* x, long long n, const long long* offsets, int mode,
                                          int exclusive, long long* out) {
    scan_apply(x, n, offsets, mode, exclusive, out);
}
extern "C" __global__ void scan_apply_bool(const bool* x, long long n, const long long* offsets, int mode,
                                          int exclusive, long long* out) {
    scan_apply(x, n, offsets, mode, exclusive, out);
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
    int y = cell_row(t, W), x = cell_col(t, W);
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

// Colour histogram of every grid of an (m, cells) uint8 stack: one warp per grid. Each lane counts
// its cells in 6-bit fields (at most 29 cells a lane for 900-cell grids), colours 0-4 in lo and
// 5-9 in hi, then the warp sums each colour's fields.
extern "C" __global__ void colour_counts(const unsigned char* g, long long m, int cells, long long* out) {
    long long gi = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (gi >= m) return;  // the whole warp: all its lanes share gi
    const unsigned char* a = g + gi * cells;
    unsigned int lo = 0, hi = 0;
    for (int k = lane; k < cells; k += 32) {
        unsigned int v = a[k];
        if (v < 5) lo += 1u << (6 * v); else hi += 1u << (6 * (v - 5));
    }
    for (int c = 0; c < 10; ++c) {
        int count = ((c < 5 ? lo : hi) >> (6 * (c % 5))) & 63;
        for (int off = 16; off > 0; off >>= 1) count += __shfl_down_sync(0xffffffffu, count, off);
        if (lane == 0) out[gi * 10 + c] = count;
    }
}

// ragged.remap: a warp per grid of the (n, H, W) stack (8 grids per block). The warp reads its grid
// once into shared memory (coalesced; a rotation's or transpose's gather straight from global
// memory would touch a new 32-byte sector for nearly every cell), then gathers the output cells
// from it. A block per grid would cost more in scheduling than the work of a 10 x 10 grid. Sources
// and sides are int64 arrays read through strides (in elements; 0 along broadcast axes).
extern "C" __global__ void remap(const unsigned char* g, int H, int W, int rows, int cols, long long n,
                                 const long long* sr, long long sr0, long long sr1, long long sr2,
                                 const long long* sc, long long sc0, long long sc1, long long sc2,
                                 const long long* oh, long long oh0, const long long* ow, long long ow0,
                                 unsigned char* out) {
    __shared__ unsigned char cells_of[8][1024];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const long long i = (long long)blockIdx.x * 8 + warp;
    if (i >= n) return;  // the whole warp: all its lanes share i
    unsigned char* cell = cells_of[warp];
    const int cells = H * W, per = rows * cols;
    for (int k = lane; k < cells; k += 32) cell[k] = g[i * cells + k];
    __syncwarp();
    const long long hi = oh[i * oh0], wi = ow[i * ow0];
    const long long* sri = sr + i * sr0;
    const long long* sci = sc + i * sc0;
    for (int k = lane; k < per; k += 32) {
        const int r = cell_row(k, cols), c = k - r * cols;
        unsigned char o = 0;
        if (r < hi && c < wi) {
            long long a = sri[r * sr1 + c * sr2], b = sci[r * sc1 + c * sc2];
            a = a < 0 ? 0 : (a > H - 1 ? H - 1 : a);
            b = b < 0 ? 0 : (b > W - 1 ? W - 1 : b);
            o = cell[a * W + b];
        }
        out[i * per + k] = o;
    }
}
"""

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

