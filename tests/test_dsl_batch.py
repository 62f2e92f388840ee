"""Batch consistency of the DSL: a batched call equals the single-grid face on every grid.

For every enumerated transform and several stack shapes (square and not, 1-wide, up to 30x30), a
seeded random batch goes through the batched function ``t(np, stack)``; after normalisation with
``as_parts`` each grid's output must be exactly what ``solvers.dsl`` gives on that grid alone, and
the grids in no part must be exactly those for which the single-grid face raises ``ValueError``.
Since the single-grid face runs the same primitive on a batch of one, any difference means that
grids of a batch leak into each other (shared labels, per-batch maxima, argmax over the wrong
axis, ...). The same run checks the output format: ``uint8``, colours 0-9, sides 1-30, every grid in
at most one part, the input stack left unmodified.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import solvers.primitives  # noqa: F401  (registers every primitive)
from solvers import dsl
from solvers.batch import MAX_SIDE, Parts, as_parts
from solvers.padded import Padded
from solvers.registry import Transform, PRIMITIVES
from solvers.primitives import transforms

TRANSFORMS = transforms()
SHAPES = [(1, 1), (1, 4), (4, 1), (2, 2), (3, 5), (4, 2), (5, 5), (6, 6), (10, 7), (9, 12),
          (15, 30), (30, 30)]
PER_SHAPE = 14


# --------------------------------------------------------------------------------------------------
# Random grids with ARC-like structure (background, objects, repeats, symmetry, enclosed areas)
# --------------------------------------------------------------------------------------------------

def _palette(rng, k):
    return rng.choice(np.arange(1, 10), size=k, replace=False)


def _sparse(rng, h, w, density, colours):
    cells = rng.random((h, w)) < density
    return np.where(cells, rng.choice(_palette(rng, colours), size=(h, w)), 0)


def random_grid(rng, h, w, style):
    if style == "zero":
        grid = np.zeros((h, w), dtype=int)
    elif style == "uniform":
        grid = np.full((h, w), rng.integers(1, 10))
    elif style == "noise":
        grid = rng.integers(0, 10, size=(h, w))
    elif style == "sparse":
        grid = _sparse(rng, h, w, rng.choice([0.1, 0.25, 0.4]), int(rng.integers(1, 4)))
    elif style == "dense":
        grid = _sparse(rng, h, w, 0.75, int(rng.integers(2, 4)))
    elif style == "background":  # a non-zero majority colour with a few other cells
        grid = np.full((h, w), rng.integers(1, 10))
        spots = rng.random((h, w)) < 0.2
        grid[spots] = rng.integers(0, 10, size=int(spots.sum()))
    elif style == "repeats":  # adjacent duplicate rows and columns
        base = _sparse(rng, h, w, 0.5, 3)
        rows = np.sort(rng.integers(0, h, size=h))
        cols = np.sort(rng.integers(0, w, size=w))
        grid = base[np.ix_(rows, cols)]
    elif style == "symmetric":  # a symmetric pattern with holes punched in it
        base = _sparse(rng, h, w, 0.5, 2)
        grid = np.maximum(base, base[::-1, ::-1])
        grid = np.maximum(grid, grid[:, ::-1])
        grid[rng.random((h, w)) < 0.3] = 0
    elif style == "frames":  # rectangle outlines (enclosed areas) and a few dots
        grid = _sparse(rng, h, w, 0.05, 2)
        for _ in range(int(rng.integers(1, 4))):
            top, left = rng.integers(0, h), rng.integers(0, w)
            bottom, right = rng.integers(top, h), rng.integers(left, w)
            c = rng.integers(1, 10)
            grid[top, left:right + 1] = grid[bottom, left:right + 1] = c
            grid[top:bottom + 1, left] = grid[top:bottom + 1, right] = c
    else:  # pragma: no cover
        raise AssertionError(style)
    return grid.astype(np.uint8)


STYLES = ["sparse", "dense", "noise", "background", "repeats", "symmetric", "frames", "uniform"]


def random_stack(seed, h, w, n=PER_SHAPE):
    """A seeded batch: one all-zero grid, one uniform grid, a duplicate, then random styles."""
    rng = np.random.default_rng(seed)
    grids = [random_grid(rng, h, w, "zero"), random_grid(rng, h, w, "uniform")]
    while len(grids) < n:
        grids.append(random_grid(rng, h, w, STYLES[len(grids) % len(STYLES)]))
    grids.append(grids[-1].copy())  # the same grid twice in one batch
    order = rng.permutation(len(grids))
    return np.stack([grids[i] for i in order])


STACKS = {shape: random_stack(1000 + i, *shape) for i, shape in enumerate(SHAPES)}


# --------------------------------------------------------------------------------------------------
# The check
# --------------------------------------------------------------------------------------------------

def _caller(prim):
    """``fn(xp, stack, *args)`` for any primitive, whatever its layout (through Transform)."""
    return lambda xp, stack, *args: Transform(prim, args)(xp, stack)


def check_batch_matches_single(fn, name, args, stack):
    """Run ``fn(np, stack, *args)`` and compare every grid with ``dsl.<name>(grid, *args)``."""
    n = stack.shape[0]
    before = stack.copy()
    parts = as_parts(np, fn(np, stack, *args), n)
    np.testing.assert_array_equal(stack, before, err_msg=f"{name}{args} modified its input")
    single = getattr(dsl, name)
    seen = np.zeros(n, dtype=bool)
    for idx, out in parts:
        idx = np.asarray(idx)
        assert idx.ndim == 1 and np.issubdtype(idx.dtype, np.integer)
        assert len(np.unique(idx)) == len(idx), f"{name}{args}: a grid twice in one part"
        assert ((idx >= 0) & (idx < n)).all()
        assert not seen[idx].any(), f"{name}{args}: a grid in two parts"
        seen[idx] = True
        assert out.ndim == 3 and out.shape[0] == len(idx), (name, args, out.shape, len(idx))
        assert out.dtype == np.uint8, (name, args, out.dtype)
        assert 1 <= out.shape[1] <= MAX_SIDE and 1 <= out.shape[2] <= MAX_SIDE, (name, args, out.shape)
        assert int(out.max()) <= 9, (name, args)
        for k, i in enumerate(idx.tolist()):
            alone = single(stack[i].copy(), *args)
            assert alone.shape == out[k].shape and np.array_equal(alone, out[k]), (
                f"{name}{args}: grid {i} of a {stack.shape} batch\n{stack[i]}\n"
                f"batched gave\n{out[k]}\nalone gave\n{alone}")
    for i in np.nonzero(~seen)[0].tolist():
        try:
            alone = single(stack[i].copy(), *args)
        except ValueError:
            continue
        pytest.fail(f"{name}{args}: grid {i} of a {stack.shape} batch has no batched result but "
                    f"alone gives\n{alone}\ninput\n{stack[i]}")
    return seen


@pytest.mark.parametrize("t", TRANSFORMS, ids=str)
def test_batch_matches_single_grid_face(t):
    for shape, stack in STACKS.items():
        check_batch_matches_single(_caller(t.primitive), t.name, t.args, stack)


@pytest.mark.parametrize("mapping", [{1: 2, 2: 1}, {0: 5, 5: 0, 9: 9}, {}, {c: 9 - c for c in range(10)}],
                         ids=str)
def test_batch_matches_single_grid_face_colormap(mapping):
    for stack in STACKS.values():
        check_batch_matches_single(_caller(PRIMITIVES["colormap"]), "colormap", (mapping,), stack)


def test_batch_of_one():
    for t in TRANSFORMS:
        check_batch_matches_single(_caller(t.primitive), t.name, t.args, STACKS[(3, 5)][:1])


@pytest.mark.parametrize("t", [pytest.param(t, id=str(t)) for t in TRANSFORMS])
def test_empty_batch(t):
    """A batch of zero grids (every grid of a shape already dropped): nothing to do, no crash."""
    parts = as_parts(np, t(np, np.zeros((0, 4, 6), dtype=np.uint8)), 0)
    for idx, out in parts:
        assert len(idx) == 0 and out.shape[0] == 0, str(t)


def test_no_result_and_multi_shape_cases_are_exercised():
    """The batches above really mix grids with and without a result, and several output shapes."""
    dropped, split = set(), set()
    for t in TRANSFORMS:
        for stack in STACKS.values():
            parts = list(as_parts(np, t(np, stack), len(stack)))
            seen = np.zeros(len(stack), dtype=bool)
            for idx, _ in parts:
                seen[np.asarray(idx)] = True
            if (~seen).any() and seen.any():
                dropped.add(t.name)
            if len(parts) > 1:
                split.add(t.name)
    for name in ("crop_content", "crop_minority", "largest_object", "smallest_object",
                 "rarest_color_object", "compress"):
        assert name in dropped, name
    for name in ("crop_content", "crop_minority", "largest_object", "smallest_object",
                 "rarest_color_object", "compress", "dedup_lines"):
        assert name in split, name


def test_elementwise_primitives_on_one_flat_buffer():
    """``elementwise`` primitives may run on all grids of all shapes at once as one flat buffer."""
    stacks = list(STACKS.values())
    flat = np.concatenate([s.ravel() for s in stacks])[None, None, :]
    cases = [(t.primitive, t.args) for t in TRANSFORMS if t.primitive.elementwise]
    cases.append((PRIMITIVES["colormap"], ({3: 4, 4: 3, 0: 1},)))
    assert {p.name for p, _ in cases} >= {"recolor", "remove_color", "keep_color", "colormap"}
    for prim, args in cases:
        out = as_parts(np, prim.fn(np, flat, *args), 1)
        (idx, res), = out
        pieces = []
        for s in stacks:
            (i2, r2), = as_parts(np, prim.fn(np, s, *args), len(s))
            pieces.append(r2.ravel())
        np.testing.assert_array_equal(res.ravel(), np.concatenate(pieces), err_msg=prim.name)


# --------------------------------------------------------------------------------------------------
# ``pad``: primitives declared padding-indifferent run on grids of mixed shapes zero-padded
# (bottom and right) to one size; each grid's result must be what it gives alone, unpadded.
# --------------------------------------------------------------------------------------------------

PAD_TRANSFORMS = [t for t in TRANSFORMS if t.primitive.pad]


def mixed_padded_stack(seed, side):
    """Grids of several shapes (all <= side) zero-padded bottom-right into one (n, side, side) stack."""
    rng = np.random.default_rng(seed)
    shapes = [s for s in SHAPES if s[0] <= side and s[1] <= side]
    grids = []
    for k, (h, w) in enumerate(shapes):
        grids.append(random_grid(rng, h, w, "zero"))
        for style in STYLES:
            grids.append(random_grid(rng, h, w, style))
    rng.shuffle(grids)
    arr = np.zeros((len(grids), side, side), dtype=np.uint8)
    for i, grid in enumerate(grids):
        arr[i, :grid.shape[0], :grid.shape[1]] = grid
    return grids, arr


PADDED = {side: mixed_padded_stack(77 + side, side) for side in (12, 30)}


def test_pad_declarations():
    names = {t.name for t in PAD_TRANSFORMS}
    assert {"crop_content", "largest_object", "fill_enclosed", "rays"} <= names
    assert all(t.primitive.pad in ("inplace", "crop") for t in PAD_TRANSFORMS)
    # Primitives whose answer depends on the grid's size must not be declared padding-indifferent
    # (they take the real sides instead: layout "padded").
    for name in ("crop_minority", "gravity", "rot90", "flip_lr", "symmetrize", "compress",
                 "dedup_lines", "overlay_halves", "tile", "mirror_lr"):
        assert PRIMITIVES[name].pad is None, name


def test_primitive_rejects_unknown_pad():
    from solvers.registry import primitive

    with pytest.raises(ValueError):
        primitive(pad="sideways")


def check_padded_result(t, single, grids, res, crop: bool):
    """Each grid's part of a :class:`Padded` result equals its result alone (none: not valid),
    with zeros outside it; a ``crop`` also lies inside its input grid."""
    for i, grid in enumerate(grids):
        try:
            alone = single(grid, *t.args)
        except ValueError:
            assert not bool(res.valid[i]), f"{t}: grid {i} has a result only when padded"
            continue
        assert bool(res.valid[i]), f"{t}: grid {i} lost its result when padded"
        h, w = int(res.h[i]), int(res.w[i])
        if crop:
            assert 1 <= h <= grid.shape[0] and 1 <= w <= grid.shape[1], str(t)
        np.testing.assert_array_equal(res.arr[i, :h, :w], alone, err_msg=f"{t} grid {i}")
        assert not res.arr[i, h:, :].any() and not res.arr[i, :, w:].any(), (
            f"{t}: non-zero cells outside the result of grid {i}")


@pytest.mark.parametrize("t", PAD_TRANSFORMS, ids=str)
def test_padding_indifferent_primitives(t):
    single = getattr(dsl, t.name)
    for side, (grids, arr) in PADDED.items():
        before = arr.copy()
        res = t(np, arr)
        np.testing.assert_array_equal(arr, before)
        if t.primitive.pad == "inplace":
            assert not isinstance(res, (Parts, Padded)), str(t)
            assert res.shape == arr.shape and res.dtype == np.uint8, str(t)
            for i, grid in enumerate(grids):
                h, w = grid.shape
                np.testing.assert_array_equal(res[i, :h, :w], single(grid, *t.args),
                                              err_msg=f"{t} on grid {i} padded to {side}")
        else:
            assert isinstance(res, Padded), str(t)
            assert res.arr.dtype == np.uint8 and res.arr.shape[0] == len(grids)
            check_padded_result(t, single, grids, res, crop=True)


def test_as_parts_of_padded_groups_by_shape():
    arr = np.zeros((4, 3, 3), dtype=np.uint8)
    arr[0, :1, :2] = [[1, 2]]
    arr[1, :2, :2] = [[3, 0], [0, 4]]
    arr[3, :1, :2] = [[5, 6]]
    padded = Padded(arr, np.array([1, 2, 3, 1]), np.array([2, 2, 3, 2]),
                    np.array([True, True, False, True]))
    parts = {tuple(np.asarray(idx).tolist()): out.tolist() for idx, out in as_parts(np, padded, 4)}
    assert parts == {(0, 3): [[[1, 2]], [[5, 6]]], (1,): [[[3, 0], [0, 4]]]}


# --------------------------------------------------------------------------------------------------
# Hypothesis: arbitrary shapes and batch sizes, grids biased towards background
# --------------------------------------------------------------------------------------------------

CELL = st.sampled_from([0, 0, 0, 0, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9])


@st.composite
def batches(draw):
    h = draw(st.integers(1, 12))
    w = draw(st.integers(1, 12))
    n = draw(st.integers(1, 5))
    return draw(hnp.arrays(np.uint8, (n, h, w), elements=CELL))


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(t=st.sampled_from(TRANSFORMS), stack=batches())
def test_batch_matches_single_grid_face_hypothesis(t, stack):
    check_batch_matches_single(_caller(t.primitive), t.name, t.args, stack)


# --------------------------------------------------------------------------------------------------
# ``layout="padded"``: primitives that take the real sides run on grids of mixed shapes padded into
# one stack; each grid's result must be what it gives alone.
# --------------------------------------------------------------------------------------------------

LAYOUT_TRANSFORMS = [t for t in TRANSFORMS if t.primitive.layout == "padded"]


@pytest.mark.parametrize("t", LAYOUT_TRANSFORMS, ids=str)
def test_padded_layout_primitives_on_mixed_shapes(t):
    single = getattr(dsl, t.name)
    for side, (grids, arr) in PADDED.items():
        h = np.array([g.shape[0] for g in grids])
        w = np.array([g.shape[1] for g in grids])
        before = arr.copy()
        res = t.padded(np, arr, h, w)
        np.testing.assert_array_equal(arr, before)
        assert isinstance(res, Padded) and res.arr.dtype == np.uint8, str(t)
        check_padded_result(t, single, grids, res, crop=False)


def test_primitives_use_only_calls_cupy_has():
    """CuPy lacks ufunc ``accumulate`` (except add), ``ufunc.at`` for most ufuncs, ``repeat`` with
    an array of counts and sort ``kind=``: the DSL uses the helpers in solvers.xp instead."""
    import pathlib
    import re

    folder = pathlib.Path(dsl.__file__).parent / "primitives"
    bad = re.compile(r"\.(maximum|minimum|logical_or|logical_and|bitwise_or)\.accumulate\(|\w\.at\(|kind=")
    for path in sorted(folder.glob("*.py")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            assert not bad.search(line), f"{path.name}:{n}: {line.strip()}"


# --------------------------------------------------------------------------------------------------
# The same on real ARC grids: every size-bucketed transform (``pad`` or ``layout="padded"``) on one
# stack of train grids of many shapes, padded to 30 x 30, against each grid alone.
# --------------------------------------------------------------------------------------------------

def _arc_grids(count=260):
    from pipeline.run.tasks import load_tasks

    tasks, _ = load_tasks("arc1-train", 0)
    grids = [g for t in tasks for g in t.train_inputs + t.train_outputs + t.test_inputs]
    picked = np.random.default_rng(3).choice(len(grids), size=count, replace=False)
    grids = [np.array(grids[i]) for i in picked]
    arr = np.zeros((len(grids), MAX_SIDE, MAX_SIDE), dtype=np.uint8)
    for i, grid in enumerate(grids):
        arr[i, :grid.shape[0], :grid.shape[1]] = grid
    return grids, arr


ARC_GRIDS = _arc_grids()
BUCKETED = [t for t in TRANSFORMS if t.primitive.pad or t.primitive.layout == "padded"]


@pytest.mark.parametrize("t", BUCKETED, ids=str)
def test_bucketed_primitives_on_real_arc_grids(t):
    grids, arr = ARC_GRIDS
    single = getattr(dsl, t.name)
    h = np.array([g.shape[0] for g in grids])
    w = np.array([g.shape[1] for g in grids])
    res = t.padded(np, arr, h, w)
    if t.primitive.pad == "inplace":
        for i, grid in enumerate(grids):
            np.testing.assert_array_equal(res[i, :grid.shape[0], :grid.shape[1]], single(grid, *t.args),
                                          err_msg=f"{t} on ARC grid {i}")
    else:
        check_padded_result(t, single, grids, res, crop=t.primitive.pad == "crop")


def test_real_arc_grids_give_results_for_most_bucketed_primitives():
    """The check above is not vacuous: most of those transforms give a result on some ARC grid."""
    grids, arr = ARC_GRIDS
    h = np.array([g.shape[0] for g in grids])
    w = np.array([g.shape[1] for g in grids])
    with_result = 0
    for t in BUCKETED:
        res = t.padded(np, arr, h, w)
        with_result += bool(t.primitive.pad == "inplace" or np.asarray(res.valid).any())
    assert with_result >= 0.9 * len(BUCKETED)


def test_max_sides_bound_the_grids_that_give_a_result():
    """A transform's ``max_sides`` is exact: a grid one row or column larger gives no result (the
    search skips such grids), and one of the largest sides does give one."""
    from solvers.batch import MAX_SIDE, as_parts
    from solvers.primitives import transforms

    rng = np.random.default_rng(4)
    bounded = [t for t in transforms() if t.max_sides is not None]
    assert {t.name for t in bounded} >= {"upscale", "tile", "fractal", "mirror_4", "rotations_4"}
    for t in bounded:
        mh, mw = t.max_sides
        shapes = [(mh + 1, mw), (mh, mw + 1)]
        for h, w in shapes:
            if h > MAX_SIDE or w > MAX_SIDE:
                continue
            batch = rng.integers(1, 10, (8, h, w)).astype(np.uint8)  # no zeros: every colour rule applies
            assert not as_parts(np, t(np, batch), 8).items, f"{t} on {h} x {w}"
        batch = rng.integers(1, 10, (8, mh, mw)).astype(np.uint8)
        if t.name == "fractal_by_major":
            batch[:] = 1  # one colour: its cells are the major colour's
        assert as_parts(np, t(np, batch), 8).items, f"{t} on {mh} x {mw}"
