"""Validation pool: real worker processes, real kills, real timeouts.

Hostile solvers (endless loops, blocking C calls with SIGALRM masked, huge allocations, segfaults,
``os._exit``) must each come back with the right status within their timeout plus 2 s, the pool
must keep serving after each one, and no worker may survive ``close()``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time

import numpy as np
import psutil
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pipeline.finish.validate as validate_mod  # noqa: E402
from pipeline.finish.validate import (  # noqa: E402
    STATUSES,
    ValidationJob,
    ValidationPool,
    ValidationResult,
    check_grid,
)

TIMEOUT = 1.0
SLACK = 2.0  # allowed beyond the timeout, for the kill and the report

GRID_A = [[1, 2, 3], [4, 5, 6]]
GRID_B = [[7, 0], [0, 7], [3, 3]]
GRID_T = [[9, 8, 7, 6]]
IDENTITY = ([GRID_A, GRID_B], [GRID_A, GRID_B], [GRID_T])

GOOD = "def solve(I):\n    return I\n"

HOSTILE_DSL = "hostile_dsl"  # tests/hostile_dsl.py: real harm, offered as DSL primitives


def calls(name: str, *args) -> str:
    """A straight-line solver that calls the hostile primitive ``name`` on its input."""
    extra = "".join(f", {a!r}" for a in args)
    return f"def solve(I):\n    O = {name}(I{extra})\n    return O\n"


HOSTILE = {
    "endless_loop": (calls("endless_loop"), "timeout", "soft limit"),
    "sleep_alarm_masked": (calls("sleep_alarm_masked"), "timeout", "hard limit"),
    "select_alarm_masked": (calls("select_alarm_masked"), "timeout", "hard limit"),
    "bytearray_10gb": (calls("bytearray_gb", 10), "memory", "MemoryError"),
    "numpy_10gb": (calls("numpy_gb", 10), "memory", "MemoryError"),
    "segfault": (calls("segfault"), "crash", "crash: -11"),
    "os_exit_3": (calls("exit_with", 3), "crash", "crash: 3"),
    "exception": (calls("divide_by_zero"), "error", "ZeroDivisionError: division by zero"),
    "wrong_output": (calls("ones"), "wrong", "differ"),
    "string_output": (calls("text"), "bad_output", "returned str"),
    "3d_output": (calls("cube"), "bad_output", "3-D"),
    "colour_12": (calls("colour_12"), "bad_output", "colour 12"),
}


def job(source: str, task=IDENTITY) -> ValidationJob:
    """A job for ``source`` on ``task`` (train inputs, train outputs, test inputs)."""
    return ValidationJob(source, task[0], task[1], task[2])


def timed(pool: ValidationPool, source: str, task=IDENTITY) -> tuple[ValidationResult, float]:
    """Validate one solver; return its result and the wall time of the call."""
    t0 = time.monotonic()
    result = pool.validate_many([job(source, task)])[0]
    return result, time.monotonic() - t0


def worker_children(before: set[int], mine: ValidationPool | None = None) -> list[psutil.Process]:
    """Live child processes of this test process started after ``before``.

    Left out: multiprocessing's resource tracker (a shared helper that ends with this process),
    and the workers of *other* open pools (the module's pool may be replacing a killed worker
    while a test runs); the workers of ``mine`` are kept.
    """
    others: set[int] = set()
    for pool in list(validate_mod._OPEN_POOLS):
        if pool is not mine and pool._pool is not None:
            others.update(ValidationPool._workers_of(pool._pool))
    out = []
    for child in psutil.Process().children(recursive=True):
        if child.pid in before or child.pid in others:
            continue
        try:
            if child.status() == psutil.STATUS_ZOMBIE:
                continue
            if "resource_tracker" in " ".join(child.cmdline()):
                continue
        except psutil.NoSuchProcess:
            continue
        out.append(child)
    return out


def _running(proc: psutil.Process) -> bool:
    """True while ``proc`` runs (a zombie does not), without reaping it."""
    try:
        return proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.fixture(scope="module")
def pool():
    """One warmed pool of 2 workers for the module; closed (and checked) at the end."""
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    p = ValidationPool(2, timeout=TIMEOUT, memory_mb=1024, dsl=HOSTILE_DSL)
    assert p.validate_many([job(GOOD)] * 4)[0].status == "ok"  # spawn and initialise workers
    yield p
    p.close()
    assert worker_children(before) == []


def test_identity_solver_is_ok_with_test_outputs(pool):
    result, _ = timed(pool, GOOD)
    assert result.status == "ok", result.error
    assert result.error is None
    assert result.train_fit == 1.0
    assert result.test_outputs == [GRID_T]
    assert isinstance(result.test_outputs[0][0][0], int)
    assert result.seconds >= 0


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_solver_is_reported_and_pool_keeps_serving(pool, name):
    source, status, fragment = HOSTILE[name]
    result, wall = timed(pool, source)
    assert result.status == status, result.error
    assert fragment in (result.error or ""), result.error
    assert wall <= TIMEOUT + SLACK, f"{name} took {wall:.2f}s"
    assert result.test_outputs is None
    after, _ = timed(pool, GOOD)
    assert after.status == "ok", after.error
    assert after.test_outputs == [GRID_T]


def test_error_carries_type_message_and_solver_frames(pool):
    result, _ = timed(pool, calls("index_99"))
    assert result.status == "error"
    assert result.error.startswith("IndexError: index 99 is out of bounds")
    assert "train input 0" in result.error
    assert "in index_99" in result.error and "in solve" in result.error
    assert "return g[99]" in result.error  # the primitive's own line is shown


def test_syntax_error_and_missing_solve_are_rejected_before_running(pool):
    result, _ = timed(pool, "def solve(I):\n    return (\n")
    assert result.status == "rejected" and "syntax error" in result.error
    result, _ = timed(pool, "x = 1\n")
    assert result.status == "rejected" and "solve" in result.error


@pytest.mark.parametrize("source, fragment", [
    ("import os\ndef solve(I):\n    os._exit(3)\n", "top level"),
    ("def solve(I):\n    O = __import__('os')\n    return O\n", "__import__"),
    ("def solve(I):\n    O = __import__('os').system('true')\n    return O\n", "Attribute"),
    ("def solve(I):\n    O = eval('1')\n    return O\n", "eval"),
    ("def solve(I):\n    O = I.tolist()\n    return O\n", "callee"),
    ("def solve(I):\n    O = rot90(I)\n    return O\n", "rot90"),  # not a name of this DSL
])
def test_code_outside_the_inliner_checks_or_the_dsl_never_runs(pool, source, fragment):
    result, wall = timed(pool, source)
    assert result.status == "rejected" and fragment in result.error, result.error
    assert wall < 1.0


def test_partial_fit_is_wrong_with_fraction(pool):
    result, _ = timed(pool, calls("zero_unless_two_rows"))
    assert result.status == "wrong"
    assert result.train_fit == pytest.approx(0.5)
    assert "pair 1" in result.error and "pair 0" not in result.error


def test_failure_on_test_input_only(pool):
    result, _ = timed(pool, calls("fail_on_one_row"))
    assert result.status == "error"
    assert "ValueError: no result" in result.error and "test input 0" in result.error
    assert result.train_fit == 1.0 and result.test_outputs is None


def test_solver_may_not_corrupt_the_task(pool):
    result, _ = timed(pool, calls("paint_corner"))
    assert result.status == "wrong"  # its own copy was changed, the expected outputs were not
    after, _ = timed(pool, GOOD)
    assert after.status == "ok"


def test_numpy_outputs_of_other_int_dtypes_are_accepted(pool):
    result, _ = timed(pool, calls("as_int64"))
    assert result.status == "ok" and result.test_outputs == [GRID_T]


def test_bad_task_data_is_reported_per_job(pool):
    bad = ([[[1, 11]]], [[[1, 1]]], [[[0]]])
    results = pool.validate_many([job(GOOD, bad), job(GOOD)])
    assert results[0].status == "error" and "bad task data" in results[0].error
    assert results[1].status == "ok"


def test_mixed_batch_keeps_order_and_bounds(pool):
    names = list(HOSTILE)
    sources = []
    for name in names:
        sources += [HOSTILE[name][0], GOOD]
    t0 = time.monotonic()
    results = pool.validate_many([job(s) for s in sources])
    wall = time.monotonic() - t0
    for k, name in enumerate(names):
        bad, good = results[2 * k], results[2 * k + 1]
        assert bad.status == HOSTILE[name][1], (name, bad.error)
        assert good.status == "ok", (name, good.error)
    # 3 hard timeouts (each possibly twice: in its chunk, then alone) and 1 soft one on 2 workers.
    assert wall < 15, wall


def test_many_good_solvers_of_one_task_in_chunks(pool):
    sources = [f"def solve(I):\n    # variant {i}\n    return I\n" for i in range(200)]
    results = pool.validate_many([job(s) for s in sources])
    assert [r.status for r in results] == ["ok"] * 200
    assert all(r.test_outputs == [GRID_T] for r in results)


def test_numpy_task_grids_are_accepted(pool):
    task = ([np.array(GRID_A, dtype=np.uint8)], [np.array(GRID_A)], [np.array(GRID_T, dtype=np.int32)])
    result, _ = timed(pool, GOOD, task)
    assert result.status == "ok" and result.test_outputs == [GRID_T]


def test_exit_code_zero_is_bounded(pool):
    # pebble does not report a worker that exits with code 0: the hard timeout catches it.
    result, wall = timed(pool, calls("exit_with", 0))
    assert result.status in {"crash", "timeout"}
    assert wall <= TIMEOUT + SLACK


def test_blocked_sigterm_is_still_killed(pool):
    # Masking SIGTERM as well makes pebble wait 3 s before SIGKILL; still bounded, still reported.
    result, wall = timed(pool, calls("sleep_all_masked"))
    assert result.status == "timeout", result.error
    assert wall <= TIMEOUT + 3.0 + SLACK
    assert timed(pool, GOOD)[0].status == "ok"


def test_no_worker_survives_close():
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    p = ValidationPool(2, timeout=TIMEOUT, dsl=HOSTILE_DSL)
    results = p.validate_many([job(GOOD), job(HOSTILE["segfault"][0]), job(HOSTILE["sleep_alarm_masked"][0]),
                               job(GOOD)])
    assert [r.status for r in results] == ["ok", "crash", "timeout", "ok"]
    assert len(worker_children(before, mine=p)) >= 1
    t0 = time.monotonic()
    p.close()
    assert time.monotonic() - t0 < 10
    assert worker_children(before) == []
    p.close()  # idempotent
    with pytest.raises(RuntimeError):
        p.validate_many([job(GOOD)])


def test_close_from_another_thread_while_a_solver_blocks():
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    p = ValidationPool(1, timeout=30.0, dsl=HOSTILE_DSL)
    assert p.validate_many([job(GOOD)])[0].status == "ok"
    done = []
    t = threading.Thread(target=lambda: done.append(p.validate_many([job(HOSTILE["sleep_alarm_masked"][0])])),
                         daemon=True)
    t.start()
    time.sleep(0.5)  # the solver is now blocked in time.sleep with SIGALRM masked
    t0 = time.monotonic()
    p.close()
    t.join(5)
    assert time.monotonic() - t0 < 5
    assert done and done[0][0].status == "error" and done[0][0].error.startswith("pool:")
    assert worker_children(before) == []


def test_pool_recovers_when_idle_workers_are_killed_from_outside():
    # pebble declares the whole pool broken when a worker dies with no task running (OOM killer,
    # a stray kill); the pool must rebuild itself and go on.
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    with ValidationPool(2, timeout=TIMEOUT) as p:
        assert p.validate_many([job(GOOD)] * 4)[0].status == "ok"
        workers = worker_children(before, mine=p)
        assert workers
        for w in workers:
            w.kill()  # not reaped here: pebble must see the death itself (waitpid)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(_running(w) for w in workers):
            time.sleep(0.05)
        time.sleep(0.3)  # let pebble notice
        results = p.validate_many([job(GOOD)] * 6)
        assert [r.status for r in results] == ["ok"] * 6, [r.error for r in results]
        assert p.stats["pool_rebuilds"] >= 1
    assert worker_children(before) == []


def test_stall_backstop_when_pebble_is_blind():
    # Someone else reaps the killed workers (here psutil's wait), so pebble believes they live and
    # its tasks never start: the no-progress deadline must rebuild the pool, and the jobs succeed.
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    with ValidationPool(1, timeout=TIMEOUT, stall_timeout=3.0) as p:  # > a worker's spawn time
        assert p.validate_many([job(GOOD)])[0].status == "ok"
        workers = worker_children(before, mine=p)
        for w in workers:
            w.kill()
        psutil.wait_procs(workers, timeout=5)  # reaps them behind pebble's back
        t0 = time.monotonic()
        results = p.validate_many([job(GOOD)] * 3)
        wall = time.monotonic() - t0
        assert [r.status for r in results] == ["ok"] * 3, [r.error for r in results]
        assert p.stats["pool_rebuilds"] >= 1
        assert wall < p.stall_timeout + 5
    assert worker_children(before) == []


def test_empty_batch():
    with ValidationPool(1, timeout=TIMEOUT) as p:
        assert p.validate_many([]) == []


def test_result_dict_roundtrip_json_and_msgpack():
    r = ValidationResult("ok", None, 1.0, [[[1, 2], [3, 4]]], 0.25)
    d = r.to_dict()
    assert ValidationResult.from_dict(json.loads(json.dumps(d))) == r
    msgpack = pytest.importorskip("msgpack")
    assert ValidationResult.from_dict(msgpack.unpackb(msgpack.packb(d))) == r
    w = ValidationResult("wrong", "1 of 2 train pairs differ", 0.5, None, 0.0)
    assert ValidationResult.from_dict(w.to_dict()) == w
    with pytest.raises(ValueError):
        ValidationResult.from_dict({"status": "great", "train_fit": 1.0})
    assert set(STATUSES) == {"ok", "wrong", "error", "timeout", "crash", "memory", "bad_output", "rejected"}


@pytest.mark.parametrize("value, fragment", [
    ("abc", "returned str"),
    (5, "returned int"),
    ([[1, 2], [3]], "not a rectangular grid"),
    ([], "expected 2-D"),
    (np.zeros((31, 2), dtype=np.uint8), "31x2"),
    (np.zeros((0, 3), dtype=np.uint8), "0x3"),
    (np.ones((2, 2), dtype=bool), "dtype bool"),
    (np.ones((2, 2), dtype=float), "dtype float64"),
    ([[1, -1]], "colour -1"),
    ([["1"]], "dtype <U1"),
])
def test_check_grid_rejects(value, fragment):
    arr, why = check_grid(value)
    assert arr is None and fragment in why


def test_check_grid_accepts():
    for value in ([[0, 9]], ((1,),), np.full((30, 30), 9, dtype=np.int64)):
        arr, why = check_grid(value)
        assert why is None and arr.ndim == 2


def _dsl_rot90():
    try:
        from solvers.dsl import rot90
    except Exception:  # the DSL is being written; skip until it imports
        return None
    return rot90


@pytest.mark.skipif(_dsl_rot90() is None, reason="solvers.dsl does not import yet")
def test_dsl_solver_rot90():
    rot90 = _dsl_rot90()
    ins = [np.array(GRID_A, dtype=np.uint8), np.array(GRID_B, dtype=np.uint8)]
    outs = [np.asarray(rot90(g)).tolist() for g in ins]
    task = ([g.tolist() for g in ins], outs, [GRID_T])
    with ValidationPool(1, timeout=5.0) as real:
        result, _ = timed(real, "def solve(I):\n    return rot90(I)\n", task)
    assert result.status == "ok", result.error
    assert result.test_outputs == [np.asarray(rot90(np.array(GRID_T, dtype=np.uint8))).tolist()]


def test_a_64_core_host_validates_what_a_2_core_host_does(monkeypatch):
    """On a 64-core host the numeric libraries start 64 threads unless told otherwise (here: as a
    user's environment would tell them), and the default pool has 4 workers: the workers still run
    one BLAS thread each under the same memory cap and reach the same verdicts as 2 workers."""
    sources = [GOOD, calls("blas_threads"), calls("as_int64"), calls("ones"), calls("divide_by_zero"),
               calls("bytearray_gb", 10), calls("segfault")] * 2
    with ValidationPool(2, timeout=TIMEOUT, dsl=HOSTILE_DSL) as small:
        expected = [(r.status, r.test_outputs) for r in small.validate_many([job(s) for s in sources])]
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.setenv(name, "64")
    from pipeline.run.resources import MAX_DEFAULT_WORKERS

    with ValidationPool(MAX_DEFAULT_WORKERS, timeout=TIMEOUT, dsl=HOSTILE_DSL) as large:
        got = [(r.status, r.test_outputs) for r in large.validate_many([job(s) for s in sources])]
        assert os.environ["OPENBLAS_NUM_THREADS"] == "1"  # what the workers were started with
    assert got == expected
    assert expected[1][0] == "ok"  # the BLAS solver saw one thread and ran under the cap


def test_a_worker_that_cannot_run_array_code_is_a_pool_error_not_a_failed_solver():
    """A cap too small for OpenBLAS's buffers (what 64 BLAS threads did under a real cap): the
    worker fails its own check before any solver runs, and the jobs come back as pool errors
    (not cached, retried by the caller), never as crashed or failed solvers."""
    with ValidationPool(1, timeout=TIMEOUT, memory_mb=1, stall_timeout=10.0, dsl=HOSTILE_DSL) as p:
        results = p.validate_many([job(GOOD), job(calls("as_int64"))])
    for r in results:
        assert r.status == "error" and r.error.startswith("pool:"), r
