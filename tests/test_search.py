"""The batched search finds known programs on synthetic tasks built from the DSL, and its results
do not depend on batching choices (padded buckets, shards)."""
from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pipeline.search.problem as problem_mod
import pipeline.search.absorb as absorb_mod
import pipeline.search.blocks as blocks_mod
import pipeline.search.distinct as distinct_mod
import pipeline.search.driver as search_mod
from pipeline.search.leaderboard import LEADERBOARD_SIZE
from pipeline.search.mechanisms import MECHANISMS
from pipeline.search.colour_roles import VARIANT_SUFFIX
from pipeline.search.post_search import split
from pipeline.search.shards import run_search, search_shard, split_tasks
from pipeline.search.problem import Problem
from pipeline.search.blocks import within_budget
from pipeline.search.boards import offer_order
from pipeline.search.driver import Search
from pipeline.run.tasks import Task, load_tasks
from solvers import dsl


def _random_grid(rng, h, w, density=0.35):
    g = rng.integers(1, 10, size=(h, w)) * (rng.random((h, w)) < density)
    if not g.any():
        g[0, 0] = 3
    return g.astype(np.uint8)


def _synthetic_task(task_id, program, rng, n_train=3, n_test=1):
    """A task whose outputs are ``program`` applied to random inputs (resampled until defined)."""
    def run(grid):
        for name, args in program:
            grid = getattr(dsl, name)(grid, *args)
        return np.asarray(grid, dtype=np.uint8)

    pairs = []
    while len(pairs) < n_train + n_test:
        g = _random_grid(rng, int(rng.integers(3, 9)), int(rng.integers(3, 9)))
        try:
            out = run(g)
        except ValueError:
            continue
        if out.shape[0] > 30 or out.shape[1] > 30:
            continue
        pairs.append((g, out))
    train, test = pairs[:n_train], pairs[n_train:]
    task = Task(task_id, tuple(p[0] for p in train), tuple(p[1] for p in train), tuple(p[0] for p in test))
    return task, [p[1] for p in test]


PROGRAMS = [
    [("rot90", ())],
    [("gravity", ("down",))],
    [("largest_object", (8, True))],
    [("flip_lr", ()), ("upscale", (2,))],
    [("crop_content", ()), ("mirror_lr", ())],
    [("rays", ("lr",)), ("remove_color", (5,))],
]


@pytest.fixture(scope="module")
def synthetic():
    rng = np.random.default_rng(7)
    return [_synthetic_task(f"syn{i}", prog, rng) for i, prog in enumerate(PROGRAMS)]


def _solve(tasks, depth):
    search = Search(Problem(tasks, np))
    search.run(depth)
    return search


def test_finds_depth_1_and_2_programs(synthetic):
    tasks = [t for t, _ in synthetic]
    search = _solve(tasks, 2)
    for t, (task, answers) in enumerate(synthetic):
        board = search.boards[t]
        assert board and board[0].solved, f"{task.id}: no solver found"
        predicted = board[0].test_outputs
        # A solver fits every train pair; on these tasks the intended answer is among the top two.
        assert any(all(np.array_equal(p, a) for p, a in zip(c.test_outputs, answers)) for c in board[:2]), task.id
        assert len(search.table.path(board[0].gid)) <= len(PROGRAMS[t])
        assert len(predicted) == len(answers)


def test_warm_up_tasks_are_solved_by_turning_their_grids():
    """The made-up tasks of a GPU process's warm-up search are valid tasks of every size bucket
    that a depth-2 search solves (so its scoring paths run too)."""
    from pipeline.search.shards import _search, warm_up_tasks

    tasks = warm_up_tasks()
    sides = {g.shape for t in tasks for g in t.train_inputs + t.test_inputs}
    assert {(3, 3), (30, 30)} <= sides and len(tasks) == 3
    result = _search(np, tasks, 2, 0, None, 1000, None)
    assert set(result.programs) == {t.id for t in tasks}
    for found in result.programs.values():
        assert found[0].solved and found[0].test_outputs


def test_learned_colour_map_solves_recolouring():
    rng = np.random.default_rng(3)
    table = {1: 2, 3: 7, 8: 1}
    task, answers = _synthetic_task("cmap", [("flip_ud", ()), ("colormap", (table,))], rng, n_train=4)
    seen = set(np.unique(np.concatenate([g.ravel() for g in task.train_inputs])).tolist())
    assert set(table) <= seen  # the table is learnable from these train pairs
    search = _solve([task], 1)
    best = search.boards[0][0]
    assert best.solved and best.mapping == table
    assert search.table.path(best.gid) == [t for t, tr in enumerate(search.transforms) if tr.name == "flip_ud"]
    assert np.array_equal(best.test_outputs[0], answers[0])


