// counts[key[i]] += 1 for each of the n keys (a histogram added to, with no wait: CuPy's bincount
// waits for the keys' maximum).
extern "C" __global__ void count_keys_into(const long long* key, long long n, unsigned long long* counts) {
    long long i = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n) atomicAdd(&counts[key[i]], 1ull);
}

// Stable grouping by a small key (group_order): the positions of n items ordered by key (0..1023),
// equal keys in position order, as a counting sort (no sort: CuPy's sorts load Thrust's library,
// 40-60 ms in a process's first search). Each warp takes a chunk of consecutive items. The first
// kernel counts each chunk's keys into hist[key * chunks + chunk] (key-major: an exclusive prefix
// sum over hist is each chunk's first place for each key); the second puts each chunk's items
// there, 32 at a time: a lane's rank among the round's lanes with its key by shuffles, then the
// last of them moves the key's next place on.
#define GROUP_WARPS 8
extern "C" __global__ void key_chunk_counts(const int* key, long long n, long long chunk, long long chunks,
                                            int* hist) {
    __shared__ int count[GROUP_WARPS][1024];
    int wid = threadIdx.x / 32, lane = threadIdx.x % 32;
    long long c = (long long)blockIdx.x * GROUP_WARPS + wid;
    if (c >= chunks) return;  // the whole warp
    for (int k = lane; k < 1024; k += 32) count[wid][k] = 0;
    __syncwarp();
    long long hi = min(n, (c + 1) * chunk);
    for (long long i = c * chunk + lane; i < hi; i += 32) atomicAdd(&count[wid][key[i]], 1);
    __syncwarp();
    for (int k = lane; k < 1024; k += 32) hist[k * chunks + c] = count[wid][k];
}
extern "C" __global__ void key_chunk_place(const int* key, long long n, long long chunk, long long chunks,
                                           const long long* first, long long* order) {
    __shared__ long long next[GROUP_WARPS / 2][1024];
    int wid = threadIdx.x / 32, lane = threadIdx.x % 32;
    long long c = (long long)blockIdx.x * (GROUP_WARPS / 2) + wid;
    if (c >= chunks) return;  // the whole warp
    for (int k = lane; k < 1024; k += 32) next[wid][k] = first[k * chunks + c];
    __syncwarp();
    long long hi = min(n, (c + 1) * chunk);
    for (long long at = c * chunk; at < hi; at += 32) {
        long long i = at + lane;
        int k = i < hi ? key[i] : -1, before = 0, same = 0;
        for (int j = 0; j < 32; ++j) {
            int other = __shfl_sync(0xffffffffu, k, j);
            if (other == k) { ++same; before += j < lane; }
        }
        long long place = k >= 0 ? next[wid][k] + before : 0;
        if (k >= 0) order[place] = i;
        __syncwarp();
        if (k >= 0 && before == same - 1) next[wid][k] = place + 1;
        __syncwarp();
    }
}

// Copy grids between two layouts of one flat uint8 buffer each: a group of HASH_LANES lanes per
// grid, taking its cells in reading order (neighbouring lanes, neighbouring bytes; a thread per
// row looped over the row's bytes, 32 rows apart in a warp). Row r of grid i is w[i] bytes at
// src_base[i] + r * src_pitch[i] in src and at dst_base[i] + r * dst_pitch[i] in dst (pitch = the
// width of the stack the grid lies in).
extern "C" __global__ void copy_rows(const unsigned char* src, unsigned char* dst, long long n,
                                     const long long* src_base, const long long* src_pitch,
                                     const long long* dst_base, const long long* dst_pitch,
                                     const long long* h, const long long* w) {
    const long long i = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / HASH_LANES;
    if (i >= n) return;  // nothing warp-wide below: the lanes past the end may leave
    const int wi = (int)w[i], cells = (int)h[i] * wi;
    const unsigned char* s = src + src_base[i];
    unsigned char* d = dst + dst_base[i];
    const long long sp = src_pitch[i], dp = dst_pitch[i];
    for (int q = threadIdx.x % HASH_LANES; q < cells; q += HASH_LANES) {
        const int r = cell_row(q, wi), c = q - r * wi;
        d[r * dp + c] = s[r * sp + c];
    }
}

// Deduplication (pipeline.search.keyset.HashKeySet): an open-addressing table of 64-bit keys with linear
// probing; ``keys`` has mask + 2 slots, the last one standing for the key equal to the empty marker
// (all ones). ``vals[s]`` is the smallest ``tag | position`` that inserted slot s's key; a batch's
// tag is above every earlier batch's, so a key seen before keeps its earlier value.
#define KEY_EMPTY 0xFFFFFFFFFFFFFFFFull
__device__ long long key_home(unsigned long long k, long long mask) {  // where k's probe starts
    return k == KEY_EMPTY ? mask + 1 : (long long)(splitmix(k) & (unsigned long long)mask);
}

