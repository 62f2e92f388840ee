"""Offering the best new states to each task's leaderboard: only the states that can enter cross to
the host, and the host's part of the update is put off until the device works on the next
transform.
"""
from __future__ import annotations

import functools

import numpy as np

from pipeline.search import kernels
from pipeline.search.device import HostCopy, is_out_of_memory, to_device_async, to_host, to_host_all
from pipeline.search.leaderboard import Candidate, LEADERBOARD_SIZE, offers_that_may_enter
from pipeline.search.problem import stable_group
from solvers import kernels as dsl_kernels


# Board records a GPU's picks get room for at least (64 bytes each, copied back every absorb).
PICK_ROOM = 2048
# On a GPU, of an absorb of at most SELECT_OFFERS_MAX_NEW new states, only the offers that can
# change the boards cross to the host (see leaderboard.offers_that_may_enter): the first level's
# absorb offers every state it makes, tens of thousands, too many for the host to sort and merge
# quickly. A larger absorb's thresholds already stop most of its states, and the selection's sorts
# (CuPy's wait for the device) would cost more than they save.
SELECT_OFFERS_MAX_NEW = 1 << 17
# An absorb of at most this many new states gives its picks room for all of them (4 MiB at most):
# the first level's boards have room for every new state, and tens of thousands that overflow the
# learnt room cost a second packing and a copy that waits for the device.
PICK_ROOM_ALL = 1 << 16


