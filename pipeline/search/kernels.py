"""CUDA kernels of the batched search, for its steps that are slow as array calls on a GPU.

Moving grids between the flat and the padded layouts (``copy_rows``, ``merge_items``,
``crop_take``: the array calls built several int64 indices per cell), copying and hashing new
grids in one pass (``copy_hash_rows``, ``map_copy_hash``, ``fill_copy_hash``), the dedup's hash
table (``first_new_keys``), scoring new states against their train outputs (``score_fit``,
``score_cells``, ``score_states``: three kernels instead of about a hundred array calls), the
leaderboards' picks (``board_picks``) and mixing hashes (one fused kernel instead of nine
elementwise launches). Each function gives exactly what its array-call version in the search
gives (the GPU tests compare them); the search calls it only when :func:`solvers.kernels.enabled`
says so, and the CPU always runs the array calls.
"""
from __future__ import annotations

import functools

import numpy as np

from solvers import coord_maps
from solvers.kernels import CELL_INDEX, cumsum, per_grid_arg, thread_launch
from solvers.xp import data_address, to_device_async, to_host_all

_SOURCE = CELL_INDEX + r"""
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
// themselves; ``mapping`` may be null when no state has a slot) and whether that table is
// consistent (every source colour seen with one output colour only).
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
        for (int c = 0; c < 10; ++c) {
            const int* row = hist + sl * 100 + c * 10;
            int best = 0, seen = 0;
            for (int d = 0; d < 10; ++d) {
                seen += row[d] > 0;
                if (row[d] > row[best]) best = d;
            }
            ok = ok && seen <= 1;
            mapping[s * 10 + c] = row[best] > 0 ? best : c;
        }
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
""" + coord_maps.cuda_source() + r"""
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

"""

_THREADS = 256
# Lanes of a warp that write and hash one grid in the copy-and-hash kernels (see hash_group).
HASH_LANES = 8


def source() -> str:
    """The CUDA source of this module's kernels, as it is compiled."""
    return (f"#define HASH_LANES {HASH_LANES}\n#define MERGE_PARTS {MERGE_PARTS}\n#define CROP_ROWS {CROP_ROWS}\n"
            + _SPLITMIX + _SOURCE)


# Parts of concat_items joined per launch of merge_items, and buckets' results per launch of
# crop_sides: the most rows of their tables, which the kernels keep in shared memory.
MERGE_PARTS = 32
CROP_ROWS = 64


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
    _kernel("copy_hash_rows")
    _elementwise("splitmix64")


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


def splitmix64(xp, v):
    """``hashing.splitmix64`` as one fused kernel (the array calls make nine launches)."""
    return _elementwise("splitmix64")(xp.asarray(v, dtype=xp.uint64))


