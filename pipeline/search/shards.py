"""Runs the batched search over a set of tasks: in this process, or split into shards that run
in parallel (one process per CPU core, or one per GPU). Results do not depend on the split: a
task's search never looks at other tasks (see :mod:`pipeline.search.driver`).
"""
from __future__ import annotations

import contextlib
import gc
import math
import multiprocessing
import time
from dataclasses import dataclass, field

import numpy as np
from threadpoolctl import threadpool_limits

from pipeline.run.tasks import Task
from pipeline.search.colour_roles import merged, restored, role_variant
from pipeline.search.device import is_out_of_memory, plain_reductions, stage_pinned
from pipeline.search.driver import Search
from pipeline.search.mechanisms import MECHANISMS
from pipeline.search.post_search import Helpers, board_programs, piece_chains
from pipeline.search.problem import Problem
from solvers.primitives import transforms


# Device memory budgeted per cell of a search block (see search_shard). Measured on an H100 at
# depth 3: CuPy's pool held 19-21 GiB with 255 M-cell blocks and 26-29 GiB with 400 M (about 75
# bytes a cell); 190 leaves room for larger grids and deeper levels, and an out-of-memory error
# only halves the block.
BYTES_PER_CELL = 190


@dataclass
class EngineResult:
    """What the search found per task id, with merged statistics."""

    programs: dict = field(default_factory=dict)   # task id -> [FoundProgram, ...] best first
    states: int = 0
    grid_transforms: int = 0
    grid_transforms_computed: int = 0
    candidates: int = 0
    truncated: bool = False
    levels_done: int = 0
    stage_seconds: dict = field(default_factory=dict)
    shard_seconds: list = field(default_factory=list)
    task_seconds: dict = field(default_factory=dict)


def search_shard(tasks, depth: int, seed: int, deadline: float | None, states_per_task: int,
                 gpu: int | None = None, progress=None, gpu_share: int = 1,
                 mechanisms: tuple = MECHANISMS, helpers: int = 0) -> EngineResult:
    """Search ``tasks`` together on the CPU (``gpu`` None) or on GPU number ``gpu``, which
    ``gpu_share`` search processes use at once (each sizes its blocks to its share of the memory).

    ``deadline`` is a wall-clock time (``time.time()``) after which no new transform starts.
    ``mechanisms`` names those of :data:`MECHANISMS` to use; ``helpers`` is the number of helper
    processes that build the post-search mechanisms (:mod:`pipeline.search.post_search`; 0: this
    process builds them).
    """
    if gpu is None:
        # One BLAS thread per search process: the CPU search already runs a process per core,
        # and its matrix products (grid hashing) are small. OpenBLAS's default, a thread per
        # core in every process, oversubscribed the machine (2-core VM, two processes, depth 2
        # on 120 tasks: search 13.3 s with it, 7.3 s with one thread; benchmarks/RESULTS.md).
        with threadpool_limits(limits=1, user_api="blas"):
            return _search(np, tasks, depth, seed, deadline, states_per_task, progress, mechanisms=mechanisms,
                           helpers=helpers)
    import cupy

    plain_reductions()
    with cupy.cuda.Device(gpu):
        try:
            return _search(cupy, tasks, depth, seed, deadline, states_per_task, progress,
                           gpu_block_cells(cupy, gpu_share), mechanisms, helpers)
        except Exception as exc:
            if not is_out_of_memory(exc):
                raise
            message = f"{type(exc).__name__}: {exc}"
        # Out of device memory: the failed search's arrays are held by the error's frames, often
        # in reference cycles that only a full collection frees, and then by CuPy's pool. A budget
        # run searches again, narrower: it needs that memory back on the device.
        gc.collect()
        cupy.get_default_memory_pool().free_all_blocks()
        raise MemoryError(message)


