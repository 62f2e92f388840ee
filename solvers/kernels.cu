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
    label_shared(col, lab, H, W, conn, by_colour);
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
