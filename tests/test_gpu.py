"""CPU/GPU equality: every primitive, every CUDA kernel and the whole search give identical results
on NumPy (array calls) and on the GPU's path (CuPy with the kernels).

Each test runs on two devices (the ``dev`` fixture):

* ``cupy``: a real GPU. Marked ``gpu``; skipped (with the reason) where CuPy or a CUDA device is
  missing.
* ``emulated``: the same kernels compiled for the CPU and launched on NumPy arrays by
  ``tests/cuda_emulator.py`` (runs in CI). It checks what the kernels compute, their arguments'
  types and their barriers; not CuPy's own array calls, nor timing.

The reference is always NumPy's array calls (``dev.reference()`` switches the kernels off).
"""
from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Callable

import numpy as np
import pytest

import cuda_emulator
from pipeline.run.devices import DeviceError, probe_gpu

try:
    probe_gpu()
    import cupy
    GPU_REASON = None
except DeviceError as exc:
    cupy = None
    GPU_REASON = f"no usable GPU: {str(exc).splitlines()[0][:200]}"


@dataclass
class Device:
    """Where the GPU's path runs: its array module and the moves to and from the host."""

    name: str
    xp: Any
    asarray: Callable
    asnumpy: Callable

    @contextlib.contextmanager
    def reference(self):
        """NumPy's array calls: the kernels switched off (the emulator would run them on NumPy)."""
        old = os.environ.get("ARCBATT_NO_KERNELS")
        os.environ["ARCBATT_NO_KERNELS"] = "1"
        try:
            yield
        finally:
            if old is None:
                del os.environ["ARCBATT_NO_KERNELS"]
            else:
                os.environ["ARCBATT_NO_KERNELS"] = old


@pytest.fixture(params=[pytest.param("cupy", marks=pytest.mark.gpu), "emulated"])
def dev(request, monkeypatch):
    """The GPU's path on a real GPU (``cupy``) or on the CPU through the CUDA emulator."""
    monkeypatch.delenv("ARCBATT_NO_KERNELS", raising=False)
    if request.param == "cupy":
        if GPU_REASON is not None:
            pytest.skip(GPU_REASON)
        return Device("cupy", cupy, cupy.asarray, cupy.asnumpy)
    reason = cuda_emulator.available()
    if reason is not None:
        pytest.skip(reason)
    cuda_emulator.install(monkeypatch)
    return Device("emulated", np, np.array, np.asarray)


def _parts_host(xp, result, n):
    from solvers.batch import as_parts
    from pipeline.search.device import to_host

    parts = as_parts(xp, result, n)
    out = {}
    for idx, arr in parts:
        for i, g in zip(to_host(idx).tolist(), to_host(arr)):
            out[i] = g
    return out


@pytest.mark.parametrize("shape", [(3, 5), (7, 7), (12, 9), (30, 30)])
def test_every_transform_identical_on_numpy_and_cupy(dev, shape):
    from solvers.primitives import transforms

    rng = np.random.default_rng(sum(shape))
    h, w = shape
    batch = (rng.integers(1, 10, (64, h, w)) * (rng.random((64, h, w)) < 0.4)).astype(np.uint8)
    for t in transforms():
        with dev.reference():
            cpu = _parts_host(np, t(np, batch), 64)
        gpu = _parts_host(dev.xp, t(dev.xp, dev.asarray(batch)), 64)
        assert cpu.keys() == gpu.keys(), str(t)
        for i in cpu:
            assert np.array_equal(cpu[i], gpu[i]), f"{t} grid {i}"


def test_bucketed_transforms_identical_on_numpy_and_cupy_on_arc_grids(dev):
    """The GPU's path: every padding-aware transform on one padded stack of real ARC grids of many
    shapes (per-grid sides), NumPy against CuPy."""
    from test_dsl_batch import ARC_GRIDS, BUCKETED

    grids, arr = ARC_GRIDS
    h = np.array([g.shape[0] for g in grids])
    w = np.array([g.shape[1] for g in grids])
    n = len(grids)
    for t in BUCKETED:
        with dev.reference():
            cpu = t.padded(np, arr, h, w)
        gpu = t.padded(dev.xp, dev.asarray(arr), dev.asarray(h), dev.asarray(w))
        if t.primitive.pad == "inplace":
            assert np.array_equal(cpu, dev.asnumpy(gpu)), str(t)
            continue
        cpu, gpu = _parts_host(np, cpu, n), _parts_host(dev.xp, gpu, n)
        assert cpu.keys() == gpu.keys(), str(t)
        for i in cpu:
            assert np.array_equal(cpu[i], gpu[i]), f"{t} ARC grid {i}"


@pytest.mark.parametrize("one_bucket_cells", [0, 10**12])
def test_search_identical_on_cpu_and_gpu(dev, monkeypatch, one_bucket_cells):
    """Also with the GPU's small-block single bucket switched off (0) or used for every block.
    Emulated: NumPy with the kernels and the GPU's bucketing of every primitive (the single bucket
    is CuPy's alone), on fewer tasks."""
    import functools

    import pipeline.search.boards
    import pipeline.search.distinct
    import pipeline.search.driver
    import pipeline.search.problem
    from pipeline.search.shards import run_search
    from pipeline.run.tasks import load_tasks

    if dev.name == "emulated" and one_bucket_cells:
        pytest.skip("the single bucket is used on CuPy only")
    tasks, _ = load_tasks("arc1-train", 30 if dev.name == "cupy" else 10)
    with dev.reference():
        cpu = run_search(tasks, 2)
    monkeypatch.setattr(pipeline.search.problem, "GPU_ONE_BUCKET_CELLS", one_bucket_cells)
    # Every block of two or more levels applies the transforms to its distinct grids (results do
    # not depend on it).
    monkeypatch.setitem(pipeline.search.distinct.DISTINCT_MIN_ITEMS, "gpu", 0)
    monkeypatch.setattr(pipeline.search.distinct, "DISTINCT_MIN_REPEATS", 0.0)
    counted = []  # crops' outputs whose grids counted how many of the block's they stand for
    real_mapped = pipeline.search.distinct._DistinctGrids._mapped
    monkeypatch.setattr(pipeline.search.distinct._DistinctGrids, "_mapped", lambda self, parts: (
        counted.extend(p.items.represents for p in parts if p.items.represents is not None),
        real_mapped(self, parts))[1])
    if not one_bucket_cells:  # the boards' picks outgrow their room at first: packed again, bigger
        monkeypatch.setattr(pipeline.search.driver, "PICK_ROOM", 1)
        monkeypatch.setattr(pipeline.search.boards, "PICK_ROOM", 1)
        monkeypatch.setattr(pipeline.search.boards, "PICK_ROOM_ALL", 0)
    selected = []  # (offers, kept) of each absorb's selection on the device
    real_select = pipeline.search.boards.offers_that_may_enter
    monkeypatch.setattr(pipeline.search.boards, "offers_that_may_enter", lambda xp, tasks, groups, *a: (
        lambda keep: (selected.append((int((groups >= 0).sum()), int(keep.sum()))), keep)[1])(
        real_select(xp, tasks, groups, *a)))
    if dev.name == "cupy":
        gpu = run_search(tasks, 2, gpus=[0])
    else:
        monkeypatch.setattr(pipeline.search.shards, "Search", functools.partial(pipeline.search.shards.Search, bucket_all=True))
        before = cuda_emulator.launch_counts()
        gpu = run_search(tasks, 2)
        unused = {k for k, count in cuda_emulator.launch_counts().items() if count == before[k]}
        assert unused == set(), "kernels the search never launched (test them elsewhere, or drop them)"
    assert cpu.states == gpu.states
    assert cpu.programs == gpu.programs
    assert counted
    # Only the offers that can enter the boards crossed: far fewer on the first levels.
    assert selected and sum(k for _, k in selected) < sum(o for o, _ in selected) / 2, selected


