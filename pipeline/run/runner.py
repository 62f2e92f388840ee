"""One ``run``: tasks -> batched search -> inline -> validate -> store -> select -> outputs.

Work is split into chunks of tasks claimed with leases in the shared cache, so concurrent
instances on one task set each search different tasks; a finished task's record is published in
the cache and every instance's submission covers all its tasks. ``submission.json`` exists (with
fallback attempts) from the start and is rewritten atomically as chunks finish.
"""
from __future__ import annotations

import logging
import os
import sys
import time
from contextlib import contextmanager

from cache import LeaseManager
from pipeline.run.cache_identity import cache_identity
from pipeline.finish.cache_records import read_task_record
from pipeline.run.devices import gpu_count_hint, select_device
from pipeline.search.post_search import helper_count
from pipeline.search.shards import ShardWorkers, gpu_slots, run_search, start_processes, warm_up
from pipeline.run.fingerprint import code_fingerprint
from pipeline.run.interrupts import exit_code, signal_name, signal_of
from pipeline.run.options import RunOptions
from pipeline.search.mechanisms import MECHANISMS
from pipeline.run.outputs import write_json_atomic
from pipeline.run.progress import Progress
from pipeline.run.report_html import RunPage
from pipeline.search.progress import ShardBoard
from pipeline.run.resources import fair_workers, running_instances, usable_cpus
from pipeline.run.run_cache import open_run_cache
from pipeline.run.run_folders import writable_folder
from pipeline.finish.select import choose_attempts
from pipeline.finish.finisher import SolverPipeline
from pipeline.finish.store import SolverStore
from pipeline.run.tasks import load_tasks
from pipeline.finish.validate import ValidationPool

log = logging.getLogger("arcbatt")

TASK_NS = "task"
# With a budget, iterations go one level deeper each up to WIDE_DEPTH, then wider (twice the
# states per task and level each, up to MAX_STATES_PER_TASK or what the device holds), then one
# level deeper again at the first iteration's width and wider again, up to MAX_DEPTH. Measured on
# arc1-train (benchmarks/RESULTS.md): wider depth-4 iterations keep solving tasks.
WIDE_DEPTH = 4
MAX_DEPTH = 6
MAX_STATES_PER_TASK = 256_000
# A deeper iteration that runs out of memory is searched again with half the states per task and
# level, down to this.
MIN_STATES_PER_TASK = 1_000
DEFAULT_DEPTH = {"cpu": 2, "gpu": 3}
# A budget's later iterations search the unsolved tasks in this many chunks, cheapest first.
BUDGET_CHUNKS = 4
# Measured (benchmarks/RESULTS.md): a GPU's fixed per-call costs lose to the CPU on small batches;
# chunks of fewer tasks than this are searched on the CPU even in GPU mode.
GPU_MIN_TASKS = 16
# Search processes per GPU (--procs-per-gpu overrides). Measured on an H100 (benchmarks/RESULTS.md):
# processes sharing a GPU time-slice it rather than overlap, so more than one is slower (depth 2:
# 10.2 s search with one, 17.6 s with four; depth 3: no gain with two or four).
GPU_PROCS_DEFAULT = 1


