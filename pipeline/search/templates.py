"""Templates: a task's train outputs offered as constant grids.

Some tasks' outputs repeat one picture (a frame, a board) that the input only marks up, or pick
one of a few grids the examples show. Where every train output has one shape, they give candidate
programs of one call, ``constant(I, grid)`` (:func:`solvers.dsl.constant`), to layered composition
(:mod:`pipeline.search.layers`): the cells all train outputs agree on as a piece (a layer right
wherever it paints), each distinct train output as a bottom layer; and where one train output is
that of more than one pair, it is an answer of its own, fitted and ranked like the search's programs.
"""
from __future__ import annotations

import numpy as np

from pipeline.finish.program import FoundProgram
from pipeline.search.scoring import ACC_SCALE, SOLVED_RANK


def template_pieces(task) -> list:
    """The chain of the non-zero cells that ``task``'s train outputs all share (0 elsewhere), as a
    list of one; none where the outputs differ in shape or share no such cell."""
    distinct = _distinct_outputs(task)
    if len(distinct) < 2:
        return []
    first = distinct[0]
    shared = np.where(np.logical_and.reduce([o == first for o in distinct[1:]]), first, 0).astype(np.uint8)
    return [_chain(shared)] if shared.any() else []


def template_chains(task) -> list:
    """The chains ``(("constant", (grid,)),)`` of ``task``'s distinct train outputs, in order, with
    ``grid`` a tuple of rows of ints; none where the train outputs differ in shape."""
    return [_chain(grid) for grid in _distinct_outputs(task)]


def template_programs(task) -> list:
    """The programs of ``task``'s templates that are the output of more than one train pair,
    most pairs first: ranked like the search's (solved where every train output is the template,
    else by exact pairs and cell accuracy)."""
    found = []
    outputs = task.train_outputs
    for grid in _distinct_outputs(task):
        exact = sum(bool((o == grid).all()) for o in outputs)
        if exact < 2:
            continue
        acc = sum(int((o == grid).sum()) * ACC_SCALE // o.size for o in outputs)
        score = (exact * ACC_SCALE + acc) / (len(outputs) * ACC_SCALE)
        solved = exact == len(outputs)
        rank = SOLVED_RANK - 1 if solved else score
        tests = tuple(grid.copy() for _ in task.test_inputs)
        found.append(FoundProgram(_chain(grid), rank, solved, exact, score, tests))
    return sorted(found, key=lambda p: -p.train_exact)


def _distinct_outputs(task) -> list:
    """``task``'s distinct train outputs, in order; none where they differ in shape."""
    outputs = task.train_outputs
    if len({o.shape for o in outputs}) != 1:
        return []
    distinct = []
    for o in outputs:
        if not any((o == d).all() for d in distinct):
            distinct.append(o)
    return distinct


def _chain(grid) -> tuple:
    """The chain of one step that makes ``grid`` from any input."""
    return (("constant", (tuple(map(tuple, grid.tolist())),)),)
