"""The primitives of ``solvers.primitives.tallies``: hand-checked cases, and every argument tuple
against a plain per-grid reference written here (loops over colours, objects, rows and cells).

``TALLIES_CASES`` has the layout of ``CASES`` in ``tests/test_dsl.py`` (name, args, input,
expected), which takes it in for its completeness checks; every expected grid is written out by hand.
"""
from __future__ import annotations

import math

import numpy as np

from dsl_reference import case, module_tests

MODULE = "solvers.primitives.tallies"

BARS = [[0, 2, 2, 0],
        [0, 0, 0, 0],
        [3, 3, 3, 0],
        [0, 0, 1, 0]]

DOTS = [[0, 3, 0, 0],
        [0, 0, 0, 2],
        [4, 0, 1, 0]]

TALLIES_CASES = [
    case("colour_bars", (), [[2, 2, 1], [2, 3, 1], [1, 1, 1]], [[1, 2, 3], [1, 2, 0], [1, 2, 0], [1, 0, 0], [1, 0, 0]]),
    # Ties between colours: the lower colour first.
    case("colour_bars", (), [[4, 0], [0, 2]], [[2, 4]], "colour_bars-tie"),
    # Three objects: the 1, the two 2s of the right column, the 2 bottom left.
    case("count_objects", ("row",), [[1, 0, 2], [0, 0, 2], [2, 0, 0]], [[2, 2, 2]]),
    # Two objects (the 3 touches the 1 by a corner).
    case("count_objects", ("diagonal",), [[1, 0, 0], [0, 3, 0], [0, 0, 0], [3, 3, 0]], [[3, 0], [0, 3]]),
    case("sort_bars", ("right",), BARS, [[0, 0, 0, 0], [0, 0, 0, 1], [0, 0, 2, 2], [0, 3, 3, 3]]),
    case("sort_bars", ("left",), BARS, [[0, 0, 0, 0], [1, 0, 0, 0], [2, 2, 0, 0], [3, 3, 3, 0]]),
    case("gather_dots", ("rows", False), DOTS, [[3, 2], [4, 1]]),
    case("gather_dots", ("columns", False), DOTS, [[4, 3], [1, 2]]),
    case("gather_dots", ("rows", True), DOTS, [[3, 2], [1, 4]]),
    case("gather_dots", ("columns", True), [[0, 5, 0, 6, 0], [1, 0, 7, 0, 2]], [[1, 5, 7], [0, 2, 6], [0, 0, 0]]),
    # The 3s enclose the middle background cell; the 2 touches no enclosed cell.
    case("colour_cell", ("enclosing",), [[3, 3, 3, 0], [3, 0, 3, 2], [3, 3, 3, 0]], [[3]]),
    # 1 is the rarest colour; the cells next to its two cells: three 4s, three 6s (ties: the lower).
    case("colour_cell", ("around_rarest",), [[4, 4, 6, 6], [4, 1, 6, 1], [4, 4, 0, 6]], [[4]]),
]

NO_RESULT = [
    case("colour_bars", (), [[0, 0], [0, 0]], None, "colour_bars-empty"),
    case("colour_bars", (), [[1] * 31 + [2]], None, "colour_bars-past-30"),
    case("colour_bars", (), [[1, 1], [0, 1]], None, "colour_bars-one-colour"),
    case("count_objects", ("row",), [[0, 0], [0, 0]], None, "count_objects-none"),
    case("count_objects", ("diagonal",), [[1, 0], [0, 2]], None, "count_objects-one"),
    case("sort_bars", ("right",), [[1, 0, 1], [0, 0, 0]], None, "sort_bars-broken-run"),
    case("sort_bars", ("left",), [[1, 2, 0], [0, 0, 0]], None, "sort_bars-two-colours"),
    case("sort_bars", ("left",), [[0, 0], [1, 1]], None, "sort_bars-one-bar"),
    case("gather_dots", ("rows", False), [[1, 1], [0, 0]], None, "gather_dots-touching"),
    case("gather_dots", ("rows", True), [[0, 0], [0, 4]], None, "gather_dots-one"),
    case("colour_cell", ("enclosing",), [[3, 3], [3, 0]], None, "colour_cell-nothing-enclosed"),
    case("colour_cell", ("around_rarest",), [[5, 5], [5, 0]], None, "colour_cell-one-colour"),
    case("colour_cell", ("around_rarest",), [[5, 0, 2], [5, 0, 2]], None, "colour_cell-rarest-alone"),
]


def ref_colour_bars(grid):
    counts = np.bincount(grid.ravel(), minlength=10)
    colours = sorted((c for c in range(1, 10) if counts[c]), key=lambda c: (-counts[c], c))
    if len(colours) < 2 or counts[colours[0]] > 30:
        return None
    out = np.zeros((counts[colours[0]], len(colours)), dtype=grid.dtype)
    for j, c in enumerate(colours):
        out[:counts[c], j] = c
    return out


