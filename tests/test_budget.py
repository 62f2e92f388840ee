"""A budget run's iterations: deeper, then wider, while time remains; each stop has its reason,
and a deeper iteration that runs out of memory ends the run with the results so far."""
from __future__ import annotations

import json

import pipeline.run.runner as runner
from pipeline.run.runner import Run, RunOptions
from pipeline.run.score import validate_submission
from pipeline.run.tasks import load_tasks


def _run(tmp_path, **options):
    opts = RunOptions(dataset="arc1-train", count=6, force_cpu=True, workers=1, out_dir=str(tmp_path / "out"),
                      cache_url=f"disk:{tmp_path / 'cache'}", depth=1, **options)
    code = Run(opts).execute()
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    submission = json.loads((tmp_path / "out" / "submission.json").read_text())
    return code, report, submission


def test_without_a_budget_one_iteration(tmp_path):
    code, report, _ = _run(tmp_path)
    assert code == 0 and report["run"]["iterations"] == 1
    assert report["run"]["stop_reason"] in ("one iteration", "every task solved")


def test_a_deeper_iteration_out_of_memory_keeps_the_results_so_far(tmp_path, monkeypatch):
    real = runner.run_search

    def deeper_runs_out(tasks, depth, **kwargs):
        if depth >= 2:
            raise MemoryError("key table: no device memory to grow")
        return real(tasks, depth, **kwargs)

    monkeypatch.setattr(runner, "run_search", deeper_runs_out)
    code, report, submission = _run(tmp_path, budget=120.0)
    assert code == 0
    assert report["run"]["iterations"] == 2 and report["run"]["stop_reason"] == "out of memory"
    tasks, _ = load_tasks("arc1-train", 6)
    assert validate_submission(submission, tasks) == []
    assert all(t["status"] != "pending" for t in report["tasks"])
