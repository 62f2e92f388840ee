"""Layered composition: a task's output built from several search states stacked per cell.

Each layer is a state whose grids have the output's size, used one of three ways (a *row* of the
cover): painted where it is non-zero; painted through a colour table learnt from the train pairs
(each of its colours that meets one output colour wherever it lies, in two train pairs at least,
becomes that colour, the others are left out: a piece right up to its colours; a colour seen in
one pair only made more wrong stacks than right ones); or erasing the cells below to 0 where it is 0. A
layer must be right on the cells it paints (or erases). The layers are chosen greedily from the top
down, for all tasks at once: the layer on top is the row that paints the most still-open cells of
every train output right and none wrong; the cells it paints are then closed, and the next layer
goes under it. It ends when one candidate (the input, a piece, one through its colour table, or a
program of the task's leaderboard) is right on every open cell: that candidate is the bottom
layer, painted as a whole. With at most ``max_layers`` layers above it, the stack reproduces every
train output; the same stack applied to the test inputs gives the answer.

The pieces' grids are worked out for all tasks together, each step once per stack of grids
(:mod:`pipeline.search.chain_grids`); the greedy cover is a handful of array operations over
(tasks, rows, cells) per layer, the same code on NumPy and CuPy, for groups of tasks of similar
sizes.
"""
from __future__ import annotations

import dataclasses

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


# The ways a row uses its chain's grids (see the module's docstring).
PAINT, MAPPED, ERASE = 0, 1, 2


class _Chains:
    """Candidate chains of one task (``steps``), those of its pieces first (``n_pieces``), with
    their grids on its train inputs (``grids``): the chains whose grids have the train outputs'
    sizes, each once. Its rows (:meth:`rows`): every chain painted, then each piece through its
    colour table (where that is not the piece itself) and as an eraser."""

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

    def rows(self, target: np.ndarray, modes: tuple) -> tuple:
        """``(chain, kind, table, value, paints)`` of the rows on the train outputs ``target``
        (their cells back to back): per row its chain index, kind (:data:`PAINT`, :data:`MAPPED`,
        :data:`ERASE`), colour table (10,), and per cell the value it gives and whether it paints."""
        flat = np.stack([np.concatenate([g.ravel() for g in grids]) for grids in self.grids])
        P, n = len(self.steps), self.n_pieces
        identity = np.arange(10, dtype=np.uint8)
        chain, kind, tables = [np.arange(P)], [np.full(P, PAINT)], [np.broadcast_to(identity, (P, 10))]
        if n and "colour_layers" in modes:
            hist = np.bincount((np.arange(n)[:, None] * 100 + flat[:n].astype(np.int64) * 10 + target).ravel(),
                               minlength=n * 100).reshape(n, 10, 10)
            to = hist.argmax(axis=2)
            # A colour is kept where it lies in two train pairs at least (or the one there is).
            sizes = [g.size for g in self.grids[0]]
            pair = np.repeat(np.arange(len(sizes)), sizes)
            seen = np.bincount((np.arange(n)[:, None] * len(sizes) * 10 + pair * 10 + flat[:n]).ravel(),
                               minlength=n * len(sizes) * 10).reshape(n, len(sizes), 10)
            kept = ((hist > 0).sum(axis=2) == 1) & (to != 0) & ((seen > 0).sum(axis=1) >= min(2, len(sizes)))
            kept[:, 0] = False
            table = np.where(kept, to, 0).astype(np.uint8)
            present = hist.sum(axis=2) > 0
            present[:, 0] = False
            new = kept.any(axis=1) & (present & (table != identity)).any(axis=1)
            chain.append(np.nonzero(new)[0]), kind.append(np.full(int(new.sum()), MAPPED)), tables.append(table[new])
        if n and "erasers" in modes:
            erases = ((flat[:n] == 0).any(axis=1) & (flat[:n] != 0).any(axis=1))
            chain.append(np.nonzero(erases)[0]), kind.append(np.full(int(erases.sum()), ERASE))
            tables.append(np.broadcast_to(identity, (int(erases.sum()), 10)))
        chain, kind, tables = np.concatenate(chain), np.concatenate(kind), np.concatenate(tables)
        grids = flat[chain]
        value = np.take_along_axis(tables, grids.astype(np.int64), axis=1).astype(np.uint8)
        erase = kind == ERASE
        value[erase] = 0
        paints = np.where(erase[:, None], grids == 0, value != 0)
        return chain, kind, tables, value, paints


