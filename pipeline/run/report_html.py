"""``report.html``: one self-contained page of a run, or of a scored submission.

The page is the template ``report_page.html`` (inline CSS and JavaScript, no network) with the
data as one JSON block. Grids travel as ``"HxW:digits"`` (one character a cell, about a third of
nested JSON lists) and are drawn on canvases only for the task shown, so a 400-task page stays
near a megabyte and opens at once. A run rewrites the page with its other outputs; the tasks'
grids are encoded once (:class:`RunPage`), only statuses, attempts and programs change.
"""
from __future__ import annotations

import json
import math
import os
from importlib import resources
from typing import Any, Iterable

import numpy as np

from pipeline.run.outputs import write_text_atomic
from pipeline.run.score import ATTEMPTS, attempts_right
from pipeline.run.tasks import Task, parse_grid

#: Larger grids (an untrusted submission's oversized guess) are listed as not drawable.
MAX_DRAWN_SIDE = 60


def grid_text(grid: Any) -> str:
    """A grid (array or list of rows of ints 0-9) as ``"HxW:digits"``, row by row."""
    arr = np.asarray(grid, dtype=np.uint8)
    h, w = arr.shape
    return f"{h}x{w}:" + (arr.reshape(-1) + ord("0")).tobytes().decode("ascii")


def untrusted_grid_text(value: Any) -> str | None:
    """:func:`grid_text` of a JSON grid from outside, or None when it is malformed or too large to draw."""
    try:
        arr = parse_grid(value, max_side=None)
    except ValueError:
        return None
    return grid_text(arr) if max(arr.shape) <= MAX_DRAWN_SIDE else None


def _task_grids(task: Task) -> dict:
    return {"id": task.id,
            "train": [[grid_text(i), grid_text(o)] for i, o in zip(task.train_inputs, task.train_outputs)],
            "test": [grid_text(g) for g in task.test_inputs]}


def _run_facts(report: dict) -> dict:
    run, search = report.get("run"), report.get("search")
    run, search = (run if isinstance(run, dict) else {}), (search if isinstance(search, dict) else {})
    keys = ("dataset", "device", "depth", "iterations", "seconds", "budget", "truncated", "stages")
    facts = {k: run.get(k) for k in keys}
    facts["states_per_second"] = search.get("states_per_second")
    return facts


def page_html(title: str, data: dict) -> str:
    """The page: the template with ``title`` and ``data`` (JSON, ``<`` escaped so no text closes the script)."""
    template = resources.files("pipeline.run").joinpath("report_page.html").read_text(encoding="utf-8")
    text = json.dumps(dict(data, title=title), separators=(",", ":"), allow_nan=False).replace("<", "\\u003c")
    escaped_title = title.replace("&", "&amp;").replace("<", "&lt;")
    return template.replace("__TITLE__", escaped_title, 1).replace("__DATA__", text, 1)


class RunPage:
    """The report page of a run over ``tasks``; :meth:`write` renders it from the run's report and submission."""

    def __init__(self, tasks: Iterable[Task]):
        self.grids = [_task_grids(t) for t in tasks]

    def html(self, report: dict, submission: dict) -> str:
        """The page for the current ``report`` (report.json's document) and ``submission``."""
        by_id = {t["id"]: t for t in report.get("tasks", [])}
        tasks = []
        for grids in self.grids:
            rec = by_id.get(grids["id"], {})
            attempts = [[grid_text(entry[k]) for k in ATTEMPTS] for entry in submission.get(grids["id"], [])]
            tasks.append(dict(grids, status=rec.get("status", "pending"), program=rec.get("program"),
                              train_fit=rec.get("train_fit"), seconds=rec.get("seconds"),
                              depth=rec.get("depth"), solved_at=rec.get("solved_at"), attempts=attempts))
        dataset = report.get("run", {}).get("dataset", "")
        return page_html(f"arcbatt run: {dataset}", {"mode": "run", "run": _run_facts(report), "tasks": tasks})

    def write(self, path: str | os.PathLike, report: dict, submission: dict) -> None:
        """Write the page to ``path`` atomically."""
        write_text_atomic(path, self.html(report, submission))


def score_page(tasks: Iterable[Task], submission: Any, solutions: dict, report: dict | None = None) -> str:
    """The page of a scored submission: each attempt marked right or wrong beside the expected output.

    ``submission`` is untrusted JSON: malformed entries show as missing attempts. ``report``, the
    run's report.json when it lies beside the submission, adds statuses, programs and run facts.
    """
    entries_of = submission if isinstance(submission, dict) else {}
    listed = (report or {}).get("tasks")
    by_id = {t.get("id"): t for t in (listed if isinstance(listed, list) else []) if isinstance(t, dict)}
    rows, correct, total = [], 0, 0
    for task in tasks:
        if task.id not in solutions:
            continue
        entries = entries_of.get(task.id)
        entries = entries if isinstance(entries, list) else []
        attempts, marks = [], []
        for i, expected in enumerate(solutions[task.id]):
            entry = entries[i] if i < len(entries) else None
            entry = entry if isinstance(entry, dict) else {}
            attempts.append([untrusted_grid_text(entry.get(k)) for k in ATTEMPTS])
            marks.append(list(attempts_right(entry, expected)))
            correct += any(marks[-1])
            total += 1
        rec = by_id.get(task.id, {})
        program = rec.get("program") if isinstance(rec.get("program"), str) else None
        rows.append(dict(_task_grids(task), status=str(rec.get("status", "unknown")), program=program,
                         train_fit=_number(rec.get("train_fit")), seconds=_number(rec.get("seconds")),
                         depth=_number(rec.get("depth")), solved_at=_number(rec.get("solved_at")),
                         attempts=attempts, correct=marks,
                         expected=[grid_text(g) for g in solutions[task.id]]))
    data = {"mode": "score", "tasks": rows, "score": {"correct": correct, "total": total}}
    if report:
        data["run"] = {k: v for k, v in _run_facts(report).items() if _plain(v)}
    return page_html("arcbatt score", data)


def _number(value: Any) -> float | None:
    """A finite number from outside as a float, else None (booleans, strings, huge integers, NaN)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _plain(value: Any) -> bool:
    """Whether a value read from an outside report.json is plain data safe to show (numbers, strings, flat dicts)."""
    if isinstance(value, (str, bool)) or value is None:
        return True
    if isinstance(value, (int, float)):
        return _number(value) is not None
    if isinstance(value, dict):
        return all(isinstance(k, str) and _number(v) is not None for k, v in value.items())
    return False


def write_score_page(path: str | os.PathLike, tasks: Iterable[Task], submission: Any, solutions: dict,
                     submission_path: str) -> None:
    """Write :func:`score_page` to ``path``, with the run's report.json when it lies beside the submission."""
    report = None
    beside = os.path.join(os.path.dirname(os.path.abspath(submission_path)), "report.json")
    try:
        with open(beside, encoding="utf-8") as f:
            report = json.load(f)
    except (OSError, ValueError):
        pass
    write_text_atomic(path, score_page(tasks, submission, solutions, report if isinstance(report, dict) else None))
