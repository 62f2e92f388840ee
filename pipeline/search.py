"""Breadth-first program search over all tasks of a run at once (the mega-batch).

Each level applies every transform to every state of the frontier, for all tasks together: one
array call per transform and shape group of a block, never one per grid or per task. New states
are hashed, deduplicated per task, scored against the train outputs (exact fit, right size, cell
accuracy) and checked for a learned final colour map. A program is kept as parent pointers.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from pipeline.keyset import KeySet
from pipeline.problem import Block, Items, Problem, concat_items, sort_by_shape
from solvers import kernels
from solvers.batch import MAX_SIDE, as_parts
from solvers.primitives.objects import forget_shared_labelling, shared_labelling
from solvers.registry import transforms
from solvers.xp import to_host

LEADERBOARD_SIZE = 6
# Cells per block: bounds the memory of one transform call (about 40 bytes per cell). GPUs take
# larger blocks: fewer, larger array calls are what make them pay.
BLOCK_CELLS = {"cpu": 12_000_000, "gpu": 150_000_000}
SOLVED_RANK = 100.0    # rank of a solved program of length 0; each step costs 1
ACC_SCALE = 1 << 20    # cell accuracy in fixed point
USE_PADDED = True      # run padding-indifferent primitives per size bucket (tests compare both)


@dataclass
class Candidate:
    """A ranked program for one task and what it predicts for the test inputs."""

    gid: int
    rank: float
    solved: bool
    train_exact: int
    score: float
    mapping: dict | None
    test_outputs: list
    test_key: int


@dataclass
class SearchStats:
    """Counts and times of one search."""

    states: int = 0
    grid_transforms: int = 0
    candidates: int = 0
    seconds: float = 0.0
    levels_done: int = 0
    truncated: bool = False
    oom_splits: int = 0
    stage_seconds: dict = field(default_factory=dict)

    def add_time(self, stage: str, seconds: float) -> None:
        """Accumulate ``seconds`` under ``stage``."""
        self.stage_seconds[stage] = self.stage_seconds.get(stage, 0.0) + seconds


class StateTable:
    """Parent pointers of every state ever created, on the host, grown a batch at a time."""

    def __init__(self, num_tasks: int):
        self._parent = [np.full(num_tasks, -1, dtype=np.int64)]
        self._transform = [np.full(num_tasks, -1, dtype=np.int32)]
        self.size = num_tasks
        self._frozen = None

    def add(self, parents: np.ndarray, transform: int) -> np.ndarray:
        """Register new states made by ``transform`` from ``parents``; returns their ids."""
        ids = np.arange(self.size, self.size + len(parents), dtype=np.int64)
        self._parent.append(parents.astype(np.int64))
        self._transform.append(np.full(len(parents), transform, dtype=np.int32))
        self.size += len(parents)
        self._frozen = None
        return ids

    def path(self, gid: int) -> list[int]:
        """Transform indices from the task's input to state ``gid``."""
        if self._frozen is None:
            self._frozen = (np.concatenate(self._parent), np.concatenate(self._transform))
        parent, transform = self._frozen
        steps = []
        while parent[gid] >= 0:
            steps.append(int(transform[gid]))
            gid = int(parent[gid])
        return steps[::-1]