class BoardUpdates:
    """The board updates of :class:`~pipeline.search.driver.Search` (mixed into it)."""

    def _run_deferred(self) -> None:
        """Finish the leaderboard update that :meth:`_update_boards` put off, if any, and take the
        new states' positions that have reached the host out of pinned memory; then take the
        snapshot of the boards if one is due (see :meth:`~pipeline.search.driver.Search.run`)."""
        for copy in self._unread:
            copy.get()
        self._unread.clear()
        finish, self._deferred, self._deferred_solved = self._deferred, None, None
        if finish is not None:
            try:
                finish()  # its time counts in the stage that runs it (apply, or the next merge)
            except Exception as exc:
                # Raised inside a transform, an out-of-memory error would be taken for the
                # transform's and retried on halves, with the boards half updated.
                if is_out_of_memory(exc):
                    raise RuntimeError("out of device memory while updating the leaderboards") from exc
                raise
        if self._snapshot_due:  # the level before the last is done, its last update too
            self._take_snapshot()

    def _mark_deferred_solved(self) -> None:
        """Set the solved flags that the put-off board update (if any) will set, leaving the rest of
        it put off. A task is flagged when a candidate of it that is solved (or colour-mapped)
        enters its board; those rank above every other candidate (``SOLVED_RANK``), so one that
        does not enter loses only to such a candidate, on the board already or entering with it:
        the update flags exactly the tasks of its solved picks."""
        solved, self._deferred_solved = self._deferred_solved, None
        if solved is not None:
            self.solved[solved()] = True

    def _update_boards(self, block, parts, new: "_NewStates", scored: "_Scores") -> None:
        """Offer the best new states of each task and transform to the task's leaderboard (see
        :class:`Leaderboards`). Only the states that beat their task's board cross to the host.
        The host's part (sorting the offers, making the candidates, queueing their test grids) is
        left to :meth:`_run_deferred`, which runs before anything reads the boards, thresholds or
        solved flags: it runs while the device works on the next transform. On a level that keeps
        states, the absorb's next blocks then keep the states of tasks it solved (the flags are not
        updated yet): the next level's start drops them, as it drops those of tasks solved later in
        the level."""
        xp = self.xp
        self._offer_pieces(block, new, scored)
        # A state that does not beat its board's last entry cannot enter the board; only those
        # that do cross to the host, with what the boards need of them, in one copy.
        if dsl_kernels.enabled(xp):
            # Found and packed on the device, copied back while it goes on: nothing here waits.
            threshold = self._device_thresholds()
            keep, holds = self._offers_that_may_enter(block, new, scored, threshold)
            picks = functools.partial(kernels.board_picks, xp, new.dev, block.task, threshold,
                                      scored.rank, scored.solved, scored.cm_ok, scored.n_exact, scored.score,
                                      scored.test_key, scored.mapping, keep=keep)
            n_new = int(new.dev.shape[0])
            room = max(self._pick_room, n_new) if n_new <= PICK_ROOM_ALL else self._pick_room
            rows = _PickedRows(self, HostCopy(picks(room)), picks, holds)
            offer = functools.partial(self._offer_picks, block, parts, new, rows, scored.mapping is not None)

            def solved_tasks():
                picked = rows.get()
                return new.merged.tasks(picked["pos"][picked["solved"]])
        else:
            rank_new = scored.rank[new.dev]
            pick = xp.nonzero(rank_new > self._device_thresholds()[block.task[new.dev]])[0]
            if pick.shape[0] == 0:
                return
            at = new.dev[pick]
            wanted = [pick, rank_new[pick], (scored.solved | scored.cm_ok)[at], scored.n_exact[at], scored.score[at],
                      scored.cm_ok[at], scored.test_key[at]]
            if scored.mapping is not None:
                wanted.append(scored.mapping[at].astype(xp.uint8))
            pick, rank_h, solved_h, exact_h, score_h, cm_h, tkey_h, *maps_h = to_host_all(*wanted)
            maps_h = maps_h[0] if maps_h else None
            offer = functools.partial(self._offer, block, parts, new, pick, rank_h, solved_h, exact_h, score_h, cm_h,
                                      tkey_h, maps_h)

            def solved_tasks():
                return new.merged.tasks(new.idx[pick[solved_h]])
        # Absorbs run in order, each after the previous one's put-off update: none is pending.
        assert self._deferred is None, "a put-off board update would be lost"
        self._deferred, self._deferred_solved = offer, solved_tasks

    def _offer_pieces(self, block, new: "_NewStates", scored: "_Scores") -> None:
        """Offer the new states worth more than their task's last piece to the piece boards
        (only those cross to the host)."""
        if self.pieces is None or scored.piece is None or new.first_gid is None:
            return
        xp = self.xp
        worth = scored.piece[new.dev]
        tasks = block.task[new.dev]
        threshold = xp.asarray(self.pieces.threshold)
        pick = xp.nonzero(worth > threshold[tasks])[0]
        if int(pick.shape[0]) == 0:
            return
        pick_h, tasks_h, worth_h = to_host_all(pick, tasks[pick], worth[pick])
        self.pieces.offer(tasks_h, new.first_gid + pick_h, worth_h)

    def _offers_that_may_enter(self, block, new: "_NewStates", scored: "_Scores", threshold):
        """``(keep, holds)``: a bool per new state on the device, whether it is an offer that can
        change the boards (``leaderboard.offers_that_may_enter``; offers are the new states that beat
        their task's ``threshold``), and host memory to keep until the device has read it; ``keep``
        None where every offer crosses (the task inputs, or a large absorb)."""
        merged, xp = new.merged, self.xp
        pos = new.dev
        if (new.first_gid is None or merged.transforms is None
                or int(pos.shape[0]) > SELECT_OFFERS_MAX_NEW):
            return None, None
        k = len(merged.transforms)
        table, holds = to_device_async(xp, np.concatenate([merged.offsets, merged.transforms]).astype(np.int64))
        # A merged state's transform: that of the output whose run of positions holds it.
        trs = table[k + 1:][xp.searchsorted(table[:k + 1], pos, side="right") - 1]
        tasks, ranks = block.task[pos], scored.rank[pos]
        groups = xp.where(ranks > threshold[tasks], tasks * (len(self.transforms) + 1) + trs, -1)
        keep = offers_that_may_enter(xp, tasks, groups, ranks, scored.test_key[pos], scored.cm_ok[pos],
                                     len(self.problem.tasks), LEADERBOARD_SIZE)
        return keep, holds

    def _offer_picks(self, block, parts, new: "_NewStates", picked: "_PickedRows", mapped: bool) -> None:
        """:meth:`_offer` of the records that ``kernels.board_picks`` packed (``picked``)."""
        rows = picked.get()
        if len(rows["pick"]) == 0:
            return
        self._offer(block, parts, new, *(rows[f] for f in ("pick", "rank", "solved", "n_exact", "score", "cm_ok",
                                                           "test_key")),
                    rows["mapping"] if mapped else None, idx=rows["pos"])

    def _offer(self, block, parts, new: "_NewStates", pick, rank_h, solved_h, exact_h, score_h, cm_h, tkey_h,
               maps_h, idx=None) -> None:
        """The host's part of :meth:`_update_boards`: the picked new states' attributes (host
        arrays) sorted, the best few of each task and transform offered to the boards, and the
        candidates that enter made, their test grids queued. ``idx``: the picks' positions in the
        merged block, when they came with them (else read from the new states' positions)."""
        idx = new.idx[pick] if idx is None else idx
        gids, tasks = new.gids(pick, idx), new.merged.tasks(idx)
        trs = new.merged.transform(idx)
        trs = np.zeros(len(idx), dtype=np.int64) if trs is None else trs
        # Only the best few of each task and transform are offered: all of them where no task and
        # transform has more (the first level's: one state each; the boards take offers in any
        # order, so the sort is saved).
        top = best_of_groups(tasks, trs, rank_h, gids, LEADERBOARD_SIZE)
        if top is not None:
            idx, gids, tasks, rank_h = idx[top], gids[top], tasks[top], rank_h[top]
            solved_h, exact_h, score_h, cm_h, tkey_h = (solved_h[top], exact_h[top], score_h[top], cm_h[top],
                                                        tkey_h[top])
            maps_h = maps_h[top] if maps_h is not None else None
        # A learnt colour table changes the test outputs: it joins their key. (Python's hash of a
        # tuple; only those rows are worked in Python, the others keep their key as it is.)
        keys_u64 = tkey_h.astype(np.uint64, copy=True)
        mapped_key = {}
        for j in np.nonzero(cm_h)[0].tolist():
            mapped_key[j] = hash((int(tkey_h[j]), tuple(maps_h[j].tolist())))
            keys_u64[j] = mapped_key[j] & 0xFFFF_FFFF_FFFF_FFFF

        def make(rows: np.ndarray) -> list:
            # Python values taken out of the arrays at once and the candidates made by map: indexing
            # NumPy scalars field by field cost about 35 us a candidate, and thousands enter at once
            # on the first levels.
            g, r, sv, ex, sc, keys = (a[rows].tolist() for a in (gids, rank_h, solved_h, exact_h, score_h, tkey_h))
            self.solved[tasks[rows][solved_h[rows]]] = True
            luts, mappings = [None] * len(rows), [None] * len(rows)
            for k in np.nonzero(cm_h[rows])[0].tolist():  # the few with a learnt colour table
                j = int(rows[k])
                luts[k] = maps_h[j]
                mappings[k] = {c: v for c, v in enumerate(maps_h[j].tolist()) if v != c}
                keys[k] = mapped_key[j]
            made = list(map(Candidate, g, r, sv, ex, sc, mappings, [[] for _ in rows], keys))
            self.candidate_outputs.queue(block, parts, idx[rows], made, luts)  # test outputs filled in later
            return made

        self.leaderboards.offer(tasks, gids, rank_h, keys_u64, make)

    def _board_candidates(self) -> set:
        """The ids of the candidates on the boards now (whose test outputs are wanted)."""
        return {id(cand) for board in self.boards for cand in board}

    def _device_thresholds(self):
        """The boards' thresholds on the array device (copied again only after they change: a copy
        to the device waits for its queue of work)."""
        if self._threshold_version != self.leaderboards.threshold_changes:
            self._threshold_dev = self.xp.asarray(self.threshold)
            self._threshold_version = self.leaderboards.threshold_changes
        return self._threshold_dev


