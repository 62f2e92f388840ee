"""Solver validation in isolated worker processes (the "validate" stage).

A solver is Python source text defining ``def solve(I): ...; return O`` whose body calls the DSL
(``solvers.dsl``).  :class:`ValidationPool` runs solvers on every train pair and test input of
their task in a capped pool of worker processes and returns one :class:`ValidationResult` per
job, in order.  Nothing a solver does can hang or kill the caller:

* **Soft timeout** (in the worker): ``SIGALRM`` via ``setitimer`` at 0.8 × ``timeout`` raises an
  exception inside the solver, so ordinary Python loops end as ``"timeout"`` with the place they
  were stuck, and the worker survives.
* **Hard timeout** (in the parent): pebble kills and replaces a worker whose task outlives its
  deadline; this catches blocking C calls and solvers that mask ``SIGALRM``.  Workers take
  ``SIGTERM`` with the default action, so the kill is immediate even inside a C call.
* **Only checked code, only the DSL**: the parent runs a job only if its source passes
  :func:`pipeline.finish.solver_check.check_solver` (the inliner's AST checks, callees from the DSL
  module) in this process, else the job is ``"rejected"``; the worker executes it in a namespace
  of the DSL's names and safe builtins (no imports, no files, no ``eval``).
* **Memory cap and threads**: ``RLIMIT_AS`` in each worker, ``memory_mb`` above the worker's
  baseline after its imports (``MemoryError`` -> ``"memory"``); numeric thread pools pinned to
  one thread (see :mod:`pipeline.finish.worker_limits`).  A worker that cannot run plain array code
  under its cap reports its jobs as pool errors, not as failed solvers.
* **Crashes** (segfault, ``os._exit``): pebble reports ``ProcessExpired``; a fresh worker replaces
  the dead one and the solver runs once more; a second crash makes it ``"crash"`` with the exit
  code (negative: the signal).
* **Backstops**: every wait in the parent has a deadline.  A running chunk that pebble has not
  ended within its hard timeout plus a margin is cancelled (and its worker killed); chunks that
  wait with none running and none finishing for ``stall_timeout`` (workers that cannot start,
  dead workers that pebble cannot see) make the pool be rebuilt.  On a broken pool (pebble breaks
  the whole pool when a worker dies while idle) the pool is rebuilt and the unfinished jobs are
  sent again, once.  ``close()`` (also from another thread, during a batch) stops and joins the
  workers with a deadline and kills any that remain; an ``atexit`` hook closes pools left open.

Overhead: jobs are sent in chunks (several solvers per worker call, each distinct task's grids
once per chunk); the worker imports the DSL once (initializer) and copies that base namespace per
job.  A chunk stops starting new solvers after ``chunk_budget`` seconds and hands the rest back,
so a chunk's hard deadline is ``chunk_budget + timeout``.  When a chunk of several jobs crashes or
hits its hard deadline, its jobs are run again one per call, which attributes the failure to the
exact solver (the others cost a second run; hostile solvers are rare).

Workers are started with the ``spawn`` method by default: the parent may hold a CUDA context,
gigabytes of search state and helper threads, none of which a forked child should inherit.
Consequence for scripts that use the pool: guard their entry point with
``if __name__ == "__main__":`` (standard for ``spawn``).

Results are plain data (:meth:`ValidationResult.to_dict` is JSON and msgpack safe) so they can be
cached.  A job that never ran because the pool itself failed is reported as ``"error"`` with an
error text starting with ``"pool:"``; callers should not cache those.
"""

from __future__ import annotations

import atexit
import math
import multiprocessing
import queue
import threading
import time
from concurrent.futures import CancelledError
from concurrent.futures import TimeoutError as FuturesTimeoutError
from dataclasses import dataclass
from typing import Any

import numpy as np
from pebble import ProcessExpired, ProcessPool

from pipeline.finish.inline import InlineError
from pipeline.finish.solver_check import DSL_MODULE, check_solver
from pipeline.finish.validation_result import POOL_ERROR_PREFIX, STATUSES, ValidationJob, ValidationResult, check_grid
from pipeline.finish.validation_worker import _run_chunk, _worker_init
from pipeline.finish.worker_limits import SOLVER_MEMORY_MB, pin_worker_threads

__all__ = ["STATUSES", "ValidationJob", "ValidationPool", "ValidationResult", "check_grid"]


class _TaskDataError(ValueError):
    """A job's task grids are not valid ARC grids."""


