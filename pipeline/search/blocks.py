"""Building the next level's blocks from the states an absorb keeps: a per-task budget, blocks cut to
a number of cells and grouped by task.
"""
from __future__ import annotations

import functools

import numpy as np

from pipeline.search import kernels
from pipeline.search.boards import _task_ranks
from pipeline.search.device import is_out_of_memory, to_host
from pipeline.search.problem import Block, concat_items, Items, sort_by_shape
from solvers import kernels as dsl_kernels


class NextBlocks:
    """The next-block building of :class:`~pipeline.search.driver.Search` (mixed into it)."""

    def _next_blocks(self, block: Block, out: Items, new: "_NewStates", kept_per_task) -> list:
        """The new states within the per-task budget and their grids, as an ungrouped block (or
        several, in order, if taking their grids ran out of device memory)."""
        if dsl_kernels.enabled(self.xp) and new.first_gid is not None:
            return self._next_blocks_on_device(block, out, new, kept_per_task)
        xp, tasks, solved = np, new.tasks(slice(None)), self.solved
        croppable = to_host(self._croppable(block, out))[new.idx] if self.crops_next else None
        keep = within_budget(tasks, kept_per_task, self.per_task_budget, xp, croppable)
        if not self.expand_solved:
            keep &= ~solved[tasks]
        pos = xp.nonzero(keep)[0]
        if not len(pos):
            return []
        kept_per_task += xp.bincount(tasks[pos], minlength=len(kept_per_task))
        return self._kept_blocks(block, out, new, pos, tasks)

    def _croppable(self, block: Block, out: Items):
        """Per state of the merged block: whether a crop can make its train grids the train
        outputs, that is every train grid is at least its output's size on both sides and not
        every one exactly it, in a task whose outputs shrink (the free steps only crop: see
        :attr:`crops_next`)."""
        xp, p = self.xp, self.problem
        task = block.task[out.state]
        train = out.sample < p.n_train[task]
        sample = xp.minimum(out.sample, p.max_train - 1)
        target_h, target_w = p.target_shape[task, sample, 0], p.target_shape[task, sample, 1]
        large = train & (out.h >= target_h) & (out.w >= target_w)
        exact = train & (out.h == target_h) & (out.w == target_w)
        n_train = p.n_train[block.task]
        count = functools.partial(xp.bincount, out.state, minlength=block.num_states)
        return ((count(weights=large.astype(xp.float32)) == n_train)
                & (count(weights=exact.astype(xp.float32)) < n_train) & self.shrinks[block.task])

    def _next_blocks_on_device(self, block: Block, out: Items, new: "_NewStates", kept_per_task) -> list:
        """:meth:`_next_blocks` where the kernels run: the host never reads the new states'
        positions (millions on a level that keeps them), and it waits once, for how many states,
        grids and cells are kept (array calls would wait four times: two ``nonzero``, a sum of
        sizes and CuPy's ``bincount``, each leaving the device idle)."""
        xp = self.xp
        tasks = block.task[new.dev]
        croppable = self._croppable(block, out)[new.dev] if self.crops_next else None
        keep = within_budget(tasks, kept_per_task, self.per_task_budget, xp, croppable)
        if not self.expand_solved:
            keep &= ~xp.asarray(self.solved)[tasks]
        try:
            rank = dsl_kernels.cumsum(xp, keep)
            local = xp.full(block.num_states, -1, dtype=xp.int64)  # a kept state's place among them
            local[new.dev] = xp.where(keep, rank - 1, -1)
            local_x = local[out.state]
            kept_item = local_x >= 0
            item_rank = dsl_kernels.cumsum(xp, kept_item)
            totals = xp.zeros(3, dtype=xp.int64)
            if rank.shape[0]:
                totals[:1] = rank[-1:]
            if item_rank.shape[0]:
                totals[1:2] = item_rank[-1:]
                dsl_kernels.sum_into(xp, xp.where(kept_item, out.h * out.w, 0), totals[2:])
            n_states, n_items, n_cells = to_host(totals).tolist()
            if n_states == 0:
                return []
            pos = kernels.positions(xp, keep, rank, n_states)
            sel = kernels.positions(xp, kept_item, item_rank, n_items)
            items = out.take(sel, total=n_cells)
            items.state = local_x[sel]
            kept = Block(items, tasks[pos], new.gids(pos))
            kernels.count_keys_into(xp, kept.task, kept_per_task)
            return [kept]
        except Exception as exc:
            if not is_out_of_memory(exc):
                raise
        # Out of device memory: the kept states in halves (kept_per_task, added to last above,
        # counts none of them yet).
        self._free_device_memory()
        pos = xp.nonzero(keep)[0]
        if not len(pos):
            return []
        kernels.count_keys_into(xp, tasks[pos], kept_per_task)
        return self._kept_blocks(block, out, new, pos, tasks)

    def _kept_blocks(self, block: Block, out: Items, new: "_NewStates", pos: np.ndarray, tasks) -> list:
        """The new states at positions ``pos`` with their grids: one block, or on device
        out-of-memory the blocks of each half of them (the regrouping that follows merges them
        back in order)."""
        xp = self.xp
        try:
            local = xp.full(block.num_states, -1, dtype=xp.int64)
            local[new.dev[xp.asarray(pos)]] = xp.arange(len(pos))
            local_x = local[out.state]
            sel = xp.nonzero(local_x >= 0)[0]
            items = out.take(sel)
            items.state = local_x[sel]
            return [Block(items, xp.asarray(tasks[pos]), xp.asarray(new.gids(pos)))]
        except Exception as exc:
            if not is_out_of_memory(exc) or len(pos) < 2:
                raise
        self._free_device_memory()
        self.stats.oom_splits += 1
        half = len(pos) // 2
        return (self._kept_blocks(block, out, new, pos[:half], tasks)
                + self._kept_blocks(block, out, new, pos[half:], tasks))


