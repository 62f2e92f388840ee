"""The data layout of a search: grids back to back in one flat cell buffer, plus the targets.

Samples of task ``t`` are its train inputs followed by its test inputs (indices ``0..k_t-1``).
Test outputs never enter here: the loader keeps them apart.

:class:`Items` holds many grids in one flat ``uint8`` buffer with per-grid ``start``, ``h``, ``w``.
Whole-batch steps (hashing, scoring, colour maps, elementwise primitives) run on the flat buffer in
a few array calls; shape-specific primitives run on ``(m, h, w)`` views of runs of one shape
(``groups``), which are plain slices of the buffer once items are sorted by shape.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pipeline.search.device import to_host, to_host_all
from pipeline.search.hashing import GridHasher
from pipeline.search import kernels
from solvers import kernels as dsl_kernels
from solvers.xp import data_address, namespace_of, repeat_index, run_positions


@dataclass
class Items:
    """Grids in one flat buffer: ``cells`` (C,), and per grid ``state``, ``sample``, ``h``, ``w``,
    ``start`` (I,): the program state and the task sample each grid belongs to, its shape, and
    where its cells begin. ``groups``, when set, lists ``(h, w, lo, hi)``: items ``lo..hi-1`` all
    have shape ``h x w`` and lie back to back. ``represents``, when set on the outputs of a
    block's distinct grids (see ``search._DistinctGrids``), says how many of the block's grids
    they stand for (known on the host without a wait).
    """

    xp: object
    cells: object
    state: object
    sample: object
    h: object
    w: object
    start: object
    groups: list | None = None
    represents: int | None = None
    held: Any = field(default=None, repr=False)  # host memory that a queued copy to the device still reads
    _padded: "PaddedLayout | None" = field(default=None, repr=False)

    @property
    def count(self) -> int:
        """Number of grids."""
        return int(self.h.shape[0])

    def view(self, group):
        """The ``(m, h, w)`` view of one shape group."""
        h, w, lo, hi = group
        first = int(self.start[lo]) if hi > lo else 0
        return self.cells[first:first + (hi - lo) * h * w].reshape(hi - lo, h, w)

    def padded(self, one_bucket_cells: int | None = None) -> "PaddedLayout":
        """The same grids zero-padded into a few size buckets (cached: the first call's
        ``one_bucket_cells`` holds; see :class:`PaddedLayout`)."""
        if self._padded is None:
            self._padded = PaddedLayout(self, one_bucket_cells)
        return self._padded

    def take(self, order, grouped: bool = False, total: int | None = None) -> "Items":
        """A new buffer holding the grids ``order`` (in that order); ``grouped`` builds shape groups;
        ``total``: their cells, when known on the host (else summed: a wait on a GPU).

        On a GPU one kernel copies the grids row by row. Otherwise the per-cell index arrays of
        the gather (24 bytes per cell) are built a chunk of grids at a time, so copying a frontier
        of hundreds of millions of cells needs little extra memory.
        """
        xp = self.xp
        h, w = self.h[order], self.w[order]
        sizes = h * w
        start = dsl_kernels.cumsum(xp, sizes, exclusive=True)
        src = self.start[order]
        if total is None:
            total = int(sizes.sum()) if sizes.shape[0] else 0
        cells = xp.empty(total, dtype=xp.uint8)
        if dsl_kernels.enabled(xp):
            kernels.copy_rows(xp, self.cells, cells, src, w, start, w, h, w)
        else:
            self._gather_chunks(cells, src, start, sizes, total)
        out = Items(xp, cells, self.state[order], self.sample[order], h, w, start)
        if grouped:
            out.groups = shape_runs(h, w)
        return out

    def _gather_chunks(self, cells, src, start, sizes, total: int) -> None:
        xp = self.xp
        limit = TAKE_CHUNK_CELLS["cpu" if xp is np else "gpu"]
        bounds = [0, int(src.shape[0])]
        if total > limit:
            ends = to_host(xp.cumsum(sizes))
            bounds = sorted(set(np.searchsorted(ends, np.arange(limit, total, limit), side="left").tolist())
                            | {0, int(src.shape[0])})
        for a, b in zip(bounds[:-1], bounds[1:]):
            if b <= a:
                continue
            lo = int(start[a])
            n = int(start[b - 1] + sizes[b - 1]) - lo
            cells[lo:lo + n] = self.cells[run_positions(xp, src[a:b], sizes[a:b], n, int(self.cells.shape[0]))]


# Sides of the padded size buckets. The CPU pays per cell, so it pads little (up to 25 buckets);
# a GPU pays per call (each bucket is dozens of kernel launches) and, in its block-per-grid
# kernels, per padded cell. Measured on an H100 at depth 3 (warm): (10, 20, 30) beat (10, 30) by
# 8% and (10, 15, 20, 30) by 11%. Results never depend on it.
BUCKET_SIDES = {"cpu": (5, 10, 15, 20, 30), "gpu": (10, 20, 30)}
# Up to this many cells padded to 30 x 30 (the first two levels of a run over all tasks), a GPU
# takes one bucket: calls there are launch-bound, so fewer calls beat fewer padded cells. The
# search lowers it to its block size on smaller cards. Measured on an H100 (profile, warm):
# with 8 M, 100 M and 400 M, depth 2 in 1.5, 1.4 and 1.2 s, depth 3 in 19.6, 19.5 and 18.5 s.
GPU_ONE_BUCKET_CELLS = 400_000_000
# Cells gathered per step in Items.take: bounds its index temporaries (24 bytes per cell).
TAKE_CHUNK_CELLS = {"cpu": 8_000_000, "gpu": 100_000_000}


def pitched_positions(xp, base, pitch, h, w, total: int, source_size: int):
    """Where the cells of grids laid end to end row by row (``h``, ``w`` per grid, ``total`` cells)
    sit in a buffer of ``source_size`` cells that holds grid ``i`` from ``base[i]`` with rows
    ``pitch[i]`` apart: one run per row, so no per-cell division."""
    h = xp.asarray(h, dtype=xp.int64)
    rows = int(h.sum()) if h.shape[0] else 0
    grid = repeat_index(xp, h, rows)
    row = xp.arange(rows, dtype=xp.int64) - (xp.cumsum(h) - h)[grid]
    return run_positions(xp, base[grid] + row * pitch[grid], w[grid], total, source_size)


class PaddedLayout:
    """Grids of many shapes zero-padded (bottom, right) into a few ``(m, H, W)`` bucket stacks.

    Primitives that are indifferent to zero padding run once per bucket instead of once per exact
    shape. ``buckets`` lists ``(H, W, item indices, offset)`` into one buffer; :meth:`scatter` and
    :meth:`gather` move cells laid out like the items into such a buffer and back. On a GPU, items
    that fill at most ``one_bucket_cells`` cells (and ``GPU_ONE_BUCKET_CELLS``) padded to the
    largest side take that one bucket.
    """

    def __init__(self, items: "Items", one_bucket_cells: int | None = None):
        xp = items.xp
        sides = BUCKET_SIDES["cpu" if xp is np else "gpu"]
        limit = GPU_ONE_BUCKET_CELLS if one_bucket_cells is None else min(one_bucket_cells, GPU_ONE_BUCKET_CELLS)
        if xp is not np and items.count * sides[-1] ** 2 <= limit:
            sides = sides[-1:]
        host_sides = list(sides)
        S = len(host_sides)
        sides = xp.asarray(np.array(sides))
        # Bucket of each item: its sides' places among the bucket sides, rows first.
        key = xp.searchsorted(sides, items.h) * S + xp.searchsorted(sides, items.w)
        order, begins = stable_group(xp, key)
        begins = np.r_[to_host(begins[:S * S]), items.count].tolist()
        self.buckets = []
        # Per item: where its grid starts in the padded buffer, and the width of its bucket.
        self.base = xp.zeros(items.count, dtype=xp.int64)
        self.pitch = xp.zeros(items.count, dtype=xp.int64)
        offset = 0
        for k in range(S * S):
            m = begins[k + 1] - begins[k]
            if not m:
                continue
            H, W = host_sides[k // S], host_sides[k % S]
            idx = order[begins[k]:begins[k + 1]]
            self.base[idx] = offset + xp.arange(m, dtype=xp.int64) * (H * W)
            self.pitch[idx] = W
            self.buckets.append((H, W, idx, offset))
            offset += m * H * W
        self.size = offset
        # Each bucket's grids have more rows and columns than these (the next smaller sides).
        self.fewest_sides = [(max([v for v in host_sides if v < H], default=0),
                              max([v for v in host_sides if v < W], default=0)) for H, W, _, _ in self.buckets]
        # Where each bucket's grids begin in :meth:`order` (host ints; the last entry: all items).
        self.first_of_bucket = np.cumsum([0] + [int(b[2].shape[0]) for b in self.buckets]).tolist()
        # A weak reference: the items cache their layout, and a cycle between the two would keep
        # both (and their cell buffers) alive until Python's cyclic collector ran, which large
        # arrays do not prompt (a depth-3 CPU run held every block's layout: 18.9 GB peak).
        self._items = weakref.ref(items)
        self._dest = None
        self._order = order  # the buckets' idx one after another
        self._per_bucket: dict = {}
        self.buffer = self.scatter(items.cells)

    @property
    def items(self) -> "Items":
        """The items this layout pads (it must not outlive them)."""
        items = self._items()
        if items is None:
            raise RuntimeError("a padded layout was used after its items were freed")
        return items

    def _destinations(self):
        """For every cell of the items, its place in the padded buffer (array-call path)."""
        if self._dest is None:
            items = self.items
            self._dest = pitched_positions(items.xp, self.base, self.pitch, items.h, items.w,
                                           int(items.cells.shape[0]), self.size)
        return self._dest

    def scatter(self, cells):
        """A padded buffer (zeros outside the grids) holding ``cells``, laid out like the items."""
        xp, items = self.items.xp, self.items
        buf = xp.zeros(self.size, dtype=xp.uint8)
        if dsl_kernels.enabled(xp):
            kernels.copy_rows(xp, cells, buf, items.start, items.w, self.base, self.pitch, items.h, items.w)
        else:
            buf[self._destinations()] = cells
        return buf

    def gather(self, buf):
        """The cells of a padded buffer's grids, laid out like the items (inverse of scatter)."""
        xp, items = self.items.xp, self.items
        if not dsl_kernels.enabled(xp):
            return buf[self._destinations()]
        cells = xp.empty(int(items.cells.shape[0]), dtype=xp.uint8)
        kernels.copy_rows(xp, buf, cells, self.base, self.pitch, items.start, items.w, items.h, items.w)
        return cells

    def stack(self, bucket):
        """The ``(m, H, W)`` stack of one bucket (a view of the buffer)."""
        H, W, idx, off = bucket
        return self.buffer[off:off + int(idx.shape[0]) * H * W].reshape(-1, H, W)

    def sides(self, bucket):
        """The real sides ``(h, w)`` of the grids of one bucket (cached: every transform needs them)."""
        key = ("sides", bucket[3])
        if key not in self._per_bucket:
            idx = bucket[2]
            self._per_bucket[key] = (self.items.h[idx], self.items.w[idx])
        return self._per_bucket[key]

    def grid_bases(self, bucket):
        """Where each grid of one bucket starts in its ``(m, H, W)`` stack (cached)."""
        key = ("bases", bucket[3])
        if key not in self._per_bucket:
            H, W, idx, _ = bucket
            self._per_bucket[key] = self.items.xp.arange(int(idx.shape[0]), dtype=self.items.xp.int64) * (H * W)
        return self._per_bucket[key]

    def starts(self, bucket):
        """Where each grid of one bucket starts in the items' cells (cached)."""
        key = ("starts", bucket[3])
        if key not in self._per_bucket:
            self._per_bucket[key] = self.items.start[bucket[2]]
        return self._per_bucket[key]

    def order(self):
        """The items' indices in bucket order: the buckets' ``idx`` one after another."""
        return self._order

    def may_fit(self, k: int, max_sides) -> bool:
        """Whether bucket ``k`` may hold a grid of at most ``max_sides`` (rows, columns; None: any)."""
        return max_sides is None or (self.fewest_sides[k][0] < max_sides[0] and self.fewest_sides[k][1] < max_sides[1])

    def ordered(self) -> bool:
        """True when :meth:`order` is the items' own order (one bucket holds them all)."""
        return len(self.buckets) == 1

    def real_mask(self, bucket):
        """True on the cells of each grid, False on its padding (cached)."""
        key = ("mask", bucket[3])
        if key not in self._per_bucket:
            xp = self.items.xp
            H, W, _, _ = bucket
            h, w = self.sides(bucket)
            self._per_bucket[key] = (xp.arange(H)[None, :, None] < h[:, None, None]) \
                & (xp.arange(W)[None, None, :] < w[:, None, None])
        return self._per_bucket[key]