def _recoloured_task(table: dict, test_colour: int, seed: int = 0):
    """Train grids of the table's colours recoloured by it; one test grid that also holds
    ``test_colour``, which no train grid holds."""
    rng = np.random.default_rng(seed)
    colours = np.array(sorted(table), dtype=np.uint8)
    lut = np.arange(10, dtype=np.uint8)
    for src, dst in table.items():
        lut[src] = dst
    grids = [colours[rng.integers(0, len(colours), (5, 6))] * (rng.random((5, 6)) < 0.7) for _ in range(4)]
    grids = [g.astype(np.uint8) for g in grids]
    grids[3][0, :] = test_colour
    return Task("recolour", tuple(grids[:3]), tuple(lut[g] for g in grids[:3]), (grids[3],))


@pytest.mark.parametrize("table, unseen_to", [({1: 5, 2: 5, 3: 5, 6: 6}, 5), ({1: 5, 2: 5, 3: 3, 6: 6}, 4)])
def test_learnt_colour_table_sends_unseen_colours_where_most_seen_ones_go(table, unseen_to):
    """A colour no train grid holds (4) goes where three or more, and most, of the seen non-zero
    colours go ("every object 5"); with fewer agreeing it keeps its colour."""
    task = _recoloured_task(table, 4)
    search = _solve([task], 0)
    best = search.boards[0][0]
    assert best.solved and best.mapping.get(4, 4) == unseen_to
    assert (best.test_outputs[0][task.test_inputs[0] == 4] == unseen_to).all()


def test_unsolvable_task_still_ranks_partial_credit():
    rng = np.random.default_rng(5)
    grids = [_random_grid(rng, 5, 5) for _ in range(4)]
    outs = [rng.integers(0, 10, (5, 5)).astype(np.uint8) for _ in range(3)]
    task = Task("noise", tuple(grids[:3]), tuple(outs), (grids[3],))
    search = _solve([task], 1)
    board = search.boards[0]
    assert board and not board[0].solved
    assert all(board[i].rank >= board[i + 1].rank for i in range(len(board) - 1))
    assert all(c.test_outputs[0].shape == (5, 5) for c in board[:1])  # right size ranks first


def _boards(search):
    return [[(search.table.path(c.gid), round(c.rank, 6), [o.tolist() for o in c.test_outputs])
             for c in b] for b in search.boards]


@pytest.fixture(scope="module")
def real_tasks():
    tasks, _ = load_tasks("arc1-train", 12)
    return tasks


@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 4), st.sampled_from([-1.0, -0.0, 0.0, 0.5, 2.0, 99.0])),
                max_size=60), st.booleans())
def test_offer_order_is_lexsorts(rows, shuffled):
    """Boards' offers ordered by task, transform, rank (best first), id: as np.lexsort orders them,
    with ids ascending (the fast path) or not (lexsort itself); ties and signed zeros included."""
    tasks = np.array([r[0] for r in rows], dtype=np.int64)
    trs = np.array([r[1] for r in rows], dtype=np.int64)
    rank = np.array([r[2] for r in rows], dtype=np.float64)
    gids = np.arange(len(rows), dtype=np.int64) * 3 + 7
    if shuffled:
        gids = gids[::-1].copy()
    want = np.lexsort((gids, -rank, trs, tasks))
    assert offer_order(tasks, trs, rank, gids).tolist() == want.tolist()


def test_put_off_board_updates_all_run_by_the_end(real_tasks, monkeypatch):
    """Leaderboard updates finished later (while the next transform runs) are all run by the
    search's end, also on levels that keep states (their next blocks then hold states of tasks
    solved meanwhile, dropped a level later), and give what one absorb per level gives."""
    deferred = _solve(real_tasks, 2)
    # Tasks solved on level 1, which keeps states.
    assert any(c.solved and len(deferred.table.path(c.gid)) == 1 for b in deferred.boards for c in b)
    assert deferred._deferred is None
    # Level 1 scored in one absorb: its update is still put off when level 2 starts, and the solved
    # flags it will set are set then (they decide which states level 2 drops).
    flagged = []
    real_mark = Search._mark_deferred_solved

    def mark(self):
        before = self.solved.copy()
        real_mark(self)
        flagged.append(int((self.solved & ~before).sum()))

    monkeypatch.setattr(Search, "_mark_deferred_solved", mark)
    one = Search(Problem(real_tasks, np), absorb_cells=10**12)
    one.run(2)
    assert _boards(one) == _boards(deferred) and one.solved.tolist() == deferred.solved.tolist()
    assert (one.stats.states, one.stats.candidates) == (deferred.stats.states, deferred.stats.candidates)
    assert flagged[1] > 0  # level 2's start (level 1's has nothing put off)


@pytest.mark.parametrize("sides", [(10, 20, 30), (10, 30), (30,)])
def test_gpu_bucket_layout_gives_identical_results(real_tasks, monkeypatch, sides):
    """The GPU's path on the CPU: every padding-aware primitive bucketed, with the GPU's few
    large buckets (or one), gives the same boards as the CPU's own layout."""
    plain = _boards(_solve(real_tasks, 2))
    monkeypatch.setitem(problem_mod.BUCKET_SIDES, "cpu", sides)
    problem = Problem(real_tasks, np)
    search = Search(problem, bucket_all=True)
    search.run(2)
    assert _boards(search) == plain


