"""Cell rules: an output made cell by cell from the input, each cell's colour looked up by its own
colour and by the directions in which its row and column hold a non-zero cell
(:func:`solvers.primitives.cell_rules.ray_keys`).

Where every train output has its input's shape and no two input cells of one key become different
colours, the train pairs give a table (:func:`solvers.dsl.ray_table`). It is an answer when it
changes some cell of a train input and knows every key of the test inputs: a key no train cell
shows is not guessed. Such tables fill regions by the walls around them or mark the crossings of
marked rows and columns.
"""
from __future__ import annotations

import numpy as np

from pipeline.finish.program import FoundProgram
from pipeline.search.scoring import SOLVED_RANK
from solvers import dsl
from solvers.primitives.cell_rules import RAY_KEYS, ray_keys


def cell_rule_programs(task) -> list:
    """The program ``ray_table(I, table)`` of ``task``'s train pairs (see the module), as a list
    of one ranked like a solved program of one call; none where the pairs give no such table."""
    pairs = list(zip(task.train_inputs, task.train_outputs))
    if not pairs or any(i.shape != o.shape for i, o in pairs):
        return []
    keys = np.concatenate([ray_keys(np, i[None]).ravel() for i, _ in pairs])
    colours = np.concatenate([o.ravel() for _, o in pairs]).astype(np.int64)
    known, first = np.unique(keys, return_index=True)
    table = colours[first]
    lookup = np.full(RAY_KEYS, -1, dtype=np.int64)
    lookup[known] = table
    if (lookup[keys] != colours).any() or (table == known // 16).all():
        return []  # two cells of one key differ, or the table changes nothing
    tests = [ray_keys(np, t[None])[0] for t in task.test_inputs]
    if any((lookup[k] < 0).any() for k in tests):
        return []
    mapping = {int(k): int(c) for k, c in zip(known, table) if c != k // 16}
    outputs = tuple(dsl.ray_table(t, mapping) for t in task.test_inputs)
    steps = (("ray_table", (mapping,)),)
    return [FoundProgram(steps, SOLVED_RANK - 1, True, len(pairs), 1.0, outputs)]
