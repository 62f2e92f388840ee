"""The primitives of ``solvers.primitives.reach``: hand-checked cases, and every argument tuple
against a plain per-grid reference written here.

``REACH_CASES`` has the layout of ``CASES`` in ``tests/test_dsl.py`` (name, args, input, expected),
which takes it in for its completeness checks; every expected grid is written out by hand.
"""
from __future__ import annotations

import numpy as np

from dsl_reference import case, module_tests, reference_objects

MODULE = "solvers.primitives.reach"

# A 2 x 2 block of 3; single cells: a 1 facing it from the right, a 6 facing it from below, a 6
# and a 1 facing nothing.
DOTS = [[1, 0, 0, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 0, 6],
        [0, 0, 3, 3, 0, 0, 1],
        [0, 0, 3, 3, 0, 0, 0],
        [0, 0, 0, 0, 0, 0, 0],
        [0, 0, 6, 0, 0, 0, 0]]

REACH_CASES = [
    case("dot_rays", (), DOTS,
         [[1, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 6], [0, 0, 3, 3, 1, 1, 1], [0, 0, 3, 3, 0, 0, 0],
          [0, 0, 6, 0, 0, 0, 0], [0, 0, 6, 0, 0, 0, 0]]),
    # The 2 draws to the 5 bar; the 4 faces only the 2, another single cell: no ray.
    case("dot_rays", (), [[2, 0, 0, 5, 5], [0, 0, 0, 0, 0], [4, 0, 0, 0, 0]],
         [[2, 2, 2, 5, 5], [0, 0, 0, 0, 0], [4, 0, 0, 0, 0]], "dot_rays-single-cells-are-no-anchors"),
]


def _labels8(grid):
    """Same-colour 8-connected object sizes, per cell (0 on the background)."""
    size = np.zeros(grid.shape, dtype=int)
    for cells in reference_objects(grid, diagonal=True, one_colour=True):
        for y, x in cells:
            size[y, x] = len(cells)
    return size


def ref_dot_rays(grid):
    h, w = grid.shape
    dot = _labels8(grid) == 1
    out = grid.copy()
    for vertical in (True, False):
        lines = range(w) if vertical else range(h)
        for i in lines:
            line = grid[:, i] if vertical else grid[i, :]
            kind = dot[:, i] if vertical else dot[i, :]
            filled = [j for j in range(len(line)) if line[j]]
            for a, b in zip(filled, filled[1:]):
                if kind[a] != kind[b]:
                    colour = line[a] if kind[a] else line[b]
                    for j in range(a + 1, b):
                        cell = (j, i) if vertical else (i, j)
                        if out[cell] == 0:
                            out[cell] = colour
    return out


REFERENCES = {"dot_rays": ref_dot_rays}
globals().update(module_tests(MODULE, REFERENCES, REACH_CASES, cells=[0, 0, 0, 0, 1, 2, 3],
                            padded_grids=[DOTS, [[0, 1, 0, 0], [1, 0, 0, 2], [1, 1, 0, 0]], [[0, 1, 0], [1, 0, 0]], [[2, 0, 0, 2]], [[0]]], examples=300))
