"""The post-search stage: found solvers are inlined, validated in the pool, stored (dedup by id)
and used for attempts; a solver whose isolated run disagrees with the search is dropped."""
from __future__ import annotations

import numpy as np
import pytest

from cache import open_cache
from pipeline.program import FoundProgram
from pipeline.runner import StageTimer
from pipeline.solve import SolverPipeline
from pipeline.store import SolverStore
from pipeline.tasks import Task
from pipeline.validate import ValidationPool
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


def test_disagreeing_solver_is_dropped_and_counted(tmp_path, pool):
    task = _task()
    right = dsl.rot90(task.test_inputs[0]).tolist()
    wrong = np.zeros_like(task.test_inputs[0]).tolist()
    programs = {task.id: [
        _found([("rot90", ())], [wrong]),            # the search claims a wrong prediction
        _found([("rot270", ()), ("rot180", ())], [right], rank=98.0),
        _found([("flip_lr", ())], [wrong], rank=1.0, solved=False),
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
    # A second pass is served from the cache (inline and validation) and stores nothing twice.
    again = SolverPipeline(cache, pool, SolverStore(cache), StageTimer()).finish([task], programs, {})
    assert again[task.id] == rec
    assert len(SolverStore(cache).get(task.digest())) == 1
    cache.close()