class _PickedRows:
    """The records that ``kernels.board_picks`` packed for an absorb's board update, read once:
    ``copy``, their buffer on its way to the host; ``picks(room)`` packs them again with room for
    more, when they did not all fit (the search's room then grows for the next ones)."""

    def __init__(self, search: "Search", copy: HostCopy, picks, holds=None):
        self.search, self.copy, self.picks, self.rows = search, copy, picks, None
        self.holds = holds  # host memory the picks' kernels read, kept until the records are read

    def get(self) -> dict:
        """The records, all of them: an array per field of ``kernels.BOARD_ROW``, by pick."""
        if self.rows is None:
            count, rows = kernels.read_board_picks(self.copy.get())
            if count > len(rows["pick"]):
                count, rows = kernels.read_board_picks(to_host(self.picks(count)))
            # Room for twice the last count: a copy barely larger than needed, a second pass rare.
            self.search._pick_room = max(PICK_ROOM, 1 << (2 * count).bit_length())
            self.rows = rows
            self.copy = self.picks = self.holds = None
        return self.rows


def _task_ranks(xp, tasks, n_tasks: int):
    """Each entry's rank among the earlier entries of its task (``tasks``: ints below ``n_tasks``):
    its place in the stable sort by task less where its task's run begins there."""
    n = int(tasks.shape[0])
    if n_tasks <= kernels.GROUP_KEYS:
        order, begins = stable_group(xp, tasks)
    else:  # more tasks than the counting sort's keys
        order = np.argsort(tasks, kind="stable") if xp is np else xp.lexsort(xp.stack([xp.arange(n), tasks]))
        counts = xp.bincount(tasks, minlength=n_tasks)
        begins = xp.cumsum(counts) - counts
    rank = xp.empty(n, dtype=xp.int64)
    rank[order] = xp.arange(n, dtype=xp.int64) - begins[tasks[order]]
    return rank