def _task_arrays(job: ValidationJob) -> tuple:
    """Convert a job's grids to read-only uint8 arrays, checking them."""
    def conv(grids, name):
        """Check and convert one list of grids; ``name`` labels them in errors."""
        arrs = []
        for i, g in enumerate(grids):
            arr, why = check_grid(g if isinstance(g, np.ndarray) else list(g))
            if why is not None:
                raise _TaskDataError(f"bad task data: {name} {i}: {why}")
            arr = np.array(arr, dtype=np.uint8, copy=True)  # our own copy: never alias the caller's
            arr.flags.writeable = False
            arrs.append(arr)
        return arrs

    tin = conv(job.train_inputs, "train input")
    tout = conv(job.train_outputs, "train output")
    if len(tin) != len(tout):
        raise _TaskDataError(f"bad task data: {len(tin)} train inputs but {len(tout)} train outputs")
    return tin, tout, conv(job.test_inputs, "test input")


@dataclass
class _Chunk:
    """Jobs sent in one worker call."""

    indices: list  # job indices
    tasks: list  # distinct task tuples used by the chunk
    items: list  # (index into tasks, source) per job
    attempts: int = 0  # pool failures seen by these jobs
    crashes: int = 0  # worker crashes seen by this single job


_OPEN_POOLS: "set[ValidationPool]" = set()  # strong refs: an unclosed pool is closed at exit


@atexit.register
def _close_open_pools() -> None:
    """At interpreter exit, close every pool that is still open."""
    for pool in list(_OPEN_POOLS):
        try:
            pool.close()
        except Exception:  # noqa: BLE001 - best effort at exit
            pass


