"""The search's side of the array device: copies between host and device that do not stall it
(pinned staging, copies begun at once and read later, several arrays in one transfer), CuPy's
reduction setting for search processes, and the out-of-memory errors the search halves its work
on.
"""
from __future__ import annotations

import os

import numpy as np

try:  # CuPy is optional: the GPU extras install it.
    import cupy as _cupy  # type: ignore
except Exception:  # pragma: no cover - depends on the machine
    _cupy = None


def plain_reductions() -> None:
    """Make CuPy's reductions (its reduction kernels: ``any``, ``all``, sums along an axis, ...) use
    its own kernels rather than CUB's, in this process, unless ``CUPY_ACCELERATORS`` says otherwise.
    CuPy's routine accelerators are left on: its device-wide int64 ``sum`` and ``bincount`` still
    go through CUB (without them a fresh process loads a kernel per type and operation instead,
    which makes its first search slower).

    CUB's reduction kernels are large modules that a process loads on first use, 5-16 ms each on
    an H100 (ten in a depth-2 search): a fresh process's first search would wait for them.
    """
    if _cupy is None or "CUPY_ACCELERATORS" in os.environ:
        return
    setter = getattr(_cupy._core, "set_reduction_accelerators", None)  # CuPy's own switch (v8 on)
    if setter is not None:
        setter([])


def to_host(arr) -> np.ndarray:
    """Return ``arr`` as a NumPy array (a copy from the GPU for CuPy arrays)."""
    if _cupy is not None and isinstance(arr, _cupy.ndarray):
        return _cupy.asnumpy(arr)
    return np.asarray(arr)


def to_device_async(xp, host: np.ndarray):
    """``host`` on ``xp``'s device, and what must stay referenced until the device has run past the
    copy (None on NumPy). On a GPU the copy goes through pinned memory on the current stream, so
    the host does not wait for the device's queue (a copy from pageable memory does)."""
    if xp is np:
        return host, None
    import cupyx

    pinned = cupyx.empty_pinned(host.shape, dtype=host.dtype)
    pinned[...] = host
    dev = xp.empty(host.shape, dtype=host.dtype)
    dev.set(pinned, stream=xp.cuda.get_current_stream())
    return dev, pinned


class _PinnedStage:
    """Page-locked host buffers reused by :class:`HostCopy`: one is taken while its copy is unread
    and given back once read. Sizes double, so a few buffers serve a whole search (CuPy's pinned
    pool reuses a block only for a request of the same size, and locking pages is slow)."""

    def __init__(self):
        self._free: list = []

    def take(self, nbytes: int):
        """A pinned uint8 buffer of at least ``nbytes`` bytes: the smallest free one that holds them
        (the first that did could be a large one, which the next large copy then had to lock anew)."""
        fits = [i for i, buf in enumerate(self._free) if buf.nbytes >= nbytes]
        if fits:
            return self._free.pop(min(fits, key=lambda i: self._free[i].nbytes))
        import cupyx

        return cupyx.empty_pinned(1 << max(20, (max(1, nbytes) - 1).bit_length()), dtype=np.uint8)

    def give(self, buf) -> None:
        """Hand a buffer back for later copies."""
        self._free.append(buf)


_STAGE = _PinnedStage()


# Pinned buffers a GPU search process stages before its first search (see stage_pinned): the
# first search of a fresh process otherwise spent 15-17 ms locking pages (15 cudaHostAlloc, one of
# 11.7 ms for the first level's board picks; Nsight Systems, H100, depth 2).
PINNED_STAGE_BYTES = (1 << 20,) * 4 + (1 << 24,) * 2


def stage_pinned(sizes=PINNED_STAGE_BYTES) -> None:
    """Lock the host buffers that copies from the GPU will use (once per process, as part of its
    warm-up), so that a search does not wait for page locking."""
    bufs = [_STAGE.take(n) for n in sizes]
    for buf in bufs:
        _STAGE.give(buf)


class HostCopy:
    """A device array's copy to the host, begun at once and waited for only when it is read
    (:meth:`get`, or ``np.asarray``): on a GPU the copy is queued on the current stream into
    pinned memory, so the host goes on launching work meanwhile. On NumPy it is the array."""

    def __init__(self, arr):
        self._value = self._staged = self._buffer = self._done = self._source = None
        if _cupy is not None and isinstance(arr, _cupy.ndarray):
            arr = _cupy.ascontiguousarray(arr)
            self._buffer = _STAGE.take(arr.nbytes)
            self._staged = self._buffer[:arr.nbytes].view(arr.dtype).reshape(arr.shape)
            _cupy.asnumpy(arr, out=self._staged, blocking=False)
            self._done = _cupy.cuda.get_current_stream().record()
            self._source = arr  # kept until copied
        else:
            self._value = np.asarray(arr)
        self.shape = tuple(arr.shape)

    def get(self) -> np.ndarray:
        """The host array (waits for the copy the first time)."""
        if self._value is None:
            self._done.synchronize()
            self._value = self._staged.copy()  # out of the pinned buffer, which later copies reuse
            _STAGE.give(self._buffer)
            self._staged = self._buffer = self._done = self._source = None
        return self._value

    def __array__(self, dtype=None, copy=None):
        value = self.get()
        return value if dtype is None else value.astype(dtype, copy=False)

    def __len__(self) -> int:
        return self.shape[0]


def to_host_all(*arrays) -> list:
    """NumPy copies of several arrays (any dtypes and shapes) in one transfer from the GPU (each
    wait for the device costs it its queue of work, so several small copies cost more than one).
    NumPy arrays pass through."""
    if _cupy is None or not any(isinstance(a, _cupy.ndarray) for a in arrays):
        return [np.asarray(a) for a in arrays]
    return packed_copy(_cupy, arrays)


def packed_copy(xp, arrays) -> list:
    """Host copies of ``arrays`` made through one packed buffer: their bytes are concatenated on
    ``xp``'s device, copied to the host at once, and split back into arrays of their own dtypes
    and shapes (what :func:`to_host_all` does on a GPU; on NumPy it only copies)."""
    parts = [xp.ascontiguousarray(xp.asarray(a)) for a in arrays]
    flat = xp.concatenate([p.reshape(-1).view(xp.uint8) for p in parts])
    host = _cupy.asnumpy(flat) if xp is _cupy else np.asarray(flat)
    out, at = [], 0
    for p in parts:
        out.append(host[at:at + p.nbytes].copy().view(p.dtype).reshape(p.shape))  # copy: aligned
        at += p.nbytes
    return out


def is_out_of_memory(exc: BaseException) -> bool:
    """True for an allocation failure of the array library (CuPy's OutOfMemoryError, MemoryError)."""
    return isinstance(exc, MemoryError) or type(exc).__name__ == "OutOfMemoryError"