def best_of_groups(tasks: np.ndarray, trs: np.ndarray, rank: np.ndarray, gids: np.ndarray, size: int):
    """The offers that the boards are offered (host arrays, one entry per offer): of each task and
    transform, the ``size`` best by ``rank``, ties to the smaller id, as positions in
    :func:`offer_order`; None where no task and transform has more than ``size`` (all are)."""
    group = tasks.astype(np.int64) * (int(trs.max()) + 1 if len(trs) else 1) + trs
    if not len(group) or int(np.bincount(group).max()) <= size:
        return None
    order = offer_order(tasks, trs, rank, gids)
    run_task, run_tr = tasks[order], trs[order]
    first = np.r_[0, np.nonzero(np.diff(run_task) | np.diff(run_tr))[0] + 1]
    pos = np.arange(len(order)) - np.repeat(first, np.diff(np.r_[first, len(order)]))
    return order[pos < size]


def offer_order(tasks: np.ndarray, trs: np.ndarray, rank: np.ndarray, gids: np.ndarray) -> np.ndarray:
    """``np.lexsort((gids, -rank, trs, tasks))``: by task, then transform, then rank (best first),
    then id. Where the ids already ascend (new states' ids follow their positions), two stable
    sorts give that order about twice as fast (tens of milliseconds where a GPU's absorb offers
    hundreds of thousands of states to boards with room)."""
    if len(gids) > 1 and bool((gids[1:] < gids[:-1]).any()):
        return np.lexsort((gids, -rank, trs, tasks))
    by_rank = np.argsort(-rank, kind="stable")
    group = tasks.astype(np.int64) * (int(trs.max()) + 1 if len(trs) else 1) + trs
    if len(group) and int(group.max()) < 1 << 16:  # NumPy's stable sort of 16-bit values is a radix sort
        group = group.astype(np.uint16)
    return by_rank[np.argsort(group[by_rank], kind="stable")]
