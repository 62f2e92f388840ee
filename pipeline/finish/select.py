"""Selecting two attempts per test input from the ranked predictions of a task."""
from __future__ import annotations

from pipeline.finish.program import plain_grid


def choose_attempts(ranked_outputs: list, test_inputs: list, plausible=None) -> list[dict]:
    """Two attempts per test input, never empty.

    ``ranked_outputs`` is a list (best first) of per-program predictions: each a sequence with one
    grid per test input (a list of rows, or a 2-D NumPy array: only those looked at become lists).
    ``plausible(j, grid)``, when given, says whether a grid is a plausible output for test input
    ``j`` (:class:`pipeline.finish.plausible.Plausibility`): for each test input the plausible
    predictions come first, in their order, then the others. The first two distinct grids are
    taken; if fewer exist, the test input itself fills in (a common identity answer), and as a
    last resort the first attempt is repeated.
    """
    out = []
    for j, test_input in enumerate(test_inputs):
        grids = [outputs[j] for outputs in ranked_outputs if j < len(outputs)]
        if plausible is not None:
            ok = [plausible(j, g) for g in grids]
            grids = [g for g, k in zip(grids, ok) if k] + [g for g, k in zip(grids, ok) if not k]
        picks: list = []
        for grid in map(plain_grid, grids):
            if grid and grid not in picks:
                picks.append(grid)
            if len(picks) == 2:
                break
        fallback = [list(map(int, row)) for row in test_input]
        if len(picks) < 2 and fallback not in picks:
            picks.append(fallback)
        if len(picks) < 2:
            picks.append(picks[0])
        out.append({"attempt_1": picks[0], "attempt_2": picks[1]})
    return out
