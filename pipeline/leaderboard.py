"""The leaderboards of a search: each task's best few programs, distinct by their test outputs.

A board keeps the ``size`` best candidates of its task by rank (ties: the older program, the
smaller state id), at most one per test-output key: of two candidates that predict the same test
outputs, the better-ranked (or older) stays. Candidates are offered in batches as arrays and
merged with the boards by sorting, not one by one in Python: only the candidates that end up on
a board become objects.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

LEADERBOARD_SIZE = 6


@dataclass
class Candidate:
    """A ranked program for one task and what it predicts for the test inputs."""

    gid: int
    rank: float
    solved: bool
    train_exact: int
    score: float
    mapping: dict | None
    test_outputs: list
    test_key: int


class Leaderboards:
    """One board per task (``boards[t]``: :class:`Candidate` s, best first) and the rank a new
    candidate must beat to enter a full board (``threshold``; -1 while a board has room)."""

    def __init__(self, num_tasks: int, size: int = LEADERBOARD_SIZE):
        self.size = size
        self.boards: list[list[Candidate]] = [[] for _ in range(num_tasks)]
        self.threshold = np.full(num_tasks, -1.0)
        self.threshold_changes = 0  # how many times ``threshold`` changed (to refresh copies of it)
        # The boards as arrays (empty slots: rank -inf), for merging offers by sorting.
        self._rank = np.full((num_tasks, size), -np.inf)
        self._gid = np.full((num_tasks, size), -1, dtype=np.int64)
        self._key = np.zeros((num_tasks, size), dtype=np.uint64)

    def offer(self, tasks: np.ndarray, gids: np.ndarray, ranks: np.ndarray, keys: np.ndarray,
              make: Callable[[np.ndarray], list]) -> list:
        """Merge candidates into the boards. ``tasks``, ``gids`` (each newer than every candidate
        on its task's board), ``ranks`` and test-output ``keys`` (uint64) are arrays with one
        entry per candidate, in any order; the boards become what offering the candidates one by
        one in order of gid would make them.

        ``make(indices)`` builds the candidates (:class:`Candidate`) offered at ``indices``, the
        ones that enter a board, in that order; returns the list it built."""
        n = len(tasks)
        if n == 0:
            return []
        touched = np.unique(tasks)
        on_board = self._rank[touched] > -np.inf
        t = np.concatenate([np.repeat(touched, self.size)[on_board.ravel()], tasks])
        g = np.concatenate([self._gid[touched][on_board], gids])
        r = np.concatenate([self._rank[touched][on_board], ranks])
        k = np.concatenate([self._key[touched][on_board], keys])
        src = np.concatenate([np.full(int(on_board.sum()), -1, dtype=np.int64), np.arange(n)])
        # The best of each (task, key): highest rank, then the oldest.
        order = np.lexsort((g, -r, k, t))
        first = np.ones(len(order), dtype=bool)
        first[1:] = (t[order][1:] != t[order][:-1]) | (k[order][1:] != k[order][:-1])
        order = order[first]
        # The best ``size`` of those per task, in board order.
        order = order[np.lexsort((g[order], -r[order], t[order]))]
        tt = t[order]
        starts = np.r_[0, np.nonzero(tt[1:] != tt[:-1])[0] + 1]
        pos = np.arange(len(order)) - np.repeat(starts, np.diff(np.r_[starts, len(order)]))
        order = order[pos < self.size]
        entered = src[order] >= 0
        if not entered.any():
            return []
        made = make(src[order][entered])
        new_of = dict(zip(src[order][entered].tolist(), made))
        # Rewrite the boards that a new candidate entered (the others are unchanged). A board never
        # shrinks, so its new rows cover the old ones: the arrays are written for all such boards
        # at once, the candidate lists task by task from plain Python values.
        tt = t[order]
        starts = np.r_[0, np.nonzero(tt[1:] != tt[:-1])[0] + 1]
        lengths = np.diff(np.r_[starts, len(order)])
        changed = np.logical_or.reduceat(entered, starts)
        rewrite = np.repeat(changed, lengths)
        rows, at = order[rewrite], tt[rewrite]
        slot = (np.arange(len(order)) - np.repeat(starts, lengths))[rewrite]
        self._rank[at, slot], self._gid[at, slot], self._key[at, slot] = r[rows], g[rows], k[rows]
        full = slot == self.size - 1  # a full board's last row: its new threshold
        moved = self.threshold[at[full]] != r[rows[full]]
        self.threshold[at[full][moved]] = r[rows[full]][moved]
        self.threshold_changes += int(moved.sum())
        gid_of, src_of = g[order].tolist(), src[order].tolist()
        for task, lo, n_rows in zip(tt[starts[changed]].tolist(), starts[changed].tolist(), lengths[changed].tolist()):
            old = {c.gid: c for c in self.boards[task]}
            self.boards[task] = [old[gid] if i < 0 else new_of[i]
                                 for gid, i in zip(gid_of[lo:lo + n_rows], src_of[lo:lo + n_rows])]
        return made