def test_results_do_not_depend_on_batch_composition(real_tasks):
    together = {t.id: c for t, c in zip(real_tasks, _boards(_solve(real_tasks, 2)))}
    for group in split_tasks(real_tasks, 3):
        alone = {t.id: c for t, c in zip(group, _boards(_solve(group, 2)))}
        for tid, cands in alone.items():
            assert cands == together[tid], tid


def _paths(search, gids):
    return [search.table.path(g) for g in gids]


def test_the_snapshot_before_the_last_level_holds_the_shallower_searchs_boards_and_pieces(real_tasks):
    """Free steps off (they are a level after the last), a depth-2 search's snapshot is what a
    depth-1 search ends with."""
    shallow = Search(Problem(real_tasks, np), free_steps=False)
    shallow.run(1)
    deep = Search(Problem(real_tasks, np), free_steps=False)
    deep.run(2)
    assert shallow.snapshot is None and deep.snapshot is not None
    for t in range(len(real_tasks)):
        ours, theirs = deep.snapshot.boards[t], shallow.boards[t]
        assert _paths(deep, [c.gid for c in ours]) == _paths(shallow, [c.gid for c in theirs])
        assert [(c.rank, c.solved) for c in ours] == [(c.rank, c.solved) for c in theirs]
        assert all(np.array_equal(a, b) for c, d in zip(ours, theirs) for a, b in zip(c.test_outputs, d.test_outputs))
        assert _paths(deep, deep.snapshot.pieces.gids_of(t)) == _paths(shallow, shallow.pieces.gids_of(t))


def test_a_deeper_search_keeps_every_program_of_a_search_one_level_shallower(real_tasks):
    """The programs of a depth-1 search (its boards, layers, templates and sizes) are among those
    of the depth-2 search, though level 2's candidates push them off the boards (``shallower``)."""
    mechanisms = tuple(m for m in MECHANISMS if m != "free_steps")
    shallow = search_shard(real_tasks, 1, 0, None, 8000, mechanisms=mechanisms).programs
    deep = search_shard(real_tasks, 2, 0, None, 8000, mechanisms=mechanisms).programs
    pushed_off = 0
    for task in real_tasks:
        on_boards = {p.identity() for p in deep[task.id][:LEADERBOARD_SIZE]}
        found = {p.identity(): p for p in deep[task.id]}
        for program in shallow[task.id]:
            assert program.identity() in found, (task.id, program.identity())
            assert found[program.identity()] == program
            pushed_off += program.identity() not in on_boards
    assert pushed_off  # the case this guards: level 2 pushed some off the boards
    # Switched off (--without shallower), some are lost.
    without = search_shard(real_tasks, 2, 0, None, 8000,
                           mechanisms=tuple(m for m in mechanisms if m != "shallower")).programs
    assert any(p.identity() not in {q.identity() for q in without[task.id]}
               for task in real_tasks for p in shallow[task.id])


def test_helper_processes_build_the_same_programs(real_tasks):
    """The post-search mechanisms built by helper processes (the snapshot's during the last level,
    the final boards' split between them) give every program that this process builds, in order;
    the tasks include colour-roles variants, which go with their raw tasks."""
    here = search_shard(real_tasks, 2, 0, None, 8000)
    helped = search_shard(real_tasks, 2, 0, None, 8000, helpers=2)
    assert helped.programs == here.programs
    assert any(p.layers for programs in here.programs.values() for p in programs)  # the mechanisms built some
    assert helped.stage_seconds["search.layers"] > 0


def test_split_keeps_a_variant_with_its_raw_task_and_balances_the_cost():
    tasks = [Task(name, (), (), ()) for name in ("a", "b", "b" + VARIANT_SUFFIX, "c", "d")]
    cost = {"a": 5.0, "b": 2.0, "b" + VARIANT_SUFFIX: 2.0, "c": 3.0, "d": 1.0}
    groups = split(tasks, 2, lambda t: cost[t.id])
    assert sorted(t.id for g in groups for t in g) == sorted(cost)
    assert any({"b", "b" + VARIANT_SUFFIX} <= {t.id for t in g} for g in groups)
    assert sorted(sum(cost[t.id] for t in g) for g in groups) == [6.0, 7.0]
    assert len(split(tasks, 9, lambda t: cost[t.id])) == 4  # no more groups than families


