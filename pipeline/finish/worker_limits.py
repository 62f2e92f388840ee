"""What a validation worker may use: one thread per numeric library and a memory cap.

A worker runs one solver at a time on grids of at most 30x30 cells, so it never gains from the
thread pools that OpenBLAS, OpenMP, MKL and numexpr start by default with one thread per core.
Those pools are what broke workers on many-core hosts: with 64 cores each worker started 64 BLAS
threads, each with its own buffers, inside the worker's address-space cap, and OpenBLAS failed
("Memory allocation still failed") in the middle of ordinary solvers. The libraries read their
thread counts when they load, so the counts must be in the worker's environment before NumPy is
imported there: :func:`worker_environment` gives them, and the pool puts them into the environment
that its spawned workers inherit.

The memory cap is sized from what a solver needs, not from the machine: its grids and a few
intermediate arrays take kilobytes; :data:`SOLVER_MEMORY_MB` above the worker's own footprint after
its imports leaves room for the DSL's largest intermediates (object masks of a 30x30 grid) with a
wide margin, and still stops a runaway allocation long before it hurts the host.
"""
from __future__ import annotations

import os

#: Address space a worker may add above its footprint after imports (the cap of ``RLIMIT_AS``).
SOLVER_MEMORY_MB = 2048

_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                     "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


def worker_environment() -> dict:
    """Environment variables that pin a worker's numeric thread pools to one thread.

    ``MALLOC_ARENA_MAX`` keeps glibc from reserving an arena of address space per thread, which
    counts against the cap without being used.
    """
    env = {name: "1" for name in _THREAD_VARIABLES}
    env["MALLOC_ARENA_MAX"] = "2"
    return env


def pin_worker_threads() -> None:
    """Put :func:`worker_environment` into this process's environment, which spawned workers inherit.

    This process's own libraries are loaded already and keep their pools; processes it starts
    later (search shards, one per core) get one thread per library too, which is what they need.
    """
    os.environ.update(worker_environment())