@pytest.mark.gpu
@pytest.mark.skipif(GPU_REASON is not None, reason=GPU_REASON or "")
def test_run_card_gpu_and_cpu_give_identical_submissions(tmp_path):
    import subprocess
    import sys

    outs = []
    for flag in ("-m", "-g"):
        out = tmp_path / flag.strip("-")
        subprocess.run([sys.executable, "-m", "pipeline", "run", "-c", "12", flag, "-O", str(out),
                        "-C", f"disk:{tmp_path / ('cache' + flag)}", "-D", "2"], check=True, timeout=600)
        outs.append((out / "submission.json").read_bytes())
    assert outs[0] == outs[1]


@pytest.mark.parametrize("density", [0.1, 0.5, 0.9])
def test_kernels_match_their_array_call_versions(dev, density):
    """Each CUDA kernel of solvers.kernels against the NumPy array calls it replaces, on random
    stacks from sparse to dense (long winding components), of several shapes."""
    from solvers import kernels
    from solvers.batch import colour_counts
    from solvers.primitives.draw import fill_bbox
    from solvers.primitives.objects import label_objects, pick_per_grid
    from solvers.primitives.regions import enclosed_background

    rng = np.random.default_rng(int(density * 10))
    for h, w in [(1, 1), (1, 30), (5, 7), (30, 30), (17, 29)]:
        g = (rng.integers(1, 4, (50, h, w)) * (rng.random((50, h, w)) < density)).astype(np.uint8)
        dg = dev.asarray(g)
        for conn in (4, 8):
            for by_colour in (True, False):
                with dev.reference():
                    want = label_objects(np, g, conn, by_colour)
                *got, chosen = [dev.asnumpy(a) for a in kernels.label_objects(dev.xp, dg, conn, by_colour)]
                # The largest and smallest object of each grid, picked by the labelling's kernels.
                for col, largest in ((0, True), (1, False)):
                    with dev.reference():
                        want_pick = pick_per_grid(np, want[1], -want[2] if largest else want[2], want[3], g.shape)
                    picked = chosen[:, col]
                    assert np.array_equal(picked > 0, want_pick > 0)
                    assert np.array_equal(got[3][picked], want[3][want_pick])
                # Numbering may differ: compare each cell's object by its first cell, and sizes.
                for (labels, owner, sizes, first) in (want, got):
                    assert labels.max() == len(owner) - 1 == len(first) - 1
                assert np.array_equal(want[3][want[0]], got[3][got[0]])
                assert np.array_equal(want[2][want[0]], got[2][got[0]])
                assert want[2][0] == got[2][0]
                assert np.array_equal(np.sort(want[1]), np.sort(got[1]))
                # Numbered within each grid (object_roots): the same objects, the same picks.
                local, _, objects, picks = (dev.asnumpy(a) for a in kernels.object_roots(dev.xp, dg, conn, by_colour))
                labels = got[0]
                assert np.array_equal(local > 0, labels > 0)
                assert np.array_equal(objects, np.bincount(got[1][1:], minlength=len(g)))
                for col in (0, 1):
                    for i in range(len(g)):
                        assert np.array_equal(local[i] == picks[i, col] if picks[i, col] else local[i] < 0,
                                              labels[i] == chosen[i, col] if chosen[i, col] else labels[i] < 0)
                # Same partition: within a grid, two cells share a local number iff they share a label.
                pairs = np.unique(np.stack([np.repeat(np.arange(len(g)), g[0].size), local.ravel(),
                                            labels.ravel()]), axis=1)
                assert len(np.unique(pairs[:2], axis=1).T) == len(np.unique(pairs[[0, 2]], axis=1).T) == pairs.shape[1]
        with dev.reference():
            want_inner, want_counts, want_boxes = enclosed_background(np, g), colour_counts(np, g), fill_bbox(np, g)
        assert np.array_equal(dev.asnumpy(kernels.enclosed_background(dev.xp, dg)), want_inner)
        assert np.array_equal(dev.asnumpy(kernels.colour_counts(dev.xp, dg)), want_counts)
        labels, _, _, first, _ = kernels.label_objects(dev.xp, dg, 8, True)
        assert np.array_equal(dev.asnumpy(kernels.fill_boxes(dev.xp, dg, labels, first)), want_boxes)


def test_coordinate_map_kernels_give_each_primitives_grids_and_hashes(dev):
    """Every coordinate-map transform (``coord_map``) through the map kernels, all of them in one
    run as the search applies them (rigid maps in one launch, the others counted then taken), on a
    flat layout of real ARC grids of many shapes and of grids up to 30 x 30: the grids the
    primitive gives on NumPy, their hashes, none where it gives none, and each map's weighed count."""
    from pipeline.search.hashing import GridHasher
    from pipeline.search.problem import Items
    from pipeline.search import kernels
    from solvers.batch import as_parts
    from solvers.coord_maps import RIGID_MAPS
    from solvers.primitives import transforms
    from test_dsl_batch import ARC_GRIDS

    rng = np.random.default_rng(7)
    grids = list(ARC_GRIDS[0]) + [rng.integers(0, 10, (h, w)).astype(np.uint8)
                                  for h, w in [(30, 30), (1, 1), (15, 10), (10, 15), (9, 6), (1, 30), (6, 4)]]
    n = len(grids)
    h = np.array([g.shape[0] for g in grids], dtype=np.int64)
    w = np.array([g.shape[1] for g in grids], dtype=np.int64)
    start = np.cumsum(h * w) - h * w
    cells = np.concatenate([g.reshape(-1) for g in grids])
    weight = rng.integers(1, 5, n).astype(np.int64)
    hasher = GridHasher(dev.xp, seed=3)
    with dev.reference():
        want_hash = GridHasher(np, seed=3)
        want = {}
        for t in transforms():
            if t.coord_map is not None:
                want[str(t)] = [_parts_host(np, t(np, g[None]), 1).get(0) for g in grids]
    d = [dev.asarray(a) for a in (cells, start, h, w, np.arange(n, dtype=np.int64), np.full(n, 5, dtype=np.int64))]
    items = Items(dev.xp, *d[:1], d[4], d[5], d[2], d[3], d[1])
    maps = [t for t in transforms() if t.coord_map is not None]
    rigid = [t for t in maps if t.coord_map[0] in RIGID_MAPS]
    others = [t for t in maps if t not in rigid]
    assert len(rigid) == 7 and len(others) >= 10

    out = dev.xp.zeros((len(rigid), cells.shape[0]), dtype=np.uint8)
    table = kernels.coord_map_table(dev.xp, [t.coord_map for t in rigid])
    hashes = dev.asnumpy(hasher.map_copy(items.cells, items.start, items.h, items.w, table, out))
    out = dev.asnumpy(out)
    for k, t in enumerate(rigid):
        for i, g in enumerate(grids):
            oh, ow = want[str(t)][i].shape
            assert oh * ow == h[i] * w[i]
            got = out[k, start[i]:start[i] + oh * ow].reshape(oh, ow)
            assert np.array_equal(got, want[str(t)][i]), f"{t} grid {i}"
            assert hashes[k, i] == want_hash.grids(want[str(t)][i][None])[0], f"{t} grid {i}"

    table = kernels.coord_map_table(dev.xp, [t.coord_map for t in others])
    ok, kept, run_cells, totals = kernels.map_counts(dev.xp, items.h, items.w, table, dev.asarray(weight))
    totals = dev.asnumpy(totals)
    K = len(others)
    dst = dev.xp.zeros(int(totals[K:2 * K].sum()), dtype=np.uint8)
    oh, ow, ostart, ostate, osample, ohash = (dev.asnumpy(a) for a in hasher.map_take_copy(
        items, table, (ok, kept, run_cells), int(totals[:K].sum()), dst))
    dst = dev.asnumpy(dst)
    j = base = 0
    for k, t in enumerate(others):
        having = [i for i in range(n) if want[str(t)][i] is not None]
        assert totals[k] == len(having), str(t)
        assert totals[2 * K + k] == weight[having].sum(), str(t)
        size = 0
        for i in having:
            g = want[str(t)][i]
            assert (oh[j], ow[j], ostate[j], osample[j]) == (*g.shape, i, 5), f"{t} grid {i}"
            assert ostart[j] == size, f"{t} grid {i}"
            got = dst[base + size:base + size + g.size].reshape(g.shape)
            assert np.array_equal(got, g), f"{t} grid {i}"
            assert ohash[j] == want_hash.grids(g[None])[0], f"{t} grid {i}"
            size += g.size
            j += 1
        assert totals[K + k] == size, str(t)
        base += size
    assert j == int(totals[:K].sum()) and any(totals[:K] < n)  # some maps drop grids