def test_last_level_skips_shape_keeping_transforms_where_they_cannot_help(real_tasks, monkeypatch):
    """On the last level, transforms that keep shape skip states with no train grid of its
    output's size (in tasks with full boards and no crops to come): the same programs, from fewer
    grid transforms."""
    tasks = real_tasks[:6]
    narrowed = search_shard(tasks, 2, 0, None, 8000)
    real_init = Search.__init__

    def every_state(self, *args, **kw):
        real_init(self, *args, **kw)
        self.keeps_shape[:] = False

    monkeypatch.setattr(Search, "__init__", every_state)
    whole = search_shard(tasks, 2, 0, None, 8000)
    assert narrowed.programs == whole.programs
    assert narrowed.grid_transforms < 0.95 * whole.grid_transforms
    # Without device memory for the subset, every state: the same programs.
    monkeypatch.setattr(Search, "__init__", real_init)

    real_subset = search_mod._subset

    def no_room(*args):
        if sys._getframe(1).f_code.co_name == "_shape_keeping_states":
            raise MemoryError("simulated out of device memory")
        return real_subset(*args)

    monkeypatch.setattr(search_mod, "_subset", no_room)
    cramped = search_shard(tasks, 2, 0, None, 8000)
    assert cramped.programs == whole.programs and cramped.grid_transforms == whole.grid_transforms


def test_sharded_engine_matches_single_process(real_tasks):
    single = run_search(real_tasks[:6], 1, shards=1)
    sharded = run_search(real_tasks[:6], 1, shards=2)
    assert single.programs == sharded.programs
    assert single.states == sharded.states


def test_deadline_truncates(real_tasks):
    import time

    res = run_search(real_tasks, 2, deadline=time.time() - 1)
    assert res.truncated



def test_out_of_memory_halves_the_block_and_keeps_results(real_tasks, monkeypatch):
    tasks = real_tasks[:6]
    expected = _boards(_solve(tasks, 2))
    real_apply = Search._apply
    calls = {"failed": 0}

    def tight_apply(self, block, tr):
        if block.num_states > 40:  # pretend the device has room for 40 states only
            calls["failed"] += 1
            raise MemoryError("simulated out of device memory")
        return real_apply(self, block, tr)

    monkeypatch.setattr(Search, "_apply", tight_apply)
    search = _solve(tasks, 2)
    assert calls["failed"] > 0 and search.stats.oom_splits > 0
    assert _boards(search) == expected


@pytest.mark.parametrize("tight", [False, True], ids=["", "out-of-memory"])
def test_distinct_grids_give_identical_results(real_tasks, monkeypatch, tight):
    """Applying each transform to a block's distinct grids and mapping the outputs back gives what
    applying it to every grid gives; also where the distinct grids are split (out of memory)."""
    tasks = real_tasks[:8]
    monkeypatch.setitem(distinct_mod.DISTINCT_MIN_ITEMS, "cpu", 1 << 62)  # no block is large enough
    plain = _solve(tasks, 2)
    monkeypatch.setitem(distinct_mod.DISTINCT_MIN_ITEMS, "cpu", 0)
    monkeypatch.setattr(distinct_mod, "DISTINCT_MIN_REPEATS", 0.0)
    mapped = {"outputs": 0}
    real_mapped = distinct_mod._DistinctGrids._mapped

    def counting_mapped(self, parts):
        mapped["outputs"] += 1
        return real_mapped(self, parts)

    monkeypatch.setattr(distinct_mod._DistinctGrids, "_mapped", counting_mapped)
    if tight:
        real_apply = Search._apply

        def tight_apply(self, block, tr):
            if block.num_states > 40:  # the view's grids are its states: it is split too
                raise MemoryError("simulated out of device memory")
            return real_apply(self, block, tr)

        monkeypatch.setattr(Search, "_apply", tight_apply)
    search = _solve(tasks, 2)
    assert mapped["outputs"] > 0
    assert _boards(search) == _boards(plain)
    assert search.stats.states == plain.stats.states
    assert search.stats.grid_transforms == plain.stats.grid_transforms
    assert search.stats.grid_transforms_computed < plain.stats.grid_transforms_computed


def test_no_room_for_distinct_grids_applies_transforms_to_every_grid(real_tasks, monkeypatch):
    """Where finding a block's distinct grids runs out of device memory, the block's every grid is
    transformed, with the same results."""
    tasks = real_tasks[:6]
    expected = _boards(_solve(tasks, 2))
    monkeypatch.setitem(distinct_mod.DISTINCT_MIN_ITEMS, "cpu", 0)
    calls = {"failed": 0}

    def no_room(xp, keys):
        calls["failed"] += 1
        raise MemoryError("simulated out of device memory")

    monkeypatch.setattr(distinct_mod, "first_positions", no_room)
    search = _solve(tasks, 2)
    assert calls["failed"] > 0 and search.stats.oom_splits == calls["failed"]
    assert search.stats.grid_transforms_computed == search.stats.grid_transforms
    assert _boards(search) == expected


def test_many_small_blocks_give_identical_results(real_tasks):
    tasks = real_tasks[:8]
    expected = _boards(_solve(tasks, 2))
    search = Search(Problem(tasks, np), block_cells=3000)  # most tasks get blocks of their own
    search.run(2)
    assert _boards(search) == expected


