"""The primitives of ``solvers.primitives.split``: hand-checked cases, and every argument tuple
against a plain per-grid reference written here (loops over lines and cells).

``SPLIT_CASES`` has the layout of ``CASES`` in ``tests/test_dsl.py`` (name, args, input, expected),
which takes it in for its completeness checks; every expected grid is written out by hand.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from dsl_reference import case, check_against_reference, g, stacks
from solvers import dsl
from solvers.primitives import transforms
from solvers.primitives.split import PICKS
from solvers.registry import PRIMITIVES, Transform

MODULE = "solvers.primitives.split"


# A 2 x 2 lattice of 2 x 2 cells cut by a row and a column of 5: top left and bottom left alike
# (three cells of 1), top right two colours, bottom right a single 1.
QUADS = [[1, 1, 5, 2, 0],
         [1, 0, 5, 0, 3],
         [5, 5, 5, 5, 5],
         [1, 1, 5, 0, 1],
         [1, 0, 5, 0, 0]]

# Three cells side by side, cut by columns of 5; the first two of one shape. The full columns of 2
# and 3 inside the cells cut the grid unevenly, so 5 is the only separator colour.
THREE = [[1, 1, 5, 2, 2, 5, 3, 0],
         [0, 1, 5, 0, 2, 5, 3, 3]]

# Three one-row cells stacked, cut by rows of 5.
STACKED = [[1, 0, 0],
           [5, 5, 5],
           [0, 0, 0],
           [5, 5, 5],
           [0, 0, 2]]

SPLIT_CASES = [
    case("pick_part", ("largest",), QUADS, [[1, 1], [1, 0]]),
    case("pick_part", ("smallest",), QUADS, [[0, 1], [0, 0]]),
    case("pick_part", ("most_colours",), QUADS, [[2, 0], [0, 3]]),
    case("pick_part", ("fewest_colours",), QUADS, [[1, 1], [1, 0]]),
    case("pick_part", ("unique_colours",), QUADS, [[2, 0], [0, 3]]),
    case("pick_part", ("unique_shape",), THREE, [[3, 0], [3, 3]]),
    case("pick_part", ("common",), QUADS, [[1, 1], [1, 0]]),
    case("combine_parts", ("or",), QUADS, [[1, 1], [1, 3]]),
    case("combine_parts", ("or",), THREE, [[1, 1], [3, 1]], "combine_parts-three-or"),
    case("combine_parts", ("and",), THREE, [[1, 0], [0, 1]]),
    case("combine_parts", ("one",), STACKED, [[1, 0, 2]]),
    case("combine_parts", ("nor",), STACKED, [[0, 1, 0]]),
]

NO_RESULT = [
    case("pick_part", ("largest",), [[1, 5, 0, 0]], None, "pick_part-unequal-cells"),
    case("pick_part", ("largest",), [[1, 1, 0], [0, 2, 0]], None, "pick_part-no-lattice"),
    case("pick_part", ("unique_shape",), QUADS, None, "pick_part-two-unique-shapes"),
    case("pick_part", ("common",), THREE, None, "pick_part-no-repeated-cell"),
    case("combine_parts", ("or",), [[1, 1, 0], [0, 2, 0]], None, "combine_parts-no-lattice"),
    case("combine_parts", ("or",), [[1, 5, 2, 5, 3, 5, 4, 5, 1]], None, "combine_parts-five-cells-across"),
]


@pytest.mark.parametrize("name, args, inp, expected", NO_RESULT)
def test_no_result(name, args, inp, expected):
    with pytest.raises(ValueError):
        getattr(dsl, name)(g(inp), *args)


def test_split_comes_after_the_earlier_modules():
    """The module's transforms come together after the earlier modules' (the indices of every
    earlier transform are unchanged)."""
    modules = [t.primitive.fn.__module__ for t in transforms()]
    first, last = modules.index(MODULE), len(modules) - modules[::-1].index(MODULE)
    assert set(modules[first:last]) == {MODULE} and "solvers.primitives.moves" in modules[:first]


# --------------------------------------------------------------------------------------------------
# Plain references, one grid at a time
# --------------------------------------------------------------------------------------------------

def _runs(seps, n):
    out, start = [], None
    for i in range(n + 1):
        if i == n or i in seps:
            if start is not None:
                out.append((start, i))
                start = None
        elif start is None:
            start = i
    return out


def ref_lattice_cells(grid):
    """The cells (top, bottom, left, right) of the grid's separator lattice, in reading order."""
    h, w = grid.shape
    best = None
    for s in range(1, 10):
        rows = {r for r in range(h) if (grid[r] == s).all()}
        cols = {c for c in range(w) if (grid[:, c] == s).all()}
        r_runs, c_runs = _runs(rows, h), _runs(cols, w)
        equal = (r_runs and c_runs and len({b - a for a, b in r_runs}) == 1
                 and len({b - a for a, b in c_runs}) == 1)
        if equal and len(r_runs) * len(c_runs) >= 2 and rows | cols:
            if best is None or len(rows) + len(cols) > best[0]:
                best = (len(rows) + len(cols), r_runs, c_runs)
    if best is None:
        return None
    return [(a, b, c, d) for a, b in best[1] for c, d in best[2]]


