"""Breadth-first program search over all tasks of a run at once (the mega-batch).

Each level applies every transform to every state of the frontier, for all tasks together: one
array call per transform and shape group of a block, never one per grid or per task. New states
are hashed, deduplicated per task, scored against the train outputs (exact fit, right size, cell
accuracy) and checked for a learned final colour map. A program is kept as parent pointers.
"""
from __future__ import annotations

import collections
import functools
import time
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from pipeline.search.keyset import first_positions, key_set
from pipeline.search.leaderboard import LEADERBOARD_SIZE, Candidate, Leaderboards, offers_that_may_enter
from pipeline.search.problem import (Block, Items, Problem, allocation_id, concat_hashed_items, concat_items, follows,
                              sort_by_shape, stable_group)
from pipeline.search.state_table import MergedStates, StateTable
from pipeline.search.candidate_outputs import TestGrids
from pipeline.search import kernels
from solvers import kernels as dsl_kernels
from solvers import stack_cache
from solvers.batch import MAX_SIDE, as_parts
from solvers.padded import Padded
from solvers.primitives import transforms
from solvers.xp import HostCopy, is_out_of_memory, namespace_of, to_device_async, to_host, to_host_all

# Cells per block: bounds the memory of one transform call (about 40 bytes per cell). GPUs take
# larger blocks: fewer, larger array calls are what make them pay.
BLOCK_CELLS = {"cpu": 12_000_000, "gpu": 150_000_000}
# Cells of new grids scored together (from several transforms of a block), given the block size.
# Each absorb is dozens of array calls whatever its size, so small levels gain most; the bound keeps
# its temporaries (tens of bytes per cell on the CPU, a few on a GPU) small next to the block's
# (a transform's temporaries take up to a few hundred bytes per cell of the block). Measured on an
# H100, depth 3 (benchmarks/RESULTS.md): 22.8 s one transform at a time, 20.2 s up to one block of
# cells, 18.2 s up to four.
ABSORB_CELLS = {"cpu": lambda block_cells: min(block_cells, 4_000_000), "gpu": lambda block_cells: 4 * block_cells}
SOLVED_RANK = 100.0    # rank of a solved program of length 0; each step costs 1
ACC_SCALE = 1 << 20    # cell accuracy in fixed point
# Board records a GPU's picks get room for at least (64 bytes each, copied back every absorb).
PICK_ROOM = 2048
# On a GPU, of an absorb of at most SELECT_OFFERS_MAX_NEW new states, only the offers that can
# change the boards cross to the host (see leaderboard.offers_that_may_enter): the first level's
# absorb offers every state it makes, tens of thousands, too many for the host to sort and merge
# quickly. A larger absorb's thresholds already stop most of its states, and the selection's sorts
# (CuPy's wait for the device) would cost more than they save.
SELECT_OFFERS_MAX_NEW = 1 << 17
# An absorb of at most this many new states gives its picks room for all of them (4 MiB at most):
# the first level's boards have room for every new state, and tens of thousands that overflow the
# learnt room cost a second packing and a copy that waits for the device.
PICK_ROOM_ALL = 1 << 16
# A block of at least this many grids applies each transform to its distinct grids only, when at
# least DISTINCT_MIN_REPEATS of its grids repeat another (results do not depend on it; see
# _distinct_grids). Measured on ARC-1 train: 42% of the grids entering level 3 repeat one in the
# same block (34% of their padded cells), 25% at level 2. On a GPU the first levels are bound by the
# host's launches, which the mapping back adds to.
DISTINCT_MIN_ITEMS = {"cpu": 1_000, "gpu": 500_000}
DISTINCT_MIN_REPEATS = 0.1


@dataclass
class SearchStats:
    """Counts and times of one search."""

    states: int = 0
    grid_transforms: int = 0  # (grid, transform) pairs the search evaluated
    grid_transforms_computed: int = 0  # of them, those it computed (one per distinct grid of a block)
    candidates: int = 0
    seconds: float = 0.0
    levels_done: int = 0
    truncated: bool = False
    oom_splits: int = 0
    stage_seconds: dict = field(default_factory=dict)
    level_seconds: list = field(default_factory=list)  # wall time of each level searched

    def add_time(self, stage: str, seconds: float) -> None:
        """Accumulate ``seconds`` under ``stage``."""
        self.stage_seconds[stage] = self.stage_seconds.get(stage, 0.0) + seconds


