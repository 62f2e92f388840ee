"""Pieces for layered composition: each task's states that are worth most as a layer.

A piece is a state whose train grids all have their outputs' sizes. Layered composition
(:mod:`pipeline.search.layers`) uses a piece three ways: painted where it is non-zero, painted
through a colour table (each of its colours that stands for one output colour wherever it lies
painted so, the others left out), or erasing to 0 where it is 0. Its worth is the most it is
worth as any of the three, read off the (grid colour, output colour) histograms of such states that
the scoring makes (the one colour tables are learnt from, and one more against the cells where
outputs differ from inputs):

- painted: the changed cells it paints right, plus all the cells it paints where it paints none
  wrong;
- through its colour table: the same, its colours mapped;
- erasing, where every cell it leaves 0 is 0 in the output: the cells it leaves 0 beyond as many
  as the inputs' zero cells that stay 0 (a bound on the cells it erases).

A piece right only through a colour table, or only as an eraser, ranks low by the first alone.
The search keeps, per task, the ``size`` best by worth (ties: the older state), offered batch by
batch like the leaderboards. Measured on ARC-1 train at depth 2 (CPU, correct test outputs of
416, before colour tables needed two train pairs): painting only with the 32 best by the first
worth, 171; all three ways with the 32 best by this worth, 181; with the 96 best, 186; 128, 188;
192, 189; 384, 184 (more pieces let the greedy cover stack more wrong ones), and the cover's
time grows with them.
"""
from __future__ import annotations

import numpy as np

PIECES_PER_TASK = 128


def piece_worth(xp, hist, hist_changed, slot, zero_kept):
    """Per state: its worth as a layer (see the module's docstring), from per-slot histograms
    (slots, 10, 10) of (grid colour, output colour) pairs over its train grids: ``hist`` against
    the train outputs and ``hist_changed`` against their changed cells
    (:attr:`pipeline.search.problem.Problem.changed_cells`); ``zero_kept`` per state, its task's
    train cells that are 0 in both input and output (:attr:`pipeline.search.problem.Problem.zero_kept`).
    0 for states without a slot (``slot`` -1)."""
    worth = xp.zeros(int(slot.shape[0]), dtype=xp.int64)
    if int(hist.shape[0]) == 0:
        return worth
    hist, hist_changed = hist.astype(xp.int64, copy=False), hist_changed.astype(xp.int64, copy=False)
    per_colour = hist.sum(axis=2)  # (slots, 10): the cells of each grid colour
    painted = per_colour[:, 1:].sum(axis=1)
    right = xp.diagonal(hist, axis1=1, axis2=2)[:, 1:].sum(axis=1)
    right_changed = xp.diagonal(hist_changed, axis1=1, axis2=2)[:, 1:].sum(axis=1)
    as_painted = right_changed + xp.where(right == painted, right, 0)
    # The colour table: a grid colour (not 0) that meets one output colour, not 0, wherever it lies.
    # Such a colour's changed cells are all of that output colour: its changed cells right.
    kept = (xp.count_nonzero(hist, axis=2) == 1) & (hist[:, :, 0] == 0)
    kept[:, 0] = False
    mapped_right = xp.where(kept, per_colour, 0).sum(axis=1)
    mapped_changed = xp.where(kept, hist_changed.sum(axis=2) - hist_changed[:, :, 0], 0).sum(axis=1)
    as_mapped = mapped_changed + xp.where(mapped_right == painted, mapped_right, 0)
    has = slot >= 0
    at = slot[has]
    as_eraser = xp.where(per_colour[:, 0] == hist[:, 0, 0], hist[:, 0, 0], 0)[at] - zero_kept[has]
    worth[has] = xp.maximum(xp.maximum(as_painted, as_mapped)[at], as_eraser)
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
