"""Profile the search in one process: time per primitive and per stage, on NumPy or CuPy.

    python benchmarks/profile_search.py --depth 2 --count 100            # CPU
    python benchmarks/profile_search.py --depth 2 --gpu                  # GPU (synchronised timings)

With --gpu the device is synchronised after every transform and search stage, so each primitive's
and stage's time is its own (device time included).
"""
from __future__ import annotations

import argparse
import collections
import gc
import time

import numpy as np

from pipeline.search.shards import objects_frozen
from pipeline.search.problem import Problem
from pipeline.search.driver import Search
from pipeline.run.tasks import load_tasks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="arc1-train")
    parser.add_argument("--depth", type=int, default=2)
    parser.add_argument("--count", type=int, default=0)
    parser.add_argument("--gpu", action="store_true")
    parser.add_argument("--states-per-task", type=int, default=8000)
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--bucket-all", action="store_true",
                        help="on the CPU too, run every padding-aware primitive per size bucket "
                             "(the GPU's path) instead of per exact shape group")
    parser.add_argument("--bucket-sides", default="",
                        help="comma-separated sides of the padded size buckets (default: the "
                             "search's own); results are the same, speed differs")
    parser.add_argument("--absorb-cells", type=float, default=0,
                        help="score the new grids of several transforms together up to this many "
                             "cells, as a multiple of the block size (default: the search's own)")
    parser.add_argument("--block-scale", type=float, default=1.0,
                        help="multiply the search's block size (cells) by this (memory grows with it)")
    parser.add_argument("--one-bucket-cells", type=float, default=None,
                        help="on a GPU, blocks up to this many cells padded to 30x30 take one "
                             "bucket (default: the search's own)")
    parser.add_argument("--cprofile", type=int, default=0, metavar="N",
                        help="also run the last repeat under cProfile and print its top N functions "
                             "by own time (host-side cost: Python, launches, waits on the device)")
    parser.add_argument("--no-sync", action="store_true",
                        help="on a GPU, time the search as it runs (one synchronisation at its end): "
                             "no per-primitive or per-stage times, wall and level times only")
    parser.add_argument("--nvtx", action="store_true",
                        help="on a GPU, mark each transform's application and each absorb as an NVTX "
                             "range and capture only the last run (cudaProfilerStart/Stop, for "
                             "nsys --capture-range=cudaProfilerApi; see benchmarks/nsys_gaps.py)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run the search this many times in one process (the GPU compiles its "
                             "kernels on first use: later runs show the warm speed)")
    args = parser.parse_args()
    if args.one_bucket_cells is not None:
        import pipeline.search.problem

        pipeline.search.problem.GPU_ONE_BUCKET_CELLS = int(args.one_bucket_cells)
        print("one bucket up to", pipeline.search.problem.GPU_ONE_BUCKET_CELLS, "cells")
    if args.bucket_sides:
        import pipeline.search.problem

        sides = tuple(int(v) for v in args.bucket_sides.split(","))
        pipeline.search.problem.BUCKET_SIDES = {"cpu": sides, "gpu": sides}
        print("bucket sides:", sides)
    tasks, _ = load_tasks(args.dataset, args.count)
    if args.gpu:
        from pipeline.search.shards import warm_up
        warm_up(0)  # once, as a run prepares its GPU before searching (outside every run profiled)
    for i in range(args.repeat):
        print(f"--- run {i + 1} of {args.repeat}")
        if args.cprofile and i == args.repeat - 1:
            import cProfile
            import pstats
            profiler = cProfile.Profile()
            profiler.runcall(profile_once, args, tasks)
            pstats.Stats(profiler).sort_stats("tottime").print_stats(args.cprofile)
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(args.cprofile)
        elif args.nvtx and args.gpu and i == args.repeat - 1:
            import cupy
            cupy.cuda.runtime.profilerStart()
            profile_once(args, tasks)
            cupy.cuda.runtime.profilerStop()
        else:
            profile_once(args, tasks)


def _nvtx_ranges(search) -> None:
    """Mark the search's steps as NVTX ranges (no synchronisation), so a timeline attributes each
    kernel and wait to the step that issued it: each transform's application (by name), elementwise
    runs, and the stages of absorbing new states (nested in ``(absorb)``)."""
    from cupy.cuda import nvtx

    import pipeline.search.absorb as absorb_module
    import pipeline.search.driver as search_module

    def ranged(name_of, real):
        def call(*a, **k):
            nvtx.RangePush(name_of(*a))
            try:
                return real(*a, **k)
            finally:
                nvtx.RangePop()
        return call

    search._apply = ranged(lambda block, tr: tr.name, search._apply)
    search._finish_crop = ranged(lambda block, ti, tr, waiting: tr.name, search._finish_crop)  # a crop's second part
    search._apply_crop_run = ranged(lambda block, run, defer=False: search.transforms[run[0]].name + " (run)",
                                    search._apply_crop_run)
    for method, name in (("_absorb", "(absorb)"), ("_apply_elementwise_run", "(elementwise run)"),
                         ("_apply_fill_run", "(fill run)"), ("_apply_map_run", "(map run)"),
                         ("_map_run_outputs", "(map run) finish"), ("_finish_absorbing", "absorb: second half"),
                         ("_state_keys", "absorb: state keys"), ("_absorb_merged", "absorb: dedup"),
                         ("_score_new", "absorb: score"), ("_update_boards", "absorb: boards"),
                         ("_next_blocks", "absorb: next blocks"), ("_drop_solved", "(prune)")):
        setattr(search, method, ranged(lambda *a, _n=name: _n, getattr(search, method)))
    if not getattr(search_module, "_nvtx_marked", False):  # module and class level: once per process
        search_module._nvtx_marked = True
        absorb_module._merge_outputs = ranged(lambda *a: "absorb: merge", absorb_module._merge_outputs)
        builder = search_module._BlockBuilder
        builder.add = ranged(lambda *a: "absorb: add to next level", builder.add)
        builder.finish = ranged(lambda *a: "(regroup)", builder.finish)


