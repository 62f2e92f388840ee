"""Plausible test outputs (pipeline.finish.plausible) and the attempts that take them first."""
from __future__ import annotations

import numpy as np

from pipeline.finish.plausible import Plausibility
from pipeline.finish.select import choose_attempts
from pipeline.run.tasks import Task


def _task(train, test):
    grids = lambda gs: tuple(np.array(g, dtype=np.uint8) for g in gs)
    return Task("t", grids([i for i, _ in train]), grids([o for _, o in train]), grids(test))


# Recolour the object: 8 becomes 2 in every pair (2 is brought in by the train pairs).
RECOLOUR = _task([([[8, 0], [0, 0]], [[2, 0], [0, 0]]), ([[0, 0], [8, 8]], [[0, 0], [2, 2]])],
                 [[[0, 8], [8, 0]]])


def test_colours_of_the_test_input_and_those_train_pairs_bring_in_are_plausible():
    plausible = Plausibility(RECOLOUR)
    assert plausible(0, [[0, 2], [2, 0]])
    assert plausible(0, [[0, 8], [8, 8]])
    assert not plausible(0, [[0, 3], [3, 0]])  # 3: neither in the test input nor brought in


def test_a_colour_kept_from_a_train_input_is_not_brought_in():
    # 5 is in an output, but also in that pair's input: a test input without it does not give it.
    task = _task([([[5, 1]], [[5, 5]]), ([[1, 1]], [[1, 1]])], [[[1, 0]]])
    assert not Plausibility(task)(0, [[5, 0]])
    assert Plausibility(task)(0, [[1, 1]])


def test_sizes_follow_the_rules_that_fit_every_train_pair():
    # Every output 1 x 1 (a constant size): a 3 x 3 prediction is implausible.
    task = _task([([[1, 2], [2, 2]], [[2]]), ([[3, 3, 3], [4, 3, 3], [3, 3, 3]], [[3]])], [[[5, 6, 6]]])
    plausible = Plausibility(task)
    assert plausible(0, [[6]])
    assert not plausible(0, [[6, 6, 6], [6, 5, 6], [6, 6, 6]])
    # Outputs of the inputs' sizes: the test input's size.
    assert Plausibility(RECOLOUR)(0, [[8, 8], [0, 0]])
    assert not Plausibility(RECOLOUR)(0, [[8, 8, 8], [0, 0, 0]])


def test_any_size_is_plausible_where_no_rule_fits():
    task = _task([([[1, 1]], [[1], [1], [1]]), ([[2, 2], [2, 2]], [[2, 2, 2, 2, 2]])], [[[1]]])
    assert Plausibility(task)(0, [[1, 1, 1, 1, 1, 1, 1]])
    assert not Plausibility(task)(0, [[1, 1, 3]])  # the colours still count


def test_attempts_take_plausible_predictions_first():
    # The shorter program fits the train pairs but paints 3 on the test input (a rank colour, say):
    # without the check it is attempt 1 and the right answer attempt 2; with a third, shorter
    # wrong program that paints 4, the right answer would not be an attempt at all.
    right, rank_colour, other = [[0, 2], [2, 0]], [[0, 3], [4, 0]], [[0, 4], [4, 0]]
    ranked = [[rank_colour], [other], [right]]
    test_inputs = [[[0, 8], [8, 0]]]
    assert right not in choose_attempts(ranked, test_inputs)[0].values()
    chosen = choose_attempts(ranked, test_inputs, Plausibility(RECOLOUR))
    assert chosen == [{"attempt_1": right, "attempt_2": rank_colour}]


def test_implausible_predictions_still_fill_in_before_the_test_input():
    only = [[0, 3], [3, 0]]
    chosen = choose_attempts([[only]], [[[0, 8], [8, 0]]], Plausibility(RECOLOUR))
    assert chosen == [{"attempt_1": only, "attempt_2": [[0, 8], [8, 0]]}]


def test_each_test_input_is_judged_on_its_own():
    task = _task([(RECOLOUR.train_inputs[k], RECOLOUR.train_outputs[k]) for k in range(2)],
                 [[[0, 8]], [[3, 8]]])
    # The first program is implausible on the first test input only (3 is in the second's input).
    first, second = [[[0, 3]], [[3, 3]]], [[[0, 2]], [[2, 2]]]
    chosen = choose_attempts([first, second], [[[0, 8]], [[3, 8]]], Plausibility(task))
    assert chosen[0]["attempt_1"] == [[0, 2]] and chosen[1]["attempt_1"] == [[3, 3]]
