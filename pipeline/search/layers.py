"""Layered composition: a task's output built from several search states stacked per cell.

Each layer is a state whose grids have the output's size and are right on the cells they paint;
the layers are chosen greedily from the top down, for all tasks at once: the layer painted on top
is the piece that paints the most still-open cells of every train output right and none wrong;
its non-zero cells are then closed, and the next layer goes under it. It ends when one candidate
(the input, a piece, or a program of the task's leaderboard) is right on every open cell: that
candidate is the bottom layer, painted as a whole. With at most ``max_layers`` layers above it, the
stack reproduces every train output; the same stack applied to the test inputs gives the answer.

The pieces' grids are worked out for all tasks together, each step once per stack of grids
(:mod:`pipeline.search.chain_grids`); the greedy cover is a handful of array operations over
(tasks, pieces, cells) per layer, the same code on NumPy and CuPy, for groups of tasks of similar
sizes.
"""
from __future__ import annotations

import numpy as np

from pipeline.finish.program import FoundProgram
from pipeline.search.chain_grids import chain_grids, chain_key
from pipeline.search.device import to_host
from solvers import dsl

MAX_LAYERS = 8
# Rank of a layered program of no calls (each call costs 1): below every plain solved program.
LAYERED_RANK = 90.0
# Cells (tasks x candidates x train output cells) of one stack of the greedy cover: tasks of
# similar sizes share one, so that few cells are padding; results never depend on it.
COVER_CELLS = 4_000_000


def run_steps(steps, grid):
    """The grid that the chain ``steps`` makes from ``grid`` (None where a step has no result)."""
    out = grid
    for name, args in steps:
        try:
            out = getattr(dsl, name)(out, *args)
        except ValueError:
            return None
    return np.asarray(out, dtype=np.uint8)


class _Chains:
    """Candidate chains of one task (``steps``), those of its pieces first (``n_pieces``), with
    their grids on its train inputs (``grids``): the chains whose grids have the train outputs'
    sizes, each once."""

    def __init__(self, task, pieces: list, bottoms: list, made: dict):
        shapes = [o.shape for o in task.train_outputs]
        self.steps: list = []
        self.grids: list = []
        seen = set()
        for k, steps in enumerate(list(pieces) + [()] + list(bottoms)):
            if k == len(pieces):
                self.n_pieces = len(self.steps)
            key = chain_key(steps)
            grids = made[key]
            if key in seen or grids is None or any(g.shape != s for g, s in zip(grids, shapes)):
                continue
            seen.add(key)
            self.steps.append(tuple(steps))
            self.grids.append(grids)


def compose_layers(xp, tasks, pieces: list, bottoms: list, max_layers: int = MAX_LAYERS) -> dict:
    """Layered programs that reproduce every train output: ``{task index: FoundProgram}``.

    ``pieces[i]`` and ``bottoms[i]`` are lists of chains (tuples of ``(name, args)`` steps) for
    ``tasks[i]``: pieces may be layers, bottoms (and pieces, and the input) the bottom layer.
    """
    pieces = [[tuple(s) for s in task_pieces] for task_pieces in pieces]
    bottoms = [[tuple(s) for s in task_bottoms] for task_bottoms in bottoms]
    made = chain_grids([task.train_inputs for task in tasks],
                       [p + b for p, b in zip(pieces, bottoms)])
    chains = [_Chains(*args) for args in zip(tasks, pieces, bottoms, made)]
    todo = [i for i, c in enumerate(chains) if c.n_pieces and len(c.steps) > 1]
    if not todo:
        return {}
    picked = _greedy_cover(xp, [chains[i] for i in todo], [tasks[i] for i in todo], max_layers)
    stacks = {i: (bottom, layers) for i, (bottom, layers) in zip(todo, picked) if bottom is not None and layers}
    used = {i: [chains[i].steps[p] for p in [bottom] + layers] for i, (bottom, layers) in stacks.items()}
    tests = chain_grids([tasks[i].test_inputs for i in used], list(used.values()))
    found = {}
    for (i, (bottom, layers)), made_test in zip(stacks.items(), tests):
        program = _program(tasks[i], chains[i], bottom, layers, made_test)
        if program is not None:
            found[i] = program
    return found


def _greedy_cover(xp, chains: list, tasks: list, max_layers: int) -> list:
    """Per task ``(bottom chain index or None, [layer chain indices, top first])``: tasks of
    similar sizes together (:data:`COVER_CELLS`), each stack padded to its largest task."""
    sizes = [sum(o.size for o in task.train_outputs) for task in tasks]
    P = max(len(c.steps) for c in chains)
    groups: list = [[]]
    for t in sorted(range(len(tasks)), key=lambda t: sizes[t]):
        if groups[-1] and (len(groups[-1]) + 1) * P * sizes[t] > COVER_CELLS:
            groups.append([])
        groups[-1].append(t)
    out: list = [None] * len(tasks)
    for group in groups:
        picked = _cover_group(xp, [chains[t] for t in group], [tasks[t] for t in group], max_layers)
        for t, stack in zip(group, picked):
            out[t] = stack
    return out


