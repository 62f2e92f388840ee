"""The worker side of solver validation: a process of the pool (see :mod:`pipeline.finish.validate`)
runs chunks of solvers on their tasks under a soft timeout and a memory cap."""
from __future__ import annotations

import hashlib
import linecache
import os
import resource
import signal
import time
import traceback

import numpy as np

from pipeline.finish.solver_check import DSL_MODULE, SAFE_BUILTINS, dsl_namespace
from pipeline.finish.validation_result import POOL_ERROR_PREFIX, check_grid
from solvers.xp import ndimage

N_FRAMES = 3  # traceback frames kept in error texts


class _SoftTimeout(BaseException):
    """Raised inside the solver by SIGALRM; a BaseException so ``except Exception`` can't eat it."""


# Bytes of array a worker must be able to allocate under its cap to take solvers: a cap that
# leaves less is the machine's setting, not a solver's fault, and its jobs come back as pool errors.
PROBE_BYTES = 8 * 2**20
_worker_state: dict = {}  # set by _worker_init in each worker process
_ARMED = False  # SIGALRM raises only while a job runs


def _alarm_handler(signum, frame):
    """SIGALRM handler: interrupt the running solver with :class:`_SoftTimeout`."""
    if _ARMED:
        raise _SoftTimeout()


def _worker_init(memory_mb: int, soft_timeout: float, dsl_module: str = DSL_MODULE) -> None:
    """Prepare a worker: signals, the DSL base namespace (imported once), the memory cap.

    Never raises: a failing initializer would make pebble declare the whole pool broken.  A DSL
    that does not import yet leaves an empty base namespace; solvers that use DSL names then fail
    with a NameError that names the import error.  The namespace holds the DSL's names and safe
    builtins only (:func:`pipeline.finish.solver_check.dsl_namespace`).  A worker that cannot run
    ordinary array code under its cap marks itself unusable: its jobs come back as pool errors
    (the machine's fault), never as failed solvers.
    """
    # Default action for SIGTERM: pebble's kill on a hard timeout then ends the process at once,
    # even inside a C call that holds the GIL (pebble's own handler would wait for Python code).
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGALRM, _alarm_handler)
    dsl_error = None
    try:
        base = dsl_namespace(dsl_module)
        # The DSL imports SciPy's ndimage on first use: done here, before the memory cap and
        # outside any solver's timer, since an import cut short by either leaves the module
        # half made for every later solver of this worker.
        ndimage(np)
    except BaseException as exc:  # noqa: BLE001 - any import failure must be reported, not raised
        dsl_error = f"{dsl_module} failed to import: {type(exc).__name__}: {exc}"
        base = {"__builtins__": dict(SAFE_BUILTINS), "__name__": "__solver__"}
    _worker_state.update(base=base, dsl_error=dsl_error, soft=float(soft_timeout), codes={}, memory_cap=None,
                         unusable=None)
    if memory_mb and memory_mb > 0:
        try:
            baseline = _address_space_bytes()
            cap = baseline + int(memory_mb) * 2**20
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
            _worker_state["memory_cap"] = cap
        except (ValueError, OSError, AttributeError):
            pass  # platforms without RLIMIT_AS: run uncapped
    try:  # what every solver needs, under the cap: a small BLAS call and a few MiB of arrays
        probe = np.ones((64, 64))
        float((probe @ probe).sum())
        float(np.ones(PROBE_BYTES // 8).sum())
    except BaseException as exc:  # noqa: BLE001
        _worker_state["unusable"] = f"worker {os.getpid()} cannot run array code: {type(exc).__name__}: {exc}"


def _address_space_bytes() -> int:
    """Current virtual address space of this process in bytes (0 if unknown)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _compiled(source: str):
    """Compile solver source once per worker (a small cache; retries reuse it)."""
    codes = _worker_state["codes"]
    code = codes.get(source)
    if code is None:
        filename = f"<solver {hashlib.sha1(source.encode()).hexdigest()[:10]}>"
        # Let tracebacks show the solver's lines.
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        code = compile(source, filename, "exec")
        if len(codes) >= 512:
            old = next(iter(codes))
            linecache.cache.pop(codes.pop(old).co_filename, None)
        codes[source] = code
    return code


def _format_exc(exc: BaseException, where: str | None, head: str | None = None) -> str:
    """``"Type: message"``, where it happened, and the last solver/DSL frames of the traceback."""
    if head is None:
        if isinstance(exc, SyntaxError):
            head = f"{type(exc).__name__}: {exc.msg} (line {exc.lineno})"
            if exc.text:
                head += f"\n    {exc.text.strip()}"
        else:
            head = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename != __file__]
    text = head if where is None else f"{head} [{where}]"
    if frames:
        text += "\n" + "".join(traceback.format_list(frames[-N_FRAMES:])).rstrip()
    return text


def _run_job(source: str, task: tuple) -> dict:
    """Run one solver on one task inside the worker; return a result dict."""
    global _ARMED
    if _worker_state.get("unusable"):
        return {"status": "error", "error": f"{POOL_ERROR_PREFIX} {_worker_state['unusable']}", "train_fit": 0.0,
                "test_outputs": None, "seconds": 0.0}
    train_in, train_out, test_in = task
    n_train = len(train_in)
    matches = 0
    t0 = time.perf_counter()
    # A previous solver may have masked or replaced SIGALRM/SIGTERM: restore them.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGALRM, signal.SIGTERM})
    signal.signal(signal.SIGALRM, _alarm_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    status, error, tests = "ok", None, None
    _ARMED = True
    signal.setitimer(signal.ITIMER_REAL, _worker_state["soft"])
    try:
        code = _compiled(source)
        ns = dict(_worker_state["base"])
        exec(code, ns)
        solve = ns.get("solve")
        if not callable(solve):
            raise NameError("the source defines no function solve(I)")
        problem = None  # (status, error) of the first failing train pair
        differ = []
        for i, (x, y) in enumerate(zip(train_in, train_out)):
            try:
                out = solve(x.copy())
            except (_SoftTimeout, MemoryError):
                raise
            except BaseException as exc:  # noqa: BLE001 - the solver's error is the result
                problem = problem or ("error", _format_exc(exc, f"train input {i}"))
                continue
            arr, why = check_grid(out)
            if why is not None:
                problem = problem or ("bad_output", f"train input {i}: {why}")
            elif arr.shape == y.shape and np.array_equal(arr, y):
                matches += 1
            else:
                differ.append(_describe_diff(i, arr, y))
        if problem is not None:
            status, error = problem
        elif differ:
            status = "wrong"
            error = f"{len(differ)} of {n_train} train pairs differ: " + "; ".join(differ)
        else:
            tests = []
            for i, x in enumerate(test_in):
                try:
                    out = solve(x.copy())
                except (_SoftTimeout, MemoryError):
                    raise
                except BaseException as exc:  # noqa: BLE001
                    status, error, tests = "error", _format_exc(exc, f"test input {i}"), None
                    break
                arr, why = check_grid(out)
                if why is not None:
                    status, error, tests = "bad_output", f"test input {i}: {why}", None
                    break
                tests.append(arr.astype(np.int64).tolist())
        _ARMED = False
    except _SoftTimeout as exc:
        _ARMED = False
        status, tests = "timeout", None
        head = f"timeout after {time.perf_counter() - t0:.1f}s (soft limit {_worker_state['soft']:.2f}s), stopped in:"
        error = _format_exc(exc, None, head=head)
    except MemoryError as exc:
        _ARMED = False
        status, tests = "memory", None
        cap = _worker_state.get("memory_cap")
        limit = f" (address-space cap {cap / 2**20:.0f} MiB)" if cap else ""
        error = _format_exc(exc, None) + ("" if not limit else "\n" + limit.strip())
    except BaseException as exc:  # noqa: BLE001 - compile errors, exec errors, anything else
        _ARMED = False
        status, tests = "error", None
        error = _format_exc(exc, None)
    finally:
        _ARMED = False
        signal.setitimer(signal.ITIMER_REAL, 0)
    if status == "error" and _worker_state.get("dsl_error") and error and error.startswith("NameError"):
        error += f"\n({_worker_state['dsl_error']})"
    return {
        "status": status,
        "error": error,
        "train_fit": matches / n_train if n_train else 0.0,
        "test_outputs": tests,
        "seconds": time.perf_counter() - t0,
    }


def _describe_diff(i: int, got: np.ndarray, want: np.ndarray) -> str:
    """Say how a train output differs from the expected one."""
    if got.shape != want.shape:
        return f"pair {i}: got {got.shape[0]}x{got.shape[1]}, expected {want.shape[0]}x{want.shape[1]}"
    n = int(np.count_nonzero(got != want))
    return f"pair {i}: {n} of {want.size} cells differ"


def _run_chunk(tasks: list, items: list, budget: float) -> tuple:
    """Worker entry point: run ``items`` (task index, source) in order.

    Stops starting new solvers once ``budget`` seconds have passed (at least one always runs);
    the parent sends the rest again.  Returns ``(pid, [result dict, ...])``.
    """
    t0 = time.perf_counter()
    results = []
    for ti, source in items:
        if results and time.perf_counter() - t0 > budget:
            break
        results.append(_run_job(source, tasks[ti]))
    return os.getpid(), results