@pytest.mark.parametrize("n", [0, 1, 31, 1000, 300_000])
def test_sum_into_adds_a_sum_to_a_device_number(dev, n):
    """kernels.sum_into adds (or takes away) the sum of a bool or int64 vector, of any length
    (more values than its threads: they stride), to an int64 held on the device."""
    from solvers import kernels

    rng = np.random.default_rng(n)
    flags = rng.random(n) < 0.3
    values = rng.integers(-(2**40), 2**40, n)
    out = dev.asarray(np.array([7, 5], dtype=np.int64))
    kernels.sum_into(dev.xp, dev.asarray(flags), out[:1])
    kernels.sum_into(dev.xp, dev.asarray(values), out[1:], negate=True)
    assert dev.asnumpy(out).tolist() == [7 + int(flags.sum()), 5 - int(values.sum())]


@pytest.mark.parametrize("n", [0, 1, 255, 1024, 1025, 5000, 1_100_000])
@pytest.mark.parametrize("dtype", ["bool", "int32", "int64"])
@pytest.mark.parametrize("summed_blocks", [4096, 3])
def test_cumsum_kernels_give_numpys_running_sums(dev, monkeypatch, n, dtype, summed_blocks):
    """kernels.cumsum (block totals, then each block's values from the totals of the blocks before
    it, or past ``SCAN_SUMMED_BLOCKS`` blocks from their running sums, scanned recursively) gives
    NumPy's cumsum as int64, inclusive and exclusive, at block edges and past them, and for a
    non-contiguous view."""
    from solvers import kernels

    monkeypatch.setattr(kernels, "SCAN_SUMMED_BLOCKS", summed_blocks)
    rng = np.random.default_rng(n)
    values = {"bool": rng.random(n) < 0.4, "int32": rng.integers(-1000, 1000, n, dtype=np.int32),
              "int64": rng.integers(-(2**40), 2**40, n)}[dtype]
    want = np.cumsum(values, dtype=np.int64)
    got = kernels.cumsum(dev.xp, dev.asarray(values))
    assert got.dtype == np.int64 and dev.asnumpy(got).tolist() == want.tolist()
    got = kernels.cumsum(dev.xp, dev.asarray(values), exclusive=True)
    assert got.dtype == np.int64 and dev.asnumpy(got).tolist() == (want - values).tolist()
    if n > 2:
        got = kernels.cumsum(dev.xp, dev.asarray(values)[::2])
        assert dev.asnumpy(got).tolist() == np.cumsum(values[::2], dtype=np.int64).tolist()


