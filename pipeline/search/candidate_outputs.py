"""The grids that leaderboard candidates make for their tasks' test inputs, copied to the host in
batches.

A candidate that enters a board needs its test outputs. Fetching them as it enters cost every
absorb four waits for the device (finding the grids, sizing them, copying them; a GPU idles
while the host waits and restarts). Instead their copies are queued on the device, each grid in a
fixed slot of 30 x 30 cells (nothing to size, nothing to wait for), and cross to the host
together when the queue holds enough cells or when the search asks
(:meth:`CandidateOutputs.flush`).
Until then a queued candidate's ``test_outputs`` is empty.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pipeline.search import kernels
from pipeline.search.device import to_device_async, to_host_all

from solvers import kernels as dsl_kernels
from solvers.batch import MAX_SIDE

SLOT = MAX_SIDE * MAX_SIDE  # cells of a grid's slot


@dataclass
class _Batch:
    """Queued copies: ``cells`` (m * T, SLOT) for m states and T test samples each, with sides
    ``h``, ``w`` (0 where a state's task has fewer tests); the candidates to fill, one per state,
    and their colour tables."""

    cells: Any
    h: Any
    w: Any
    tests: int  # T
    candidates: list
    luts: list
    keep: Any  # host memory the device may still be copying from


class CandidateOutputs:
    """The queue of test grids of one search (see the module's docstring)."""

    def __init__(self, problem, flush_cells: int = 1 << 26, wanted=None):
        self.p = problem
        self.xp = problem.xp
        self.flush_cells = flush_cells
        # ``wanted()``: the ids (``id``) of the candidates whose test outputs are still wanted (those
        # on a board: one that fell off never comes back); the others' grids stay on the device.
        self.wanted = wanted
        self.max_tests = problem.max_tests  # known on the host (a device max would wait, and load CUB)
        self._batches: list[_Batch] = []
        self._cells = 0

    def queue(self, block, out, idx: np.ndarray, candidates: list, luts: list) -> None:
        """Queue the test grids of the states ``idx`` (host positions in the merged ``block``, whose
        grids are the items ``out``) for ``candidates[j]`` (state ``idx[j]``), each mapped through
        ``luts[j]`` (a colour table, or None) when it crosses."""
        xp, p = self.xp, self.p
        idx = np.asarray(idx, dtype=np.int64)
        if dsl_kernels.enabled(xp):
            cells, h, w, keep = kernels.test_grids(xp, out, block.task, p.n_train, idx, self.max_tests, SLOT)
        else:
            cells, h, w, keep = self._gathered(block, out, idx)
        # The batches queued before cross when they hold enough cells (now, not after this one:
        # its candidates are not on their boards yet).
        if self._cells >= self.flush_cells:
            self.flush()
        self._batches.append(_Batch(cells, h, w, self.max_tests, list(candidates), list(luts), keep))
        self._cells += len(idx) * self.max_tests * SLOT

    def _gathered(self, block, out, idx: np.ndarray):
        """:meth:`queue`'s grids by array calls: ``(cells, h, w, keep)`` as ``kernels.test_grids``
        gives them."""
        xp, p = self.xp, self.p
        m, K = len(idx), self.max_tests
        idx_dev, keep = to_device_async(xp, idx)
        row_of = xp.full(block.num_states, -1, dtype=xp.int64)
        row_of[idx_dev] = xp.arange(m, dtype=xp.int64)
        row = row_of[out.state]
        test = out.sample - p.n_train[block.task[out.state]]
        # Each (state, test sample) has one item: its slot is row * K + test; the others go to a
        # spare slot at the end.
        slot = xp.where((row >= 0) & (test >= 0), row * K + test, m * K)
        item = xp.full(m * K + 1, -1, dtype=xp.int64)
        item[slot] = xp.arange(out.count, dtype=xp.int64)
        item = item[:m * K]
        found = item >= 0
        at = xp.maximum(item, 0)
        h = xp.where(found, out.h[at], 0)
        w = xp.where(found, out.w[at], 0)
        pos = xp.arange(SLOT, dtype=xp.int64)[None, :]
        inside = pos < (h * w)[:, None]
        src = xp.where(inside, out.start[at][:, None] + pos, 0)
        cells = xp.where(inside, out.cells[src], xp.uint8(0))
        return cells, h, w, keep

    def flush(self) -> None:
        """Copy every queued grid to the host (one copy) and give the candidates their test
        outputs, in sample order."""
        batches, self._batches, self._cells = self._batches, [], 0
        if not batches:
            return
        wanted = None if self.wanted is None else self.wanted()
        rows = [[j for j, cand in enumerate(b.candidates) if wanted is None or id(cand) in wanted] for b in batches]
        arrays, staged = [], []  # staged: host memory the device copies from, kept until the copy back
        for b, kept in zip(batches, rows):
            if len(kept) < len(b.candidates):  # only the wanted candidates' slots cross
                slots, stage = to_device_async(self.xp, (np.asarray(kept, dtype=np.int64)[:, None] * b.tests
                                                         + np.arange(b.tests)).reshape(-1))
                staged.append(stage)
                arrays += [b.cells[slots], b.h[slots], b.w[slots]]
            else:
                arrays += [b.cells, b.h, b.w]
        host = to_host_all(*arrays)  # waits for the device: the staged copies are done
        del staged
        for k, (b, kept) in enumerate(zip(batches, rows)):
            cells, h, w = host[3 * k:3 * k + 3]
            for r, j in enumerate(kept):
                cand, lut = b.candidates[j], b.luts[j]
                grids = [cells[s, :h[s] * w[s]].reshape(h[s], w[s])
                         for s in range(r * b.tests, (r + 1) * b.tests) if h[s]]
                cand.test_outputs = grids if lut is None else [lut[g] for g in grids]