def shape_runs(h, w) -> list:
    """Runs of equal ``(h, w)`` in arrays (host or device) already sorted by shape:
    ``[(h, w, lo, hi), ...]``. The runs are found where the arrays are; only the runs' bounds and
    shapes (at most 900 of each) cross to the host."""
    n = int(h.shape[0])
    if n == 0:
        return []
    xp = namespace_of(h)
    change = xp.nonzero((h[1:] != h[:-1]) | (w[1:] != w[:-1]))[0] + 1
    starts = xp.concatenate([xp.zeros(1, dtype=change.dtype), change])
    starts_h, run_h, run_w = to_host_all(starts, h[starts], w[starts])
    bounds = np.r_[starts_h, n]
    return [(int(hh), int(ww), int(a), int(b)) for hh, ww, a, b in zip(run_h, run_w, bounds[:-1], bounds[1:])]


def sort_by_shape(items: Items) -> Items:
    """The same grids, reordered so that each shape is one contiguous group (shapes in order of
    rows, then columns; grids of one shape in their order)."""
    xp = items.xp
    # Sides are 1..MAX_SIDE (30): below 32, so the key fits group_order's 0..1023.
    order, _ = stable_group(xp, items.h * 32 + items.w)
    return items.take(order, grouped=True)


def stable_group(xp, key):
    """``(order, begins)``: the positions of ``key`` (ints in 0..1023) ordered by key, equal keys
    in position order, and where each key's run begins in ``order`` (1024 values), on ``key``'s
    device. On a GPU with the kernels, a counting sort (``kernels.group_order``); otherwise a
    stable sort (NumPy's of 16-bit ints is a radix sort)."""
    if dsl_kernels.enabled(xp):
        return kernels.group_order(xp, key)
    counts = xp.bincount(key, minlength=kernels.GROUP_KEYS)
    if xp is np:
        order = np.argsort(key.astype(np.int16), kind="stable")
    else:
        order = xp.lexsort(xp.stack([xp.arange(key.shape[0]), key]))
    return order.astype(xp.int64, copy=False), xp.cumsum(counts) - counts