def within_budget(tasks, kept_per_task, budget: int, xp=np, eligible=None):
    """Which of the new states of ``tasks`` (in order) fit their task's budget: the first
    ``budget - kept_per_task[t]`` of each task ``t`` (of those ``eligible``, when given). Arrays of
    ``xp``; where its kernels run, the answer is worked out on the device without a wait."""
    if eligible is not None:  # the others go to a task of their own, with no room
        tasks = xp.where(eligible, tasks, len(kept_per_task))
        kept_per_task = xp.concatenate([kept_per_task, xp.full(1, budget, dtype=kept_per_task.dtype)])
    n_tasks = len(kept_per_task)
    room = budget - kept_per_task
    if dsl_kernels.enabled(xp):  # every state's rank among its task's, from a counting sort
        return _task_ranks(xp, tasks, n_tasks) < room[tasks]
    counts = np.bincount(tasks, minlength=n_tasks)
    keep = (room > 0)[tasks]  # a task with no room left keeps none
    # Only the states of the tasks whose room runs out here need their rank among their task's
    # new states (millions of states per absorb on a level that keeps them).
    crossing = np.nonzero(((room > 0) & (counts > room))[tasks])[0]
    if len(crossing):
        cross_tasks = tasks[crossing]
        keep[crossing] = _task_ranks(np, cross_tasks, n_tasks) < room[cross_tasks]
    return keep


def _subset(xp, block: Block, keep) -> Block:
    """The states of ``block`` where ``keep`` is true (in order, renumbered) with their grids."""
    local = dsl_kernels.cumsum(xp, keep) - 1
    sel = xp.nonzero(keep[block.items.state])[0]
    items = block.items.take(sel, grouped=True)
    items.state = local[items.state]
    idx = xp.nonzero(keep)[0]
    return Block(items, block.task[idx], block.gid[idx])


class _BlockBuilder:
    """Collects the new states made from one block and cuts them into blocks of whole tasks of
    about ``block_cells`` cells each (a task larger than that gets a block of its own)."""

    def __init__(self, xp, block_cells: int, num_tasks: int, free_memory=None):
        self.xp = xp
        self.block_cells = block_cells
        self.num_tasks = num_tasks  # task indices are below it (no device max to find them)
        self.free_memory = free_memory or (lambda: None)
        self.pending: list[Block] = []
        self.oom_fallbacks = 0

    def add(self, block: Block) -> None:
        """Queue the new states of one transform."""
        self.pending.append(block)

    def finish(self) -> list[Block]:
        """The queued states as blocks of whole tasks, each sorted by shape.

        If merging the whole queue runs out of device memory, each block is built from its own
        tasks' part of the queue (the same blocks, with less memory held at once)."""
        if not self.pending:
            return []
        pending, self.pending = self.pending, []
        try:
            return self._merge_and_cut(pending)
        except Exception as exc:
            if not is_out_of_memory(exc):
                raise
        self.free_memory()
        self.oom_fallbacks += 1
        return [_sorted_block(self.xp, [_subset(self.xp, b, self.xp.asarray(np.isin(b.host_ids()[0], group)))
                                        for b in pending])
                for group in self._task_groups(pending)]

    def _merge_and_cut(self, pending: list) -> list[Block]:
        xp = self.xp
        merged = _sorted_block(xp, pending)
        if int(merged.items.cells.shape[0]) <= self.block_cells:
            return [merged]
        # A group is a run of the tasks present, in task order, so its tasks are those from its
        # first to its last (the ones between that are not in it have no states here).
        return [_subset(xp, merged, (merged.task >= g[0]) & (merged.task <= g[-1]))
                for g in self._task_groups([merged])]

    def _task_groups(self, blocks: list) -> list:
        """Consecutive runs of the tasks of ``blocks`` that fit a block of cells (by task index)."""
        blocks = [b for b in blocks if b.num_states]
        n = self.num_tasks
        xp = self.xp  # cells per task counted on the device: only n numbers cross
        cells = sum(to_host(xp.bincount(b.task[b.items.state], weights=b.items.h * b.items.w, minlength=n))
                    for b in blocks)
        groups, current, size = [], [], 0.0
        for t in np.nonzero(cells)[0].tolist():
            if current and size + cells[t] > self.block_cells:
                groups.append(current)
                current, size = [], 0.0
            current.append(t)
            size += cells[t]
        groups.append(current)
        return groups


def _sorted_block(xp, blocks: list) -> Block:
    """One block of the states of ``blocks`` in order, its grids sorted by shape."""
    offsets = np.cumsum([0] + [b.num_states for b in blocks[:-1]]).tolist()
    return Block(sort_by_shape(concat_items(xp, [b.items for b in blocks], offsets)),
                 xp.concatenate([b.task for b in blocks]), xp.concatenate([b.gid for b in blocks]))
