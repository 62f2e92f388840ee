"""The solver store: per task, validated solvers deduplicated by id, best first, in the cache.

Every instance merges what it validated into the entry of the task, so instances share solvers.
"""
from __future__ import annotations

from dataclasses import dataclass

from pipeline.finish.cache_records import read_stored_solvers

STORE_NS = "store"


@dataclass(frozen=True)
class StoredSolver:
    """A validated solver of one task."""

    solver_id: str
    source: str
    train_fit: float
    size: int
    seconds: float
    test_outputs: list

    def sort_key(self):
        """Best first: full train fit, then fewer calls, then faster, then id (deterministic)."""
        return (-self.train_fit, self.size, round(self.seconds, 3), self.solver_id)

    def to_dict(self) -> dict:
        """Plain data for the cache."""
        return {"id": self.solver_id, "source": self.source, "train_fit": self.train_fit,
                "size": self.size, "seconds": self.seconds, "test_outputs": self.test_outputs}

    @classmethod
    def from_dict(cls, d: dict) -> "StoredSolver":
        """Inverse of :meth:`to_dict`."""
        return cls(str(d["id"]), str(d["source"]), float(d["train_fit"]), int(d["size"]),
                   float(d["seconds"]), list(d["test_outputs"]))


def rank_solvers(solvers) -> list[StoredSolver]:
    """Deduplicate by id (keeping the faster measurement) and sort best first."""
    best: dict[str, StoredSolver] = {}
    for s in solvers:
        old = best.get(s.solver_id)
        if old is None or s.seconds < old.seconds:
            best[s.solver_id] = s
    # Ordering must not depend on measured speed alone: ties in speed noise would make runs differ.
    return sorted(best.values(), key=lambda s: (-s.train_fit, s.size, s.solver_id))


class SolverStore:
    """Per-task solver lists kept in a cache (``cache`` may be None: memory only)."""

    def __init__(self, cache=None, limit: int = 16):
        self.cache = cache
        self.limit = limit
        self._local: dict[str, list[StoredSolver]] = {}

    def get(self, task_key: str) -> list[StoredSolver]:
        """The stored solvers of a task, best first (merging what other instances stored)."""
        solvers = list(self._local.get(task_key, []))
        if self.cache is not None:
            raw = self.cache.get(STORE_NS, task_key)
            # Each entry is checked (schema, solver source); a malformed one is dropped with a warning.
            solvers += [StoredSolver.from_dict(d) for d in read_stored_solvers(raw, task_key)]
        return rank_solvers(solvers)[: self.limit]

    def add(self, task_key: str, new) -> list[StoredSolver]:
        """Merge validated solvers into a task's entry and persist it; returns the merged list."""
        merged = rank_solvers(self.get(task_key) + list(new))[: self.limit]
        self._local[task_key] = merged
        if self.cache is not None:
            self.cache.set(STORE_NS, task_key, [s.to_dict() for s in merged])
        return merged
