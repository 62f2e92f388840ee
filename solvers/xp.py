"""The array namespace: one DSL, written once, runs on NumPy or CuPy.

Every primitive receives ``xp`` (the module: ``numpy`` or ``cupy``) and uses only operations that
both provide. The few things that differ (connected-component labelling lives in
``scipy.ndimage`` vs ``cupyx.scipy.ndimage``) are wrapped here.
"""
from __future__ import annotations

import numpy as np

try:  # CuPy is optional: the GPU extras install it.
    import cupy as _cupy  # type: ignore
except Exception:  # pragma: no cover - depends on the machine
    _cupy = None


def namespace_of(arr):
    """Return ``numpy`` or ``cupy``: the array module that owns ``arr``."""
    if _cupy is not None and isinstance(arr, _cupy.ndarray):
        return _cupy
    return np


def data_address(arr) -> int:
    """The address of the first element of ``arr`` (host or device memory)."""
    if _cupy is not None and isinstance(arr, _cupy.ndarray):
        return int(arr.data.ptr)
    return int(arr.__array_interface__["data"][0])


def ndimage(xp):
    """The ``ndimage`` module that matches ``xp`` (scipy's for NumPy, cupyx's for CuPy)."""
    if xp is np:
        import scipy.ndimage as nd
        return nd
    import cupyx.scipy.ndimage as nd  # type: ignore
    return nd


def cummax(xp, a, axis: int):
    """Running maximum along ``axis``: NumPy's ``maximum.accumulate``; on CuPy, whose ufuncs have
    no ``accumulate``, log-step doubling (ceil(log2(length)) elementwise maxima), which gives the
    same values.
    """
    if xp is np:
        return np.maximum.accumulate(a, axis=axis)
    return cummax_doubling(xp, a, axis)


def cummax_doubling(xp, a, axis: int):
    """Running maximum along ``axis`` by log-step doubling (what :func:`cummax` runs on CuPy)."""
    a = xp.moveaxis(a, axis, -1).copy()
    n, k = a.shape[-1], 1
    while k < n:
        a[..., k:] = xp.maximum(a[..., k:], a[..., :-k])  # the ufunc writes a new array first
        k *= 2
    return xp.moveaxis(a, -1, axis)


def stable_argsort(xp, a, axis: int = -1):
    """Stable argsort along ``axis`` (ties keep their order) on NumPy and CuPy alike."""
    if xp is np:
        return np.argsort(a, axis=axis, kind="stable")
    return xp.argsort(a, axis=axis)  # CuPy's sort is a stable radix/merge sort


def repeat_index(xp, counts, total: int | None = None):
    """``[0]*counts[0] + [1]*counts[1] + ...`` as an int64 array (``repeat`` with an array of counts,
    which CuPy's ``repeat`` does not take)."""
    counts = xp.asarray(counts, dtype=xp.int64)
    if total is None:
        total = int(counts.sum()) if counts.shape[0] else 0
    if xp is np:
        return np.repeat(np.arange(counts.shape[0], dtype=np.int64), counts)
    ends = xp.cumsum(counts)
    return xp.searchsorted(ends, xp.arange(total, dtype=xp.int64), side="right").astype(xp.int64)


def repeat_values(xp, values, counts, total: int | None = None):
    """``values[i]`` repeated ``counts[i]`` times, in order (``repeat`` with an array of counts,
    which CuPy's ``repeat`` does not take); ``total``: the counts' sum, when known."""
    if xp is np:
        return np.repeat(values, counts)
    return values[repeat_index(xp, counts, total)]


def run_positions(xp, run_starts, lengths, total: int, source_size: int):
    """The positions of runs laid end to end: run ``i`` gives ``run_starts[i]``,
    ``run_starts[i] + 1``, ... (``lengths[i]`` of them), an index into a buffer of ``source_size``
    elements. Int32 where every position fits, which halves the index's memory traffic.
    """
    dtype = xp.int32 if max(total, source_size) < 2**31 else xp.int64
    lengths = xp.asarray(lengths, dtype=xp.int64)
    ends = xp.cumsum(lengths)
    delta = (xp.asarray(run_starts, dtype=xp.int64) - (ends - lengths)).astype(dtype)
    index = repeat_values(xp, delta, lengths, total)
    index += xp.arange(total, dtype=dtype)
    return index


def scatter_min(xp, out, index, values) -> None:
    """``out[i] = min(out[i], v)`` for every pair of ``index`` and ``values``, repeated indices
    included, in place (NumPy's ``minimum.at``, ``cupyx.scatter_min``; CuPy takes int32, uint32,
    uint64 and floats, not int64)."""
    if xp is np:
        np.minimum.at(out, index, values)
    else:
        import cupyx
        cupyx.scatter_min(out, index, values)


def scatter_max(xp, out, index, values) -> None:
    """``out[i] = max(out[i], v)`` for every pair of ``index`` and ``values`` (see
    :func:`scatter_min`)."""
    if xp is np:
        np.maximum.at(out, index, values)
    else:
        import cupyx
        cupyx.scatter_max(out, index, values)