# The ways besides painting that a piece may be a layer, named as their mechanisms
# (:data:`pipeline.search.mechanisms.MECHANISMS`): through its colour table, as an eraser.
MODES = ("colour_layers", "erasers")


def compose_layers(xp, tasks, pieces: list, bottoms: list, max_layers: int = MAX_LAYERS,
                   modes: tuple = MODES) -> dict:
    """Layered programs that reproduce every train output: ``{task index: FoundProgram}``.

    ``pieces[i]`` and ``bottoms[i]`` are lists of chains (tuples of ``(name, args)`` steps) for
    ``tasks[i]``: pieces may be layers, bottoms (and pieces, and the input) the bottom layer.
    ``modes`` names the ways besides painting that a piece may be a layer (of :data:`MODES`).
    """
    pieces = [[tuple(s) for s in task_pieces] for task_pieces in pieces]
    bottoms = [[tuple(s) for s in task_bottoms] for task_bottoms in bottoms]
    made = chain_grids([task.train_inputs for task in tasks],
                       [p + b for p, b in zip(pieces, bottoms)])
    chains = [_Chains(*args) for args in zip(tasks, pieces, bottoms, made)]
    todo = [i for i, c in enumerate(chains) if c.n_pieces and len(c.steps) > 1]
    if not todo:
        return {}
    rows = {i: chains[i].rows(_target(tasks[i]), modes) for i in todo}
    picked = _greedy_cover(xp, [rows[i] for i in todo], [tasks[i] for i in todo], chains, todo, max_layers)
    stacks = {i: (bottom, layers) for i, (bottom, layers) in zip(todo, picked) if bottom is not None and layers}
    used = {i: [chains[i].steps[rows[i][0][r]] for r in [bottom] + layers] for i, (bottom, layers) in stacks.items()}
    tests = chain_grids([tasks[i].test_inputs for i in used], list(used.values()))
    found = {}
    for (i, (bottom, layers)), made_test in zip(stacks.items(), tests):
        program = _program(tasks[i], chains[i], rows[i], bottom, layers, made_test)
        if program is not None:
            found[i] = program
    return found


def _target(task) -> np.ndarray:
    """A task's train outputs' cells back to back (int64)."""
    return np.concatenate([o.ravel() for o in task.train_outputs]).astype(np.int64)


def _greedy_cover(xp, rows: list, tasks: list, chains: list, todo: list, max_layers: int) -> list:
    """Per task ``(bottom row or None, [layer rows, top first])``: tasks of similar sizes together
    (:data:`COVER_CELLS`), each stack padded to its largest task."""
    sizes = [sum(o.size for o in task.train_outputs) for task in tasks]
    R = max(len(r[0]) for r in rows)
    groups: list = [[]]
    for t in sorted(range(len(tasks)), key=lambda t: sizes[t]):
        if groups[-1] and (len(groups[-1]) + 1) * R * sizes[t] > COVER_CELLS:
            groups.append([])
        groups[-1].append(t)
    out: list = [None] * len(tasks)
    for group in groups:
        picked = _cover_group(xp, [rows[t] for t in group], [tasks[t] for t in group],
                              [chains[todo[t]].n_pieces for t in group], max_layers)
        for t, stack in zip(group, picked):
            out[t] = stack
    return out


