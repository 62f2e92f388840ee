"""Absorbing new grids into the search: outputs of several transforms merged, hashed into states,
deduplicated per task, scored, offered to the boards and cut into the next level's blocks; on a
GPU finished in two halves, the second while the device runs the next transform.
"""
from __future__ import annotations

import collections
from dataclasses import dataclass
from typing import Any

import numpy as np

from pipeline.search import kernels
from pipeline.search.device import HostCopy, is_out_of_memory
from pipeline.search.problem import allocation_id, Block, concat_hashed_items, follows, Items
from pipeline.search.state_table import MergedStates
from solvers import kernels as dsl_kernels
from solvers.xp import namespace_of


class Absorbing:
    """The absorb of :class:`~pipeline.search.driver.Search` (mixed into it)."""

    def _absorb(self, outputs: list, level, keep, kept_per_task=None) -> list:
        """Score, deduplicate and rank the states that ``outputs`` (:class:`_Output`, in transform
        order) form; returns the blocks of new states to expand at the next level.

        Several outputs absorbed together give exactly what absorbing them one by one gives:
        states are met in the same order (deduplication keeps the first, the per-task budget
        takes the first) and leaderboards are filled transform by transform. (States of a task
        solved meanwhile are dropped here or at the next level's start: they are never expanded.)
        If merging and hashing several outputs runs out of device memory (before anything is
        recorded), each half of them is absorbed on its own, which gives the same results.
        """
        self._finish_absorbing()  # in order: the key table's size, the boards' thresholds
        try:
            t0 = self._now()
            merged = _merge_outputs(self.xp, outputs)
            self.stats.add_time("search.merge", self._now() - t0)
            keys = self._state_keys(*merged[:3])
        except Exception as exc:
            if not is_out_of_memory(exc) or len(outputs) < 2:
                raise
            self._free_device_memory()
            self.stats.oom_splits += 1
            half = len(outputs) // 2
            return (self._absorb(outputs[:half], level, keep, kept_per_task)
                    + self._absorb(outputs[half:], level, keep, kept_per_task))
        # The previous absorb's boards (their thresholds pick this one's offers), worked on the host
        # while the device merges and keys these states: run before them, the device idled.
        self._run_deferred()
        return self._absorb_merged(*merged, *keys, level, keep, kept_per_task)

    def _state_keys(self, block: Block, out: Items, hv):
        """Per state of ``block``: the key of its test outputs (the sum of its test items' hashes,
        mixed with their samples, salted with its task), whether it has every sample, its key."""
        xp, p = self.xp, self.problem
        t0 = self._now()
        if dsl_kernels.enabled(xp):  # the same values from two kernels
            valid, key, test_key = kernels.state_keys(xp, out, hv, block.task, p.n_train, p.n_samples)
        else:
            S, K = block.num_states, p.max_samples
            st, sm = out.state, out.sample
            present = xp.zeros((S, K), dtype=bool)
            present[st, sm] = True
            mixed = xp.zeros((S, K), dtype=xp.uint64)
            mixed[st, sm] = p.hasher.item(hv, sm)
            valid = present.sum(axis=1) == p.n_samples[block.task]
            summed = mixed.sum(axis=1, dtype=xp.uint64)
            is_test = xp.arange(K)[None, :] >= p.n_train[block.task][:, None]
            test_summed = xp.where(is_test, mixed, xp.uint64(0)).sum(axis=1, dtype=xp.uint64)
            key = p.hasher.state_key(summed, block.task)
            test_key = p.hasher.state_key(test_summed, block.task)
        self.stats.add_time("search.hash", self._now() - t0)
        return test_key, valid, key

    def _absorb_merged(self, block: Block, out: Items, hv, merged: MergedStates, test_key, valid, key, level, keep,
                       kept_per_task):
        """:meth:`_absorb` of one merged set of outputs (see :func:`_merge_outputs`); the next
        level's blocks of new states (none, or one unless memory ran short)."""
        xp = self.xp
        if dsl_kernels.enabled(xp) and merged.transforms is not None:
            # Its next blocks, if any, go to the level's block builder when it finishes.
            self._absorbing = self._absorb_started(block, out, hv, merged, test_key, valid, key, level, keep,
                                                   kept_per_task)
            return []
        t0 = self._now()
        new_dev = self.seen.add_new(key, valid)
        self._count_candidates(valid)  # read once, at the end
        n_new = int(new_dev.shape[0])
        self.stats.add_time("search.dedup", self._now() - t0)
        if n_new == 0:
            return []
        # The new states' positions, in 32 bits where they fit (what the state table keeps of every
        # state, halved). They go to the host while the device scores them (the host reads them
        # only once it waits for the boards' picks anyway), except on a GPU's last level, where no
        # next block needs them: there they stay on the device, the boards' picks carry their own,
        # and the table copies the few that programs need (the largest copy of an absorb, and the
        # host's copy out of pinned memory, are saved).
        positions = new_dev.astype(xp.int32) if block.num_states < 2**31 else new_dev
        if self._gpu_last_level(keep, merged):
            new_idx = positions
        else:
            new_idx = HostCopy(positions)
            self._unread.append(new_idx)
        if merged.transforms is None:  # the identity: the task inputs, which keep their ids
            new = _NewStates(new_dev, new_idx, merged, None)
        else:
            self.stats.states += n_new
            new = _NewStates(new_dev, new_idx, merged, self.table.add(new_idx, merged))

        t0 = self._now()
        scored = self._score_new(block, out, hv, test_key, new_dev, level)
        self.stats.add_time("search.score", self._now() - t0)
        t0 = self._now()
        # The host's part of the update waits for the next transform's kernels to be launched
        # (the device idled through it); the next blocks below go by the solved flags as they were.
        self._update_boards(block, out, new, scored)
        self.stats.add_time("search.rank", self._now() - t0)
        if not keep:
            return []
        t0 = self._now()
        blocks = self._next_blocks(block, out, new, kept_per_task)
        self.stats.add_time("search.frontier", self._now() - t0)
        return blocks

    def _gpu_last_level(self, keep: bool, merged: MergedStates) -> bool:
        """Whether an absorb is of a GPU's last level (no next blocks: ``keep`` false), made by
        transforms (not the identity's task inputs, which keep their own ids)."""
        return dsl_kernels.enabled(self.xp) and not keep and merged.transforms is not None

    def _absorb_started(self, block: Block, out: Items, hv, merged: MergedStates, test_key, valid, key, level,
                        keep: bool, kept_per_task):
        """:meth:`_absorb_merged` on a GPU, in two halves. This one launches the key
        table's insertion and the scores' first kernels, which need only the mask of new states,
        and starts the copy of three counts to the host (new states, colour-table slots, items of
        their outputs' sizes); it returns the second half (None for no states), which reads them
        and finishes. Run once the next transform's first kernels are queued, its wait for the
        counts finds the device busy with them instead of idle (a wait for the dedup's or the
        scoring's counts alone would empty the device's queue). On a level that keeps states the second
        half also adds the next blocks to the level's block builder (halves run in order, so the
        builder meets them in the same order). Results are those of :meth:`_absorb_merged` (same
        values, same order)."""
        xp, p = self.xp, self.problem
        if int(key.shape[0]) == 0:
            return None
        t0 = self._now()
        new_mask = self.seen.insert(key, valid)
        self._count_candidates(valid)  # read once, at the end
        rank = dsl_kernels.cumsum(xp, new_mask)
        self.stats.add_time("search.dedup", self._now() - t0)
        t0 = self._now()
        try:
            n_exact, n_sized, fit, n_fit = kernels.score_fit(xp, out, hv, block.task, new_mask, p)
            slot, slots = kernels.colour_slots_launch(xp, new_mask, n_exact, n_sized, block.task, p.n_train)
            counts = HostCopy(xp.concatenate((rank[-1:].astype(xp.uint64), slots, n_fit)))
            first_scores = (n_exact, fit, slot)
        except Exception as exc:  # the second half scores them with halving, as _absorb_merged does
            if not is_out_of_memory(exc):
                raise
            self._free_device_memory()
            counts, first_scores = HostCopy(rank[-1:]), None
        self.stats.add_time("search.score", self._now() - t0)

        def finish():
            t0 = self._now()
            n_new, *score_counts = (int(v) for v in counts.get())
            self.seen.size += n_new
            self.stats.add_time("search.dedup", self._now() - t0)
            if n_new == 0:
                return
            new_dev = kernels.positions(xp, new_mask, rank, n_new)
            positions = new_dev.astype(xp.int32) if block.num_states < 2**31 else new_dev
            if keep:  # to the host while the device goes on, as _absorb_merged does
                positions = HostCopy(positions)
                self._unread.append(positions)
            self.stats.states += n_new
            new = _NewStates(new_dev, positions, merged, self.table.add(positions, merged))
            t0 = self._now()
            scored = None
            if first_scores is not None:
                try:
                    scored = self._score_rest(block, out, test_key, new_mask, level, *first_scores, *score_counts)
                except Exception as exc:
                    if not is_out_of_memory(exc):
                        raise
                    self._free_device_memory()
            if scored is None:
                scored = self._score_new(block, out, hv, test_key, new_dev, level)
            self.stats.add_time("search.score", self._now() - t0)
            t0 = self._now()
            self._update_boards(block, out, new, scored)
            self.stats.add_time("search.rank", self._now() - t0)
            if keep:
                t0 = self._now()
                for kept in self._next_blocks(block, out, new, kept_per_task):
                    self._builder.add(kept)
                self.stats.add_time("search.frontier", self._now() - t0)

        return finish