class Search:
    """One breadth-first search over the tasks of a :class:`Problem`."""

    def __init__(self, problem: Problem, *, states_per_task: int = 20_000, expand_solved: bool = False,
                 progress=None, block_cells: int | None = None, bucket_all: bool | None = None,
                 absorb_cells: int | None = None):
        self.p = problem
        self.xp = problem.xp
        self.transforms = transforms()
        self.table = StateTable(len(problem.tasks))
        self.seen = key_set(problem.xp, self._free_device_memory)
        self.leaderboards = Leaderboards(len(problem.tasks))
        self.boards: list[list[Candidate]] = self.leaderboards.boards  # each task's, best first
        self.threshold = self.leaderboards.threshold  # the rank that enters a full board
        self.test_grids = TestGrids(problem, wanted=self._board_candidates)  # the boards' candidates' test outputs
        self._threshold_dev = None  # its copy on the array device, as of ``_threshold_version``
        self._threshold_version = -1
        self.solved = np.zeros(len(problem.tasks), dtype=bool)
        # A fixed budget per task (not a share of a global one) keeps results independent of
        # which other tasks run in the same batch or shard.
        self.per_task_budget = states_per_task
        self.expand_solved = expand_solved
        self.block_cells = block_cells or BLOCK_CELLS["cpu" if problem.xp is np else "gpu"]
        # New grids of several transforms are scored and deduplicated together up to this many
        # cells (0: after every transform). Results do not depend on it (see _absorb).
        self.absorb_cells = (ABSORB_CELLS["cpu" if problem.xp is np else "gpu"](self.block_cells)
                             if absorb_cells is None else absorb_cells)
        # Measured: on the CPU, slicing exact-shape groups beats gathers over padded buckets for
        # coordinate-map primitives; on the GPU, fewer larger calls win, so everything is bucketed.
        self.bucket_all = problem.xp is not np if bucket_all is None else bucket_all
        # Runs of consecutive elementwise transforms are applied together; on a GPU also runs of
        # one fill primitive, of coordinate maps and of one crop primitive; others one at a time.
        self.map_runs = dsl_kernels.enabled(self.xp)
        self.runs = _transform_runs(self.transforms, fill_runs=dsl_kernels.enabled(self.xp), map_runs=self.map_runs,
                                    crop_runs=dsl_kernels.enabled(self.xp) and self.bucket_all)
        self._lut_cache: dict = {}
        self._map_tables: dict = {}
        self.progress = progress
        self.stats = SearchStats()
        # Profiling sets this to the device's synchronize, so stage times are device times too.
        self.sync = None
        self._pending = None  # the queue of the block being expanded (its outputs' cells buffer)
        self._enqueue = None  # queues an output of the block being expanded (see _expand_level)
        self._waiting = None  # a crop whose outputs are not finished yet (see _finish_waiting)
        self._absorbing = None  # an absorb's second half, not run yet (see _absorb_started)
        self._builder = None  # the block builder of the block being expanded (see _absorb_started)
        self._may_defer = False  # whether the transform being applied may leave its crop waiting
        # The host's part of the last absorb's leaderboard update, when it was put off (see
        # _update_boards): it runs while the device works on the next transform.
        self._deferred = None
        self._deferred_solved = None  # the tasks that the put-off update solves (see _mark_deferred_solved)
        self._unread: list = []  # copies of new states' positions to the host not read yet
        self._none = None  # see _no_results
        # The distinct grids of the block being expanded, if any: a crop on them counts the block's
        # grids its outputs stand for (see _DistinctGrids._mapped).
        self._distinct = None
        self._pick_room = PICK_ROOM  # records the boards' picks get room for (see _offer_picks)
        self._valid_count = self._no_candidates()  # states with every sample (the candidates), summed on the device

    def _no_candidates(self):
        return self.xp.zeros(1, dtype=self.xp.int64)

    def _count_candidates(self, valid) -> None:
        if dsl_kernels.enabled(self.xp):
            dsl_kernels.sum_into(self.xp, valid, self._valid_count)
        else:
            self._valid_count += valid.sum(dtype=self.xp.int64)

    def _now(self) -> float:
        if self.sync is not None:
            self.sync()
        return time.perf_counter()

    # ------------------------------------------------------------------ driver
    def run(self, depth: int, deadline: float | None = None) -> SearchStats:
        """Search to ``depth`` (stopping early at the monotonic ``deadline``); returns the stats."""
        start = time.perf_counter()
        frontier = [self.p.initial_block()]
        first = frontier[0]
        self._absorb([_Output(first, None, *self._identity_parts(first))], 0, keep=False)
        for level in range(1, depth + 1):
            last = level == depth
            t0 = self._now()
            frontier = self._expand_level(frontier, level, last, deadline)
            self.stats.level_seconds.append(self._now() - t0)
            if self.stats.truncated:
                break
            self.stats.levels_done = level
            if not frontier:
                break
        self._run_deferred()
        self.test_grids.flush()
        self.stats.candidates += int(to_host(self._valid_count).sum())
        self._valid_count = self._no_candidates()
        self.stats.seconds = time.perf_counter() - start
        return self.stats

    def _expand_level(self, frontier, level, last, deadline):
        # The boards' solved flags decide which states are dropped; the rest of a put-off board
        # update waits for the level's first kernels (on the first levels it is the host's largest
        # piece of work, and the device would idle through it).
        self._mark_deferred_solved()
        # States kept per task for the next level (on the array device where its kernels run:
        # the budget is then applied there, see _next_blocks).
        kept_per_task = (self.xp if dsl_kernels.enabled(self.xp) else np).zeros(len(self.p.tasks), dtype=np.int64)
        if not self.expand_solved:
            t0 = self._now()
            # Block by block, each replaced as soon as its successor exists (memory: the frontier
            # plus one block).
            kept: list = []
            for bi in range(len(frontier)):
                block, frontier[bi] = frontier[bi], None
                kept += self._drop_solved(block)
                del block
            frontier = kept
            self.stats.add_time("search.prune", self._now() - t0)
        total = len(self.transforms) * len(frontier)
        done = 0
        next_frontier: list = []
        # Every block holds whole tasks, so block by block, transform by transform, meets each
        # task's states in the same order however tasks are split into blocks or shards (the
        # same inputs give the same programs), and a block's cached layouts are freed as soon as
        # it is done (memory: the frontier plus one block's working set).
        for bi in range(len(frontier)):
            block, frontier[bi] = frontier[bi], None
            builder = self._builder = _BlockBuilder(self.xp, self.block_cells, len(self.p.tasks),
                                                    self._free_device_memory)
            pending = self._pending = _Pending(self.xp, self.absorb_cells, self.p.max_samples)

            def absorb():
                for new_block in self._absorb(pending.take(), level, keep=not last, kept_per_task=kept_per_task):
                    builder.add(new_block)

            def enqueue(output):
                if not pending.joins(output):
                    absorb()  # the queued outputs, one view of the queue's buffer, without this one
                if pending.add(output):
                    absorb()

            self._enqueue = enqueue
            distinct = self._distinct_grids(block)
            grids = block if distinct is None else distinct.view
            self._distinct = distinct
            # The transforms of a block share their analyses of a stack (labellings, colour counts,
            # enclosed background: solvers.stack_cache).
            with stack_cache.scope():
                for run in self.runs:
                    if deadline is not None and time.monotonic() > deadline:
                        self.stats.truncated = True
                        self._finish_absorbing()
                        self._pending = self._enqueue = self._waiting = self._distinct = None
                        self._run_deferred()
                        return []
                    outputs = self._apply_run(grids, run, defer=True)
                    self.stats.grid_transforms += len(run) * block.items.count
                    if distinct is not None:
                        outputs = distinct.mapped(outputs)
                    if isinstance(outputs, _Waiting):
                        self._waiting = outputs  # the one before it was finished while it ran
                    else:
                        self._finish_waiting()
                        for output in outputs:
                            enqueue(output)
                    done += len(run)
                    if self.progress:
                        self.progress(level, done, total)
                self._finish_waiting()
                if pending:
                    absorb()
                self._finish_absorbing()
                if bi + 1 < len(frontier) or last:
                    self._run_deferred()
                # else the level's last update is finished once the next level's first kernels are
                # queued (its solved flags are set at the level's start): it holds the block's last
                # outputs until then.
            self._pending = self._enqueue = self._distinct = self._builder = None
            del block, grids, distinct
            t0 = self._now()
            next_frontier += builder.finish()
            self.stats.oom_splits += builder.oom_fallbacks
            self.stats.add_time("search.regroup", self._now() - t0)
        return next_frontier

    def _distinct_grids(self, block) -> "_DistinctGrids | None":
        """The distinct grids of ``block`` as a block of their own (each grid its own "state"), to
        apply the transforms to instead of every grid, or None where too few grids repeat or the
        block is small. Grids are the same where their hashes are (64 bits, as states are
        deduplicated); a transform's output depends on its grid alone, so mapping the outputs
        back gives every grid the output it would have had."""
        xp, items = self.xp, block.items
        n = items.count
        if n < DISTINCT_MIN_ITEMS["cpu" if xp is np else "gpu"]:
            return None
        t0 = self._now()
        view = None
        try:
            first = first_positions(xp, self._identity_parts(block)[1])
            is_first = first == xp.arange(n, dtype=xp.int64)
            firsts = xp.nonzero(is_first)[0]
            m = int(firsts.shape[0])
            if m <= (1 - DISTINCT_MIN_REPEATS) * n:
                grids = items.take(firsts, grouped=True)
                grids.state = xp.arange(m, dtype=xp.int64)
                of_item = (dsl_kernels.cumsum(xp, is_first) - 1)[first]
                view = _DistinctGrids(xp, block, Block(grids, xp.zeros(m, dtype=xp.int64), grids.state), of_item,
                                      xp.bincount(of_item, minlength=m) if dsl_kernels.enabled(xp) else None)
        except Exception as exc:  # no room for the view: the block's every grid, as without it
            if not is_out_of_memory(exc):
                raise
            view = None
            self._free_device_memory()
            self.stats.oom_splits += 1
        self.stats.add_time("search.distinct", self._now() - t0)
        return view

    def _apply_run(self, block, run, defer: bool = False):
        """The outputs of a run of transforms (indices) on ``block``, in transform order; with
        ``defer``, a crop's may come as a :class:`_Waiting` (see :meth:`_finish_waiting`)."""
        if self.map_runs and self.transforms[run[0]].coord_map is not None:
            return self._apply_map_run(block, run, defer)
        if len(run) > 1:
            primitive = self.transforms[run[0]].primitive
            if primitive.fill is not None:
                return self._apply_fill_run(block, run)
            if primitive.elementwise:
                return self._apply_elementwise_run(block, run)
            return self._apply_crop_run(block, run, defer)
        ti = run[0]
        return self._run_transform(block, ti, self.transforms[ti], defer)

    def _run_transform(self, block, ti, tr, defer: bool = False):
        """Apply transform ``ti`` to a block; on device out-of-memory the block is halved (states
        in order, so results do not change) and each half is retried. Returns its outputs, or
        with ``defer`` a crop's unfinished outputs on a GPU (:class:`_Waiting`)."""
        t0 = self._now()
        self._may_defer = defer
        try:
            out, hashes = self._apply(block, tr)
        except Exception as exc:  # only out-of-memory is handled; _apply changes no state
            if not is_out_of_memory(exc) or block.num_states < 2:
                raise
            self._free_device_memory()
            self.stats.oom_splits += 1
            half = block.num_states // 2
            keep = self.xp.arange(block.num_states) < half
            return (self._run_transform(_subset(self.xp, block, keep), ti, tr)
                    + self._run_transform(_subset(self.xp, block, ~keep), ti, tr))
        finally:
            self._may_defer = False
        self.stats.add_time("search.apply", self._now() - t0)
        if isinstance(out, _Waiting):
            return _Waiting(functools.partial(self._finish_crop, block, ti, tr, out), out.holds)
        if out is None or out.count == 0:
            return []
        return [_Output(block, ti, out, hashes)]

    def _finish_crop(self, block, ti, tr, waiting: "_Waiting") -> list:
        """The outputs of a crop whose kernels were launched before (see :meth:`_finish_waiting`);
        on device out-of-memory the transform is applied again, now, the block halved as needed."""
        t0 = self._now()
        try:
            out, hashes = waiting()
        except Exception as exc:
            if not is_out_of_memory(exc):
                raise
            self._free_device_memory()
            return self._run_transform(block, ti, tr)
        self.stats.add_time("search.apply", self._now() - t0)
        if out is None or out.count == 0:
            return []
        return [_Output(block, ti, out, hashes)]

    def _finish_waiting(self) -> None:
        """Finish the absorb left half done (:meth:`_finish_absorbing`), then the crop left waiting,
        if any, and queue its outputs. A crop on a GPU must wait for the device to learn how many
        grids and cells it keeps; its launches end with that count's copy to the host, and it is
        finished only once the next transform's first kernels are queued (at the latest, before
        that transform's outputs are queued), so the device works on them meanwhile instead of
        idling through the wait. Outputs are still queued, and their cells cut from the queue's
        buffer, in transform order."""
        self._finish_absorbing()
        finish, self._waiting = self._waiting, None
        if finish is not None:
            for output in finish():
                self._enqueue(output)

    def _finish_absorbing(self) -> None:
        """Run the second half of the absorb left unfinished (see :meth:`_absorb_started`), if any."""
        finish, self._absorbing = self._absorbing, None
        if finish is not None:
            finish()

    def _apply_elementwise_run(self, block, run) -> list:
        """Apply consecutive elementwise transforms together: each is a colour lookup table, so a
        chunk of them is one gather and one hash call per shape group or size bucket."""
        items = block.items
        return self._apply_together(block, run, lambda chunk: self._apply_luts(
            items, self._luts(tuple(self.transforms[ti] for ti in chunk))))

    def _apply_fill_run(self, block, run) -> list:
        """Apply consecutive transforms of one ``fill`` primitive (its colours) together on a GPU:
        per size bucket, the mask it paints (shared by its colours) and one kernel that paints,
        copies and hashes every colour's grids (was a selection over the padded stack and a copy
        per colour and bucket)."""
        return self._apply_together(block, run, functools.partial(
            self._fill_colours, block.items, self.transforms[run[0]].primitive.fill))

    def _apply_together(self, block, run, apply_chunk) -> list:
        """The outputs of a run of transforms (indices) applied together, chunk by chunk:
        ``apply_chunk(chunk)`` gives the K transforms' cells (K, cells) and hashes (K, items).
        Memory bounds a chunk; on out-of-memory its transforms run one by one."""
        xp, items = self.xp, block.items
        per_chunk = max(1, self.absorb_cells // max(1, int(items.cells.shape[0])))
        outputs = []
        for lo in range(0, len(run), per_chunk):
            chunk = run[lo:lo + per_chunk]
            t0 = self._now()
            try:
                cells, hashes = apply_chunk(chunk)
            except Exception as exc:
                if not is_out_of_memory(exc) or len(chunk) < 2:
                    raise
                self._free_device_memory()
                for ti in chunk:
                    outputs += self._run_transform(block, ti, self.transforms[ti])
                continue
            self.stats.grid_transforms_computed += items.count * len(chunk)
            self.stats.add_time("search.apply", self._now() - t0)
            outputs += [_Output(block, ti, Items(xp, cells[k], items.state, items.sample, items.h, items.w,
                                                 items.start), hashes[k])
                        for k, ti in enumerate(chunk)]
        return outputs

    def _apply_map_run(self, block, run, defer: bool = False):
        """The outputs of a run of coordinate-map transforms (indices; see ``coord_map`` in
        :mod:`solvers.registry`) on a GPU, read straight from the block's flat layout. Rigid maps
        (every grid keeps its number of cells) are one kernel that writes and hashes every map's
        grids, with no wait. Other maps count their kept grids and cells on the device first (one
        wait for the whole run, not one per transform), then one kernel takes, writes and hashes
        them (see :meth:`_launched_run`)."""
        xp, items = self.xp, block.items
        trs = tuple(self.transforms[ti] for ti in run)
        if trs not in self._map_tables:
            self._map_tables[trs] = kernels.coord_map_table(xp, [tr.coord_map for tr in trs])
        table = self._map_tables[trs]

        def launch():
            if all(tr.coord_map[0] in dsl_kernels.RIGID_MAPS for tr in trs):
                return self._rigid_maps(block, run, table)
            distinct = self._distinct
            weights = distinct.multiplicity if distinct is not None and distinct.view.items is items else None
            ok, kept, cells, totals = kernels.map_counts(xp, items.h, items.w, table, weights)
            totals = HostCopy(totals)
            self._run_deferred()  # the host's board work, while the device counts
            self._finish_waiting()  # the crop or run before this one, likewise
            return lambda: self._map_run_outputs(block, run, table, (ok, kept, cells), totals.get(),
                                                 weights is not None)

        return self._launched_run(block, run, launch, defer)

    def _apply_crop_run(self, block, run, defer: bool = False):
        """The outputs of a run of one crop primitive's transforms (indices) on a GPU: every
        transform's results on every bucket, then one wait for how many grids and cells each keeps
        and one kernel that copies and hashes them all (see :meth:`_crops_launched`; was a wait and
        a dozen launches per transform), as :meth:`_launched_run` runs it."""
        items = block.items

        def launch():
            finish = self._crops_launched(items, items.padded(self.block_cells),
                                          tuple(self.transforms[ti] for ti in run))
            if finish is None:
                return []

            def outputs() -> list:
                return [_Output(block, ti, out, hv) for ti, (out, hv) in zip(run, finish()) if out is not None]

            outputs.holds = finish.holds
            return outputs

        return self._launched_run(block, run, launch, defer)

    def _launched_run(self, block, run, launch, defer: bool):
        """A run of transforms applied together: ``launch()`` queues its kernels and gives its
        outputs, or (when they wait for counts from the device) a callable that makes them (its
        ``holds``, if any: arrays to keep alive until it runs); with ``defer`` that comes as a
        :class:`_Waiting`, finished while the next transform's kernels run. On device
        out-of-memory, in either part, the run's transforms are applied one by one."""
        self.stats.grid_transforms_computed += block.items.count * len(run)
        finish = self._or_alone(block, run, launch)
        if not callable(finish):
            return finish

        def outputs() -> list:
            return self._or_alone(block, run, finish)

        return _Waiting(outputs, getattr(finish, "holds", ())) if defer else outputs()

    def _or_alone(self, block, run, step):
        """``step()``, timed as applying; on device out-of-memory the outputs of the run's
        transforms applied one by one instead."""
        t0 = self._now()
        try:
            made = step()
        except Exception as exc:
            if not is_out_of_memory(exc):
                raise
            return self._run_alone(block, run)
        self.stats.add_time("search.apply", self._now() - t0)
        return made

    def _rigid_maps(self, block, run, table) -> list:
        xp, items = self.xp, block.items
        K, C = len(run), int(items.cells.shape[0])
        cells = self._output_cells(K * C).reshape(K, C)
        hashes = self.p.hasher.map_copy(items.cells, items.start, items.h, items.w, table, cells)
        outputs = []
        for k, ti in enumerate(run):
            h, w = items.h, items.w
            if self.transforms[ti].coord_map[0] in dsl_kernels.SWAPPING_MAPS:
                h, w = w, h
            outputs.append(_Output(block, ti, Items(xp, cells[k], items.state, items.sample, h, w, items.start),
                                   hashes[k]))
        return outputs

    def _map_run_outputs(self, block, run, table, counts, counted, weighed: bool) -> list:
        """A map run's outputs, once the host has its counts (``counted``: of
        :func:`pipeline.search.kernels.map_counts`' totals)."""
        xp, items, K = self.xp, block.items, len(run)
        kept_of, cells_of = counted[:K].tolist(), counted[K:2 * K].tolist()
        if not sum(kept_of):
            return []
        dst = self._output_cells(sum(cells_of))
        h, w, start, state, sample, hashes = self.p.hasher.map_take_copy(items, table, counts, sum(kept_of), dst)
        outputs = []
        a = c = 0
        for k, ti in enumerate(run):
            m, size = kept_of[k], cells_of[k]
            if m:
                out = Items(xp, dst[c:c + size], state[a:a + m], sample[a:a + m], h[a:a + m], w[a:a + m],
                            start[a:a + m], represents=int(counted[2 * K + k]) if weighed else None)
                outputs.append(_Output(block, ti, out, hashes[a:a + m]))
            a, c = a + m, c + size
        return outputs

    def _run_alone(self, block, run) -> list:
        """A run's outputs with its transforms applied one by one (after device out-of-memory)."""
        self._free_device_memory()
        self.stats.oom_splits += 1
        outputs = []
        for ti in run:
            outputs += self._run_transform(block, ti, self.transforms[ti])
        return outputs

    def _fill_colours(self, items: Items, fill, chunk):
        """Cells (K, C) and hashes (K, n) of the grids of ``items`` painted with the colours of the
        K transforms ``chunk`` where ``fill`` holds (one kernel per size bucket)."""
        xp = self.xp
        lay = items.padded(self.block_cells)
        masks = [fill(xp, lay.stack(bucket)) for bucket in lay.buckets]
        colours = xp.asarray([self.transforms[ti].args[0] for ti in chunk], dtype=xp.uint8)
        cells = self._output_cells(len(chunk) * int(items.cells.shape[0])).reshape(len(chunk), -1)
        hashes = xp.empty((len(chunk), items.count), dtype=xp.uint64)
        for bucket, mask in zip(lay.buckets, masks):
            h, w = lay.sides(bucket)
            self.p.hasher.fill_copy(lay.stack(bucket), mask, lay.starts(bucket), h, w, bucket[2], items.count, colours,
                                    cells, hashes)
        return cells, hashes

    def _luts(self, trs: tuple):
        """The (len(trs), 10) uint8 colour tables of elementwise transforms (cached)."""
        if trs not in self._lut_cache:
            xp = self.xp
            probe = xp.arange(10, dtype=xp.uint8).reshape(1, 1, 10)
            self._lut_cache[trs] = xp.stack([xp.asarray(tr(xp, probe), dtype=xp.uint8).reshape(10) for tr in trs])
        return self._lut_cache[trs]

    def _apply_luts(self, items: Items, luts):
        """Cells (K, C) and hashes (K, I) of the items mapped through each of K colour tables."""
        xp = self.xp
        K, C = int(luts.shape[0]), int(items.cells.shape[0])
        if dsl_kernels.enabled(xp):  # map, copy and hash in one kernel for all K tables
            cells = self._output_cells(K * C).reshape(K, C)
            return cells, self.p.hasher.lut_copy(items.cells, items.start, items.h, items.w, luts, cells)
        cells = xp.take(luts, items.cells, axis=1, out=self._output_cells(K * C).reshape(K, C))
        hashes = xp.empty((K, items.count), dtype=xp.uint64)
        if self.bucket_all:
            lay = items.padded(self.block_cells)
            keeps_zero = bool((luts[:, 0] == 0).all())
            for bucket in lay.buckets:
                H, W, idx, _ = bucket
                stack = luts[:, lay.stack(bucket)]  # (K, m, H, W)
                if not keeps_zero:
                    stack = xp.where(lay.real_mask(bucket)[None], stack, xp.uint8(0))
                h, w = (xp.tile(v, K) for v in lay.sides(bucket))
                hashes[:, idx] = self.p.hasher.padded(stack.reshape(-1, H, W), h, w).reshape(K, -1)
        else:
            for group in items.groups:
                hh, ww, lo, hi = group
                stack = luts[:, items.view(group)].reshape(-1, hh, ww)
                hashes[:, lo:hi] = self.p.hasher.grids(stack).reshape(K, hi - lo)
        return cells, hashes

    def _output_cells(self, n: int):
        """An uninitialised uint8 array for ``n`` cells of a transform's output: cut from the
        pending queue's buffer while a block is expanded (see :meth:`_Pending.cells`)."""
        if self._pending is None:
            return self.xp.empty(n, dtype=self.xp.uint8)
        self._finish_waiting()  # its cells come first in the buffer
        return self._pending.cells(n)

    def _free_device_memory(self) -> None:
        stack_cache.forget()
        if self.xp is not np:
            self.xp.get_default_memory_pool().free_all_blocks()

    # ------------------------------------------------------------------ steps
    def _identity_parts(self, block: Block):
        items = block.items
        if dsl_kernels.enabled(self.xp):  # every grid of the flat layout in one kernel (was one call per shape)
            return items, self.p.hasher.copy_padded(items.cells, items.start, 0, None, None, items.h, items.w)
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
        self.stats.grid_transforms_computed += items.count
        if tr.primitive.elementwise:
            cells, hashes = self._apply_luts(items, self._luts((tr,)))
            return Items(xp, cells[0], items.state, items.sample, items.h, items.w, items.start), hashes[0]
        if tr.primitive.pad or (tr.primitive.layout == "padded" and self.bucket_all):
            return self._apply_padded(items, tr)
        # One call per exact shape group: the CPU's path for primitives that take real sides (it
        # beats padded gathers there), and any primitive that has only an exact-shape form.
        chunks, srcs, shapes, hashes = [], [], [], []
        bound = tr.max_sides
        for group in items.groups:
            lo, hi = group[2], group[3]
            if bound is not None and (group[0] > bound[0] or group[1] > bound[1]):
                continue  # too large for the transform to give a result
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

    def _apply_padded(self, items: Items, tr):
        """Apply a padding-aware transform once per size bucket (see PaddedLayout)."""
        xp, hasher = self.xp, self.p.hasher
        lay = items.padded(self.block_cells)
        if dsl_kernels.enabled(xp):
            return self._apply_padded_kernels(items, lay, tr)
        results, hashes = [], []
        for bucket in lay.buckets:
            H, W, idx, _ = bucket
            h, w = lay.sides(bucket)
            res = tr.padded(xp, lay.stack(bucket), h, w)
            if tr.primitive.pad == "inplace":
                res = xp.where(lay.real_mask(bucket), res, xp.uint8(0))
                hashes.append(hasher.padded(res, h, w))
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
        out = Items(xp, None, items.state[src], items.sample[src], h, w, dsl_kernels.cumsum(xp, sizes, exclusive=True))
        base, width = xp.concatenate(bases), xp.concatenate(widths)
        buf = xp.concatenate([r.arr.reshape(-1) for r in results])
        total = int(sizes.sum())
        if dsl_kernels.enabled(xp):
            out.cells = xp.empty(total, dtype=xp.uint8)
            kernels.copy_rows(xp, buf, out.cells, base, width, out.start, w, h, w)
        else:
            item, pos = out.cell_index_for(total)
            out.cells = buf[base[item] + (pos // w[item]) * width[item] + pos % w[item]]
        return out, xp.concatenate(hashes)

    def _apply_padded_kernels(self, items: Items, lay, tr):
        """:meth:`_apply_padded` on a GPU: the results are copied out of their padded stacks and
        hashed in one kernel (no masking of the padding, no concatenation of the buckets'
        results), a crop's kept grids are found with a kernel per bucket and one after, and the
        host waits for the device once per crop transform (for how many grids and cells it keeps),
        not once per bucket."""
        xp, hasher = self.xp, self.p.hasher
        if tr.primitive.pad == "inplace":
            cells = None
            hashes = []
            for bucket in lay.buckets:
                H, W, idx, _ = bucket
                h, w = lay.sides(bucket)
                res = tr.padded(xp, lay.stack(bucket), h, w)
                if cells is None:  # cut after the first kernels are launched: a waiting crop finishes meanwhile
                    cells = self._output_cells(int(items.cells.shape[0]))
                hashes.append(hasher.copy_padded(res, lay.grid_bases(bucket), W, cells, lay.starts(bucket), h, w))
            if cells is None:
                cells = self._output_cells(int(items.cells.shape[0]))
            if len(hashes) == 1 and lay.ordered():  # one bucket in item order: nothing to scatter
                hv = hashes[0]
            else:
                hv = xp.empty(items.count, dtype=xp.uint64)
                if hashes:
                    hv[lay.order()] = _join(xp, hashes)
            return Items(xp, cells, items.state, items.sample, items.h, items.w, items.start), hv
        finish = self._crops_launched(items, lay, (tr,))
        if finish is None:
            return None, None
        if self._may_defer:
            return _Waiting(lambda: finish()[0], holds=finish.holds), None
        return finish()[0]

    def _crops_launched(self, items: Items, lay, trs: tuple):
        """Launch the kernels of K crop transforms ``trs`` (one, or a run of one primitive's; their
        results lie in padded stacks) on every bucket, and return the rest as a callable (its
        ``holds``: arrays to keep alive until it runs) that waits once for how many grids and cells
        each keeps and gives each transform's ``(Items, hashes)`` (``(None, None)``: none kept); or
        None when no bucket can give any transform a result. Buckets whose grids are all too large
        for a transform to give a result are skipped."""
        xp, hasher = self.xp, self.p.hasher
        fits = [[lay.may_fit(b, tr.max_sides) for b in range(len(lay.buckets))] for tr in trs]
        if not any(any(fit) for fit in fits):
            return None
        results = [[tr.padded(xp, lay.stack(bucket), *lay.sides(bucket)) if ok else self._no_results()
                    for bucket, ok in zip(lay.buckets, fit)] for tr, fit in zip(trs, fits)]
        self._run_deferred()  # the host's board work, while the device runs the kernels just launched
        self._finish_waiting()  # the crop before this one, likewise
        # Every grid's flag, sides and source, transform by transform in bucket order (one kernel
        # for every transform and bucket), then the kept ones' with their states and samples (one
        # kernel, after the one wait for how many each transform keeps), then their cells copied
        # and hashed from wherever their bucket's results lie (one kernel).
        K, n = len(trs), lay.first_of_bucket[-1]
        ok, *sides = (xp.empty(K * n, dtype=bool), *(xp.empty(K * n, dtype=t) for t in (
            xp.int64, xp.int64, xp.int64, xp.uint64, xp.int64)))
        oh, ow, size, addr, opitch = sides
        arrays = []  # the results' cells, contiguous, kept until the copy below is queued
        entries = []
        for k, per_bucket in enumerate(results):
            for res, first, last in zip(per_bucket, lay.first_of_bucket, lay.first_of_bucket[1:]):
                if res.arr is not None:
                    res = Padded(xp.ascontiguousarray(res.arr), res.h, res.w, res.valid)
                    arrays.append(res.arr)
                entries.append((k * n + first, last - first, res))
        arrays += kernels.crop_sides(xp, entries, (ok, *sides))
        distinct = self._distinct
        weights = distinct.multiplicity if distinct is not None and distinct.view.items is items else None
        weighed = None  # how many of the block's grids the kept distinct grids stand for
        if weights is not None:
            weighed = xp.where(ok.reshape(K, n), weights[lay.order()][None, :], 0).reshape(-1)
        *counts, totals = kernels.crop_counts(xp, ok, size, n, weighed)
        totals = HostCopy(totals)

        def finish() -> list:
            counted = totals.get()
            kept_of, cells_of = counted[:K].tolist(), counted[K:2 * K].tolist()
            if not sum(kept_of):
                return [(None, None)] * K
            h, w, start, at, src, pitch, state, sample = kernels.crop_take(
                xp, ok, oh, ow, addr, opitch, lay.order(), items.state, items.sample, counts, sum(kept_of))
            cells = self._output_cells(sum(cells_of))
            hashes = hasher.copy_from(src, pitch, cells, at, h, w)
            outputs, a, c = [], 0, 0
            for k in range(K):
                m, size_k = kept_of[k], cells_of[k]
                if m == 0:
                    outputs.append((None, None))
                    continue
                represents = None if weights is None else int(counted[2 * K + k])
                outputs.append((Items(xp, cells[c:c + size_k], state[a:a + m], sample[a:a + m], h[a:a + m],
                                      w[a:a + m], start[a:a + m], represents=represents), hashes[a:a + m]))
                a, c = a + m, c + size_k
            return outputs

        finish.holds = arrays
        return finish

    def _no_results(self) -> Padded:
        """A bucket's results when none of its grids can have one: sides and flags that broadcast
        to any number of grids (``arr`` is never read: no grid is kept)."""
        if self._none is None:
            xp = self.xp
            one = xp.ones(1, dtype=xp.int64)
            self._none = Padded(None, one, one, xp.zeros(1, dtype=bool))
        return self._none

    def _drop_solved(self, block: Block) -> list:
        """``block`` without the states of solved tasks: as one block, none, or (when copying
        it runs out of device memory) as blocks of whole tasks."""
        keep = ~self.xp.asarray(self.solved)[block.task]
        if bool(keep.all()):
            return [block]
        if not bool(keep.any()):
            return []
        return self._keep_states(block, keep)

    def _keep_states(self, block: Block, keep) -> list:
        """The states of ``block`` where ``keep`` holds, as one block; on device out-of-memory
        as the blocks of each half of its tasks (every block keeps whole tasks, so the search
        meets each task's states in the same order: the same results)."""
        xp = self.xp
        try:
            return [_subset(xp, block, keep)]
        except Exception as exc:
            task_h = block.host_ids()[0]
            live = np.unique(task_h[to_host(keep)])
            if not is_out_of_memory(exc) or len(live) < 2:
                raise
        self._free_device_memory()
        self.stats.oom_splits += 1
        first = xp.asarray(np.isin(task_h, live[:len(live) // 2]))
        return self._keep_states(block, keep & first) + self._keep_states(block, keep & ~first)

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
        xp, p = self.xp, self.p
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
        counts finds the device busy with them instead of idle (before, the dedup's and the
        scoring's waits each emptied the device's queue). On a level that keeps states the second
        half also adds the next blocks to the level's block builder (halves run in order, so the
        builder meets them in the same order). Results are those of :meth:`_absorb_merged` (same
        values, same order)."""
        xp, p = self.xp, self.p
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

    def _score_new(self, block: Block, out: Items, hv, test_key, new_dev, level) -> "_Scores":
        """Scores of the new states ``new_dev`` of a merged block (other states' values are
        meaningless). Each state's score depends on its own grids only: on out-of-memory the new
        states are scored in halves, which gives the same values."""
        try:
            return self._score(block, out, hv, test_key, new_dev, level)
        except Exception as exc:
            if not is_out_of_memory(exc) or int(new_dev.shape[0]) < 2:
                raise
        self._free_device_memory()
        self.stats.oom_splits += 1
        xp, half = self.xp, int(new_dev.shape[0]) // 2
        first = self._score_new(block, out, hv, test_key, new_dev[:half], level)
        second = self._score_new(block, out, hv, test_key, new_dev[half:], level)
        in_first = xp.zeros(block.num_states, dtype=bool)
        in_first[new_dev[:half]] = True
        return _Scores(*(_pick_rows(xp, in_first, a, b) for a, b in zip(first, second)))

    def _score(self, block: Block, out: Items, hv, test_key, new_dev, level) -> "_Scores":
        """:meth:`_score_new` in one pass: exact train matches by hash, cell accuracy where the size
        is right, colour tables learnt, the rank on the boards, the key of the test outputs."""
        xp, p = self.xp, self.p
        S, K = block.num_states, p.max_samples
        new_mask = xp.zeros(S, dtype=bool)
        new_mask[new_dev] = True
        if dsl_kernels.enabled(xp):  # the same values from four kernels (about a hundred array calls)
            n_exact, n_sized, fit, n_fit = kernels.score_fit(xp, out, hv, block.task, new_mask, p)
            slot, num_slots, n_fit = kernels.colour_slots(xp, new_mask, n_exact, n_sized, block.task, p.n_train, n_fit)
            return self._score_rest(block, out, test_key, new_mask, level, n_exact, fit, slot, num_slots, n_fit)
        n_train = p.n_train[block.task]
        st, sm = out.state, out.sample
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
        score = (n_exact * ACC_SCALE + acc.sum(axis=1)) / (n_train * ACC_SCALE)
        mapping, cm_ok = _colour_tables(xp, S, cm_idx, hist)
        rank = xp.where(solved, SOLVED_RANK - level,
                        xp.where(cm_ok, SOLVED_RANK - level - 1, score))
        return _Scores(rank, solved, n_exact, score, mapping, cm_ok, test_key)

    def _score_rest(self, block: Block, out: Items, test_key, new_mask, level, n_exact, fit, slot, num_slots: int,
                    n_fit: int) -> "_Scores":
        """:meth:`_score` on a GPU from its first kernels' results and counts (on the host)."""
        xp, p = self.xp, self.p
        acc, hist = kernels.score_cells(xp, out, block.task, p, slot, num_slots, ACC_SCALE, fit, n_fit)
        scores = kernels.score_states(xp, block.task, new_mask, p.n_train, n_exact, acc, slot, hist, num_slots,
                                      ACC_SCALE, SOLVED_RANK - level)
        return _Scores(*scores, test_key)

    def _cell_matches(self, out: Items, fit, target_start, slot, num_slots: int):
        """Compare the grids ``fit`` of ``out`` cell by cell with their train outputs (same sizes;
        output cells begin at ``target_start`` in the problem's target buffer).

        Returns the matching cells per grid and, for grids with a ``slot`` >= 0, the histogram
        ``(num_slots, 10, 10)`` of (grid colour, output colour) pairs summed per slot.
        """
        xp, p = self.xp, self.p
        grids = out.take(fit)
        item, pos = grids.cell_index()
        target = p.target_cells[target_start[item] + pos]
        correct = xp.bincount(item[grids.cells == target], minlength=grids.count)
        cell_slot = slot[item]
        use = xp.nonzero(cell_slot >= 0)[0]
        code = cell_slot[use] * 100 + grids.cells[use].astype(xp.int64) * 10 + target[use]
        hist = xp.bincount(code, minlength=num_slots * 100).reshape(num_slots, 10, 10)
        return correct, hist

    def _run_deferred(self) -> None:
        """Finish the leaderboard update that :meth:`_update_boards` put off, if any, and take the
        new states' positions that have reached the host out of pinned memory."""
        for copy in self._unread:
            copy.get()
        self._unread.clear()
        finish, self._deferred, self._deferred_solved = self._deferred, None, None
        if finish is None:
            return
        try:
            finish()  # its time counts in the stage that runs it (apply, or the next merge)
        except Exception as exc:
            # Raised inside a transform, an out-of-memory error would be taken for the
            # transform's and retried on halves, with the boards half updated.
            if is_out_of_memory(exc):
                raise RuntimeError("out of device memory while updating the leaderboards") from exc
            raise

    def _mark_deferred_solved(self) -> None:
        """Set the solved flags that the put-off board update (if any) will set, leaving the rest of
        it put off. A task is flagged when a candidate of it that is solved (or colour-mapped)
        enters its board; those rank above every other candidate (``SOLVED_RANK``), so one that
        does not enter loses only to such a candidate, on the board already or entering with it:
        the update flags exactly the tasks of its solved picks."""
        solved, self._deferred_solved = self._deferred_solved, None
        if solved is not None:
            self.solved[solved()] = True

    def _update_boards(self, block, parts, new: "_NewStates", scored: "_Scores") -> None:
        """Offer the best new states of each task and transform to the task's leaderboard (see
        :class:`Leaderboards`). Only the states that beat their task's board cross to the host.
        The host's part (sorting the offers, making the candidates, queueing their test grids) is
        left to :meth:`_run_deferred`, which runs before anything reads the boards, thresholds or
        solved flags: it runs while the device works on the next transform. On a level that keeps
        states, the absorb's next blocks then keep the states of tasks it solved (the flags are not
        updated yet): the next level's start drops them, as it drops those of tasks solved later in
        the level."""
        xp = self.xp
        # A state that does not beat its board's last entry cannot enter the board; only those
        # that do cross to the host, with what the boards need of them, in one copy.
        if dsl_kernels.enabled(xp):
            # Found and packed on the device, copied back while it goes on: nothing here waits.
            threshold = self._device_thresholds()
            keep, holds = self._offers_that_may_enter(block, new, scored, threshold)
            picks = functools.partial(kernels.board_picks, xp, new.dev, block.task, threshold,
                                      scored.rank, scored.solved, scored.cm_ok, scored.n_exact, scored.score,
                                      scored.test_key, scored.mapping, keep=keep)
            n_new = int(new.dev.shape[0])
            room = max(self._pick_room, n_new) if n_new <= PICK_ROOM_ALL else self._pick_room
            rows = _PickedRows(self, HostCopy(picks(room)), picks, holds)
            offer = functools.partial(self._offer_picks, block, parts, new, rows, scored.mapping is not None)

            def solved_tasks():
                picked = rows.get()
                return new.merged.tasks(picked["pos"][picked["solved"]])
        else:
            rank_new = scored.rank[new.dev]
            pick = xp.nonzero(rank_new > self._device_thresholds()[block.task[new.dev]])[0]
            if pick.shape[0] == 0:
                return
            at = new.dev[pick]
            wanted = [pick, rank_new[pick], (scored.solved | scored.cm_ok)[at], scored.n_exact[at], scored.score[at],
                      scored.cm_ok[at], scored.test_key[at]]
            if scored.mapping is not None:
                wanted.append(scored.mapping[at].astype(xp.uint8))
            pick, rank_h, solved_h, exact_h, score_h, cm_h, tkey_h, *maps_h = to_host_all(*wanted)
            maps_h = maps_h[0] if maps_h else None
            offer = functools.partial(self._offer, block, parts, new, pick, rank_h, solved_h, exact_h, score_h, cm_h,
                                      tkey_h, maps_h)

            def solved_tasks():
                return new.merged.tasks(new.idx[pick[solved_h]])
        # Absorbs run in order, each after the previous one's put-off update: none is pending.
        assert self._deferred is None, "a put-off board update would be lost"
        self._deferred, self._deferred_solved = offer, solved_tasks

    def _offers_that_may_enter(self, block, new: "_NewStates", scored: "_Scores", threshold):
        """``(keep, holds)``: a bool per new state on the device, whether it is an offer that can
        change the boards (``leaderboard.offers_that_may_enter``; offers are the new states that beat
        their task's ``threshold``), and host memory to keep until the device has read it; ``keep``
        None where every offer crosses (the task inputs, or a large absorb)."""
        merged, xp = new.merged, self.xp
        pos = new.dev
        if (new.first_gid is None or merged.transforms is None
                or int(pos.shape[0]) > SELECT_OFFERS_MAX_NEW):
            return None, None
        k = len(merged.transforms)
        table, holds = to_device_async(xp, np.concatenate([merged.offsets, merged.transforms]).astype(np.int64))
        # A merged state's transform: that of the output whose run of positions holds it.
        trs = table[k + 1:][xp.searchsorted(table[:k + 1], pos, side="right") - 1]
        tasks, ranks = block.task[pos], scored.rank[pos]
        groups = xp.where(ranks > threshold[tasks], tasks * (len(self.transforms) + 1) + trs, -1)
        keep = offers_that_may_enter(xp, tasks, groups, ranks, scored.test_key[pos], scored.cm_ok[pos],
                                     len(self.p.tasks), LEADERBOARD_SIZE)
        return keep, holds

    def _offer_picks(self, block, parts, new: "_NewStates", picked: "_PickedRows", mapped: bool) -> None:
        """:meth:`_offer` of the records that ``kernels.board_picks`` packed (``picked``)."""
        rows = picked.get()
        if len(rows["pick"]) == 0:
            return
        self._offer(block, parts, new, *(rows[f] for f in ("pick", "rank", "solved", "n_exact", "score", "cm_ok",
                                                           "test_key")),
                    rows["mapping"] if mapped else None, idx=rows["pos"])

    def _offer(self, block, parts, new: "_NewStates", pick, rank_h, solved_h, exact_h, score_h, cm_h, tkey_h,
               maps_h, idx=None) -> None:
        """The host's part of :meth:`_update_boards`: the picked new states' attributes (host
        arrays) sorted, the best few of each task and transform offered to the boards, and the
        candidates that enter made, their test grids queued. ``idx``: the picks' positions in the
        merged block, when they came with them (else read from the new states' positions)."""
        idx = new.idx[pick] if idx is None else idx
        gids, tasks = new.gids(pick, idx), new.merged.tasks(idx)
        trs = new.merged.transform(idx)
        trs = np.zeros(len(idx), dtype=np.int64) if trs is None else trs
        # Only the best few of each task and transform are offered: all of them where no task and
        # transform has more (the first level's: one state each; the boards take offers in any
        # order, so the sort is saved).
        top = best_of_groups(tasks, trs, rank_h, gids, LEADERBOARD_SIZE)
        if top is not None:
            idx, gids, tasks, rank_h = idx[top], gids[top], tasks[top], rank_h[top]
            solved_h, exact_h, score_h, cm_h, tkey_h = (solved_h[top], exact_h[top], score_h[top], cm_h[top],
                                                        tkey_h[top])
            maps_h = maps_h[top] if maps_h is not None else None
        # A learnt colour table changes the test outputs: it joins their key. (Python's hash of a
        # tuple; only those rows are worked in Python, the others keep their key as it is.)
        keys_u64 = tkey_h.astype(np.uint64, copy=True)
        mapped_key = {}
        for j in np.nonzero(cm_h)[0].tolist():
            mapped_key[j] = hash((int(tkey_h[j]), tuple(maps_h[j].tolist())))
            keys_u64[j] = mapped_key[j] & 0xFFFF_FFFF_FFFF_FFFF

        def make(rows: np.ndarray) -> list:
            # Python values taken out of the arrays at once and the candidates made by map: indexing
            # NumPy scalars field by field cost about 35 us a candidate, and thousands enter at once
            # on the first levels.
            g, r, sv, ex, sc, keys = (a[rows].tolist() for a in (gids, rank_h, solved_h, exact_h, score_h, tkey_h))
            self.solved[tasks[rows][solved_h[rows]]] = True
            luts, mappings = [None] * len(rows), [None] * len(rows)
            for k in np.nonzero(cm_h[rows])[0].tolist():  # the few with a learnt colour table
                j = int(rows[k])
                luts[k] = maps_h[j]
                mappings[k] = {c: v for c, v in enumerate(maps_h[j].tolist()) if v != c}
                keys[k] = mapped_key[j]
            made = list(map(Candidate, g, r, sv, ex, sc, mappings, [[] for _ in rows], keys))
            self.test_grids.queue(block, parts, idx[rows], made, luts)  # test outputs filled in later
            return made

        self.leaderboards.offer(tasks, gids, rank_h, keys_u64, make)

    def _board_candidates(self) -> set:
        """The ids of the candidates on the boards now (whose test outputs are wanted)."""
        return {id(cand) for board in self.boards for cand in board}

    def _device_thresholds(self):
        """The boards' thresholds on the array device (copied again only after they change: a copy
        to the device waits for its queue of work)."""
        if self._threshold_version != self.leaderboards.threshold_changes:
            self._threshold_dev = self.xp.asarray(self.threshold)
            self._threshold_version = self.leaderboards.threshold_changes
        return self._threshold_dev

    def _next_blocks(self, block: Block, out: Items, new: "_NewStates", kept_per_task) -> list:
        """The new states within the per-task budget and their grids, as an ungrouped block (or
        several, in order, if taking their grids ran out of device memory)."""
        if dsl_kernels.enabled(self.xp) and new.first_gid is not None:
            return self._next_blocks_on_device(block, out, new, kept_per_task)
        xp, tasks, solved = np, new.tasks(slice(None)), self.solved
        keep = within_budget(tasks, kept_per_task, self.per_task_budget, xp)
        if not self.expand_solved:
            keep &= ~solved[tasks]
        pos = xp.nonzero(keep)[0]
        if not len(pos):
            return []
        kept_per_task += xp.bincount(tasks[pos], minlength=len(kept_per_task))
        return self._kept_blocks(block, out, new, pos, tasks)

    def _next_blocks_on_device(self, block: Block, out: Items, new: "_NewStates", kept_per_task) -> list:
        """:meth:`_next_blocks` where the kernels run: the host never reads the new states'
        positions (millions on a level that keeps them), and it waits once, for how many states,
        grids and cells are kept (was four waits: two ``nonzero``, a sum of sizes and CuPy's
        ``bincount``, each leaving the device idle while the host went on)."""
        xp = self.xp
        tasks = block.task[new.dev]
        keep = within_budget(tasks, kept_per_task, self.per_task_budget, xp)
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


@dataclass
class _Output:
    """The grids one transform (index ``transform``; None: the identity) made from ``block``."""

    block: Block
    transform: int | None
    items: Items
    hashes: object


class _DistinctGrids:
    """A block's distinct grids as a block of their own (``view``: grid j is its state j and has id
    j) and, per grid of the block, the view's grid it repeats (``of_item``); :meth:`mapped` turns
    outputs made from the view into the block's."""

    def __init__(self, xp, block: Block, view: Block, of_item, multiplicity=None):
        self.xp = xp
        self.block = block
        self.view = view
        self.of_item = of_item
        self.multiplicity = multiplicity  # per distinct grid, how many of the block's it stands for

    def mapped(self, outputs):
        """The outputs of a run of transforms applied to the view (a list of :class:`_Output`, or a
        :class:`_Waiting` for them) as outputs of the block, in the same order."""
        if isinstance(outputs, _Waiting):
            return _Waiting(functools.partial(self._mapped_list, outputs.finish), outputs.holds)
        return self._mapped_list(lambda: outputs)

    def _mapped_list(self, outputs) -> list:
        # A transform's outputs come in several parts where the view was split (out of memory):
        # each part holds some distinct grids, so the parts are mapped back together.
        parts: dict = {}
        for o in outputs():
            parts.setdefault(o.transform, []).append(o)
        return [o for o in (self._mapped(group) for group in parts.values()) if o is not None]

    def _mapped(self, parts: list) -> "_Output | None":
        xp, items, view = self.xp, self.block.items, self.view.items
        o = parts[0]
        out = o.items
        if len(parts) == 1 and out.state is view.state:  # every distinct grid's output, in their order
            at = self.of_item

            def side(v):  # the block's own sides where the output has the view's (maybe swapped)
                return items.h if v is view.h else items.w if v is view.w else v[at]

            mapped = Items(xp, out.cells, items.state, items.sample, side(out.h), side(out.w), out.start[at])
            return _Output(self.block, o.transform, mapped, o.hashes[at])
        # Some grids have no output (crops), or the view was split: find each grid's output by its
        # distinct grid (the view's ids number them).
        parts = [p for p in parts if p.items.count]
        if not parts:
            return None
        o = parts[0]
        out = o.items
        if len(parts) > 1:
            out = concat_items(xp, [p.items for p in parts])
            out.state = xp.concatenate([p.block.gid[p.items.state] for p in parts])
            hashes = xp.concatenate([p.hashes for p in parts])
        else:
            hashes = o.hashes
            if o.block is not self.view:
                out = Items(xp, out.cells, o.block.gid[out.state], out.sample, out.h, out.w, out.start)
        if out.represents is not None and dsl_kernels.enabled(xp):  # counted with the crop: no wait here
            *parts, hv = kernels.mapped_back(xp, self.of_item, self.view.num_states, out.state, items.state,
                                             items.sample, out.h, out.w, out.start, hashes, out.represents)
            return _Output(self.block, o.transform, Items(xp, out.cells, *parts), hv)
        place = xp.full(self.view.num_states, -1, dtype=xp.int64)
        place[out.state] = xp.arange(out.count, dtype=xp.int64)
        at = place[self.of_item]
        sel = xp.nonzero(at >= 0)[0]
        at = at[sel]
        mapped = Items(xp, out.cells, items.state[sel], items.sample[sel], out.h[at], out.w[at], out.start[at])
        return _Output(self.block, o.transform, mapped, hashes[at])


class _PickedRows:
    """The records that ``kernels.board_picks`` packed for an absorb's board update, read once:
    ``copy``, their buffer on its way to the host; ``picks(room)`` packs them again with room for
    more, when they did not all fit (the search's room then grows for the next ones)."""

    def __init__(self, search: "Search", copy: HostCopy, picks, holds=None):
        self.search, self.copy, self.picks, self.rows = search, copy, picks, None
        self.holds = holds  # host memory the picks' kernels read, kept until the records are read

    def get(self) -> dict:
        """The records, all of them: an array per field of ``kernels.BOARD_ROW``, by pick."""
        if self.rows is None:
            count, rows = kernels.read_board_picks(self.copy.get())
            if count > len(rows["pick"]):
                count, rows = kernels.read_board_picks(to_host(self.picks(count)))
            # Room for twice the last count: a copy barely larger than needed, a second pass rare.
            self.search._pick_room = max(PICK_ROOM, 1 << (2 * count).bit_length())
            self.rows = rows
            self.copy = self.picks = self.holds = None
        return self.rows


class _Waiting:
    """A transform's application whose kernels are launched but whose outputs are not made yet:
    calling it makes them (it may wait for the device). ``holds``: device arrays that the kernels
    still to come read by address, kept alive until then."""

    def __init__(self, finish, holds=()):
        self.finish = finish
        self.holds = holds

    def __call__(self):
        return self.finish()


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


def within_budget(tasks, kept_per_task, budget: int, xp=np):
    """Which of the new states of ``tasks`` (in order) fit their task's budget: the first
    ``budget - kept_per_task[t]`` of each task ``t``. Arrays of ``xp``; where its kernels run,
    the answer is worked out on the device without a wait."""
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


def _task_ranks(xp, tasks, n_tasks: int):
    """Each entry's rank among the earlier entries of its task (``tasks``: ints below ``n_tasks``):
    its place in the stable sort by task less where its task's run begins there."""
    n = int(tasks.shape[0])
    if n_tasks <= kernels.GROUP_KEYS:
        order, begins = stable_group(xp, tasks)
    else:  # more tasks than the counting sort's keys
        order = np.argsort(tasks, kind="stable") if xp is np else xp.lexsort(xp.stack([xp.arange(n), tasks]))
        counts = xp.bincount(tasks, minlength=n_tasks)
        begins = xp.cumsum(counts) - counts
    rank = xp.empty(n, dtype=xp.int64)
    rank[order] = xp.arange(n, dtype=xp.int64) - begins[tasks[order]]
    return rank


def best_of_groups(tasks: np.ndarray, trs: np.ndarray, rank: np.ndarray, gids: np.ndarray, size: int):
    """The offers that the boards are offered (host arrays, one entry per offer): of each task and
    transform, the ``size`` best by ``rank``, ties to the smaller id, as positions in
    :func:`offer_order`; None where no task and transform has more than ``size`` (all are)."""
    group = tasks.astype(np.int64) * (int(trs.max()) + 1 if len(trs) else 1) + trs
    if not len(group) or int(np.bincount(group).max()) <= size:
        return None
    order = offer_order(tasks, trs, rank, gids)
    run_task, run_tr = tasks[order], trs[order]
    first = np.r_[0, np.nonzero(np.diff(run_task) | np.diff(run_tr))[0] + 1]
    pos = np.arange(len(order)) - np.repeat(first, np.diff(np.r_[first, len(order)]))
    return order[pos < size]


def offer_order(tasks: np.ndarray, trs: np.ndarray, rank: np.ndarray, gids: np.ndarray) -> np.ndarray:
    """``np.lexsort((gids, -rank, trs, tasks))``: by task, then transform, then rank (best first),
    then id. Where the ids already ascend (new states' ids follow their positions), two stable
    sorts give that order about twice as fast (tens of milliseconds where a GPU's absorb offers
    hundreds of thousands of states to boards with room)."""
    if len(gids) > 1 and bool((gids[1:] < gids[:-1]).any()):
        return np.lexsort((gids, -rank, trs, tasks))
    by_rank = np.argsort(-rank, kind="stable")
    group = tasks.astype(np.int64) * (int(trs.max()) + 1 if len(trs) else 1) + trs
    if len(group) and int(group.max()) < 1 << 16:  # NumPy's stable sort of 16-bit values is a radix sort
        group = group.astype(np.uint16)
    return by_rank[np.argsort(group[by_rank], kind="stable")]


def _transform_runs(transforms, fill_runs: bool = False, map_runs: bool = False, crop_runs: bool = False) -> list:
    """Transform indices in order, cut into runs: consecutive elementwise transforms together,
    with ``fill_runs`` consecutive transforms of one ``fill`` primitive together, with ``map_runs``
    consecutive coordinate-map transforms together (rigid maps apart from the others), with
    ``crop_runs`` consecutive transforms of one crop primitive (results in padded stacks) together,
    every other transform alone."""

    def kind(tr):
        p = tr.primitive
        if p.elementwise:
            return "elementwise"
        if map_runs and tr.coord_map is not None:
            return "rigid maps" if tr.coord_map[0] in dsl_kernels.RIGID_MAPS else "maps"
        if fill_runs and p.fill is not None:
            return "fill", p
        if crop_runs and p.pad != "inplace" and (p.pad == "crop" or p.layout == "padded"):
            return "crops", p
        return None

    runs: list = []
    last = None
    for ti, tr in enumerate(transforms):
        this = kind(tr)
        if runs and this is not None and this == last:
            runs[-1].append(ti)
        else:
            runs.append([ti])
        last = this
    return runs


class _Scores(NamedTuple):
    """Per state of a block (S,): what scoring its new states gives (see ``Search._score``)."""

    rank: Any
    solved: Any
    n_exact: Any
    score: Any
    mapping: Any  # (S, 10) colour tables, or None when no state learnt one
    cm_ok: Any
    test_key: Any


def _pick_rows(xp, first, a, b):
    """Rows of ``a`` where ``first`` holds, else of ``b`` (None: no rows, as zeros)."""
    if a is None and b is None:
        return None
    if a is None or b is None:
        a, b = (xp.zeros_like(b) if a is None else a), (xp.zeros_like(a) if b is None else b)
    return xp.where(first.reshape(first.shape + (1,) * (a.ndim - 1)), a, b)


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