// Positions where the mask `use` (when not null) is false are left out of the batch.
extern "C" __global__ void key_insert(const unsigned long long* batch, const bool* use, long long n,
                                      unsigned long long* keys, unsigned long long* vals, long long mask,
                                      unsigned long long tag) {
    long long i = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= n || (use && !use[i])) return;
    unsigned long long k = batch[i];
    long long s = key_home(k, mask);
    while (s <= mask) {  // the empty marker's own slot needs no claim
        unsigned long long prev = atomicCAS(&keys[s], KEY_EMPTY, k);
        if (prev == KEY_EMPTY || prev == k) break;
        s = (s + 1) & mask;
    }
    atomicMin(&vals[s], tag | (unsigned long long)i);
}

// After key_insert of the same batch: first[i] = 1 where position i is its key's first occurrence
// and the key was not in the table before the batch (0 where `use` is false).
extern "C" __global__ void key_first_new(const unsigned long long* batch, const bool* use, long long n,
                                         const unsigned long long* keys, const unsigned long long* vals,
                                         long long mask, unsigned long long tag, bool* first) {
    long long i = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= n) return;
    if (use && !use[i]) {
        first[i] = false;
        return;
    }
    unsigned long long k = batch[i];
    long long s = key_home(k, mask);
    if (s <= mask)
        while (keys[s] != k) s = (s + 1) & mask;
    first[i] = vals[s] == (tag | (unsigned long long)i);
}

// After key_insert of a batch as a fresh table's first (tag 0): first[i] = the first position of
// batch[i]'s key in the batch (its slot keeps the smallest position that inserted it).
extern "C" __global__ void key_first_position(const unsigned long long* batch, long long n,
                                              const unsigned long long* keys, const unsigned long long* vals,
                                              long long mask, long long* first) {
    long long i = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= n) return;
    unsigned long long k = batch[i];
    long long s = key_home(k, mask);
    if (s <= mask)
        while (keys[s] != k) s = (s + 1) & mask;
    first[i] = (long long)vals[s];
}

// Move every key of a table (old_slots slots, without its empty-marker slot) into a larger empty
// one, with its value.
extern "C" __global__ void key_rehash(const unsigned long long* old_keys, const unsigned long long* old_vals,
                                      long long old_slots, unsigned long long* keys, unsigned long long* vals,
                                      long long mask) {
    long long i = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= old_slots) return;
    unsigned long long k = old_keys[i];
    if (k == KEY_EMPTY) return;
    long long s = key_home(k, mask);
    while (atomicCAS(&keys[s], KEY_EMPTY, k) != KEY_EMPTY) s = (s + 1) & mask;
    vals[s] = old_vals[i];
}

// Per item (grid) of the merged outputs, one thread: its state's count of samples, and the
// wrapping sums of its mixed item hashes (GridHasher.item: splitmix(hash + (sample + 1) * golden))
// over all its samples and over its test samples (from n_train[task[s]] on). Sums of uint64 wrap,
// so the order of the atomic adds does not change them.
extern "C" __global__ void state_sums(const long long* st, const long long* sm, const unsigned long long* hv,
                                      long long n, const long long* task, const long long* n_train, int* count,
                                      unsigned long long* sum, unsigned long long* test_sum) {
    long long i = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= n) return;
    long long s = st[i], k = sm[i];
    unsigned long long mixed = splitmix(hv[i] + ((unsigned long long)k + 1ull) * 0x9E3779B97F4A7C15ull);
    atomicAdd(&count[s], 1);
    atomicAdd(&sum[s], mixed);
    if (k >= n_train[task[s]]) atomicAdd(&test_sum[s], mixed);
}

// The boards' picks (Search._update_boards): the new states j (positions among the new states
// new_pos of a merged block; s = new_pos[j]) whose rank beats their task's board threshold and,
// where `keep` is given (not null), that it keeps, each as one record of
// BOARD_ROW's layout (row_bytes each) for the host: count (one uint64) says how many there are,
// and the first `capacity` of them, in no set order, are written to rows (the host sorts them).
extern "C" __global__ void board_picks(long long n, const long long* new_pos, const long long* task,
                                       const double* threshold, const double* rank, const bool* solved,
                                       const bool* cm_ok, const long long* n_exact, const double* score,
                                       const unsigned long long* test_key, const long long* mapping,
                                       const bool* keep, unsigned long long* count, unsigned char* rows,
                                       long long capacity, int row_bytes) {
    long long j = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (j >= n) return;
    long long s = new_pos[j];
    if (!(rank[s] > threshold[task[s]]) || (keep && !keep[j])) return;
    unsigned long long at = atomicAdd(&count[0], 1ull);
    if (at >= (unsigned long long)capacity) return;
    unsigned char* r = rows + at * row_bytes;
    *(long long*)(r + 0) = j;
    *(double*)(r + 8) = rank[s];
    *(double*)(r + 16) = score[s];
    *(unsigned long long*)(r + 24) = test_key[s];
    *(long long*)(r + 32) = n_exact[s];
    r[40] = solved[s] || cm_ok[s];
    r[41] = cm_ok[s];
    for (int c = 0; c < 10; ++c) r[42 + c] = mapping ? (unsigned char)mapping[s * 10 + c] : 0;
    *(long long*)(r + 56) = s;
}

