"""Applying the transforms to a block: one at a time, or in runs of one kind together (elementwise
transforms through colour tables, fills, coordinate maps and crops in one or two kernels on a GPU),
each alone again where a run runs out of device memory.
"""
from __future__ import annotations

import functools

import numpy as np

from pipeline.search import kernels
from pipeline.search.absorb import _Output
from pipeline.search.blocks import _subset
from pipeline.search.device import HostCopy, is_out_of_memory
from pipeline.search.problem import Block, Items
from solvers import kernels as dsl_kernels
from solvers.coord_maps import RIGID_MAPS, SWAPPING_MAPS
from solvers.batch import as_parts, MAX_SIDE
from solvers.primitives import transforms


class TransformRuns:
    """The transform application of :class:`~pipeline.search.driver.Search` (mixed into it)."""

    def _apply_run(self, block, run, defer: bool = False):
        """The outputs of a run of transforms (indices) on ``block``, in transform order; with
        ``defer``, a crop's may come as a :class:`_Waiting` (see :meth:`_finish_waiting`)."""
        if self.map_runs and self.transforms[run[0]].coord_map is not None:
            return self._apply_map_run(block, run, defer)
        if len(run) > 1:
            primitive = self.transforms[run[0]].primitive
            if primitive.fill is not None:
                return self._apply_fill_run(block, run)
            if primitive.elementwise:
                return self._apply_elementwise_run(block, run)
            return self._apply_crop_run(block, run, defer)
        ti = run[0]
        return self._run_transform(block, ti, self.transforms[ti], defer)

    def _run_transform(self, block, ti, tr, defer: bool = False):
        """Apply transform ``ti`` to a block; on device out-of-memory the block is halved (states
        in order, so results do not change) and each half is retried. Returns its outputs, or
        with ``defer`` a crop's unfinished outputs on a GPU (:class:`_Waiting`)."""
        t0 = self._now()
        self._may_defer = defer
        try:
            out, hashes = self._apply(block, tr)
        except Exception as exc:  # only out-of-memory is handled; _apply changes no state
            if not is_out_of_memory(exc) or block.num_states < 2:
                raise
            self._free_device_memory()
            self.stats.oom_splits += 1
            half = block.num_states // 2
            keep = self.xp.arange(block.num_states) < half
            return (self._run_transform(_subset(self.xp, block, keep), ti, tr)
                    + self._run_transform(_subset(self.xp, block, ~keep), ti, tr))
        finally:
            self._may_defer = False
        self.stats.add_time("search.apply", self._now() - t0)
        if isinstance(out, _Waiting):
            return _Waiting(functools.partial(self._finish_crop, block, ti, tr, out), out.holds)
        if out is None or out.count == 0:
            return []
        return [_Output(block, ti, out, hashes)]

    def _finish_crop(self, block, ti, tr, waiting: "_Waiting") -> list:
        """The outputs of a crop whose kernels were launched before (see :meth:`_finish_waiting`);
        on device out-of-memory the transform is applied again, now, the block halved as needed."""
        t0 = self._now()
        try:
            out, hashes = waiting()
        except Exception as exc:
            if not is_out_of_memory(exc):
                raise
            self._free_device_memory()
            return self._run_transform(block, ti, tr)
        self.stats.add_time("search.apply", self._now() - t0)
        if out is None or out.count == 0:
            return []
        return [_Output(block, ti, out, hashes)]

    def _finish_waiting(self) -> None:
        """Finish the absorb left half done (:meth:`_finish_absorbing`), then the crop left waiting,
        if any, and queue its outputs. A crop on a GPU must wait for the device to learn how many
        grids and cells it keeps; its launches end with that count's copy to the host, and it is
        finished only once the next transform's first kernels are queued (at the latest, before
        that transform's outputs are queued), so the device works on them meanwhile instead of
        idling through the wait. Outputs are still queued, and their cells cut from the queue's
        buffer, in transform order."""
        self._finish_absorbing()
        finish, self._waiting = self._waiting, None
        if finish is not None:
            for output in finish():
                self._enqueue(output)

    def _finish_absorbing(self) -> None:
        """Run the second half of the absorb left unfinished (see :meth:`_absorb_started`), if any."""
        finish, self._absorbing = self._absorbing, None
        if finish is not None:
            finish()

    def _apply_elementwise_run(self, block, run) -> list:
        """Apply consecutive elementwise transforms together: each is a colour lookup table, so a
        chunk of them is one gather and one hash call per shape group or size bucket."""
        items = block.items
        return self._apply_together(block, run, lambda chunk: self._apply_luts(
            items, self._luts(tuple(self.transforms[ti] for ti in chunk))))

    def _apply_fill_run(self, block, run) -> list:
        """Apply consecutive transforms of one ``fill`` primitive (its colours) together on a GPU:
        per size bucket, the mask it paints (shared by its colours) and one kernel that paints,
        copies and hashes every colour's grids."""
        return self._apply_together(block, run, functools.partial(
            self._fill_colours, block.items, self.transforms[run[0]].primitive.fill))

    def _apply_together(self, block, run, apply_chunk) -> list:
        """The outputs of a run of transforms (indices) applied together, chunk by chunk:
        ``apply_chunk(chunk)`` gives the K transforms' cells (K, cells) and hashes (K, items).
        Memory bounds a chunk; on out-of-memory its transforms run one by one."""
        xp, items = self.xp, block.items
        per_chunk = max(1, self.absorb_cells // max(1, int(items.cells.shape[0])))
        outputs = []
        for lo in range(0, len(run), per_chunk):
            chunk = run[lo:lo + per_chunk]
            t0 = self._now()
            try:
                cells, hashes = apply_chunk(chunk)
            except Exception as exc:
                if not is_out_of_memory(exc) or len(chunk) < 2:
                    raise
                self._free_device_memory()
                for ti in chunk:
                    outputs += self._run_transform(block, ti, self.transforms[ti])
                continue
            self.stats.grid_transforms_computed += items.count * len(chunk)
            self.stats.add_time("search.apply", self._now() - t0)
            outputs += [_Output(block, ti, Items(xp, cells[k], items.state, items.sample, items.h, items.w,
                                                 items.start), hashes[k])
                        for k, ti in enumerate(chunk)]
        return outputs

    def _apply_map_run(self, block, run, defer: bool = False):
        """The outputs of a run of coordinate-map transforms (indices; see ``coord_map`` in
        :mod:`solvers.registry`) on a GPU, read straight from the block's flat layout. Rigid maps
        (every grid keeps its number of cells) are one kernel that writes and hashes every map's
        grids, with no wait. Other maps count their kept grids and cells on the device first (one
        wait for the whole run, not one per transform), then one kernel takes, writes and hashes
        them (see :meth:`_run_outputs`)."""
        xp, items = self.xp, block.items
        trs = tuple(self.transforms[ti] for ti in run)
        if trs not in self._map_tables:
            self._map_tables[trs] = kernels.coord_map_table(xp, [tr.coord_map for tr in trs])
        table = self._map_tables[trs]

        def launch():
            if all(tr.coord_map[0] in RIGID_MAPS for tr in trs):
                return self._rigid_maps(block, run, table)
            distinct = self._distinct
            weights = distinct.multiplicity if distinct is not None and distinct.view.items is items else None
            ok, kept, cells, totals = kernels.map_counts(xp, items.h, items.w, table, weights)
            totals = HostCopy(totals)
            self._run_deferred()  # the host's board work, while the device counts
            self._finish_waiting()  # the crop or run before this one, likewise
            return lambda: self._map_run_outputs(block, run, table, (ok, kept, cells), totals.get(),
                                                 weights is not None)

        return self._run_outputs(block, run, launch, defer)

    def _apply_crop_run(self, block, run, defer: bool = False):
        """The outputs of a run of one crop primitive's transforms (indices) on a GPU: every
        transform's results on every bucket, then one wait for how many grids and cells each keeps
        and one kernel that copies and hashes them all (see :meth:`_crops_launched`), as
        :meth:`_run_outputs` runs it."""
        items = block.items

        def launch():
            finish = self._crops_launched(items, items.padded(self.block_cells),
                                          tuple(self.transforms[ti] for ti in run))
            if finish is None:
                return []

            def outputs() -> list:
                return [_Output(block, ti, out, hv) for ti, (out, hv) in zip(run, finish()) if out is not None]

            outputs.holds = finish.holds
            return outputs

        return self._run_outputs(block, run, launch, defer)

    def _run_outputs(self, block, run, launch, defer: bool):
        """The outputs of a run of transforms applied together, or with ``defer`` (when they wait for
        counts from the device) a :class:`_Waiting` that makes them, finished while the next
        transform's kernels run. ``launch()`` queues the run's kernels and gives its outputs, or a
        callable that makes them (its ``holds``, if any: arrays to keep alive until it runs). On device
        out-of-memory, in either part, the run's transforms are applied one by one."""
        self.stats.grid_transforms_computed += block.items.count * len(run)
        finish = self._or_alone(block, run, launch)
        if not callable(finish):
            return finish

        def outputs() -> list:
            return self._or_alone(block, run, finish)

        return _Waiting(outputs, getattr(finish, "holds", ())) if defer else outputs()

    def _or_alone(self, block, run, step):
        """``step()``, timed as applying; on device out-of-memory the outputs of the run's
        transforms applied one by one instead."""
        t0 = self._now()
        try:
            made = step()
        except Exception as exc:
            if not is_out_of_memory(exc):
                raise
            return self._run_alone(block, run)
        self.stats.add_time("search.apply", self._now() - t0)
        return made

    def _rigid_maps(self, block, run, table) -> list:
        xp, items = self.xp, block.items
        K, C = len(run), int(items.cells.shape[0])
        cells = self._output_cells(K * C).reshape(K, C)
        hashes = self.problem.hasher.map_copy(items.cells, items.start, items.h, items.w, table, cells)
        outputs = []
        for k, ti in enumerate(run):
            h, w = items.h, items.w
            if self.transforms[ti].coord_map[0] in SWAPPING_MAPS:
                h, w = w, h
            outputs.append(_Output(block, ti, Items(xp, cells[k], items.state, items.sample, h, w, items.start),
                                   hashes[k]))
        return outputs

    def _map_run_outputs(self, block, run, table, counts, counted, weighed: bool) -> list:
        """A map run's outputs, once the host has its counts (``counted``: of
        :func:`pipeline.search.kernels.map_counts`' totals)."""
        xp, items, K = self.xp, block.items, len(run)
        kept_of, cells_of = counted[:K].tolist(), counted[K:2 * K].tolist()
        if not sum(kept_of):
            return []
        dst = self._output_cells(sum(cells_of))
        h, w, start, state, sample, hashes = self.problem.hasher.map_take_copy(items, table, counts, sum(kept_of), dst)
        outputs = []
        a = c = 0
        for k, ti in enumerate(run):
            m, size = kept_of[k], cells_of[k]
            if m:
                out = Items(xp, dst[c:c + size], state[a:a + m], sample[a:a + m], h[a:a + m], w[a:a + m],
                            start[a:a + m], represents=int(counted[2 * K + k]) if weighed else None)
                outputs.append(_Output(block, ti, out, hashes[a:a + m]))
            a, c = a + m, c + size
        return outputs

    def _run_alone(self, block, run) -> list:
        """A run's outputs with its transforms applied one by one (after device out-of-memory)."""
        self._free_device_memory()
        self.stats.oom_splits += 1
        outputs = []
        for ti in run:
            outputs += self._run_transform(block, ti, self.transforms[ti])
        return outputs

    def _fill_colours(self, items: Items, fill, chunk):
        """Cells (K, C) and hashes (K, n) of the grids of ``items`` painted with the colours of the
        K transforms ``chunk`` where ``fill`` holds (one kernel per size bucket)."""
        xp = self.xp
        lay = items.padded(self.block_cells)
        masks = [fill(xp, lay.stack(bucket)) for bucket in lay.buckets]
        colours = xp.asarray([self.transforms[ti].args[0] for ti in chunk], dtype=xp.uint8)
        cells = self._output_cells(len(chunk) * int(items.cells.shape[0])).reshape(len(chunk), -1)
        hashes = xp.empty((len(chunk), items.count), dtype=xp.uint64)
        for bucket, mask in zip(lay.buckets, masks):
            h, w = lay.sides(bucket)
            self.problem.hasher.fill_copy(lay.stack(bucket), mask, lay.starts(bucket), h, w, bucket[2], items.count,
                                          colours, cells, hashes)
        return cells, hashes

    def _luts(self, trs: tuple):
        """The (len(trs), 10) uint8 colour tables of elementwise transforms (cached)."""
        if trs not in self._lut_cache:
            xp = self.xp
            probe = xp.arange(10, dtype=xp.uint8).reshape(1, 1, 10)
            self._lut_cache[trs] = xp.stack([xp.asarray(tr(xp, probe), dtype=xp.uint8).reshape(10) for tr in trs])
        return self._lut_cache[trs]

    def _apply_luts(self, items: Items, luts):
        """Cells (K, C) and hashes (K, I) of the items mapped through each of K colour tables."""
        xp = self.xp
        K, C = int(luts.shape[0]), int(items.cells.shape[0])
        if dsl_kernels.enabled(xp):  # map, copy and hash in one kernel for all K tables
            cells = self._output_cells(K * C).reshape(K, C)
            return cells, self.problem.hasher.lut_copy(items.cells, items.start, items.h, items.w, luts, cells)
        cells = xp.take(luts, items.cells, axis=1, out=self._output_cells(K * C).reshape(K, C))
        hashes = xp.empty((K, items.count), dtype=xp.uint64)
        if self.bucket_all:
            lay = items.padded(self.block_cells)
            keeps_zero = bool((luts[:, 0] == 0).all())
            for bucket in lay.buckets:
                H, W, idx, _ = bucket
                stack = luts[:, lay.stack(bucket)]  # (K, m, H, W)
                if not keeps_zero:
                    stack = xp.where(lay.real_mask(bucket)[None], stack, xp.uint8(0))
                h, w = (xp.tile(v, K) for v in lay.sides(bucket))
                hashes[:, idx] = self.problem.hasher.padded(stack.reshape(-1, H, W), h, w).reshape(K, -1)
        else:
            for group in items.groups:
                hh, ww, lo, hi = group
                stack = luts[:, items.view(group)].reshape(-1, hh, ww)
                hashes[:, lo:hi] = self.problem.hasher.grids(stack).reshape(K, hi - lo)
        return cells, hashes

    def _output_cells(self, n: int):
        """An uninitialised uint8 array for ``n`` cells of a transform's output: cut from the
        pending queue's buffer while a block is expanded (see :meth:`_Pending.cells`)."""
        if self._pending is None:
            return self.xp.empty(n, dtype=self.xp.uint8)
        self._finish_waiting()  # its cells come first in the buffer
        return self._pending.cells(n)

    def _identity_parts(self, block: Block):
        items = block.items
        if dsl_kernels.enabled(self.xp):  # every grid of the flat layout in one kernel
            return items, self.problem.hasher.copy_padded(items.cells, items.start, 0, None, None, items.h, items.w)
        return items, self._hash_groups(items, items.groups)

    def _hash_groups(self, items: Items, groups):
        xp = self.xp
        return xp.concatenate([self.problem.hasher.grids(items.view(g)) for g in groups])

    def _apply(self, block: Block, tr):
        """Apply one transform to every grid of a block: one call per shape group (or one in all).

        Returns the new grids as :class:`Items` and their hashes (or ``None, None``).
        """
        xp = self.xp
        items = block.items
        self.stats.grid_transforms_computed += items.count
        if tr.primitive.elementwise:
            cells, hashes = self._apply_luts(items, self._luts((tr,)))
            return Items(xp, cells[0], items.state, items.sample, items.h, items.w, items.start), hashes[0]
        if tr.primitive.pad or (tr.primitive.layout == "padded" and self.bucket_all):
            return self._apply_padded(items, tr)
        # One call per exact shape group: the CPU's path for primitives that take real sides (it
        # beats padded gathers there), and any primitive that has only an exact-shape form.
        chunks, srcs, shapes, hashes = [], [], [], []
        bound = tr.max_sides
        for group in items.groups:
            lo, hi = group[2], group[3]
            if bound is not None and (group[0] > bound[0] or group[1] > bound[1]):
                continue  # too large for the transform to give a result
            for idx, arr in as_parts(xp, tr(xp, items.view(group)), hi - lo):
                m, hh, ww = arr.shape
                if m == 0 or not (1 <= hh <= MAX_SIDE and 1 <= ww <= MAX_SIDE):
                    continue
                arr = xp.ascontiguousarray(arr)
                chunks.append(arr.reshape(-1))
                srcs.append(idx + lo)
                shapes.append((m, hh, ww))
                hashes.append(self.problem.hasher.grids(arr))
        if not chunks:
            return None, None
        counts = np.array([s[0] for s in shapes])
        h = np.repeat(np.array([s[1] for s in shapes], dtype=np.int64), counts)
        w = np.repeat(np.array([s[2] for s in shapes], dtype=np.int64), counts)
        sizes = h * w
        src = xp.concatenate(srcs)
        out = Items(xp, xp.concatenate(chunks), items.state[src], items.sample[src], xp.asarray(h),
                    xp.asarray(w), xp.asarray(np.cumsum(sizes) - sizes))
        return out, xp.concatenate(hashes)


class _Waiting:
    """A transform's application whose kernels are launched but whose outputs are not made yet:
    calling it makes them (it may wait for the device). ``holds``: device arrays that the kernels
    still to come read by address, kept alive until then."""

    def __init__(self, finish, holds=()):
        self.finish = finish
        self.holds = holds

    def __call__(self):
        return self.finish()


def _transform_runs(transforms, fill_runs: bool = False, map_runs: bool = False, crop_runs: bool = False) -> list:
    """Transform indices in order, cut into runs: consecutive elementwise transforms together,
    with ``fill_runs`` consecutive transforms of one ``fill`` primitive together, with ``map_runs``
    consecutive coordinate-map transforms together (rigid maps apart from the others), with
    ``crop_runs`` consecutive transforms of one crop primitive (results in padded stacks) together,
    every other transform alone. A run's transforms all keep shape or none does (the last level
    applies those that do to fewer states: see ``Search._shape_keeping_states``)."""

    def kind(tr):
        p = tr.primitive
        if p.elementwise:
            return "elementwise"
        if map_runs and tr.coord_map is not None:
            return "rigid maps" if tr.coord_map[0] in RIGID_MAPS else "maps", p.keeps_shape
        if fill_runs and p.fill is not None:
            return "fill", p
        if crop_runs and p.pad != "inplace" and (p.pad == "crop" or p.layout == "padded"):
            return "crops", p
        return None

    runs: list = []
    last = None
    for ti, tr in enumerate(transforms):
        this = kind(tr)
        if runs and this is not None and this == last:
            runs[-1].append(ti)
        else:
            runs.append([ti])
        last = this
    return runs
