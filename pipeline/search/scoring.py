"""Scoring new states against their tasks' train outputs: exact matches by hash, cell accuracy where
the size is right, colour tables learnt, the rank on the boards (in fixed point: the same bit for
bit on every device).
"""
from __future__ import annotations

import types
from typing import Any, NamedTuple

from pipeline.search import kernels
from pipeline.search.device import is_out_of_memory
from pipeline.search.pieces import piece_worth
from pipeline.search.problem import Block, Items
from solvers import kernels as dsl_kernels
from solvers.xp import repeat_values, run_positions


SOLVED_RANK = 100.0    # rank of a solved program of length 0; each step costs 1
ACC_SCALE = 1 << 20    # cell accuracy in fixed point


class Scoring:
    """The scoring of :class:`~pipeline.search.driver.Search` (mixed into it)."""

    def _score_new(self, block: Block, out: Items, hv, test_key, new_dev, level) -> "_Scores":
        """Scores of the new states ``new_dev`` of a merged block (other states' values are
        meaningless). Each state's score depends on its own grids only: on out-of-memory the new
        states are scored in halves, which gives the same values."""
        try:
            return self._score(block, out, hv, test_key, new_dev, level)
        except Exception as exc:
            if not is_out_of_memory(exc) or int(new_dev.shape[0]) < 2:
                raise
        self._free_device_memory()
        self.stats.oom_splits += 1
        xp, half = self.xp, int(new_dev.shape[0]) // 2
        first = self._score_new(block, out, hv, test_key, new_dev[:half], level)
        second = self._score_new(block, out, hv, test_key, new_dev[half:], level)
        in_first = xp.zeros(block.num_states, dtype=bool)
        in_first[new_dev[:half]] = True
        return _Scores(*(_pick_rows(xp, in_first, a, b) for a, b in zip(first, second)))

    def _score(self, block: Block, out: Items, hv, test_key, new_dev, level) -> "_Scores":
        """:meth:`_score_new` in one pass: exact train matches by hash, cell accuracy where the size
        is right, colour tables learnt, the rank on the boards, the key of the test outputs."""
        xp, p = self.xp, self.problem
        S, K = block.num_states, p.max_samples
        new_mask = xp.zeros(S, dtype=bool)
        new_mask[new_dev] = True
        if dsl_kernels.enabled(xp):  # the same values from four kernels (about a hundred array calls)
            n_exact, n_sized, fit, n_fit = kernels.score_fit(xp, out, hv, block.task, new_mask, p)
            slot, num_slots, n_fit = kernels.colour_slots(xp, new_mask, n_exact, n_sized, block.task, p.n_train, n_fit)
            return self._score_rest(block, out, test_key, new_mask, level, n_exact, fit, slot, num_slots, n_fit)
        n_train = p.n_train[block.task]
        st, sm = out.state, out.sample
        task = block.task[st]
        # Fit of the new states only: exact matches by hash, cell accuracy where the size is right.
        is_train = sm < p.n_train[task]
        ts = xp.minimum(sm, p.max_train - 1)
        exact = xp.zeros((S, K), dtype=bool)
        exact[st, sm] = is_train & (hv == p.target_hash[task, ts])
        same = new_mask[st] & is_train \
            & (p.target_shape[task, ts, 0] == out.h) & (p.target_shape[task, ts, 1] == out.w)
        fit = xp.nonzero(same)[0]
        fit_state, fit_sample = st[fit], sm[fit]
        sized = xp.zeros((S, K), dtype=bool)
        sized[fit_state, fit_sample] = True
        n_exact = exact.sum(axis=1)
        solved = new_mask & (n_exact == n_train)
        # Colour maps are learnt for new unsolved states whose train grids all have the right size.
        cm_cand = new_mask & (sized.sum(axis=1) == n_train) & ~solved
        cm_idx = xp.nonzero(cm_cand)[0]
        slot = xp.full(S, -1, dtype=xp.int64)
        slot[cm_idx] = xp.arange(cm_idx.shape[0])
        correct, hist, changed = self._cell_matches(out, fit, p.target_offset[task[fit], fit_sample],
                                                    slot[fit_state], int(cm_idx.shape[0]), self.pieces is not None)
        # Fixed-point integers: the same ranking bit for bit on every device and summation order.
        acc = xp.zeros((S, K), dtype=xp.int64)
        acc[fit_state, fit_sample] = (correct * ACC_SCALE) // (out.h[fit] * out.w[fit])
        score = (n_exact * ACC_SCALE + acc.sum(axis=1)) / (n_train * ACC_SCALE)
        mapping, cm_ok = _colour_tables(xp, S, cm_idx, hist)
        rank = xp.where(solved, SOLVED_RANK - level,
                        xp.where(cm_ok, SOLVED_RANK - level - 1, score))
        piece = None if changed is None else piece_worth(xp, hist, changed, slot, p.zero_kept[block.task])
        return _Scores(rank, solved, n_exact, score, mapping, cm_ok, test_key, piece)

    def _score_rest(self, block: Block, out: Items, test_key, new_mask, level, n_exact, fit, slot, num_slots: int,
                    n_fit: int) -> "_Scores":
        """:meth:`_score` on a GPU from its first kernels' results and counts (on the host)."""
        xp, p = self.xp, self.problem
        acc, hist = kernels.score_cells(xp, out, block.task, p, slot, num_slots, ACC_SCALE, fit, n_fit)
        scores = kernels.score_states(xp, block.task, new_mask, p.n_train, n_exact, acc, slot, hist, num_slots,
                                      ACC_SCALE, SOLVED_RANK - level)
        piece = None
        if self.pieces is not None:
            against_changed = types.SimpleNamespace(max_train=p.max_train, target_offset=p.target_offset,
                                                    target_cells=p.changed_cells)
            _, changed = kernels.score_cells(xp, out, block.task, against_changed, slot, num_slots, ACC_SCALE, fit,
                                             n_fit)
            piece = piece_worth(xp, hist.reshape(-1, 10, 10), changed.reshape(-1, 10, 10), slot,
                                p.zero_kept[block.task])
        return _Scores(*scores, test_key, piece)

    def _cell_matches(self, out: Items, fit, target_start, slot, num_slots: int, with_changed: bool = False):
        """Compare the grids ``fit`` of ``out`` cell by cell with their train outputs (same sizes;
        output cells begin at ``target_start`` in the problem's target buffer).

        Returns the matching cells per grid and, for grids with a ``slot`` >= 0, the histogram
        ``(num_slots, 10, 10)`` of (grid colour, output colour) pairs summed per slot; with
        ``with_changed`` also the same histogram against the problem's ``changed_cells`` (else None).
        """
        xp, p = self.xp, self.problem
        grids = out.take(fit)
        sizes, total = grids.h * grids.w, int(grids.cells.shape[0])
        at = run_positions(xp, target_start, sizes, total, int(p.target_cells.shape[0]))
        target = p.target_cells[at]
        # Matching cells per grid: differences of one running count at the grids' ends.
        running = xp.concatenate((xp.zeros(1, dtype=xp.int64), xp.cumsum(grids.cells == target, dtype=xp.int64)))
        correct = running[grids.start + sizes] - running[grids.start]
        # The cells of the grids with a slot (each grid's cells are one run), keyed by slot and colour.
        slotted = xp.nonzero(slot >= 0)[0]
        if int(slotted.shape[0]) == grids.count:
            use = slice(None)
        else:
            sub_sizes = sizes[slotted]
            use = run_positions(xp, grids.start[slotted], sub_sizes, int(sub_sizes.sum()), total)
        base = repeat_values(xp, slot[slotted] * 100, sizes[slotted]) + grids.cells[use].astype(xp.int64) * 10

        def histogram(against):
            return xp.bincount(base + against[use], minlength=num_slots * 100).reshape(num_slots, 10, 10)

        changed = histogram(p.changed_cells[at]) if with_changed else None
        return correct, histogram(target), changed


