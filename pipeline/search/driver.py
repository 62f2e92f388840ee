"""Breadth-first program search over all tasks of a run at once (the mega-batch).

Each level applies every transform to every state of the frontier, for all tasks together: one
array call per transform and shape group of a block, never one per grid or per task. New states
are hashed, deduplicated per task, scored against the train outputs (exact fit, right size, cell
accuracy) and checked for a learned final colour map. A program is kept as parent pointers.
"""
from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field

import numpy as np

from pipeline.search.absorb import _Output, _Pending, Absorbing
from pipeline.search.apply import _transform_runs, _Waiting, TransformRuns
from pipeline.search.apply_padded import PaddedBuckets
from pipeline.search.blocks import _BlockBuilder, _subset, NextBlocks
from pipeline.search.boards import BoardUpdates, PICK_ROOM
from pipeline.search.candidate_outputs import CandidateOutputs
from pipeline.search.device import is_out_of_memory, to_host
from pipeline.search.distinct import DistinctGridsStep
from pipeline.search.keyset import key_set
from pipeline.search.leaderboard import Candidate, Leaderboards
from pipeline.search.mechanisms import FREE_STEPS
from pipeline.search.pieces import PieceBoards
from pipeline.search.problem import Block, Problem
from pipeline.search.scoring import Scoring
from pipeline.search.state_table import StateTable
from solvers import kernels as dsl_kernels
from solvers import stack_cache
from solvers.primitives import transforms


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


@dataclass
class Snapshot:
    """Each task's board (its :class:`Candidate` s, best first) and the pieces at one moment."""

    boards: list
    pieces: PieceBoards | None