def _outcome(search):
    return _boards(search), search.stats.states, search.stats.candidates, search.solved.tolist()


@pytest.mark.parametrize("absorb_cells", [1, 50_000, 10**9])
def test_absorbing_transforms_together_gives_identical_results(real_tasks, absorb_cells):
    """Scoring the new grids of several transforms at once (and elementwise transforms as one
    lookup) gives what scoring after every transform gives: the same boards, states and solved
    tasks, also with a per-task budget that binds and tasks solved mid-level."""
    def run(cells):
        search = Search(Problem(real_tasks, np), states_per_task=60, absorb_cells=cells)
        search.run(2)
        return search

    one_by_one = run(0)
    assert one_by_one.solved.any() and one_by_one.stats.states > 0
    assert _outcome(run(absorb_cells)) == _outcome(one_by_one)


def test_test_outputs_crossing_in_batches_of_any_size_give_identical_boards(real_tasks):
    """Candidates' test outputs queued on the device and copied later (pipeline/search/candidate_outputs.py)
    are the same whether they cross after every queued batch or once at the end, and every
    candidate on a board has one per test input of its task."""
    made = []

    def run(flush_cells):
        search = Search(Problem(real_tasks, np), states_per_task=60)
        search.candidate_outputs.flush_cells = flush_cells
        queue = search.candidate_outputs.queue
        search.candidate_outputs.queue = lambda block, out, idx, cands, luts: (made.extend(cands),
                                                                         queue(block, out, idx, cands, luts))
        search.run(2)
        return search

    each = run(1)
    made.clear()
    once = run(10**12)
    assert _outcome(each) == _outcome(once)
    for task, board in zip(real_tasks, once.boards):
        assert board and all(len(c.test_outputs) == len(task.test_inputs) for c in board)
    # Crossing once at the end, only the candidates still on a board (or on the snapshot's boards,
    # whose grids cross when it is taken) get their grids.
    on_board = {id(c) for board in once.boards + once.snapshot.boards for c in board}
    dropped = [c for c in made if id(c) not in on_board]
    assert dropped and all(c.test_outputs == [] for c in dropped)


def test_elementwise_lookup_tables_match_the_primitives():
    """The colour tables the search derives from elementwise primitives reproduce them."""
    tasks = [_synthetic_task("lut", [("rot90", ())], np.random.default_rng(1))[0]]
    search = Search(Problem(tasks, np))
    cells = np.random.default_rng(2).integers(0, 10, size=(1, 7, 9)).astype(np.uint8)
    elementwise = [ti for ti, tr in enumerate(search.transforms) if tr.primitive.elementwise]
    assert len(elementwise) > 5
    luts = search._luts(tuple(search.transforms[ti] for ti in elementwise))
    for k, ti in enumerate(elementwise):
        assert np.array_equal(luts[k][cells], search.transforms[ti](np, cells)), search.transforms[ti]


def test_out_of_memory_while_scoring_together_splits_the_outputs(real_tasks, monkeypatch):
    """Merging many transforms' grids to score them together may run out of device memory:
    the outputs are then scored in halves, with the same results."""
    tasks = real_tasks[:6]
    expected = _outcome(_solve(tasks, 2))
    real_merge = absorb_mod._merge_outputs
    calls = {"failed": 0}

    def tight_merge(xp, outputs):
        if len(outputs) > 3:  # pretend the device has room for three transforms' grids only
            calls["failed"] += 1
            raise MemoryError("simulated out of device memory")
        return real_merge(xp, outputs)

    monkeypatch.setattr(absorb_mod, "_merge_outputs", tight_merge)
    search = Search(Problem(tasks, np), absorb_cells=10**9)
    search.run(2)
    assert calls["failed"] > 0 and search.stats.oom_splits > 0
    assert _outcome(search) == expected


def test_kept_shard_workers_serve_several_searches(real_tasks):
    """Started (and warmed up) shard processes serve one search after another, with the results
    of a single process; given to run_search for their slots, they are used."""
    from pipeline.search.shards import ShardWorkers

    tasks = real_tasks[:6]
    single = run_search(tasks, 1, shards=1)
    with ShardWorkers([None, None]) as workers:
        first = workers.search(split_tasks(tasks, 2), 1, 0, None, 20_000)
        again = run_search(tasks, 1, shards=2, workers=workers)
    assert first.programs == again.programs == single.programs
    assert first.states == again.states == single.states
    with pytest.raises(RuntimeError):  # closed: they are used (and fail), not replaced by new ones
        run_search(tasks, 1, shards=2, workers=workers)


