"""The grids that many tasks' chains of steps make from their inputs, worked out together.

Layered composition needs the grids of a few dozen short chains per task, for hundreds of tasks.
Run one grid at a time through the DSL's single-grid face, that is tens of thousands of primitive
calls. Here the chains are worked out step by step, for all tasks at once: a chain's grids come
from those of its prefix (made once per task, however many chains share it), and every grid that
a step is applied to, from any task and any chain, goes into one stack per shape, so that each
step runs once per shape over the batched primitive. A primitive maps each grid of a stack as it
maps the grid alone (the search relies on the same), so the grids are those of the single-grid
face; a step that raises ``ValueError`` on a stack is applied to its grids one by one, as that face
would be.
"""
from __future__ import annotations

import bisect
import functools

import numpy as np

from pipeline.search.problem import BUCKET_SIDES
from solvers.batch import as_parts
from solvers.padded import Padded, pad_grids
from solvers.primitives import PRIMITIVES, Transform  # the package registers every primitive


def chain_grids(inputs: list, chains: list) -> list[dict]:
    """Per task ``t``: ``{chain: its grids on inputs[t], or None}`` for every chain of ``chains[t]``
    (tuples of ``(name, args)`` steps) and every prefix of one; None where a step has no result
    for one of the grids. Chains are keyed by :func:`chain_key`."""
    made = [{(): [np.asarray(g, dtype=np.uint8) for g in task_inputs]} for task_inputs in inputs]
    keyed = [[(chain_key(c), c) for c in task_chains] for task_chains in chains]
    longest = max((len(c) for task_chains in chains for c in task_chains), default=0)
    for length in range(1, longest + 1):
        # Each task's prefixes of this length still to make, each once, with their last steps.
        todo = {}
        for t, task_chains in enumerate(keyed):
            for key, chain in task_chains:
                if len(key) >= length and key[:length] not in made[t]:
                    todo[t, key[:length]] = chain[length - 1]
        _make_level(made, todo)
    return made


def chain_key(chain) -> tuple:
    """A hashable key of a chain (its prefixes' keys are the key's prefixes): its steps, with
    arguments that cannot be hashed (a colour table's dict) as their ``repr``."""
    chain = tuple(chain)
    try:
        hash(chain)
        return chain
    except TypeError:
        return tuple((name, _hashable(args)) for name, args in chain)


def _hashable(args):
    try:
        hash(args)
        return args
    except TypeError:
        return repr(args)


def _make_level(made: list, todo: dict) -> None:
    """Make the grids of the chains of ``todo`` (``{(task, chain key): its last step}``), whose
    prefixes one step shorter are made, with one batched call per step and stack (:func:`_stack_of`)."""
    groups: dict = {}  # (step key, shape or size bucket) -> (step, [(task, key, sample, grid)])
    results = {}
    for (t, key), step in todo.items():
        before = made[t][key[:-1]]
        if before is None:
            made[t][key] = None
            continue
        results[t, key] = [None] * len(before)
        for j, grid in enumerate(before):
            group = groups.setdefault((key[-1], _stack_of(step[0], grid.shape)), (step, []))
            group[1].append((t, key, j, grid))
    for step, members in groups.values():
        outs = _apply(step, [grid for _, _, _, grid in members])
        for (t, key, j, _), out in zip(members, outs):
            results[t, key][j] = out
    for (t, key), grids in results.items():
        made[t][key] = None if any(g is None for g in grids) else grids


@functools.lru_cache(maxsize=None)
def _stack_of(name: str, shape: tuple) -> tuple:
    """Which stack a grid of ``shape`` joins for primitive ``name``: its shape, or for a primitive
    indifferent to zero padding its size bucket (the bucket sides its sides round up to)."""
    p = PRIMITIVES[name]
    if not (p.elementwise or p.pad is not None or p.layout == "padded"):
        return shape
    sides = BUCKET_SIDES["cpu"]
    return tuple(sides[min(bisect.bisect_left(sides, n), len(sides) - 1)] for n in shape) + ("bucket",)


def _apply(step, grids: list) -> list:
    """The grids (None: no result) that ``step`` makes from ``grids``: all of one shape, or of
    several for a primitive indifferent to zero padding (see :func:`_stack_of`)."""
    name, args = step
    transform = Transform(PRIMITIVES[name], tuple(args))
    if len({g.shape for g in grids}) > 1:
        return _apply_padded(transform, grids)
    try:
        parts = as_parts(np, transform(np, np.stack(grids)), len(grids))
    except ValueError:
        if len(grids) == 1:
            return [None]
        return [out for grid in grids for out in _apply(step, [grid])]
    outs: list = [None] * len(grids)
    for idx, stack in parts:
        for i, k in enumerate(np.asarray(idx).tolist()):
            outs[k] = np.ascontiguousarray(stack[i], dtype=np.uint8)
    return outs


def _apply_padded(transform: Transform, grids: list) -> list:
    """:func:`_apply` of a primitive indifferent to zero padding to grids of several shapes, padded
    (bottom, right) into one stack; where it raises ``ValueError``, shape by shape."""
    stack, h, w = pad_grids(grids)
    try:
        res = transform.padded(np, stack, h, w)
    except ValueError:
        res = None
    if not isinstance(res, (Padded, np.ndarray)):
        outs: list = [None] * len(grids)
        for shape in {g.shape for g in grids}:
            at = [i for i, g in enumerate(grids) if g.shape == shape]
            step = (transform.name, transform.args)
            for i, out in zip(at, _apply(step, [grids[i] for i in at])):
                outs[i] = out
        return outs
    if isinstance(res, np.ndarray):  # in place: each grid's result is the corner of its size
        res = Padded(res, h, w, True)
    n = len(grids)
    rows, cols, valid = (_per_grid(v, n) for v in (res.h, res.w, res.valid))
    return [np.ascontiguousarray(res.arr[i, :rows[i], :cols[i]], dtype=np.uint8) if valid[i] else None
            for i in range(n)]


def _per_grid(values, n: int) -> list:
    """``values`` (one per grid, or one for all ``n``) as a list of ``n``."""
    values = np.asarray(values)
    return (values if values.shape == (n,) else np.broadcast_to(values, (n,))).tolist()
