"""Leaderboards merged by sorting give what inserting candidates one by one gives."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.search.leaderboard import Candidate, Leaderboards, offers_that_may_enter
from pipeline.search.boards import best_of_groups

SIZE = 3


def insert_one_by_one(boards: list, cands: list) -> None:
    """The reference: each candidate (task, gid, rank, key) in order of gid enters its board if
    it beats the board's last entry (when full) and any entry with its key (then replacing it)."""
    for t, g, r, k in sorted(cands, key=lambda c: c[1]):
        board = boards[t]
        if len(board) == SIZE and r <= board[-1][2]:
            continue
        same = [c for c in board if c[3] == k]
        if same:
            if r <= same[0][2]:
                continue
            board.remove(same[0])
        board.append((t, g, r, k))
        board.sort(key=lambda c: (-c[2], c[1]))
        del board[SIZE:]


def make_candidates(tasks, gids, ranks, keys):
    def make(rows):
        return [Candidate(int(gids[i]), float(ranks[i]), False, 0, 0.0, None, [], int(keys[i])) for i in rows]
    return make


batch = st.lists(st.tuples(st.integers(0, 3), st.sampled_from([0.0, 0.25, 0.5, 0.75, 98.0]), st.integers(0, 4)),
                 max_size=25)


@settings(max_examples=300, deadline=None)
@given(st.lists(batch, min_size=1, max_size=6), st.randoms())
def test_offer_matches_one_by_one(batches, rnd):
    boards = Leaderboards(4, size=SIZE)
    reference = [[] for _ in range(4)]
    gid = 0
    for cands in batches:
        rows = []
        for t, r, k in cands:
            rows.append((t, gid, r, k))
            gid += 1
        insert_one_by_one(reference, rows)
        rnd.shuffle(rows)  # offer takes candidates in any order
        tasks = np.array([c[0] for c in rows], dtype=np.int64)
        gids = np.array([c[1] for c in rows], dtype=np.int64)
        ranks = np.array([c[2] for c in rows], dtype=np.float64)
        keys = np.array([c[3] for c in rows], dtype=np.uint64)
        made = boards.offer(tasks, gids, ranks, keys, make_candidates(tasks, gids, ranks, keys))
        for t in range(4):
            assert [(c.gid, c.rank, c.test_key) for c in boards.boards[t]] == [(g, r, k) for _, g, r, k in reference[t]]
            full = len(reference[t]) == SIZE
            assert boards.threshold[t] == (reference[t][-1][2] if full else -1.0)
        on_boards = {id(c) for b in boards.boards for c in b}
        assert all(id(c) in on_boards for c in made)  # only candidates that entered are made


def test_offer_keeps_candidate_objects():
    boards = Leaderboards(1, size=2)
    first = boards.offer(np.array([0]), np.array([0]), np.array([0.5]), np.array([7], dtype=np.uint64),
                         make_candidates([0], [0], [0.5], [7]))
    assert boards.boards[0] == first
    boards.offer(np.array([0, 0]), np.array([1, 2]), np.array([0.9, 0.1]), np.array([8, 9], dtype=np.uint64),
                 make_candidates([0, 0], [1, 2], [0.9, 0.1], [8, 9]))
    assert [c.gid for c in boards.boards[0]] == [1, 0]
    assert boards.boards[0][1] is first[0]  # an entry that stays is the same object
    assert boards.threshold[0] == 0.5


offer_batch = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2), st.sampled_from([0.0, 0.25, 0.5, 98.0]),
                                 st.integers(0, 4), st.booleans(), st.integers(0, 4)), max_size=40)


@settings(max_examples=300, deadline=None)
@given(st.lists(offer_batch, min_size=1, max_size=5), st.floats(0, 1))
def test_offers_that_may_enter_leave_the_boards_as_all_offers_do(batches, exempt_share):
    """Offering only the offers that ``offers_that_may_enter`` keeps (as a GPU does) leaves the boards,
    the candidates made and the tasks found solved as offering every offer that beats its board does.
    Offers of (task, transform, rank, key, exempt, host key): an exempt offer's key on the host is
    another (a learnt colour table's), unknown to the selection."""
    every, chosen = Leaderboards(4, size=SIZE), Leaderboards(4, size=SIZE)
    gid = 0
    for cands in batches:
        n = len(cands)
        tasks = np.array([c[0] for c in cands], dtype=np.int64)
        trs = np.array([c[1] for c in cands], dtype=np.int64)
        ranks = np.array([c[2] for c in cands], dtype=np.float64)
        keys = np.array([c[3] for c in cands], dtype=np.uint64)
        exempt = np.array([c[4] and (i / max(1, n)) < exempt_share for i, c in enumerate(cands)], dtype=bool)
        host_keys = np.where(exempt, np.array([100 + c[5] for c in cands], dtype=np.uint64), keys)
        gids = np.arange(gid, gid + n, dtype=np.int64)
        gid += n
        assert np.array_equal(every.threshold, chosen.threshold)
        beats = ranks > every.threshold[tasks]
        groups = np.where(beats, tasks * 3 + trs, -1)
        may = offers_that_may_enter(np, tasks, groups, ranks, keys, exempt, 4, SIZE)
        assert not (may & ~beats).any()
        made = {}
        for name, boards, rows in (("every", every, np.nonzero(beats)[0]), ("chosen", chosen, np.nonzero(may)[0])):
            top = best_of_groups(tasks[rows], trs[rows], ranks[rows], gids[rows], SIZE)
            if name == "chosen":
                assert top is None  # no task and transform has more than the boards take
            if top is not None:
                rows = rows[top]
            made[name] = [c.gid for c in boards.offer(tasks[rows], gids[rows], ranks[rows], host_keys[rows],
                                                      make_candidates(tasks[rows], gids[rows], ranks[rows],
                                                                      host_keys[rows]))]
            made[name + " solved"] = set(tasks[rows][ranks[rows] >= 98.0].tolist())
        assert sorted(made["every"]) == sorted(made["chosen"])
        assert made["every solved"] == made["chosen solved"]
        for t in range(4):
            assert ([(c.gid, c.rank, c.test_key) for c in every.boards[t]]
                    == [(c.gid, c.rank, c.test_key) for c in chosen.boards[t]])
