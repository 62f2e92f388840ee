"""Cell rules: a table from each cell's colour and the directions of its row's and column's
non-zero cells to its output colour, fitted to the train pairs (solvers.dsl.ray_table,
pipeline.search.cell_rules)."""
from __future__ import annotations

import numpy as np

from pipeline.finish.inline import inline
from pipeline.finish.solver_check import check_solver
from pipeline.run.tasks import Task
from pipeline.search.cell_rules import cell_rule_programs
from pipeline.search.mechanisms import MECHANISMS, mechanisms_of
from pipeline.search.shards import search_shard


def _marked(top: list, right: list, side: int = 7) -> np.ndarray:
    """A grid with 5s in the top row at columns ``top`` and in the right column at rows ``right``."""
    g = np.zeros((side, side), dtype=np.uint8)
    g[0, top] = 5
    g[right, side - 1] = 5
    return g


def _crossings(g: np.ndarray) -> np.ndarray:
    """The intended output, cell by cell: 2 where a marked column meets a marked row."""
    out = g.copy()
    side = g.shape[0]
    for r in range(1, side):
        for c in range(side - 1):
            if g[0, c] == 5 and g[r, side - 1] == 5:
                out[r, c] = 2
    return out


def _task(test_input) -> Task:
    inputs = [_marked([1, 3, 4], [2, 3, 5]), _marked([0, 2, 5], [1, 4, 6]), _marked([3], [3]),
              _marked([0, 1, 5], [1, 2, 6])]
    return Task("crossings", tuple(inputs), tuple(_crossings(g) for g in inputs), (test_input,))


def test_a_fitted_table_marks_the_crossings_of_a_new_input():
    test_input = _marked([1, 2, 4], [2, 4, 5])
    found = cell_rule_programs(_task(test_input))
    assert len(found) == 1 and found[0].solved
    assert np.array_equal(found[0].test_outputs[0], _crossings(test_input))
    (name, (table,)), = found[0].steps
    assert name == "ray_table" and table[8 + 1] == 2  # an empty cell with a mark above and one to its right


def test_no_table_where_a_test_cell_shows_a_key_no_train_cell_does():
    # A 3 in the test input: no train cell has that colour.
    test_input = _marked([1, 2], [2, 4])
    test_input[3, 3] = 3
    assert cell_rule_programs(_task(test_input)) == []


def test_no_table_where_cells_of_one_key_become_different_colours_or_nothing_changes():
    a = np.array([[0, 0], [0, 0]], dtype=np.uint8)
    clash = Task("clash", (a, a), (a, np.array([[1, 0], [0, 0]], dtype=np.uint8)), (a,))
    assert cell_rule_programs(clash) == []
    same = Task("same", (_marked([1], [2]),), (_marked([1], [2]),), (_marked([1], [2]),))
    assert cell_rule_programs(same) == []


def test_the_search_answers_with_the_table_and_not_without_the_mechanism():
    task = _task(_marked([1, 2, 4], [2, 4, 5]))
    on = search_shard([task], 1, 0, None, 8000).programs[task.id]
    best = on[0]
    assert best.solved and best.steps[0][0] == "ray_table"
    source = f"def solve(I):\n    O = ray_table(I, {best.steps[0][1][0]!r})\n    return O\n"
    check_solver(source)
    inline(source)
    assert mechanisms_of(source, True) == ["cell_rules"]
    assert mechanisms_of(source, True, depth=0) == ["cell_rules"]  # not a searched call: no free step
    off = search_shard([task], 1, 0, None, 8000,
                       mechanisms=tuple(m for m in MECHANISMS if m != "cell_rules")).programs[task.id]
    assert not any(p.steps and p.steps[0][0] == "ray_table" for p in off)