class StageTimer:
    """Accumulates wall seconds per stage name."""

    def __init__(self):
        self.seconds: dict[str, float] = {}

    @contextmanager
    def __call__(self, stage: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.add(stage, time.perf_counter() - start)

    def add(self, stage: str, seconds: float) -> None:
        """Add ``seconds`` to ``stage``."""
        self.seconds[stage] = self.seconds.get(stage, 0.0) + seconds


def _clock(seconds: float) -> str:
    """Seconds as a short duration: 42s, 12m05s, 3h20m."""
    s = int(seconds)
    if s < 60:
        return f"{s}s"
    return f"{s // 60}m{s % 60:02d}s" if s < 3600 else f"{s // 3600}h{s % 3600 // 60:02d}m"


def _short(exc: BaseException, limit: int = 160) -> str:
    """An exception as one short line."""
    text = f"{type(exc).__name__}: {exc}".splitlines()[0]
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _fallback_attempts(task) -> list:
    return choose_attempts([], [g.astype(int).tolist() for g in task.test_inputs])


class Run:
    """A configured run; :meth:`execute` does it and returns the exit code."""

    def __init__(self, opts: RunOptions):
        self.options = opts
        self.timer = StageTimer()
        self.start_wall = time.time()
        self.deadline = None if opts.budget is None else self.start_wall + opts.budget
        self.out_dir = opts.out_dir or os.path.join("runs", time.strftime("%Y%m%d-%H%M%S"))
        # slowest/mean shard: per chunk, the seconds of its slowest and of its average search shard
        # (in-process search time, start-up excluded), summed over chunks: their ratio is the balance.
        self.shard_totals = {"slowest_seconds": 0.0, "mean_seconds": 0.0}
        self.search_totals = {"states": 0, "grid_transforms": 0, "grid_transforms_computed": 0, "candidates": 0,
                              "seconds": 0.0, "truncated": False}
        self.search_stages: dict[str, float] = {}
        self.records: dict[str, dict] = {}
        self.iterations = 0
        self.states_per_task = opts.states_per_task  # this iteration's (a budget widens it)
        self.stop_reason = None  # why no further iteration ran
        self.searched_tasks = 0  # tasks this instance searched (the rest came from the cache)
        self.interrupted = None  # the signal number that stopped the run, if one did
        self.depth_now = None  # the depth of the iteration running: each record taken is stamped with it
        self.page = None  # report.html, built once the tasks are loaded

    # ------------------------------------------------------------------ main
    def execute(self) -> int:
        """Run everything; outputs are complete when this returns (also after an interrupt)."""
        options = self.options
        self.out_dir = writable_folder(self.out_dir, "output folder (-O)")  # a bad -O fails before any work
        self.procs_per_gpu = options.procs_per_gpu or GPU_PROCS_DEFAULT
        # The first GPU searches in this process. The processes of any further GPUs start first of
        # all (their start takes longer than this process's preparation),
        # sized by a guess at the GPUs; their device is known later.
        guess = 0 if options.force_cpu else gpu_count_hint(options.gpus) * self.procs_per_gpu
        started = start_processes(guess - 1, gpu=True) if guess > 1 else []
        self.shard_workers = None
        try:
            with self.timer("load"):
                tasks, skipped = load_tasks(options.dataset, options.count)
            for msg in skipped:
                print(f"skipped bad task: {msg}", file=sys.stderr)
            self.tasks, self.skipped = tasks, skipped
            self.device = select_device(options.force_cpu, options.force_gpu, options.gpus)
            if self.device.notice:
                print(self.device.notice.splitlines()[0][:300], file=sys.stderr)
            if options.depth is None:
                options.depth = DEFAULT_DEPTH[self.device.kind]
            gpus = [g["id"] for g in self.device.gpus] if self.device.kind == "gpu" else []
            self.gpu_slots = gpu_slots(gpus, self.procs_per_gpu) if gpus else []
            # This process's GPU warms up now; the further GPUs' processes go on warming up while
            # the run prepares, and serve every chunk and depth.
            with self.timer("warm_up"):
                if len(self.gpu_slots) > 1:
                    self.shard_workers, started = ShardWorkers(self.gpu_slots, started=started), []
                elif self.gpu_slots:
                    warm_up(self.gpu_slots[0])
            for pool in started:  # guessed more GPUs than there are
                pool.stop()
            started = []
            self._run(tasks)
        finally:
            for pool in started:
                pool.stop()
            if self.shard_workers is not None:
                self.shard_workers.stop()
        if options.timing:
            self._print_timing()
        solved = sum(1 for r in self.records.values() if r["status"] == "solved")
        print(f"done: {len(self.records)}/{len(tasks)} tasks, {solved} with a validated solver; "
              f"outputs in {self.out_dir}", file=sys.stderr)
        return exit_code(self.interrupted) if self.interrupted else 0

    def _run(self, tasks) -> None:
        """Everything after the device is chosen: cache, outputs, search and validation."""
        options = self.options
        self.submission = {t.id: _fallback_attempts(t) for t in tasks}
        self._write_outputs()
        self.cache = open_run_cache(options.cache_url, options.local_cache, code_fingerprint())
        if options.initial:
            self.cache.clear()
        # Only the runs that share this cache share this run's tasks and count against its CPUs.
        shared = cache_identity(options.cache_url, os.getcwd())
        self.instances = running_instances(cache=shared)
        self.workers = fair_workers(options.workers, cache=shared)
        # CPU search processes: this instance's share of the cores (also for small chunks of a GPU run).
        self.cpu_shards = max(1, usable_cpus() // max(1, self.instances))
        self.search_shards = len(self.gpu_slots) if self.gpu_slots else self.cpu_shards
        self.board = ShardBoard(max(self.cpu_shards, len(self.gpu_slots)))
        self.leases = LeaseManager(self.cache, ttl=options.lease_ttl)
        self.leases.start_renewer()
        self.store = SolverStore(self.cache)
        try:
            with ValidationPool(self.workers, timeout=options.timeout) as pool:
                self.solver_pipeline = SolverPipeline(self.cache, pool, self.store, self.timer)
                self._iterate()
        except KeyboardInterrupt as exc:
            self.interrupted = signal_of(exc)
            self.search_totals["truncated"] = True
            print(f"interrupted by {signal_name(self.interrupted)}: writing what is done", file=sys.stderr)
        finally:
            self.leases.stop_renewer()
            self.leases.release_all()
            self.board.close()
            self._write_outputs()
            if options.export_best:
                self._export_best()
            self.cache.close()

    def _iterate(self) -> None:
        """Iteration 1 searches at depth D. With a budget (and not -o), further iterations search
        the tasks still unsolved while time remains, in the order WIDE_DEPTH and MAX_DEPTH say
        (deeper, then wider, then deeper again). An iteration that runs out of memory is searched
        again with half the states per task and level (never widened back to what failed at that
        depth or less), down to MIN_STATES_PER_TASK, unless an earlier iteration searched that
        depth that wide: the schedule then goes on from there. Records why it stopped
        (``stop_reason``)."""
        depth = self.options.depth
        first_width = self.states_per_task
        todo = list(self.tasks)
        failed_width = None  # the fewest states per task and level that ran out of memory
        searched = set()  # (depth, states per task and level) of the iterations that finished
        while True:
            self.iterations += 1
            if self.iterations > 1:
                print(f"budget: {_clock(self._time_left())} left: iteration {self.iterations} searches depth "
                      f"{depth} ({self.states_per_task} states per task and level) on the {len(todo)} unsolved "
                      "tasks", file=sys.stderr, flush=True)
            again = False  # the same depth once more, narrower
            try:
                self._process(todo, depth)
                searched.add((depth, self.states_per_task))
            except MemoryError as exc:  # also CuPy's OutOfMemoryError
                if self.iterations == 1:
                    raise
                # A deeper or wider iteration than the device holds: what the earlier ones found stays.
                failed_width = self.states_per_task
                narrower = self.states_per_task // 2
                print(f"budget: depth {depth} with {self.states_per_task} states per task and level needs more "
                      f"memory than this device has ({_short(exc)})", file=sys.stderr, flush=True)
                if narrower < MIN_STATES_PER_TASK:
                    self.stop_reason = "out of memory"
                    break
                self.states_per_task, again = narrower, (depth, narrower) not in searched
            todo = sorted((t for t in self.tasks if self.records.get(t.id, {}).get("status") != "solved"),
                          key=_task_cells)  # later iterations: the cheapest tasks first
            if again and todo and self._time_left() > 0:
                continue
            if not todo:
                self.stop_reason = "every task solved"
            elif self.options.once or self.options.budget is None:
                self.stop_reason = "one iteration"
            elif self._time_left() <= 0 or time.time() > self._search_deadline():
                self.stop_reason = "budget"
                print(f"budget: stopping the search after depth {depth} ({_clock(max(0.0, self._time_left()))} "
                      f"left to write the results)", file=sys.stderr, flush=True)
            elif depth < WIDE_DEPTH:
                depth += 1
            elif self.states_per_task * 2 <= MAX_STATES_PER_TASK and (failed_width is None or
                                                                      self.states_per_task * 2 < failed_width):
                self.states_per_task *= 2
            elif depth < MAX_DEPTH:
                # As wide as it goes here: one level deeper, from the first width again (or the
                # widest that the device held, if less).
                depth += 1
                if failed_width is None or first_width < failed_width:
                    self.states_per_task = first_width
            else:
                self.stop_reason = "nothing left to try"
                most = "the most" if failed_width is None else "the most this device holds"
                print(f"budget: depth {depth} with {self.states_per_task} states per task and level "
                      f"searched, {most}; stopping with {_clock(self._time_left())} left", file=sys.stderr,
                      flush=True)
            if self.stop_reason:
                break

    def _time_left(self) -> float:
        return float("inf") if self.deadline is None else self.deadline - time.time()

    def _search_deadline(self) -> float | None:
        """Stop starting search work early enough to validate and write the results."""
        if self.deadline is None:
            return None
        reserve = min(120.0, max(3.0, 0.15 * self.options.budget))
        return self.deadline - reserve

    # ------------------------------------------------------------------ chunks and leases
    def _settings(self, depth: int) -> str:
        """Key suffix naming everything besides the task and the code that can change a result
        (the code is in every key already: the cache's fingerprint)."""
        without = "".join(f":-{m}" for m in MECHANISMS if m not in self.options.mechanisms)
        return f":d{depth}:s{self.options.seed}:n{self.states_per_task}{without}"

    def _task_key(self, task, depth: int) -> str:
        return task.digest() + self._settings(depth)

    def _chunk_size(self, n: int, iteration_tasks: int) -> int:
        """Tasks to claim for the next search, of ``n`` pending of the iteration's ``iteration_tasks``."""
        if self.options.chunk:
            return self.options.chunk
        if self.iterations > 1:
            # A budget's deeper and wider iterations take minutes: in a few chunks (still large
            # batches), what they solve lands in the submission and the cache as they go.
            return max(GPU_MIN_TASKS, -(-iteration_tasks // BUDGET_CHUNKS))
        # Two chunks per instance: enough to balance concurrent instances (measured: all finish
        # together), few enough that each chunk is still a large batch.
        per = -(-n // (max(1, self.instances) * 2)) if self.instances > 1 else n
        return max(8, min(n, per))

    def _process(self, tasks, depth: int) -> None:
        pending = {t.id: t for t in tasks}
        keys = {t.id: self._task_key(t, depth) for t in tasks}
        self.depth_now = depth
        progress = Progress(len(tasks), f"depth {depth}, iteration {self.iterations}", solved=self._solved_count,
                            start=time.monotonic() - (time.time() - self.start_wall))
        try:
            while pending:
                self._collect_cached(pending, keys, progress)
                if not pending:
                    break
                search_deadline = self._search_deadline()
                if search_deadline is not None and time.time() > search_deadline:
                    self.search_totals["truncated"] = True
                    progress.note(f"budget: no time left to search the other {len(pending)} tasks at depth {depth}")
                    break
                chunk = self._claim(pending, keys, self._chunk_size(len(pending), len(tasks)))
                if chunk:
                    self._solve_chunk(chunk, depth, keys, progress)
                    for t in chunk:
                        pending.pop(t.id, None)
                else:
                    time.sleep(0.5)  # others hold the rest: wait for their results or leases to expire
        finally:
            progress.close()

    def _collect_cached(self, pending: dict, keys: dict, progress) -> None:
        with self.timer("cache"):
            found = self.cache.get_many(TASK_NS, [keys[i] for i in pending])
        by_key = {keys[i]: i for i in pending}
        for key, rec in found.items():
            tid = by_key[key]
            rec = read_task_record(rec, pending[tid], key)
            if rec is None:  # malformed: searched here as if it were not there
                continue
            self._record(rec)
            pending.pop(tid)
            progress.advance(1)
        if found:
            self._write_outputs()

    def _claim(self, pending: dict, keys: dict, size: int) -> list:
        chunk = []
        for tid, task in list(pending.items()):
            if self.leases.try_acquire(f"lease:{keys[tid]}"):
                # Another instance may have finished it between our cache read and the lease.
                done = self.cache.get(TASK_NS, keys[tid])
                if done is not None and read_task_record(done, task, keys[tid]) is not None:
                    self.leases.release(f"lease:{keys[tid]}")
                    continue
                chunk.append(task)
                if len(chunk) >= size:
                    break
        return chunk

    def _solve_chunk(self, chunk, depth: int, keys: dict, progress) -> None:
        on_gpu = self.device.kind == "gpu" and len(chunk) >= GPU_MIN_TASKS
        if on_gpu and self.shard_workers is not None:
            with self.timer("warm_up"):  # the GPU processes' warm-up that the preparation did not cover
                self.shard_workers.ready()
        t0 = time.perf_counter()
        progress.searching(self.board, len(chunk), min(len(chunk), len(self.gpu_slots) if on_gpu else self.cpu_shards))
        try:
            result = run_search(chunk, depth, seed=self.options.seed, deadline=self._search_deadline(),
                                states_per_task=self.states_per_task,
                                shards=self.cpu_shards,
                                gpus=[g["id"] for g in self.device.gpus] if on_gpu else None,
                                procs_per_gpu=self.procs_per_gpu,
                                progress=self.board, workers=self.shard_workers, mechanisms=self.options.mechanisms,
                                helpers=helper_count(self.cpu_shards, len(self.gpu_slots)) if on_gpu else 0)
        finally:
            progress.searched()
        elapsed = time.perf_counter() - t0
        if result.truncated:
            progress.note(f"budget: the search at depth {depth} stopped early, leaving time to validate and write")
        self.timer.add("search", elapsed)
        self.searched_tasks += len(chunk)
        tot = self.search_totals
        tot["states"] += result.states
        tot["grid_transforms"] += result.grid_transforms
        tot["grid_transforms_computed"] += result.grid_transforms_computed
        tot["candidates"] += result.candidates
        tot["seconds"] += elapsed
        tot["truncated"] |= result.truncated
        for k, v in result.stage_seconds.items():
            self.search_stages[k] = self.search_stages.get(k, 0.0) + v
        if result.shard_seconds:
            self.shard_totals["slowest_seconds"] += max(result.shard_seconds)
            self.shard_totals["mean_seconds"] += sum(result.shard_seconds) / len(result.shard_seconds)
        records = self.solver_pipeline.finish(chunk, result.programs, result.task_seconds,
                                              key_suffix=self._settings(depth), depth=depth)
        with self.timer("cache"):
            if not result.truncated:  # a cut-short search is not the answer at this depth
                self.cache.set_many(TASK_NS, {keys[tid]: rec for tid, rec in records.items()})
        for task in chunk:
            self.leases.release(f"lease:{keys[task.id]}")
        for rec in records.values():
            self._record(rec, partial=result.truncated)
        progress.advance(len(chunk))
        self._write_outputs()

    def _solved_count(self) -> int:
        return sum(1 for r in list(self.records.values()) if r["status"] == "solved")

    def _record(self, rec: dict, partial: bool = False) -> None:
        """Take a task's record unless it would replace something better: a solver, or (from a
        search cut short by the budget) a complete shallower search's attempts."""
        old = self.records.get(rec["id"])
        if old is not None and rec["status"] != "solved" and (old["status"] == "solved" or partial):
            return
        # depth: the search depth whose iteration gave the record; solved_at: run seconds when taken.
        rec = dict(rec, depth=self.depth_now,
                   solved_at=round(time.time() - self.start_wall, 3) if rec["status"] == "solved" else None)
        self.records[rec["id"]] = rec
        self.submission[rec["id"]] = rec["attempts"]

    # ------------------------------------------------------------------ outputs
    def _write_outputs(self) -> None:
        with self.timer("write"):
            write_json_atomic(os.path.join(self.out_dir, "submission.json"), self.submission)
            report = self.report()
            write_json_atomic(os.path.join(self.out_dir, "report.json"), report)
            if self.page is None:
                self.page = RunPage(self.tasks)
            self.page.write(os.path.join(self.out_dir, "report.html"), report, self.submission)

    def report(self) -> dict:
        """The report.json document (see DESIGN.md for the fields)."""
        options = self.options
        elapsed = time.time() - self.start_wall
        tot = self.search_totals
        secs = tot["seconds"]
        stats = self.cache.stats() if hasattr(self, "cache") else {"hits": 0, "misses": 0, "hit_rate": 0.0}
        dev = getattr(self, "device", None)
        pipeline = getattr(self, "solver_pipeline", None)
        stages = {k: round(v, 3) for k, v in self.timer.seconds.items()}
        stages.update({k: round(v, 3) for k, v in self.search_stages.items()})
        return {
            "run": {"dataset": options.dataset, "tasks": len(getattr(self, "tasks", [])),
                    "device": dev.kind if dev else None, "gpus": dev.gpus if dev else [],
                    "cupy": dev.cupy_version if dev else None, "cuda": dev.cuda_version if dev else None,
                    "workers": getattr(self, "workers", None), "search_shards": getattr(self, "search_shards", None),
                    "procs_per_gpu": getattr(self, "procs_per_gpu", None) if dev and dev.kind == "gpu" else None,
                    "instances": getattr(self, "instances", None), "seed": options.seed, "depth": options.depth,
                    "iterations": self.iterations, "budget": options.budget, "truncated": tot["truncated"],
                    "stop_reason": self.stop_reason,
                    "interrupted": signal_name(self.interrupted) if self.interrupted else None,
                    "searched_tasks": self.searched_tasks,
                    "seconds": round(elapsed, 3), "stages": stages,
                    "cache": self.cache.describe() if hasattr(self, "cache") else None,
                    "skipped": list(getattr(self, "skipped", []))},
            "search": {"states": tot["states"], "candidates": tot["candidates"],
                       "grid_transforms": tot["grid_transforms"],
                       "grid_transforms_computed": tot["grid_transforms_computed"], "seconds": round(secs, 3),
                       "states_per_second": round(tot["states"] / secs, 1) if secs else 0.0,
                       "grid_transforms_per_second": round(tot["grid_transforms"] / secs, 1) if secs else 0.0,
                       "shard_slowest_seconds": round(self.shard_totals["slowest_seconds"], 3),
                       "shard_mean_seconds": round(self.shard_totals["mean_seconds"], 3)},
            "cache": {"hits": stats.get("hits", 0), "misses": stats.get("misses", 0),
                      "hit_rate": stats.get("hit_rate", 0.0), "namespaces": stats.get("namespaces", {})},
            "validation": pipeline.counts.to_dict() if pipeline else {},
            "tasks": [{**{k: self.records[t.id][k]
                          for k in ("id", "status", "program", "train_fit", "seconds", "depth", "solved_at")},
                       "mechanisms": self.records[t.id].get("mechanisms", [])}
                      if t.id in self.records else
                      {"id": t.id, "status": "pending", "program": None, "train_fit": 0.0, "seconds": 0.0,
                       "depth": None, "solved_at": None, "mechanisms": []}
                      for t in getattr(self, "tasks", [])],
        }

    def _print_timing(self) -> None:
        rows = sorted(self.timer.seconds.items(), key=lambda kv: -kv[1])
        sub = sorted(self.search_stages.items(), key=lambda kv: -kv[1])
        width = max([len(k) for k, _ in rows + sub] + [5])
        print(f"{'stage':<{width}}  seconds", file=sys.stderr)
        for k, v in rows:
            print(f"{k:<{width}}  {v:8.2f}", file=sys.stderr)
        if sub:
            print(f"{'(search, summed over shards)':<{width}}", file=sys.stderr)
            for k, v in sub:
                print(f"{k:<{width}}  {v:8.2f}", file=sys.stderr)
        print(f"{'total':<{width}}  {time.time() - self.start_wall:8.2f}", file=sys.stderr)

    def _export_best(self) -> None:
        """Write best_solvers.py: the best solver of every solved task as one importable module.

        The program of a task's record is its best stored solver, checked by this process (its own
        inlining, or :mod:`pipeline.finish.cache_records` for a record read from the cache)."""
        from pipeline.run.export import EXPORT_MODULE, write_solvers_module

        solved = [self.records[t.id] for t in self.tasks if self.records.get(t.id, {}).get("status") == "solved"]
        best = {rec["id"]: rec["program"] for rec in solved}
        write_solvers_module(os.path.join(self.out_dir, EXPORT_MODULE + ".py"), best, self.options.dataset)


def _task_cells(task) -> int:
    """A task's cells over all its grids: what one search of it costs, roughly."""
    return sum(g.size for g in (*task.train_inputs, *task.train_outputs, *task.test_inputs))