def concat_items(xp, parts: list, state_offsets: list | None = None) -> Items:
    """Concatenate several :class:`Items` (ungrouped); with ``state_offsets``, part ``j``'s states
    are shifted by ``state_offsets[j]`` (parts of different blocks numbered one after another)."""
    return _concat(xp, parts, state_offsets, None)[0]


def concat_hashed_items(xp, parts: list, hashes: list, state_offsets: list | None = None):
    """:func:`concat_items` of ``parts`` and the concatenation of ``hashes`` (their items' uint64
    hashes, one array per part): ``(items, hashes)``, both in one launch on a GPU."""
    return _concat(xp, parts, state_offsets, hashes)


def _concat(xp, parts: list, state_offsets: list | None, hashes: list | None):
    offsets = state_offsets or [0] * len(parts)
    if len(parts) == 1 and not offsets[0]:
        p = parts[0]
        return Items(xp, p.cells, p.state, p.sample, p.h, p.w, p.start), None if hashes is None else hashes[0]
    cells = join_cells(xp, [p.cells for p in parts])
    # Each part's starts shifted by where its cells begin among the joined cells (a part's items
    # may share cells: see search._DistinctGrids).
    cell_at = np.cumsum([0] + [int(p.cells.shape[0]) for p in parts[:-1]]).tolist()
    if dsl_kernels.enabled(xp):  # kernels write the parts' items at their place, many parts a launch
        total = sum(p.count for p in parts)
        out = tuple(xp.empty(total, dtype=xp.int64) for _ in range(5))
        joined = None if hashes is None else xp.empty(total, dtype=xp.uint64)
        held = kernels.merge_items(xp, parts, offsets, cell_at, out, hashes, joined)
        return Items(xp, cells, *out, held=held), joined
    items = Items(xp, cells, xp.concatenate([p.state + offset for p, offset in zip(parts, offsets)]),
                  xp.concatenate([p.sample for p in parts]), xp.concatenate([p.h for p in parts]),
                  xp.concatenate([p.w for p in parts]),
                  xp.concatenate([p.start + at for p, at in zip(parts, cell_at)]))
    return items, None if hashes is None else xp.concatenate(hashes)


