"""Tests of pipeline.run.score: the Kaggle 2025 either-attempt rule and submission format checks."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.run.score import score_submission, validate_submission
from pipeline.run.tasks import Task


def g(rows):
    """A uint8 grid from nested lists."""
    return np.array(rows, dtype=np.uint8)


SOLUTIONS = {
    "t1": [g([[1, 2], [3, 4]])],             # attempt_1 right
    "t2": [g([[5]]), g([[6, 6]])],           # first: attempt_2 right; second: both wrong
    "t3": [g([[0, 0, 0]])],                  # missing from the submission
    "t4": [g([[7], [8]])],                   # right values, wrong shape (transposed)
    "t5": [g([[9]]), g([[1]])],              # submission has only one entry for two outputs
}
SUBMISSION = {
    "t1": [{"attempt_1": [[1, 2], [3, 4]], "attempt_2": [[0]]}],
    "t2": [{"attempt_1": [[0]], "attempt_2": [[5]]}, {"attempt_1": [[6]], "attempt_2": [[6], [6]]}],
    "t4": [{"attempt_1": [[7, 8]], "attempt_2": [[7, 8, 0]]}],
    "t5": [{"attempt_1": [[9]], "attempt_2": [[9]]}],
    "extra": [{"attempt_1": [[1]], "attempt_2": [[1]]}],  # not in the solutions: ignored
}


def test_score_matches_hand_count():
    # Hand count: t1 1/1, t2 1/2, t3 0/1, t4 0/1, t5 1/2 -> 3 of 7.
    correct, total, per_task = score_submission(SUBMISSION, SOLUTIONS)
    assert (correct, total) == (3, 7)
    assert per_task == {
        "t1": [True],
        "t2": [True, False],
        "t3": [False],
        "t4": [False],
        "t5": [True, False],
    }


def test_either_attempt_counts_once():
    sub = {"t": [{"attempt_1": [[3]], "attempt_2": [[3]]}]}
    assert score_submission(sub, {"t": [g([[3]])]})[:2] == (1, 1)
    sub = {"t": [{"attempt_1": [[4]], "attempt_2": [[3]]}]}
    assert score_submission(sub, {"t": [g([[3]])]})[:2] == (1, 1)


@pytest.mark.parametrize(
    "attempt",
    [[[3, 0]], [[3], [0]], [3], [[3.0]], [[True]], "3", None, [[13]], [], [[3, 0], [1]]],
)
def test_malformed_or_wrong_shape_attempts_never_count(attempt):
    sub = {"t": [{"attempt_1": attempt, "attempt_2": attempt}]}
    assert score_submission(sub, {"t": [g([[3]])]})[:2] == (0, 1)


def test_malformed_submission_structure_scores_zero():
    sols = {"t": [g([[1]])]}
    for sub in ({}, {"t": None}, {"t": {"attempt_1": [[1]]}}, {"t": [[[1]]]}, {"t": [{"attempt_3": [[1]]}]}, []):
        assert score_submission(sub, sols) == (0, 1, {"t": [False]})


def test_attempt_one_alone_counts():
    assert score_submission({"t": [{"attempt_1": [[1]]}]}, {"t": [g([[1]])]})[:2] == (1, 1)


def test_all_right_and_empty_solutions():
    sub = {k: [{"attempt_1": v.tolist(), "attempt_2": [[0]]} for v in outs] for k, outs in SOLUTIONS.items()}
    assert score_submission(sub, SOLUTIONS)[:2] == (7, 7)
    assert score_submission(sub, {}) == (0, 0, {})


def make_tasks():
    """Two tasks: 'a' with one test input, 'b' with two."""
    one = (g([[1]]),)
    return [Task("a", one, one, one), Task("b", one, one, one * 2)]


def good_submission():
    """A well-formed submission for make_tasks()."""
    entry = {"attempt_1": [[1, 2]], "attempt_2": [[0]]}
    return {"a": [dict(entry)], "b": [dict(entry), dict(entry)]}


def test_valid_submission_has_no_problems():
    assert validate_submission(good_submission(), make_tasks()) == []
    big = good_submission()
    big["a"][0]["attempt_1"] = [[0] * 40] * 35  # oversized is a wrong guess, not a format error
    assert validate_submission(big, make_tasks()) == []


def test_validate_catches_format_errors():
    sub = good_submission()
    del sub["a"]
    sub["b"] = [
        {"attempt_1": [[1, 2], [3]], "attempt_2": []},
        {"attempt_1": [[1, 10]]},
        "oops",
    ]
    sub["zzz"] = []
    assert validate_submission(sub, make_tasks()) == [
        "task a: missing",
        "task b: 3 entries for 2 test inputs",
        "task b: [0].attempt_1: row 1 has 1 cells, row 0 has 2",
        "task b: [0].attempt_2: height 0, must be at least 1",
        "task b: [1].attempt_1: row 0 col 1 is colour 10, outside 0-9",
        "task b: [1].attempt_2: missing",
        "task b: [2]: is a str, not an object",
        "task zzz: not a task of this run",
    ]


@pytest.mark.parametrize(
    "value,problem",
    [
        (None, "task a: is a NoneType, not a list"),
        ({"attempt_1": [[1]], "attempt_2": [[1]]}, "task a: is a dict, not a list"),
        ([{"attempt_1": [["1"]], "attempt_2": [[1]]}], "task a: [0].attempt_1: row 0 col 0 is '1', not an int"),
        ([{"attempt_1": [[1]], "attempt_2": [[]]}], "task a: [0].attempt_2: width 0, must be at least 1"),
        ([{"attempt_1": [1, 2], "attempt_2": [[1]]}], "task a: [0].attempt_1: not a list of lists"),
        ([], "task a: 0 entries for 1 test inputs"),
    ],
)
def test_validate_single_problem(value, problem):
    sub = good_submission()
    sub["a"] = value
    assert validate_submission(sub, make_tasks()) == [problem]


def test_validate_rejects_non_object():
    assert validate_submission([], make_tasks()) == ["submission is a list, not an object {task_id: [...]}"]
