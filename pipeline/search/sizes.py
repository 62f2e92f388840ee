"""Output sizes: tasks whose outputs differ in size from their inputs, solved by making a
candidate's grids the size a fitted rule predicts.

Per task, the size rules of :mod:`solvers.primitives.sizes` are fitted on the train pairs: a rule
is kept when it gives every train output's size. For an unsolved task with a kept rule, whose
outputs differ in size from their inputs, each candidate chain (the input itself, every chain of
one transform, and the programs of the task's leaderboard) is made the size of each train output
by each size-taking transform (:data:`SIZE_TRANSFORMS`); a chain and transform that reproduce
every train output become a solved program, its test outputs made with the rule's sizes for the
test inputs. Where the outputs grow, the input padded to the output's size (top left) followed
by one transform is tried too.

The train outputs' sizes are what every kept rule gives on the train inputs, so the check is the
same for all rules: the transforms run once, over every candidate grid of every task, as a few
array operations on zero-padded stacks. The chains of one transform are made alike: each
transform once, on one zero-padded stack of every task's train inputs.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from pipeline.finish.program import FoundProgram
from pipeline.search.chain_grids import chain_grids, chain_key
from pipeline.search.layers import run_steps
from solvers import dsl, stack_cache
from solvers.batch import MAX_SIDE
from solvers.padded import Padded, pad_grids
from solvers.primitives import sizes as size_primitives
from solvers.primitives import transforms
from solvers.primitives.objects import OBJECT_KINDS

# Rank of a sized program of no calls (each call costs 1): below every plain solved program, as
# layered composition's (pipeline.search.layers.LAYERED_RANK).
SIZED_RANK = 90.0
# Distinct test sizes tried per task (one program each, from the first rules that predict them).
MAX_RULES = 2
# Sized programs kept per task (distinct test outputs), shortest first.
MAX_PROGRAMS = 3
# Fitting programs whose test outputs are made per task, at most (most repeat another's).
MAX_TRIES = 12
# Rows (candidate grids) checked together: bounds the size transforms' arrays (resample_to's
# block counts take 40 bytes a cell of a 30 x 30 grid).
ROWS_PER_CHUNK = 2048

SIZE_TRANSFORMS = (
    tuple(("fit_to", (anchor,)) for anchor in size_primitives.ANCHORS)
    + (("tile_to", ()), ("mirror_tile_to", ()))
    + tuple(("resample_to", (mode,)) for mode in size_primitives.RESAMPLE_MODES)
)


def candidate_rules(task) -> list:
    """The size rules worth fitting on ``task``, in order of preference: a constant size, the
    first pair's ratio and offset, the transposed sides, the content's and largest object's boxes,
    the number of colours as a scale."""
    (ih, iw), (oh, ow) = task.train_inputs[0].shape, task.train_outputs[0].shape
    rules = [("const", oh, ow)]
    fh, fw = Fraction(oh, ih), Fraction(ow, iw)
    if (fh, fw) != (1, 1):
        rules.append(("scale", fh.numerator, fh.denominator, fw.numerator, fw.denominator))
    if (oh - ih, ow - iw) != (0, 0):
        rules.append(("offset", oh - ih, ow - iw))
    rules += [("transpose",), ("content",)]
    rules += [("largest_object", conn, by_colour) for conn, by_colour in OBJECT_KINDS]
    rules.append(("colour_scale",))
    return rules


def rule_size(grid, rule) -> tuple | None:
    """The size ``rule`` gives for ``grid`` (None where it gives none)."""
    one = np.ones(1, dtype=np.int64)
    th, tw = size_primitives.rule_sides(np, grid[None], grid.shape[0] * one, grid.shape[1] * one, rule)
    h, w = int(th[0]), int(tw[0])
    return (h, w) if 1 <= h <= MAX_SIDE and 1 <= w <= MAX_SIDE else None


def fit_rules(task) -> list:
    """The size rules (:func:`candidate_rules`) that give every train output's size and a size for
    every test input, at most one per distinct prediction for the test inputs (the first), at most
    :data:`MAX_RULES`; none where every train output has its input's size."""
    if all(i.shape == o.shape for i, o in zip(task.train_inputs, task.train_outputs)):
        return []
    kept, predictions = [], set()
    for rule in candidate_rules(task):
        if any(rule_size(i, rule) != o.shape for i, o in zip(task.train_inputs, task.train_outputs)):
            continue
        tests = tuple(rule_size(g, rule) for g in task.test_inputs)
        if None in tests or tests in predictions:
            continue
        kept.append(rule)
        predictions.add(tests)
        if len(kept) == MAX_RULES:
            break
    return kept


