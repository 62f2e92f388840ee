"""The array-library helpers agree with NumPy's own functions (which CuPy lacks)."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from pipeline.search.device import packed_copy
from solvers.xp import cummax, cummax_doubling, repeat_index, run_positions, stable_argsort


@settings(max_examples=150, deadline=None)
@given(hnp.arrays(np.int64, hnp.array_shapes(min_dims=3, max_dims=3, max_side=31), elements=st.integers(-9, 99)),
       st.sampled_from([0, 1, 2]))
def test_cummax_matches_maximum_accumulate(a, axis):
    assert np.array_equal(cummax(np, a, axis), np.maximum.accumulate(a, axis=axis))
    assert np.array_equal(cummax_doubling(np, a, axis), np.maximum.accumulate(a, axis=axis))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 6), max_size=20))
def test_repeat_index_matches_repeat(counts):
    expected = np.repeat(np.arange(len(counts)), counts)
    assert np.array_equal(repeat_index(np, np.array(counts, dtype=np.int64)), expected)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 6)), max_size=20), st.booleans())
def test_run_positions_concatenate_the_runs(runs, wide):
    starts = np.array([s for s, _ in runs], dtype=np.int64)
    lengths = np.array([n for _, n in runs], dtype=np.int64)
    expected = np.concatenate([np.arange(s, s + n) for s, n in runs] + [np.zeros(0, dtype=np.int64)])
    got = run_positions(np, starts, lengths, int(lengths.sum()), 2**31 if wide else 60)
    assert got.dtype == (np.int64 if wide else np.int32)
    assert np.array_equal(got, expected)


@settings(max_examples=100, deadline=None)
@given(hnp.arrays(np.int8, hnp.array_shapes(min_dims=2, max_dims=2, max_side=20), elements=st.integers(0, 2)))
def test_stable_argsort_keeps_ties_in_order(a):
    assert np.array_equal(stable_argsort(np, a, axis=1), np.argsort(a, axis=1, kind="mergesort"))


@settings(max_examples=100, deadline=None)
@given(st.lists(hnp.arrays(st.sampled_from([np.bool_, np.uint8, np.int64, np.uint64, np.float64]),
                           hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5)), min_size=1, max_size=6))
def test_packed_copy_gives_back_each_array(arrays):
    copies = packed_copy(np, arrays)
    assert len(copies) == len(arrays)
    for a, c in zip(arrays, copies):
        assert c.dtype == a.dtype and c.shape == a.shape
        assert np.array_equal(a.view(np.uint8), c.view(np.uint8))  # bit for bit (NaNs too)


def test_a_host_copy_of_a_numpy_array_is_the_array():
    from pipeline.search.device import HostCopy
    a = np.arange(5)
    copy = HostCopy(a)
    assert copy.get() is a and len(copy) == 5 and np.asarray(copy, dtype=np.int32).dtype == np.int32


def test_pinned_stage_gives_the_smallest_free_buffer_that_fits():
    """A copy takes the smallest staged buffer that holds it, so a small copy leaves the large
    buffers to the large copies (which would otherwise lock new pages)."""
    from pipeline.search.device import _PinnedStage

    stage = _PinnedStage()
    bufs = [np.empty(n, dtype=np.uint8) for n in (4096, 1024, 2048)]
    for b in bufs:
        stage.give(b)
    assert stage.take(1000) is bufs[1]
    assert stage.take(1500) is bufs[2]
    assert stage.take(3000) is bufs[0]
    stage.give(bufs[0])
    stage.give(bufs[1])
    assert stage.take(10) is bufs[1] and stage.take(10) is bufs[0]