@dataclass
class _Output:
    """The grids one transform (index ``transform``; None: the identity) made from ``block``."""

    block: Block
    transform: int | None
    items: Items
    hashes: object


class _Pending:
    """Outputs waiting to be absorbed together, up to a budget of cells (and state slots)."""

    def __init__(self, xp, budget_cells: int, max_samples: int):
        self.xp = xp
        self.budget = budget_cells
        self.max_samples = max_samples
        self.outputs: list[_Output] = []
        self.cost = 0
        self._buffer = None
        self._used = 0
        self._one_view = True  # the queued outputs' cells lie back to back (join_cells: no copy)
        # The last buffers' allocation ids (an output cut from one, or of a run cut before a
        # spill, may arrive after a newer buffer began; an id reused after a free only costs an
        # early absorb).
        self._buffer_ids: collections.deque = collections.deque(maxlen=8)

    def cells(self, n: int):
        """An uninitialised uint8 array for the ``n`` cells of an output about to be queued here.
        Outputs are cut back to back from one buffer (of the budget's size) while it has room, so
        absorbing them joins their cells without copying (:func:`pipeline.search.problem.join_cells`).
        The buffer outlives an absorb (the outputs of a run made before it follow on in it); an
        output that does not fit is cut from a new buffer, and the outputs queued before it are
        absorbed without it (see :meth:`joins`)."""
        xp = self.xp
        if self._buffer is None or self._used + n > self._buffer.shape[0]:
            try:
                self._buffer = xp.empty(max(self.budget, n), dtype=xp.uint8)
                self._buffer_ids.append(allocation_id(xp, self._buffer))
            except Exception as exc:  # no room for a buffer: this output gets its own memory
                if not is_out_of_memory(exc):
                    raise
                self._buffer = xp.empty(n, dtype=xp.uint8)
            self._used = 0
        out = self._buffer[self._used:self._used + n]
        self._used += n
        return out

    def joins(self, output: _Output) -> bool:
        """Whether ``output`` may join the queue: False when the queued outputs' cells are one view
        of a buffer and ``output``'s were cut from a buffer elsewhere (a new one, begun when the
        last had no room left): absorbed with them, it would have made them all be copied, so
        they are absorbed first. (Outputs with memory of their own, as on the CPU, are copied
        when absorbed anyway: they join.)"""
        if not self.outputs or not self._one_view:
            return True
        cells = output.items.cells
        return (follows(self.xp, self.outputs[-1].items.cells, cells)
                or allocation_id(self.xp, cells) not in self._buffer_ids)

    def add(self, output: _Output) -> bool:
        """Queue an output; True when the queue is full and should be absorbed now."""
        self._one_view = not self.outputs or (self._one_view and follows(self.xp, self.outputs[-1].items.cells,
                                                                         output.items.cells))
        self.outputs.append(output)
        self.cost += int(output.items.cells.shape[0]) + 32 * output.block.num_states * self.max_samples
        return self.cost >= self.budget

    def take(self) -> list:
        """The queued outputs, emptying the queue."""
        outputs, self.outputs, self.cost = self.outputs, [], 0
        return outputs

    def __bool__(self) -> bool:
        return bool(self.outputs)