def _pick(parts, criterion):
    if not parts:
        return None
    cells = [int((p != 0).sum()) for p in parts]
    colours = [frozenset(np.unique(p[p != 0]).tolist()) for p in parts]
    if criterion in ("largest", "smallest", "most_colours", "fewest_colours"):
        value = cells if criterion in ("largest", "smallest") else [len(c) for c in colours]
        best = (max if criterion in ("largest", "most_colours") else min)(value)
        return parts[value.index(best)]
    keys = {"unique_colours": colours,
            "unique_shape": [(p.shape, (p != 0).tobytes()) for p in parts],
            "common": [(p.shape, p.tobytes()) for p in parts]}[criterion]
    counts = [keys.count(k) for k in keys]
    if criterion == "common":
        top = max(counts)
        return parts[counts.index(top)] if top >= 2 and counts.count(top) == top else None
    once = [i for i, c in enumerate(counts) if c == 1]
    return parts[once[0]] if len(once) == 1 else None


def ref_pick_part(grid, criterion):
    cells = ref_lattice_cells(grid)
    return None if cells is None else _pick([grid[a:b, c:d] for a, b, c, d in cells], criterion)


def ref_combine_parts(grid, op):
    cells = ref_lattice_cells(grid)
    if cells is None:
        return None
    parts = [grid[a:b, c:d] for a, b, c, d in cells]
    if len({a for a, _, _, _ in cells}) > 4 or len({c for _, _, c, _ in cells}) > 4:
        return None
    out = np.zeros_like(parts[0])
    for r in range(out.shape[0]):
        for c in range(out.shape[1]):
            values = [int(p[r, c]) for p in parts if p[r, c] != 0]
            if op == "or" and values or op == "one" and len(values) == 1 or op == "and" and len(values) == len(parts):
                out[r, c] = values[0]
            elif op == "nor" and not values:
                out[r, c] = 1
    return out


REFERENCES = {"pick_part": ref_pick_part, "combine_parts": ref_combine_parts}
# The module's transforms: those the search enumerates, and pick_part's (not enumerated) by hand.
SPLIT = [t for t in transforms() if t.primitive.fn.__module__ == MODULE] + \
    [Transform(PRIMITIVES["pick_part"], args) for args in PICKS]


def test_every_primitive_of_the_module_has_a_reference():
    assert {t.name for t in SPLIT} == set(REFERENCES)


@pytest.mark.parametrize("name, args, inp, expected", SPLIT_CASES)
def test_references_agree_with_the_hand_made_cases(name, args, inp, expected):
    assert REFERENCES[name](g(inp), *args).tolist() == expected


@pytest.mark.parametrize("name, args, inp, expected", NO_RESULT)
def test_references_agree_with_the_no_result_cases(name, args, inp, expected):
    assert REFERENCES[name](g(inp), *args) is None


CELLS = [0, 0, 0, 0, 0, 0, 1, 2, 3, 5]


@st.composite
def lattices(draw):
    """Grids cut by lines of 5 into cells of one size (cell contents may add more full lines)."""
    parts_down, parts_across = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    cell_h, cell_w, n = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    border = draw(st.booleans())
    h = parts_down * (cell_h + 1) - 1 + 2 * border
    w = parts_across * (cell_w + 1) - 1 + 2 * border
    stack = draw(hnp.arrays(np.uint8, (n, h, w), elements=st.sampled_from([0, 0, 0, 1, 2, 5])))
    for r in range(h):
        if (r + 1 - border) % (cell_h + 1) == 0 or border and r in (0, h - 1):
            stack[:, r] = 5
    for c in range(w):
        if (c + 1 - border) % (cell_w + 1) == 0 or border and c in (0, w - 1):
            stack[:, :, c] = 5
    return stack


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(t=st.sampled_from(SPLIT), stack=stacks(CELLS))
def test_batched_primitive_matches_the_reference(t, stack):
    check_against_reference(t, stack, REFERENCES[t.name])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(t=st.sampled_from(SPLIT), stack=lattices())
def test_batched_primitive_matches_the_reference_on_lattices(t, stack):
    check_against_reference(t, stack, REFERENCES[t.name])


@pytest.mark.parametrize("t", SPLIT, ids=str)
def test_padded_stack_gives_each_grid_its_own_result(t):
    """Grids of several shapes zero-padded into one stack give what each gives alone."""
    grids = [g(QUADS), g(THREE), g(STACKED), g([[1, 1, 0], [0, 2, 0]]), g([[1, 5, 2, 5, 3, 5, 4, 5, 1]])]
    side = 10
    arr = np.zeros((len(grids), side, side), dtype=np.uint8)
    for i, grid in enumerate(grids):
        arr[i, :grid.shape[0], :grid.shape[1]] = grid
    h = np.array([x.shape[0] for x in grids])
    w = np.array([x.shape[1] for x in grids])
    res = t.padded(np, arr, h, w)
    for i, grid in enumerate(grids):
        try:
            alone = getattr(dsl, t.name)(grid, *t.args)
        except ValueError:
            assert not bool(res.valid[i]), f"{t}: grid {i} has a result only when padded"
            continue
        assert bool(res.valid[i]), f"{t}: grid {i} lost its result when padded"
        np.testing.assert_array_equal(res.arr[i, :res.h[i], :res.w[i]], alone)