def test_first_shard_searches_in_this_process_and_the_others_in_workers(real_tasks, monkeypatch):
    """Shard slot 0 searches in the calling process (no process to start and warm up), the
    other slots in their worker processes; results are those of a single search."""
    import os

    import pipeline.search.shards
    from pipeline.search.shards import ShardWorkers

    tasks = real_tasks[:6]
    single = run_search(tasks, 1, shards=1)
    seen = []
    real = pipeline.search.shards._search

    def recording(xp, group, *args, **kw):
        seen.append((os.getpid(), [t.id for t in group]))
        return real(xp, group, *args, **kw)

    monkeypatch.setattr(pipeline.search.shards, "_search", recording)
    groups = split_tasks(tasks, 2)
    with ShardWorkers([None, None]) as workers:
        assert workers.ready() >= 0.0
        found = workers.search(groups, 1, 0, None, 20_000)
    assert seen == [(os.getpid(), [t.id for t in groups[0]])]  # the worker's search is not patched
    assert found.programs == single.programs and found.states == single.states


def test_a_worker_that_cannot_warm_up_fails_the_run_when_it_is_needed():
    """A shard process whose device cannot be used (GPU 97: none here) reports that from ready()."""
    from pipeline.search.shards import ShardWorkers

    workers = ShardWorkers([None, 97])
    with pytest.raises(Exception):
        workers.ready()
    workers.stop()


def test_processes_started_early_serve_the_shards_and_spares_end(real_tasks):
    """Search processes started before the device is known (start_processes) become the shard
    workers; those beyond the slots' needs are ended."""
    from pipeline.search.shards import ShardWorkers, start_processes

    tasks = real_tasks[:6]
    started = start_processes(2, gpu=True)  # imports CuPy where it can; here it need not exist
    with ShardWorkers([None, None], started=started) as workers:
        assert workers.pools == started[:1]
        with pytest.raises(RuntimeError):  # the spare was stopped
            started[1].schedule(len, args=([],))
        found = workers.search(split_tasks(tasks, 2), 1, 0, None, 20_000)
    assert found.programs == run_search(tasks, 1, shards=1).programs


def test_out_of_memory_while_scoring_new_states_scores_them_in_halves(real_tasks, monkeypatch):
    """Scoring (cell accuracy, colour tables) may run out of device memory after the new states
    were recorded: they are then scored in halves, with the same results."""
    tasks = real_tasks[:6]
    expected = _outcome(_solve(tasks, 2))
    real_score = Search._score
    calls = {"failed": 0}

    def tight_score(self, block, out, hv, mixed, new_dev, level):
        if int(new_dev.shape[0]) > 30:  # pretend the device has room to score 30 states only
            calls["failed"] += 1
            raise MemoryError("simulated out of device memory")
        return real_score(self, block, out, hv, mixed, new_dev, level)

    monkeypatch.setattr(Search, "_score", tight_score)
    search = _solve(tasks, 2)
    assert calls["failed"] > 0 and search.stats.oom_splits > 0
    assert _outcome(search) == expected


