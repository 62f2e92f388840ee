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
        picks: list = []
        later: list = []  # the implausible predictions, in order
        for outputs in ranked_outputs:
            if len(picks) == 2:
                break
            grid = plain_grid(outputs[j]) if j < len(outputs) else []
            if not grid or grid in picks:
                continue
            (picks if plausible is None or plausible(j, grid) else later).append(grid)
        for grid in later:
            if len(picks) == 2:
                break
            if grid not in picks:
                picks.append(grid)
        fallback = [list(map(int, row)) for row in test_input]
        if len(picks) < 2 and fallback not in picks:
            picks.append(fallback)
        if len(picks) < 2:
            picks.append(picks[0])
        out.append({"attempt_1": picks[0], "attempt_2": picks[1]})
    return out