class _Scores(NamedTuple):
    """Per state of a block (S,): what scoring its new states gives (see ``Search._score``)."""

    rank: Any
    solved: Any
    n_exact: Any
    score: Any
    mapping: Any  # (S, 10) colour tables, or None when no state learnt one
    cm_ok: Any
    test_key: Any
    piece: Any = None  # worth as a piece for layered composition (see pipeline.search.pieces), or None


def _pick_rows(xp, first, a, b):
    """Rows of ``a`` where ``first`` holds, else of ``b`` (None: no rows, as zeros)."""
    if a is None and b is None:
        return None
    if a is None or b is None:
        a, b = (xp.zeros_like(b) if a is None else a), (xp.zeros_like(a) if b is None else b)
    return xp.where(first.reshape(first.shape + (1,) * (a.ndim - 1)), a, b)


def _colour_tables(xp, num_states: int, cand, hist):
    """Per-state colour tables learnt from the (grid colour, output colour) histograms ``hist`` of
    the states ``cand``: ``(tables (S, 10) int or None, ok (S,) bool)``, ``ok`` where every source
    colour maps to exactly one target colour across all train pairs. Colours that no train grid
    holds keep their colour, or take the one that most seen colours take (see below)."""
    ok = xp.zeros(num_states, dtype=bool)
    if int(cand.shape[0]) == 0:
        return None, ok
    consistent = ((hist > 0).sum(axis=2) <= 1).all(axis=1)
    seen = hist.sum(axis=2) > 0
    table = xp.where(seen, hist.argmax(axis=2), xp.arange(10)[None, :])
    # A colour no train grid holds stays, unless three or more of the non-zero colours seen, and
    # more than half of them, go to one colour: then it goes there too ("every object blue").
    votes = (seen[:, 1:, None] & (table[:, 1:, None] == xp.arange(10)[None, None, :])).sum(axis=1)
    common, top = votes.argmax(axis=1), votes.max(axis=1)
    default = (top >= kernels.MIN_DEFAULT_VOTES) & (2 * top > seen[:, 1:].sum(axis=1))
    table[:, 1:] = xp.where(~seen[:, 1:] & default[:, None], common[:, None], table[:, 1:])
    ok[cand] = consistent
    tables = xp.zeros((num_states, 10), dtype=xp.int64)
    tables[cand] = table
    return tables, ok
