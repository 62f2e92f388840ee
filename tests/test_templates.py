"""Templates: train outputs as constant grids (solvers.dsl.constant, pipeline.search.templates),
the bottom layer of a layered composition or an answer of their own."""
from __future__ import annotations

import numpy as np
import pytest

from pipeline.finish.inline import inline
from pipeline.finish.solver_check import check_solver
from pipeline.search.layers import compose_layers
from pipeline.search.mechanisms import mechanisms_of
from pipeline.search.templates import template_chains, template_pieces, template_programs
from pipeline.run.tasks import Task
from solvers import dsl

FRAME = np.array([[5, 5, 5, 5], [5, 0, 0, 5], [5, 0, 0, 5], [5, 5, 5, 5]], dtype=np.uint8)


def _grid(cells, shape=(4, 4)):
    g = np.zeros(shape, dtype=np.uint8)
    for r, c, v in cells:
        g[r, c] = v
    return g


def test_constant_gives_its_grid_for_every_input():
    grid = ((1, 2, 0), (0, 3, 4))
    assert dsl.constant(np.zeros((5, 7), dtype=np.uint8), grid).tolist() == [[1, 2, 0], [0, 3, 4]]
    stack = np.zeros((3, 2, 2), dtype=np.uint8)
    for bad in [((1, 10),), ((1, -1),), ((1, 2), (3,)), (1, 2), (), tuple([(0,) * 31])]:
        with pytest.raises(ValueError):
            dsl.constant(stack[0], bad)


def test_template_solver_passes_the_source_check():
    source = "def solve(I):\n    O = constant(I, ((1, 2), (3, 4)))\n    return O\n"
    check_solver(source)
    inline(source)
    assert mechanisms_of(source, True) == ["templates"]


def _framed_task():
    """Outputs: a fixed frame with the input's 2s painted over it."""
    inputs = [_grid([(1, 1, 2), (3, 0, 1)]), _grid([(2, 2, 2), (1, 3, 1)]), _grid([(1, 2, 2)])]
    outputs = [np.where(g == 2, g, FRAME) for g in inputs]
    return Task("framed", tuple(inputs[:2]), tuple(outputs[:2]), (inputs[2],)), outputs[2]


def test_the_outputs_shared_cells_are_a_layer():
    task, expected = _framed_task()
    pieces = [(("keep_color", (2,)),)]
    assert compose_layers(np, [task], [pieces], [[]]) == {}
    (shared,) = template_pieces(task)
    assert np.array_equal(dsl.constant(task.train_inputs[0], shared[0][1][0]), FRAME)
    found = compose_layers(np, [task], [pieces + [shared]], [template_chains(task)])[0]
    assert found.steps == pieces[0] and found.layers == (shared,) and found.solved
    assert np.array_equal(found.test_outputs[0], expected)
    ns = {}
    exec("from solvers.dsl import *", ns)
    exec(found.source(), ns)
    for i, o in zip(task.train_inputs, task.train_outputs):
        assert np.array_equal(ns["solve"](i), o)


def test_templates_need_one_shape_and_answer_where_repeated():
    a, b = _grid([(0, 0, 1)]), _grid([(1, 1, 2)])
    inputs = tuple(_grid([(k, k, 3)]) for k in range(3))
    task = Task("pick", inputs, (a, b, a), (inputs[0],))
    chains = template_chains(task)
    assert [c[0][0] for c in chains] == ["constant", "constant"]
    assert np.array_equal(dsl.constant(inputs[0], chains[0][0][1][0]), a)
    (program,) = template_programs(task)
    assert not program.solved and program.train_exact == 2 and program.rank == program.score
    assert np.array_equal(program.test_outputs[0], a)
    same = Task("same", inputs[:2], (a, a), (inputs[0],))
    assert template_programs(same)[0].solved
    mixed = Task("mixed", inputs[:2], (a, np.zeros((2, 2), dtype=np.uint8)), (inputs[0],))
    assert template_chains(mixed) == template_pieces(mixed) == template_programs(mixed) == []
    assert template_pieces(same) == []
