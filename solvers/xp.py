"""The array namespace: one DSL, written once, runs on NumPy or CuPy.

Every primitive receives ``xp`` (the module: ``numpy`` or ``cupy``) and uses only operations that
both provide. The few things that differ (connected-component labelling lives in
``scipy.ndimage`` vs ``cupyx.scipy.ndimage``; moving arrays to the host) are wrapped here.
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


def to_host(arr) -> np.ndarray:
    """Return ``arr`` as a NumPy array (a copy from the GPU for CuPy arrays)."""
    if _cupy is not None and isinstance(arr, _cupy.ndarray):
        return _cupy.asnumpy(arr)
    return np.asarray(arr)


def ndimage(xp):
    """The ``ndimage`` module that matches ``xp`` (scipy's for NumPy, cupyx's for CuPy)."""
    if xp is np:
        import scipy.ndimage as nd
        return nd
    import cupyx.scipy.ndimage as nd  # type: ignore
    return nd
