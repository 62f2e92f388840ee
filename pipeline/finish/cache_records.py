"""Schemas of the records a run reads back from the cache; a record that fails one is a miss.

The cache is shared, and anything that can write to it can put any well-formed msgpack value under
any key. Every record is therefore checked field by field when it is read, against the task it
claims to describe: grids are ARC grids, counts match the task's test inputs, numbers are numbers
in range, and solver source passes this process's own checks (:func:`check_solver`) and is in the
inliner's canonical form with the id it claims. A record that fails is dropped with one warning
(:class:`CacheRecordWarning`) and the run goes on as if it had not been there.

What a schema cannot tell is whether a well-formed record tells the truth; signing shared values
(``ARCBATT_CACHE_KEY``, see cache/README.md) is what keeps others from planting those.
"""
from __future__ import annotations

import math
import warnings

from pipeline.finish.inline import InlineError, solver_id
from pipeline.finish.solver_check import check_solver
from pipeline.finish.validate import check_grid

TASK_STATUSES = ("solved", "unsolved")


class CacheRecordWarning(UserWarning):
    """A record read from the cache did not match its schema; it was treated as a miss."""


class RecordError(ValueError):
    """What is wrong with a record (one line)."""


def warn_bad(ns: str, key: str, why: str) -> None:
    """Say in one line that the record at (``ns``, ``key``) was dropped, and why."""
    warnings.warn(f"arcbatt: ignored a malformed {ns!r} record from the cache ({key[:40]}): {why}",
                  CacheRecordWarning, stacklevel=3)


def _grid(value, what: str) -> list:
    if not isinstance(value, list):
        raise RecordError(f"{what} is a {type(value).__name__}, not a grid")
    arr, why = check_grid(value)
    if why is not None:
        raise RecordError(f"{what}: {why}")
    return arr.astype(int).tolist()


def _number(value, what: str, low: float = 0.0, high: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise RecordError(f"{what} is {value!r:.40}, not a number in {low:g}..{high:g}")
    return float(value)


def checked_program(source, what: str = "program") -> str:
    """``source`` if it is canonical solver source that may run here, else raise RecordError."""
    if not isinstance(source, str):
        raise RecordError(f"{what} is a {type(source).__name__}, not source text")
    try:
        canonical = check_solver(source).source
    except InlineError as exc:
        raise RecordError(f"{what} fails the solver checks: {exc}") from None
    if canonical != source:
        raise RecordError(f"{what} is not in canonical form")
    return source


def task_record(value, task) -> dict:
    """The checked task record (status, program, train_fit, seconds, attempts) for ``task``."""
    if not isinstance(value, dict):
        raise RecordError(f"a {type(value).__name__}, not a map")
    status = value.get("status")
    if status not in TASK_STATUSES:
        raise RecordError(f"status {status!r:.40}")
    program = value.get("program")
    if status == "solved":
        program = checked_program(program)
    elif program is not None:
        raise RecordError("an unsolved task with a program")
    attempts = value.get("attempts")
    n_tests = len(task.test_inputs)
    if not isinstance(attempts, list) or len(attempts) != n_tests:
        raise RecordError(f"attempts are not a list of {n_tests}")
    clean = []
    for i, pair in enumerate(attempts):
        if not isinstance(pair, dict) or set(pair) != {"attempt_1", "attempt_2"}:
            raise RecordError(f"attempts[{i}] is not {{attempt_1, attempt_2}}")
        clean.append({k: _grid(pair[k], f"attempts[{i}].{k}") for k in ("attempt_1", "attempt_2")})
    return {"id": task.id, "status": status, "program": program,
            "train_fit": _number(value.get("train_fit"), "train_fit", 0.0, 1.0),
            "seconds": _number(value.get("seconds"), "seconds"), "attempts": clean}


def stored_solver(value) -> dict:
    """One checked entry of a task's solver list (the form of ``StoredSolver.to_dict``)."""
    if not isinstance(value, dict):
        raise RecordError(f"a {type(value).__name__}, not a map")
    source = checked_program(value.get("source"), "source")
    if value.get("id") != solver_id(source):
        raise RecordError("id does not match the source")
    size = value.get("size")
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise RecordError(f"size {size!r:.40}")
    outputs = value.get("test_outputs")
    if not isinstance(outputs, list) or not outputs:
        raise RecordError("test_outputs are not a list of grids")
    return {"id": value["id"], "source": source,
            "train_fit": _number(value.get("train_fit"), "train_fit", 0.0, 1.0), "size": size,
            "seconds": _number(value.get("seconds"), "seconds"),
            "test_outputs": [_grid(g, f"test_outputs[{i}]") for i, g in enumerate(outputs)]}


def read_task_record(value, task, key: str) -> dict | None:
    """:func:`task_record`, or None (with a warning) when ``value`` fails the schema."""
    try:
        return task_record(value, task)
    except RecordError as exc:
        warn_bad("task", key, str(exc))
        return None


def read_stored_solvers(value, key: str) -> list[dict]:
    """The entries of a task's solver list that pass the schema (a warning for the others)."""
    if value is None:
        return []
    if not isinstance(value, list):
        warn_bad("store", key, f"a {type(value).__name__}, not a list")
        return []
    solvers = []
    for i, entry in enumerate(value):
        try:
            solvers.append(stored_solver(entry))
        except RecordError as exc:
            warn_bad("store", key, f"entry {i}: {exc}")
    return solvers