// The test grids of candidates entering the boards (pipeline.search.candidate_outputs): test_items finds, for
// each item i of a merged block's outputs whose state is a candidate's (states: the m candidates'
// states, sorted; rows: their rows) and whose sample is a test sample t, its slot rows * K + t
// in item_of (filled with -1 before); test_cells copies each slot's grid into a fixed slot of
// SLOT cells (zeros past the grid; a slot without an item stays all zeros, sides 0).
extern "C" __global__ void test_items(const long long* st, const long long* sm, long long n, const long long* task,
                                      const long long* n_train, const long long* states, const long long* rows,
                                      long long m, int K, long long* item_of) {
    long long i = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= n) return;
    long long s = st[i], lo = 0, hi = m;
    while (lo < hi) {
        long long mid = (lo + hi) / 2;
        if (states[mid] < s) lo = mid + 1; else hi = mid;
    }
    if (lo == m || states[lo] != s) return;
    long long t = sm[i] - n_train[task[s]];
    if (t >= 0 && t < K) item_of[rows[lo] * K + t] = i;
}

extern "C" __global__ void test_cells(const unsigned char* cells, const long long* start, const long long* h,
                                      const long long* w, const long long* item_of, long long slots, int slot_cells,
                                      unsigned char* out, long long* out_h, long long* out_w) {
    long long k = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (k >= slots * slot_cells) return;
    long long slot = k / slot_cells, pos = k - slot * slot_cells, it = item_of[slot];
    long long gh = it >= 0 ? h[it] : 0, gw = it >= 0 ? w[it] : 0;
    out[k] = pos < gh * gw ? cells[start[it] + pos] : 0;
    if (pos == 0) { out_h[slot] = gh; out_w[slot] = gw; }
}

// kernels.positions: out[rank[s] - 1] = s where flag[s] (rank: flag's inclusive running count).
extern "C" __global__ void positions(const bool* flag, const long long* rank, long long n, long long* out) {
    long long s = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (s < n && flag[s]) out[rank[s] - 1] = s;
}

// Outputs made from a block's distinct grids, mapped back to the block's grids (search._DistinctGrids):
// place_outputs writes, per output j (m of them), its index at place[grid[j]] (the distinct grid it
// came from; place filled with -1 before); mapped_flags finds, per grid i of the block, the output
// of its distinct grid (at[i], -1: none) and whether it has one; mapped_take writes those that
// have one, at their place among them (rank: the flags' inclusive running count), with the
// block's state and sample and the output's sides, start and hash.
extern "C" __global__ void place_outputs(long long m, const long long* grid, long long* place) {
    long long j = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (j < m) place[grid[j]] = j;
}

extern "C" __global__ void mapped_flags(long long n, const long long* of_item, const long long* place,
                                        long long* at, bool* found) {
    long long i = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= n) return;
    at[i] = place[of_item[i]];
    found[i] = at[i] >= 0;
}

extern "C" __global__ void mapped_take(long long n, const bool* found, const long long* rank, const long long* at,
                                       const long long* state, const long long* sample, const long long* oh,
                                       const long long* ow, const long long* ostart,
                                       const unsigned long long* ohash, long long* m_state, long long* m_sample,
                                       long long* m_h, long long* m_w, long long* m_start,
                                       unsigned long long* m_hash) {
    long long i = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= n || !found[i]) return;
    const long long k = rank[i] - 1, j = at[i];
    m_state[k] = state[i];
    m_sample[k] = sample[i];
    m_h[k] = oh[j];
    m_w[k] = ow[j];
    m_start[k] = ostart[j];
    m_hash[k] = ohash[j];
}

// After state_sums, per state s of task task[s]: whether it has every sample, and its key and its
// test outputs' key (GridHasher.state_key: splitmix(sum ^ splitmix(task * golden + golden))).
extern "C" __global__ void state_keys(long long S, const int* count, const unsigned long long* sum,
                                      const unsigned long long* test_sum, const long long* task,
                                      const long long* n_samples, bool* valid, unsigned long long* key,
                                      unsigned long long* test_key) {
    long long s = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (s >= S) return;
    long long t = task[s];
    unsigned long long salt = splitmix((unsigned long long)t * 0x9E3779B97F4A7C15ull + 0x9E3779B97F4A7C15ull);
    valid[s] = count[s] == n_samples[t];
    key[s] = splitmix(sum[s] ^ salt);
    test_key[s] = splitmix(test_sum[s] ^ salt);
}

// Scoring: each new state whose train grids all have their outputs' sizes but do not all match them
// (it may learn a colour table) takes a slot, in no set order (the slots only index the histograms
// of score_cells, so nothing depends on it); every other state gets -1. count: how many took one.
extern "C" __global__ void colour_slots(long long S, const bool* is_new, const int* n_exact, const int* n_sized,
                                        const long long* task, const long long* n_train, long long* slot,
                                        unsigned long long* count) {
    long long s = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (s >= S) return;
    long long t = n_train[task[s]];
    bool takes = is_new[s] && n_sized[s] == t && n_exact[s] != t;
    slot[s] = takes ? (long long)atomicAdd(&count[0], 1ull) : -1;
}

