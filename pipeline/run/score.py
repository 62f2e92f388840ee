"""Scoring and format checks of a Kaggle ARC Prize 2025 submission.

A submission is ``{task_id: [{"attempt_1": grid, "attempt_2": grid}, ...]}``, one dict per test
input in order. A test output counts if either attempt equals it exactly (same shape, same cells);
the score is over test outputs. Only the scorer ever sees solutions (see pipeline.run.tasks).
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from pipeline.run.tasks import Task, parse_grid

ATTEMPTS = ("attempt_1", "attempt_2")


def _matches(attempt: Any, expected: np.ndarray) -> bool:
    """Whether a raw JSON attempt is exactly the expected grid; malformed attempts never match."""
    try:
        grid = parse_grid(attempt, max_side=None)
    except ValueError:
        return False
    return grid.shape == expected.shape and bool((grid == expected).all())


def attempts_right(entry: Any, expected: np.ndarray) -> tuple[bool, bool]:
    """Whether attempt_1 and attempt_2 of one raw submission entry each equal the expected grid."""
    if not isinstance(entry, dict):
        return False, False
    return tuple(key in entry and _matches(entry[key], expected) for key in ATTEMPTS)


def score_submission(
    submission: dict, solutions: dict[str, list[np.ndarray]]
) -> tuple[int, int, dict[str, list[bool]]]:
    """Kaggle ARC Prize 2025 rule: a test output counts if attempt_1 or attempt_2 equals it exactly; returns (correct, total test outputs over the solutions' tasks, per-task list).

    A task missing from the submission, or a test input without its dict, counts 0 for its
    outputs; tasks of the submission that have no solution are ignored. The per-task list has
    one bool per test output of that task, in order.
    """
    per_task: dict[str, list[bool]] = {}
    entries_of = submission if isinstance(submission, dict) else {}
    for task_id, outputs in solutions.items():
        entries = entries_of.get(task_id)
        if not isinstance(entries, list):
            entries = []
        hits = []
        for i, expected in enumerate(outputs):
            entry = entries[i] if i < len(entries) else None
            hits.append(any(attempts_right(entry, expected)))
        per_task[task_id] = hits
    correct = sum(sum(hits) for hits in per_task.values())
    total = sum(len(hits) for hits in per_task.values())
    return correct, total, per_task


def validate_submission(submission: Any, tasks: Iterable[Task]) -> list[str]:
    """Format problems of a submission for these tasks, one line each; an empty list means valid.

    Checks: a JSON object; every task present (and no others); a list with one dict per test
    input; each dict with both attempt_1 and attempt_2; each attempt a non-empty rectangular
    grid of ints 0-9 (any size: an oversized guess is wrong, not malformed).
    """
    if not isinstance(submission, dict):
        return [f"submission is a {type(submission).__name__}, not an object {{task_id: [...]}}"]
    problems = []
    expected = {task.id: len(task.test_inputs) for task in tasks}
    for task_id, n_tests in expected.items():
        if task_id not in submission:
            problems.append(f"task {task_id}: missing")
            continue
        entries = submission[task_id]
        if not isinstance(entries, list):
            problems.append(f"task {task_id}: is a {type(entries).__name__}, not a list")
            continue
        if len(entries) != n_tests:
            problems.append(f"task {task_id}: {len(entries)} entries for {n_tests} test inputs")
        for i, entry in enumerate(entries):
            if not isinstance(entry, dict):
                problems.append(f"task {task_id}: [{i}]: is a {type(entry).__name__}, not an object")
                continue
            for key in ATTEMPTS:
                if key not in entry:
                    problems.append(f"task {task_id}: [{i}].{key}: missing")
                    continue
                try:
                    parse_grid(entry[key], max_side=None)
                except ValueError as exc:
                    problems.append(f"task {task_id}: [{i}].{key}: {exc}")
    for task_id in submission:
        if task_id not in expected:
            problems.append(f"task {task_id}: not a task of this run")
    return problems
