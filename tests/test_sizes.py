"""The sizes stage: size rules fitted on hand-made tasks, a task solved end to end by a size-taking
transform (in the stage and in the search's results), and the sized program's source (inlined,
checked as a solver, run)."""
from __future__ import annotations

import numpy as np

from pipeline.finish.inline import chain_source
from pipeline.finish.program import FoundProgram
from pipeline.finish.solver_check import check_solver, dsl_namespace
from pipeline.run.tasks import Task
from pipeline.search.colour_roles import restored
from pipeline.search.mechanisms import MECHANISMS, mechanisms_of
from pipeline.search.shards import search_shard
from pipeline.search.sizes import fit_rules, sized_programs
from solvers import dsl

RNG = np.random.default_rng(3)


def _noise(h, w):
    return RNG.integers(0, 5, (h, w)).astype(np.uint8)


def _task(inputs, make, name="t"):
    outputs = [make(g) for g in inputs]
    return Task(name, tuple(inputs[:-1]), tuple(outputs[:-1]), (inputs[-1],)), outputs[-1]


def _corner_task():
    """Outputs: the top-right 3 x 3 corner of inputs of several sizes."""
    return _task([_noise(h, w) for h, w in [(5, 7), (9, 4), (6, 6), (8, 10)]], lambda g: g[:3, -3:], "corner")


def test_rules_fitted_on_hand_made_tasks():
    corner, _ = _corner_task()
    assert fit_rules(corner)[0] == ("const", 3, 3)
    double, _ = _task([_noise(h, w) for h, w in [(2, 3), (4, 2), (3, 3)]], lambda g: np.kron(g, np.ones((2, 2), np.uint8)))
    assert fit_rules(double)[0] == ("scale", 2, 1, 2, 1)
    less, _ = _task([_noise(h, w) for h, w in [(5, 3), (4, 6), (7, 7)]], lambda g: g[1:, :-2])
    assert fit_rules(less)[0] == ("offset", -1, -2)
    boxed, _ = _task([np.pad(_noise(h, w) + 1, pad) for h, w, pad in [(2, 3, ((1, 2), (3, 0))), (4, 2, ((0, 1), (1, 1))),
                                                                      (3, 3, ((2, 2), (0, 4)))]],
                     lambda g: np.ones((int((g != 0).any(1).sum()), int((g != 0).any(0).sum())), np.uint8))
    assert fit_rules(boxed)[0] == ("content",)
    same, _ = _task([_noise(4, 4), _noise(5, 3), _noise(2, 2)], lambda g: g[::-1])
    assert fit_rules(same) == []


def test_rules_keep_one_per_distinct_test_prediction():
    # 4 x 4 inputs to 2 x 2 outputs: a constant and a half fit; a 6 x 6 test input tells them apart.
    task = Task("t", (_noise(4, 4), _noise(4, 4)), (_noise(2, 2), _noise(2, 2)), (_noise(6, 6),))
    assert fit_rules(task) == [("const", 2, 2), ("scale", 1, 2, 1, 2)]
    task = Task("t", task.train_inputs, task.train_outputs, (_noise(4, 4),))
    assert fit_rules(task) == [("const", 2, 2)]


def _run(source, grid):
    namespace = dsl_namespace()
    exec(source, namespace)
    return namespace["solve"](grid)


def test_a_corner_task_is_solved_by_the_stage_and_its_source_runs():
    task, expected = _corner_task()
    found = sized_programs([task], [[]])
    program = found[0][0]
    assert program.solved and program.steps == ()
    assert program.sized == ("fit_to", ("top_right",), ("const", 3, 3))
    assert np.array_equal(program.test_outputs[0], expected)
    inlined = check_solver(program.source())
    assert "output_size(I, ('const', 3, 3))" in inlined.source and inlined.size == 2
    for grid, out in zip(task.train_inputs + task.test_inputs, task.train_outputs + (expected,)):
        assert np.array_equal(_run(inlined.source, grid.tolist()), out)
    assert mechanisms_of(inlined.source, True) == ["sizes"]


def test_a_chain_of_the_leaderboard_is_resized():
    # Outputs: the input turned, then tiled to 6 x 6.
    inputs = [_noise(h, w) for h, w in [(2, 3), (3, 4), (4, 2), (5, 3)]]
    task, expected = _task(inputs, lambda g: np.tile(np.rot90(g), (6, 6))[:6, :6])
    found = sized_programs([task], [[(("rot90", ()),)]])
    program = found[0][0]
    assert program.steps == (("rot90", ()),) and program.sized == ("tile_to", (), ("const", 6, 6))
    assert np.array_equal(program.test_outputs[0], expected)
    assert np.array_equal(_run(check_solver(program.source()).source, task.test_inputs[0]), expected)


def test_no_program_where_no_transform_fits():
    task, _ = _task([_noise(h, w) for h, w in [(5, 7), (9, 4), (6, 6)]], lambda g: _noise(3, 3))
    assert sized_programs([task], [[]]) == {}


def test_search_finds_a_sized_program_only_with_sizes_on():
    task, expected = _corner_task()
    with_sizes = search_shard([task], 1, 0, None, 1000)
    best = with_sizes.programs[task.id][0]
    assert best.sized is not None and best.solved and np.array_equal(best.test_outputs[0], expected)
    assert "search.sizes" in with_sizes.stage_seconds
    without = search_shard([task], 1, 0, None, 1000, mechanisms=tuple(m for m in MECHANISMS if m != "sizes"))
    assert all(p.sized is None for p in without.programs[task.id])
    assert "search.sizes" not in without.stage_seconds


def test_sized_program_round_trips_and_keeps_its_size_through_colour_roles():
    program = FoundProgram((("rot90", ()),), 86.0, True, 3, 1.0, (np.zeros((2, 2), np.uint8),),
                           sized=("resample_to", ("majority",), ("scale", 1, 2, 1, 2)))
    again = FoundProgram.from_dict(program.to_dict())
    assert again == program and again.size == 3
    task = Task("t", (np.array([[3, 0], [0, 7]], np.uint8),), (np.array([[3]], np.uint8),),
                (np.array([[3, 7]], np.uint8),))
    wrapped = restored(task, [program])[0]
    assert wrapped.sized == program.sized and wrapped.roles is not None
    source = check_solver(wrapped.source()).source
    assert "output_size(normalise_colours(I" in source or "output_size(x" in source
    assert source == check_solver(chain_source(list(program.steps), (), wrapped.roles, program.sized)).source


def test_a_task_padded_first_then_transformed():
    # Outputs: the input padded to 6 x 6 (top left), then diagonal rays drawn from its cells.
    def make(g):
        return dsl.diagonal_rays(dsl.fit_to(g, np.zeros((6, 6), np.uint8), "top_left"), "down_right")
    inputs = [np.array(x, np.uint8) for x in ([[6, 1, 0], [3, 0, 0], [0, 0, 0]], [[0, 4, 0], [0, 8, 0], [2, 0, 0]],
                                              [[0, 0, 5], [0, 0, 0], [7, 0, 0]], [[0, 0, 0], [1, 0, 0], [0, 9, 3]])]
    task, expected = _task(inputs, make)
    program = sized_programs([task], [[]])[0][0]
    assert program.sized_first and program.steps == (("diagonal_rays", ("down_right",)),)
    assert program.sized == ("fit_to", ("top_left",), ("const", 6, 6))
    assert np.array_equal(program.test_outputs[0], expected)
    source = check_solver(program.source()).source
    assert np.array_equal(_run(source, task.test_inputs[0]), expected)
    assert FoundProgram.from_dict(program.to_dict()) == program
