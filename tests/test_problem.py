"""Items.take gives the same buffer whether it gathers in one step or in bounded chunks."""
import numpy as np

import pipeline.problem as problem
from pipeline.problem import Items


def test_chunked_take_equals_one_step(monkeypatch):
    rng = np.random.default_rng(0)
    n = 500
    h, w = rng.integers(1, 31, n), rng.integers(1, 31, n)
    sizes = h * w
    start = np.cumsum(sizes) - sizes
    cells = rng.integers(0, 10, int(sizes.sum())).astype(np.uint8)
    items = Items(np, cells, np.arange(n), np.zeros(n, dtype=np.int64), h, w, start)
    order = rng.permutation(n)[:300]
    monkeypatch.setitem(problem.TAKE_CHUNK_CELLS, "cpu", 1000)
    chunked = items.take(order)
    monkeypatch.setitem(problem.TAKE_CHUNK_CELLS, "cpu", 10**9)
    whole = items.take(order)
    assert np.array_equal(chunked.cells, whole.cells)
    for j, i in enumerate(order):
        got = chunked.cells[chunked.start[j]:chunked.start[j] + sizes[i]]
        assert np.array_equal(got, cells[start[i]:start[i] + sizes[i]])
