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

HOSTILE = {
    "endless_loop": ("def solve(I):\n    while True:\n        pass\n", "timeout", "soft limit"),
    "sleep_alarm_masked": (
        "import signal, time\n"
        "def solve(I):\n"
        "    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})\n"
        "    time.sleep(100)\n"
        "    return I\n",
        "timeout", "hard limit"),
    "select_alarm_masked": (
        "import select, signal\n"
        "def solve(I):\n"
        "    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})\n"
        "    select.select([], [], [], 100)\n"
        "    return I\n",
        "timeout", "hard limit"),
    "bytearray_10gb": ("def solve(I):\n    x = bytearray(10 * 2**30)\n    return I\n",
                       "memory", "MemoryError"),
    "numpy_10gb": ("import numpy\n"
                   "def solve(I):\n    x = numpy.ones(10 * 2**30, dtype=numpy.uint8)\n    return I\n",
                   "memory", "MemoryError"),
    "segfault": ("import ctypes\ndef solve(I):\n    ctypes.string_at(0)\n    return I\n",
                 "crash", "crash: -11"),
    "os_exit_3": ("import os\ndef solve(I):\n    os._exit(3)\n", "crash", "crash: 3"),
    "exception": ("def solve(I):\n    x = 0\n    return 1 / x\n",
                  "error", "ZeroDivisionError: division by zero"),
    "wrong_output": ("def solve(I):\n    return I * 0 + 1\n", "wrong", "differ"),
    "string_output": ("def solve(I):\n    return 'abc'\n", "bad_output", "returned str"),
    "3d_output": ("def solve(I):\n    return [[[1, 2]]]\n", "bad_output", "3-D"),
    "colour_12": ("def solve(I):\n    return [[12]]\n", "bad_output", "colour 12"),
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
    p = ValidationPool(2, timeout=TIMEOUT, memory_mb=1024)
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
    src = "def helper(g):\n    return g[99]\n\ndef solve(I):\n    x = helper(I)\n    return x\n"
    result, _ = timed(pool, src)
    assert result.status == "error"
    assert result.error.startswith("IndexError: index 99 is out of bounds")
    assert "train input 0" in result.error
    assert "in helper" in result.error and "in solve" in result.error
    assert "return g[99]" in result.error  # the solver's own line is shown


def test_syntax_error_and_missing_solve(pool):
    result, _ = timed(pool, "def solve(I):\n    return (\n")
    assert result.status == "error" and result.error.startswith("SyntaxError")
    result, _ = timed(pool, "x = 1\n")
    assert result.status == "error" and "solve" in result.error


def test_partial_fit_is_wrong_with_fraction(pool):
    src = "def solve(I):\n    return I if I.shape[0] == 2 else I * 0\n"
    result, _ = timed(pool, src)
    assert result.status == "wrong"
    assert result.train_fit == pytest.approx(0.5)
    assert "pair 1" in result.error and "pair 0" not in result.error


def test_failure_on_test_input_only(pool):
    src = "def solve(I):\n    if I.shape[0] == 1:\n        raise ValueError('no result')\n    return I\n"
    result, _ = timed(pool, src)
    assert result.status == "error"
    assert "ValueError: no result" in result.error and "test input 0" in result.error
    assert result.train_fit == 1.0 and result.test_outputs is None


def test_solver_may_not_corrupt_the_task(pool):
    src = "def solve(I):\n    I[0, 0] = 9\n    return I\n"
    result, _ = timed(pool, src)
    assert result.status == "wrong"  # its own copy was changed, the expected outputs were not
    after, _ = timed(pool, GOOD)
    assert after.status == "ok"


def test_numpy_outputs_of_other_int_dtypes_are_accepted(pool):
    src = "import numpy as np\ndef solve(I):\n    return I.astype(np.int64)\n"
    result, _ = timed(pool, src)
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
    result, wall = timed(pool, "import os\ndef solve(I):\n    os._exit(0)\n")
    assert result.status in {"crash", "timeout"}
    assert wall <= TIMEOUT + SLACK


def test_blocked_sigterm_is_still_killed(pool):
    # Masking SIGTERM as well makes pebble wait 3 s before SIGKILL; still bounded, still reported.
    src = ("import signal, time\n"
           "def solve(I):\n"
           "    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM, signal.SIGTERM})\n"
           "    time.sleep(100)\n"
           "    return I\n")
    result, wall = timed(pool, src)
    assert result.status == "timeout", result.error
    assert wall <= TIMEOUT + 3.0 + SLACK
    assert timed(pool, GOOD)[0].status == "ok"


def test_no_worker_survives_close():
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    p = ValidationPool(2, timeout=TIMEOUT)
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
    p = ValidationPool(1, timeout=30.0)
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
    assert set(STATUSES) == {"ok", "wrong", "error", "timeout", "crash", "memory", "bad_output"}


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
def test_dsl_solver_rot90(pool):
    rot90 = _dsl_rot90()
    ins = [np.array(GRID_A, dtype=np.uint8), np.array(GRID_B, dtype=np.uint8)]
    outs = [np.asarray(rot90(g)).tolist() for g in ins]
    task = ([g.tolist() for g in ins], outs, [GRID_T])
    result, _ = timed(pool, "def solve(I):\n    return rot90(I)\n", task)
    assert result.status == "ok", result.error
    assert result.test_outputs == [np.asarray(rot90(np.array(GRID_T, dtype=np.uint8))).tolist()]
