"""A DSL of misbehaving primitives for the validation pool's tests.

The pool runs only straight-line solvers that call DSL names (``ValidationPool(dsl=...)``), so the
hostile behaviours that its kills, caps and timeouts contain are offered here as primitives: a real
segfault, a real ``os._exit``, a real blocked C call. Nothing here is a stand-in: each function
does the harmful thing in the worker process.
"""
from __future__ import annotations

import ctypes
import os
import select
import signal
import time

import numpy as np


def endless_loop(g):
    """Loop in Python forever."""
    while True:
        pass


def sleep_alarm_masked(g):
    """Block SIGALRM, then sleep in C for 100 s."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    time.sleep(100)
    return g


def select_alarm_masked(g):
    """Block SIGALRM, then wait in select() for 100 s."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    select.select([], [], [], 100)
    return g


def sleep_all_masked(g):
    """Block SIGALRM and SIGTERM, then sleep for 100 s."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM, signal.SIGTERM})
    time.sleep(100)
    return g


def bytearray_gb(g, n):
    """Allocate ``n`` GiB as a bytearray."""
    return bytearray(n * 2**30) and g


def numpy_gb(g, n):
    """Allocate ``n`` GiB as a NumPy array."""
    return np.ones(n * 2**30, dtype=np.uint8) is not None and g


def segfault(g):
    """Read address 0."""
    ctypes.string_at(0)
    return g


def exit_with(g, code):
    """End the process with ``code`` at once."""
    os._exit(code)


def divide_by_zero(g):
    """Raise ZeroDivisionError."""
    return 1 / (len(g) * 0)


def ones(g):
    """A grid of ones of the same shape."""
    return np.asarray(g) * 0 + 1


def text(g):
    """Return a string."""
    return "abc"


def cube(g):
    """Return a 3-D list."""
    return [[[1, 2]]]


def colour_12(g):
    """Return a grid with colour 12."""
    return [[12]]


def index_99(g):
    """Index past the end."""
    return g[99]


def zero_unless_two_rows(g):
    """The grid itself if it has two rows, else zeros."""
    return g if g.shape[0] == 2 else g * 0


def fail_on_one_row(g):
    """Raise on grids of one row."""
    if g.shape[0] == 1:
        raise ValueError("no result")
    return g


def paint_corner(g):
    """Write colour 9 into the input itself."""
    g[0, 0] = 9
    return g


def as_int64(g):
    """The grid as int64."""
    return g.astype(np.int64)


def blas_threads(g):
    """The grid, after checking that BLAS runs here with one thread (raises otherwise)."""
    from threadpoolctl import threadpool_info

    counts = [pool["num_threads"] for pool in threadpool_info()]
    if any(n != 1 for n in counts):
        raise RuntimeError(f"numeric thread pools of {counts} threads")
    a = np.ones((256, 256))
    return g if float((a @ a)[0, 0]) == 256.0 else g * 0


__all__ = [name for name in list(globals()) if not name.startswith("_") and callable(globals()[name])
           and globals()[name].__module__ == __name__]