@pytest.mark.parametrize("n,keys", [(0, 5), (1, 1), (33, 3), (5000, 1024), (300_000, 40), (300_000, 1)])
def test_group_order_is_a_stable_argsort(dev, n, keys):
    """kernels.group_order (a counting sort over chunks, no sort) gives NumPy's stable argsort of
    keys in 0..1023 and where each key's run begins, for chunks of 256 to 512 items, keys that
    repeat within a warp's round, one key only, and every key."""
    from pipeline.search import kernels

    rng = np.random.default_rng(n + keys)
    key = rng.integers(0, keys, n)
    if n > 1000:
        key[n // 3: n // 3 + 700] = keys - 1  # a long run of one key across chunks
    order, begins = kernels.group_order(dev.xp, dev.asarray(key))
    counts = np.bincount(key, minlength=kernels.GROUP_KEYS)
    assert dev.asnumpy(order).tolist() == np.argsort(key, kind="stable").tolist()
    assert dev.asnumpy(begins).tolist() == (np.cumsum(counts) - counts).tolist()


@pytest.mark.parametrize("parts", [1, 3, 16, 37])
def test_joined_items_match_array_calls(dev, parts):
    """concat_items of many parts (more than one launch of merge_items holds, empty parts among
    them), states shifted per part and cell starts by where each part's cells begin, against the
    array calls; concat_hashed_items joins the items' hashes too."""
    from pipeline.search.problem import Items, concat_hashed_items, concat_items

    rng = np.random.default_rng(parts)
    items, offsets, hashes = [], [], []
    for j in range(parts):
        m = 0 if j % 5 == 3 else int(rng.integers(1, 40))
        h, w = rng.integers(1, 6, m), rng.integers(1, 6, m)
        sizes = h * w
        cells = rng.integers(0, 10, int(sizes.sum())).astype(np.uint8)
        items.append([cells, rng.integers(0, 50, m), rng.integers(0, 4, m), h, w, np.cumsum(sizes) - sizes])
        offsets.append(int(rng.integers(0, 1000)))
        hashes.append(rng.integers(0, 2**63, m, dtype=np.int64).astype(np.uint64) * np.uint64(3))
    joined = []
    for ref in (True, False):
        with (dev.reference() if ref else contextlib.nullcontext()):
            xp = np if ref else dev.xp
            got = []
            for with_hashes in (False, True):
                parts_ = [Items(xp, *(xp.asarray(a) for a in part)) for part in items]
                if with_hashes:
                    out, hv = concat_hashed_items(xp, parts_, [xp.asarray(a) for a in hashes], offsets)
                else:
                    out, hv = concat_items(xp, parts_, offsets), xp.zeros(0, dtype=xp.uint64)
                got += [dev.asnumpy(a) if not ref else a for a in (out.cells, out.state, out.sample, out.h, out.w,
                                                                   out.start, hv)]
            joined.append(got)
    assert np.array_equal(joined[0][-1], np.concatenate(hashes))
    for want, got in zip(*joined):
        assert np.array_equal(want, got)


def test_layout_kernels_match_array_calls(dev, monkeypatch):
    """copy_rows (layout changes, gathers of grids) and copy_hash_rows (copying grids out of
    padded stacks and hashing them) against the array-call paths they replace, on real ARC grids
    of many shapes."""
    from pipeline.search.problem import Items, PaddedLayout
    from test_dsl_batch import ARC_GRIDS

    grids, _ = ARC_GRIDS
    rng = np.random.default_rng(7)
    h = np.array([g.shape[0] for g in grids], dtype=np.int64)
    w = np.array([g.shape[1] for g in grids], dtype=np.int64)
    sizes = h * w
    cells = np.concatenate([g.ravel() for g in grids]).astype(np.uint8)
    n = len(grids)
    gpu = Items(dev.xp, dev.asarray(cells), dev.xp.arange(n), dev.xp.zeros(n, dtype=dev.xp.int64), dev.asarray(h),
                dev.asarray(w), dev.asarray(np.cumsum(sizes) - sizes))
    order = dev.asarray(rng.permutation(n)[: n // 2])
    noise = None
    results = []
    for switch in ("0", "1"):  # kernels, then the array calls (on the same GPU layout)
        monkeypatch.setenv("ARCBATT_NO_KERNELS", switch)
        gpu._padded = None
        lay = PaddedLayout(gpu)
        if noise is None:
            noise = dev.asarray(rng.integers(0, 10, lay.size).astype(np.uint8))
        results.append([dev.asnumpy(a) for a in (lay.buffer, lay.gather(noise), gpu.take(order).cells)])
    for got, want in zip(*results):
        assert np.array_equal(got, want)
    monkeypatch.setenv("ARCBATT_NO_KERNELS", "0")

    # Copying grids out of padded stacks and hashing them in one pass (copy_hash_rows), with
    # noise in the padding, against hashing the zero-padded stacks and the cells laid out as items.
    from pipeline.search.hashing import GridHasher

    hasher = GridHasher(dev.xp, 3)
    lay = PaddedLayout(gpu)
    copied = dev.xp.zeros(gpu.cells.shape[0], dtype=dev.xp.uint8)
    by_item = dev.xp.zeros(n, dtype=dev.xp.uint64)
    for bucket in lay.buckets:
        H, W, idx, _ = bucket
        hb, wb = lay.sides(bucket)
        stack = lay.stack(bucket)
        noisy = dev.xp.where(lay.real_mask(bucket), stack, dev.xp.uint8(7))
        got = hasher.copy_padded(noisy, lay.grid_bases(bucket), W, copied, gpu.start[idx], hb, wb)
        assert np.array_equal(dev.asnumpy(got), dev.asnumpy(hasher.padded(stack, hb, wb)))
        by_item[idx] = got
    assert np.array_equal(dev.asnumpy(copied), dev.asnumpy(gpu.cells))
    # Hashing only, of grids in the flat layout (rows packed).
    flat = hasher.copy_padded(gpu.cells, gpu.start, 0, None, None, gpu.h, gpu.w)
    assert np.array_equal(dev.asnumpy(flat), dev.asnumpy(by_item))


def test_scoring_kernels_give_every_absorb_the_array_calls_scores(dev, monkeypatch):
    """Search's scoring kernels (score_fit, score_cells, score_states) against its array calls, on
    the same inputs, for every absorb of a depth-2 search on real tasks (finished at once or later):
    every score of every new state (rank, solved, exact matches, score, colour table where learnt,
    its consistency, test key)."""
    import pipeline.search.driver
    from pipeline.search.shards import run_search
    from pipeline.run.tasks import load_tasks
    from pipeline.search.device import to_host

    Search = pipeline.search.driver.Search
    original_score, original_absorb, original_update = Search._score, Search._absorb_merged, Search._update_boards
    checked = {"absorbs": 0, "tables": 0, "solved": 0}
    inputs = {}  # id(out) -> (out, hv, level) of each absorb until its boards are updated

    def absorb(self, block, out, hv, merged, test_key, valid, key, level, *rest):
        inputs[id(out)] = (out, hv, level)
        return original_absorb(self, block, out, hv, merged, test_key, valid, key, level, *rest)

    def compared(self, block, out, new, got):
        _, hv, level = inputs.pop(id(out))
        with dev.reference():
            want = original_score(self, block, out, hv, got.test_key, new.dev, level)
        at = to_host(new.dev)
        for name, a, b in zip(got._fields, got, want):
            if name == "mapping":
                assert (a is None) == (b is None)
                if a is None:
                    continue
                learnt = to_host(want.cm_ok)[at]
                a, b = to_host(a)[at][learnt], to_host(b)[at][learnt]
                checked["tables"] += len(a)
            else:
                a, b = to_host(a)[at], to_host(b)[at]
            assert a.dtype == b.dtype, name
            assert np.array_equal(a, b), name
        checked["absorbs"] += 1
        checked["solved"] += int(to_host(want.solved)[at].sum())
        return original_update(self, block, out, new, got)

    monkeypatch.setattr(Search, "_absorb_merged", absorb)
    monkeypatch.setattr(Search, "_update_boards", compared)
    tasks, _ = load_tasks("arc1-train", 12 if dev.name == "cupy" else 6)
    run_search(tasks, 2, gpus=[0] if dev.name == "cupy" else None)
    assert checked["absorbs"] > 2 and checked["tables"] > 0 and checked["solved"] > 0, checked


@pytest.mark.parametrize("table", [{1: 5, 2: 5, 3: 5, 6: 6}, {1: 5, 2: 5, 3: 3, 6: 6}, {1: 0, 2: 0, 3: 0}])
def test_colour_tables_for_unseen_colours_identical_on_numpy_and_cupy(dev, table):
    """The score_states kernel sends a colour no train grid holds where the array calls send it
    (where most seen colours go, or nowhere), on a search whose best state learns the table."""
    from test_search import _recoloured_task

    from pipeline.search.shards import run_search

    task = _recoloured_task(table, 4)
    with dev.reference():
        cpu = run_search([task], 1)
    gpu = run_search([task], 1, gpus=[0] if dev.name == "cupy" else None)
    assert cpu.programs == gpu.programs
    assert cpu.programs[task.id][0].solved


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hash_key_set_gives_the_positions_of_sorted_runs(dev, seed):
    """The device's key table (HashKeySet) against the sorted runs (KeySet) on NumPy: batches with
    repeats within and across them, the key that marks an empty slot, and a table that starts
    tiny, so it is rehashed several times and probes long chains; some batches masked."""
    from pipeline.search.keyset import HashKeySet, KeySet
    from pipeline.search.kernels import KEY_EMPTY

    rng = np.random.default_rng(seed)
    table, runs = HashKeySet(dev.xp, slots=4), KeySet(np)
    assert table.keys.shape[0] == 5
    for size in (0, 1, 7, 40, 300, 2000, 50, 5000):
        pool = rng.integers(0, 2**64, 3000, dtype=np.uint64, endpoint=False)
        pool[:2] = [KEY_EMPTY, 0]
        keys = pool[rng.integers(0, rng.integers(1, 3001), size)]
        if size % 2:  # a mask leaves some positions out of the batch
            use = rng.random(size) < 0.7
            got = dev.asnumpy(table.add_new(dev.asarray(keys), dev.asarray(use)))
            want = runs.add_new(keys, use)
        else:
            got = dev.asnumpy(table.add_new(dev.asarray(keys)))
            want = runs.add_new(keys)
        assert got.tolist() == want.tolist()
        assert len(table) == len(runs)
    assert table.mask + 1 >= 2 * len(table)


def test_first_positions_on_the_device_match_numpy(dev):
    """Each key's first position (the distinct grids of a search block) from the device's hash
    table against NumPy's unique: repeats near and far, the key that marks an empty slot."""
    from pipeline.search.keyset import first_positions
    from pipeline.search.kernels import KEY_EMPTY

    rng = np.random.default_rng(5)
    for size in (0, 1, 2, 9, 1000, 6000):
        pool = rng.integers(0, 2**64, 700, dtype=np.uint64, endpoint=False)
        pool[:2] = [KEY_EMPTY, 0]
        keys = pool[rng.integers(0, 700, size)]
        want = np.array([int(np.nonzero(keys == k)[0][0]) for k in keys], dtype=np.int64)
        assert first_positions(np, keys).tolist() == want.tolist()
        assert dev.asnumpy(first_positions(dev.xp, dev.asarray(keys))).tolist() == want.tolist()


@pytest.mark.parametrize("n_tasks", [6, 1500])
def test_budget_on_the_device_matches_numpy(dev, n_tasks):
    """Each task's first ``budget - kept`` new states, worked out on the device (a counting sort of
    tasks, or a lexsort past its 1,024 keys) against NumPy; tasks full, crossing and with room."""
    from pipeline.search.blocks import within_budget

    rng = np.random.default_rng(n_tasks)
    tasks = rng.integers(0, n_tasks, 5000)
    kept = rng.integers(0, 12, n_tasks)
    with dev.reference():
        want = within_budget(tasks, kept, 8)
    got = within_budget(dev.asarray(tasks), dev.asarray(kept), 8, dev.xp)
    assert dev.asnumpy(got).tolist() == want.tolist()
    assert 0 < want.sum() < len(tasks)


@pytest.mark.parametrize("take_room", [None, 10])
def test_search_with_a_binding_budget_identical_on_cpu_and_gpu(dev, monkeypatch, take_room):
    """Each task keeps 20 states for the next level (the budget binds on the first level): the
    GPU's budget, applied on the device, keeps the states the CPU's keeps. With ``take_room``,
    copying more kept grids than that runs out of device memory: the device's path then takes
    the kept states in halves, with the same results."""
    import sys

    from pipeline.search.problem import Items, Problem
    from pipeline.search.driver import Search
    from pipeline.run.tasks import load_tasks

    failed = []
    if take_room is not None:
        real_take = Items.take

        def tight(self, order, *args, **kwargs):
            if sys._getframe(1).f_code.co_name == "_next_blocks_on_device" and len(order) > take_room:
                failed.append(len(order))
                raise MemoryError("simulated out of device memory")
            return real_take(self, order, *args, **kwargs)

        monkeypatch.setattr(Items, "take", tight)
    tasks, _ = load_tasks("arc1-train", 8)
    results = []
    for xp, ref in ((np, True), (dev.xp, False)):
        with (dev.reference() if ref else contextlib.nullcontext()):
            # Scoring after every transform: the budget's counts carry from absorb to absorb.
            search = Search(Problem(tasks, xp), states_per_task=20, absorb_cells=1)
            stats = search.run(2)
        results.append(([[(search.table.path(c.gid), round(c.rank, 6)) for c in b] for b in search.boards],
                         stats.states))
    assert results[0] == results[1]
    assert bool(failed) == (take_room is not None)


@pytest.mark.parametrize("step", ["map_copy_hash", "map_counts", "map_take_copy_hash", "crop_counts", "crop_take"])
def test_runs_out_of_memory_apply_each_transform_alone(dev, monkeypatch, step):
    """A run of coordinate maps (in the rigid maps' kernel, in counting the other maps' kept grids,
    or in taking them after the wait) or of one crop primitive's transforms (counting, or taking
    after the wait) that runs out of device memory is applied transform by transform instead, with
    the CPU's results. (A crop transform alone still runs: only runs fail here.)"""
    from pipeline.search.problem import Problem
    from pipeline.search.driver import Search
    from pipeline.run.tasks import load_tasks
    from pipeline.search import kernels

    failed = []
    real = getattr(kernels, step)
    in_a_run = {"crop_counts": lambda ok, size, n, *rest: int(ok.shape[0]) > n,
                "crop_take": lambda ok, oh, ow, addr, opitch, order, *rest: int(ok.shape[0]) > int(order.shape[0])}

    def tight(xp, *args, **kwargs):
        if step in in_a_run and not in_a_run[step](*args):
            return real(xp, *args, **kwargs)
        failed.append(step)
        raise MemoryError("simulated out of device memory")

    tasks, _ = load_tasks("arc1-train", 6)
    results = []
    for xp, ref in ((np, True), (dev.xp, False)):
        with (dev.reference() if ref else contextlib.nullcontext()):
            if not ref:
                monkeypatch.setattr(kernels, step, tight)
            # Every primitive on the GPU's padded buckets, as on CuPy (where crops run together).
            search = Search(Problem(tasks, xp), bucket_all=None if ref else True)
            stats = search.run(1)
        results.append(([[(search.table.path(c.gid), round(c.rank, 6)) for c in b] for b in search.boards],
                         stats.states))
    monkeypatch.setattr(kernels, step, real)
    assert results[0] == results[1]
    assert failed and stats.oom_splits >= len(failed)


def test_hash_key_set_without_memory_to_grow_goes_on_fuller_then_raises(dev):
    """A table that cannot double (simulated out-of-memory) frees memory, retries, then keeps
    its size while it stays under MAX_LOAD (the same positions as the sorted runs), then raises
    a MemoryError that says why."""
    from pipeline.search.keyset import HashKeySet, KeySet

    freed = []
    table, runs = HashKeySet(dev.xp, slots=64, free_memory=lambda: freed.append(1)), KeySet(np)
    grow = table._grow

    def no_room(slots):
        if slots > 64:
            raise MemoryError("simulated out-of-memory")
        grow(slots)

    table._grow = no_room
    rng = np.random.default_rng(5)
    keys = rng.integers(0, 2**63, 57, dtype=np.uint64)  # 57 of 64 slots: above 3/4, below 0.9
    assert dev.asnumpy(table.add_new(dev.asarray(keys))).tolist() == runs.add_new(keys).tolist()
    assert table.mask + 1 == 64 and len(freed) == 1
    with pytest.raises(MemoryError, match="key table"):
        table.add_new(dev.asarray(rng.integers(0, 2**63, 8, dtype=np.uint64)))


def test_grid_and_state_hashes_identical_on_numpy_and_cupy(dev):
    """The hashing kernels (grid projections, splitmix64) give NumPy's hashes bit for bit."""
    from pipeline.search.hashing import GridHasher

    rng = np.random.default_rng(3)
    cpu, gpu = GridHasher(np, 5), GridHasher(dev.xp, 5)
    for h, w in [(1, 1), (3, 7), (30, 30)]:
        g = rng.integers(0, 10, (40, h, w)).astype(np.uint8)
        with dev.reference():
            want = cpu.grids(g)
        assert np.array_equal(want, dev.asnumpy(gpu.grids(dev.asarray(g))))
        # Zero-padded grids of real sides up to the stack's: the same hashes as alone.
        hh, ww = rng.integers(1, h + 1, 40), rng.integers(1, w + 1, 40)
        g = (g * ((np.arange(h)[None, :, None] < hh[:, None, None])
                  & (np.arange(w)[None, None, :] < ww[:, None, None]))).astype(np.uint8)
        with dev.reference():
            want = cpu.padded(g, hh, ww)
        assert np.array_equal(want, dev.asnumpy(gpu.padded(dev.asarray(g), dev.asarray(hh), dev.asarray(ww))))
    summed = rng.integers(0, 2**63, 100, dtype=np.uint64)
    task = rng.integers(0, 400, 100)
    with dev.reference():
        want = cpu.state_key(summed, task)
    assert np.array_equal(want, dev.asnumpy(gpu.state_key(dev.asarray(summed), dev.asarray(task))))


def _structured_stack(rng, n: int, H: int, W: int):
    """Zero-padded (n, H, W) grids with the structures the fused kernels look for, with their real
    sides: mirror-symmetric pictures under a noise patch (some cut short by two lines), periodic
    wallpapers, grids with repeated rows and columns, and scattered objects."""
    arr = np.zeros((n, H, W), dtype=np.uint8)
    hs, ws = rng.integers(max(1, H // 2), H + 1, n), rng.integers(max(1, W // 2), W + 1, n)
    for i in range(n):
        h, w = int(hs[i]), int(ws[i])
        kind = i % 5
        if kind == 0:  # symmetric picture, noise patch of a colour not in it
            cut = 2 if min(h, w) >= 8 and rng.random() < 0.5 else 0
            base = rng.integers(1, 6, (h + cut, w + cut)).astype(np.uint8)
            base = np.maximum(base, base[:, ::-1])
            base = np.maximum(base, base[::-1, :])[:h, :w].copy()
            ph, pw = rng.integers(1, max(2, h // 3) + 1), rng.integers(1, max(2, w // 3) + 1)
            y, x = rng.integers(0, h - min(ph, h) + 1), rng.integers(0, w - min(pw, w) + 1)
            base[y:y + ph, x:x + pw] = rng.choice([0, 9])
            g = base
        elif kind == 1:  # wallpaper
            tile = rng.integers(0, 4, (rng.integers(1, 5), rng.integers(1, 5)))
            g = np.tile(tile, (h // tile.shape[0] + 1, w // tile.shape[1] + 1))[:h, :w]
        elif kind == 2:  # repeated rows and columns
            small = rng.integers(0, 4, (rng.integers(1, h + 1), rng.integers(1, w + 1)))
            g = small[np.sort(rng.integers(0, small.shape[0], h))][:, np.sort(rng.integers(0, small.shape[1], w))]
        elif kind == 3:  # objects
            g = rng.integers(1, 4, (h, w)) * (rng.random((h, w)) < rng.choice([0.1, 0.3, 0.6]))
        else:  # parts divided by separator lines of one colour
            g = rng.integers(0, 5, (h, w)) * (rng.random((h, w)) < 0.5)
            g[rng.integers(0, 3)::rng.integers(2, 5)] = 5
            g[:, rng.integers(0, 3)::rng.integers(2, 5)] = 5
        arr[i, :h, :w] = g
    return arr, hs.astype(np.int64), ws.astype(np.int64)


FUSED = ("repair_symmetry", "largest_object", "smallest_object", "keep_largest_object",
         "remove_largest_object", "rarest_color_object", "fill_enclosed", "crop_period", "connect",
         "halo", "overlay_halves", "dedup_lines", "compress", "mark_hollow", "cell_summary", "rays", "symmetrize",
         "crop_content", "complete_period", "keep_largest_block", "slide_to_colour",
         # colour counts (a kernel, shared per stack)
         "keep_majority_color", "keep_minority_color", "invert", "majority_cell", "colour_column",
         "upscale_by_colours", "fractal_by_major", "crop_minority")


def test_fused_primitive_kernels_identical_on_structured_grids(dev):
    """The primitives with a fused kernel (solvers.fused) on padded stacks of grids they change
    (symmetric pictures under noise, wallpapers, repeated lines, objects, parts between separator
    lines), NumPy against CuPy, inside one stack-cache scope as the search runs them; each must
    change or give results for some grids, so that the comparison is not vacuous."""
    from solvers import stack_cache
    from solvers.primitives import transforms

    effect = {}
    for shape in [(5, 5), (9, 13), (16, 16), (30, 30)]:
        rng = np.random.default_rng(shape[0] * 31 + shape[1])
        arr, h, w = _structured_stack(rng, 200, *shape)
        darr, dh, dw = dev.asarray(arr), dev.asarray(h), dev.asarray(w)
        for t in transforms():
            if t.name not in FUSED:
                continue
            with stack_cache.scope(), dev.reference():
                cpu = t.padded(np, arr, h, w)
            with stack_cache.scope():
                gpu = t.padded(dev.xp, darr, dh, dw)
            if t.primitive.pad == "inplace":
                cpu, gpu = np.asarray(cpu), dev.asnumpy(gpu)
                assert np.array_equal(cpu, gpu), f"{t} {shape}"
                effect[str(t)] = effect.get(str(t), 0) + int((cpu != arr).any(axis=(1, 2)).sum())
                continue
            cpu, gpu = _parts_host(np, cpu, len(arr)), _parts_host(dev.xp, gpu, len(arr))
            assert cpu.keys() == gpu.keys(), f"{t} {shape}"
            for i in cpu:
                assert np.array_equal(cpu[i], gpu[i]), f"{t} {shape} grid {i}"
            effect[str(t)] = effect.get(str(t), 0) + len(cpu)
    assert {t for t, count in effect.items() if count < 3} == set()
    assert {t.name for t in transforms() if str(t) in effect} == set(FUSED)


@pytest.mark.gpu
@pytest.mark.skipif(GPU_REASON is not None, reason=GPU_REASON or "")
def test_gpu_search_processes_reduce_without_cub(monkeypatch):
    """A GPU search process reduces with CuPy's own kernels (CUB's reduction modules load slowly
    in a fresh process), unless CUPY_ACCELERATORS chooses otherwise; sums stay exact."""
    from cupy import _core

    from pipeline.search.device import plain_reductions

    before = _core.get_reduction_accelerators()
    try:
        monkeypatch.setenv("CUPY_ACCELERATORS", "cub")
        plain_reductions()
        assert _core.get_reduction_accelerators() == before
        monkeypatch.delenv("CUPY_ACCELERATORS")
        plain_reductions()
        assert _core.get_reduction_accelerators() == []
        x = cupy.arange(3_000_000, dtype=cupy.int64)
        assert int(x.sum()) == 3_000_000 * 2_999_999 // 2
    finally:
        _core.set_reduction_accelerators(before)


@pytest.mark.gpu
@pytest.mark.skipif(GPU_REASON is not None, reason=GPU_REASON or "")
def test_block_size_counts_memory_the_pool_holds_unused():
    """A shard process's later chunks get the blocks its first got: what CuPy's pool keeps after a
    search is free for the next one, not memory taken by others."""
    from pipeline.search.shards import gpu_block_cells

    pool = cupy.get_default_memory_pool()
    pool.free_all_blocks()
    before = gpu_block_cells(cupy)
    held = cupy.empty(int(0.3 * cupy.cuda.runtime.memGetInfo()[0]), dtype=cupy.uint8)
    del held  # back to the pool, which keeps it
    assert pool.free_bytes() > 0
    assert gpu_block_cells(cupy) >= 0.95 * before
    pool.free_all_blocks()


@pytest.mark.gpu
@pytest.mark.skipif(GPU_REASON is not None, reason=GPU_REASON or "")
def test_one_packed_copy_gives_each_device_array_back():
    import cupy

    from pipeline.search.device import to_host_all
    rng = np.random.default_rng(5)
    host = [rng.random(7), rng.integers(0, 9, (3, 4)).astype(np.uint8), rng.random(5) > 0.5,
            rng.integers(0, 2**63, 6, dtype=np.int64).astype(np.uint64), np.zeros((0, 10), dtype=np.uint8)]
    copies = to_host_all(*(cupy.asarray(a) for a in host))
    for a, c in zip(host, copies):
        assert c.dtype == a.dtype and c.shape == a.shape and np.array_equal(a, c)


@pytest.mark.gpu
@pytest.mark.skipif(GPU_REASON is not None, reason=GPU_REASON or "")
def test_a_host_copy_begun_early_reads_the_values_of_then():
    """HostCopy queues the copy at once: the host reads the values the array had when the copy
    was begun, although the device array is overwritten by later work on the stream."""
    import cupy

    from pipeline.search.device import HostCopy
    dev = cupy.arange(3_000_000, dtype=cupy.int32)
    copy = HostCopy(dev)
    dev *= 0  # queued after the copy
    assert len(copy) == 3_000_000
    assert np.array_equal(np.asarray(copy), np.arange(3_000_000, dtype=np.int32))
    assert not dev.any()
    # Copies in flight together stage in buffers of their own; read ones hand theirs on.
    first, second = HostCopy(cupy.arange(10)), HostCopy(cupy.arange(10) * 2)
    assert np.asarray(second).tolist() == list(range(0, 20, 2)) and np.asarray(first).tolist() == list(range(10))
    assert np.asarray(HostCopy(cupy.arange(5, dtype=cupy.uint8))).tolist() == list(range(5))


@pytest.mark.gpu
@pytest.mark.skipif(GPU_REASON is not None, reason=GPU_REASON or "")
def test_staged_pinned_buffers_serve_the_copies_back(monkeypatch):
    """After stage_pinned (a GPU process's warm-up), copies back of up to the staged sizes take
    the staged buffers: no page locking during a search."""
    import cupy
    import cupyx

    from pipeline.search import device as device_mod

    monkeypatch.setattr(device_mod, "_STAGE", device_mod._PinnedStage())
    device_mod.stage_pinned((1 << 20, 1 << 22))
    staged = {id(b) for b in device_mod._STAGE._free}
    assert len(staged) == 2 and sorted(b.nbytes for b in device_mod._STAGE._free) == [1 << 20, 1 << 22]
    monkeypatch.setattr(cupyx, "empty_pinned", lambda *a, **k: pytest.fail("a buffer was locked during the copies"))
    big, small = device_mod.HostCopy(cupy.arange(400_000)), device_mod.HostCopy(cupy.arange(1000))
    assert {id(big._buffer), id(small._buffer)} == staged
    assert np.asarray(big).tolist() == list(range(400_000)) and np.asarray(small).tolist() == list(range(1000))


def test_board_picks_pack_what_the_gathers_give(dev):
    """board_picks: the new states whose rank beats their task's threshold (and that ``keep`` keeps,
    where given), each as one packed record of what gathering its fields gives, with their count;
    with too little room, the count and as many records as fit."""
    from pipeline.search import kernels
    rng = np.random.default_rng(9)
    S = 60
    new_pos = np.sort(rng.choice(S, 40, replace=False)).astype(np.int64)
    task = rng.integers(0, 3, S)
    threshold = np.array([20.0, -1.0, 70.0])
    fields = dict(rank=rng.random(S) * 100, solved=rng.random(S) < 0.3, cm_ok=rng.random(S) < 0.3,
                  n_exact=rng.integers(0, 5, S), score=rng.random(S),
                  test_key=rng.integers(0, 2**63, S, dtype=np.int64).astype(np.uint64) * np.uint64(2))
    maps = rng.integers(0, 10, (S, 10))
    beats = fields["rank"][new_pos] > threshold[task[new_pos]]
    keep = rng.random(len(new_pos)) < 0.6
    for mapping, room, kept in ((maps, 64, None), (None, 64, None), (maps, 5, None), (maps, 64, keep)):
        pick = np.nonzero(beats if kept is None else beats & kept)[0]
        at = new_pos[pick]
        args = {k: dev.asarray(v) for k, v in fields.items()}
        buf = kernels.board_picks(dev.xp, dev.asarray(new_pos), dev.asarray(task), dev.asarray(threshold),
                                  args["rank"], args["solved"], args["cm_ok"], args["n_exact"], args["score"],
                                  args["test_key"], None if mapping is None else dev.asarray(mapping), room,
                                  None if kept is None else dev.asarray(kept))
        count, rows = kernels.read_board_picks(dev.asnumpy(buf))
        assert count == len(pick) > 5 and (kept is None or count < beats.sum())
        if room < count:
            assert len(rows["pick"]) == room and set(rows["pick"].tolist()) <= set(pick.tolist())
            continue
        assert rows["pick"].tolist() == pick.tolist()
        assert rows["rank"].tolist() == fields["rank"][at].tolist()
        assert rows["score"].tolist() == fields["score"][at].tolist()
        assert rows["test_key"].tolist() == fields["test_key"][at].tolist()
        assert rows["n_exact"].tolist() == fields["n_exact"][at].tolist()
        assert rows["solved"].tolist() == (fields["solved"] | fields["cm_ok"])[at].tolist()
        assert rows["cm_ok"].tolist() == fields["cm_ok"][at].tolist()
        want = np.zeros((len(at), 10), dtype=np.uint8) if mapping is None else mapping[at].astype(np.uint8)
        assert np.array_equal(rows["mapping"], want)


@pytest.mark.parametrize("buckets", [5, 90])
def test_crop_sides_of_many_buckets_in_one_table(dev, buckets):
    """kernels.crop_sides: per grid of each bucket's results its flag, sides, cells when kept,
    result address and pitch, at the bucket's place; flags and sides per grid or one for all,
    buckets without results (no stack) or without grids; more buckets than one launch takes."""
    from pipeline.search import kernels
    from solvers.padded import Padded
    from solvers.xp import data_address

    assert kernels.CROP_ROWS < 72  # the non-empty buckets of 90
    rng = np.random.default_rng(3)
    xp = dev.xp
    entries, want, lo = [], [], 0
    for b in range(buckets):
        m = [5, 1, 7, 0, 4][b % 5]
        if b % 5 == 2:  # no stack: nothing can be kept
            res = Padded(None, xp.ones(1, dtype=xp.int64), xp.ones(1, dtype=xp.int64), xp.zeros(1, dtype=bool))
            flag, h, w, addr, pitch = np.zeros(m, bool), np.ones(m), np.ones(m), np.zeros(m), 0
        else:
            H, W = int(rng.integers(2, 9)), int(rng.integers(2, 9))
            flag, h, w = rng.random(m) < 0.6, rng.integers(1, H + 1, m), rng.integers(1, W + 1, m)
            if b % 5 == 4:  # one value for every grid
                flag, h, w = np.ones(m, bool), np.full(m, 2), np.full(m, 3)
                res = Padded(xp.zeros((m, H, W), dtype=xp.uint8), 2, xp.asarray([3], dtype=xp.int32), True)
            else:
                res = Padded(xp.zeros((m, H, W), dtype=xp.uint8), xp.asarray(h, dtype=xp.int32), xp.asarray(h * 0 + w),
                             xp.asarray(flag))
            addr, pitch = data_address(res.arr) + np.arange(m) * H * W, W
        entries.append((lo, m, res))
        want.append((flag, h, w, np.where(flag, h * w, 0), addr, np.full(m, pitch)))
        lo += m
    out = (xp.empty(lo, dtype=bool), *(xp.empty(lo, dtype=t) for t in (xp.int64, xp.int64, xp.int64, xp.uint64,
                                                                        xp.int64)))
    held = kernels.crop_sides(xp, entries, out)
    got = [dev.asnumpy(a) if xp is not np else a for a in out]
    del held
    for k, name in enumerate(("ok", "h", "w", "size", "addr", "pitch")):
        expect = np.concatenate([wb[k] for wb in want])
        if name in ("h", "w"):  # sides matter only where kept
            expect, gotk = np.where(got[0], expect, 0), np.where(got[0], got[k], 0)
        else:
            gotk = got[k]
        assert np.array_equal(gotk.astype(np.int64 if name != "ok" else bool),
                              expect.astype(np.int64 if name != "ok" else bool)), name


def test_test_grids_kernels_give_the_gathered_grids(dev):
    """kernels.test_grids: each candidate state's test grids in fixed slots (zeros past a grid,
    sides 0 where a state lacks a test sample), as CandidateOutputs' array calls gather them; states
    given in any order, items of any order, some states without items."""
    from pipeline.search.problem import Items
    from pipeline.search.candidate_outputs import SLOT, CandidateOutputs
    from pipeline.search import kernels
    from solvers import kernels as dsl_kernels

    rng = np.random.default_rng(5)
    tasks, S = 4, 50
    n_train = np.array([2, 3, 1, 2])
    n_test = np.array([1, 2, 2, 1])
    state_task = rng.integers(0, tasks, S)
    pairs = [(s, k) for s in range(S) for k in range(n_train[state_task[s]] + n_test[state_task[s]])
             if rng.random() < 0.85]
    pairs = [pairs[i] for i in rng.permutation(len(pairs))]
    h = rng.integers(1, 31, len(pairs))
    w = rng.integers(1, 31, len(pairs))
    start = np.r_[0, np.cumsum(h * w)[:-1]]
    cells = rng.integers(0, 10, int((h * w).sum())).astype(np.uint8)
    idx = rng.choice(S, 17, replace=False).astype(np.int64)

    def grids(xp, asarray):
        out = Items(xp, asarray(cells), asarray(np.array([p[0] for p in pairs])),
                    asarray(np.array([p[1] for p in pairs])), asarray(h), asarray(w), asarray(start))
        block = SimpleNamespace(task=asarray(state_task), num_states=S)
        problem = SimpleNamespace(xp=xp, n_train=asarray(n_train), max_tests=int(n_test.max()))
        if dsl_kernels.enabled(xp):
            got = kernels.test_grids(xp, out, block.task, problem.n_train, idx, problem.max_tests, SLOT)
        else:
            got = CandidateOutputs(problem)._gathered(block, out, idx)
        return [dev.asnumpy(a) if xp is not np else np.asarray(a) for a in got[:3]]

    with dev.reference():
        want = grids(np, np.asarray)
    got = grids(dev.xp, dev.asarray)
    assert (want[1] == 0).sum() > 0 and (want[1] > 0).sum() > 20  # slots with and without a grid
    for a, b in zip(want, got):
        assert a.shape == b.shape and np.array_equal(a, b)


@pytest.mark.parametrize("absorb_cells", [None, 1])
def test_absorbs_finished_later_give_identical_results(dev, monkeypatch, absorb_cells):
    """The GPU finishes each absorb (counts read, scores, boards' picks, on a level that keeps
    states its next blocks) once the next transform's kernels are queued: boards, programs, test
    outputs and counts are those of the array calls' search (``ARCBATT_NO_KERNELS``: absorbs
    finished at once), and every absorb is finished by the search's end. With ``PICK_ROOM`` 1 the boards' picks are packed again with more room, from the
    later half too; with ``absorb_cells`` 1 every transform is absorbed alone (the per-task budget
    of kept states carries from absorb to absorb)."""
    import pipeline.search.boards as boards_mod
    import pipeline.search.driver as search_mod
    from pipeline.search.problem import Problem
    from pipeline.search.driver import Search
    from pipeline.run.tasks import load_tasks

    tasks, _ = load_tasks("arc1-train", 30 if dev.name == "cupy" else 8)
    monkeypatch.setattr(search_mod, "PICK_ROOM", 1)
    monkeypatch.setattr(boards_mod, "PICK_ROOM", 1)
    monkeypatch.setattr(boards_mod, "PICK_ROOM_ALL", 0)
    started = []
    real_start = Search._absorb_started

    def counted(self, *args):
        started.append(args[8])  # keep: a level that keeps states
        return real_start(self, *args)

    monkeypatch.setattr(Search, "_absorb_started", counted)
    results = []
    for no_kernels in ("1", ""):
        monkeypatch.setenv("ARCBATT_NO_KERNELS", no_kernels)
        search = Search(Problem(tasks, dev.xp), states_per_task=400 if absorb_cells is None else 30,
                        absorb_cells=absorb_cells)
        stats = search.run(2)
        results.append(([[(search.table.path(c.gid), round(c.rank, 6), [np.asarray(o).tolist() for o in c.test_outputs])
                          for c in b] for b in search.boards], stats.states, stats.candidates, search.solved.tolist()))
        assert search._absorbing is None
    assert True in started and False in started, "no absorb of each kind of level was finished later"
    assert results[0] == results[1]


@pytest.mark.gpu
@pytest.mark.skipif(GPU_REASON is not None, reason=GPU_REASON or "")
def test_a_search_out_of_device_memory_gives_its_memory_back(monkeypatch):
    """A GPU search that runs out of memory leaves none of its arrays on the device, even those its
    error's frames hold in reference cycles: a budget run's narrower search needs that memory."""
    import pipeline.search.shards as shards

    pool = cupy.get_default_memory_pool()
    pool.free_all_blocks()
    before = pool.used_bytes()

    def runs_out(xp, *args, **kwargs):
        held = [xp.zeros(1 << 28, dtype=xp.uint8)]
        held.append(held)  # a cycle: only a full collection frees it
        raise MemoryError("key table: no device memory to grow")

    monkeypatch.setattr(shards, "_search", runs_out)
    with pytest.raises(MemoryError, match="key table"):
        shards.search_shard([], 1, 0, None, 1000, gpu=0)
    assert pool.used_bytes() == before and pool.total_bytes() == before