def _join(xp, arrays: list):
    """The 1-D ``arrays`` end to end; one array is returned as it is (CuPy's ``concatenate`` costs
    the host about 0.1 ms a call, which adds up over the launch-bound first levels)."""
    return arrays[0] if len(arrays) == 1 else xp.concatenate(arrays)


def _merge_outputs(xp, outputs: list):
    """One virtual block and one set of grids from several outputs: states numbered in order.

    Returns ``(block, items, hashes, merged)``: the merged block's ``task`` is on the device (it
    has no ``gid`` or items), and ``merged`` (:class:`MergedStates`) gives a state's task, parent
    and transform on the host."""
    merged = MergedStates(outputs)
    if len(outputs) == 1:
        o = outputs[0]
        return o.block, o.items, o.hashes, merged
    block = Block(None, xp.concatenate([o.block.task for o in outputs]), None)
    items, hashes = concat_hashed_items(xp, [o.items for o in outputs], [o.hashes for o in outputs],
                                        merged.offsets[:-1].tolist())
    return block, items, hashes, merged


@dataclass
class _NewStates:
    """The states an absorb found new: their positions in the merged block on the device
    (``dev``) and on their way to the host (``host``, read as ``idx``; on a GPU's last level a
    device array, see :meth:`Search._absorb_merged`); their ids follow on from ``first_gid``
    (None: the task inputs, which keep their own ids)."""

    dev: Any
    host: Any
    merged: MergedStates
    first_gid: int | None

    @property
    def idx(self) -> np.ndarray:
        """The positions on the host (waits for their copy the first time)."""
        return self.host.get()

    def gids(self, pos, idx=None) -> np.ndarray:
        """The ids of the new states at positions ``pos`` (an index array or a slice; ``idx``:
        their positions in the merged block, when known)."""
        if self.first_gid is None:
            return self.merged.parents(self.idx[pos] if idx is None else idx)
        if isinstance(pos, slice):
            return self.first_gid + np.arange(len(self.host), dtype=np.int64)[pos]
        return self.first_gid + namespace_of(pos).asarray(pos, dtype=np.int64)

    def tasks(self, pos) -> np.ndarray:
        """The tasks of the new states at positions ``pos``."""
        return self.merged.tasks(self.idx[pos])