// Where an item (of state s, sample k) is a train item of a new state: the index of its train
// output (task * max_train + k); else -1.
__device__ long long new_train_item(long long s, long long k, const long long* task, const bool* is_new,
                                    const long long* n_train, int max_train) {
    if (!is_new[s]) return -1;
    long long t = task[s];
    return k < n_train[t] ? t * max_train + k : -1;
}

// Scoring (Search._score on a GPU), one thread per item (grid) of the merged outputs; items of
// states that are not new, and test items, are skipped. score_fit counts per state the train items
// that match their output exactly (by hash) and those of its size.
extern "C" __global__ void score_fit(const long long* st, const long long* sm, const long long* h,
                                     const long long* w, const unsigned long long* hv, long long n,
                                     const long long* task, const bool* is_new, const long long* n_train,
                                     int max_train, const unsigned long long* target_hash,
                                     const long long* target_shape, int* n_exact, int* n_sized, long long* fit,
                                     unsigned long long* n_fit) {
    long long i = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= n) return;
    long long s = st[i], at = new_train_item(s, sm[i], task, is_new, n_train, max_train);
    if (at < 0) return;
    if (hv[i] == target_hash[at]) atomicAdd(&n_exact[s], 1);
    if (h[i] == target_shape[2 * at] && w[i] == target_shape[2 * at + 1]) {
        atomicAdd(&n_sized[s], 1);
        fit[atomicAdd(&n_fit[0], 1ull)] = i;  // listed for score_cells, in no particular order
    }
}

// score_cells: a warp per item that score_fit listed (``fit``: the train items of new states that
// have their output's size, in any order; a block's eight warps count in shared memory). Each
// item's cell accuracy in fixed point (matching cells * scale / cells) is added to acc of its
// state, and where its state has a slot >= 0 its (grid colour, output colour) pairs are counted
// into hist[slot] (10 x 10 per slot). Sums of integers: the same whatever the order. (A thread per
// item of the merged outputs, most of them not listed, looped over its cells alone: a few lanes
// of each warp busy, their loads apart.)
extern "C" __global__ void score_cells(const unsigned char* cells, const long long* st, const long long* sm,
                                       const long long* h, const long long* w, const long long* start,
                                       const long long* fit, long long n_fit, const long long* task,
                                       int max_train, const long long* target_offset, const unsigned char* target,
                                       const long long* slot, long long scale, unsigned long long* acc,
                                       int* hist) {
    __shared__ int pairs_of[8][100];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const long long j = (long long)blockIdx.x * 8 + warp;
    if (j >= n_fit) return;  // the whole warp: all its lanes share j
    const long long i = fit[j], s = st[i];
    const unsigned char* a = cells + start[i];
    const unsigned char* b = target + target_offset[task[s] * max_train + sm[i]];
    const long long sl = slot[s];
    int* pairs = pairs_of[warp];
    if (sl >= 0) {
        for (int k = lane; k < 100; k += 32) pairs[k] = 0;
        __syncwarp();
    }
    const int len = (int)(h[i] * w[i]);
    int ok = 0;
    for (int c = lane; c < len; c += 32) {
        const unsigned char x = a[c], y = b[c];
        ok += x == y;
        if (sl >= 0) atomicAdd(&pairs[x * 10 + y], 1);
    }
    for (int off = 16; off > 0; off >>= 1) ok += __shfl_down_sync(0xffffffffu, ok, off);
    if (lane == 0) atomicAdd(&acc[s], (unsigned long long)((ok * scale) / len));
    if (sl >= 0) {
        __syncwarp();
        for (int k = lane; k < 100; k += 32)
            if (pairs[k]) atomicAdd(&hist[sl * 100 + k], pairs[k]);
    }
}