def follows(xp, a, b) -> bool:
    """Whether the 1-D contiguous array ``b`` begins where ``a`` ends, in the same allocation (so
    that both are one view: :func:`join_cells` need not copy them)."""
    owner = _owner(xp, a)
    return (owner is not None and _owner(xp, b) is owner and data_address(a) + a.nbytes == data_address(b)
            and all(v.ndim == 1 and v.flags.c_contiguous for v in (a, b)))


def join_cells(xp, arrays: list):
    """The 1-D uint8 ``arrays`` end to end: a view when they lie back to back in one allocation
    (outputs cut from one buffer, see ``search._Pending.cells``), else a concatenation (a copy)."""
    first = arrays[0]
    owner = _owner(xp, first)
    back_to_back = owner is not None and first.ndim == 1 and first.flags.c_contiguous and all(
        follows(xp, a, b) for a, b in zip(arrays, arrays[1:]))
    if not back_to_back:
        return xp.concatenate(arrays)
    total = sum(int(a.shape[0]) for a in arrays)
    if xp is np:
        flat = owner.reshape(-1)
        at = data_address(first) - data_address(flat)
        return flat[at:at + total]
    return xp.ndarray((total,), dtype=first.dtype, memptr=first.data)


def allocation_id(xp, a) -> int:
    """An id of the allocation that the array ``a`` (host or device) is a view of: the same for
    every view of it while it lives (``id`` of its owner)."""
    owner = _owner(xp, a)
    return id(a if owner is None else owner)


