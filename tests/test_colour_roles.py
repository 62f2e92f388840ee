"""Colour roles: renaming by role is undone exactly, a task whose marker colour changes from
example to example is solved through its renamed variant, and the answer is named back."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from pipeline.search.colour_roles import fixed_colours, merged, restored, role_variant
from pipeline.search.shards import search_shard
from pipeline.finish.program import FoundProgram
from pipeline.run.tasks import Task
from solvers import dsl


@settings(max_examples=200, deadline=None)
@given(arrays(np.uint8, st.tuples(st.integers(1, 8), st.integers(1, 8)), elements=st.integers(0, 9)),
       st.sets(st.integers(0, 9), max_size=4))
def test_restore_undoes_normalise(grid, fixed):
    fixed = tuple(sorted(fixed | {0}))
    renamed = dsl.normalise_colours(grid, fixed)
    assert np.array_equal(dsl.restore_colours(renamed, grid, fixed), grid)
    for colour in fixed:  # fixed colours keep their cells
        assert np.array_equal(renamed == colour, grid == colour)


def test_most_frequent_colour_gets_the_first_free_name():
    grid = np.array([[0, 7, 7], [7, 3, 0]], dtype=np.uint8)
    assert dsl.normalise_colours(grid, (0,)).tolist() == [[0, 1, 1], [1, 2, 0]]


def _marker_task():
    """Fill the grid's empty cells with the colour of its one marker cell (which varies)."""
    def pair(colour, shape, at):
        grid = np.zeros(shape, dtype=np.uint8)
        grid[at] = colour
        return grid, np.full(shape, colour, dtype=np.uint8)
    pairs = [pair(3, (3, 3), (1, 1)), pair(6, (2, 4), (0, 3)), pair(8, (4, 2), (2, 0))]
    return Task("marker", tuple(p[0] for p in pairs[:2]), tuple(p[1] for p in pairs[:2]), (pairs[2][0],)), pairs[2][1]


def test_variant_renames_each_example_by_its_input():
    task, _ = _marker_task()
    assert fixed_colours(task) == (0,)
    variant = role_variant(task)
    assert variant.id == "marker~roles"
    assert all(set(np.unique(g).tolist()) <= {0, 1} for g in variant.train_inputs + variant.test_inputs)
    assert all(set(np.unique(g).tolist()) == {1} for g in variant.train_outputs)
    plain = Task("plain", (np.array([[0, 1]], np.uint8),), (np.array([[1, 1]], np.uint8),), (np.array([[1, 0]], np.uint8),))
    assert role_variant(plain) is None  # nothing to rename


def test_search_solves_the_variant_and_names_the_answer_back():
    task, expected = _marker_task()
    found = search_shard([task], 2, 0, None, 2000)
    best = found.programs[task.id][0]
    assert best.solved and best.roles == (0,)
    assert np.array_equal(best.test_outputs[0], expected)
    ns = {}
    exec("from solvers.dsl import *", ns)
    exec(best.source(), ns)
    for i, o in zip(task.train_inputs + task.test_inputs, task.train_outputs + (expected,)):
        assert np.array_equal(ns["solve"](i), o)
    without = search_shard([task], 2, 0, None, 2000, mechanisms=("layers",))
    assert not any(p.roles for p in without.programs[task.id])


def test_restored_programs_rank_after_raw_ones_on_a_tie():
    task, _ = _marker_task()
    raw = [FoundProgram((("rot90", ()),), 99.0, True, 2, 1.0, (np.zeros((4, 2), np.uint8),))]
    variant = restored(task, [FoundProgram((("rot180", ()),), 99.0, True, 2, 1.0, (np.ones((4, 2), np.uint8),))])
    assert variant[0].test_outputs[0].tolist() == [[8, 8]] * 4  # role colour 1 named back as 8
    assert [p.roles for p in merged(raw, variant)] == [None, (0,)]
