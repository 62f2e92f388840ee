"""Single-grid face of the DSL: one plain function per primitive, for programs and solvers.

``from solvers.dsl import *`` gives every primitive as ``name(grid, *args) -> grid`` on 2-D NumPy
(or CuPy) arrays. Each call runs the batched primitive on a batch of one, so found programs,
validation and exported solvers use exactly the code the search used. A primitive with no result
for the grid raises ``ValueError``.
"""
from __future__ import annotations

import numpy as np

from solvers.batch import as_parts
from solvers.registry import PRIMITIVES, Transform
from solvers.primitives import transforms
from solvers.xp import namespace_of

transforms()  # registers all primitives


def _single(prim):
    def call(grid, *args):
        arr = grid if hasattr(grid, "ndim") else np.asarray(grid, dtype=np.uint8)
        if arr.ndim != 2:
            raise ValueError(f"{prim.name}: expected a 2-D grid, got shape {arr.shape}")
        xp = namespace_of(arr)
        parts = as_parts(xp, Transform(prim, args)(xp, arr.astype(xp.uint8)[None]), 1)
        for _, out in parts:
            return xp.ascontiguousarray(out[0])
        raise ValueError(f"{prim.name}: no result for a {arr.shape[0]}x{arr.shape[1]} grid")

    call.__name__ = prim.name
    call.__qualname__ = prim.name
    call.__doc__ = prim.doc
    return call


__all__ = sorted(PRIMITIVES)
globals().update({name: _single(PRIMITIVES[name]) for name in __all__})
