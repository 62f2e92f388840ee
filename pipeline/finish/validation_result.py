"""What validating a solver gives: the job, its result, and the check of a grid a solver returns."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

#: Every status a :class:`ValidationResult` may carry.
STATUSES = ("ok", "wrong", "error", "timeout", "crash", "memory", "bad_output", "rejected")
MAX_SIDE = 30  # ARC grids are 1x1 to 30x30
POOL_ERROR_PREFIX = "pool:"


@dataclass(frozen=True)
class ValidationResult:
    """Outcome of validating one solver on one task.

    ``status`` is one of :data:`STATUSES`.  ``error`` is ``None`` for ``"ok"`` and otherwise the
    real reason: the exception type and message plus the last frames of the traceback, the exit
    code of a crash (``"crash: -11"``), the timeout, or for ``"wrong"`` which train pairs differ.
    ``train_fit`` is the fraction of train pairs reproduced exactly.  ``test_outputs`` holds one
    grid (list of lists of ints) per test input when the status is ``"ok"``, else ``None``.
    ``seconds`` is the time the job took inside the worker (compile, runs and checks; for a
    killed worker, the time until the kill as seen by the parent).
    """

    status: str
    error: str | None
    train_fit: float
    test_outputs: list | None
    seconds: float

    def to_dict(self) -> dict:
        """Return a JSON- and msgpack-safe dict (only str, float, None and nested int lists)."""
        return {
            "status": self.status,
            "error": self.error,
            "train_fit": float(self.train_fit),
            "test_outputs": None if self.test_outputs is None else _plain_grids(self.test_outputs),
            "seconds": float(self.seconds),
        }

    @classmethod
    def from_dict(cls, d: dict) -> "ValidationResult":
        """Rebuild a result from :meth:`to_dict` output (for example read back from the cache).

        Raises ``ValueError`` on an unknown status or a missing field, so a corrupt cache entry
        is noticed instead of being trusted.
        """
        try:
            status = str(d["status"])
            error = d.get("error")
            train_fit = float(d["train_fit"])
            test_outputs = d.get("test_outputs")
            seconds = float(d.get("seconds", 0.0))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not a ValidationResult dict: {exc!r}") from exc
        if status not in STATUSES:
            raise ValueError(f"unknown validation status {status!r}")
        return cls(
            status=status,
            error=None if error is None else str(error),
            train_fit=train_fit,
            test_outputs=None if test_outputs is None else _plain_grids(test_outputs),
            seconds=seconds,
        )

    @property
    def ok(self) -> bool:
        """True when the solver reproduced every train pair and produced every test output."""
        return self.status == "ok"


@dataclass(frozen=True, eq=False)
class ValidationJob:
    """One solver to validate on one task.

    ``source`` is the solver's Python source (defining ``solve(I)``); the grids are lists of lists
    of ints or 2-D numpy arrays.  Jobs that share the *same* list objects for their grids (the
    usual case: many solvers of one task) have the task's grids converted and sent once.
    """

    source: str
    train_inputs: list
    train_outputs: list
    test_inputs: list


def _plain_grids(grids: Any) -> list:
    """Convert a list of grids (arrays or nested sequences) to lists of lists of Python ints."""
    out = []
    for g in grids:
        if isinstance(g, np.ndarray):
            out.append(g.astype(np.int64).tolist())
        else:
            out.append([[int(v) for v in row] for row in g])
    return out


def check_grid(out: Any) -> tuple[np.ndarray | None, str | None]:
    """Check that ``out`` is an ARC grid; return ``(array, None)`` or ``(None, what is wrong)``.

    Accepted: a 2-D numpy array or a list/tuple of equal-length rows, integer cells (not bool)
    in 0..9, both sides in 1..30.
    """
    if isinstance(out, np.ndarray):
        arr = out
    elif isinstance(out, (list, tuple)):
        try:
            arr = np.array(out)
        except (ValueError, TypeError) as exc:
            return None, f"not a rectangular grid: {type(exc).__name__}: {_short(str(exc))}"
    else:
        return None, f"returned {type(out).__name__}, expected a 2-D grid of ints 0..9"
    if arr.ndim != 2:
        return None, f"returned a {arr.ndim}-D {type(out).__name__} of shape {tuple(arr.shape)}, expected 2-D"
    h, w = arr.shape
    if not (1 <= h <= MAX_SIDE and 1 <= w <= MAX_SIDE):
        return None, f"grid of shape {h}x{w}, sides must be 1..{MAX_SIDE}"
    if arr.dtype.kind not in "iu":
        return None, f"cells of dtype {arr.dtype}, expected ints 0..9"
    lo, hi = int(arr.min()), int(arr.max())
    if lo < 0 or hi > 9:
        bad = lo if lo < 0 else hi
        return None, f"colour {bad} out of range 0..9"
    return arr, None


def _short(text: str, limit: int = 300) -> str:
    """Shorten a message for an error text."""
    return text if len(text) <= limit else text[: limit - 3] + "..."
