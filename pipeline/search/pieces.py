"""Pieces for layered composition: each task's states that are right on many of the cells they paint.

A piece is a state whose train grids all have their outputs' sizes. Its worth is read off the
(grid colour, output colour) histograms of such states that the scoring makes (the one colour
tables are learnt from, and one more against the cells where outputs differ from inputs): the
changed cells it paints right, plus all the cells it paints where it paints none wrong. Layered
composition (:mod:`pipeline.search.layers`) stacks the best few pieces of a task so that together they
reproduce its train outputs; the search keeps, per task, the ``size`` best by worth (ties: the
older state), offered batch by batch like the leaderboards.
"""
from __future__ import annotations

import numpy as np

PIECES_PER_TASK = 32


def piece_worth(xp, hist, hist_changed, slot):
    """Per state: its worth as a layer, from per-slot histograms (slots, 10, 10) of (grid colour,
    output colour) pairs over its train grids: ``hist`` against the train outputs and
    ``hist_changed`` against their changed cells (:attr:`pipeline.search.problem.Problem.changed_cells`).
    It is the changed cells it paints right, plus, where every cell it paints is right, the cells
    it paints; 0 for states without a slot (``slot`` -1)."""
    worth = xp.zeros(int(slot.shape[0]), dtype=xp.int64)
    if int(hist.shape[0]) == 0:
        return worth
    painted = hist[:, 1:, :].sum(axis=(1, 2)).astype(xp.int64)
    right = xp.diagonal(hist, axis1=1, axis2=2)[:, 1:].sum(axis=1).astype(xp.int64)
    right_changed = xp.diagonal(hist_changed, axis1=1, axis2=2)[:, 1:].sum(axis=1).astype(xp.int64)
    per_slot = right_changed + xp.where(right == painted, right, 0)
    has = slot >= 0
    worth[has] = per_slot[slot[has]]
    return worth


class PieceBoards:
    """Each task's best ``size`` pieces: ``gids_of(t)``, best first; ``threshold`` (per task) is the
    worth a new piece must beat (0 while a board has room)."""

    def __init__(self, num_tasks: int, size: int = PIECES_PER_TASK):
        self.size = size
        self.num_tasks = num_tasks
        self._tasks = np.zeros(0, dtype=np.int64)
        self._gids = np.zeros(0, dtype=np.int64)
        self._worth = np.zeros(0, dtype=np.int64)
        self.threshold = np.zeros(num_tasks, dtype=np.int64)

    def offer(self, tasks: np.ndarray, gids: np.ndarray, worth: np.ndarray) -> None:
        """Merge pieces (one entry per piece, host arrays) into the boards."""
        if len(tasks) == 0:
            return
        tasks = np.concatenate([self._tasks, np.asarray(tasks, dtype=np.int64)])
        gids = np.concatenate([self._gids, np.asarray(gids, dtype=np.int64)])
        worth = np.concatenate([self._worth, np.asarray(worth, dtype=np.int64)])
        order = np.lexsort((gids, -worth, tasks))
        tasks, gids, worth = tasks[order], gids[order], worth[order]
        first = np.searchsorted(tasks, tasks, side="left")
        keep = np.arange(len(tasks)) - first < self.size
        self._tasks, self._gids, self._worth = tasks[keep], gids[keep], worth[keep]
        full = np.bincount(self._tasks, minlength=self.num_tasks) >= self.size
        last = np.searchsorted(self._tasks, np.arange(self.num_tasks), side="right") - 1
        self.threshold = np.where(full, self._worth[np.maximum(last, 0)] if len(self._worth) else 0, 0)

    def gids_of(self, task: int) -> list[int]:
        """The ids of task ``task``'s pieces, best first."""
        lo, hi = np.searchsorted(self._tasks, [task, task + 1])
        return self._gids[lo:hi].tolist()
