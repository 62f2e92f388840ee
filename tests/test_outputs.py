"""Tests of pipeline.run.outputs: atomic JSON writes and grid conversion."""

from __future__ import annotations

import json
import os
import stat

import numpy as np
import pytest

from pipeline.run import outputs
from pipeline.run.outputs import grid_to_list, write_json_atomic


def test_write_is_readable_compact_and_keeps_key_order(tmp_path):
    path = tmp_path / "submission.json"
    obj = {"b": [{"attempt_1": [[1, 2]], "attempt_2": [[3]]}], "a": {"z": 1, "y": None, "x": 0.5}}
    write_json_atomic(path, obj)
    text = path.read_text()
    assert json.loads(text) == obj
    assert text == '{"b":[{"attempt_1":[[1,2]],"attempt_2":[[3]]}],"a":{"z":1,"y":null,"x":0.5}}'
    assert os.listdir(tmp_path) == ["submission.json"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_overwrite_replaces_and_leaves_no_temp_files(tmp_path):
    path = str(tmp_path / "report.json")
    for i in range(5):
        write_json_atomic(path, {"i": i, "big": list(range(1000 * i))})
    assert json.loads(open(path).read())["i"] == 4
    assert os.listdir(tmp_path) == ["report.json"]


def test_numpy_values_are_converted(tmp_path):
    path = tmp_path / "r.json"
    write_json_atomic(path, {"grid": np.array([[1, 2]], np.uint8), "n": np.int64(3), "f": np.float32(0.5), "ok": np.bool_(True)})
    assert json.loads(path.read_text()) == {"grid": [[1, 2]], "n": 3, "f": 0.5, "ok": True}


@pytest.mark.parametrize("bad", [{"x": object()}, {"x": float("nan")}, {"x": {1, 2}}])
def test_failed_serialisation_leaves_old_file_intact(tmp_path, bad):
    path = tmp_path / "submission.json"
    write_json_atomic(path, {"old": True})
    with pytest.raises((TypeError, ValueError)):
        write_json_atomic(path, {"first": [1, 2, 3], **bad})
    assert json.loads(path.read_text()) == {"old": True}
    assert os.listdir(tmp_path) == ["submission.json"]


def test_failure_while_writing_leaves_old_file_and_no_temp(tmp_path, monkeypatch):
    path = tmp_path / "submission.json"
    write_json_atomic(path, {"old": True})

    def broken_fsync(fd):
        raise OSError("disk full")

    monkeypatch.setattr(outputs.os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="disk full"):
        write_json_atomic(path, {"new": True})
    monkeypatch.undo()
    assert json.loads(path.read_text()) == {"old": True}
    assert os.listdir(tmp_path) == ["submission.json"]


def test_interrupt_while_writing_cleans_up(tmp_path, monkeypatch):
    path = tmp_path / "s.json"

    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(outputs.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_json_atomic(path, {"a": 1})
    monkeypatch.undo()
    assert os.listdir(tmp_path) == []


def test_missing_folder_is_an_error(tmp_path):
    with pytest.raises(OSError):
        write_json_atomic(tmp_path / "no" / "such" / "f.json", {})


def test_grid_to_list():
    out = grid_to_list(np.array([[0, 9], [3, 4]], dtype=np.uint8))
    assert out == [[0, 9], [3, 4]]
    assert all(type(v) is int for row in out for v in row)
    assert grid_to_list([[1, 2, 3]]) == [[1, 2, 3]]
    assert grid_to_list(np.zeros((30, 1), np.int32)) == [[0]] * 30
    with pytest.raises(ValueError):
        grid_to_list(np.zeros(3, np.uint8))
    with pytest.raises(ValueError):
        grid_to_list(np.zeros((2, 2), np.float64))