def _owner(xp, a):
    """What owns ``a``'s memory: the base ndarray (NumPy; None if ``a`` owns it) or the device
    allocation (CuPy)."""
    if xp is np:
        base = a.base
        return base if isinstance(base, np.ndarray) and base.flags.c_contiguous and base.dtype == a.dtype else None
    return a.data.mem


@dataclass
class Block:
    """A self-contained set of states with all their grids (``items.state`` indexes ``task``/``gid``)."""

    items: Items
    task: object
    gid: object
    _host: tuple | None = field(default=None, repr=False)

    @property
    def num_states(self) -> int:
        """Number of states in the block."""
        return int(self.task.shape[0])

    def host_ids(self):
        """Host copies of ``task`` and ``gid`` (made once: every transform of the block needs them)."""
        if self._host is None:
            self._host = (to_host(self.task), to_host(self.gid))
        return self._host


class Problem:
    """Arrays describing the tasks of one run, on the array module ``xp``."""

    def __init__(self, tasks, xp, seed: int = 0):
        self.tasks = list(tasks)
        self.xp = xp
        self.hasher = GridHasher(xp, seed)
        num = len(self.tasks)
        n_train = np.array([len(t.train_inputs) for t in self.tasks], dtype=np.int64)
        n_test = np.array([len(t.test_inputs) for t in self.tasks], dtype=np.int64)
        self.max_train = int(n_train.max()) if num else 1
        self.max_samples = int((n_train + n_test).max()) if num else 1
        self.max_tests = int(n_test.max()) if num else 0
        shapes = np.zeros((num, self.max_train, 2), dtype=np.int64)
        offsets = np.zeros((num, self.max_train), dtype=np.int64)
        flat, changed, pos = [], [], 0
        zero_kept = np.zeros(num, dtype=np.int64)
        for t, task in enumerate(self.tasks):
            for s, (inp, out) in enumerate(zip(task.train_inputs, task.train_outputs)):
                shapes[t, s] = out.shape
                offsets[t, s] = pos
                flat.append(np.asarray(out, dtype=np.uint8).ravel())
                same = inp.shape == out.shape
                changed.append(np.where(inp != out, out, 0).astype(np.uint8).ravel() if same else flat[-1])
                zero_kept[t] += int(((inp == 0) & (out == 0)).sum()) if same else 0
                pos += out.size
        self.n_train = xp.asarray(n_train)
        self.n_samples = xp.asarray(n_train + n_test)
        self.target_shape = xp.asarray(shapes)
        self.target_offset = xp.asarray(offsets)
        self.target_cells = xp.asarray(np.concatenate(flat) if flat else np.zeros(1, np.uint8))
        # The train outputs' cells where they differ from their inputs' (all of an output whose
        # input has another size), 0 elsewhere: what a layer is worth (see pipeline.search.pieces).
        self.changed_cells = xp.asarray(np.concatenate(changed) if changed else np.zeros(1, np.uint8))
        # Per task, its train cells that are 0 in both input and output (an eraser's worth is
        # what it leaves 0 beyond them: see pipeline.search.pieces).
        self.zero_kept = xp.asarray(zero_kept)
        self.target_hash = self._target_hashes(shapes, offsets, n_train, seed)

    def _target_hashes(self, shapes, offsets, n_train, seed: int):
        """The train outputs' grid hashes, (tasks, max_train) uint64 on the array device."""
        xp, num = self.xp, len(self.tasks)
        if dsl_kernels.enabled(xp):
            # Every train output hashed where it lies in target_cells, in one kernel (hash only),
            # the hashes scattered on the device: nothing waits.
            task_of = np.repeat(np.arange(num), n_train)
            sample_of = np.arange(len(task_of)) - np.repeat(np.cumsum(n_train) - n_train, n_train)
            h, w = shapes[task_of, sample_of, 0], shapes[task_of, sample_of, 1]
            hashes = self.hasher.copy_padded(self.target_cells, xp.asarray(offsets[task_of, sample_of]), 0, None,
                                             None, xp.asarray(h), xp.asarray(w))
            target_hash = xp.zeros((num, self.max_train), dtype=xp.uint64)
            target_hash[xp.asarray(task_of), xp.asarray(sample_of)] = hashes
            return target_hash
        # Elsewhere one stack per shape (one call per shape, not per grid), on the host: NumPy's
        # hashes are the device's (tested); on a GPU without the kernels each shape's hashes cost
        # a round trip (about 190 shapes on ARC-1 train: 0.06-0.14 s of every search).
        host_hasher = self.hasher if xp is np else GridHasher(np, seed)
        by_shape: dict = {}
        for t, task in enumerate(self.tasks):
            for s, out in enumerate(task.train_outputs):
                by_shape.setdefault(out.shape, []).append((t, s, out))
        target_hash = np.zeros((num, self.max_train), dtype=np.uint64)
        for rows in by_shape.values():
            stack = np.stack([np.asarray(r[2], dtype=np.uint8) for r in rows])
            target_hash[[r[0] for r in rows], [r[1] for r in rows]] = host_hasher.grids(stack)
        return xp.asarray(target_hash)

    def initial_block(self) -> Block:
        """Level 0: one state per task (the identity program) holding its train and test inputs."""
        xp = self.xp
        rows = [(grid.shape, t, s, grid) for t, task in enumerate(self.tasks)
                for s, grid in enumerate(tuple(task.train_inputs) + tuple(task.test_inputs))]
        rows.sort(key=lambda r: r[0])  # stable: keeps task and sample order within a shape
        h = np.array([r[0][0] for r in rows], dtype=np.int64)
        w = np.array([r[0][1] for r in rows], dtype=np.int64)
        sizes = h * w
        cells = np.concatenate([np.asarray(r[3], dtype=np.uint8).ravel() for r in rows])
        items = Items(xp, xp.asarray(cells), xp.asarray(np.array([r[1] for r in rows], dtype=np.int64)),
                      xp.asarray(np.array([r[2] for r in rows], dtype=np.int64)),
                      xp.asarray(h), xp.asarray(w), xp.asarray(np.cumsum(sizes) - sizes),
                      groups=shape_runs(h, w))
        ids = xp.arange(len(self.tasks), dtype=xp.int64)
        return Block(items, ids, ids.copy())