def sized_programs(tasks, chains: list) -> dict:
    """Sized programs that reproduce every train output: ``{task index: [FoundProgram, ...]}``.

    ``chains[i]`` lists candidate chains (tuples of ``(name, args)`` steps) for ``tasks[i]``;
    the input itself (the empty chain) is always one.
    """
    rules = [fit_rules(task) for task in tasks]
    todo = [i for i, r in enumerate(rules) if r]
    if not todo:
        return {}
    one_step = _one_step_chains()
    # Per task, by chain key: the input, every chain of one transform and the leaderboard's chains.
    task_chains = []
    for i in todo:
        by_key = {chain: chain for chain in [()] + one_step}
        for chain in chains[i]:
            by_key.setdefault(chain_key(chain), tuple(chain))
        task_chains.append(by_key)
    made = chain_grids([list(tasks[i].train_inputs) for i in todo], [list(c) for c in task_chains])
    # One row per (task, chain, train pair): the chain's grid, padded, and its output's.
    cands, rows = [], []  # cands: (task index, steps); rows: (candidate index, grid, output)
    for i, by_key, task_made in zip(todo, task_chains, made):
        task = tasks[i]
        seen = set()
        for key, steps in by_key.items():
            grids = task_made[key]
            # Every size transform paints the grid's own colours (or 0): a grid that lacks a colour
            # of its output cannot become it. Of chains with the same grids, the first is enough.
            if grids is None or any(not _colours(o) <= _colours(g) | {0} for g, o in zip(grids, task.train_outputs)):
                continue
            content = tuple((g.shape, g.tobytes()) for g in grids)
            if content in seen:
                continue
            seen.add(content)
            c = len(cands)
            cands.append((i, steps))
            rows += [(c, g, o) for g, o in zip(grids, task.train_outputs)]
    if not rows:
        return {}
    fits = np.ones((len(cands), len(SIZE_TRANSFORMS)), dtype=bool)
    for start in range(0, len(rows), ROWS_PER_CHUNK):
        fits &= _fits(rows[start:start + ROWS_PER_CHUNK], len(cands))
    found: dict = _padded_first(tasks, [i for i in todo if _grows(tasks[i])], rules)
    tried: dict = {}
    order = sorted(range(len(cands)), key=lambda c: (cands[c][0], len(cands[c][1]), c))
    for c in order:
        i, steps = cands[c]
        for k in np.nonzero(fits[c])[0]:
            name, args = SIZE_TRANSFORMS[k]
            for rule in rules[i]:
                kept = found.setdefault(i, [])
                if len(kept) == MAX_PROGRAMS or tried.get(i, 0) == MAX_TRIES:
                    continue
                tried[i] = tried.get(i, 0) + 1
                program = _program(tasks[i], steps, name, args, rule)
                if program is not None and not any(_same_outputs(program, p) for p in kept):
                    kept.append(program)
    return {i: ps for i, ps in found.items() if ps}


def _grows(task) -> bool:
    """Whether every train output is at least as large as its input on both sides."""
    return all(o.shape[0] >= i.shape[0] and o.shape[1] >= i.shape[1]
               for i, o in zip(task.train_inputs, task.train_outputs))


def _padded_first(tasks, todo: list, rules: list) -> dict:
    """Programs that pad the input to the output's size first (:func:`fit_to`, top left), then
    apply one transform: ``{task index: [FoundProgram]}`` for the tasks ``todo`` where one
    reproduces every train output."""
    if not todo:
        return {}
    padded = []
    for i in todo:
        task = tasks[i]
        stack, h, w = pad_grids(list(task.train_inputs))
        size = Padded(None, np.array([o.shape[0] for o in task.train_outputs]),
                      np.array([o.shape[1] for o in task.train_outputs]), None)
        res = size_primitives.fit_to(np, stack, h, w, size, "top_left")
        padded.append([res.arr[k, :res.h[k], :res.w[k]] for k in range(len(task.train_inputs))])
    one_step = _one_step_chains()
    found = {}
    for i, made in zip(todo, chain_grids(padded, [one_step] * len(todo))):
        outputs = tasks[i].train_outputs
        for steps in one_step:
            grids = made[steps]
            if grids is not None and all(np.array_equal(g, o) for g, o in zip(grids, outputs)):
                program = _program(tasks[i], steps, "fit_to", ("top_left",), rules[i][0], first=True)
                if program is not None:
                    found[i] = [program]
                    break
    return found


