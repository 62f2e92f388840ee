"""KeySet behaves like a Python set that reports first occurrences."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.keyset import KeySet


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(0, 40), max_size=30), max_size=12))
def test_matches_python_set(batches):
    ks, seen = KeySet(np), set()
    for batch in batches:
        keys = np.array(batch, dtype=np.uint64)
        mask = ks.add_new(keys)
        expected = []
        for k in batch:
            expected.append(k not in seen)
            seen.add(k)
        assert mask.tolist() == expected
        assert len(ks) == len(seen)
