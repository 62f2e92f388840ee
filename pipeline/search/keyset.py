"""A set of 64-bit state keys kept as sorted runs on the array device (NumPy or CuPy).

Deduplication of millions of states per level stays vectorised and on the GPU: a batch is
uniqued with ``unique``, tested against each sorted run with ``searchsorted``, and appended as a
new run; runs of similar size are merged (log-structured), so the cost stays O(n log n) overall.
On a GPU (with the kernels of ``pipeline.search.kernels``) the keys are a hash table on the device
instead (:class:`HashKeySet`): a batch is two kernels and one wait for the device, where the
sorted runs take dozens of launches and several waits. Both give the same positions.
"""
from __future__ import annotations

from pipeline.search import kernels
from pipeline.search.device import is_out_of_memory

from solvers import kernels as dsl_kernels


def key_set(xp, free_memory=None):
    """An empty set of keys for the array library ``xp``: a device hash table where the CUDA
    kernels run (``free_memory``: called before it retries a growth that ran out of device
    memory), else sorted runs."""
    return HashKeySet(xp, free_memory=free_memory) if dsl_kernels.enabled(xp) else KeySet(xp)


def first_positions(xp, keys):
    """For each position of the uint64 array ``keys``, the first position holding the same key
    (int64): a hash table on a GPU with the kernels, else a sort (``unique``)."""
    if dsl_kernels.enabled(xp):
        return kernels.first_positions(xp, keys)
    if keys.shape[0] == 0:
        return xp.zeros(0, dtype=xp.int64)
    _, first, inverse = xp.unique(keys, return_index=True, return_inverse=True)
    return first[inverse.reshape(-1)].astype(xp.int64)


class KeySet:
    """Keys seen so far; :meth:`add_new` says where a batch's new keys first occur."""

    def __init__(self, xp):
        self.xp = xp
        self.runs: list = []
        self.size = 0

    def add_new(self, keys, use=None):
        """Positions (ascending) of the first occurrence of every key of ``keys`` not seen before;
        remembers those keys. With the bool mask ``use``, only the positions where it holds count.
        (On a GPU this waits for the device twice: CuPy's ``unique`` sizes its result, and so does
        finding the fresh keys; a mask adds a third.)"""
        xp = self.xp
        if use is not None:
            cand = xp.nonzero(use)[0]
            return cand[self.add_new(keys[cand])]
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


class HashKeySet:
    """:class:`KeySet` as one open-addressing hash table on the device (see the ``key_insert``
    kernel): each slot holds a key and the smallest ``batch << 40 | position`` that inserted it,
    so a batch's new keys are those whose slot holds this batch's tag, at their first position.
    The table doubles (rehashed on the device) to stay at most three quarters full: 16 bytes a
    slot, 21 to 43 bytes a key. Where doubling runs out of device memory even after
    ``free_memory``, it goes on fuller (up to ``MAX_LOAD``; probes get longer), then raises."""

    POSITION_BITS = 40  # a batch has fewer than 2**40 keys
    MAX_LOAD = 0.9

    def __init__(self, xp, slots: int = 1 << 10, free_memory=None):
        self.xp = xp
        self.size = 0
        self.batches = 0
        self.mask = 0
        self.keys = self.vals = None
        self.free_memory = free_memory or (lambda: None)
        self._grow(slots)

    def _grow(self, slots: int) -> None:
        xp = self.xp
        keys = xp.full(slots + 1, kernels.KEY_EMPTY, dtype=xp.uint64)
        vals = xp.full(slots + 1, kernels.KEY_EMPTY, dtype=xp.uint64)
        if self.keys is not None:
            kernels.rehash_keys(xp, self.keys, self.vals, keys, vals, slots - 1)
        self.keys, self.vals, self.mask = keys, vals, slots - 1

    def _reserve(self, keys: int) -> None:
        """Room for ``keys`` keys: at most three quarters full, or ``MAX_LOAD`` where device
        memory allows no more."""
        slots = self.mask + 1
        while 4 * keys > 3 * slots:
            slots *= 2
        if slots == self.mask + 1:
            return
        for attempt in range(2):
            try:
                self._grow(slots)
                return
            except Exception as exc:
                if not is_out_of_memory(exc):
                    raise
                if attempt == 0:
                    self.free_memory()
        if keys > self.MAX_LOAD * (self.mask + 1):
            raise MemoryError(f"key table: no device memory to grow to {slots} slots "
                              f"({16 * slots / 2**30:.1f} GiB) for {keys} keys")

    def add_new(self, keys, use=None):
        """Positions (ascending) of the first occurrence of every key of ``keys`` not seen before;
        remembers those keys. With the bool mask ``use``, only the positions where it holds count
        (in the kernels: no wait for the device to pick them). (Waits for the device once, to size
        the result.)"""
        first = self.insert(keys, use)
        pos = self.xp.nonzero(first)[0].astype(self.xp.int64, copy=False)
        self.size += int(pos.shape[0])
        return pos

    def insert(self, keys, use=None):
        """:meth:`add_new` without the wait: a bool per position, true at the positions it would
        give. The caller adds their count to :attr:`size` before the next insertion."""
        xp = self.xp
        n = int(keys.shape[0])
        if n == 0:
            return xp.zeros(0, dtype=bool)
        if n >= 1 << self.POSITION_BITS:
            raise ValueError(f"a batch of at most 2**{self.POSITION_BITS} keys, got {n}")
        self._reserve(self.size + n)
        self.batches += 1
        if self.batches >= 1 << (64 - self.POSITION_BITS):
            raise RuntimeError("key table: too many batches for its tags")
        return kernels.first_new_keys(xp, keys, self.keys, self.vals, self.mask,
                                      self.batches << self.POSITION_BITS, use)

    def __len__(self) -> int:
        return self.size

