"""Layered composition: pieces stacked greedily from the top down reproduce the train outputs,
in the search's results and through the whole pipeline (inline, validation, report)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pipeline.search.shards import search_shard
from pipeline.search.layers import MAPPED, PAINT, _Chains, compose_layers, run_steps
from pipeline.search.mechanisms import mechanisms_of
from pipeline.search.pieces import PieceBoards, piece_worth
from pipeline.finish.program import FoundProgram
from pipeline.run.tasks import Task, load_tasks
from solvers import dsl

ROOT = Path(__file__).resolve().parent.parent
RAYS_OF_TWOS = (("keep_color", (2,)), ("rays", ("down",)))


def _grid(h, w, dots):
    g = np.zeros((h, w), dtype=np.uint8)
    for r, c, v in dots:
        g[r, c] = v
    return g


def _rays_task():
    """Outputs: the input with rays drawn down from its 2s only (its 1s stay dots)."""
    inputs = [_grid(5, 5, [(0, 1, 2), (3, 3, 1)]), _grid(4, 6, [(1, 4, 2), (0, 0, 1), (2, 2, 1)]),
              _grid(6, 4, [(2, 0, 2), (0, 3, 1)])]
    outputs = [dsl.paint(g, run_steps(RAYS_OF_TWOS, g)) for g in inputs]
    return Task("rays-of-twos", tuple(inputs[:2]), tuple(outputs[:2]), (inputs[2],)), outputs[2]


@pytest.mark.parametrize("with_noise", [False, True])
def test_a_piece_over_the_input_reproduces_the_outputs(with_noise):
    task, expected = _rays_task()
    pieces = [RAYS_OF_TWOS, (("rays", ("down",)),)] if with_noise else [RAYS_OF_TWOS]
    found = compose_layers(np, [task], [pieces], [[]])
    program = found[0]
    assert program.steps == () and program.layers == (RAYS_OF_TWOS,)
    assert program.solved and program.size == 3
    assert np.array_equal(program.test_outputs[0], expected)
    ns = {}
    exec("from solvers.dsl import *", ns)
    exec(program.source(), ns)
    for i, o in zip(task.train_inputs, task.train_outputs):
        assert np.array_equal(ns["solve"](i), o)


def _runs_right(program, task):
    ns = {}
    exec("from solvers.dsl import *", ns)
    exec(program.source(), ns)
    return all(np.array_equal(ns["solve"](i), o) for i, o in zip(task.train_inputs, task.train_outputs))


def test_no_stack_where_pieces_paint_wrong_cells():
    task, _ = _rays_task()
    assert compose_layers(np, [task], [[(("rays", ("down",)),)]], [[]], modes=()) == {}


def test_a_piece_right_up_to_its_colours_is_a_layer_through_its_colour_table():
    task, expected = _rays_task()
    program = compose_layers(np, [task], [[(("rays", ("down",)),)]], [[]])[0]
    # Its 1s left out, and the colours it never showed.
    table = {1: 0, 3: 0, 4: 0, 5: 0, 6: 0, 7: 0, 8: 0, 9: 0}
    assert program.layers == ((("rays", ("down",)), ("colormap", (table,))),) and not program.erasers
    assert np.array_equal(program.test_outputs[0], expected) and _runs_right(program, task)
    assert mechanisms_of(program.source(), True) == ["layers", "colour_layers", "colour table"]


def test_a_piece_erases_where_it_is_zero():
    """Outputs: the input with rays down from its 2s and its 1s erased (its 3s stay): the input
    less its 1s, all dots made 5, is right nowhere but erases right."""
    task, _ = _rays_task()
    inputs = [g.copy() for g in task.train_inputs + task.test_inputs]
    for g in inputs:
        g[-1, -1] = 3
    outputs = [np.where(g == 1, 0, dsl.paint(g, run_steps(RAYS_OF_TWOS, g))) for g in inputs]
    task = Task("rays-no-ones", tuple(inputs[:2]), tuple(outputs[:2]), (inputs[2],))
    eraser = (("remove_color", (1,)), ("recolor", (5,)))
    program = compose_layers(np, [task], [[RAYS_OF_TWOS, eraser]], [[]], modes=("erasers",))[0]
    assert program.steps == () and program.layers == (eraser, RAYS_OF_TWOS) and program.erasers == (0,)
    assert "erase(" in program.source() and _runs_right(program, task)
    assert np.array_equal(program.test_outputs[0], outputs[2])
    assert program.size == 6  # chains of 2 and 2 calls, one erase, one paint
    assert FoundProgram.from_dict(json.loads(json.dumps(program.to_dict()))) == program
    assert mechanisms_of(program.source(), True) == ["layers", "erasers"]
    assert compose_layers(np, [task], [[RAYS_OF_TWOS, eraser]], [[]], modes=()) == {}


def test_piece_boards_keep_the_best_per_task():
    boards = PieceBoards(2, size=2)
    boards.offer(np.array([0, 0, 1, 0]), np.array([10, 11, 12, 13]), np.array([5, 9, 1, 9]))
    assert boards.gids_of(0) == [11, 13] and boards.gids_of(1) == [12]
    assert boards.threshold.tolist() == [9, 0]
    boards.offer(np.array([0]), np.array([20]), np.array([10]))
    assert boards.gids_of(0) == [20, 11]


def test_piece_worth_counts_changed_cells_and_clean_pieces():
    hist = np.zeros((4, 10, 10), dtype=np.int64)
    hist[:, 0, 5] = 1                      # each leaves a 5 unpainted: none erases cleanly
    hist[0, 3, 3], hist[0, 3, 4] = 5, 2   # paints 7 cells, 5 right: not clean
    hist[1, 4, 4] = 6                      # paints 6 cells, all right
    hist[2, 6, 2], hist[2, 7, 3] = 4, 3    # 7 cells, all right through the table {6: 2, 7: 3}
    hist[3, 6, 2], hist[3, 6, 3] = 4, 3    # its 6 stands for two colours: no table
    changed = np.zeros_like(hist)
    changed[0, 3, 3] = 4                   # 4 of its right cells are changed ones
    changed[2, 6, 2] = 1
    worth = piece_worth(np, hist, changed, np.array([1, -1, 0, 2, 3]), np.zeros(5, dtype=np.int64))
    assert worth.tolist() == [6, 0, 4, 8, 0]


def test_piece_worth_of_an_eraser_counts_the_zeros_beyond_the_inputs():
    hist = np.zeros((2, 10, 10), dtype=np.int64)
    hist[:, 0, 0] = 9                      # leaves 9 cells 0, all 0 in the outputs
    hist[0, 4, 5], hist[0, 4, 6] = 3, 1    # paints 4 cells wrong, with no colour table
    hist[1, 0, 2] = 1                      # leaves one cell 0 that is 2: no eraser
    worth = piece_worth(np, hist, np.zeros_like(hist), np.array([0, 1]), np.array([7, 7]))
    assert worth.tolist() == [2, 0]


def test_layered_program_round_trips_and_names_its_mechanisms():
    program = FoundProgram((("recolor", (1,)),), 80.0, True, 2, 1.0, ([[1]],), (RAYS_OF_TWOS,))
    assert FoundProgram.from_dict(json.loads(json.dumps(program.to_dict()))) == program
    assert mechanisms_of(program.source(), True) == ["layers"]
    assert mechanisms_of("def solve(I):\n    O = colormap(I, {1: 2})\n    return O\n", False) == \
        ["colour table", "partial"]
    assert mechanisms_of(None, False) == []


def test_a_chain_longer_than_the_depth_used_a_free_step():
    chain = "def solve(I):\n    O = colormap(crop_content(gravity(I, 'down')), {1: 2})\n    return O\n"
    assert mechanisms_of(chain, True, depth=1) == ["colour table", "free_steps"]
    assert mechanisms_of(chain, True, depth=2) == ["colour table"]
    layered = FoundProgram((("recolor", (1,)),), 80.0, True, 2, 1.0, ([[1]],), (RAYS_OF_TWOS,)).source()
    assert "free_steps" not in mechanisms_of(layered, True, depth=len(RAYS_OF_TWOS))


def _arc_task(task_id):
    return next(t for t in load_tasks("arc1-train")[0] if t.id == task_id)


@pytest.mark.slow
def test_search_finds_a_layered_program_only_with_layers_on():
    task = _arc_task("694f12f3")  # design half: outline over the largest object filled 2, others 1
    with_layers = search_shard([task], 2, 0, None, 8000)
    layered = [p for p in with_layers.programs[task.id] if p.layers]
    assert layered and layered[0].solved
    without = search_shard([task], 2, 0, None, 8000, mechanisms=())
    assert not any(p.layers for p in without.programs[task.id])


@pytest.mark.slow
def test_run_validates_and_reports_a_layered_answer(tmp_path):
    task = _arc_task("694f12f3")
    challenges = {task.id: {"train": [{"input": i.tolist(), "output": o.tolist()}
                                      for i, o in zip(task.train_inputs, task.train_outputs)],
                            "test": [{"input": g.tolist()} for g in task.test_inputs]}}
    path = tmp_path / "challenges.json"
    path.write_text(json.dumps(challenges))
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "pipeline", "run", "-d", str(path), "-D", "2", "-m", "-w", "1",
           "-O", str(out), "-C", f"disk:{tmp_path / 'cache'}"]
    subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, timeout=300)
    entry = json.loads((out / "report.json").read_text())["tasks"][0]
    assert entry["status"] == "solved" and "paint(" in entry["program"]
    # Outlines over the pieces' interiors through a colour table (the bottom: no colour layer above it).
    assert entry["mechanisms"] == ["layers", "colour table"]


def test_a_colour_table_keeps_only_colours_of_two_train_pairs():
    """A piece's 3 meets one output colour, 4, but lies in one train pair only: it is left out."""
    chains = _Chains.__new__(_Chains)
    chains.steps, chains.n_pieces = [(("piece", ()),)], 1
    chains.grids = [[np.array([[1, 3]], dtype=np.uint8), np.array([[1, 0]], dtype=np.uint8)]]
    target = np.array([2, 4, 2, 0])
    chain, kind, tables, value, paints = chains.rows(target, ("colour_layers",))
    assert kind.tolist() == [PAINT, MAPPED] and tables[1][1] == 2 and tables[1][3] == 0
    assert value[1].tolist() == [2, 0, 2, 0] and paints[1].tolist() == [True, False, True, False]
