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

from solvers import kernels
from solvers.xp import stable_argsort

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
        touched = np.flatnonzero(np.bincount(tasks))  # np.unique: 1-10 ms for tens of thousands
        on_board = self._rank[touched] > -np.inf
        t = np.concatenate([np.repeat(touched, self.size)[on_board.ravel()], tasks])
        g = np.concatenate([self._gid[touched][on_board], gids])
        r = np.concatenate([self._rank[touched][on_board], ranks])
        k = np.concatenate([self._key[touched][on_board], keys])
        src = np.concatenate([np.full(int(on_board.sum()), -1, dtype=np.int64), np.arange(n)])
        # Stable sorts key by key (np.lexsort took 2-3 times as long): by rank, highest first,
        # then age, oldest first; that order grouped by (task, key), each group's first its best.
        by_rank = np.argsort(g, kind="stable")
        by_rank = by_rank[np.argsort(-r[by_rank], kind="stable")]
        # Tasks as 16-bit values where they fit: NumPy's stable sort of those is a radix sort.
        t_sort = t.astype(np.uint16) if len(self.boards) <= 1 << 16 else t
        order = by_rank[np.argsort(k[by_rank], kind="stable")]
        order = order[np.argsort(t_sort[order], kind="stable")]
        first = np.ones(len(order), dtype=bool)
        first[1:] = (t[order][1:] != t[order][:-1]) | (k[order][1:] != k[order][:-1])
        best = np.zeros(len(order), dtype=bool)
        best[order[first]] = True
        # The best ``size`` of those per task, in board order.
        order = by_rank[best[by_rank]]
        order = order[np.argsort(t_sort[order], kind="stable")]
        tt = t[order]
        starts = np.r_[0, np.nonzero(tt[1:] != tt[:-1])[0] + 1]
        pos = np.arange(len(order)) - np.repeat(starts, np.diff(np.r_[starts, len(order)]))
        order = order[pos < self.size]
        entered = src[order] >= 0
        if not entered.any():
            return []
        picked = src[order]
        made = make(picked[entered])
        new_of = dict(zip(picked[entered].tolist(), made))
        # Rewrite the boards that a new candidate entered (the others are unchanged); boards only
        # grow, so each keeps its first len(rows) slots. Python values, not NumPy scalars, in the
        # loop: it runs for hundreds of boards at once.
        tt = t[order]
        starts = np.r_[0, np.nonzero(tt[1:] != tt[:-1])[0] + 1]
        ends = np.r_[starts[1:], len(order)]
        changed = np.logical_or.reduceat(entered, starts)
        lo_c, hi_c = starts[changed], ends[changed]
        g_l, src_l = g[order].tolist(), picked.tolist()  # in board order
        for task, lo, hi in zip(tt[lo_c].tolist(), lo_c.tolist(), hi_c.tolist()):
            old = {c.gid: c for c in self.boards[task]}
            self.boards[task] = [old[g_l[i]] if src_l[i] < 0 else new_of[src_l[i]] for i in range(lo, hi)]
        # The changed boards' arrays in one pass: each row's board and slot.
        rows = order[np.repeat(changed, ends - starts)]
        lens = hi_c - lo_c
        board = np.repeat(tt[lo_c], lens)
        slot = np.arange(len(rows)) - np.repeat(np.cumsum(lens) - lens, lens)
        self._rank[board, slot], self._gid[board, slot], self._key[board, slot] = r[rows], g[rows], k[rows]
        full = lens == self.size
        last = r[order[hi_c[full] - 1]]
        moved = self.threshold[tt[lo_c[full]]] != last
        self.threshold[tt[lo_c[full]][moved]] = last[moved]
        self.threshold_changes += int(moved.sum())
        return made


def offers_that_may_enter(xp, tasks, groups, ranks, keys, exempt, num_tasks: int, size: int = LEADERBOARD_SIZE):
    """Which offers (arrays on ``xp``'s device, one entry per offer, in order of their ids) can
    change the boards, worked out where they lie: a bool per offer.

    The boards take, of each offer ``group`` (a task and transform), its ``size`` best by rank,
    ties to the older (see ``search._offer``); of those, per task, the best offer of each test-output
    ``key`` and of those the ``size`` best. An offer outside that cannot enter, whatever its task's
    board holds: ``size`` offers with other keys rank above it, or one with its key does. So
    offering only the others leaves the boards as offering all would, and the host sorts and merges
    hundreds instead of tens of thousands (a GPU's first level offers every state it makes).
    ``exempt`` (a bool per offer) marks offers whose task's keys are not known here (a learnt colour
    table changes them): every offer of such a task that passes the group step stays. ``tasks`` are
    below ``num_tasks``. No step waits for the device."""
    n = int(tasks.shape[0])
    if n == 0:
        return xp.zeros(0, dtype=bool)
    at = xp.arange(n, dtype=xp.int64)
    tasks = tasks.astype(xp.int64, copy=False)
    by_rank = stable_argsort(xp, -ranks)  # best first, ties in id order
    in_group = _place_in_runs(xp, at, by_rank, groups)
    passed = in_group < size
    exempt_task = xp.zeros(num_tasks + 1, dtype=bool)
    exempt_task[xp.where(passed & exempt, tasks, num_tasks)] = True  # (the spare slot: not exempt)
    exempt = exempt_task[tasks]
    keyed = passed & ~exempt
    # The best offer of each task and key: first of its (task, key) run, best first within runs.
    keyed_tasks = xp.where(keyed, tasks, -1)
    order = by_rank[stable_argsort(xp, keys[by_rank])]
    order = order[stable_argsort(xp, keyed_tasks[order])]
    t, k = keyed_tasks[order], keys[order]
    first = xp.ones(n, dtype=bool)
    first[1:] = (t[1:] != t[:-1]) | (k[1:] != k[:-1])
    best = xp.zeros(n, dtype=bool)
    best[order] = first
    best &= keyed
    in_task = _place_in_runs(xp, at, by_rank, xp.where(best, tasks, -1))
    return (passed & exempt) | (best & (in_task < size))


_NO_PLACE = np.iinfo(np.int64).max  # the place of an entry in no group


def _place_in_runs(xp, at, by_rank, groups):
    """Each entry's place (0 first) among the entries of its group (``groups``; -1: none, placed
    past every size) in ``by_rank`` order. No step waits for the device."""
    n = int(at.shape[0])
    order = by_rank[stable_argsort(xp, groups[by_rank])]
    g = groups[order]
    start = xp.ones(n, dtype=bool)
    start[1:] = g[1:] != g[:-1]
    run = kernels.cumsum(xp, start) - 1
    begin = xp.empty(n + 1, dtype=xp.int64)
    begin[xp.where(start, run, n)] = at  # each run's first position (the rest land in the spare slot)
    place = xp.empty(n, dtype=xp.int64)
    place[order] = xp.where(g >= 0, at - begin[run], _NO_PLACE)
    return place