// score_states: one thread per state; what Search._score gives a new state (other states get
// zeros): solved, exact matches, score, rank, and where it has a slot its colour table (each
// source colour to its most frequent output colour, the first on ties; unseen colours to
// themselves or to the colour most seen colours take; ``mapping`` may be null when no state has a
// slot) and whether that table is consistent (every source colour seen with one output colour only).
extern "C" __global__ void score_states(long long S, const bool* is_new, const long long* task,
                                        const long long* n_train, const int* n_exact_in,
                                        const unsigned long long* acc, const long long* slot, const int* hist,
                                        long long scale, double solved_rank, double* rank, bool* solved,
                                        long long* n_exact, double* score, long long* mapping, bool* cm_ok) {
    long long s = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (s >= S) return;
    bool fresh = is_new[s];
    long long nt = n_train[task[s]], ne = fresh ? n_exact_in[s] : 0;
    double sc = (double)(ne * scale + (long long)acc[s]) / (double)(nt * scale);
    bool done = fresh && ne == nt, ok = false;
    long long sl = slot[s];
    if (sl >= 0) {
        ok = true;
        int votes[10] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, seen_colours = 0;
        bool held[10];
        for (int c = 0; c < 10; ++c) {
            const int* row = hist + sl * 100 + c * 10;
            int best = 0, seen = 0;
            for (int d = 0; d < 10; ++d) {
                seen += row[d] > 0;
                if (row[d] > row[best]) best = d;
            }
            ok = ok && seen <= 1;
            held[c] = row[best] > 0;
            mapping[s * 10 + c] = held[c] ? best : c;
            if (c > 0 && held[c]) { ++votes[best]; ++seen_colours; }
        }
        // Unseen non-zero colours take the colour that MIN_DEFAULT_VOTES or more, and more than
        // half, of the seen non-zero colours take (scoring._colour_tables).
        int common = 0;
        for (int d = 1; d < 10; ++d) if (votes[d] > votes[common]) common = d;
        if (votes[common] >= MIN_DEFAULT_VOTES && 2 * votes[common] > seen_colours)
            for (int c = 1; c < 10; ++c) if (!held[c]) mapping[s * 10 + c] = common;
    } else if (mapping) {
        for (int c = 0; c < 10; ++c) mapping[s * 10 + c] = 0;
    }
    solved[s] = done;
    n_exact[s] = ne;
    score[s] = sc;
    cm_ok[s] = ok;
    rank[s] = done ? solved_rank : ok ? solved_rank - 1.0 : sc;
}

// A lane's part of a grid's hash: cell (r, c) of colour v added to its projection sums p (coef: the
// (30 * 30, 6) int32 coefficients of a cell by its row and column, 8-byte aligned, read as three
// pairs; zero cells add nothing).
__device__ void hash_cell(unsigned int* p, unsigned int v, int r, int c, const int* coef) {
    if (v) {
        const int2* q = (const int2*)(coef + (r * 30 + c) * 6);
        const int2 a = q[0], b = q[1], e = q[2];
        p[0] += v * (unsigned int)a.x; p[1] += v * (unsigned int)a.y;
        p[2] += v * (unsigned int)b.x; p[3] += v * (unsigned int)b.y;
        p[4] += v * (unsigned int)e.x; p[5] += v * (unsigned int)e.y;
    }
}

// The write-and-hash kernels give each grid a group of HASH_LANES lanes of a warp (a power of two,
// at most 32): most grids are small, and a warp's reduction of the six sums and the final mix cost
// as much as its cells (32 lanes on a 3 x 3 crop: 9 busy, then 30 shuffles).
// The group's index among the n groups of a launch. Groups past the end run along (their warp's
// shuffles take every lane) on grid n - 1, and write nothing (live false).
__device__ long long hash_group(long long n, bool* live) {
    long long g = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / HASH_LANES;
    *live = g < n;
    return *live ? g : n - 1;
}

__device__ bool group_leader() { return threadIdx.x % HASH_LANES == 0; }

// A group's hash of one grid (h x w) from its lanes' projection sums p: reduced over the group;
// its first lane holds the grid's GridHasher hash (pipeline.search.hashing).
__device__ unsigned long long group_grid_hash(unsigned int* p, int hi, int wi, const unsigned long long* mix) {
    for (int j = 0; j < 6; ++j)
        for (int off = HASH_LANES / 2; off > 0; off >>= 1)
            p[j] += __shfl_down_sync(0xffffffffu, p[j], off, HASH_LANES);
    unsigned long long sum = 0;
    for (int j = 0; j < 6; ++j) sum += (unsigned long long)p[j] * mix[j];
    return splitmix(sum ^ ((unsigned long long)(hi * 64 + wi) * 0x2545F4914F6CDD1Dull));
}

// One group's write and hash of a grid of hi x wi cells: cell q (row r, column c) takes the value
// value(q, r, c), written to d[q] (unless d is null or the group is not live); the first lane gets
// the grid's hash.
template <class Value>
__device__ unsigned long long group_write_hash(Value value, unsigned char* d, bool live, int hi, int wi,
                                               const int* coef, const unsigned long long* mix) {
    unsigned int p[6] = {0, 0, 0, 0, 0, 0};
    for (int q = threadIdx.x % HASH_LANES; q < hi * wi; q += HASH_LANES) {
        const int r = cell_row(q, wi), c = q - r * wi;
        const unsigned int v = value(q, r, c);
        if (d && live) d[q] = (unsigned char)v;
        hash_cell(p, v, r, c, coef);
    }
    return group_grid_hash(p, hi, wi, mix);
}

// One group's copy and hash of grid gi (hi x wi cells): its row r read at s + r * pitch (rows packed
// when pitch is 0), written packed to d (unless it is null), its hash stored at out[gi] when live.
__device__ void group_copy_hash(const unsigned char* s, long long pitch, unsigned char* d, int hi, int wi,
                                const int* coef, const unsigned long long* mix, unsigned long long* out,
                                long long gi, bool live) {
    const unsigned long long hash = group_write_hash(
        [&](int q, int r, int c) { return (unsigned int)s[pitch ? r * pitch + c : q]; }, d, live, hi, wi,
        coef, mix);
    if (live && group_leader()) out[gi] = hash;
}

