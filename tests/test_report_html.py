"""report.html of a real run and score --html's page: the data they carry, without a browser
(tests/test_report_browser.py opens them in Chromium)."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pipeline.run.report_html import grid_text, page_html, score_page, untrusted_grid_text
from pipeline.run.tasks import load_solutions, load_tasks

ROOT = Path(__file__).resolve().parent.parent
COUNT = 4


def page_data(html: str) -> dict:
    """The JSON block of a report page."""
    match = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html, re.S)
    assert match, "no data block"
    return json.loads(match.group(1))


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    work = tmp_path_factory.mktemp("report")
    res = subprocess.run([sys.executable, "-m", "pipeline", "run", "-c", str(COUNT), "-D", "1", "-m",
                          "-O", str(work / "out"), "-C", f"disk:{work / 'cache'}"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    return work / "out"


def test_run_writes_a_page_with_every_task_its_grids_attempts_and_program(small_run):
    html = (small_run / "report.html").read_text()
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "") and "https://" not in html
    data = page_data(html)
    report = json.loads((small_run / "report.json").read_text())
    submission = json.loads((small_run / "submission.json").read_text())
    tasks, _ = load_tasks("arc1-train", COUNT)
    assert data["mode"] == "run" and [t["id"] for t in data["tasks"]] == [t.id for t in tasks]
    for task, row, rec in zip(tasks, data["tasks"], report["tasks"]):
        assert row["train"] == [[grid_text(i), grid_text(o)] for i, o in zip(task.train_inputs, task.train_outputs)]
        assert row["test"] == [grid_text(g) for g in task.test_inputs]
        assert row["attempts"] == [[grid_text(e["attempt_1"]), grid_text(e["attempt_2"])] for e in submission[task.id]]
        for key in ("status", "program", "train_fit", "seconds", "depth", "solved_at"):
            assert row[key] == rec[key], key
    solved = [t for t in report["tasks"] if t["status"] == "solved"]
    assert solved and all(t["depth"] == 1 and 0 < t["solved_at"] <= report["run"]["seconds"] for t in solved)
    assert all(t["solved_at"] is None for t in report["tasks"] if t["status"] != "solved")


def test_score_html_marks_each_attempt_and_counts_tasks_missing_on_either_side(small_run, tmp_path):
    sub = json.loads((small_run / "submission.json").read_text())
    sub["not-a-task"] = [{"attempt_1": [[0]], "attempt_2": [[0]]}]
    path = tmp_path / "submission.json"
    path.write_text(json.dumps(sub))
    page = tmp_path / "page.html"
    res = subprocess.run([sys.executable, "-m", "pipeline", "score", str(path), "-d", "arc1-train",
                          "--html", str(page)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "1 of the submission's 5 tasks are not in arc1-train" in res.stdout
    assert "396 of the 400 scored tasks of arc1-train are not in the submission" in res.stdout
    data = page_data(page.read_text())
    solutions = load_solutions("arc1-train")
    assert len(data["tasks"]) == 400 and data["score"]["total"] == sum(len(v) for v in solutions.values())
    for row in data["tasks"]:
        expected = solutions[row["id"]]
        assert row["expected"] == [grid_text(g) for g in expected]
        entries = sub.get(row["id"], [])
        for k, marks in enumerate(row["correct"]):
            for a, key in enumerate(("attempt_1", "attempt_2")):
                right = k < len(entries) and np.array_equal(np.array(entries[k][key]), expected[k])
                assert marks[a] == right
    assert data["score"]["correct"] == int(res.stdout.strip().splitlines()[-1].split()[1].split("/")[0]) > 0
    assert "run" not in data  # no report.json beside this copy of the submission
    default = subprocess.run([sys.executable, "-m", "pipeline", "score", str(small_run / "submission.json"),
                              "-d", "arc1-train", "-c", str(COUNT), "--html"], cwd=ROOT, capture_output=True,
                             text=True, timeout=120)
    assert default.returncode == 0, default.stderr
    beside = page_data((small_run / "score.html").read_text())  # the default path, beside the submission
    report = json.loads((small_run / "report.json").read_text())
    assert beside["run"]["dataset"] == "arc1-train" and len(beside["tasks"]) == COUNT
    assert [t["program"] for t in beside["tasks"]] == [t["program"] for t in report["tasks"]]


def test_untrusted_submission_values_never_break_the_page():
    task = load_tasks("arc1-train", 1)[0][0]
    solutions = {task.id: load_solutions("arc1-train")[task.id]}
    bad = {task.id: [{"attempt_1": [[1, 2], [3]], "attempt_2": "</script><script>alert(1)</script>"}]}
    report = {"run": {"dataset": "x</script>", "stages": {"a": float("nan")}, "seconds": 10 ** 400}, "tasks": 5}
    data = page_data(score_page([task], bad, solutions, report))
    assert data["tasks"][0]["attempts"][0] == [None, None] and data["tasks"][0]["correct"][0] == [False, False]
    assert data["run"]["dataset"] == "x</script>" and "stages" not in data["run"] and "seconds" not in data["run"]
    assert untrusted_grid_text([[1] * 61]) is None and untrusted_grid_text([[1, 2]]) == "1x2:12"
    html = page_html("t", {"tasks": [], "program": "</script><b>"})
    assert html.count("</script>") == 2  # the data block's and the code's own: no text closes them early
