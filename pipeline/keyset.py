"""A set of 64-bit state keys kept as sorted runs on the array device (NumPy or CuPy).

Deduplication of millions of states per level stays vectorised and on the GPU: a batch is
uniqued with ``unique``, tested against each sorted run with ``searchsorted``, and appended as a
new run; runs of similar size are merged (log-structured), so the cost stays O(n log n) overall.
"""
from __future__ import annotations


class KeySet:
    """Keys seen so far; :meth:`add_new` says where a batch's new keys first occur."""

    def __init__(self, xp):
        self.xp = xp
        self.runs: list = []
        self.size = 0

    def add_new(self, keys):
        """Positions (ascending) of the first occurrence of every key of ``keys`` not seen before;
        remembers those keys. (On a GPU this waits for the device twice: CuPy's ``unique`` sizes
        its result, and so does finding the fresh keys.)"""
        xp = self.xp
        if keys.shape[0] == 0:
            return xp.zeros(0, dtype=xp.int64)
        uniq, first = xp.unique(keys, return_index=True)
        fresh = xp.ones(uniq.shape[0], dtype=bool)
        for run in self.runs:
            pos = xp.minimum(xp.searchsorted(run, uniq), run.shape[0] - 1)
            fresh &= run[pos] != uniq
        sel = xp.nonzero(fresh)[0]
        new = uniq[sel]
        if new.shape[0]:
            self.runs.append(new)
            self.size += int(new.shape[0])
            while len(self.runs) > 1 and self.runs[-2].shape[0] <= 2 * self.runs[-1].shape[0]:
                b, a = self.runs.pop(), self.runs.pop()
                self.runs.append(xp.sort(xp.concatenate([a, b])))
        return xp.sort(first[sel]).astype(xp.int64)

    def __len__(self) -> int:
        return self.size
