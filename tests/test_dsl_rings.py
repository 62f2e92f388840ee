"""The primitives of ``solvers.primitives.rings``: hand-checked cases, and every argument tuple
against a plain per-grid reference written here.

``RINGS_CASES`` has the layout of ``CASES`` in ``tests/test_dsl.py`` (name, args, input, expected),
which takes it in for its completeness checks; every expected grid is written out by hand.
"""
from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsl_reference import case, check_against_reference, stacks, module_tests
from solvers.primitives import transforms

MODULE = "solvers.primitives.rings"

RINGS = [[1, 1, 1, 1, 1],
         [1, 2, 2, 2, 1],
         [1, 2, 3, 2, 1],
         [1, 2, 2, 2, 1],
         [1, 1, 1, 1, 1]]

RINGS_CASES = [
    case("ring_colours", ("reverse",), RINGS,
         [[3, 3, 3, 3, 3], [3, 2, 2, 2, 3], [3, 2, 1, 2, 3], [3, 2, 2, 2, 3], [3, 3, 3, 3, 3]]),
    case("ring_colours", ("inward",), RINGS,
         [[3, 3, 3, 3, 3], [3, 1, 1, 1, 3], [3, 1, 2, 1, 3], [3, 1, 1, 1, 3], [3, 3, 3, 3, 3]]),
    case("ring_colours", ("outward",), RINGS,
         [[2, 2, 2, 2, 2], [2, 3, 3, 3, 2], [2, 3, 1, 3, 2], [2, 3, 3, 3, 2], [2, 2, 2, 2, 2]]),
    # A 4 x 5 grid: two rings, the inner one a 2 x 3 block.
    case("ring_colours", ("reverse",), [[1, 1, 1, 1, 1], [1, 2, 2, 2, 1], [1, 2, 2, 2, 1], [1, 1, 1, 1, 1]],
         [[2, 2, 2, 2, 2], [2, 1, 1, 1, 2], [2, 1, 1, 1, 2], [2, 2, 2, 2, 2]], "ring_colours-not-square"),
]

NO_RESULT = [
    case("ring_colours", ("reverse",), [[1, 2], [2, 1]], None, "ring_colours-not-rings"),
    case("ring_colours", ("inward",), [[4, 4, 4]], None, "ring_colours-one-ring"),
]


def ref_ring_colours(grid, order):
    h, w = grid.shape
    rings = (min(h, w) + 1) // 2
    depth = [[min(r, c, h - 1 - r, w - 1 - c) for c in range(w)] for r in range(h)]
    if rings < 2 or any(grid[r, c] != grid[depth[r][c], depth[r][c]] for r in range(h) for c in range(w)):
        return None
    out = grid.copy()
    for r in range(h):
        for c in range(w):
            d = depth[r][c]
            src = {"reverse": rings - 1 - d, "outward": (d + 1) % rings, "inward": (d - 1) % rings}[order]
            out[r, c] = grid[src, src]
    return out


REFERENCES = {"ring_colours": ref_ring_colours}
globals().update(module_tests(MODULE, REFERENCES, RINGS_CASES, NO_RESULT, cells=[1, 2],
                            padded_grids=[RINGS, [row[1:4] for row in RINGS[1:4]], [[5, 5, 5, 5], [5, 6, 6, 5], [5, 5, 5, 5]], [[1, 2], [2, 1]]], examples=200))
MODULE_TRANSFORMS = [t for t in transforms() if t.primitive.fn.__module__ == MODULE]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(t=st.sampled_from(MODULE_TRANSFORMS), stack=stacks([0, 1, 2, 3]))
def test_batched_primitive_matches_the_reference_on_ring_grids(t, stack):
    """Grids made of rings (each ring the colour drawn for its diagonal cell)."""
    for i, grid in enumerate(stack):
        h, w = grid.shape
        d = np.minimum.outer(np.minimum(np.arange(h), h - 1 - np.arange(h)),
                             np.minimum(np.arange(w), w - 1 - np.arange(w)))
        stack[i] = grid[d, d]
    check_against_reference(t, stack, REFERENCES[t.name])
