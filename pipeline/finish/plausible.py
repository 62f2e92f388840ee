"""Which predicted test outputs are plausible for a task: two properties that the train pairs fix,
checked on a prediction before it may become an attempt.

- **Colours.** A test output's colours are the test input's or colours that a train pair brings
  in (in its output, not in its input). A program that fits every train pair but paints a colour
  that neither the test input holds nor any train pair introduces has generalised by accident: a
  colour table learnt on the train pairs applied to a colour it never saw, a recolouring by rank
  or size that meets more objects than the train inputs had, a constant layer's colour.
- **Size.** Where size rules (those that :mod:`pipeline.search.sizes` fits, and the input's own
  size) give every train output's size, the test output has one of the sizes they give for the
  test input; where none does, any size is plausible.

Of the expected test outputs, 415 of ARC-1 train's 416 are plausible (every one by its colours)
and 1,070 of ARC-2 train's 1,076. The attempts take plausible predictions first (:func:`~pipeline.finish.select.choose_attempts`);
the others only fill in after them, so a rule that misjudges costs a place, never an attempt.
"""
from __future__ import annotations

import numpy as np

from pipeline.search.sizes import candidate_rules, rule_size


def _colours(grid) -> set:
    return set(np.unique(np.asarray(grid)).tolist())


class Plausibility:
    """The plausible colours and sizes of a task's test outputs, per test input. The size rules are
    fitted lazily, in :func:`candidate_rules`' order, until one gives the size asked about: the
    cheap ones (the input's size, a constant, a ratio) settle most predictions, and the rules that
    label objects run only for the others."""

    def __init__(self, task):
        introduced: set = set()
        for i, o in zip(task.train_inputs, task.train_outputs):
            introduced |= _colours(o) - _colours(i)
        self.colours = [introduced | _colours(g) for g in task.test_inputs]
        self._task = task
        self._rules = [("same",)] + candidate_rules(task)
        self._sizes: list = []  # per rule fitted so far: its sizes for the test inputs, None where it does not fit

    def __call__(self, j: int, grid) -> bool:
        """True when ``grid`` (a 2-D array or a list of rows) is a plausible output for test input ``j``."""
        grid = np.asarray(grid)
        if grid.ndim != 2 or not _colours(grid) <= self.colours[j]:
            return False
        for k in range(len(self._rules)):
            if k == len(self._sizes):
                self._sizes.append(self._fit(self._rules[k]))
            if self._sizes[k] is not None and self._sizes[k][j] == grid.shape:
                return True
        return all(sizes is None for sizes in self._sizes)  # no rule fits: any size

    def _fit(self, rule) -> list | None:
        """The sizes ``rule`` gives for the test inputs, where it gives every train output's size."""
        task = self._task
        if any(_size(i, rule) != o.shape for i, o in zip(task.train_inputs, task.train_outputs)):
            return None
        return [_size(g, rule) for g in task.test_inputs]


def _size(grid, rule) -> tuple | None:
    """The size ``rule`` gives for ``grid``; the rule ``("same",)``: its own size."""
    return grid.shape if rule == ("same",) else rule_size(grid, rule)
