#define BIG 0x3fffffff

__device__ unsigned char mark_of(unsigned char c) { return c ? (unsigned char)(c % 9 + 1) : 0; }

__device__ int warp_min(int v) {
    for (int o = 16; o > 0; o >>= 1) v = min(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

__device__ int warp_max(int v) {
    for (int o = 16; o > 0; o >>= 1) v = max(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// Kernels with a block per grid loop over the grid's cells (k = threadIdx.x, then every
// blockDim.x): a 30 x 30 grid takes a few warps, not 29 of them, so an SM holds several grids at
// once (a 928-thread block left it two, idle in each block's serial parts).

// A thread's part of a bounding box: top, bottom, left, right of the cells it added.
__device__ void box_start(int* part) { part[0] = BIG; part[1] = -1; part[2] = BIG; part[3] = -1; }

__device__ void box_add(int* part, bool in, int y, int x) {
    if (in) { part[0] = min(part[0], y); part[1] = max(part[1], y); part[2] = min(part[2], x); part[3] = max(part[3], x); }
}

// Bounding box of the threads' parts, over the whole block (every thread must call it;
// blockDim.x is a multiple of 32). box: top, bottom, left, right; bottom < 0 when no cell holds.
__device__ void block_box_of(const int* part, int* box) {
    if (threadIdx.x == 0) { box[0] = BIG; box[1] = -1; box[2] = BIG; box[3] = -1; }
    __syncthreads();
    int t = warp_min(part[0]), b = warp_max(part[1]), l = warp_min(part[2]), r = warp_max(part[3]);
    if (threadIdx.x % 32 == 0 && b >= 0) {
        atomicMin(&box[0], t); atomicMax(&box[1], b); atomicMin(&box[2], l); atomicMax(&box[3], r);
    }
    __syncthreads();
}

// block_box_of for one cell per thread: the box of the cells where ``in`` holds.
__device__ void block_box(bool in, int y, int x, int* box) {
    int part[4];
    box_start(part);
    box_add(part, in, y, x);
    block_box_of(part, box);
}

// Where the crop of a grid to ``box`` (see block_box) reads cell t of the output: -1 outside the
// box or when the box is empty. Sets the output's sides (the stack's when empty, as
// batch.bounding_boxes gives them).
__device__ int crop_source(const int* box, int H, int W, int y, int x, int* oh, int* ow) {
    bool has = box[1] >= 0;
    *oh = has ? box[1] - box[0] + 1 : H;
    *ow = has ? box[3] - box[2] + 1 : W;
    if (!has || y >= *oh || x >= *ow) return -1;
    return (box[0] + y) * W + box[2] + x;
}

// repair.repair_symmetry: one block per grid of a zero-padded (n, H, W) stack, real sides h, w.
// K mirror-axis offsets (0, and 2 when K == 2), each with two candidate noise colours.
extern "C" __global__ void repair_symmetry(const unsigned char* g, const long long* h, const long long* w,
                                           int H, int W, int K, int crop, unsigned char* out,
                                           long long* out_h, long long* out_w, bool* valid) {
    __shared__ unsigned char cell[1024];
    __shared__ unsigned char best[1024];
    __shared__ int first_lr[2], first_tb[2], box[4];
    int cells = H * W, t = threadIdx.x;
    long long i = blockIdx.x;
    const int hi = (int)h[i], wi = (int)w[i];
    const int y = cell_row(t, W), x = cell_col(t, W);
    const bool active = t < cells, real = active && y < hi && x < wi;
    const unsigned char v = active ? g[i * cells + t] : 0;
    if (active) cell[t] = v;
    if (t < 2) { first_lr[t] = BIG; first_tb[t] = BIG; }
    __syncthreads();
    unsigned char m[2][3];     // per offset: left-right, top-bottom and point mirror of this cell
    bool differs[2][3];
    for (int k = 0; k < K; ++k) {
        int off = k ? 2 : 0;
        int xc = min(max(wi - 1 + off - x, 0), W - 1), yr = min(max(hi - 1 + off - y, 0), H - 1);
        int xs = active ? x : 0, ys = active ? y : 0;
        m[k][0] = cell[ys * W + xc];
        m[k][1] = cell[yr * W + xs];
        m[k][2] = cell[yr * W + xc];
        bool xin = x >= off, yin = y >= off;
        differs[k][0] = real && xin && m[k][0] != v;
        differs[k][1] = real && yin && m[k][1] != v;
        differs[k][2] = real && xin && yin && m[k][2] != v;
        if (differs[k][0]) atomicMin(&first_lr[k], t);
        if (differs[k][1]) atomicMin(&first_tb[k], t);
    }
    __syncthreads();
    // Every thread derives the same candidates, block-wide counts and the pick.
    unsigned char colour[2][2];
    int key[4];
    bool ok_any = false;
    for (int k = 0; k < K; ++k) {
        int off = k ? 2 : 0;
        bool h1 = first_lr[k] < BIG, h2 = first_tb[k] < BIG;
        int p1 = h1 ? first_lr[k] : 0, p2 = h2 ? first_tb[k] : 0;
        int y1 = cell_row(p1, W), x1 = cell_col(p1, W), y2 = cell_row(p2, W), x2 = cell_col(p2, W);
        unsigned char a1 = cell[p1], b1 = cell[y1 * W + min(max(wi - 1 + off - x1, 0), W - 1)];
        unsigned char a2 = cell[p2], b2 = cell[min(max(hi - 1 + off - y2, 0), H - 1) * W + x2];
        colour[k][0] = h1 ? a1 : a2;
        colour[k][1] = h1 ? b1 : b2;
        bool asymmetric = (h1 || h2) && (off == 0 || min(hi, wi) >= 8);
        for (int c = 0; c < 2; ++c) {
            unsigned char col = colour[k][c];
            bool noise = real && v == col;
            bool clash = false;
            for (int s = 0; s < 3; ++s) clash |= differs[k][s] && m[k][s] != col;
            int count = __syncthreads_count(noise);
            int fails = __syncthreads_or(clash != noise);
            bool ok = asymmetric && !fails && count > 0;
            key[2 * k + c] = ok ? count : hi * wi + 1;
            ok_any |= ok;
        }
    }
    int pick = 0;
    for (int j = 1; j < 2 * K; ++j) if (key[j] < key[pick]) pick = j;
    int k = pick / 2;
    unsigned char col = colour[k][pick % 2];
    bool noise = real && v == col;
    unsigned char fill = m[k][2];
    if (differs[k][1] && m[k][1] != col) fill = m[k][1];
    if (differs[k][0] && m[k][0] != col) fill = m[k][0];
    unsigned char b = noise ? fill : v;
    if (!crop) {
        if (active) out[i * cells + t] = ok_any ? b : 0;
        if (t == 0) { out_h[i] = hi; out_w[i] = wi; valid[i] = ok_any; }
        return;
    }
    if (active) best[t] = b;
    block_box(noise && ok_any, y, x, box);
    int oh, ow;
    int src = crop_source(box, H, W, y, x, &oh, &ow);
    if (active) out[i * cells + t] = src >= 0 ? best[src] : 0;
    if (t == 0) { out_h[i] = oh; out_w[i] = ow; valid[i] = box[1] >= 0; }
}

// repair.complete_period: one block per grid of a zero-padded (n, H, W) stack, real sides h, w;
// periods and steps up to P (at most 15). A grid qualifies with holes, at least half of its cells
// non-zero and two colours; the agreed translations (dy, dx), dy 0..P, dx -P..P, give the row
// period px and the step down (py rows, sideways shift); each lattice class's cells must share
// one colour (the rounded mean of its non-zero cells, as the array calls compute it), which fills
// its holes. With ``crop`` the result is the bounding box of the holes.
// Lattice classes: row y lies in band y / py; columns shift back by ``shift`` per band.
__device__ int lattice_class(int y, int x, int py, int px, int shift) {
    int c = (x - shift * (y / py)) % px;
    return (y % py) * px + (c < 0 ? c + px : c);
}

extern "C" __global__ void complete_period(const unsigned char* g, const long long* h, const long long* w,
                                           int H, int W, int P, int crop, unsigned char* out,
                                           long long* out_h, long long* out_w, bool* valid) {
    __shared__ unsigned char cell[1024], fill[1024];
    __shared__ bool agree[16 * 31];        // [dy][P + dx]
    __shared__ int cnt[1024], tot[1024];
    __shared__ int top, filled, lattice[3], box[4];  // largest colour, non-zero cells; py, px, shift
    const int D = 2 * P + 1, cells = H * W, t = threadIdx.x;
    long long i = blockIdx.x;
    const int hi = (int)h[i], wi = (int)w[i];
    if (t == 0) { top = 0; filled = 0; }
    __syncthreads();
    int largest = 0, mine = 0;
    for (int k = t; k < cells; k += blockDim.x) {
        unsigned char v = g[i * cells + k];
        cell[k] = v; cnt[k] = 0; tot[k] = 0;
        largest = max(largest, (int)v);
        mine += v != 0;
    }
    largest = warp_max(largest);
    if (t % 32 == 0) atomicMax(&top, largest);
    if (mine) atomicAdd(&filled, mine);
    __syncthreads();
    bool other = false;
    for (int k = t; k < cells; k += blockDim.x) other |= cell[k] != 0 && cell[k] != top;
    bool colours = __syncthreads_or(other);
    int area = hi * wi, zeros = area - filled;
    if (!(zeros > 0 && 2 * zeros <= area && colours)) {
        for (int k = t; k < cells; k += blockDim.x) out[i * cells + k] = 0;
        if (t == 0) { out_h[i] = hi; out_w[i] = wi; valid[i] = false; }
        return;
    }
    // Translations agree where no two non-zero cells they pair differ; only real cells can be
    // non-zero (the padding is zero), so the scan stays inside the grid.
    for (int e = t; e < (P + 1) * D; e += blockDim.x) {
        int dy = e / D, dx = e % D - P;
        bool ok = dy < hi && (dx < 0 ? -dx : dx) < wi;
        for (int yy = 0; ok && yy + dy < hi; ++yy) {
            for (int xx = max(0, -dx); xx < wi && xx + dx < wi; ++xx) {
                unsigned char a = cell[yy * W + xx], b = cell[(yy + dy) * W + xx + dx];
                if (a && b && a != b) { ok = false; break; }
            }
        }
        agree[e] = ok;
    }
    __syncthreads();
    if (t == 0) {
        bool periodic = false;
        int px = wi, py = hi, shift = 0;
        for (int dx = P; dx >= 1; --dx) if (agree[P + dx]) { px = dx; periodic = true; }
        for (int dy = 1; dy <= P; ++dy) periodic |= agree[dy * D + P];
        for (int dy = 1; dy <= P && py == hi && periodic; ++dy) {
            for (int s = 0; s <= P && s < px; ++s) {
                int back = min(max(P + s - px, 0), 2 * P);
                if (agree[dy * D + P + s] && (s == 0 || (px <= P && agree[dy * D + back]))) {
                    py = dy; shift = s; break;
                }
            }
        }
        lattice[0] = periodic ? py : 0; lattice[1] = px; lattice[2] = shift;
    }
    __syncthreads();
    const int py = lattice[0], px = lattice[1], shift = lattice[2];
    if (py == 0) {
        for (int k = t; k < cells; k += blockDim.x) out[i * cells + k] = 0;
        if (t == 0) { out_h[i] = hi; out_w[i] = wi; valid[i] = false; }
        return;
    }
    for (int k = t; k < cells; k += blockDim.x) {
        int cls = lattice_class(cell_row(k, W), cell_col(k, W), py, px, shift);
        atomicAdd(&cnt[cls], cell[k] != 0);
        atomicAdd(&tot[cls], (int)cell[k]);
    }
    __syncthreads();
    bool bad = false;
    for (int k = t; k < cells; k += blockDim.x) {
        int y = cell_row(k, W), x = cell_col(k, W), cls = lattice_class(y, x, py, px, shift);
        unsigned char v = cell[k], colour = (unsigned char)rint((double)tot[cls] / (double)max(cnt[cls], 1));
        bool real = y < hi && x < wi;
        bad |= real && !((v == colour || v == 0) && colour != 0);
        fill[k] = real ? colour : 0;
    }
    bool good = !__syncthreads_or(bad) && py * px < hi * wi;
    if (!crop) {
        for (int k = t; k < cells; k += blockDim.x) out[i * cells + k] = good ? fill[k] : 0;
        if (t == 0) { out_h[i] = hi; out_w[i] = wi; valid[i] = good; }
        return;
    }
    int part[4];
    box_start(part);
    for (int k = t; k < cells; k += blockDim.x) {
        const int y = cell_row(k, W), x = cell_col(k, W);
        box_add(part, y < hi && x < wi && cell[k] == 0, y, x);
    }
    block_box_of(part, box);
    int oh, ow;
    for (int k = t; k < cells; k += blockDim.x) {
        int src = crop_source(box, H, W, cell_row(k, W), cell_col(k, W), &oh, &ow);
        out[i * cells + k] = src >= 0 && good ? fill[src] : 0;
    }
    crop_source(box, H, W, 0, 0, &oh, &ow);
    if (t == 0) { out_h[i] = oh; out_w[i] = ow; valid[i] = box[1] >= 0 && good; }
}

// batch.crop_to_mask: one block per grid, cropped to the bounding box of its cells where ``mask``
// holds; no result where there are none or ``valid`` (if given) is false.
extern "C" __global__ void crop_to_mask(const unsigned char* g, const bool* mask, const bool* valid_in,
                                        int H, int W, unsigned char* out, long long* out_h,
                                        long long* out_w, bool* valid) {
    __shared__ int box[4];
    int cells = H * W, part[4];
    long long i = blockIdx.x;
    box_start(part);
    for (int k = threadIdx.x; k < cells; k += blockDim.x)
        box_add(part, mask[i * cells + k], cell_row(k, W), cell_col(k, W));
    block_box_of(part, box);
    int oh, ow;
    for (int k = threadIdx.x; k < cells; k += blockDim.x) {
        int src = crop_source(box, H, W, cell_row(k, W), cell_col(k, W), &oh, &ow);
        out[i * cells + k] = src >= 0 ? g[i * cells + src] : 0;
    }
    crop_source(box, H, W, 0, 0, &oh, &ow);
    if (threadIdx.x == 0) { out_h[i] = oh; out_w[i] = ow; valid[i] = box[1] >= 0 && (valid_in == 0 || valid_in[i]); }
}

// objects._crop_chosen: each grid cropped to its chosen object (label ``chosen[i]``, 0: none),
// other cells erased.
extern "C" __global__ void crop_object(const unsigned char* g, const int* labels, const long long* chosen,
                                       int H, int W, unsigned char* out, long long* out_h,
                                       long long* out_w, bool* valid) {
    __shared__ int box[4];
    int cells = H * W, part[4];
    long long i = blockIdx.x;
    long long c = chosen[i];
    box_start(part);
    for (int k = threadIdx.x; c > 0 && k < cells; k += blockDim.x)
        box_add(part, labels[i * cells + k] == c, cell_row(k, W), cell_col(k, W));
    block_box_of(part, box);
    int oh, ow;
    for (int k = threadIdx.x; k < cells; k += blockDim.x) {
        int src = crop_source(box, H, W, cell_row(k, W), cell_col(k, W), &oh, &ow);
        long long at = i * cells + src;
        out[i * cells + k] = src >= 0 && labels[at] == c ? g[at] : 0;
    }
    crop_source(box, H, W, 0, 0, &oh, &ow);
    if (threadIdx.x == 0) { out_h[i] = oh; out_w[i] = ow; valid[i] = box[1] >= 0; }
}

// recolour.mark_hollow: one block per grid. An object (labels and first cells of the kernel
// labelling) that a cell of ``hole`` touches (4 neighbours) gets the mark.
extern "C" __global__ void mark_hollow(const unsigned char* g, const int* labels, const long long* first,
                                       const bool* hole, int H, int W, unsigned char* out) {
    __shared__ unsigned char touched[1024];
    int cells = H * W, t = threadIdx.x;
    long long i = blockIdx.x, base = i * cells;
    int y = cell_row(t, W), x = cell_col(t, W);
    if (t < cells) touched[t] = 0;
    __syncthreads();
    if (t < cells && hole[base + t]) {
        const int DY[4] = {-1, 1, 0, 0}, DX[4] = {0, 0, -1, 1};
        for (int j = 0; j < 4; ++j) {
            int yy = y + DY[j], xx = x + DX[j];
            if (yy < 0 || yy >= H || xx < 0 || xx >= W) continue;
            int lab = labels[base + yy * W + xx];
            if (lab > 0) touched[first[lab] - base] = 1;
        }
    }
    __syncthreads();
    if (t >= cells) return;
    unsigned char v = g[base + t];
    int lab = labels[base + t];
    out[base + t] = lab > 0 && touched[first[lab] - base] ? mark_of(v) : v;
}

// arrange._smallest_period along both axes: one block per grid, a thread per shift. py: the
// smallest p < h with row r == row r + p for every r + p < h (else h); px likewise for columns.
extern "C" __global__ void smallest_periods(const unsigned char* g, const long long* h, const long long* w,
                                            int H, int W, long long* py, long long* px) {
    __shared__ unsigned char cell[1024];
    __shared__ int best[2];
    int cells = H * W, t = threadIdx.x;
    long long i = blockIdx.x;
    int hi = (int)h[i], wi = (int)w[i];
    for (int k = t; k < cells; k += blockDim.x) cell[k] = g[i * cells + k];
    if (t == 0) { best[0] = hi; best[1] = wi; }
    __syncthreads();
    // Lines are compared over the grid's real cells: the padding is zero in both.
    if (t >= 1 && t < hi) {           // row shift t: compare whole rows
        bool same = true;
        for (int r = 0; same && r + t < hi; ++r)
            for (int c = 0; c < wi; ++c) if (cell[r * W + c] != cell[(r + t) * W + c]) { same = false; break; }
        if (same) atomicMin(&best[0], t);
    }
    int q = t - 32;
    if (q >= 1 && q < wi) {           // column shift q: compare whole columns
        bool same = true;
        for (int c = 0; same && c + q < wi; ++c)
            for (int r = 0; r < hi; ++r) if (cell[r * W + c] != cell[r * W + c + q]) { same = false; break; }
        if (same) atomicMin(&best[1], q);
    }
    __syncthreads();
    if (t == 0) { py[i] = best[0]; px[i] = best[1]; }
}

// lines.rays and draw.connect: one block per grid of 64 threads. Threads 0-29 scan the
// rows and threads 32-61 the columns, each both ways, carrying the last non-zero cell met (the
// cell itself included): from_left[t] is the nearest non-zero cell at or left of cell t, and so
// on. Then each cell reads its four carries:
//   rays (connect == 0): a background cell takes the first of ``count`` directions (two bits each
//     in ``dirs``, first in the lowest: 0 down, 1 up, 2 left, 3 right) whose carry is non-zero;
//     a ray going down comes from above.
//   connect: a background cell whose nearest non-zero cells left and right have one colour takes
//     it; with ``vertical`` the same above and below, over the horizontal line; with ``marked``
//     the line gets the mark.
extern "C" __global__ void line_draw(const unsigned char* g, unsigned char* out, int H, int W, int connect,
                                     int dirs, int count, int vertical, int marked) {
    __shared__ unsigned char a[1024], from[4][1024];   // from above, below, right, left
    int cells = H * W, t = threadIdx.x;
    long long i = blockIdx.x;
    for (int k = t; k < cells; k += blockDim.x) a[k] = g[i * cells + k];
    __syncthreads();
    if (t < H) {
        unsigned char c = 0;
        for (int x = 0; x < W; ++x) { if (a[t * W + x]) c = a[t * W + x]; from[3][t * W + x] = c; }
        c = 0;
        for (int x = W - 1; x >= 0; --x) { if (a[t * W + x]) c = a[t * W + x]; from[2][t * W + x] = c; }
    }
    int u = t - 32;
    if (u >= 0 && u < W) {
        unsigned char c = 0;
        for (int y = 0; y < H; ++y) { if (a[y * W + u]) c = a[y * W + u]; from[0][y * W + u] = c; }
        c = 0;
        for (int y = H - 1; y >= 0; --y) { if (a[y * W + u]) c = a[y * W + u]; from[1][y * W + u] = c; }
    }
    __syncthreads();
    for (int k = t; k < cells; k += blockDim.x) {
        unsigned char v = a[k];
        if (!connect) {
            for (int j = 0; v == 0 && j < count; ++j) v = from[(dirs >> (2 * j)) & 3][k];
        } else if (v == 0) {
            unsigned char line = 0;
            if (from[3][k] == from[2][k]) line = from[3][k];
            if (vertical && from[0][k] == from[1][k] && from[0][k]) line = from[0][k];
            v = marked ? mark_of(line) : line;
        }
        out[i * cells + k] = v;
    }
}

// regions.symmetrize: a thread per cell of a zero-padded (n, H, W) stack with real sides h, w. A
// background cell takes its mirror's colour: kind 0 left-right, 1 top-bottom, 2 point, 3 the
// transpose (sources clipped into the stack), 4 left-right, then top-bottom, then point, each
// mirror read from the grid the previous one filled.
__device__ unsigned char fill_lr(const unsigned char* a, int W, int y, int x, int wi) {
    unsigned char v = a[y * W + x];
    return v ? v : a[y * W + wi - 1 - x];
}

__device__ unsigned char fill_lr_ud(const unsigned char* a, int W, int y, int x, int hi, int wi) {
    unsigned char v = fill_lr(a, W, y, x, wi);
    return v ? v : fill_lr(a, W, hi - 1 - y, x, wi);
}

extern "C" __global__ void symmetrize(const unsigned char* g, const long long* h, const long long* w,
                                      int H, int W, int kind, unsigned char* out, long long total) {
    long long t = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (t >= total) return;
    int cells = H * W, k = (int)(t % cells), y = cell_row(k, W), x = cell_col(k, W);
    long long i = t / cells;
    const unsigned char* a = g + (t - k);
    int hi = (int)h[i], wi = (int)w[i];
    unsigned char v = a[k];
    if (v == 0 && y < hi && x < wi) {
        if (kind == 0) v = a[y * W + wi - 1 - x];
        else if (kind == 1) v = a[(hi - 1 - y) * W + x];
        else if (kind == 2) v = a[(hi - 1 - y) * W + wi - 1 - x];
        else if (kind == 3) v = a[min(x, H - 1) * W + min(y, W - 1)];
        else {
            v = fill_lr_ud(a, W, y, x, hi, wi);
            if (v == 0) v = fill_lr_ud(a, W, hi - 1 - y, wi - 1 - x, hi, wi);
        }
    }
    out[t] = v;
}

// draw.halo: a thread per cell. A background cell next to a non-zero cell (the first of up, down,
// left, right, then the diagonals; ``conn`` of them) takes its mark.
extern "C" __global__ void halo(const unsigned char* g, unsigned char* out, long long total, int H, int W,
                                int conn) {
    const int DY[8] = {-1, 1, 0, 0, -1, -1, 1, 1}, DX[8] = {0, 0, -1, 1, -1, 1, -1, 1};
    long long t = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (t >= total) return;
    int cells = H * W, k = (int)(t % cells), y = cell_row(k, W), x = cell_col(k, W);
    const unsigned char* a = g + (t - k);
    unsigned char v = a[k];
    if (v == 0) {
        for (int j = 0; j < conn; ++j) {
            int yy = y + DY[j], xx = x + DX[j];
            if (yy < 0 || yy >= H || xx < 0 || xx >= W) continue;
            unsigned char u = a[yy * W + xx];
            if (u) { v = mark_of(u); break; }
        }
    }
    out[t] = v;
}

// regions.overlay_halves: a thread per cell of the (n, OH, OW) output. ``across`` (lr): the left
// half (h x w/2) against the right; else (ud) the top half against the bottom. op: 0 and, 1 or,
// 2 xor, 3 nor. A grid's first thread also writes its half's sides and whether it has one (were
// six array calls per stack).
extern "C" __global__ void overlay_halves(const unsigned char* g, const long long* h, const long long* w,
                                          int H, int W, int OH, int OW, int across, int op,
                                          unsigned char* out, long long total, long long* out_h,
                                          long long* out_w, bool* valid) {
    long long t = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (t >= total) return;
    long long i = t / (OH * OW);
    int k = (int)(t % (OH * OW)), y = k / OW, x = k % OW;
    int hi = (int)h[i], wi = (int)w[i];
    int bh = across ? hi : hi / 2, bw = across ? wi / 2 : wi;
    if (k == 0) {
        out_h[i] = bh;
        out_w[i] = bw;
        valid[i] = bh >= 1 && bw >= 1 && (across ? wi : hi) >= 2;
    }
    unsigned char o = 0;
    if (y < bh && x < bw) {
        const unsigned char* s = g + i * H * W;
        unsigned char a = s[y * W + x];
        unsigned char b = across ? s[y * W + wi - bw + x] : s[(hi - bh + y) * W + x];
        if (op == 0) o = (a && b) ? a : 0;
        else if (op == 1) o = a ? a : b;
        else if (op == 2) o = ((a != 0) != (b != 0)) ? (a ? a : b) : 0;
        else o = (!a && !b) ? 1 : 0;
    }
    out[t] = o;
}

// cells.cell_summary: one block per grid (at least 256 threads). The separator colour has the most
// full rows plus full columns; the runs of other lines cut the grid into parts, each summarised by
// one cell of the (n, 15, 15) output (15: the most runs 30 lines can hold).
extern "C" __global__ void cell_summary(const unsigned char* g, const long long* h, const long long* w,
                                        int H, int W, int count_mode, unsigned char* out,
                                        long long* out_h, long long* out_w, bool* valid) {
    __shared__ unsigned char cell[1024], full_row[32], full_col[32];
    __shared__ int lines[10], rid[32], cid[32], runs[2];
    __shared__ int hist[15 * 15 * 10];
    int cells = H * W, t = threadIdx.x;
    long long i = blockIdx.x;
    int hi = (int)h[i], wi = (int)w[i];
    for (int k = t; k < cells; k += blockDim.x) cell[k] = g[i * cells + k];
    if (t < 10) lines[t] = 0;
    for (int k = t; k < 15 * 15 * 10; k += blockDim.x) hist[k] = 0;
    __syncthreads();
    if (t < H) {                  // row t: real, and every real cell its first cell's colour
        bool full = t < hi;
        for (int c = 1; full && c < wi; ++c) full = cell[t * W + c] == cell[t * W];
        full_row[t] = full;
        if (full) atomicAdd(&lines[cell[t * W]], 1);
    }
    int u = t - 32;
    if (u >= 0 && u < W) {        // column u likewise
        bool full = u < wi;
        for (int r = 1; full && r < hi; ++r) full = cell[r * W + u] == cell[u];
        full_col[u] = full;
        if (full) atomicAdd(&lines[cell[u]], 1);
    }
    __syncthreads();
    int s = 0;
    for (int c = 1; c < 10; ++c) if (lines[c] > lines[s]) s = c;
    bool has = lines[s] > 0;
    if (t == 0) {                 // runs of non-separator lines (padding lines are separators)
        int n_rows = 0, n_cols = 0;
        bool prev = true;
        for (int r = 0; r < H; ++r) {
            bool sep = r >= hi || (full_row[r] && cell[r * W] == s);
            if (!sep && prev) ++n_rows;
            rid[r] = sep ? -1 : n_rows - 1;
            prev = sep;
        }
        prev = true;
        for (int c = 0; c < W; ++c) {
            bool sep = c >= wi || (full_col[c] && cell[c] == s);
            if (!sep && prev) ++n_cols;
            cid[c] = sep ? -1 : n_cols - 1;
            prev = sep;
        }
        runs[0] = has ? n_rows : 0;
        runs[1] = has ? n_cols : 0;
    }
    __syncthreads();
    int R = runs[0], C = runs[1];
    bool ok = R * C >= 2;
    for (int k = t; ok && k < cells; k += blockDim.x) {
        int y = cell_row(k, W), x = cell_col(k, W);
        if (rid[y] >= 0 && cid[x] >= 0) atomicAdd(&hist[(rid[y] * 15 + cid[x]) * 10 + cell[k]], 1);
    }
    __syncthreads();
    if (t < 15 * 15) {   // blockDim.x >= 256
        int a = t / 15, b = t % 15;
        unsigned char o = 0;
        if (ok && a < R && b < C) {
            const int* part = hist + (a * 15 + b) * 10;
            if (count_mode) {
                int sum = 0;
                for (int c = 1; c < 10; ++c) if (c != s) sum += part[c];
                o = (unsigned char)min(sum, 9);
            } else {
                int best = 0, top = s == 0 ? -1 : part[0];
                for (int c = 1; c < 10; ++c) { int v = c == s ? -1 : part[c]; if (v > top) { top = v; best = c; } }
                o = (unsigned char)best;
            }
        }
        out[i * 225 + t] = o;
    }
    if (t == 0) { out_h[i] = R; out_w[i] = C; valid[i] = ok; }
}

// regions.dedup_lines and regions.compress: one block per grid. Rows (then columns) are kept when
// they differ from the one before them (``nonzero`` 0) or hold a non-zero cell (``nonzero`` 1);
// the kept lines move up (left) in order, zeros after them.
extern "C" __global__ void keep_lines(const unsigned char* g, const long long* h, const long long* w,
                                      int H, int W, int rows, int cols, int nonzero, unsigned char* out,
                                       long long* out_h, long long* out_w, bool* valid) {
    __shared__ unsigned char a[1024], b[1024];
    __shared__ unsigned char keep[32];
    __shared__ int place[33];   // where each kept line goes; place[lines]: how many are kept
    int cells = H * W, t = threadIdx.x;
    long long i = blockIdx.x;
    int nh = (int)h[i], nw = (int)w[i];
    for (int k = t; k < cells; k += blockDim.x) a[k] = g[i * cells + k];
    __syncthreads();
    for (int pass = 0; pass < 2; ++pass) {
        bool by_rows = pass == 0;
        if (by_rows ? !rows : !cols) continue;
        int lines = by_rows ? H : W, len = by_rows ? W : H, real = by_rows ? nh : nw;
        if (t < lines) {
            bool kept = !nonzero && t == 0;
            for (int k = 0; !kept && k < len; ++k) {
                int at = by_rows ? t * W + k : k * W + t, prev = by_rows ? at - W : at - 1;
                kept = nonzero ? a[at] != 0 : a[at] != a[prev];
            }
            keep[t] = t < real && kept;
        }
        for (int k = t; k < cells; k += blockDim.x) b[k] = 0;
        __syncthreads();
        if (t == 0) {
            int sum = 0;
            for (int k = 0; k < lines; ++k) { place[k] = sum; sum += keep[k]; }
            place[lines] = sum;
        }
        __syncthreads();
        for (int k = t; k < cells; k += blockDim.x) {
            int y = cell_row(k, W), x = cell_col(k, W), line = by_rows ? y : x;
            if (keep[line]) b[by_rows ? place[line] * W + x : y * W + place[line]] = a[k];
        }
        if (by_rows) nh = place[lines]; else nw = place[lines];
        __syncthreads();
        for (int k = t; k < cells; k += blockDim.x) a[k] = b[k];
        __syncthreads();
    }
    for (int k = t; k < cells; k += blockDim.x) out[i * cells + k] = a[k];
    if (t == 0) { out_h[i] = nh; out_w[i] = nw; valid[i] = nh > 0 && nw > 0; }
}

// regions.outline / regions.interior: a thread per cell of the stack. A non-zero cell is inner when
// its four neighbours are non-zero (cells beyond the stack's sides count as background); outline
// keeps the non-zero cells that are not inner, interior the inner ones (was: a padded copy of the
// mask, four shifted ands and a where).
extern "C" __global__ void edge_cells(const unsigned char* g, long long total, int H, int W, int interior,
                                      unsigned char* out) {
    long long t = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (t >= total) return;
    const int k = (int)(t % (H * W)), y = cell_row(k, W), x = k - y * W;
    const unsigned char v = g[t];
    const bool inner = v && y > 0 && y < H - 1 && x > 0 && x < W - 1 && g[t - W] && g[t + W] && g[t - 1] && g[t + 1];
    out[t] = (interior ? inner : (v && !inner)) ? v : 0;
}

// A grid's most frequent non-zero colour (first of equals; 0 when it has none) or, with ``rarest``,
// its least frequent one present (first of equals; 0 when none), from its colour counts c[0..9].
__device__ int pick_colour(const long long* c, bool rarest) {
    int pick = 0;
    long long best = 0;
    for (int k = 1; k < 10; ++k) {
        if (rarest ? (c[k] > 0 && (pick == 0 || c[k] < best)) : c[k] > best) { best = c[k]; pick = k; }
    }
    return pick;
}

// colour.keep_majority_color (mode 0), keep_minority_color (1) and invert (2): a thread per cell of
// an (n, cells) stack, each grid's colour picked from its counts (n, 10). (Were a copy of the
// counts, a store, an argmin or argmax, a cast, a comparison and a where.)
extern "C" __global__ void colour_pick(const unsigned char* g, const long long* counts, long long total, int cells,
                                       int mode, unsigned char* out) {
    long long t = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (t >= total) return;
    const unsigned char pick = (unsigned char)pick_colour(counts + (t / cells) * 10, mode == 1), v = g[t];
    out[t] = mode == 2 ? (v == 0 ? pick : 0) : ((v == pick && v != 0) ? v : 0);
}

// arrange.colour_column: a thread per grid, from its colour counts (n, 10). Its non-zero colours
// present, most frequent first (ties: the lower colour), the ``skip`` most frequent left out, down
// the one column of out (n, 9 - skip); the rest 0. Sides k x 1 with k the colours left, valid when
// k >= 1. (Were three row sums, CUB's segmented reductions on a GPU, and a dozen array calls.)
extern "C" __global__ void colour_column(const long long* counts, long long n, int skip, unsigned char* out,
                                         long long* out_h, long long* out_w, bool* valid) {
    const long long i = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= n) return;
    const long long* c = counts + i * 10;
    const int rows = 9 - skip;
    int placed = 0;
    bool used[10] = {false};
    for (int r = 0; r < 9; ++r) {
        int best = 0;
        long long most = 0;
        for (int colour = 1; colour <= 9; ++colour)
            if (!used[colour] && c[colour] > most) { best = colour; most = c[colour]; }
        if (best == 0) break;
        used[best] = true;
        if (r >= skip) out[i * rows + r - skip] = (unsigned char)best;
        ++placed;
    }
    for (int r = max(0, placed - skip); r < rows; ++r) out[i * rows + r] = 0;
    const int k = placed - skip;
    out_h[i] = max(k, 0);
    out_w[i] = 1;
    valid[i] = k >= 1;
}

// objects.remove_noise (mode 0: cells of one-cell objects erased) and recolour.color_by_size and
// color_by_rank (mode 1: each object's cells painted its value[label], clipped to 1..9; the
// background 0): a thread per cell of the labels' stack.
extern "C" __global__ void label_paint(const unsigned char* g, const int* labels, const long long* value,
                                       long long total, int mode, unsigned char* out) {
    long long t = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (t >= total) return;
    const int lab = labels[t];
    const long long v = value[lab];
    out[t] = mode == 0 ? (v == 1 ? 0 : g[t]) : (lab > 0 ? (unsigned char)(v < 1 ? 1 : (v > 9 ? 9 : v)) : 0);
}

// recolour.color_by_rank: each object's cells painted the dense rank of its size among its grid's
// objects (1: the largest; past 9: 9), the background 0. A block per grid of the labels' stack marks
// the sizes present (1..cells), counts them from the largest down, then paints. (The array calls
// rank (grid, size) keys with a sort: CuPy's sorts load Thrust's library on first use.)
extern "C" __global__ void size_rank_paint(const int* labels, const long long* sizes, int cells, unsigned char* out) {
    __shared__ int rank[1025];
    const int t = threadIdx.x;
    const long long at = (long long)blockIdx.x * cells;
    for (int s = t; s <= cells; s += blockDim.x) rank[s] = 0;
    __syncthreads();
    for (int k = t; k < cells; k += blockDim.x) {
        const int lab = labels[at + k];
        if (lab > 0) rank[sizes[lab]] = 1;
    }
    __syncthreads();
    if (t == 0)
        for (int s = cells, r = 0; s >= 1; --s) { r += rank[s]; rank[s] = r; }
    __syncthreads();
    for (int k = t; k < cells; k += blockDim.x) {
        const int lab = labels[at + k];
        out[at + k] = lab > 0 ? (unsigned char)min(9, rank[sizes[lab]]) : 0;
    }
}

// geometry.crop_minority's mask: the real cells (inside h x w) that differ from the grid's most
// frequent colour, background included (the padding's cells taken out of colour 0's count;
// first of equals), a thread per cell of the zero-padded (n, H, W) stack.
extern "C" __global__ void differs_from_major(const unsigned char* g, const long long* counts, const long long* h,
                                              const long long* w, long long total, int H, int W, bool* mask) {
    long long t = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (t >= total) return;
    const int cells = H * W, k = (int)(t % cells), y = cell_row(k, W), x = k - y * W;
    const long long i = t / cells, hi = h[i], wi = w[i];
    const long long* c = counts + i * 10;
    int major = 0;
    long long best = c[0] - (cells - hi * wi);
    for (int j = 1; j < 10; ++j) if (c[j] > best) { best = c[j]; major = j; }
    mask[t] = y < hi && x < wi && g[t] != major;
}

// objects.rarest_color_object's choice: per grid (a block), the label of the first cell in reading
// order of its least frequent colour present (0 when it has none).
extern "C" __global__ void rarest_label(const unsigned char* g, const int* labels, const long long* counts,
                                        int cells, long long* chosen) {
    __shared__ int first;
    const long long i = blockIdx.x;
    const int rare = pick_colour(counts + i * 10, true);
    if (threadIdx.x == 0) first = BIG;
    __syncthreads();
    int mine = BIG;
    for (int k = threadIdx.x; k < cells; k += blockDim.x) {
        if (rare != 0 && g[i * cells + k] == rare) { mine = k; break; }
    }
    mine = warp_min(mine);
    if (threadIdx.x % 32 == 0 && mine < BIG) atomicMin(&first, mine);
    __syncthreads();
    if (threadIdx.x == 0) chosen[i] = first == BIG ? 0 : labels[i * cells + first];
}

// arrange.rotations_4: a thread per cell of the (n, rows, cols) output; grid i (side s = h[i]) and
// its three turns in a 2s x 2s block: top left as it is, top right turned clockwise, bottom left
// counter-clockwise, bottom right a half turn. Sources are clipped into the (n, H, W) stack, cells
// outside 2h[i] x 2w[i] are 0 (what the four gathers and the selections gave).
extern "C" __global__ void rotations_4(const unsigned char* g, const long long* h, const long long* w, int H, int W,
                                       int rows, int cols, long long total, unsigned char* out) {
    long long t = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (t >= total) return;
    const int per = rows * cols, k = (int)(t % per), R = cell_row(k, cols), C = k - R * cols;
    const long long i = t / per, s = h[i];
    unsigned char v = 0;
    if (R < 2 * s && C < 2 * w[i]) {
        const bool right = C >= s, below = R >= s;
        long long r = right ? (below ? 2 * s - 1 - R : 2 * s - 1 - C) : (below ? C : R);
        long long c = right ? (below ? 2 * s - 1 - C : R) : (below ? 2 * s - 1 - R : C);
        r = r < 0 ? 0 : (r > H - 1 ? H - 1 : r);
        c = c < 0 ? 0 : (c > W - 1 ? W - 1 : c);
        v = g[i * H * W + r * W + c];
    }
    out[t] = v;
}

// rects.keep_largest_block: one block per grid. down[k]: how many cells from cell k downwards
// share its non-zero colour. Thread r scans the rectangles whose top row is r: for each height
// a >= 2, the runs of columns (of one colour) whose down >= a, scored as the array calls score
// them, ((a * length) * 1024 + 1023 - (r * W + start)) * 32 + a; the block keeps the highest
// score, which encodes the rectangle.
extern "C" __global__ void keep_largest_block(const unsigned char* g, unsigned char* out, int H, int W) {
    __shared__ unsigned char cell[1024], down[1024];
    __shared__ int best;
    int cells = H * W, t = threadIdx.x;
    long long i = blockIdx.x;
    for (int k = t; k < cells; k += blockDim.x) cell[k] = g[i * cells + k];
    if (t == 0) best = -1;
    __syncthreads();
    if (t < W) {
        int run = 0;
        for (int r = H - 1; r >= 0; --r) {
            unsigned char v = cell[r * W + t];
            run = v == 0 ? 0 : (r + 1 < H && cell[(r + 1) * W + t] == v ? run + 1 : 1);
            down[r * W + t] = (unsigned char)run;
        }
    }
    __syncthreads();
    if (t < H) {
        int mine = -1;
        for (int a = 2; a <= H - t; ++a) {
            int start = 0, length = 0;
            for (int c = 0; c < W; ++c) {
                int k = t * W + c;
                if (down[k] < a) { length = 0; continue; }
                if (length > 0 && cell[k] == cell[k - 1]) ++length;
                else { start = c; length = 1; }
                bool ends = c + 1 == W || down[k + 1] < a || cell[k + 1] != cell[k];
                if (ends && length >= 2) {
                    int score = ((a * length) * 1024 + 1023 - (t * W + start)) * 32 + a;
                    if (score > mine) mine = score;
                }
            }
        }
        if (mine >= 0) atomicMax(&best, mine);
    }
    __syncthreads();
    int s = best, a = s % 32, pos = 1023 - (s / 32) % 1024;
    int length = s >= 0 ? s / 32 / 1024 / a : 0, top = pos / W, left = pos % W;
    for (int k = t; k < cells; k += blockDim.x) {
        int r = k / W, c = k % W;
        bool inside = s >= 0 && r >= top && r < top + a && c >= left && c < left + length;
        out[i * cells + k] = inside ? cell[k] : 0;
    }
}

// attract.slide_to_colour for colour c: one block per grid. The objects (8 neighbours, any
// colours but c) are labelled by their lowest cell index; each cell gives its object the
// distance to the nearest cell of c beyond it in each direction (down, up, left, right; 63 for
// none) and to the grid's edge; the object moves in the direction nearest to c (ties in that
// order), one cell short of it or to the edge. Where moved cells meet, the highest colour.
extern "C" __global__ void slide_to_colour(const unsigned char* g, const long long* h, const long long* w,
                                           int H, int W, int c, unsigned char* out) {
    __shared__ int lab[1024], moved[1024], nearest[4][1024], room[4][1024];
    __shared__ unsigned char col[1024];
    __shared__ int holds;
    const int FAR = 63;
    const int DY[4] = {1, -1, 0, 0}, DX[4] = {0, 0, -1, 1};
    int cells = H * W, t = threadIdx.x;
    long long i = blockIdx.x;
    int hi = (int)h[i], wi = (int)w[i];
    if (t == 0) holds = 0;
    __syncthreads();
    for (int k = t; k < cells; k += blockDim.x) {
        unsigned char v = g[i * cells + k];
        if (v == c) atomicOr(&holds, 1);
        col[k] = v == c ? 0 : v;
        lab[k] = col[k] ? k : BIG;
        moved[k] = 0;
        for (int d = 0; d < 4; ++d) { nearest[d][k] = FAR; room[d][k] = FAR; }
    }
    __syncthreads();
    if (!holds) {
        for (int k = t; k < cells; k += blockDim.x) out[i * cells + k] = g[i * cells + k];
        return;
    }
    label_shared(col, lab, H, W, 8, 0);
    for (int k = t; k < cells; k += blockDim.x) {
        if (!col[k]) continue;
        int y = cell_row(k, W), x = cell_col(k, W), root = lab[k];
        int edge[4] = {hi - 1 - y, y, x, wi - 1 - x};
        for (int d = 0; d < 4; ++d) {
            int dist = FAR;
            for (int s = 1, yy = y + DY[d], xx = x + DX[d]; yy >= 0 && yy < H && xx >= 0 && xx < W;
                 ++s, yy += DY[d], xx += DX[d])
                if (g[i * cells + yy * W + xx] == c) { dist = s; break; }
            atomicMin(&nearest[d][root], dist);
            atomicMin(&room[d][root], edge[d] < FAR ? edge[d] : FAR);
        }
    }
    __syncthreads();
    for (int k = t; k < cells; k += blockDim.x) {
        if (!col[k]) continue;
        int root = lab[k], best = 0;
        for (int d = 1; d < 4; ++d) if (nearest[d][root] < nearest[best][root]) best = d;
        int step = nearest[best][root] - 1;
        step = step < FAR - 1 ? min(step, room[best][root]) : 0;
        int y = cell_row(k, W) + DY[best] * step, x = cell_col(k, W) + DX[best] * step;
        atomicMax(&moved[y * W + x], (int)col[k]);
    }
    __syncthreads();
    for (int k = t; k < cells; k += blockDim.x) {
        unsigned char v = g[i * cells + k];
        out[i * cells + k] = moved[k] ? (unsigned char)moved[k] : (v == c ? v : 0);
    }
}

// paint_more.line_majority: a block per grid. Thread t counts the colours of row t and of column t
// (its real cells only) and keeps the most frequent (ties: the lower colour); the cells that each
// way would change are counted in shared memory; every real cell is then painted with its row's
// (axis 0), its column's (axis 1) or, for axis 2, whichever of the two changes fewer cells (ties:
// rows). The padding stays 0.
extern "C" __global__ void line_majority(const unsigned char* g, const long long* h, const long long* w,
                                         int H, int W, int axis, unsigned char* out,
                                         long long* out_h, long long* out_w, bool* valid) {
    __shared__ unsigned char a[1024];
    __shared__ unsigned char row_major[32], col_major[32];
    __shared__ int changed[2];
    int cells = H * W, t = threadIdx.x;
    long long i = blockIdx.x;
    int nh = (int)h[i], nw = (int)w[i];
    for (int k = t; k < cells; k += blockDim.x) a[k] = g[i * cells + k];
    if (t < 2) changed[t] = 0;
    __syncthreads();
    if (t < 32) {
        int count[10];
        for (int pass = 0; pass < 2; ++pass) {
            int lines = pass == 0 ? nh : nw, len = pass == 0 ? nw : nh;
            if (t >= lines) continue;
            for (int c = 0; c < 10; ++c) count[c] = 0;
            for (int k = 0; k < len; ++k) ++count[a[pass == 0 ? t * W + k : k * W + t]];
            int best = 0;
            for (int c = 1; c < 10; ++c) if (count[c] > count[best]) best = c;
            if (pass == 0) row_major[t] = (unsigned char)best; else col_major[t] = (unsigned char)best;
        }
    }
    __syncthreads();
    int by_rows = 0, by_cols = 0;
    for (int k = t; k < cells; k += blockDim.x) {
        int y = cell_row(k, W), x = cell_col(k, W);
        if (y < nh && x < nw) {
            by_rows += row_major[y] != a[k];
            by_cols += col_major[x] != a[k];
        }
    }
    atomicAdd(&changed[0], by_rows);
    atomicAdd(&changed[1], by_cols);
    __syncthreads();
    bool cols = axis == 1 || (axis == 2 && changed[1] < changed[0]);
    for (int k = t; k < cells; k += blockDim.x) {
        int y = cell_row(k, W), x = cell_col(k, W);
        out[i * cells + k] = y < nh && x < nw ? (cols ? col_major[x] : row_major[y]) : 0;
    }
    if (t == 0) { out_h[i] = nh; out_w[i] = nw; valid[i] = true; }
}

// paint_more.colour_boxes: a block per grid. The bounding box of each colour's cells is gathered in
// shared memory; each background cell then takes the lowest colour whose box holds it.
extern "C" __global__ void colour_boxes(const unsigned char* g, unsigned char* out, int H, int W) {
    __shared__ unsigned char a[1024];
    __shared__ int top[10], bottom[10], left[10], right[10];
    int cells = H * W, t = threadIdx.x;
    long long i = blockIdx.x;
    if (t < 10) { top[t] = H; left[t] = W; bottom[t] = -1; right[t] = -1; }
    for (int k = t; k < cells; k += blockDim.x) a[k] = g[i * cells + k];
    __syncthreads();
    for (int k = t; k < cells; k += blockDim.x) {
        int c = a[k];
        if (c == 0) continue;
        int y = cell_row(k, W), x = cell_col(k, W);
        atomicMin(&top[c], y); atomicMax(&bottom[c], y);
        atomicMin(&left[c], x); atomicMax(&right[c], x);
    }
    __syncthreads();
    for (int k = t; k < cells; k += blockDim.x) {
        unsigned char v = a[k];
        if (v == 0) {
            int y = cell_row(k, W), x = cell_col(k, W);
            for (int c = 1; c < 10; ++c)
                if (y >= top[c] && y <= bottom[c] && x >= left[c] && x <= right[c]) { v = (unsigned char)c; break; }
        }
        out[i * cells + k] = v;
    }
}

// moves.diagonal_rays: a block per grid, a thread per diagonal. For each direction of ``dirs`` in
// turn (two bits each, ``count`` of them: 0 down right, 1 down left, 2 up right, 3 up left), a
// thread walks its diagonal in that direction carrying the colour of the last non-zero cell, which
// each background cell takes; a cell keeps the first non-zero colour any direction gives it.
extern "C" __global__ void diagonal_rays(const unsigned char* g, unsigned char* out, int H, int W,
                                         int dirs, int count) {
    __shared__ unsigned char a[1024], o[1024];
    int cells = H * W, t = threadIdx.x;
    long long i = blockIdx.x;
    for (int k = t; k < cells; k += blockDim.x) { a[k] = g[i * cells + k]; o[k] = 0; }
    __syncthreads();
    for (int j = 0; j < count; ++j) {
        int d = (dirs >> (2 * j)) & 3;
        bool flip_rows = d >= 2, flip_cols = d == 1 || d == 3;
        if (t < H + W - 1) {
            // In the flipped frame the rays go down right; diagonal t starts on the top row or the
            // left column.
            int r = t < W ? 0 : t - W + 1, c = t < W ? t : 0;
            unsigned char carry = 0;
            for (; r < H && c < W; ++r, ++c) {
                int k = (flip_rows ? H - 1 - r : r) * W + (flip_cols ? W - 1 - c : c);
                unsigned char v = a[k] != 0 ? a[k] : carry;
                carry = v;
                if (o[k] == 0) o[k] = v;
            }
        }
        __syncthreads();
    }
    for (int k = t; k < cells; k += blockDim.x) out[i * cells + k] = o[k];
}

// reach._nearest_code: a thread per line of an (n, H, W) int16 stack. Along the rows' index
// (``along_rows``: a line per column) or the columns' (a line per row), forwards or ``reverse``,
// each cell takes the last non-zero code strictly before it, 0 where there is none.
extern "C" __global__ void nearest_code(const short* code, short* out, long long n, int H, int W,
                                        int along_rows, int reverse) {
    long long id = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    int lines = along_rows ? W : H, len = along_rows ? H : W;
    if (id >= n * lines) return;
    long long i = id / lines;
    int line = (int)(id - i * lines);
    const short* c = code + i * H * W;
    short* o = out + i * H * W;
    short carry = 0;
    for (int s = 0; s < len; ++s) {
        int j = reverse ? len - 1 - s : s;
        int k = along_rows ? j * W + line : line * W + j;
        o[k] = carry;
        if (c[k] != 0) carry = c[k];
    }
}
