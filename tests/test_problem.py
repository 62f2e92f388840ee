"""Items: taking grids (in one step or in bounded chunks), their shape runs, joining their cells."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import pipeline.search.problem as problem
from pipeline.search.problem import Items


def _random_items(rng, n: int):
    """``n`` random grids of sides 1..30 laid out as items, with their cells, sizes and starts."""
    h, w = rng.integers(1, 31, n), rng.integers(1, 31, n)
    sizes = h * w
    start = np.cumsum(sizes) - sizes
    cells = rng.integers(0, 10, int(sizes.sum())).astype(np.uint8)
    return Items(np, cells, np.arange(n), np.zeros(n, dtype=np.int64), h, w, start), cells, sizes, start


def test_chunked_take_equals_one_step(monkeypatch):
    rng = np.random.default_rng(0)
    n = 500
    items, cells, sizes, start = _random_items(rng, n)
    order = rng.permutation(n)[:300]
    monkeypatch.setitem(problem.TAKE_CHUNK_CELLS, "cpu", 1000)
    chunked = items.take(order)
    monkeypatch.setitem(problem.TAKE_CHUNK_CELLS, "cpu", 10**9)
    whole = items.take(order)
    assert np.array_equal(chunked.cells, whole.cells)
    for j, i in enumerate(order):
        got = chunked.cells[chunked.start[j]:chunked.start[j] + sizes[i]]
        assert np.array_equal(got, cells[start[i]:start[i] + sizes[i]])


def test_padded_layout_places_each_grid_at_its_base_row_by_row():
    items, cells, sizes, start = _random_items(np.random.default_rng(2), 300)
    lay = items.padded()
    buf = lay.scatter(cells)
    expected = np.zeros(lay.size, dtype=np.uint8)
    for i in range(items.count):
        grid = cells[start[i]:start[i] + sizes[i]].reshape(items.h[i], items.w[i])
        for r in range(items.h[i]):
            at = int(lay.base[i] + r * lay.pitch[i])
            expected[at:at + items.w[i]] = grid[r]
    assert np.array_equal(buf, expected)
    assert np.array_equal(lay.gather(buf), cells)


def test_a_padded_layout_is_freed_with_its_items_without_the_cycle_collector():
    """Items cache their padded layout; the layout must not hold the items strongly, or the pair
    (and their buffers) would wait for Python's cyclic collector, which large arrays do not
    prompt: a depth-3 search kept every block's layout alive that way."""
    import gc
    import weakref

    import pytest

    gc.disable()
    try:
        items, cells, _, _ = _random_items(np.random.default_rng(1), 50)
        lay = items.padded()
        assert np.array_equal(lay.gather(lay.buffer), cells)  # the layout works while its items live
        layout_ref = weakref.ref(lay)
        del lay
        del items
        assert layout_ref() is None
    finally:
        gc.enable()
    # A layout kept past its items says so, rather than using freed state.
    items, _, _, _ = _random_items(np.random.default_rng(1), 50)
    lay = items.padded()
    del items
    with pytest.raises(RuntimeError, match="after its items were freed"):
        lay.gather(lay.buffer)


def test_cells_back_to_back_in_one_buffer_join_without_a_copy():
    buf = np.arange(20, dtype=np.uint8)
    parts = [buf[0:5], buf[5:12], buf[12:13]]
    joined = problem.join_cells(np, parts)
    assert np.array_equal(joined, np.concatenate(parts))
    assert np.shares_memory(joined, buf)
    # A gap, another buffer, or an order that is not back to back: a copy with the same cells.
    for parts in ([buf[0:5], buf[6:12]], [buf[0:5], np.arange(3, dtype=np.uint8)], [buf[5:12], buf[0:5]]):
        joined = problem.join_cells(np, parts)
        assert np.array_equal(joined, np.concatenate(parts))
        assert not np.shares_memory(joined, buf)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 3), st.integers(1, 3)), max_size=40))
def test_shape_runs_are_the_runs_of_equal_shapes(shapes):
    shapes = sorted(shapes)
    h = np.array([s[0] for s in shapes], dtype=np.int64)
    w = np.array([s[1] for s in shapes], dtype=np.int64)
    expected, lo = [], 0
    for i in range(1, len(shapes) + 1):
        if i == len(shapes) or shapes[i] != shapes[lo]:
            expected.append((shapes[lo][0], shapes[lo][1], lo, i))
            lo = i
    assert problem.shape_runs(h, w) == expected
