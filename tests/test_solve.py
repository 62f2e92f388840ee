"""The post-search stage: found solvers are inlined, validated in the pool, stored (dedup by id)
and used for attempts; a solver whose isolated run disagrees with the search is dropped."""
from __future__ import annotations

import numpy as np
import pytest

from cache import open_cache
from pipeline.finish.program import FoundProgram
from pipeline.run.runner import StageTimer
from pipeline.finish.select import choose_attempts
from pipeline.finish.finisher import SolverPipeline
from pipeline.finish.store import SolverStore
from pipeline.run.tasks import Task
from pipeline.finish.validate import ValidationPool
from solvers import dsl


@pytest.fixture(scope="module")
def pool():
    with ValidationPool(1, timeout=5.0) as p:
        yield p


def _task():
    rng = np.random.default_rng(1)
    grids = [rng.integers(0, 10, (3, 4)).astype(np.uint8) for _ in range(3)]
    return Task("rot", tuple(grids[:2]), tuple(np.rot90(g) for g in grids[:2]), (grids[2],))


def _found(steps, outputs, rank=99.0, solved=True):
    return FoundProgram(tuple(steps), rank, solved, 2 if solved else 0, 2.0, tuple(outputs))


@pytest.mark.parametrize("arrays", [False, True], ids=["lists", "arrays"])
def test_disagreeing_solver_is_dropped_and_counted(tmp_path, pool, arrays):
    task = _task()
    right = dsl.rot90(task.test_inputs[0]).tolist()
    wrong = np.zeros_like(task.test_inputs[0]).tolist()
    # The search gives its predictions as uint8 arrays; a cache as lists: both work alike.
    as_given = (lambda g: np.array(g, dtype=np.uint8)) if arrays else (lambda g: g)
    programs = {task.id: [
        _found([("rot90", ())], [as_given(wrong)]),            # the search claims a wrong prediction
        _found([("rot270", ()), ("rot180", ())], [as_given(right)], rank=98.0),
        _found([("flip_lr", ())], [as_given(wrong)], rank=1.0, solved=False),
    ]}
    cache = open_cache(f"disk:{tmp_path / 'c'}", "test")
    stage = SolverPipeline(cache, pool, SolverStore(cache), StageTimer())
    records = stage.finish([task], programs, {})
    counts = stage.counts.to_dict()
    assert counts["found"] == 2 and counts["unique"] == 2 and counts["validated"] == 2
    assert counts["ok"] == 1 and counts["failed"] == {"disagrees with search": 1}
    rec = records[task.id]
    assert rec["status"] == "solved" and "rot270" in rec["program"]
    assert rec["attempts"][0]["attempt_1"] == right
    assert rec["attempts"][0]["attempt_2"] == wrong  # then the best partial program
    assert type(rec["attempts"][0]["attempt_2"][0][0]) is int  # plain data for the JSON
    # A second pass is served from the cache (validation) and stores nothing twice.
    again = SolverPipeline(cache, pool, SolverStore(cache), StageTimer()).finish([task], programs, {})
    assert again[task.id] == rec
    assert len(SolverStore(cache).get(task.digest())) == 1
    cache.close()


def test_found_program_compares_and_serialises_array_outputs_as_grids():
    grid = [[1, 2, 3], [4, 5, 6]]
    arr = _found([("rot90", ())], [np.array(grid, dtype=np.uint8)])
    assert arr == _found([("rot90", ())], [grid])
    assert arr != _found([("rot90", ())], [[[1, 2, 3], [4, 5, 7]]])
    assert arr != _found([("rot90", ())], [np.array(grid, dtype=np.uint8).T])  # same cells, other shape
    assert arr != _found([("rot180", ())], [grid])
    plain = arr.to_dict()
    assert plain["test_outputs"] == [grid] and type(plain["test_outputs"][0][0][0]) is int
    assert FoundProgram.from_dict(plain) == arr


def test_attempts_from_array_predictions_equal_those_from_lists():
    a, b = [[1, 2], [3, 4]], [[0]]
    ranked = [[a], [a], [b]]
    as_arrays = [[np.array(g, dtype=np.uint8) for g in outputs] for outputs in ranked]
    chosen = choose_attempts(as_arrays, [[[5]]])
    assert chosen == choose_attempts(ranked, [[[5]]]) == [{"attempt_1": a, "attempt_2": b}]
    assert type(chosen[0]["attempt_1"][0][0]) is int


def test_plausible_prediction_is_attempt_one_and_its_program_reported(tmp_path, pool):
    # Both programs fit the train pairs (mirrors of grids of 0 and 1). The shorter one's colour
    # table turns the test input's 3 into 4, a colour no train pair brings in: the longer one's
    # prediction is attempt 1, and its program the one reported.
    train = [np.array(g, dtype=np.uint8) for g in ([[1, 0, 0], [1, 1, 0]], [[0, 1], [0, 0], [1, 1]])]
    test = np.array([[3, 0, 1]], dtype=np.uint8)
    task = Task("mirror", tuple(train), tuple(np.fliplr(g) for g in train), (test,))
    plausible, implausible = [[1, 0, 3]], [[1, 0, 4]]
    programs = {task.id: [
        _found([("flip_lr", ()), ("colormap", ({3: 4},))], [implausible], rank=98.0),
        _found([("rot90", ()), ("rot90", ()), ("flip_ud", ()), ("rot180", ()), ("rot180", ())], [plausible],
               rank=95.0),
    ]}
    cache = open_cache(f"disk:{tmp_path / 'c'}", "test")
    rec = SolverPipeline(cache, pool, SolverStore(cache), StageTimer()).finish([task], programs, {})[task.id]
    cache.close()
    assert rec["attempts"] == [{"attempt_1": plausible, "attempt_2": implausible}]
    assert "flip_ud" in rec["program"] and "colormap" not in rec["program"]