// Copy and hash in one pass (search._apply_padded, in-place transforms): one lane group per grid, whose
// lanes take its cells in reading order. Grid i (h[i] x w[i] cells, row r at src_base[i] + r *
// src_pitch in src, or rows packed when src_pitch is 0) is written to dst (unless it is null) from
// dst_base[i] on, rows packed (the flat layout), and hashed as GridHasher hashes it.
extern "C" __global__ void copy_hash_rows(const unsigned char* src, const long long* src_base, int src_pitch,
                                          unsigned char* dst, const long long* dst_base, const long long* h,
                                          const long long* w, long long n, const int* coef,
                                          const unsigned long long* mix, unsigned long long* out) {
    bool live;
    const long long gi = hash_group(n, &live);
    group_copy_hash(src + src_base[gi], src_pitch, dst ? dst + dst_base[gi] : dst, (int)h[gi], (int)w[gi], coef, mix,
                    out, gi, live);
}

// Items of several parts joined into one (problem.concat_items on a GPU), up to MERGE_PARTS parts
// per launch: each row of `table` (MERGE_ROW values: the part's state, sample, h, w and start
// arrays' addresses, its hashes' (0: none), its item count, state offset and cell offset) is one
// part, whose items are written at their place (after those of the parts before it, from the
// output pointers on), states shifted by its state offset and cell starts by its cell offset
// (where its cells begin among the joined cells); with o_hash (not null), the items' hashes too.
// A thread per item; the rows sit in shared memory.
#define MERGE_ROW 9
extern "C" __global__ void merge_items(const long long* table, int parts, long long total, long long* o_state,
                                       long long* o_sample, long long* o_h, long long* o_w, long long* o_start,
                                       unsigned long long* o_hash) {
    __shared__ long long t[MERGE_PARTS * MERGE_ROW];
    for (int k = threadIdx.x; k < parts * MERGE_ROW; k += blockDim.x) t[k] = table[k];
    __syncthreads();
    long long i = (long long)blockDim.x * blockIdx.x + threadIdx.x, at = i;
    if (i >= total) return;
    int p = 0;
    while (at >= t[p * MERGE_ROW + 6]) { at -= t[p * MERGE_ROW + 6]; ++p; }
    const long long* row = t + p * MERGE_ROW;
    o_state[i] = ((const long long*)row[0])[at] + row[7];
    o_sample[i] = ((const long long*)row[1])[at];
    o_h[i] = ((const long long*)row[2])[at];
    o_w[i] = ((const long long*)row[3])[at];
    o_start[i] = ((const long long*)row[4])[at] + row[8];
    if (o_hash) o_hash[i] = ((const unsigned long long*)row[5])[at];
}

// Crops on a GPU (Search._apply_padded_kernels). crop_sides, for the results of many buckets
// (and transforms) at once: each row of `table` (CROP_ROW values: see kernels.crop_sides) is one
// bucket's m results, written from entry lo of the outputs on: each grid's result flag and sides,
// read through strides (0 where one value stands for every grid), its cells when kept (0
// otherwise), and where its padded result begins, as an address (base + i * cells), with the
// result's row pitch. A thread per entry; the rows (at most CROP_ROWS) sit in shared memory.
#define CROP_ROW 11
extern "C" __global__ void crop_sides(const long long* table, int rows, long long total, bool* ok, long long* oh,
                                      long long* ow, long long* size, unsigned long long* addr, long long* opitch) {
    __shared__ long long t[CROP_ROWS * CROP_ROW];
    for (int k = threadIdx.x; k < rows * CROP_ROW; k += blockDim.x) t[k] = table[k];
    __syncthreads();
    long long i = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= total) return;
    int r = 0;
    while (i >= t[r * CROP_ROW + 1]) { i -= t[r * CROP_ROW + 1]; ++r; }
    const long long* row = t + r * CROP_ROW;
    long long o = row[0] + i;
    bool kept = ((const bool*)row[2])[i * row[3]];
    long long gh = ((const long long*)row[4])[i * row[5]], gw = ((const long long*)row[6])[i * row[7]];
    ok[o] = kept;
    oh[o] = gh;
    ow[o] = gw;
    size[o] = kept ? gh * gw : 0;
    addr[o] = (unsigned long long)row[8] + (unsigned long long)(i * row[9]);
    opitch[o] = row[10];
}

