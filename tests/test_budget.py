"""A budget run's iterations: deeper, then wider, while time remains; each stop has its reason,
and a deeper iteration that runs out of memory ends the run with the results so far."""
from __future__ import annotations

import json

import pytest

import pipeline.run.runner as runner
from pipeline.run.runner import Run, RunOptions
from pipeline.run.score import validate_submission
from pipeline.run.tasks import load_tasks


def _run(tmp_path, count=6, **options):
    opts = RunOptions(dataset="arc1-train", count=count, force_cpu=True, workers=1, out_dir=str(tmp_path / "out"),
                      cache_url=f"disk:{tmp_path / 'cache'}", depth=1, **options)
    code = Run(opts).execute()
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    submission = json.loads((tmp_path / "out" / "submission.json").read_text())
    return code, report, submission


def test_without_a_budget_one_iteration(tmp_path):
    code, report, _ = _run(tmp_path)
    assert code == 0 and report["run"]["iterations"] == 1
    assert report["run"]["stop_reason"] in ("one iteration", "every task solved")


def _runs_out(monkeypatch, most_states: int, calls: list):
    """run_search that runs out of memory past depth 1 with more than ``most_states`` states per task."""
    real = runner.run_search

    def search(tasks, depth, **kwargs):
        calls.append((depth, kwargs["states_per_task"]))
        if depth >= 2 and kwargs["states_per_task"] > most_states:
            raise MemoryError("key table: no device memory to grow")
        return real(tasks, depth, **kwargs)

    monkeypatch.setattr(runner, "run_search", search)


def test_a_deeper_iteration_out_of_memory_keeps_the_results_so_far(tmp_path, monkeypatch):
    calls = []
    _runs_out(monkeypatch, 0, calls)
    code, report, submission = _run(tmp_path, budget=120.0)
    assert code == 0
    assert report["run"]["stop_reason"] == "out of memory"
    assert [w for d, w in calls if d == 2] == [8000, 4000, 2000, 1000]  # halved down to the floor
    tasks, _ = load_tasks("arc1-train", 6)
    assert validate_submission(submission, tasks) == []
    assert all(t["status"] != "pending" for t in report["tasks"])


@pytest.mark.parametrize("first_width, most_states, searched", [
    # 8000 ran out at depth 2: never tried again, at that depth or deeper.
    (8000, 4000, [(1, 8000), (2, 8000), (2, 4000), (3, 4000)]),
    # 4000 ran out at depth 2, whose 2000 was searched: on to depth 3, never wider than 2000.
    (1000, 2000, [(1, 1000), (2, 1000), (2, 2000), (2, 4000), (3, 1000), (3, 2000)]),
])
def test_an_iteration_out_of_memory_goes_on_narrower_or_deeper_and_never_widens_back(
        tmp_path, monkeypatch, first_width, most_states, searched):
    monkeypatch.setattr(runner, "WIDE_DEPTH", 2)
    monkeypatch.setattr(runner, "MAX_DEPTH", 3)
    calls = []
    _runs_out(monkeypatch, most_states, calls)
    code, report, _ = _run(tmp_path, budget=600.0, states_per_task=first_width, count=3)
    assert code == 0
    assert calls == searched
    assert report["run"]["stop_reason"] == "nothing left to try"


def test_later_iterations_search_the_cheapest_tasks_first_in_chunks(tmp_path, monkeypatch):
    """A budget's second iteration searches the unsolved tasks in chunks of a share of them,
    cheapest first; the run stops (out of memory at depth 3) with every task's record."""
    monkeypatch.setattr(runner, "GPU_MIN_TASKS", 1)
    monkeypatch.setattr(runner, "BUDGET_CHUNKS", 2)
    calls = []
    real = runner.run_search

    def search(tasks, depth, **kwargs):
        calls.append((depth, [runner._task_cells(t) for t in tasks]))
        if depth >= 3:
            raise MemoryError("key table: no device memory to grow")
        return real(tasks, depth, **kwargs)

    monkeypatch.setattr(runner, "run_search", search)
    code, report, _ = _run(tmp_path, budget=120.0)
    assert code == 0 and report["run"]["stop_reason"] == "out of memory"
    chunks = [cells for depth, cells in calls if depth == 2]
    searched = [c for chunk in chunks for c in chunk]
    assert len(chunks) == 2 and all(len(chunk) <= -(-len(searched) // 2) for chunk in chunks)
    assert searched == sorted(searched)
    assert all(t["status"] != "pending" for t in report["tasks"])


def test_iterations_go_deeper_then_wider_then_deeper_again(tmp_path, monkeypatch):
    """The budget's schedule: one level deeper each up to WIDE_DEPTH, then twice as wide up to the
    most states, then one level deeper from the first width again, up to MAX_DEPTH; then nothing
    is left to try."""
    monkeypatch.setattr(runner, "WIDE_DEPTH", 2)
    monkeypatch.setattr(runner, "MAX_DEPTH", 3)
    monkeypatch.setattr(runner, "MAX_STATES_PER_TASK", 2000)
    calls = []
    real = runner.run_search

    def search(tasks, depth, **kwargs):
        calls.append((depth, kwargs["states_per_task"]))
        return real(tasks, depth, **kwargs)

    monkeypatch.setattr(runner, "run_search", search)
    code, report, _ = _run(tmp_path, budget=600.0, states_per_task=1000, count=3)
    assert code == 0
    assert report["run"]["stop_reason"] == "nothing left to try"
    assert calls == [(1, 1000), (2, 1000), (2, 2000), (3, 1000), (3, 2000)]