class ValidationPool:
    """A capped pool of worker processes that validates solvers (see the module docstring).

    ``workers`` processes (see :func:`pipeline.run.resources.fair_workers`), ``timeout`` seconds per
    solver (all its train and test runs together; the soft limit fires at 0.8 × timeout),
    ``memory_mb`` of address space per worker above its baseline after imports; solvers may call
    the public names of the module ``dsl`` (the real DSL unless given).  Use it as a
    context manager or call :meth:`close`.  :meth:`validate_many` calls are serialised.

    Keyword-only knobs: ``max_chunk`` caps solvers per worker call (1 disables chunking);
    ``chunk_budget`` is the time a chunk may spend before handing back its remaining solvers
    (default ``min(1, timeout / 4)`` s); ``max_tasks`` replaces a worker after that many calls
    (bounds leaks); ``start_method`` is the multiprocessing start method; ``stall_timeout`` is
    how long chunks may wait with none running and none finishing (workers that fail to start,
    or dead workers pebble cannot see) before the pool is rebuilt and they are sent again.
    """

    def __init__(
        self,
        workers: int,
        timeout: float = 5.0,
        memory_mb: int = SOLVER_MEMORY_MB,
        *,
        dsl: str = DSL_MODULE,
        max_chunk: int = 16,
        chunk_budget: float | None = None,
        max_tasks: int = 1000,
        start_method: str = "spawn",
        stall_timeout: float = 60.0,
    ):
        if int(workers) < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        if not timeout or timeout <= 0:
            raise ValueError(f"timeout must be > 0, got {timeout}")
        self.workers = int(workers)
        self.timeout = float(timeout)
        self.memory_mb = int(memory_mb)
        self.dsl = dsl
        pin_worker_threads()  # before any worker starts: they inherit this environment
        self.soft_timeout = 0.8 * self.timeout
        self.max_chunk = max(1, int(max_chunk))
        self.chunk_budget = (float(chunk_budget) if chunk_budget is not None
                             else min(1.0, self.timeout / 4))
        self.max_tasks = max(0, int(max_tasks))
        self.start_method = start_method
        # Parent-side backstop beyond pebble's own hard timeout: pebble polls every 0.1 s and
        # waits up to 3 s for a worker that blocks SIGTERM before it sends SIGKILL.
        self.margin = 5.0
        # Work pending, nothing running, nothing started or finished for this long (workers that
        # do not start, or dead ones pebble cannot see): rebuild the pool.
        self.stall_timeout = float(stall_timeout)
        self._pool: ProcessPool | None = None
        self._lock = threading.Lock()  # one validate_many at a time
        self._pool_lock = threading.RLock()  # guards creating and dropping the pebble pool
        self._closed = False
        #: Counters: worker calls, jobs resent one by one after a chunk failed, pool rebuilds.
        self.stats = {"chunks": 0, "resent_singly": 0, "pool_rebuilds": 0, "crash_retries": 0}
        _OPEN_POOLS.add(self)

    # -- lifecycle ------------------------------------------------------------------------

    def __enter__(self) -> "ValidationPool":
        """Return the pool itself."""
        return self

    def __exit__(self, *exc) -> None:
        """Close the pool (see :meth:`close`)."""
        self.close()

    def close(self) -> None:
        """Stop the workers and join them (with a deadline; survivors are killed).

        Idempotent, and callable from another thread while :meth:`validate_many` runs: that call
        then returns at once, its unfinished jobs reported as ``"error"`` (``"pool: closed ..."``).
        Afterwards no worker process of this pool is left running.
        """
        self._closed = True
        with self._pool_lock:
            self._drop_pool()
        _OPEN_POOLS.discard(self)

    def _ensure_pool(self) -> ProcessPool:
        """Return a usable pebble pool, (re)building it if the current one broke."""
        with self._pool_lock:
            if self._closed:
                raise RuntimeError("ValidationPool is closed")
            if self._pool is not None and not self._pool.active:
                self._drop_pool()
                self.stats["pool_rebuilds"] += 1
            if self._pool is None:
                self._pool = ProcessPool(
                    max_workers=self.workers,
                    max_tasks=self.max_tasks,
                    initializer=_worker_init,
                    initargs=(self.memory_mb, self.soft_timeout, self.dsl),
                    context=multiprocessing.get_context(self.start_method),
                )
            return self._pool

    @staticmethod
    def _workers_of(pool: ProcessPool) -> dict:
        """Pebble's live worker processes, pid -> process (a private attribute, guarded)."""
        try:
            return dict(pool._pool_manager.worker_manager.workers)  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - another pebble version: rely on pebble's stop alone
            return {}

    def _drop_pool(self, deadline_s: float = 15.0) -> None:
        """Stop the current pebble pool, join it within a deadline, kill any worker left."""
        with self._pool_lock:
            pool, self._pool = self._pool, None
            if pool is None:
                return
            procs = self._workers_of(pool)  # snapshot before pebble forgets them
            try:
                pool.stop()
            except Exception:  # noqa: BLE001
                pass
            joiner = threading.Thread(target=_quiet_join, args=(pool,), daemon=True,
                                      name="arcbatt-validate-join")
            joiner.start()
            joiner.join(deadline_s)
            procs.update(self._workers_of(pool))  # any started while stopping
            for proc in procs.values():  # normally all gone; kill what pebble left behind
                try:
                    if proc.is_alive():
                        proc.kill()
                        proc.join(2.0)
                except Exception:  # noqa: BLE001 - already reaped
                    pass

    # -- validation -----------------------------------------------------------------------

    def validate(self, job: ValidationJob) -> ValidationResult:
        """Validate a single job (see :meth:`validate_many`)."""
        return self.validate_many([job])[0]

    def validate_many(self, jobs: list[ValidationJob]) -> list[ValidationResult]:
        """Validate every job; return one :class:`ValidationResult` per job, in the same order.

        Returns when every job has a result: each solver is bounded by the soft and hard
        timeouts and every wait of the parent by a deadline.  Raises ``RuntimeError`` if the pool
        is closed.
        """
        if self._closed:
            raise RuntimeError("ValidationPool is closed")
        jobs = list(jobs)
        results: list[ValidationResult | None] = [None] * len(jobs)
        if not jobs:
            return []
        with self._lock:
            chunks = self._make_chunks(jobs, results)
            self._run_chunks(chunks, results)
        for i, r in enumerate(results):
            if r is None:  # cannot happen by construction; never hand back None
                results[i] = _pool_error("no result was produced")
        return results  # type: ignore[return-value]

    def _make_chunks(self, jobs: list, results: list) -> list[_Chunk]:
        """Check and convert each task's grids once, group jobs by task, cut into chunks."""
        prepared: dict[tuple, Any] = {}
        groups: dict[tuple, list[int]] = {}
        for i, job in enumerate(jobs):
            key = _task_key(job)
            if key not in prepared:
                try:
                    prepared[key] = _task_arrays(job)
                except _TaskDataError as exc:
                    prepared[key] = exc
                except Exception as exc:  # noqa: BLE001 - report bad data per job
                    prepared[key] = _TaskDataError(f"bad task data: {type(exc).__name__}: {exc}")
            if isinstance(prepared[key], Exception):
                results[i] = ValidationResult("error", str(prepared[key]), 0.0, None, 0.0)
            elif not isinstance(job.source, str):
                results[i] = ValidationResult(
                    "error", f"TypeError: solver source is {type(job.source).__name__}, not str",
                    0.0, None, 0.0)
            else:
                try:  # only source that passed this process's own checks is ever executed
                    check_solver(job.source, self.dsl)
                except InlineError as exc:
                    results[i] = ValidationResult("rejected", f"rejected: {exc}", 0.0, None, 0.0)
                    continue
                groups.setdefault(key, []).append(i)
        order = [i for idx in groups.values() for i in idx]
        if not order:
            return []
        size = max(1, min(self.max_chunk, math.ceil(len(order) / (self.workers * 4))))
        chunks = []
        for start in range(0, len(order), size):
            indices = order[start:start + size]
            tasks: list = []
            where: dict[tuple, int] = {}
            items = []
            for i in indices:
                key = _task_key(jobs[i])
                if key not in where:
                    where[key] = len(tasks)
                    tasks.append(prepared[key])
                items.append((where[key], jobs[i].source))
            chunks.append(_Chunk(indices, tasks, items))
        return chunks

    def _hard_timeout(self, chunk: _Chunk) -> float:
        """Pebble's deadline for a chunk, counted from the moment a worker takes it."""
        return self.timeout if len(chunk.items) == 1 else self.chunk_budget + self.timeout

    def _schedule(self, chunk: _Chunk):
        """Send a chunk to the pool; on a broken pool rebuild it once.  Returns a future or None."""
        args = (chunk.tasks, chunk.items, self.chunk_budget)
        hard = self._hard_timeout(chunk)
        try:
            return self._ensure_pool().schedule(_run_chunk, args=args, timeout=hard)
        except RuntimeError:  # pebble: "Unexpected error within the Pool" / "not active"
            if self._closed:
                return None
            self._drop_pool()
            self.stats["pool_rebuilds"] += 1
            try:
                return self._ensure_pool().schedule(_run_chunk, args=args, timeout=hard)
            except RuntimeError:
                return None

    def _run_chunks(self, chunks: list[_Chunk], results: list) -> None:
        """Keep a bounded number of chunks in flight, collect results, enforce the deadlines."""
        todo = list(reversed(chunks))  # pop() from the end keeps the original order
        done_q: "queue.Queue" = queue.Queue()
        inflight: dict = {}  # future -> [chunk, hard timeout, first seen running (monotonic)]
        last_progress = last_check = time.monotonic()
        try:
            self._loop(todo, done_q, inflight, results, last_progress, last_check)
        finally:
            # On a normal end nothing is in flight.  On close() or an exception (Ctrl-C) in
            # this thread, stop what still runs (pebble kills a running task's worker).
            for f in inflight:
                f.cancel()
            if self._closed:
                for entry in inflight.values():
                    for i in entry[0].indices:
                        if results[i] is None:
                            results[i] = _pool_error("the pool was closed during validation")
                for chunk in todo:
                    for i in chunk.indices:
                        if results[i] is None:
                            results[i] = _pool_error("the pool was closed during validation")

    def _loop(self, todo: list, done_q: "queue.Queue", inflight: dict, results: list,
              last_progress: float, last_check: float) -> None:
        """The body of :meth:`_run_chunks` (see there)."""
        max_inflight = 2 * self.workers
        while (todo or inflight) and not self._closed:
            while todo and len(inflight) < max_inflight:
                chunk = todo.pop()
                fut = self._schedule(chunk)
                if fut is None:
                    why = ("the pool was closed during validation" if self._closed
                           else "the worker pool cannot be started")
                    for i in chunk.indices:
                        results[i] = _pool_error(why)
                    continue
                self.stats["chunks"] += 1
                inflight[fut] = [chunk, self._hard_timeout(chunk), None]
                fut.add_done_callback(done_q.put)
            if not inflight:
                continue
            try:
                fut = done_q.get(timeout=0.1)
            except queue.Empty:
                fut = None
            now = time.monotonic()
            if fut is not None and fut in inflight:
                chunk, hard, started = inflight.pop(fut)
                last_progress = now
                todo.extend(reversed(self._collect(fut, chunk, hard, started, now, results)))
            if now - last_check < 0.1:
                continue
            last_check = now
            # Backstop deadlines: pebble should have killed a chunk past its hard timeout; if it
            # has not within the margin, cancel it (pebble then kills the worker) and move on.
            running = False
            for f, entry in list(inflight.items()):
                if entry[2] is None and f.running():
                    entry[2] = now
                    last_progress = now
                if entry[2] is not None and now - entry[2] > entry[1] + self.margin and not f.done():
                    f.cancel()
                    inflight.pop(f)
                    todo.extend(reversed(self._failed(entry[0], "timeout", None, now - entry[2],
                                                      results, backstop=True)))
                elif entry[2] is not None:
                    running = True  # a running chunk has its own deadline above
            if inflight and not running and now - last_progress > self.stall_timeout:
                # Nothing started or finished for too long (workers failing to start?):
                # rebuild the pool and send the unfinished chunks again, once.
                stalled = [entry[0] for entry in inflight.values()]
                inflight.clear()
                self._drop_pool()
                self.stats["pool_rebuilds"] += 1
                last_progress = time.monotonic()
                for chunk in stalled:
                    todo.extend(reversed(self._pool_failure(
                        chunk, f"no progress for {self.stall_timeout:.0f}s", results)))

    def _collect(self, fut, chunk: _Chunk, hard: float, started, now: float, results: list) -> list:
        """Turn a finished future into results; return the chunks to schedule again."""
        elapsed = 0.0 if started is None else now - started
        try:
            _pid, dicts = fut.result(timeout=0)  # the future is done: this never blocks
        except FuturesTimeoutError:  # pebble killed the worker at the hard timeout
            return self._failed(chunk, "timeout", None, max(elapsed, hard), results)
        except ProcessExpired as exc:  # the worker died: segfault, os._exit, OOM killer
            return self._failed(chunk, "crash", exc.exitcode, elapsed, results)
        except CancelledError:
            return self._failed(chunk, "timeout", None, max(elapsed, hard), results, backstop=True)
        except RuntimeError as exc:  # BrokenProcessPool and pebble's pool errors
            return self._pool_failure(chunk, f"{type(exc).__name__}: {exc}", results)
        except Exception as exc:  # noqa: BLE001 - e.g. an unpicklable result: report, go on
            for i in chunk.indices:
                results[i] = _pool_error(f"{type(exc).__name__}: {exc}")
            return []
        for i, d in zip(chunk.indices, dicts):
            results[i] = ValidationResult(**d)
        if len(dicts) == len(chunk.items):
            return []
        # The chunk used up its time budget: the remaining jobs go out again.
        n = len(dicts)
        return [_Chunk(chunk.indices[n:], chunk.tasks, chunk.items[n:], chunk.attempts)]

    def _failed(self, chunk: _Chunk, status: str, exitcode, elapsed: float, results: list,
                backstop: bool = False) -> list:
        """A worker crashed or was killed under a chunk: attribute it, or resend one by one."""
        if len(chunk.items) > 1:
            self.stats["resent_singly"] += len(chunk.items)
            return [_Chunk([i], chunk.tasks, [item], chunk.attempts)
                    for i, item in zip(chunk.indices, chunk.items)]
        (i,) = chunk.indices
        if status == "crash" and chunk.crashes == 0:
            # One crash may be the machine's (a worker killed from outside, out of memory on the
            # host): the solver runs again in a fresh worker and is blamed only if it crashes again.
            self.stats["crash_retries"] += 1
            return [_Chunk(chunk.indices, chunk.tasks, chunk.items, chunk.attempts, crashes=1)]
        if status == "crash":
            results[i] = ValidationResult("crash", f"crash: {exitcode}", 0.0, None, elapsed)
        else:
            how = "no answer after the hard limit; cancelled by the parent" if backstop else \
                "hard limit; worker killed"
            results[i] = ValidationResult(
                "timeout", f"timeout after {self.timeout:g}s ({how})", 0.0, None, elapsed)
        return []

    def _pool_failure(self, chunk: _Chunk, why: str, results: list) -> list:
        """The pool itself failed under a chunk: send it again once on a fresh pool, then give up."""
        if chunk.attempts >= 1:
            for i in chunk.indices:
                results[i] = _pool_error(why)
            return []
        if self._pool is not None and not self._pool.active:
            self._drop_pool()
            self.stats["pool_rebuilds"] += 1
        return [_Chunk(chunk.indices, chunk.tasks, chunk.items, chunk.attempts + 1)]


def _task_key(job: ValidationJob) -> tuple:
    """Identity of a job's task: the grid list objects it holds."""
    return id(job.train_inputs), id(job.train_outputs), id(job.test_inputs)


def _pool_error(why: str) -> ValidationResult:
    """Result for a job the pool could not run (not the solver's fault; do not cache)."""
    return ValidationResult("error", f"{POOL_ERROR_PREFIX} {why}", 0.0, None, 0.0)


def _quiet_join(pool: ProcessPool) -> None:
    """Join a stopped pebble pool, ignoring its errors (runs in a helper thread)."""
    try:
        pool.join()
    except Exception:  # noqa: BLE001
        pass