def gpu_block_cells(cupy, gpu_share: int = 1) -> int:
    """Cells per search block on the current GPU, which ``gpu_share`` search processes use at once.

    Processes sharing a GPU start together: each caps its memory pool at its share of the card
    (CuPy frees its cached blocks and retries before it reports out-of-memory, which the search
    answers by halving the block), so none starves the others. A limit already set on the pool
    (CuPy's ``CUPY_GPU_MEMORY_LIMIT``, in bytes or a percentage: ``23622320128`` runs a big card
    with the 22 GiB an L4 leaves usable) counts as the card's size.
    """
    free, total = cupy.cuda.runtime.memGetInfo()
    pool = cupy.get_default_memory_pool()
    # What the pool holds unused is this process's to reuse: a shard process searching its second
    # chunk must not take its own freed blocks (held by the pool) for another's memory.
    free += pool.free_bytes()
    if pool.get_limit():
        free = min(free, pool.get_limit() - pool.used_bytes())
    cells, share = block_cells_for_memory(free, total, pool.get_limit(), gpu_share)
    if gpu_share > 1:
        pool.set_limit(size=share)
    return cells


def block_cells_for_memory(free: int, total: int, limit: int, gpu_share: int = 1) -> tuple[int, int]:
    """``(cells per search block, bytes this process may use)`` on a card with ``free`` of ``total``
    bytes free, a memory-pool ``limit`` (0: none), shared by ``gpu_share`` search processes."""
    if limit:
        free, total = min(free, limit), min(total, limit)
    share = int(min(free, 0.9 * total / max(1, gpu_share)))
    # Blocks follow that memory (zero-padded buckets, int64 labels and indices, the absorbs' keys).
    return int(min(400_000_000 // max(1, gpu_share), max(2_000_000, share // BYTES_PER_CELL))), share


def _search(xp, tasks, depth, seed, deadline, states_per_task, progress, block_cells=None, mechanisms=MECHANISMS,
            helpers: int = 0):
    with objects_frozen():
        return _search_unfrozen(xp, tasks, depth, seed, deadline, states_per_task, progress, block_cells,
                                mechanisms, helpers)


@contextlib.contextmanager
def objects_frozen():
    """Keep the objects that exist now (modules, CuPy's and SciPy's among them: hundreds of
    thousands) out of Python's full garbage collections until the block ends (``gc.freeze``),
    so that the collections that the search's own objects prompt scan only those: each full
    collection otherwise walks them all."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _search_unfrozen(xp, tasks, depth, seed, deadline, states_per_task, progress, block_cells=None,
                     mechanisms=MECHANISMS, helpers: int = 0):
    start = time.perf_counter()
    variants = {}  # task id -> the task renamed by colour roles, searched beside it
    if "colour_roles" in mechanisms:
        variants = {task.id: v for task in tasks if (v := role_variant(task)) is not None}
    originals, tasks = tasks, list(tasks) + list(variants.values())
    problem = Problem(tasks, xp, seed)
    search = Search(problem, states_per_task=states_per_task, progress=progress, block_cells=block_cells,
                    layers="layers" in mechanisms, free_steps="free_steps" in mechanisms)
    prepared = time.perf_counter()
    mono_deadline = None if deadline is None else time.monotonic() + (deadline - time.time())
    with Helpers(helpers) as pool:
        shallower = []
        if "shallower" in mechanisms:
            # What a search one level shallower finds (its boards, and the layers and sizes built
            # from them) stays found when the deeper levels push it off the boards. Its mechanisms
            # start as soon as the snapshot is taken: with helpers, they run during the last level.
            def build_shallower(snapshot) -> None:
                found = board_programs(search, tasks, snapshot.boards)
                shallower.append(pool.submit(tasks, found, piece_chains(search, tasks, found, snapshot.pieces),
                                             mechanisms, task_cost))
            search.on_snapshot = build_shallower
        stats = search.run(depth, mono_deadline)
        searched = time.perf_counter()
        res = EngineResult(states=stats.states, grid_transforms=stats.grid_transforms,
                           grid_transforms_computed=stats.grid_transforms_computed,
                           candidates=stats.candidates, truncated=stats.truncated,
                           levels_done=stats.levels_done, stage_seconds=dict(stats.stage_seconds))
        programs = board_programs(search, tasks, search.boards)
        final = pool.submit(tasks, programs, piece_chains(search, tasks, programs, search.pieces), mechanisms,
                            task_cost)
        res.programs = _add_seconds(res.stage_seconds, *final.result())
        for built in shallower:
            found = _add_seconds(res.stage_seconds, *built.result())
            for task in tasks:
                known = {p.identity() for p in res.programs[task.id]}
                res.programs[task.id] += [p for p in found[task.id] if p.identity() not in known]
    for task in originals:
        if task.id in variants:
            variant = restored(task, res.programs.pop(variants[task.id].id))
            res.programs[task.id] = merged(res.programs[task.id], variant)
    elapsed = time.perf_counter() - start
    res.stage_seconds["search.problem"] = prepared - start  # the tasks' arrays, on the device
    res.stage_seconds["search.programs"] = time.perf_counter() - searched  # the boards as programs
    res.shard_seconds = [elapsed]
    # The search is one batch: a task's share is its share of the estimated cost.
    weights = np.array([task_cost(t) for t in tasks], dtype=float)
    weights = weights / weights.sum() if weights.sum() else weights
    res.task_seconds = {t.id: float(elapsed * w) for t, w in zip(tasks, weights)}
    for task_id, variant in variants.items():
        res.task_seconds[task_id] += res.task_seconds.pop(variant.id)
    return res


def _add_seconds(stage_seconds: dict, programs: dict, seconds: dict) -> dict:
    """``programs``, after adding ``seconds`` (by stage) to ``stage_seconds``."""
    for stage, s in seconds.items():
        stage_seconds[stage] = stage_seconds.get(stage, 0.0) + s
    return programs


def task_cost(task) -> float:
    """Estimated search cost of a task: the sum over its input grids of sqrt(cells).

    A search's time grows with both the grids it makes and their cells. Measured on ARC-1 train
    (level-3 work of a depth-3 search, as cells + 100..300 per grid): splitting by this estimate
    left shards within 0.4-0.5% of each other for 2 shards and 6-8% for 4, against 2.7-3.7% and
    11-13% when splitting by cells."""
    return float(sum(math.sqrt(g.size) for g in task.train_inputs + task.test_inputs))


def split_tasks(tasks, shards: int) -> list[list]:
    """Deterministic balanced split: costliest tasks first (:func:`task_cost`), each to the least
    loaded shard."""
    shards = max(1, min(shards, len(tasks)))
    cost = [task_cost(t) for t in tasks]
    order = sorted(range(len(tasks)), key=lambda i: (-cost[i], i))
    load = [0] * shards
    groups: list[list[int]] = [[] for _ in range(shards)]
    for i in order:
        s = min(range(shards), key=lambda k: (load[k], k))
        groups[s].append(i)
        load[s] += cost[i]
    return [[tasks[i] for i in sorted(g)] for g in groups if g]


def merge(results: list[EngineResult]) -> EngineResult:
    """Combine shard results (stage seconds add up: they are CPU/GPU seconds)."""
    out = EngineResult()
    for r in results:
        out.programs.update(r.programs)
        out.states += r.states
        out.grid_transforms += r.grid_transforms
        out.grid_transforms_computed += r.grid_transforms_computed
        out.candidates += r.candidates
        out.truncated |= r.truncated
        out.levels_done = max(out.levels_done, r.levels_done)
        for k, v in r.stage_seconds.items():
            out.stage_seconds[k] = out.stage_seconds.get(k, 0.0) + v
        out.shard_seconds += r.shard_seconds
        out.task_seconds.update(r.task_seconds)
    if results:
        out.levels_done = min(r.levels_done for r in results)
    return out


def gpu_slots(gpus: list, procs_per_gpu: int = 1) -> list:
    """The GPU of each search shard: shard i runs on GPU i mod G."""
    n = len(gpus) * max(1, procs_per_gpu)
    return [gpus[i % len(gpus)] for i in range(n)]


def run_search(tasks, depth: int, *, seed: int = 0, deadline: float | None = None,
               states_per_task: int = 20_000, shards: int = 1, gpus: list | None = None,
               procs_per_gpu: int = 1, progress=None, workers: "ShardWorkers | None" = None,
               mechanisms: tuple = MECHANISMS, helpers: int = 0) -> EngineResult:
    """Search all ``tasks``: on the GPUs listed in ``gpus`` (``procs_per_gpu`` shards each) or in
    ``shards`` CPU processes (1: in this process). ``workers``, when given for those GPUs, are
    started shard processes to use instead of new ones. ``progress``, a
    :class:`~pipeline.search.progress.ShardBoard`, receives every shard's counters as it advances.
    ``helpers``: each shard's helper processes for the post-search mechanisms (see :func:`search_shard`)."""
    if not tasks:
        return EngineResult()
    slots = gpu_slots(gpus, procs_per_gpu) if gpus else [None] * shards
    groups = split_tasks(tasks, len(slots))
    devices = slots[:len(groups)]
    if len(groups) == 1 and not (gpus and len(gpus) > 1):
        writer = progress.writers(groups, depth)[0] if progress else None
        return search_shard(groups[0], depth, seed, deadline, states_per_task, devices[0], writer,
                            mechanisms=mechanisms, helpers=helpers)
    if workers is not None and workers.slots == slots:
        return workers.search(groups, depth, seed, deadline, states_per_task, progress, mechanisms, helpers)
    with ShardWorkers(devices, warm=False) as fresh:
        return fresh.search(groups, depth, seed, deadline, states_per_task, progress, mechanisms, helpers)


class ShardWorkers:
    """The search processes of a run, one per shard slot (a GPU id, or None for a CPU core).

    The first slot searches in this process; every other slot is a pool of one worker process,
    so a slot's shards always meet the same process: once started (interpreter, modules, CuPy,
    the device's context) and once its first search has loaded the compiled kernels, it stays
    warm for every later chunk and depth of the run. Searching in this process saves a process's
    start and warm-up, which a fresh worker cannot hide when the run prepares for less time than
    it takes.

    ``warm=True`` warms every slot up at once (:func:`warm_up`): the workers in the background,
    so that their start overlaps whatever the run does before its first search (the cache,
    leases, the validation pool), and this process's slot before returning. :meth:`ready` waits
    for the workers' warm-up. Use as a context manager, or call :meth:`close`.
    """

    def __init__(self, slots: list, warm: bool = True, started: list | None = None):
        if not slots:
            raise ValueError("no shard slots")
        self.slots = list(slots)
        # Processes already started (start_processes) serve the first slots; unneeded ones end.
        started = list(started or [])
        self.pools = started[:len(self.slots) - 1] + start_processes(len(self.slots) - 1 - len(started))
        for pool in started[len(self.slots) - 1:]:
            pool.stop()
        # Queued first in each pool, so a shard waits for (and a failure shows in) its search.
        self._warming = [pool.schedule(warm_up, args=(dev, self._share(dev)))
                         for pool, dev in zip(self.pools, self.slots[1:])] if warm else []
        if warm:
            try:
                warm_up(self.slots[0], self._share(self.slots[0]))
            except BaseException:
                self.stop()
                raise

    def _share(self, dev) -> int:
        return self.slots.count(dev) if dev is not None else 1

    def ready(self) -> float:
        """Wait until the worker processes have warmed up; returns the seconds waited (a worker's
        failure to warm up raises here, with its traceback)."""
        start = time.perf_counter()
        try:
            for fut in self._warming:
                fut.result()
        except BaseException:
            self.stop()
            raise
        return time.perf_counter() - start

    def search(self, groups, depth, seed, deadline, states_per_task, progress=None,
               mechanisms: tuple = MECHANISMS, helpers: int = 0) -> EngineResult:
        """Search task group i in slot i (at most one group per slot; group 0 in this process),
        each with ``helpers`` helper processes (see :func:`search_shard`); merged results."""
        if len(groups) > len(self.slots):
            raise ValueError(f"{len(groups)} task groups for {len(self.slots)} search processes")
        writers = progress.writers(groups, depth) if progress else [None] * len(groups)
        try:
            futures = [pool.schedule(search_shard, args=(g, depth, seed, deadline, states_per_task, dev, writer,
                                                         self._share(dev), mechanisms, helpers))
                       for g, pool, dev, writer in zip(groups[1:], self.pools, self.slots[1:], writers[1:])]
            results = [search_shard(groups[0], depth, seed, deadline, states_per_task, self.slots[0], writers[0],
                                    self._share(self.slots[0]), mechanisms, helpers)]
            if progress:
                progress.finished(0)
            for fut in futures:
                # With a deadline the shards stop by themselves; the margin covers their last transform.
                wait = None if deadline is None else max(60.0, deadline - time.time() + 300.0)
                results.append(fut.result(timeout=wait))  # a shard error propagates with its traceback
                if progress:
                    progress.finished(len(results) - 1)
        except BaseException:
            self.stop()  # interrupted or failed: kill the shards now rather than wait for them
            raise
        return merge(results)

    def close(self) -> None:
        """Let the processes finish what they run, then end them."""
        for pool in self.pools:
            pool.close()
        for pool in self.pools:
            pool.join(timeout=30)

    def stop(self) -> None:
        """End the processes now (their work is lost)."""
        for pool in self.pools:
            pool.stop()
        for pool in self.pools:
            pool.join(timeout=30)

    def __enter__(self) -> "ShardWorkers":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def start_processes(count: int, gpu: bool = False) -> list:
    """Start ``count`` search processes now (pools of one worker each, for :class:`ShardWorkers`),
    which import the search's modules, and CuPy for ``gpu``, before they know their device: a run
    starts them before it has chosen its device, to overlap their start with its own."""
    from pebble import ProcessPool

    # spawn: CUDA cannot be used in a forked child, and a clean interpreter avoids inherited state.
    ctx = multiprocessing.get_context("spawn")
    pools = [ProcessPool(max_workers=1, context=ctx) for _ in range(max(0, count))]
    if gpu:
        for pool in pools:
            pool.schedule(_import_gpu_modules)
    return pools


def _import_gpu_modules() -> None:
    try:
        import cupy  # noqa: F401
        import cupyx.scipy.ndimage  # noqa: F401
    except Exception:  # no usable CuPy: the run finds out (and says so) when it chooses its device
        pass


def warm_up(gpu: int | None, gpu_share: int = 1) -> float:
    """Prepare this process to search on ``gpu`` (None: the CPU) and return the seconds it took:
    the transforms are registered; on a GPU, CuPy and ``cupyx`` are imported, the device's context,
    memory pool and CUB are started, the compiled kernels of :mod:`solvers.kernels`,
    :mod:`pipeline.search.kernels` and :mod:`solvers.fused` are loaded, the pinned host buffers
    of the copies back are locked (``pipeline.search.device.stage_pinned``), and a small search
    (:func:`warm_up_tasks`) loads the kernels CuPy loads on their first launch, so that the first
    real search does not wait for any of it.
    """
    start = time.perf_counter()
    transforms()
    if gpu is not None:
        import cupy
        import cupyx.scipy.ndimage  # noqa: F401  (imported by CuPy's kernels on first use anyway)

        from pipeline.search import kernels
        from solvers import fused
        from solvers import kernels as dsl_kernels

        plain_reductions()
        with cupy.cuda.Device(gpu):
            cupy.zeros(16, dtype=cupy.uint8).sum()
            int(cupy.ones(16, dtype=cupy.int64).sum())  # an int64 sum goes through CUB (a routine accelerator)
            block_cells = gpu_block_cells(cupy, gpu_share)
            if dsl_kernels.enabled(cupy):
                dsl_kernels.preload()
                kernels.preload()
                fused.preload()
            stage_pinned()  # the host buffers of the copies back (page locking is slow)
            _search(cupy, warm_up_tasks(), 2, 0, None, 1000, None, block_cells)
    return time.perf_counter() - start


def warm_up_tasks() -> list:
    """Three small made-up tasks for :func:`warm_up`'s search: random grids of 3x3 to 30x30 cells
    (every size bucket), each output its input turned (so some programs solve them)."""
    rng = np.random.default_rng(0)
    sides = [(3, 3), (6, 9), (14, 11), (30, 30)]
    tasks = []
    for k in range(3):
        grids = [(rng.integers(1, 10, hw) * (rng.random(hw) < 0.5)).astype(np.uint8) for hw in sides[:2 + k]]
        tasks.append(Task(f"warm-up-{k}", tuple(grids[:-1]), tuple(np.rot90(g) for g in grids[:-1]), (grids[-1],)))
    return tasks
