"""How far a running search is, across its shard processes.

Each shard writes one row of a small table of int64 counters (level, transforms done and total on
that level, states, tasks fitted so far, tasks) into a memory-mapped file; the run's progress
display reads the whole table whenever it likes. A file rather than a pipe or a queue: a shard never
waits for a reader, nothing is sent per update, and a writer is two strings (path, row) that
cross to a worker process as a call's argument. Updates are a few stores, so a shard reports
after every transform without cost; a reader may see a row half-updated, which only shifts a
figure by one transform's worth.
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass

import numpy as np

FIELDS = ("level", "done", "total", "states", "fitted", "tasks")


@dataclass(frozen=True)
class SearchSnapshot:
    """The shards' counters summed: the lowest level still running and the share of its transforms done."""

    depth: int
    level: int  # the lowest level any shard is on (1..depth); 0 before the first report
    level_fraction: float  # that level's transforms done, averaged over the shards (finished ones count 1)
    states: int
    fitted: int  # tasks with a program fitting every train pair so far
    shards: int


class BoardWriter:
    """A shard's callback ``(level, done, total, states, fitted)``: writes its row of the table.

    Picklable (path and row); the file is opened on first use in whichever process calls it.
    """

    def __init__(self, path: str, row: int, rows: int, tasks: int):
        self.path, self.row, self.rows, self.tasks = path, row, rows, tasks
        self._table = None

    def __getstate__(self):
        return {"path": self.path, "row": self.row, "rows": self.rows, "tasks": self.tasks, "_table": None}

    def __call__(self, level: int, done: int, total: int, states: int, fitted: int) -> None:
        if self._table is None:
            try:
                self._table = np.memmap(self.path, dtype=np.int64, mode="r+", shape=(self.rows, len(FIELDS)))
            except (OSError, ValueError):  # the run ended and removed the board: nobody is reading
                return
        self._table[self.row] = (level, done, total, states, fitted, self.tasks)


class ShardBoard:
    """The table of a run's search shards (up to ``rows``); close it to remove its file."""

    def __init__(self, rows: int):
        self.rows = max(1, rows)
        fd, self.path = tempfile.mkstemp(prefix="arcbatt-progress-", suffix=".bin")
        os.close(fd)
        self.table = np.memmap(self.path, dtype=np.int64, mode="w+", shape=(self.rows, len(FIELDS)))
        self.depth = 0
        self.used = 0

    def writers(self, groups: list, depth: int) -> list[BoardWriter]:
        """Clear the table for a search of ``depth`` split into ``groups`` (lists of tasks); one writer per group."""
        if len(groups) > self.rows:
            raise ValueError(f"{len(groups)} shards for a progress table of {self.rows}")
        self.table[:] = 0
        self.depth, self.used = depth, len(groups)
        return [BoardWriter(self.path, i, self.rows, len(g)) for i, g in enumerate(groups)]

    def finished(self, row: int) -> None:
        """Shard ``row`` has returned (a shard whose frontier ran out never reports the last levels)."""
        self.table[row, 0] = self.depth + 1

    def snapshot(self) -> SearchSnapshot:
        """The counters now, summed over the shards of the current search."""
        rows = np.array(self.table[:self.used])
        if not len(rows) or self.depth == 0:
            return SearchSnapshot(self.depth, 0, 0.0, 0, 0, self.used)
        level, done, total, states, fitted, _ = rows.T
        running = (level > 0) & (level <= self.depth)
        current = int(level[running].min()) if running.any() else (self.depth if (level > 0).all() else 0)
        fractions = np.where(level > current, 1.0, np.where(level == current, done / np.maximum(total, 1), 0.0))
        return SearchSnapshot(self.depth, current, float(fractions.mean()), int(states.sum()), int(fitted.sum()),
                              self.used)

    def close(self) -> None:
        """Remove the table's file."""
        self.table = np.zeros((self.rows, len(FIELDS)), dtype=np.int64)
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