def _cover_group(xp, chains: list, tasks: list, max_layers: int) -> list:
    """:func:`_greedy_cover` of a group of tasks in one stack. A task leaves the stack once its
    bottom is found, or once it finds no layer: nothing of it changes after that."""
    T = len(tasks)
    P = max(len(c.steps) for c in chains)
    C = max(sum(o.size for o in task.train_outputs) for task in tasks)
    target = np.zeros((T, C), dtype=np.uint8)
    cell = np.zeros((T, C), dtype=bool)
    grids = np.zeros((T, P, C), dtype=np.uint8)
    is_piece = np.zeros((T, P), dtype=bool)
    exists = np.zeros((T, P), dtype=bool)
    for t, (c, task) in enumerate(zip(chains, tasks)):
        flat = np.concatenate([o.ravel() for o in task.train_outputs])
        target[t, :flat.size] = flat
        cell[t, :flat.size] = True
        for p, g in enumerate(c.grids):
            grids[t, p, :flat.size] = np.concatenate([x.ravel() for x in g])
        is_piece[t, :c.n_pieces] = True
        exists[t, :len(c.steps)] = True
    target, cell, grids = xp.asarray(target), xp.asarray(cell), xp.asarray(grids)
    is_piece, exists = xp.asarray(is_piece), xp.asarray(exists)
    right = grids == target[:, None, :]
    paints = grids != 0
    del grids
    open_ = cell
    used = xp.zeros((T, P), dtype=bool)
    last = xp.full(T, -1, dtype=xp.int64)
    bottom = xp.full(T, -1, dtype=xp.int64)
    chosen = xp.full((T, max_layers), -1, dtype=xp.int64)
    live = xp.arange(T)  # the tasks still in the stack; the arrays below hold only theirs
    for depth in range(max_layers + 1):
        if depth > 0:
            # The last layer as the bottom, painted whole: the open cells are the output's zeros.
            zero_fill = (last >= 0) & (~open_ | (target == 0)).all(axis=1)
            # Another candidate (not a layer already) right on every open cell, painted whole.
            whole = (right | ~open_[:, None, :]).all(axis=2) & exists & ~used
            ends = ~zero_fill & whole.any(axis=1)
            done = zero_fill | ends
            bottom[live[done]] = xp.where(zero_fill, last, whole.argmax(axis=1))[done]
            if depth == max_layers:
                break
            # A task that found no layer the step before is as it was at the last look: done or stuck.
            keep = ~done & found
            live, target, right, paints, open_, used, last, is_piece, exists = (
                a[keep] for a in (live, target, right, paints, open_, used, last, is_piece, exists))
        if live.shape[0] == 0:
            break
        fresh = paints & open_[:, None, :]
        wrong = (fresh & ~right).any(axis=2)
        gain = xp.where(wrong | ~is_piece | used, -1, (fresh & right).sum(axis=2))
        best = gain.argmax(axis=1)
        found = xp.take_along_axis(gain, best[:, None], axis=1)[:, 0] > 0
        chosen[live[found], depth] = best[found]
        last = xp.where(found, best, last)
        used[xp.arange(live.shape[0])[found], best[found]] = True
        close = xp.take_along_axis(paints, best[:, None, None], axis=1)[:, 0] & found[:, None]
        open_ = open_ & ~close
    bottom_h, chosen_h = to_host(bottom), to_host(chosen)
    out = []
    for t in range(T):
        b = int(bottom_h[t])
        layers = [int(p) for p in chosen_h[t] if p >= 0 and p != b]
        out.append((b if b >= 0 else None, layers))
    return out


def _program(task, chains: _Chains, bottom: int, layers: list, made_test: dict) -> FoundProgram | None:
    """The found program of a stack (``layers`` top first over ``bottom``), or None where its
    test grids do not stack (sizes differ); ``made_test``: the chains' grids on the test inputs."""
    n_train = len(task.train_outputs)
    order = layers[::-1]  # painted bottom up
    made = {p: made_test[chain_key(chains.steps[p])] for p in [bottom] + order}
    if any(grids is None for grids in made.values()):
        return None
    tests = []
    for j in range(len(task.test_inputs)):
        grid = made[bottom][j]
        for p in order:
            top = made[p][j]
            if top.shape != grid.shape:
                return None
            grid = np.where(top != 0, top, grid)
        tests.append(grid.astype(np.uint8))
    steps, stacked = chains.steps[bottom], tuple(chains.steps[p] for p in order)
    size = len(steps) + sum(len(s) for s in stacked) + 1
    return FoundProgram(steps, LAYERED_RANK - size, True, n_train, 1.0, tuple(tests), stacked)
