"""KeySet behaves like a Python set that reports where new keys first occur."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.search.keyset import KeySet


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(0, 40), max_size=30), max_size=12))
def test_matches_python_set(batches):
    ks, seen = KeySet(np), set()
    for batch in batches:
        keys = np.array(batch, dtype=np.uint64)
        positions = ks.add_new(keys)
        expected = []
        for i, k in enumerate(batch):
            if k not in seen:
                expected.append(i)
            seen.add(k)
        assert positions.tolist() == expected
        assert len(ks) == len(seen)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(0, 40), st.booleans()), max_size=30), max_size=12))
def test_a_mask_leaves_positions_out(batches):
    """With ``use``, positions where it is false are neither reported nor remembered."""
    ks, seen = KeySet(np), set()
    for batch in batches:
        keys = np.array([k for k, _ in batch], dtype=np.uint64)
        use = np.array([u for _, u in batch], dtype=bool)
        expected = []
        for i, (k, u) in enumerate(batch):
            if u and k not in seen:
                expected.append(i)
                seen.add(k)
        assert ks.add_new(keys, use).tolist() == expected
        assert len(ks) == len(seen)
