"""Host and device time of every transform on one real search block (is it launch- or GPU-bound?).

Runs the search up to level ``--level`` - 1 on the tasks, takes the first frontier block that the
search would expand at level ``--level``, and times ``Search._apply`` (the transform, its size
buckets, hashing and result layout) on it for every transform. On a GPU it uses
``cupyx.profiler.benchmark``, which reports the host's time (Python and kernel launches) and the
device's time (CUDA events) separately: a transform whose device time is far below its host time
is bound by launches, one whose device time dominates is bound by the GPU's work. On the CPU the
"alone" column is the primitive's own share of the host time (without hashing and layout). As in a search,
the transforms share the block's analyses (labellings, enclosed background, colour counts: see
``solvers.stack_cache``); those are timed on their own first.

    python benchmarks/primitive_costs.py --count 40 --level 2            # CPU
    python benchmarks/primitive_costs.py --gpu --level 3 --top 40         # GPU, a depth-3 block
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from pipeline.search.problem import Problem
from pipeline.search.driver import Search
from pipeline.run.tasks import load_tasks
from solvers import stack_cache
from solvers.batch import colour_counts
from solvers.primitives.objects import OBJECT_KINDS, label_objects
from solvers.primitives.regions import enclosed_background


def frontier_block(search: Search, level: int):
    """The first block the search expands at ``level`` (the search runs levels before it)."""
    captured = []
    real = search._expand_level

    def capture(frontier, lvl, *rest):
        if lvl == level:
            captured.append(frontier[0])
            raise StopIteration
        return real(frontier, lvl, *rest)

    search._expand_level = capture
    try:
        search.run(level)
    except StopIteration:
        pass
    search._expand_level = real
    return captured[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="arc1-train")
    parser.add_argument("--count", type=int, default=0)
    parser.add_argument("--level", type=int, default=2)
    parser.add_argument("--gpu", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args()
    tasks, _ = load_tasks(args.dataset, args.count)
    xp = np
    if args.gpu:
        import cupy as xp
        from cupyx.profiler import benchmark
    block_cells = None
    if args.gpu:  # the block size that a run gives this device (pipeline.search.shards.search_shard)
        from pipeline.search.shards import gpu_block_cells
        block_cells = gpu_block_cells(xp)
    search = Search(Problem(tasks, xp), states_per_task=8000, block_cells=block_cells)
    block = frontier_block(search, args.level)
    items = block.items
    lay = items.padded(search.block_cells)
    print(f"block: {block.num_states} states, {items.count} grids, {int(items.cells.shape[0])} cells, "
          f"{len(lay.buckets)} size buckets")

    def primitive_only(tr):
        """The transform alone, called as ``Search._apply`` calls it (what _apply adds is hashing
        and layout): on every size bucket, or on the CPU's path once per exact shape group."""
        if tr.primitive.elementwise:
            return tr(xp, items.cells.reshape(1, 1, -1))
        if tr.primitive.pad or (tr.primitive.layout == "padded" and search.bucket_all):
            return [tr.padded(xp, lay.stack(b), items.h[b[2]], items.w[b[2]]) for b in lay.buckets]
        bound = tr.max_sides
        return [tr(xp, items.view(group)) for group in items.groups
                if bound is None or (group[0] <= bound[0] and group[1] <= bound[1])]

    def shared_analyses():
        """What the transforms of a block share (stack_cache): labellings, enclosed background,
        colour counts of every bucket stack, made once per block in a search."""
        stacks = [lay.stack(b) for b in lay.buckets]
        for g in stacks:
            for conn, by_colour in OBJECT_KINDS:
                label_objects(xp, g, conn, by_colour)
            enclosed_background(xp, g)
            colour_counts(xp, g)

    if args.gpu:
        res = benchmark(shared_analyses, (), n_repeat=args.repeat, n_warmup=1)
        print(f"shared analyses of the block (made once, outside the rows below): host "
              f"{np.median(res.cpu_times) * 1e3:.1f} ms, device {np.median(res.gpu_times[0]) * 1e3:.1f} ms")

    def measure(tr):
        """Host and device seconds of ``_apply`` of one transform, and of the primitive alone."""
        if not args.gpu:  # no device time; "alone" is the primitive's share of the host time
            applied, alone = [], []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                search._apply(block, tr)
                t1 = time.perf_counter()
                primitive_only(tr)
                applied.append(t1 - t0)
                alone.append(time.perf_counter() - t1)
            return tr.name, float(np.median(applied)), float("nan"), float(np.median(alone))
        res = benchmark(search._apply, (block, tr), n_repeat=args.repeat, n_warmup=1)
        host, dev = float(np.median(res.cpu_times)), float(np.median(res.gpu_times[0]))
        res = benchmark(primitive_only, (tr,), n_repeat=args.repeat, n_warmup=1)
        return tr.name, host, dev, float(np.median(res.gpu_times[0]))

    # As in a search, the transforms share the block's analyses (the first call makes them).
    with stack_cache.scope():
        rows = [measure(tr) for tr in search.transforms]
    host_sum = sum(r[1] for r in rows)
    dev_sum = sum(r[2] for r in rows)
    print(f"all {len(rows)} transforms: host {host_sum:.3f} s, device {dev_sum:.3f} s "
          f"({items.count * len(rows) / max(dev_sum, host_sum):.3g} grid transforms/s)")
    print(f"{'device' if args.gpu else 'host'} time of the primitives alone (no hashing or layout): "
          f"{sum(r[3] for r in rows):.3f} s")
    by_name: dict = {}
    for name, host, dev, prim in rows:
        h, d, p, n = by_name.get(name, (0.0, 0.0, 0.0, 0))
        by_name[name] = (h + host, d + dev, p + prim, n + 1)
    print(f"{'primitive':26} {'host ms':>9} {'device ms':>10} {'alone ms':>9} {'n':>3}")
    for name, (h, d, p, n) in sorted(by_name.items(), key=lambda kv: -max(kv[1][0], kv[1][1]))[:args.top]:
        print(f"{name:26} {h * 1e3:9.1f} {d * 1e3:10.1f} {p * 1e3:9.1f} {n:3}")


if __name__ == "__main__":
    main()