class GcTimes:
    """Collections of Python's cyclic garbage collector and the time they take (gc.callbacks)."""

    def __init__(self):
        self.count, self.seconds, self.longest, self._t0 = [0, 0, 0], [0.0, 0.0, 0.0], 0.0, 0.0
        gc.callbacks.append(self._note)

    def _note(self, phase, info) -> None:
        if phase == "start":
            self._t0 = time.perf_counter()
            return
        took, gen = time.perf_counter() - self._t0, info["generation"]
        self.count[gen] += 1
        self.seconds[gen] += took
        self.longest = max(self.longest, took)

    def report(self) -> str:
        gc.callbacks.remove(self._note)
        return (f"gc: {sum(self.seconds):.3f} s in {sum(self.count)} collections (generation 2: {self.count[2]}, "
                f"{self.seconds[2]:.3f} s; longest {self.longest * 1e3:.1f} ms)")


def profile_once(args, tasks) -> None:
    if args.gpu:
        import cupy as xp

        sync = xp.cuda.Device().synchronize
    else:
        xp, sync = np, (lambda: None)
    block_cells = None
    if args.gpu:  # the block size that a run gives this device (pipeline.search.shards.search_shard)
        from pipeline.search.shards import gpu_block_cells
        block_cells = int(gpu_block_cells(xp) * args.block_scale)
    search = Search(Problem(tasks, xp), states_per_task=args.states_per_task,
                    bucket_all=True if args.bucket_all else None, block_cells=block_cells)
    if args.absorb_cells:
        search.absorb_cells = int(args.absorb_cells * search.block_cells)
    print(f"block cells {search.block_cells}, absorb cells {search.absorb_cells}")
    per_primitive = collections.Counter()
    calls = collections.Counter()
    real_apply = search._apply

    def timed_apply(block, tr):
        sync()
        t0 = time.perf_counter()
        out = real_apply(block, tr)
        sync()
        per_primitive[tr.name] += time.perf_counter() - t0
        calls[tr.name] += 1
        return out

    per_kind = collections.Counter()  # each run's time (a single transform's included) by its kind
    real_apply_run = search._apply_run

    def timed_apply_run(block, run, defer=False):
        sync()
        t0 = time.perf_counter()
        out = real_apply_run(block, run, defer)
        sync()
        took = time.perf_counter() - t0
        per_kind[_run_kind(search, run)] += took
        if len(run) > 1:  # a run's transforms are applied together: its time under its first's name
            name = f"{search.transforms[run[0]].name} (run of {len(run)})"
            per_primitive[name] += took
            calls[name] += 1
        return out

    if args.no_sync or args.nvtx:
        search.sync = None
        if args.nvtx and args.gpu:
            _nvtx_ranges(search)
    else:
        search._apply = timed_apply
        search._apply_run = timed_apply_run
        search.sync = None if not args.gpu else sync
    hasher = search.problem.hasher
    for name in ("grids", "padded") if not (args.no_sync or args.nvtx) else ():
        real = getattr(hasher, name)

        def timed_hash(*a, _real=real, **k):
            sync()
            t0 = time.perf_counter()
            out = _real(*a, **k)
            sync()
            per_primitive["(grid hashing, inside apply)"] += time.perf_counter() - t0
            return out

        setattr(hasher, name, timed_hash)
    gc_times = GcTimes()
    t0 = time.perf_counter()
    with objects_frozen():  # as a run's search process searches (pipeline.search.shards)
        stats = search.run(args.depth)
    sync()
    wall = time.perf_counter() - t0
    print(f"{len(tasks)} tasks, depth {args.depth}, {'gpu' if args.gpu else 'cpu'}: {wall:.1f} s, "
          f"{stats.states} states ({stats.states / wall:.0f}/s), {stats.grid_transforms} grid transforms "
          f"({stats.grid_transforms / wall:.3g}/s; computed {stats.grid_transforms_computed}), "
          f"{len(search.transforms)} transforms, "
          f"{stats.oom_splits} out-of-memory halvings, {sum(1 for b in search.boards if b and b[0].solved)} tasks solved")
    if args.gpu:  # CuPy's pool keeps freed blocks, so what it holds is about the peak
        print(f"device memory held by the pool: {xp.get_default_memory_pool().total_bytes() / 2**30:.1f} GiB")
    print("stages:", {k: round(v, 2) for k, v in sorted(stats.stage_seconds.items(), key=lambda kv: -kv[1])})
    print("levels:", [round(v, 3) for v in getattr(stats, "level_seconds", [])])
    print(gc_times.report())
    if per_kind:
        print("applying runs of transforms, by kind (seconds):",
              {k: round(v, 2) for k, v in per_kind.most_common()})
    print(f"{'primitive':28} {'seconds':>8} {'calls':>6}")
    for name, sec in per_primitive.most_common(args.top):
        print(f"{name:28} {sec:8.2f} {calls[name]:6}")


def _run_kind(search, run) -> str:
    """What kind of run ``run`` (transform indices) is, as ``Search._apply_run`` applies it."""
    first = search.transforms[run[0]]
    if search.map_runs and first.coord_map is not None:
        return "coordinate maps"
    if len(run) == 1:
        return "one transform"
    if first.primitive.fill is not None:
        return "fill"
    return "elementwise" if first.primitive.elementwise else "one padded primitive's"


if __name__ == "__main__":
    main()
