"""Analyses of a stack shared by the transforms applied to it (labellings, colour counts, ...).

The search applies about 130 transforms to the same size-bucket stacks of a block; many of them
start from the same analysis of the stack: about 18 label its objects (with only four kinds of
labelling), ten colour transforms need its enclosed background, a dozen its colour counts. Inside
a :func:`scope` (the search opens one per block), :func:`per_stack` makes each analysis once per
stack and kind. Stacks analysed inside a scope must not change while it lasts (the search's never
do); the scope holds a reference to each, so no other array can take its memory meanwhile.
"""
from __future__ import annotations

import contextlib

from solvers.xp import data_address

# Analyses made inside the current scope, by stack and kind (None: no scope is open).
_SHARED: dict | None = None


@contextlib.contextmanager
def scope():
    """Within this scope, :func:`per_stack` computes each analysis of a stack once."""
    global _SHARED
    outer, _SHARED = _SHARED, {}
    try:
        yield
    finally:
        _SHARED = outer


def forget() -> None:
    """Drop the analyses kept by the current scope (to free memory, e.g. after out-of-memory)."""
    if _SHARED is not None:
        _SHARED.clear()


def per_stack(g, kind: tuple, compute):
    """``compute()``, made once per stack ``g`` and ``kind`` inside a :func:`scope` (every call
    outside one computes). Callers must not modify what it returns."""
    if _SHARED is None:
        return compute()
    key = (data_address(g), g.shape, g.strides, g.dtype.str) + kind
    if key not in _SHARED:
        _SHARED[key] = (g, compute())
    return _SHARED[key][1]