def _cover_group(xp, rows: list, tasks: list, n_pieces: list, max_layers: int) -> list:
    """:func:`_greedy_cover` of a group of tasks in one stack. A task leaves the stack once its
    bottom is found, or once it finds no layer: nothing of it changes after that."""
    T = len(tasks)
    R = max(len(r[0]) for r in rows)
    C = max(sum(o.size for o in task.train_outputs) for task in tasks)
    target = np.zeros((T, C), dtype=np.uint8)
    cell = np.zeros((T, C), dtype=bool)
    right = np.zeros((T, R, C), dtype=bool)
    paints = np.zeros((T, R, C), dtype=bool)
    is_piece = np.zeros((T, R), dtype=bool)
    exists = np.zeros((T, R), dtype=bool)
    bottom_kind = np.zeros((T, R), dtype=bool)
    priority = np.zeros((T, R), dtype=np.int64)
    for t, ((chain, kind, _, value, paint), task) in enumerate(zip(rows, tasks)):
        flat = _target(task)
        n, m = len(chain), flat.size
        target[t, :m] = flat
        cell[t, :m] = True
        right[t, :n, :m] = value == flat
        paints[t, :n, :m] = paint
        is_piece[t, :n] = chain < n_pieces[t]
        exists[t, :n] = True
        bottom_kind[t, :n] = kind != ERASE
        priority[t, :n] = np.array([2, 1, 0])[kind]
    target, cell, right, paints = xp.asarray(target), xp.asarray(cell), xp.asarray(right), xp.asarray(paints)
    is_piece, exists, bottom_kind = xp.asarray(is_piece), xp.asarray(exists), xp.asarray(bottom_kind)
    priority = xp.asarray(priority)
    open_ = cell
    used = xp.zeros((T, R), dtype=bool)
    last = xp.full(T, -1, dtype=xp.int64)
    bottom = xp.full(T, -1, dtype=xp.int64)
    chosen = xp.full((T, max_layers), -1, dtype=xp.int64)
    live = xp.arange(T)  # the tasks still in the stack; the arrays below hold only theirs
    for depth in range(max_layers + 1):
        if depth > 0:
            # The last layer as the bottom, painted whole: the open cells are the output's zeros
            # (an eraser's open cells are those it does not erase: it cannot be the bottom).
            last_ok = xp.take_along_axis(bottom_kind, xp.maximum(last, 0)[:, None], axis=1)[:, 0]
            zero_fill = (last >= 0) & last_ok & (~open_ | (target == 0)).all(axis=1)
            # Another candidate (not a layer already) right on every open cell, painted whole.
            whole = (right | ~open_[:, None, :]).all(axis=2) & exists & bottom_kind & ~used
            ends = ~zero_fill & whole.any(axis=1)
            done = zero_fill | ends
            bottom[live[done]] = xp.where(zero_fill, last, whole.argmax(axis=1))[done]
            if depth == max_layers:
                break
            # A task that found no layer the step before is as it was at the last look: done or stuck.
            keep = ~done & found
            live, target, right, paints, open_, used, last, is_piece, exists, bottom_kind, priority = (
                a[keep] for a in (live, target, right, paints, open_, used, last, is_piece, exists, bottom_kind,
                                  priority))
        if live.shape[0] == 0:
            break
        fresh = paints & open_[:, None, :]
        wrong = (fresh & ~right).any(axis=2)
        gain = xp.where(wrong | ~is_piece | used, -1, (fresh & right).sum(axis=2))
        # Painted rows first, then colour tables, then erasers: a row of a later kind only where
        # none of an earlier one adds a cell.
        best = xp.where(gain > 0, gain + priority * (C + 1), -1).argmax(axis=1)
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


def _program(task, chains: _Chains, rows: tuple, bottom: int, layers: list, made_test: dict) -> FoundProgram | None:
    """The found program of a stack (rows ``layers`` top first over row ``bottom``), or None where
    its test grids do not stack (sizes differ); ``made_test``: the chains' grids on the test inputs."""
    chain, kind, tables = rows[0], rows[1], rows[2]
    n_train = len(task.train_outputs)
    order = layers[::-1]  # painted bottom up
    made = {r: made_test[chain_key(chains.steps[chain[r]])] for r in [bottom] + order}
    if any(grids is None for grids in made.values()):
        return None
    tests = []
    for j in range(len(task.test_inputs)):
        grid = tables[bottom][made[bottom][j]]
        for r in order:
            top = made[r][j]
            if top.shape != grid.shape:
                return None
            if kind[r] == ERASE:
                grid = np.where(top == 0, 0, grid)
            else:
                top = tables[r][top]
                grid = np.where(top != 0, top, grid)
        tests.append(grid.astype(np.uint8))

    def chain_of(r):
        steps = chains.steps[chain[r]]
        if kind[r] == MAPPED:
            steps = steps + (("colormap", ({c: int(tables[r][c]) for c in range(1, 10) if tables[r][c] != c},)),)
        return steps

    stacked = tuple(chain_of(r) for r in order)
    erasers = tuple(k for k, r in enumerate(order) if kind[r] == ERASE)
    program = FoundProgram(chain_of(bottom), 0.0, True, n_train, 1.0, tuple(tests), stacked, erasers=erasers)
    return dataclasses.replace(program, rank=LAYERED_RANK - program.size)