def _one_step_chains() -> list:
    """Every chain of one transform the search enumerates."""
    return [((tr.name, tr.args),) for tr in transforms()]


def _fits(rows: list, num_cands: int) -> np.ndarray:
    """Per candidate and size transform: whether the transform, with each train output's size,
    turns the candidate's every train grid (of those in ``rows``) into its output."""
    n = len(rows)
    H, W = max(r[1].shape[0] for r in rows), max(r[1].shape[1] for r in rows)
    g = np.zeros((n, H, W), dtype=np.uint8)
    target = np.zeros((n, MAX_SIDE, MAX_SIDE), dtype=np.uint8)
    h, w, oh, ow = (np.zeros(n, dtype=np.int64) for _ in range(4))
    owner = np.zeros(n, dtype=np.int64)
    for r, (c, grid, out) in enumerate(rows):
        g[r, :grid.shape[0], :grid.shape[1]] = grid
        target[r, :out.shape[0], :out.shape[1]] = out
        h[r], w[r] = grid.shape
        oh[r], ow[r] = out.shape
        owner[r] = c
    # Where an output is no smaller than its grid, every block of resample_to is one cell: its
    # block modes give what "nearest" gives, and run only on the other rows.
    down = np.nonzero((oh < h) | (ow < w))[0]
    g_down = g[down][:, :int(h[down].max()), :int(w[down].max())] if down.size else None
    fits = np.ones((num_cands, len(SIZE_TRANSFORMS)), dtype=bool)
    nearest = None
    with stack_cache.scope():  # the block modes share the grids' colour counts
        for k, (name, args) in enumerate(SIZE_TRANSFORMS):
            if name == "resample_to" and args[0] != "nearest":
                right = nearest.copy()
                if down.size:
                    right[down] = _right(name, args, g_down, h[down], w[down], oh[down], ow[down], target[down])
            else:
                right = _right(name, args, g[:, :int(h.max()), :int(w.max())], h, w, oh, ow, target)
                if name == "resample_to":
                    nearest = right
            fits[:, k] = ~(np.bincount(owner[~right], minlength=num_cands) > 0)
    return fits


def _right(name, args, g, h, w, oh, ow, target) -> np.ndarray:
    """Per row: whether size transform ``name`` makes the grid (``g``, sides ``h`` x ``w``) its
    target (``target``, sides ``oh`` x ``ow``)."""
    res = getattr(size_primitives, name)(np, g, h, w, Padded(None, oh, ow, None), *args)
    out_rows, out_cols = res.arr.shape[1:]
    return res.valid & (res.h == oh) & (res.w == ow) & (res.arr == target[:, :out_rows, :out_cols]).all(axis=(1, 2))


def _program(task, steps, name, args, rule, first: bool = False) -> FoundProgram | None:
    """The sized program of ``steps`` and transform ``name`` with size rule ``rule`` (``first``:
    applied to the input before ``steps``), its test outputs made on the test inputs (None where
    one has none)."""
    tests = []
    for grid in task.test_inputs:
        try:
            if first:
                made = run_steps(steps, getattr(dsl, name)(grid, dsl.output_size(grid, rule), *args))
            else:
                made = run_steps(steps, grid)
                made = None if made is None else getattr(dsl, name)(made, dsl.output_size(grid, rule), *args)
        except ValueError:
            return None
        if made is None:
            return None
        tests.append(np.asarray(made, dtype=np.uint8))
    size = len(steps) + 2
    return FoundProgram(tuple(steps), SIZED_RANK - size, True, len(task.train_outputs), 1.0, tuple(tests),
                        sized=(name, tuple(args), tuple(rule)), sized_first=first)


def _same_outputs(a: FoundProgram, b: FoundProgram) -> bool:
    return all(np.array_equal(x, y) for x, y in zip(a.test_outputs, b.test_outputs))


def _colours(grid) -> set:
    return set(np.nonzero(np.bincount(grid.ravel(), minlength=10))[0].tolist())
