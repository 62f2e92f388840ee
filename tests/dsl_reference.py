"""What the tests of a primitive module share: grids from lists, hand-made cases in the layout of
``CASES`` in ``tests/test_dsl.py``, random stacks, and the batched primitive checked grid by grid
against a plain per-grid reference."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from solvers.batch import as_parts
from solvers.padded import pad_grids


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


def module_tests(module: str, references: dict, cases: list, no_result: list = (), cells=(0, 1, 2),
                 padded_grids: list = (), examples: int = 200) -> dict:
    """The tests that every primitive module's test file shares, as test functions for its globals
    (``globals().update(module_tests(...))``): every transform of ``module`` has a per-grid
    reference in ``references``; the hand-made ``cases`` hold for the DSL and for the references,
    and the DSL has no result on the ``no_result`` cases; the batched primitive matches its
    reference on random stacks of ``cells``; and the grids ``padded_grids`` (nested lists) padded
    into one stack each give what they give alone, a result's cells outside its sides 0."""
    from hypothesis import HealthCheck, given, settings

    from solvers import dsl
    from solvers.primitives import transforms

    module_transforms = [t for t in transforms() if t.primitive.fn.__module__ == module]

    def test_every_primitive_of_the_module_has_a_reference():
        assert module_transforms and {t.name for t in module_transforms} == set(references)

    @pytest.mark.parametrize("name, args, inp, expected", cases)
    def test_hand_made_cases(name, args, inp, expected):
        assert getattr(dsl, name)(g(inp), *args).tolist() == expected

    @pytest.mark.parametrize("name, args, inp, expected", list(cases) + list(no_result))
    def test_references_agree_with_the_hand_made_cases(name, args, inp, expected):
        out = references[name](g(inp), *args)
        assert (None if out is None else out.tolist()) == expected

    @settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(t=st.sampled_from(module_transforms), stack=stacks(list(cells)))
    def test_batched_primitive_matches_the_reference(t, stack):
        check_against_reference(t, stack, references[t.name])

    tests = {f.__name__: f for f in (test_every_primitive_of_the_module_has_a_reference, test_hand_made_cases,
                                     test_references_agree_with_the_hand_made_cases,
                                     test_batched_primitive_matches_the_reference)}
    if no_result:
        @pytest.mark.parametrize("name, args, inp, expected", no_result)
        def test_no_result(name, args, inp, expected):
            with pytest.raises(ValueError):
                getattr(dsl, name)(g(inp), *args)

        tests["test_no_result"] = test_no_result
    if padded_grids:
        @pytest.mark.parametrize("t", module_transforms, ids=str)
        def test_padded_stack_matches_single_grids(t):
            """Grids of several shapes padded into one stack give what each gives alone."""
            grids = [g(rows) for rows in padded_grids]
            res = t.padded(np, *pad_grids(grids))
            for i, grid in enumerate(grids):
                expected = references[t.name](grid, *t.args)
                if isinstance(res, np.ndarray):  # a result of the input's sides, in place
                    got = res[i, :grid.shape[0], :grid.shape[1]]
                else:
                    assert bool(res.valid[i]) == (expected is not None)
                    if expected is None:
                        continue
                    got = res.arr[i, :res.h[i], :res.w[i]]
                    assert not res.arr[i, res.h[i]:].any() and not res.arr[i, :, res.w[i]:].any()
                assert got.tolist() == expected.tolist()

        tests["test_padded_stack_matches_single_grids"] = test_padded_stack_matches_single_grids
    return tests


def reference_objects(grid, diagonal: bool, one_colour: bool) -> list:
    """The objects of a grid by a plain flood fill, for references: its non-zero cells joined through
    their 4 (or, ``diagonal``, 8) neighbours, of one colour each where ``one_colour``; each a list
    of (row, col) cells, in reading order of their first cells."""
    h, w = grid.shape
    steps = [(dy, dx) for dy in (-1, 0, 1) for dx in (-1, 0, 1)
             if (dy or dx) and (diagonal or not (dy and dx))]
    seen = np.zeros((h, w), dtype=bool)
    found = []
    for r in range(h):
        for c in range(w):
            if grid[r, c] and not seen[r, c]:
                todo, cells = [(r, c)], []
                seen[r, c] = True
                while todo:
                    y, x = todo.pop()
                    cells.append((y, x))
                    for dy, dx in steps:
                        yy, xx = y + dy, x + dx
                        if 0 <= yy < h and 0 <= xx < w and grid[yy, xx] and not seen[yy, xx] \
                                and (not one_colour or grid[yy, xx] == grid[r, c]):
                            seen[yy, xx] = True
                            todo.append((yy, xx))
                found.append(cells)
    return found