// Then, for every entry i whose result is kept (ok[i]; kept[i] and cells[i]: the inclusive running
// counts of kept entries and of their cells, in order), at its place j among the kept: its sides,
// where its cells begin among those of its transform's kept grids (start) and among all (at), its
// source address and pitch, and the state and sample of the item it came from. Entries: K
// transforms' (a run of crops, Search._apply_crop_run) of n grids each in the buckets' order,
// transform-major; grid i % n is item order[i % n].
extern "C" __global__ void crop_take(long long total, long long n, const bool* ok, const long long* kept,
                                     const long long* cells, const long long* oh, const long long* ow,
                                     const unsigned long long* addr, const long long* opitch, const long long* order,
                                     const long long* state, const long long* sample, long long* h, long long* w,
                                     long long* start, long long* at, unsigned long long* src, long long* pitch,
                                     long long* st, long long* sm) {
    long long i = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= total || !ok[i]) return;
    const long long k = i / n, item = order[i - k * n];
    const long long j = kept[i] - 1;
    h[j] = oh[i];
    w[j] = ow[i];
    at[j] = cells[i] - oh[i] * ow[i];
    start[j] = at[j] - (k ? cells[k * n - 1] : 0);
    src[j] = addr[i];
    pitch[j] = opitch[i];
    st[j] = state[item];
    sm[j] = sample[item];
}

// copy_hash_rows with each grid's own source address and row pitch (grids of several buckets'
// results in one launch).
extern "C" __global__ void copy_hash_from(const unsigned long long* src, const long long* pitch,
                                          unsigned char* dst, const long long* dst_base, const long long* h,
                                          const long long* w, long long n, const int* coef,
                                          const unsigned long long* mix, unsigned long long* out) {
    bool live;
    const long long gi = hash_group(n, &live);
    group_copy_hash((const unsigned char*)src[gi], pitch[gi], dst + dst_base[gi], (int)h[gi], (int)w[gi], coef, mix,
                    out, gi, live);
}

// Elementwise transforms (Search._apply_luts): K colour tables (luts, K x 10) applied to every grid
// of a flat layout (grid i: h[i] x w[i] cells from start[i], cells cells in all) and hashed in one
// pass, one lane group per (table k, grid i): dst[k * cells + start[i] + q] = luts[k][src[start[i] + q]],
// out[k * n + i] its hash. (Was: a gather writing all K copies, then copy_hash_rows reading them.)
extern "C" __global__ void lut_copy_hash(const unsigned char* src, const long long* start, const long long* h,
                                         const long long* w, long long n, long long cells,
                                         const unsigned char* luts, int K, unsigned char* dst, const int* coef,
                                         const unsigned long long* mix, unsigned long long* out) {
    bool live;
    const long long gk = hash_group(n * K, &live);
    long long k = gk / n, gi = gk - k * n;
    const unsigned char* s = src + start[gi];
    const unsigned char* lut = luts + k * 10;
    const unsigned long long hash = group_write_hash(
        [&](int q, int, int) { return (unsigned int)lut[s[q]]; },
        dst + k * cells + start[gi], live, (int)h[gi], (int)w[gi], coef, mix);
    if (live && group_leader()) out[gk] = hash;
}

// Coordinate maps (TransformRuns._apply_map_run): primitives whose output cell (r, c) reads one
// input cell, given as map m (its code in solvers.coord_maps) with the transform's arguments a, b:
// coord_map_sides and coord_map_source, generated from solvers.coord_maps.COORD_MAPS.
// generated here: solvers.coord_maps.cuda_source()

// A lane group's part of a map run: its grid i and map k (groups run grid-major, so a grid's K maps
// read it from the same cache lines), the map (m, a, b), the grid's sides and its result's (oh x ow;
// ok: it has one), and whether the group is live (see hash_group).
struct MapGroup {
    long long i;
    int k, m, a, b, hi, wi, oh, ow;
    bool ok, live;
};

__device__ MapGroup map_group(long long n, const long long* h, const long long* w, const int* maps, int K) {
    MapGroup q;
    const long long g = hash_group(n * K, &q.live);
    q.i = g / K;
    q.k = (int)(g - q.i * K);
    q.m = maps[3 * q.k]; q.a = maps[3 * q.k + 1]; q.b = maps[3 * q.k + 2];
    q.hi = (int)h[q.i]; q.wi = (int)w[q.i];
    q.ok = coord_map_sides(q.m, q.a, q.b, q.hi, q.wi, &q.oh, &q.ow);
    return q;
}

// The group's result written to d (unless not live) and hashed: each output cell read from the grid s.
__device__ unsigned long long map_write_hash(const MapGroup& q, const unsigned char* s, unsigned char* d, bool live,
                                             const int* coef, const unsigned long long* mix) {
    return group_write_hash(
        [&](int, int r, int c) { return (unsigned int)s[coord_map_source(q.m, q.a, q.b, q.hi, q.wi, r, c)]; },
        d, live, live ? q.oh : 0, live ? q.ow : 0, coef, mix);
}

// Maps that give every grid a result of its own number of cells (the rigid ones): K maps (maps:
// K x (m, a, b)) applied to every grid of a flat layout (grid i: h[i] x w[i] cells from start[i],
// cells cells in all) and hashed in one pass, one lane group per (grid i, map k): map k's grid i at
// dst[k * cells + start[i]], its hash at out[k * n + i].
extern "C" __global__ void map_copy_hash(const unsigned char* src, const long long* start, const long long* h,
                                         const long long* w, long long n, long long cells, const int* maps, int K,
                                         unsigned char* dst, const int* coef, const unsigned long long* mix,
                                         unsigned long long* out) {
    const MapGroup q = map_group(n, h, w, maps, K);
    const unsigned long long hash = map_write_hash(q, src + start[q.i], dst + q.k * cells + start[q.i], q.live,
                                                   coef, mix);
    if (q.live && group_leader()) out[q.k * n + q.i] = hash;
}

