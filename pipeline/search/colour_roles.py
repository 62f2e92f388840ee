"""Colour roles: a task searched again with each example's colours named by role.

Where examples use different colours for the same role (the marker, the object to copy), no
single program of the raw task fits them all. Each example is renamed by the colours of its input
(``solvers.primitives.roles``: most frequent first), keeping fixed the colours that have one
meaning across the task: background 0, colours every input has, and colours the outputs paint
with that their inputs lack. The renamed task is searched beside the raw one; its programs come
back wrapped (rename the input, run the program, name the result back), so they run on the raw
task and go through the same validation. The better-fitting program wins; on a tie the raw one.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from pipeline.run.tasks import Task
from solvers.primitives.roles import role_tables

VARIANT_SUFFIX = "~roles"


def fixed_colours(task: Task) -> tuple:
    """The colours that keep their names in ``task``'s renaming."""
    inputs = list(task.train_inputs) + list(task.test_inputs)
    everywhere = set(range(10))
    for grid in inputs:
        everywhere &= set(np.unique(grid).tolist())
    painted = set()
    for inp, out in zip(task.train_inputs, task.train_outputs):
        painted |= set(np.unique(out).tolist()) - set(np.unique(inp).tolist())
    return tuple(sorted(everywhere | painted | {0}))


def _tables(grids, fixed) -> list:
    return [role_tables(np, grid[None], fixed)[0] for grid in grids]


def role_variant(task: Task) -> Task | None:
    """``task`` with each example renamed by its input's colour roles (outputs by their input's
    renaming), or None where no example's colours change."""
    fixed = fixed_colours(task)
    tables = _tables(list(task.train_inputs) + list(task.test_inputs), fixed)
    if all((t == np.arange(10)).all() for t in tables):
        return None
    n = len(task.train_inputs)
    return Task(task.id + VARIANT_SUFFIX,
                tuple(t[g].astype(np.uint8) for t, g in zip(tables[:n], task.train_inputs)),
                tuple(t[g].astype(np.uint8) for t, g in zip(tables[:n], task.train_outputs)),
                tuple(t[g].astype(np.uint8) for t, g in zip(tables[n:], task.test_inputs)))


def restored(task: Task, programs: list) -> list:
    """The programs found for ``task``'s variant, as programs of ``task`` itself."""
    fixed = fixed_colours(task)
    inverses = [np.argsort(t) for t in _tables(task.test_inputs, fixed)]
    out = []
    for p in programs:
        tests = tuple(inv[np.asarray(g, dtype=np.int64)].astype(np.uint8) for inv, g in zip(inverses, p.test_outputs))
        out.append(dataclasses.replace(p, test_outputs=tests, roles=fixed))
    return out


def merged(raw: list, variant: list) -> list:
    """Raw and restored programs of one task, best first (a stable sort: on equal rank, raw first)."""
    return sorted(raw + variant, key=lambda p: -p.rank)
