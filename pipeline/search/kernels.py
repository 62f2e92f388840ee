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
from pathlib import Path

import numpy as np

from pipeline.search.device import to_device_async, to_host_all
from solvers import coord_maps
from solvers.kernels import CELL_INDEX, cumsum, per_grid_arg, thread_launch
from solvers.xp import data_address

# The kernels' CUDA source is kernels.cu beside this file, the coordinate maps' functions
# generated into it where it marks them.
_COORD_MAPS_MARK = "// generated here: solvers.coord_maps.cuda_source()\n"
_SOURCE = CELL_INDEX + "\n" + (Path(__file__).with_name("kernels.cu").read_text()
                                .replace(_COORD_MAPS_MARK, coord_maps.cuda_source()))

_THREADS = 256
# Lanes of a warp that write and hash one grid in the copy-and-hash kernels (see hash_group).
HASH_LANES = 8


def source() -> str:
    """The CUDA source of this module's kernels, as it is compiled."""
    return (f"#define HASH_LANES {HASH_LANES}\n#define MERGE_PARTS {MERGE_PARTS}\n#define CROP_ROWS {CROP_ROWS}\n"
            f"#define MIN_DEFAULT_VOTES {MIN_DEFAULT_VOTES}\n" + _SPLITMIX + _SOURCE)


# Parts of concat_items joined per launch of merge_items, and buckets' results per launch of
# crop_sides: the most rows of their tables, which the kernels keep in shared memory.
MERGE_PARTS = 32
CROP_ROWS = 64
# A learnt colour table sends the colours no train grid holds where this many (and more than half)
# of the seen non-zero colours go (scoring._colour_tables).
MIN_DEFAULT_VOTES = 3


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