// Maps whose grids may have no result, first step: per (map k, grid i), at t = k * n + i (map-major:
// the kept grids come map by map), whether it has a result, its cells (0 without) and, when weight
// is not null, weight[i] where it has one (0 without).
extern "C" __global__ void map_sides(long long n, const long long* h, const long long* w, const int* maps, int K,
                                     const long long* weight, bool* ok, long long* size, long long* weighed) {
    const long long t = (long long)blockDim.x * blockIdx.x + threadIdx.x;
    if (t >= n * K) return;
    const long long k = t / n, i = t - k * n;
    int oh, ow;
    const bool v = coord_map_sides(maps[3 * k], maps[3 * k + 1], maps[3 * k + 2], (int)h[i], (int)w[i], &oh, &ow);
    ok[t] = v;
    size[t] = v ? (long long)oh * ow : 0;
    if (weight) weighed[t] = v ? weight[i] : 0;
}

// Each of K transforms' totals (map runs, crop runs), from the inclusive running counts of the flags,
// sizes and weights of their n entries each (transform-major; weighed null: none): out = (kept
// grids of transform 0..K-1, their cells ..., their weights ...).
extern "C" __global__ void run_totals(long long n, int K, const long long* kept, const long long* cells,
                                      const long long* weighed, long long* out) {
    const int k = blockDim.x * blockIdx.x + threadIdx.x;
    if (k >= K) return;
    const long long end = (k + 1) * n - 1, before = k * n - 1;
    out[k] = kept[end] - (k ? kept[before] : 0);
    out[K + k] = cells[end] - (k ? cells[before] : 0);
    if (weighed) out[2 * K + k] = weighed[end] - (k ? weighed[before] : 0);
}

// Then the kept grids, one lane group per (grid i, map k) as map_copy_hash: a kept one's place j
// among all (kept[t] - 1, t = k * n + i), its sides, where its cells begin among its map's (start),
// the state and sample of its grid, its cells written to dst (every map's kept cells back to back,
// map by map) and its hash.
extern "C" __global__ void map_take_copy_hash(const unsigned char* src, const long long* start, const long long* h,
                                              const long long* w, const long long* state, const long long* sample,
                                              long long n, const int* maps, int K, const bool* ok,
                                              const long long* kept, const long long* cells, unsigned char* dst,
                                              long long* o_h, long long* o_w, long long* o_start, long long* o_state,
                                              long long* o_sample, const int* coef, const unsigned long long* mix,
                                              unsigned long long* out) {
    const MapGroup q = map_group(n, h, w, maps, K);
    const long long t = q.k * n + q.i;
    const bool kept_here = q.live && ok[t];  // a group without a result still joins its warp's shuffles
    const long long at = kept_here ? cells[t] - (long long)q.oh * q.ow : 0;
    const unsigned long long hash = map_write_hash(q, src + start[q.i], dst + at, kept_here, coef, mix);
    if (kept_here && group_leader()) {
        const long long j = kept[t] - 1;
        o_h[j] = q.oh;
        o_w[j] = q.ow;
        o_start[j] = at - (q.k ? cells[q.k * n - 1] : 0);
        o_state[j] = state[q.i];
        o_sample[j] = sample[q.i];
        out[j] = hash;
    }
}

// Fill runs (Search._apply_fill_run): K colours each painted onto the cells where mask holds, for
// the m grids of one size bucket's (m, H, W) stack (grid j: h[j] x w[j] cells, item item[j] of n),
// written and hashed in one pass, one lane group per (colour k, grid j): row k of dst ((K, cells), laid
// out like the items: grid j from dst_base[j]), the hash at out[k * n + item[j]].
extern "C" __global__ void fill_copy_hash(const unsigned char* src, const bool* mask, int H, int W,
                                          const long long* dst_base, const long long* h, const long long* w,
                                          const long long* item, long long m, long long n, long long cells,
                                          const unsigned char* colours, int K, unsigned char* dst, const int* coef,
                                          const unsigned long long* mix, unsigned long long* out) {
    bool live;
    const long long gk = hash_group(m * K, &live);
    long long k = gk / m, j = gk - k * m;
    const unsigned char* s = src + j * H * W;
    const bool* f = mask + j * H * W;
    const unsigned int colour = colours[k];
    const unsigned long long hash = group_write_hash(
        [&](int, int r, int c) { return f[r * W + c] ? colour : (unsigned int)s[r * W + c]; },
        dst + k * cells + dst_base[j], live, (int)h[j], (int)w[j], coef, mix);
    if (live && group_leader()) out[k * n + item[j]] = hash;
}