def fill_copy_hash(xp, stack, mask, dst_base, h, w, item, n: int, colours, dst, out, coef, mix) -> None:
    """Paint each of K ``colours`` (uint8) onto the cells of ``mask`` in the grids of one bucket's
    ``stack`` (m, H, W) (real sides ``h``, ``w``), write them to row k of ``dst`` ((K, cells): grid
    j from ``dst_base[j]``) and their hashes to ``out[k, item[j]]`` ((K, n)), in one kernel."""
    m, H, W = stack.shape
    K = int(colours.shape[0])
    if m and K:
        c = xp.ascontiguousarray
        _kernel("fill_copy_hash")(((m * K * HASH_LANES + _THREADS - 1) // _THREADS,), (_THREADS,),
                                  (c(stack), c(mask), np.int32(H), np.int32(W), per_grid_arg(xp, dst_base, m),
                                   per_grid_arg(xp, h, m), per_grid_arg(xp, w, m), per_grid_arg(xp, item, m),
                                   np.int64(m), np.int64(n), np.int64(dst.shape[1]), c(colours), np.int32(K), dst,
                                   _pair_aligned(coef), mix, out))


def count_keys_into(xp, keys, counts) -> None:
    """``counts += bincount(keys, minlength=len(counts))`` on the device with no wait (``keys``:
    ints below ``len(counts)``; ``counts``: a contiguous int64 array)."""
    n = int(keys.shape[0])
    if n:
        grid, block = thread_launch(n)
        _kernel("count_keys_into")(grid, block, (xp.ascontiguousarray(keys, dtype=xp.int64), np.int64(n),
                                                 counts.view(xp.uint64)))


GROUP_KEYS = 1024  # keys of group_order: 0..1023
_GROUP_WARPS = 8  # as GROUP_WARPS in the source


def group_order(xp, key):
    """The positions of ``key``'s items (ints in 0..1023) ordered by key, equal keys in position
    order (a stable argsort), and where each key's run begins in that order (int64, one per key),
    both on the device. A counting sort in two kernels and a prefix sum: CuPy's sorts load
    Thrust's library on first use (40-60 ms of a process's first search)."""
    n = int(key.shape[0])
    if n == 0:
        return xp.zeros(0, dtype=xp.int64), xp.zeros(GROUP_KEYS, dtype=xp.int64)
    key = xp.ascontiguousarray(key, dtype=xp.int32)
    # Chunks of at least 256 items, at most about 2048 of them (the counts: 1024 per chunk).
    chunk = max(256, 1 << (max(1, -(-n // 2048)) - 1).bit_length())
    chunks = -(-n // chunk)
    hist = xp.empty(GROUP_KEYS * chunks, dtype=xp.int32)
    _kernel("key_chunk_counts")((-(-chunks // _GROUP_WARPS),), (32 * _GROUP_WARPS,),
                                (key, np.int64(n), np.int64(chunk), np.int64(chunks), hist))
    first = cumsum(xp, hist, exclusive=True)
    order = xp.empty(n, dtype=xp.int64)
    per_block = _GROUP_WARPS // 2
    _kernel("key_chunk_place")((-(-chunks // per_block),), (32 * per_block,),
                               (key, np.int64(n), np.int64(chunk), np.int64(chunks), first, order))
    return order, first[::chunks]


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
    args = [per_grid_arg(xp, a, n) for a in (src_base, src_pitch, dst_base, dst_pitch, h, w)]
    grid, block = thread_launch(n * HASH_LANES)
    _kernel("copy_rows")(grid, block, (src, dst, np.int64(n), *args))


def _pair_aligned(coef):
    """``coef`` for the kernels that read a cell's six coefficients as three 8-byte pairs."""
    if data_address(coef) % 8:
        raise ValueError("hash coefficients must be 8-byte aligned (a fresh contiguous array)")
    return coef


def copy_hash_rows(xp, src, src_base, src_pitch: int, dst, dst_base, h, w, coef, mix):
    """Copy grid ``i`` (``h[i]`` x ``w[i]``; row r at ``src_base[i] + r * src_pitch`` in ``src``,
    rows packed when ``src_pitch`` is 0) to ``dst`` from ``dst_base[i]`` on, rows packed, and
    return the ``GridHasher`` hashes of the copied grids (``coef``: the 30 x 30 grid's (900, 6)
    int32 coefficients); with ``dst`` None only hash. One pass instead of masking the padding,
    hashing the padded stack and gathering."""
    n = int(h.shape[0])
    out = xp.empty(n, dtype=xp.uint64)
    if n:
        if dst is None:
            dst, dst_base = np.uint64(0), src_base  # a null pointer: the kernel writes nothing
        args = [xp.ascontiguousarray(xp.asarray(a, dtype=xp.int64)) for a in (src_base, dst_base, h, w)]
        _kernel("copy_hash_rows")(((n * HASH_LANES + _THREADS - 1) // _THREADS,), (_THREADS,),
                                  (xp.ascontiguousarray(src), args[0], np.int32(src_pitch), dst, args[1], args[2],
                                   args[3], np.int64(n), _pair_aligned(coef), mix, out))
    return out


def merge_items(xp, parts: list, state_offsets: list, cell_offsets: list, out: tuple, hashes=None,
                out_hash=None) -> list:
    """Write the items of ``parts`` (:class:`pipeline.search.problem.Items`) one after another into ``out``
    = (state, sample, h, w, start), part j's states shifted by ``state_offsets[j]`` and cell starts
    by ``cell_offsets[j]``; with ``hashes`` (one uint64 array per part), their items' hashes into
    ``out_hash`` likewise. A launch per MERGE_PARTS parts, whose arrays' addresses it reads from a
    table (as kernel arguments, 144 of them for 16 parts cost about 0.25 ms of host time a launch).
    Returns what must stay alive until the launches have run (the table's host memory, the arrays
    made contiguous)."""
    c = xp.ascontiguousarray
    keep, at = [], 0
    live = [j for j in range(len(parts)) if parts[j].count]
    for lo in range(0, len(live), MERGE_PARTS):
        rows = []
        for j in live[lo:lo + MERGE_PARTS]:
            p = parts[j]
            arrays = [c(a, dtype=xp.int64) for a in (p.state, p.sample, p.h, p.w, p.start)]
            if hashes is not None:
                arrays.append(c(hashes[j], dtype=xp.uint64))
            keep += arrays
            rows.append([data_address(a) for a in arrays] + [0] * (hashes is None)
                        + [p.count, state_offsets[j], cell_offsets[j]])
        m = sum(r[6] for r in rows)
        table, staged = to_device_async(xp, np.array(rows, dtype=np.int64))
        keep += [table, staged]
        grid, block = thread_launch(m)
        _kernel("merge_items")(grid, block, (table, np.int32(len(rows)), np.int64(m), *(o[at:at + m] for o in out),
                                             np.uint64(0) if out_hash is None else out_hash[at:at + m]))
        at += m
    return keep


def crop_sides(xp, entries: list, out: tuple) -> list:
    """Write the crop_sides entries of many buckets' results into ``out`` = (ok, oh, ow, size, addr,
    pitch): ``entries`` lists ``(lo, m, res)``, a bucket's ``m`` results ``res``
    (:class:`solvers.padded.Padded`, ``res.arr`` contiguous, or None when none can be valid) to write
    from entry ``lo`` on. One launch per CROP_ROWS buckets (a launch costs tens of microseconds of
    host time). Returns what must stay alive until the launches have run (the table's host
    memory, the sides converted to int64); the caller also keeps each ``res.arr`` until the copy
    that reads it is queued."""
    rows, keep = [], []
    for lo, m, res in entries:
        if m == 0:
            continue
        row = [lo, m]
        for v, t in ((res.valid, xp.bool_), (res.h, xp.int64), (res.w, xp.int64)):
            a = xp.asarray(v, dtype=t).reshape(-1)
            keep.append(a)
            row += [data_address(a), 0 if a.shape[0] == 1 else a.strides[0] // a.itemsize]
        if res.arr is None:
            row += [0, 0, 0]
        else:
            _, OH, OW = res.arr.shape
            row += [data_address(res.arr), OH * OW, OW]
        rows.append(row)
    for lo in range(0, len(rows), CROP_ROWS):
        chunk = rows[lo:lo + CROP_ROWS]
        table, staged = to_device_async(xp, np.array(chunk, dtype=np.int64))
        keep += [table, staged]
        total = sum(r[1] for r in chunk)
        grid, block = thread_launch(total)
        _kernel("crop_sides")(grid, block, (table, np.int32(len(chunk)), np.int64(total), *out))
    return keep


def crop_counts(xp, ok, size, n: int, weighed=None):
    """Running counts for :func:`crop_take` of K transforms' entries (``ok`` and ``size`` of
    :func:`crop_sides`, n per transform): of the kept grids and of their cells, inclusive, and each
    transform's totals as one device array (see :func:`run_totals`; with ``weighed``, per entry a
    weight where kept, also the sum of those weights)."""
    kept, cells = cumsum(xp, ok), cumsum(xp, size)
    return kept, cells, run_totals(xp, n, int(ok.shape[0]) // max(1, n), kept, cells,
                                   None if weighed is None else cumsum(xp, weighed))


def run_totals(xp, n: int, K: int, kept, cells, weighed=None):
    """Per transform of K (n entries each, transform-major), from the inclusive running counts of
    its kept entries, their cells and (optional) weights: the kept entries, then their cells, then
    their weights, as one int64 device array of 2K (3K) values, to fetch in one copy."""
    out = xp.zeros((2 if weighed is None else 3) * K, dtype=xp.int64)
    if n and K:
        grid, block = thread_launch(K)
        _kernel("run_totals")(grid, block, (np.int64(n), np.int32(K), kept, cells,
                                            np.uint64(0) if weighed is None else weighed, out))
    return out


def crop_take(xp, ok, oh, ow, addr, opitch, order, state, sample, counts, kept_total: int):
    """The kept entries (``ok``, of :func:`crop_sides`; K transforms' of ``len(order)`` grids each) in
    order: their ``(h, w, start, at, src, pitch, state, sample)`` (``start``: where their cells begin,
    packed one after another, among their transform's; ``at``: among all). ``counts``:
    :func:`crop_counts`' running counts; ``kept_total``: how many are kept (known on the host).
    (Count and cells come from running sums fetched together, instead of a ``nonzero`` and then a
    sum of the kept grids' sizes.)"""
    total, n = int(ok.shape[0]), int(order.shape[0])
    kept, cells = counts
    outs = [xp.empty(kept_total, dtype=t) for t in (xp.int64, xp.int64, xp.int64, xp.int64, xp.uint64, xp.int64,
                                                     xp.int64, xp.int64)]
    if kept_total:
        c = xp.ascontiguousarray
        grid, block = thread_launch(total)
        _kernel("crop_take")(grid, block, (np.int64(total), np.int64(n), ok, kept, cells, oh, ow, addr, opitch,
                                           c(order, dtype=xp.int64), c(state, dtype=xp.int64),
                                           c(sample, dtype=xp.int64), *outs))
    return outs


def copy_hash_from(xp, src, pitch, dst, dst_base, h, w, coef, mix):
    """:func:`copy_hash_rows` with each grid's own source address ``src`` and row ``pitch``."""
    n = int(h.shape[0])
    out = xp.empty(n, dtype=xp.uint64)
    if n:
        _kernel("copy_hash_from")(((n * HASH_LANES + _THREADS - 1) // _THREADS,), (_THREADS,),
                                  (src, pitch, dst, dst_base, h, w, np.int64(n), _pair_aligned(coef), mix, out))
    return out


def lut_copy_hash(xp, src, start, h, w, luts, dst, coef, mix):
    """Map the grids of a flat layout (``src``: every grid's cells, grid i ``h[i]`` x ``w[i]`` from
    ``start[i]``) through each of K colour tables (``luts``, (K, 10) uint8) into ``dst`` ((K, cells):
    copy k at row k, laid out like ``src``) and return their ``GridHasher`` hashes, (K, n)."""
    return _flat_copy_hash(xp, "lut_copy_hash", src, start, h, w, xp.ascontiguousarray(luts), dst, coef, mix)


def _flat_copy_hash(xp, name: str, src, start, h, w, table, dst, coef, mix):
    """Launch kernel ``name`` over K tables (``table``'s rows: colour tables, coordinate maps) and
    the n grids of a flat layout, a lane group per (table, grid); returns the (K, n) hashes."""
    n, K, cells = int(h.shape[0]), int(table.shape[0]), int(src.shape[0])
    out = xp.empty((K, n), dtype=xp.uint64)
    if n and K:
        c = xp.ascontiguousarray
        args = [c(xp.asarray(a, dtype=xp.int64)) for a in (start, h, w)]
        _kernel(name)(((n * K * HASH_LANES + _THREADS - 1) // _THREADS,), (_THREADS,),
                      (c(src), *args, np.int64(n), np.int64(cells), table, np.int32(K), dst, _pair_aligned(coef),
                       mix, out))
    return out


def coord_map_table(xp, maps):
    """The (K, 3) int32 device table of K coordinate maps, each ``(name, a, b)``."""
    return xp.asarray(np.array([(coord_maps.CODES[name], a, b) for name, a, b in maps], dtype=np.int32).reshape(-1, 3))


def map_copy_hash(xp, src, start, h, w, table, dst, coef, mix):
    """Rigid coordinate maps (``table``: :func:`coord_map_table` of K maps in ``coord_maps.RIGID_MAPS``) applied
    to every grid of a flat layout (grid i ``h[i]`` x ``w[i]`` from ``start[i]`` in ``src``): map k's
    grids written into row k of ``dst`` ((K, cells), laid out like ``src``: every map keeps a grid's
    number of cells) and their ``GridHasher`` hashes returned, (K, n)."""
    return _flat_copy_hash(xp, "map_copy_hash", src, start, h, w, table, dst, coef, mix)


def map_counts(xp, h, w, table, weight=None):
    """First step of coordinate maps whose grids may have no result: per (map k, grid i) of the n
    grids with sides ``h``, ``w``, whether it has one, and each map's totals, with no wait. Returns
    ``(ok, kept, cells, totals)``: the flags (K * n, map-major), the inclusive running counts of the
    kept grids and of their cells, and a device array of each map's kept grids, then their cells,
    then (with ``weight``, per grid) the sum of the kept grids' weights: (2K,) or (3K,) int64."""
    n, K = int(h.shape[0]), int(table.shape[0])
    ok = xp.empty(n * K, dtype=xp.bool_)
    size = xp.empty(n * K, dtype=xp.int64)
    weighed = None if weight is None else xp.empty(n * K, dtype=xp.int64)
    if n == 0 or K == 0:
        return ok, size, size, xp.zeros((2 if weight is None else 3) * K, dtype=xp.int64)
    c = xp.ascontiguousarray
    grid, block = thread_launch(n * K)
    null = np.uint64(0)
    _kernel("map_sides")(grid, block, (np.int64(n), c(h, dtype=xp.int64), c(w, dtype=xp.int64), table, np.int32(K),
                                       null if weight is None else c(weight, dtype=xp.int64), ok, size,
                                       null if weighed is None else weighed))
    return (ok, *crop_counts(xp, ok, size, n, weighed))


def map_take_copy_hash(xp, src, start, h, w, state, sample, table, ok, kept, cells, kept_total: int, dst, coef, mix):
    """Second step, once the host knows how many grids all maps keep (``kept_total``): the kept
    grids' ``(h, w, start, state, sample)`` (map by map; ``start`` counted from the first cell of
    their map's) and hashes, their cells written to ``dst`` (every map's back to back). ``ok``,
    ``kept``, ``cells``: :func:`map_counts`'."""
    n, K = int(h.shape[0]), int(table.shape[0])
    outs = [xp.empty(kept_total, dtype=xp.int64) for _ in range(5)]
    hashes = xp.empty(kept_total, dtype=xp.uint64)
    if kept_total:
        c = xp.ascontiguousarray
        args = [c(xp.asarray(a, dtype=xp.int64)) for a in (start, h, w, state, sample)]
        _kernel("map_take_copy_hash")(((n * K * HASH_LANES + _THREADS - 1) // _THREADS,), (_THREADS,),
                                      (c(src), *args, np.int64(n), table, np.int32(K), ok, kept, cells, dst, *outs,
                                       _pair_aligned(coef), mix, hashes))
    return (*outs, hashes)


# The record of board_picks: a picked state's position among the new states, its rank, score, test
# key, exact train matches, solved (or colour-mapped), colour-mapped, colour table, and its position
# in the merged block.
BOARD_ROW = np.dtype({"names": ["pick", "rank", "score", "test_key", "n_exact", "solved", "cm_ok", "mapping", "pos"],
                      "formats": [np.int64, np.float64, np.float64, np.uint64, np.int64, np.bool_, np.bool_,
                                  (np.uint8, (10,)), np.int64],
                      "offsets": [0, 8, 16, 24, 32, 40, 41, 42, 56], "itemsize": 64})


def board_picks(xp, new_pos, task, threshold, rank, solved, cm_ok, n_exact, score, test_key, mapping,
                capacity: int, keep=None):
    """The new states ``new_pos`` (positions in a merged block of tasks ``task``) whose ``rank`` beats
    their task's ``threshold`` (and, with ``keep``, a bool per new state, that it keeps), found and
    packed on the device without waiting for it: a uint8 buffer holding their count (a uint64),
    then up to ``capacity`` :data:`BOARD_ROW` records in no set order (``mapping`` (S, 10) int64,
    or None: zeros). See :func:`read_board_picks`."""
    n = int(new_pos.shape[0])
    buf = xp.empty(8 + capacity * BOARD_ROW.itemsize, dtype=xp.uint8)
    count = buf[:8].view(xp.uint64)
    count.fill(0)
    if n:
        c = xp.ascontiguousarray
        grid, block = thread_launch(n)
        _kernel("board_picks")(grid, block, (np.int64(n), c(new_pos, dtype=xp.int64), c(task, dtype=xp.int64),
                                             c(threshold, dtype=xp.float64), c(rank, dtype=xp.float64), c(solved),
                                             c(cm_ok), c(n_exact, dtype=xp.int64), c(score, dtype=xp.float64),
                                             c(test_key, dtype=xp.uint64),
                                             np.uint64(0) if mapping is None else c(mapping, dtype=xp.int64),
                                             np.uint64(0) if keep is None else c(keep, dtype=xp.bool_),
                                             count, buf[8:], np.int64(capacity), np.int32(BOARD_ROW.itemsize)))
    return buf


def read_board_picks(host: np.ndarray):
    """``(count, fields)`` of a :func:`board_picks` buffer on the host: the records it holds (all
    ``count`` of them unless it had less room) as one contiguous array per field of ``BOARD_ROW``,
    sorted by pick (the records' own gather and their fields' strided copies cost the first
    level's tens of thousands of picks several milliseconds)."""
    count = int(host[:8].view(np.uint64)[0])
    held = min(count, (host.shape[0] - 8) // BOARD_ROW.itemsize)
    rows = host[8:8 + held * BOARD_ROW.itemsize].view(BOARD_ROW)
    order = np.argsort(rows["pick"], kind="stable")
    return count, {name: rows[name][order] for name in BOARD_ROW.names}


def test_grids(xp, out, state_task, n_train, idx: np.ndarray, tests: int, slot_cells: int):
    """The test grids of the states ``idx`` (host int64 array of distinct positions in a merged
    block whose states' tasks are ``state_task``), from the block's items ``out``: ``(cells, h, w)``
    with ``cells`` (len(idx) * tests, slot_cells) uint8, row ``j * tests + t`` holding test sample
    t of state ``idx[j]`` (zeros past its cells; all zeros, sides 0, where it has none), and the
    host memory to keep until the device has run past (see ``to_device_async``). Three launches: a
    fill, the items' slots (a binary search among the sorted states), the copy (the array calls
    took about twenty launches, each tens of microseconds of host time while the device idled)."""
    m, n = len(idx), int(out.count)
    order = np.argsort(idx, kind="stable")
    lookup, keep = to_device_async(xp, np.stack([idx[order], order]).astype(np.int64))
    slots = m * tests
    item_of = xp.full(slots, -1, dtype=xp.int64)
    c = xp.ascontiguousarray
    if n and m:
        grid, block = thread_launch(n)
        _kernel("test_items")(grid, block, (c(out.state), c(out.sample), np.int64(n), c(state_task, dtype=xp.int64),
                                            c(n_train, dtype=xp.int64), lookup[0], lookup[1], np.int64(m),
                                            np.int32(tests), item_of))
    cells = xp.empty((slots, slot_cells), dtype=xp.uint8)
    h = xp.empty(slots, dtype=xp.int64)
    w = xp.empty(slots, dtype=xp.int64)
    if slots:
        grid, block = thread_launch(slots * slot_cells)
        _kernel("test_cells")(grid, block, (c(out.cells), c(out.start), c(out.h), c(out.w), item_of, np.int64(slots),
                                            np.int32(slot_cells), cells, h, w))
    return cells, h, w, keep


KEY_EMPTY = np.uint64(0xFFFF_FFFF_FFFF_FFFF)  # an empty slot of a key table (see key_insert)


def first_new_keys(xp, batch, keys, vals, mask: int, tag: int, use=None):
    """Insert the uint64 ``batch`` into the key table ``keys``/``vals`` (``mask + 2`` slots; see the
    ``key_insert`` kernel) under ``tag`` (above every earlier batch's, below 2**64 - 2**40); returns
    a bool per position: its key's first occurrence in the batch, not in the table before. With the
    bool mask ``use``, only the positions where it holds are in the batch (the others are False)."""
    n = int(batch.shape[0])
    first = xp.empty(n, dtype=xp.bool_)
    if n:
        batch = xp.ascontiguousarray(batch, dtype=xp.uint64)
        use = np.uint64(0) if use is None else xp.ascontiguousarray(use, dtype=xp.bool_)  # 0: a null pointer
        grid, block = thread_launch(n)
        _kernel("key_insert")(grid, block, (batch, use, np.int64(n), keys, vals, np.int64(mask), np.uint64(tag)))
        _kernel("key_first_new")(grid, block, (batch, use, np.int64(n), keys, vals, np.int64(mask),
                                               np.uint64(tag), first))
    return first


def first_positions(xp, batch):
    """For each position of the uint64 ``batch``, the first position holding the same key (int64),
    from a hash table of its own: one insertion kernel and one lookup, no sort."""
    n = int(batch.shape[0])
    first = xp.empty(n, dtype=xp.int64)
    if n:
        slots = 1 << max(10, (4 * n // 3 + 1).bit_length())  # at most three quarters full
        keys = xp.full(slots + 1, KEY_EMPTY, dtype=xp.uint64)
        vals = xp.full(slots + 1, KEY_EMPTY, dtype=xp.uint64)
        batch = xp.ascontiguousarray(batch, dtype=xp.uint64)
        grid, block = thread_launch(n)
        _kernel("key_insert")(grid, block, (batch, np.uint64(0), np.int64(n), keys, vals, np.int64(slots - 1),
                                            np.uint64(0)))
        _kernel("key_first_position")(grid, block, (batch, np.int64(n), keys, vals, np.int64(slots - 1), first))
    return first


def rehash_keys(xp, old_keys, old_vals, keys, vals, mask: int) -> None:
    """Move the keys and values of one key table into another, larger and empty, of ``mask + 2``
    slots (the empty marker's own slot is copied as it is)."""
    old_slots = int(old_keys.shape[0]) - 1
    grid, block = thread_launch(old_slots)
    _kernel("key_rehash")(grid, block, (old_keys, old_vals, np.int64(old_slots), keys, vals, np.int64(mask)))
    vals[-1:] = old_vals[-1:]


def state_keys(xp, out, hv, task, n_train, n_samples):
    """Per state of a merged block (``task``: each state's task) from its items ``out`` (hashes
    ``hv``): whether it has every sample (``n_samples`` per task), its key and its test outputs'
    key (``n_train`` train samples per task), as ``Search._state_keys`` defines them. Two kernels:
    the wrapping sums of each state's mixed item hashes (all, and test samples), then the keys."""
    S, n = int(task.shape[0]), int(out.count)
    c = xp.ascontiguousarray
    count = xp.zeros(S, dtype=xp.int32)
    sums = xp.zeros((2, S), dtype=xp.uint64)
    task = c(task, dtype=xp.int64)
    if n:
        grid, block = thread_launch(n)
        _kernel("state_sums")(grid, block, (c(out.state), c(out.sample), c(hv), np.int64(n), task, n_train,
                                            count, sums[0], sums[1]))
    valid = xp.empty(S, dtype=xp.bool_)
    keys = xp.empty((2, S), dtype=xp.uint64)
    if S:
        grid, block = thread_launch(S)
        _kernel("state_keys")(grid, block, (np.int64(S), count, sums[0], sums[1], task, n_samples, valid, keys[0],
                                            keys[1]))
    return valid, keys[0], keys[1]


def score_fit(xp, out, hv, task, is_new, p):
    """Per state of a merged block: its train items equal to their outputs (by hash) and those of
    their outputs' sizes, counted over the items ``out`` (:class:`pipeline.search.problem.Items`, hashes
    ``hv``) of the new states (``is_new``); ``p`` is the problem. Returns two (S,) int32 arrays,
    the items of their outputs' sizes (for :func:`score_cells`, in no particular order, room for
    every item) and their count (a one-element device array)."""
    S, n = int(task.shape[0]), int(out.count)
    c = xp.ascontiguousarray
    n_exact = xp.zeros(S, dtype=xp.int32)
    n_sized = xp.zeros(S, dtype=xp.int32)
    fit = xp.empty(n, dtype=xp.int64)
    n_fit = xp.zeros(1, dtype=xp.uint64)
    if n:
        grid, block = thread_launch(n)
        _kernel("score_fit")(grid, block, (c(out.state), c(out.sample), c(out.h), c(out.w), c(hv), np.int64(n),
                                           c(task), is_new,
                                           p.n_train, np.int32(p.max_train), p.target_hash, p.target_shape,
                                           n_exact, n_sized, fit, n_fit))
    return n_exact, n_sized, fit, n_fit


def colour_slots(xp, is_new, n_exact, n_sized, task, n_train, n_fit):
    """Per state: its slot among those that may learn a colour table (see the ``colour_slots``
    kernel), -1 for the others; how many slots there are and the count ``n_fit`` (of
    :func:`score_fit`) on the host, both from one wait for the device."""
    slot, count = colour_slots_launch(xp, is_new, n_exact, n_sized, task, n_train)
    slots, fits = to_host_all(count, n_fit)
    return slot, int(slots[0]), int(fits[0])


def colour_slots_launch(xp, is_new, n_exact, n_sized, task, n_train):
    """:func:`colour_slots` without the wait: the slots and their count as a (1,) uint64 device array."""
    S = int(task.shape[0])
    slot = xp.empty(S, dtype=xp.int64)
    count = xp.zeros(1, dtype=xp.uint64)
    if S:
        grid, block = thread_launch(S)
        _kernel("colour_slots")(grid, block, (np.int64(S), is_new, n_exact, n_sized,
                                              xp.ascontiguousarray(task, dtype=xp.int64), n_train, slot, count))
    return slot, count


def mapped_back(xp, of_item, num_grids: int, out_grid, state, sample, oh, ow, ostart, ohash, count: int):
    """Outputs made from a block's ``num_grids`` distinct grids (output j from distinct grid
    ``out_grid[j]``), for the block's grids (grid i repeats distinct grid ``of_item[i]``; ``state``,
    ``sample``: theirs): ``(state, sample, h, w, start, hash)`` of the ``count`` grids (known on
    the host) whose distinct grid has an output, in the block's order. Five launches, no wait."""
    n, m = int(of_item.shape[0]), int(out_grid.shape[0])
    c = xp.ascontiguousarray
    place = xp.full(num_grids, -1, dtype=xp.int64)
    if m:
        grid, block = thread_launch(m)
        _kernel("place_outputs")(grid, block, (np.int64(m), c(out_grid, dtype=xp.int64), place))
    at, found = xp.empty(n, dtype=xp.int64), xp.empty(n, dtype=xp.bool_)
    outs = [xp.empty(count, dtype=xp.int64) for _ in range(5)] + [xp.empty(count, dtype=xp.uint64)]
    if n and count:
        grid, block = thread_launch(n)
        _kernel("mapped_flags")(grid, block, (np.int64(n), c(of_item, dtype=xp.int64), place, at, found))
        rank = cumsum(xp, found)
        _kernel("mapped_take")(grid, block, (np.int64(n), found, rank, at, *(c(a, dtype=xp.int64) for a in (
            state, sample, oh, ow, ostart)), c(ohash), *outs))
    return outs


def positions(xp, flag, rank, count: int):
    """The positions where the bool array ``flag`` holds, ascending (``rank``: its inclusive
    running count as int64; ``count``: how many, known on the host), with no wait for the device
    (``nonzero`` waits to size its result)."""
    out = xp.empty(count, dtype=xp.int64)
    n = int(flag.shape[0])
    if count and n:
        grid, block = thread_launch(n)
        _kernel("positions")(grid, block, (flag, rank, np.int64(n), out))
    return out


def score_cells(xp, out, task, p, slot, num_slots: int, scale: int, fit, n_fit: int):
    """Per state: the sum over its train items of their outputs' size (the first ``n_fit`` of
    ``fit``, listed by :func:`score_fit`) of ``matching cells * scale // cells``, and the
    (num_slots, 10, 10) int32 histogram of (grid colour, output colour) pairs of the states with a
    ``slot`` >= 0. Returns ``(acc (S,) uint64, hist)``."""
    S = int(task.shape[0])
    c = xp.ascontiguousarray
    acc = xp.zeros(S, dtype=xp.uint64)
    hist = xp.zeros(max(1, num_slots) * 100, dtype=xp.int32)
    if n_fit:
        _kernel("score_cells")(((n_fit + 7) // 8,), (256,),  # a warp per listed item
                               (c(out.cells), c(out.state), c(out.sample), c(out.h), c(out.w), c(out.start), fit,
                                np.int64(n_fit), c(task), np.int32(p.max_train), p.target_offset, p.target_cells,
                                slot, np.int64(scale), acc, hist))
    return acc, hist


def score_states(xp, task, is_new, n_train, n_exact, acc, slot, hist, num_slots: int, scale: int,
                 solved_rank: float):
    """Per state (of task ``task[s]``; ``n_train`` per task): ``(rank, solved, n_exact, score,
    mapping, cm_ok)`` as ``Search._score`` defines them (see the ``score_states`` kernel); ``mapping`` is None when ``num_slots`` is 0."""
    S = int(task.shape[0])
    rank = xp.empty(S, dtype=xp.float64)
    solved = xp.empty(S, dtype=xp.bool_)
    exact = xp.empty(S, dtype=xp.int64)
    score = xp.empty(S, dtype=xp.float64)
    cm_ok = xp.empty(S, dtype=xp.bool_)
    mapping = xp.empty((S, 10), dtype=xp.int64) if num_slots else None
    if S:
        grid, block = thread_launch(S)
        _kernel("score_states")(grid, block, (np.int64(S), is_new, xp.ascontiguousarray(task), n_train, n_exact, acc, slot, hist,
                                              np.int64(scale), np.float64(solved_rank), rank, solved, exact,
                                              score, np.uint64(0) if mapping is None else mapping, cm_ok))
    return rank, solved, exact, score, mapping, cm_ok