def _objects(grid):
    """The number of 8-connected groups of non-zero cells (a plain flood fill)."""
    h, w = grid.shape
    seen = np.zeros((h, w), dtype=bool)
    m = 0
    for r in range(h):
        for c in range(w):
            if grid[r, c] and not seen[r, c]:
                m += 1
                stack = [(r, c)]
                seen[r, c] = True
                while stack:
                    y, x = stack.pop()
                    for dy in (-1, 0, 1):
                        for dx in (-1, 0, 1):
                            yy, xx = y + dy, x + dx
                            if 0 <= yy < h and 0 <= xx < w and grid[yy, xx] and not seen[yy, xx]:
                                seen[yy, xx] = True
                                stack.append((yy, xx))
    return m


def ref_count_objects(grid, shape):
    m = _objects(grid)
    if not 2 <= m <= 30:
        return None
    counts = np.bincount(grid.ravel(), minlength=10)[1:]
    colour = counts.argmax() + 1
    if shape == "row":
        return np.full((1, m), colour, dtype=grid.dtype)
    return (np.eye(m, dtype=grid.dtype) * colour).astype(grid.dtype)


def ref_sort_bars(grid, side):
    h, w = grid.shape
    bars = []
    for row in grid:
        cols = [c for c in range(w) if row[c]]
        if cols and (cols[-1] - cols[0] + 1 != len(cols) or len({int(row[c]) for c in cols}) != 1):
            return None
        bars.append((len(cols), int(row[cols[0]]) if cols else 0))
    if sum(b[0] > 0 for b in bars) < 2:
        return None
    out = np.zeros_like(grid)
    for r, (n, c) in enumerate(sorted(bars, key=lambda b: b[0])):
        if n:
            if side == "right":
                out[r, w - n:] = c
            else:
                out[r, :n] = c
    return out


def ref_gather_dots(grid, order, snake):
    h, w = grid.shape
    for r in range(h):
        for c in range(w):
            if grid[r, c] and ((r + 1 < h and grid[r + 1, c]) or (c + 1 < w and grid[r, c + 1])):
                return None
    cells = [(r, c) for r in range(h) for c in range(w) if grid[r, c]]
    if order == "columns":
        cells.sort(key=lambda rc: (rc[1], rc[0]))
    k = len(cells)
    if k < 2:
        return None
    s = math.isqrt(k - 1) + 1
    out = np.zeros((s, s), dtype=grid.dtype)
    for i, (r, c) in enumerate(cells):
        y, x = divmod(i, s)
        if snake and y % 2:
            x = s - 1 - x
        out[y, x] = grid[r, c]
    return out


def _enclosed(grid):
    """Background cells that cannot reach the border through background (4-connected)."""
    h, w = grid.shape
    out = np.zeros((h, w), dtype=bool)
    stack = [(r, c) for r in range(h) for c in range(w) if (r in (0, h - 1) or c in (0, w - 1)) and grid[r, c] == 0]
    seen = set(stack)
    while stack:
        r, c = stack.pop()
        for rr, cc in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
            if 0 <= rr < h and 0 <= cc < w and grid[rr, cc] == 0 and (rr, cc) not in seen:
                seen.add((rr, cc))
                stack.append((rr, cc))
    for r in range(h):
        for c in range(w):
            out[r, c] = grid[r, c] == 0 and (r, c) not in seen
    return out


def ref_colour_cell(grid, rule):
    h, w = grid.shape
    counts = np.bincount(grid.ravel(), minlength=10)
    if rule == "enclosing":
        src, rare = _enclosed(grid), 0
    else:
        colours = [c for c in range(1, 10) if counts[c]]
        if len(colours) < 2:
            return None
        rare = min(colours, key=lambda c: (counts[c], c))
        src = grid == rare
    votes = [0] * 10
    for r in range(h):
        for c in range(w):
            if any(0 <= rr < h and 0 <= cc < w and src[rr, cc]
                   for rr, cc in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1))):
                votes[int(grid[r, c])] += 1
    votes[0] = votes[rare] = 0
    if max(votes) == 0:
        return None
    return np.array([[votes.index(max(votes))]], dtype=grid.dtype)


REFERENCES = {"colour_cell": ref_colour_cell, "colour_bars": ref_colour_bars, "count_objects": ref_count_objects,
              "sort_bars": ref_sort_bars, "gather_dots": ref_gather_dots}
globals().update(module_tests(MODULE, REFERENCES, TALLIES_CASES, NO_RESULT, cells=[0, 0, 0, 1, 2, 5],
                            padded_grids=[[[1, 0, 1], [0, 2, 0]], [[0, 0], [0, 0], [0, 0]], [[3] * 8] * 4,
                                          [[0, 4, 4], [0, 0, 0], [6, 0, 0], [0, 0, 0]]], examples=300))