class Search(TransformRuns, PaddedBuckets, DistinctGridsStep, Absorbing, Scoring, BoardUpdates, NextBlocks):
    """One breadth-first search over the tasks of a :class:`Problem`."""

    def __init__(self, problem: Problem, *, states_per_task: int = 20_000, expand_solved: bool = False,
                 progress=None, block_cells: int | None = None, bucket_all: bool | None = None,
                 absorb_cells: int | None = None, layers: bool = True, free_steps: bool = True):
        self.problem = problem
        self.xp = problem.xp
        self.transforms = transforms()
        self.table = StateTable(len(problem.tasks))
        self.seen = key_set(problem.xp, self._free_device_memory)
        self.leaderboards = Leaderboards(len(problem.tasks))
        self.boards: list[list[Candidate]] = self.leaderboards.boards  # each task's, best first
        # Each task's pieces for layered composition (None: not collected).
        self.pieces = PieceBoards(len(problem.tasks)) if layers else None
        self.threshold = self.leaderboards.threshold  # the rank that enters a full board
        self.candidate_outputs = CandidateOutputs(problem, wanted=self._board_candidates)
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
        # The free steps (pipeline.search.mechanisms.FREE_STEPS): one more level after the last,
        # of these transforms only, applied to the last level's states.
        self.free_runs = [[ti] for ti, tr in enumerate(self.transforms) if tr.name in FREE_STEPS] if free_steps else []
        # Whether the level being searched keeps only the states a crop can still make right (the
        # level before the free steps), and the tasks where one may: those with a train output
        # smaller than its input (on arc1-train at depth 2 the free steps solved only such tasks).
        self.crops_next = False
        self.shrinks = problem.xp.asarray([any(o.shape[0] < i.shape[0] or o.shape[1] < i.shape[1]
                                               for i, o in zip(t.train_inputs, t.train_outputs))
                                           for t in problem.tasks], dtype=bool)
        # Whether each transform keeps its grid's shape (see _shape_keeping_states).
        self.keeps_shape = np.array([tr.primitive.keeps_shape for tr in self.transforms], dtype=bool)
        self.depth = None  # the depth being searched (see run)
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
        self.snapshot: Snapshot | None = None  # the boards and pieces after the level before the last (see run)
        self._snapshot_due = False
        self.on_snapshot = None  # called with the snapshot as soon as it is taken (see run)

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

    def run(self, depth: int, deadline: float | None = None) -> SearchStats:
        """Search to ``depth`` (stopping early at the monotonic ``deadline``); returns the stats.

        From depth 2 on, the boards and pieces as they stand after level ``depth - 1`` are kept
        (``snapshot``, a :class:`Snapshot`): the programs the post-search mechanisms build from
        them are a shallower search's, which the deeper levels' candidates would otherwise push
        off the boards."""
        start = time.perf_counter()
        frontier = [self.problem.initial_block()]
        first = frontier[0]
        self._absorb([_Output(first, None, *self._identity_parts(first))], 0, keep=False)
        levels = [(level, self.runs) for level in range(1, depth + 1)]
        if self.free_runs and depth > 0:
            levels.append((depth + 1, self.free_runs))
        self.depth = depth
        for level, runs in levels:
            last = level == levels[-1][0]
            self.crops_next = levels[-1][1] is self.free_runs and level == depth
            t0 = self._now()
            frontier = self._expand_level(frontier, level, last, deadline, runs)
            self.stats.level_seconds.append(self._now() - t0)
            if self.stats.truncated:
                break
            self.stats.levels_done = level
            if level == depth - 1:
                # Taken at the next board work, after the level's put-off last update.
                self._snapshot_due = True
            if not frontier:
                break
        self._run_deferred()
        self.candidate_outputs.flush()
        self.stats.candidates += int(to_host(self._valid_count).sum())
        self._valid_count = self._no_candidates()
        self.stats.seconds = time.perf_counter() - start
        return self.stats

    def _take_snapshot(self) -> None:
        """Keep the boards and pieces as they stand now, the candidates' test outputs fetched."""
        self._snapshot_due = False
        self.candidate_outputs.flush()
        self.snapshot = Snapshot([list(board) for board in self.boards], copy.copy(self.pieces))
        if self.on_snapshot is not None:
            self.on_snapshot(self.snapshot)

    def _expand_level(self, frontier, level, last, deadline, runs):
        # The boards' solved flags decide which states are dropped; the rest of a put-off board
        # update waits for the level's first kernels (on the first levels it is the host's largest
        # piece of work, and the device would idle through it).
        self._mark_deferred_solved()
        # States kept per task for the next level (on the array device where its kernels run:
        # the budget is then applied there, see _next_blocks).
        kept_per_task = (self.xp if dsl_kernels.enabled(self.xp) else np).zeros(len(self.problem.tasks), dtype=np.int64)
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
        full = None  # on the last level, the tasks whose boards were full after the level before
        if level == self.depth:
            self._run_deferred()  # that level's last board update (on every device the same boards)
            full = self.xp.asarray(self.threshold >= 0)
        total = sum(map(len, runs)) * len(frontier)
        done = 0
        next_frontier: list = []
        # Every block holds whole tasks, so block by block, transform by transform, meets each
        # task's states in the same order however tasks are split into blocks or shards (the
        # same inputs give the same programs), and a block's cached layouts are freed as soon as
        # it is done (memory: the frontier plus one block's working set).
        for bi in range(len(frontier)):
            block, frontier[bi] = frontier[bi], None
            builder = self._builder = _BlockBuilder(self.xp, self.block_cells, len(self.problem.tasks),
                                                    self._free_device_memory)
            pending = self._pending = _Pending(self.xp, self.absorb_cells, self.problem.max_samples)

            def absorb():
                for new_block in self._absorb(pending.take(), level, keep=not last, kept_per_task=kept_per_task):
                    builder.add(new_block)

            def enqueue(output):
                if not pending.joins(output):
                    absorb()  # the queued outputs, one view of the queue's buffer, without this one
                if pending.add(output):
                    absorb()

            self._enqueue = enqueue
            # What each run is applied to: the block, or (on the search's last level, for runs of
            # transforms that keep shape) the states of it that such a transform can still help.
            whole = self._source(block)
            narrow = self._source(self._shape_keeping_states(block, full)) if full is not None else None
            # The transforms of a block share their analyses of a stack (labellings, colour counts,
            # enclosed background: solvers.stack_cache).
            with stack_cache.scope():
                for run in runs:
                    if deadline is not None and time.monotonic() > deadline:
                        self.stats.truncated = True
                        self._finish_absorbing()
                        self._pending = self._enqueue = self._waiting = self._distinct = None
                        self._run_deferred()
                        return []
                    if narrow and self.keeps_shape[run].all():
                        if not narrow[0].num_states:  # no state that such a transform can help
                            done += len(run)
                            continue
                        source, grids, distinct = narrow
                    else:
                        source, grids, distinct = whole
                    self._distinct = distinct
                    outputs = self._apply_run(grids, run, defer=True)
                    self.stats.grid_transforms += len(run) * source.items.count
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
                        self.progress(level, done, total, self.stats.states, int(self.solved.sum()))
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
            del block, grids, distinct, source, whole, narrow
            t0 = self._now()
            next_frontier += builder.finish()
            self.stats.oom_splits += builder.oom_fallbacks
            self.stats.add_time("search.regroup", self._now() - t0)
        return next_frontier

    def _source(self, block: Block | None) -> tuple | None:
        """``(block, what the transforms are applied to, its distinct grids or None)`` (None for
        no block): the block itself, or its distinct grids as a block (see :meth:`_distinct_grids`)."""
        if block is None:
            return None
        distinct = self._distinct_grids(block)
        return block, block if distinct is None else distinct.view, distinct

    def _shape_keeping_states(self, block: Block, full) -> Block | None:
        """On the search's last level, the states of ``block`` that a transform keeping shape
        (``keeps_shape`` in :mod:`solvers.registry`) can still make something of; None where
        that is all of them (a block of no states where it is none: such runs are skipped). The
        others are states none of whose train grids has its output's size, in a task whose board
        is ``full`` (per task, on the array device) and whose states no free step will crop: such
        a transform's result has no train grid of the right size either, so it scores 0, which
        never beats a full board's threshold, and is no piece.
        The programs do not change (only the count of states does); at depth 3 on ARC-1 train a
        quarter of the last level's grid transforms are skipped so. Where the device has no room
        for the subset, None: every state, as without it."""
        xp, p, items = self.xp, self.problem, block.items
        try:
            task = block.task[items.state]
            sample = xp.minimum(items.sample, p.max_train - 1)
            sized = ((items.sample < p.n_train[task]) & (items.h == p.target_shape[task, sample, 0])
                     & (items.w == p.target_shape[task, sample, 1]))
            del task, sample
            keep = xp.zeros(block.num_states, dtype=bool)
            keep[items.state[sized]] = True
            keep |= ~full[block.task]  # a board with room takes any state
            if self.crops_next:
                keep |= self.shrinks[block.task]
            if bool(keep.all()):
                return None
            return _subset(xp, block, keep)
        except Exception as exc:
            if not is_out_of_memory(exc):
                raise
        self._free_device_memory()
        self.stats.oom_splits += 1
        return None

    def _free_device_memory(self) -> None:
        stack_cache.forget()
        if self.xp is not np:
            self.xp.get_default_memory_pool().free_all_blocks()

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
