"""What the tests of a primitive module share: grids from lists, hand-made cases in the layout of
``CASES`` in ``tests/test_dsl.py``, random stacks, and the batched primitive checked grid by grid
against a plain per-grid reference."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from solvers.batch import as_parts


def g(rows):
    """A uint8 grid from nested lists."""
    return np.array(rows, dtype=np.uint8)


def case(name, args, inp, expected, id_=None):
    """A hand-made case: primitive ``name`` with ``args`` turns ``inp`` into ``expected``."""
    return pytest.param(name, tuple(args), inp, expected, id=id_ or f"{name}{tuple(args)}")


def stacks(cells):
    """Stacks of 1-4 grids of one shape (1-9 cells a side) whose cells are drawn from ``cells``."""
    cell = st.sampled_from(cells)

    @st.composite
    def draw_stack(draw):
        h, w, n = draw(st.integers(1, 9)), draw(st.integers(1, 9)), draw(st.integers(1, 4))
        return draw(hnp.arrays(np.uint8, (n, h, w), elements=cell))

    return draw_stack()


def check_against_reference(t, stack, reference):
    """Transform ``t`` applied to ``stack`` gives, for every grid, what ``reference(grid, *args)``
    gives alone (None: no result)."""
    results = {}
    for idx, out in as_parts(np, t(np, stack), stack.shape[0]):
        results.update(zip(np.asarray(idx).tolist(), out))
    for i, grid in enumerate(stack):
        expected = reference(grid, *t.args)
        if expected is None:
            assert i not in results, f"{t}: a result for grid {i}\n{grid}"
        else:
            assert i in results, f"{t}: no result for grid {i}\n{grid}"
            np.testing.assert_array_equal(results[i], expected, err_msg=f"{t} grid {i}\n{grid}")