class Search:
    """One breadth-first search over the tasks of a :class:`Problem`."""

    def __init__(self, problem: Problem, *, states_per_task: int = 20_000, expand_solved: bool = False,
                 progress=None, block_cells: int | None = None, bucket_all: bool | None = None):
        self.p = problem
        self.xp = problem.xp
        self.transforms = transforms()
        self.table = StateTable(len(problem.tasks))
        self.seen = KeySet(problem.xp)
        self.boards: list[list[Candidate]] = [[] for _ in problem.tasks]
        self.board_keys: list[set] = [set() for _ in problem.tasks]
        self.threshold = np.full(len(problem.tasks), -1.0)
        self.solved = np.zeros(len(problem.tasks), dtype=bool)
        # A fixed budget per task (not a share of a global one) keeps results independent of
        # which other tasks run in the same batch or shard.
        self.per_task_budget = states_per_task
        self.expand_solved = expand_solved
        self.block_cells = block_cells or BLOCK_CELLS["cpu" if problem.xp is np else "gpu"]
        # Measured: on the CPU, slicing exact-shape groups beats gathers over padded buckets for
        # coordinate-map primitives; on the GPU, fewer larger calls win, so everything is bucketed.
        self.bucket_all = problem.xp is not np if bucket_all is None else bucket_all
        self.progress = progress
        self.stats = SearchStats()
        # Profiling sets this to the device's synchronize, so stage times are device times too.
        self.sync = None

    def _now(self) -> float:
        if self.sync is not None:
            self.sync()
        return time.perf_counter()

    # ------------------------------------------------------------------ driver
    def run(self, depth: int, deadline: float | None = None) -> SearchStats:
        """Search to ``depth`` (stopping early at the monotonic ``deadline``); returns the stats."""
        start = time.perf_counter()
        frontier = [self.p.initial_block()]
        self._absorb(frontier[0], *self._identity_parts(frontier[0]), None, 0, keep=False)
        for level in range(1, depth + 1):
            last = level == depth
            frontier = self._expand_level(frontier, level, last, deadline)
            if self.stats.truncated:
                break
            self.stats.levels_done = level
            if not frontier:
                break
        self.stats.seconds = time.perf_counter() - start
        return self.stats

    def _expand_level(self, frontier, level, last, deadline):
        kept_per_task = np.zeros(len(self.p.tasks), dtype=np.int64)
        if not self.expand_solved:
            frontier = [b for b in (self._drop_solved(b) for b in frontier) if b is not None]
        total = len(self.transforms) * len(frontier)
        done = 0
        next_frontier: list = []
        # Every block holds whole tasks, so block by block, transform by transform, meets each
        # task's states in the same order however tasks are split into blocks or shards (the
        # same inputs give the same programs), and a block's cached layouts are freed as soon as
        # it is done (memory: the frontier plus one block's working set).
        for bi in range(len(frontier)):
            block, frontier[bi] = frontier[bi], None
            builder = _BlockBuilder(self.xp, self.block_cells)
            # The object transforms of a block share their labellings (four kinds for ~18 of them).
            with shared_labelling():
                for ti, tr in enumerate(self.transforms):
                    if deadline is not None and time.monotonic() > deadline:
                        self.stats.truncated = True
                        return []
                    for new_block in self._run_transform(block, ti, tr, level, last, kept_per_task):
                        builder.add(new_block)
                    done += 1
                    if self.progress:
                        self.progress(level, done, total)
            del block
            t0 = self._now()
            next_frontier += builder.finish()
            self.stats.add_time("search.regroup", self._now() - t0)
        return next_frontier

    def _run_transform(self, block, ti, tr, level, last, kept_per_task) -> list:
        """Apply transform ``ti`` to a block and absorb the result; on device out-of-memory the
        block is halved (states in order, so results do not change) and each half is retried."""
        t0 = self._now()
        try:
            out, hashes = self._apply(block, tr)
        except Exception as exc:  # only out-of-memory is handled; _apply changes no state
            if not _is_out_of_memory(exc) or block.num_states < 2:
                raise
            self._free_device_memory()
            self.stats.oom_splits += 1
            half = block.num_states // 2
            keep = self.xp.arange(block.num_states) < half
            return (self._run_transform(_subset(self.xp, block, keep), ti, tr, level, last, kept_per_task)
                    + self._run_transform(_subset(self.xp, block, ~keep), ti, tr, level, last, kept_per_task))
        self.stats.add_time("search.apply", self._now() - t0)
        new_block = self._absorb(block, out, hashes, ti, level, keep=not last, kept_per_task=kept_per_task)
        return [] if new_block is None else [new_block]

    def _free_device_memory(self) -> None:
        forget_shared_labelling()
        if self.xp is not np:
            self.xp.get_default_memory_pool().free_all_blocks()

    # ------------------------------------------------------------------ steps
    def _identity_parts(self, block: Block):
        items = block.items
        return items, self._hash_groups(items, items.groups)

    def _hash_groups(self, items: Items, groups):
        xp = self.xp
        return xp.concatenate([self.p.hasher.grids(items.view(g)) for g in groups])

    def _apply(self, block: Block, tr):
        """Apply one transform to every grid of a block: one call per shape group (or one in all).

        Returns the new grids as :class:`Items` and their hashes (or ``None, None``).
        """
        xp = self.xp
        items = block.items
        self.stats.grid_transforms += items.count
        if tr.primitive.elementwise:
            cells = tr(xp, items.cells.reshape(1, 1, -1)).reshape(-1)
            out = Items(xp, cells, items.state, items.sample, items.h, items.w, items.start)
            if self.bucket_all:
                return out, self._hash_like_padded(items, cells)
            return out, self._hash_groups(out, items.groups)
        if USE_PADDED and (tr.primitive.pad or (tr.primitive.layout == "padded" and self.bucket_all)):
            return self._apply_padded(items, tr)
        # One call per exact shape group: the CPU's path for primitives that take real sides (it
        # beats padded gathers there), and any primitive that has only an exact-shape form.
        chunks, srcs, shapes, hashes = [], [], [], []
        for group in items.groups:
            lo, hi = group[2], group[3]
            for idx, arr in as_parts(xp, tr(xp, items.view(group)), hi - lo):
                m, hh, ww = arr.shape
                if m == 0 or not (1 <= hh <= MAX_SIDE and 1 <= ww <= MAX_SIDE):
                    continue
                arr = xp.ascontiguousarray(arr)
                chunks.append(arr.reshape(-1))
                srcs.append(idx + lo)
                shapes.append((m, hh, ww))
                hashes.append(self.p.hasher.grids(arr))
        if not chunks:
            return None, None
        counts = np.array([s[0] for s in shapes])
        h = np.repeat(np.array([s[1] for s in shapes], dtype=np.int64), counts)
        w = np.repeat(np.array([s[2] for s in shapes], dtype=np.int64), counts)
        sizes = h * w
        src = xp.concatenate(srcs)
        out = Items(xp, xp.concatenate(chunks), items.state[src], items.sample[src], xp.asarray(h),
                    xp.asarray(w), xp.asarray(np.cumsum(sizes) - sizes))
        return out, xp.concatenate(hashes)

    def _hash_like_padded(self, items: Items, cells):
        """Hash new cells laid out like ``items`` through its size buckets (few calls, for GPUs)."""
        xp = self.xp
        lay = items.padded()
        buf = lay.scatter(cells)
        hv = xp.empty(items.count, dtype=xp.uint64)
        for H, W, idx, off in lay.buckets:
            stack = buf[off:off + int(idx.shape[0]) * H * W].reshape(-1, H, W)
            hv[idx] = self.p.hasher.padded(stack, items.h[idx], items.w[idx])
        return hv

    def _apply_padded(self, items: Items, tr):
        """Apply a padding-aware transform once per size bucket (see PaddedLayout)."""
        xp, hasher = self.xp, self.p.hasher
        lay = items.padded()
        results, hashes = [], []
        for bucket in lay.buckets:
            H, W, idx, _ = bucket
            res = tr.padded(xp, lay.stack(bucket), items.h[idx], items.w[idx])
            if tr.primitive.pad == "inplace":
                res = xp.where(lay.real_mask(bucket), res, xp.uint8(0))
                hashes.append(hasher.padded(res, items.h[idx], items.w[idx]))
            else:
                hashes.append(hasher.padded(res.arr, res.h, res.w)[res.valid])
            results.append(res)
        if tr.primitive.pad == "inplace":
            buf = xp.concatenate([r.reshape(-1) for r in results])
            order = xp.concatenate([b[2] for b in lay.buckets])
            hv = xp.empty(items.count, dtype=xp.uint64)
            hv[order] = xp.concatenate(hashes)
            out = Items(xp, lay.gather(buf), items.state, items.sample, items.h, items.w, items.start)
            return out, hv
        # Crops: the valid grids, bucket by bucket, each read from its padded result.
        src, hs, ws, bases, widths = [], [], [], [], []
        offset = 0
        for (_, _, idx, _), res in zip(lay.buckets, results):
            keep = xp.nonzero(res.valid)[0]
            m, OH, OW = res.arr.shape
            src.append(idx[keep])
            hs.append(res.h[keep])
            ws.append(res.w[keep])
            bases.append(offset + keep * (OH * OW))
            widths.append(xp.full(keep.shape[0], OW, dtype=xp.int64))
            offset += m * OH * OW
        src = xp.concatenate(src)
        if src.shape[0] == 0:
            return None, None
        h, w = xp.concatenate(hs).astype(xp.int64), xp.concatenate(ws).astype(xp.int64)
        sizes = h * w
        out = Items(xp, None, items.state[src], items.sample[src], h, w, xp.cumsum(sizes) - sizes)
        base, width = xp.concatenate(bases), xp.concatenate(widths)
        buf = xp.concatenate([r.arr.reshape(-1) for r in results])
        total = int(sizes.sum())
        if kernels.enabled(xp):
            out.cells = xp.empty(total, dtype=xp.uint8)
            kernels.copy_rows(xp, buf, out.cells, base, width, out.start, w, h, w)
        else:
            item, pos = out.cell_index_for(total)
            out.cells = buf[base[item] + (pos // w[item]) * width[item] + pos % w[item]]
        return out, xp.concatenate(hashes)

    def _drop_solved(self, block: Block):
        xp = self.xp
        keep = ~xp.asarray(self.solved)[block.task]
        if bool(keep.all()):
            return block
        if not bool(keep.any()):
            return None
        return _subset(xp, block, keep)

    def _absorb(self, block: Block, out: Items, hv, ti, level, keep, kept_per_task=None):
        """Score, deduplicate and rank the states that ``out`` (grids made from ``block``) form.

        Returns the block of new states to expand at the next level (or None).
        """
        if out is None or out.count == 0:
            return None
        xp, p = self.xp, self.p
        t0 = self._now()
        S, K = block.num_states, p.max_samples
        st, sm = out.state, out.sample
        present = xp.zeros((S, K), dtype=bool)
        present[st, sm] = True
        mixed = xp.zeros((S, K), dtype=xp.uint64)
        mixed[st, sm] = p.hasher.item(hv, sm)
        n_train = p.n_train[block.task]
        valid = present.sum(axis=1) == p.n_samples[block.task]
        key = p.hasher.state_key(mixed.sum(axis=1, dtype=xp.uint64), block.task)
        self.stats.add_time("search.hash", self._now() - t0)

        t0 = self._now()
        cand = xp.nonzero(valid)[0]
        new_dev = cand[self.seen.add_new(key[cand])]
        new_idx = to_host(new_dev)
        self.stats.add_time("search.dedup", self._now() - t0)
        self.stats.candidates += int(cand.shape[0])
        if len(new_idx) == 0:
            return None
        task_h, gid_h = block.host_ids()
        if ti is None:
            new_gid = gid_h[new_idx]
        else:
            self.stats.states += len(new_idx)
            new_gid = self.table.add(gid_h[new_idx], ti)

        t0 = self._now()
        new_mask = xp.zeros(S, dtype=bool)
        new_mask[new_dev] = True
        task = block.task[st]
        # Fit of the new states only: exact matches by hash, cell accuracy where the size is right.
        is_train = sm < p.n_train[task]
        ts = xp.minimum(sm, p.max_train - 1)
        exact = xp.zeros((S, K), dtype=bool)
        exact[st, sm] = is_train & (hv == p.target_hash[task, ts])
        same = new_mask[st] & is_train \
            & (p.target_shape[task, ts, 0] == out.h) & (p.target_shape[task, ts, 1] == out.w)
        fit = xp.nonzero(same)[0]
        fit_state, fit_sample = st[fit], sm[fit]
        sized = xp.zeros((S, K), dtype=bool)
        sized[fit_state, fit_sample] = True
        n_exact = exact.sum(axis=1)
        solved = new_mask & (n_exact == n_train)
        # Colour maps are learnt for new unsolved states whose train grids all have the right size.
        cm_cand = new_mask & (sized.sum(axis=1) == n_train) & ~solved
        cm_idx = xp.nonzero(cm_cand)[0]
        slot = xp.full(S, -1, dtype=xp.int64)
        slot[cm_idx] = xp.arange(cm_idx.shape[0])
        correct, hist = self._cell_matches(out, fit, p.target_offset[task[fit], fit_sample], slot[fit_state],
                                           int(cm_idx.shape[0]))
        # Fixed-point integers: the same ranking bit for bit on every device and summation order.
        acc = xp.zeros((S, K), dtype=xp.int64)
        acc[fit_state, fit_sample] = (correct * ACC_SCALE) // (out.h[fit] * out.w[fit])
        is_test = xp.arange(K)[None, :] >= n_train[:, None]
        test_key = p.hasher.state_key(xp.where(is_test, mixed, xp.uint64(0)).sum(axis=1, dtype=xp.uint64),
                                      block.task)
        score = (n_exact * ACC_SCALE + acc.sum(axis=1)) / (n_train * ACC_SCALE)
        mapping, cm_ok = _colour_tables(xp, S, cm_idx, hist)
        rank = xp.where(solved, SOLVED_RANK - level,
                        xp.where(cm_ok, SOLVED_RANK - level - 1, score))
        self.stats.add_time("search.score", self._now() - t0)
        t0 = self._now()
        self._update_boards(block, out, new_dev, new_idx, new_gid, task_h, rank, solved | cm_ok, n_exact,
                            score, mapping, cm_ok, test_key)
        self.stats.add_time("search.rank", self._now() - t0)
        if not keep:
            return None
        t0 = self._now()
        nb = self._next_block(out, new_dev, new_idx, new_gid, task_h, kept_per_task)
        self.stats.add_time("search.frontier", self._now() - t0)
        return nb

    def _cell_matches(self, out: Items, fit, target_start, slot, num_slots: int):
        """Compare the grids ``fit`` of ``out`` cell by cell with their train outputs (same sizes;
        output cells begin at ``target_start`` in the problem's target buffer).

        Returns the matching cells per grid and, for grids with a ``slot`` >= 0, the histogram
        ``(num_slots, 10, 10)`` of (grid colour, output colour) pairs summed per slot.
        """
        xp, p = self.xp, self.p
        if kernels.enabled(xp):
            return kernels.match_cells(xp, out.cells, out.start[fit], out.h[fit] * out.w[fit], target_start,
                                       p.target_cells, slot, num_slots)
        grids = out.take(fit)
        item, pos = grids.cell_index()
        target = p.target_cells[target_start[item] + pos]
        correct = xp.bincount(item[grids.cells == target], minlength=grids.count)
        cell_slot = slot[item]
        use = xp.nonzero(cell_slot >= 0)[0]
        code = cell_slot[use] * 100 + grids.cells[use].astype(xp.int64) * 10 + target[use]
        hist = xp.bincount(code, minlength=num_slots * 100).reshape(num_slots, 10, 10)
        return correct, hist

    def _update_boards(self, block, parts, new_dev, new_idx, new_gid, task_h, rank, solved, n_exact, score,
                       mapping, cm_ok, test_key):
        """Insert the best new states of each task into its leaderboard (top few, distinct outputs).

        Only the states that beat their task's board cross to the host (``new_dev``: the new
        states on the device, ``new_idx`` the same on the host)."""
        xp = self.xp
        rank_new = rank[new_dev]
        better = to_host(rank_new > xp.asarray(self.threshold)[block.task[new_dev]])
        if not better.any():
            return
        pick = np.nonzero(better)[0]
        idx, gids, tasks = new_idx[pick], new_gid[pick], task_h[new_idx[pick]]
        rank_h = to_host(rank_new[xp.asarray(pick)])
        order = np.lexsort((gids, -rank_h, tasks))
        idx, gids, tasks, rank_h = idx[order], gids[order], tasks[order], rank_h[order]
        first = np.r_[0, np.nonzero(np.diff(tasks))[0] + 1]
        pos = np.arange(len(tasks)) - np.repeat(first, np.diff(np.r_[first, len(tasks)]))
        top = pos < LEADERBOARD_SIZE
        idx, gids, tasks, rank_h = idx[top], gids[top], tasks[top], rank_h[top]
        outputs = self._test_outputs(block, parts, idx)
        at = xp.asarray(idx)
        solved_h, exact_h, score_h, cm_h, tkey_h = (to_host(a[at]) for a in (solved, n_exact, score, cm_ok, test_key))
        maps_h = to_host(mapping[at]) if mapping is not None else None
        for j, s in enumerate(idx.tolist()):
            t = int(tasks[j])
            table = None
            outs = outputs[s]
            tkey = int(tkey_h[j])
            if cm_h[j]:
                lut = maps_h[j].astype(np.uint8)
                table = {c: int(lut[c]) for c in range(10) if lut[c] != c}
                outs = [lut[o] for o in outs]
                tkey = hash((tkey, tuple(lut.tolist())))
            board = self.boards[t]
            if tkey in self.board_keys[t]:
                same = next(c for c in board if c.test_key == tkey)
                if float(rank_h[j]) <= same.rank:
                    continue
                board.remove(same)
            self.board_keys[t].add(tkey)
            board.append(Candidate(int(gids[j]), float(rank_h[j]), bool(solved_h[j]), int(exact_h[j]),
                                   float(score_h[j]), table, outs, tkey))
            board.sort(key=lambda c: (-c.rank, c.gid))
            for dropped in board[LEADERBOARD_SIZE:]:
                self.board_keys[t].discard(dropped.test_key)
            del board[LEADERBOARD_SIZE:]
            if len(board) == LEADERBOARD_SIZE:
                self.threshold[t] = board[-1].rank
            if solved_h[j]:
                self.solved[t] = True

    def _test_outputs(self, block, out: Items, idx):
        """Host copies of the test-input grids of the block states ``idx``: {state: [grid, ...]}."""
        xp, p = self.xp, self.p
        want = xp.zeros(block.num_states, dtype=bool)
        want[xp.asarray(idx)] = True
        sel = xp.nonzero(want[out.state] & (out.sample >= p.n_train[block.task[out.state]]))[0]
        picked = out.take(sel)
        cells = to_host(picked.cells)
        found: dict = {int(s): {} for s in idx.tolist()}
        for s, k, h, w, a in zip(*(to_host(x).tolist() for x in
                                   (picked.state, picked.sample, picked.h, picked.w, picked.start))):
            found[s][k] = cells[a:a + h * w].reshape(h, w)
        return {s: [d[k] for k in sorted(d)] for s, d in found.items()}

    def _next_block(self, out: Items, new_dev, new_idx, new_gid, task_h, kept_per_task):
        """The new states (within the per-task budget) and their grids, as an ungrouped block."""
        xp = self.xp
        tasks = task_h[new_idx]
        order = np.argsort(tasks, kind="stable")
        sorted_tasks = tasks[order]
        first = np.r_[0, np.nonzero(np.diff(sorted_tasks))[0] + 1]
        rank = np.empty(len(tasks), dtype=np.int64)
        rank[order] = np.arange(len(tasks)) - np.repeat(first, np.diff(np.r_[first, len(tasks)]))
        keep = rank + kept_per_task[tasks] < self.per_task_budget
        if not self.expand_solved:
            keep &= ~self.solved[tasks]
        np.add.at(kept_per_task, tasks[keep], 1)
        if not keep.any():
            return None
        local = xp.full(len(task_h), -1, dtype=xp.int64)
        local[new_dev[xp.asarray(keep)]] = xp.arange(int(keep.sum()))
        local_x = local[out.state]
        items = out.take(xp.nonzero(local_x >= 0)[0])
        items.state = local_x[local_x >= 0]
        return Block(items, xp.asarray(tasks[keep]), xp.asarray(new_gid[keep]))


def _colour_tables(xp, num_states: int, cand, hist):
    """Per-state colour tables learnt from the (grid colour, output colour) histograms ``hist`` of
    the states ``cand``: ``(tables (S, 10) int or None, ok (S,) bool)``, ``ok`` where every source
    colour maps to exactly one target colour across all train pairs."""
    ok = xp.zeros(num_states, dtype=bool)
    if int(cand.shape[0]) == 0:
        return None, ok
    consistent = ((hist > 0).sum(axis=2) <= 1).all(axis=1)
    table = xp.where(hist.sum(axis=2) > 0, hist.argmax(axis=2), xp.arange(10)[None, :])
    ok[cand] = consistent
    tables = xp.zeros((num_states, 10), dtype=xp.int64)
    tables[cand] = table
    return tables, ok


def _subset(xp, block: Block, keep) -> Block:
    """The states of ``block`` where ``keep`` is true (in order, renumbered) with their grids."""
    local = xp.cumsum(keep) - 1
    sel = xp.nonzero(keep[block.items.state])[0]
    items = block.items.take(sel, grouped=True)
    items.state = local[items.state]
    idx = xp.nonzero(keep)[0]
    return Block(items, block.task[idx], block.gid[idx])


def _is_out_of_memory(exc: BaseException) -> bool:
    """True for an allocation failure of the array library (CuPy's OutOfMemoryError, MemoryError)."""
    return isinstance(exc, MemoryError) or type(exc).__name__ == "OutOfMemoryError"


class _BlockBuilder:
    """Collects the new states made from one block and cuts them into blocks of whole tasks of
    about ``block_cells`` cells each (a task larger than that gets a block of its own)."""

    def __init__(self, xp, block_cells: int):
        self.xp = xp
        self.block_cells = block_cells
        self.pending: list[Block] = []

    def add(self, block: Block) -> None:
        """Queue the new states of one transform."""
        self.pending.append(block)

    def finish(self) -> list[Block]:
        """The queued states as blocks of whole tasks, each sorted by shape."""
        if not self.pending:
            return []
        xp = self.xp
        offset, parts = 0, []
        for b in self.pending:
            items = b.items
            parts.append(Items(xp, items.cells, items.state + offset, items.sample, items.h, items.w,
                               items.start))
            offset += b.num_states
        merged = Block(sort_by_shape(concat_items(xp, parts)), xp.concatenate([b.task for b in self.pending]),
                       xp.concatenate([b.gid for b in self.pending]))
        self.pending = []
        items = merged.items
        if int(items.cells.shape[0]) <= self.block_cells:
            return [merged]
        # Cells per task, then consecutive runs of tasks that fit a block.
        task_of_item = to_host(merged.task[items.state])
        cells = np.bincount(task_of_item, weights=to_host(items.h * items.w))
        tasks = np.nonzero(cells)[0]
        groups, current, size = [], [], 0.0
        for t in tasks.tolist():
            if current and size + cells[t] > self.block_cells:
                groups.append(current)
                current, size = [], 0.0
            current.append(t)
            size += cells[t]
        groups.append(current)
        task_h = to_host(merged.task)
        return [_subset(xp, merged, xp.asarray(np.isin(task_h, g))) for g in groups]