def test_block_size_follows_free_memory_a_pool_limit_and_sharing():
    from pipeline.search.shards import BYTES_PER_CELL, block_cells_for_memory

    GB = 2**30
    h100 = block_cells_for_memory(79 * GB, 80 * GB, 0)
    as_l4 = block_cells_for_memory(79 * GB, 80 * GB, 22 * GB)  # CUPY_GPU_MEMORY_LIMIT=23622320128 (22 GiB)
    l4 = block_cells_for_memory(22 * GB, 22 * GB, 0)
    assert h100[0] == min(400_000_000, int(0.9 * 80 * GB) // BYTES_PER_CELL)
    assert as_l4 == l4 and as_l4[0] < h100[0] and as_l4[1] <= 22 * GB
    # Two processes on one card each get about half; a busy card gives less; never below the floor.
    two = block_cells_for_memory(79 * GB, 80 * GB, 0, gpu_share=2)
    assert two[1] == int(0.45 * 80 * GB) and two[0] <= h100[0] // 2 + 1
    assert block_cells_for_memory(4 * GB, 80 * GB, 0)[0] < h100[0]
    assert block_cells_for_memory(10 * 2**20, 80 * GB, 0)[0] == 2_000_000


def test_cpu_search_processes_use_one_blas_thread(real_tasks, monkeypatch):
    """Each CPU search process (in this process, and each shard process) runs its matrix
    products on one BLAS thread: the search already runs a process per core."""
    from threadpoolctl import threadpool_info

    import pipeline.search.shards

    seen = []
    real = pipeline.search.shards._search

    def recording(xp, *args, **kw):
        seen.append([pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"])
        return real(xp, *args, **kw)

    monkeypatch.setattr(pipeline.search.shards, "_search", recording)
    run_search(real_tasks[:2], 1)
    assert seen and all(threads == [1] * len(threads) for threads in seen) and seen[0]
    # Shard processes: the limit holds in a fresh interpreter too.
    from pipeline.search.shards import ShardWorkers

    with ShardWorkers([None, None]) as workers:  # the second slot is a process of its own
        threads = workers.pools[0].schedule(_blas_threads_in_search).result(timeout=120)
    assert threads and threads == [1] * len(threads)


def _blas_threads_in_search():
    from threadpoolctl import threadpool_info

    import pipeline.search.shards

    found = []
    real = pipeline.search.shards._search

    def recording(xp, *args, **kw):
        found.extend(pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas")
        return real(xp, *args, **kw)

    pipeline.search.shards._search = recording
    from pipeline.run.tasks import load_tasks

    tasks, _ = load_tasks("arc1-train", 2)
    pipeline.search.shards.search_shard(tasks, 1, 0, None, 100)
    return found


@pytest.mark.parametrize("block_cells", [3000, 10**9])
def test_out_of_memory_while_regrouping_builds_each_block_alone(real_tasks, monkeypatch, block_cells):
    """Cutting a level's new states into the next level's blocks merges them all first; if that
    runs out of device memory, each block is built from its own tasks' states alone: the same
    blocks, so the same results."""
    tasks = real_tasks[:8]

    def run():
        search = Search(Problem(tasks, np), block_cells=block_cells, states_per_task=200)
        search.run(3)
        return search

    expected = _outcome(run())
    calls = {"failed": 0}

    def no_room(self, pending):
        calls["failed"] += 1
        raise MemoryError("simulated out of device memory")

    monkeypatch.setattr(blocks_mod._BlockBuilder, "_merge_and_cut", no_room)
    search = run()
    assert calls["failed"] > 0 and search.stats.oom_splits >= calls["failed"]
    assert _outcome(search) == expected


def test_out_of_memory_while_taking_kept_grids_takes_them_in_halves(real_tasks, monkeypatch):
    """Copying the grids of the states kept for the next level may run out of device memory
    after the boards were updated: the states are then taken in halves (blocks in order, merged
    back by the regrouping), with the same results."""
    from pipeline.search.problem import Items

    tasks = real_tasks[:8]

    def run():
        search = Search(Problem(tasks, np), states_per_task=200)
        search.run(3)
        return search

    expected = _outcome(run())
    calls = {"failed": 0}
    # Pretend the device has room for 50 kept grids only.
    monkeypatch.setattr(Items, "take", _out_of_memory_when(Items.take, "_kept_blocks", calls,
                                                           lambda self, order, grouped=False: len(order) > 50))
    search = run()
    assert calls["failed"] > 0 and search.stats.oom_splits >= calls["failed"]
    assert _outcome(search) == expected


def test_out_of_memory_while_dropping_solved_tasks_keeps_whole_tasks(real_tasks, monkeypatch):
    """At a level's start the states of solved tasks are dropped by copying the rest of a block;
    if that runs out of device memory, the block is cut into blocks of whole tasks (halving its
    tasks), with the same results."""
    tasks = real_tasks[:10]

    def run():
        # Scoring after every transform: a task solved by a later transform of a level already
        # has states kept for the next level, which its start drops.
        search = Search(Problem(tasks, np), states_per_task=200, absorb_cells=1)
        search.run(3)
        return search

    expected = _outcome(run())
    calls = {"failed": 0}
    # Pretend the device has room for two tasks' states only.
    monkeypatch.setattr(search_mod, "_subset", _out_of_memory_when(
        search_mod._subset, "_keep_states", calls, lambda xp, block, keep: len(set(block.task[keep].tolist())) > 2))
    search = run()
    assert calls["failed"] > 0 and search.stats.oom_splits >= calls["failed"]
    assert _outcome(search) == expected


def _out_of_memory_when(real, caller: str, calls: dict, too_big):
    """``real`` wrapped to raise MemoryError (counted in ``calls["failed"]``) when the function
    named ``caller`` calls it with arguments that ``too_big`` says do not fit."""
    def tight(*args, **kwargs):
        if sys._getframe(1).f_code.co_name == caller and too_big(*args, **kwargs):
            calls["failed"] += 1
            raise MemoryError("simulated out of device memory")
        return real(*args, **kwargs)
    return tight


def test_no_room_for_the_queue_buffer_gives_outputs_their_own_memory(real_tasks, monkeypatch):
    """The outputs of a queue are cut from one buffer of the absorb budget's size; when that
    buffer does not fit in device memory, each output gets its own, with the same results and no
    block halved."""
    tasks = real_tasks[:8]
    budget = 300_000

    def run():
        search = Search(Problem(tasks, np), absorb_cells=budget)
        search.run(2)
        return search

    expected = _outcome(run())
    calls = {"failed": 0}
    monkeypatch.setattr(np, "empty", _out_of_memory_when(np.empty, "cells", calls,
                                                         lambda shape, *a, **k: shape == budget))
    search = run()
    assert calls["failed"] > 0 and search.stats.oom_splits == 0
    assert _outcome(search) == expected


@given(st.lists(st.integers(0, 5), max_size=80), st.lists(st.integers(0, 12), min_size=6, max_size=6),
       st.integers(1, 10))
def test_within_budget_keeps_each_tasks_first_states(tasks, kept, budget):
    """The new states kept are each task's first ``budget - kept`` (none where it is full)."""
    seen = list(kept)
    want = []
    for t in tasks:
        want.append(seen[t] < budget)
        seen[t] += 1
    got = within_budget(np.array(tasks, dtype=np.int64), np.array(kept, dtype=np.int64), budget)
    assert got.tolist() == want


def test_pending_queue_absorbs_early_only_where_that_saves_copying_its_cells():
    """Outputs cut back to back from the queue's buffer join it; one cut from a new buffer (the
    last had no room) does not, so the queue is absorbed before it and merging copies nothing;
    outputs with memory of their own (the CPU's) join as before; the buffer outlives an absorb."""
    from types import SimpleNamespace

    from pipeline.search.problem import join_cells

    def output(cells):
        return SimpleNamespace(items=SimpleNamespace(cells=cells), block=SimpleNamespace(num_states=1))

    pending = absorb_mod._Pending(np, budget_cells=1000, max_samples=1)
    a, b = output(pending.cells(300)), output(pending.cells(300))
    assert pending.joins(a) and not pending.add(a)
    assert pending.joins(b) and not pending.add(b)
    spilled = output(pending.cells(600))  # no room left: a new buffer
    assert not pending.joins(spilled)
    taken = pending.take()
    joined = join_cells(np, [o.items.cells for o in taken])
    assert joined.base is taken[0].items.cells.base  # a view: nothing copied
    assert pending.joins(spilled) and not pending.add(spilled)
    after = output(pending.cells(100))  # cut after it in the same buffer
    assert pending.joins(after) and not pending.add(after)  # cost 600 + 100 + 2 * 32 < 1000
    own = output(np.zeros(50, dtype=np.uint8))  # memory of its own: copied when absorbed anyway
    assert pending.joins(own)
    pending.add(own)
    late = output(pending.cells(10))
    assert pending.joins(late)  # the queue is no longer one view: nothing to save


def test_search_keeps_older_objects_out_of_full_collections_only_while_it_runs(monkeypatch):
    """engine._search freezes the objects that existed before it (gc.freeze) for the search's
    duration and unfreezes them after, also when the search raises."""
    import gc

    from pipeline.search import shards as engine

    seen = []
    real = engine._search_unfrozen

    def probe(*args, **kwargs):
        seen.append(gc.get_freeze_count())
        return real(*args, **kwargs)

    monkeypatch.setattr(engine, "_search_unfrozen", probe)
    tasks, _ = load_tasks("arc1-train", 2)
    engine._search(np, tasks, 1, 0, None, 100, None)
    assert seen and seen[0] > 1000 and gc.get_freeze_count() == 0

    def fail(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(engine, "_search_unfrozen", fail)
    with pytest.raises(RuntimeError):
        engine._search(np, tasks, 1, 0, None, 100, None)
    assert gc.get_freeze_count() == 0


def test_free_steps_end_a_chain_one_longer_than_the_depth():
    """A depth-1 search with the free steps finds "gravity, then crop to the content"; without
    them it does not."""
    rng = np.random.default_rng(3)
    task, answers = _synthetic_task("free", [("gravity", ("down",)), ("crop_content", ())], rng)
    with_free = Search(Problem([task], np))
    with_free.run(1)
    best = with_free.boards[0][0]
    assert best.solved and [with_free.transforms[i].name for i in with_free.table.path(best.gid)] == \
        ["gravity", "crop_content"]
    assert all(np.array_equal(p, a) for p, a in zip(best.test_outputs, answers))
    without = Search(Problem([task], np), free_steps=False)
    without.run(1)
    assert not without.boards[0][0].solved


def test_free_steps_skip_tasks_whose_outputs_do_not_shrink():
    """Crops cannot make a task's outputs where none is smaller than its input: no state of such a
    task is kept for the free steps, so they add no work."""
    rng = np.random.default_rng(4)
    task, _ = _synthetic_task("same", [("flip_lr", ()), ("upscale", (2,))], rng)
    counts = []
    for free in (True, False):
        search = Search(Problem([task], np), free_steps=free)
        search.run(1)
        counts.append(search.stats.grid_transforms)
    assert counts[0] == counts[1]


def test_a_last_level_block_that_no_shape_keeping_transform_can_help():
    """On the last level, a block none of whose states has a train grid of its output's size, in
    tasks whose boards are full, applies only the transforms that may change shape."""
    rng = np.random.default_rng(5)
    solved_task, _ = _synthetic_task("raw", [("rot90", ())], rng)
    other, _ = _synthetic_task("other", [("gravity", ("down",)), ("crop_content", ()), ("mirror_lr", ())], rng)
    search = Search(Problem([solved_task, other], np), free_steps=False)
    seen = {}
    real = search._shape_keeping_states

    def noted(block, full):
        subset = real(block, full)
        seen["states"], seen["kept"] = block.num_states, subset.num_states
        return subset

    search._shape_keeping_states = noted
    search.run(2)
    assert seen["states"] > 0 and seen["kept"] == 0
    assert not search.boards[1][0].solved
