"""Applying a padding-aware transform per size bucket of the padded layout, with the crops' kernels
on a GPU (their outputs finished later, while the device works).
"""
from __future__ import annotations

from pipeline.search import kernels
from pipeline.search.absorb import _join
from pipeline.search.apply import _Waiting
from pipeline.search.device import HostCopy
from pipeline.search.problem import Items, pitched_positions
from solvers import kernels as dsl_kernels
from solvers.padded import Padded


class PaddedBuckets:
    """Per-bucket application of :class:`~pipeline.search.driver.Search` (mixed into it)."""

    def _apply_padded(self, items: Items, tr):
        """Apply a padding-aware transform once per size bucket (see PaddedLayout)."""
        xp, hasher = self.xp, self.problem.hasher
        lay = items.padded(self.block_cells)
        if dsl_kernels.enabled(xp):
            return self._apply_padded_kernels(items, lay, tr)
        results, hashes = [], []
        for bucket in lay.buckets:
            H, W, idx, _ = bucket
            h, w = lay.sides(bucket)
            res = tr.padded(xp, lay.stack(bucket), h, w)
            if tr.primitive.pad == "inplace":
                res = xp.where(lay.real_mask(bucket), res, xp.uint8(0))
                hashes.append(hasher.padded(res, h, w))
            else:
                hashes.append(hasher.padded(res.arr, res.h, res.w)[res.valid])
            results.append(res)
        if tr.primitive.pad == "inplace":
            buf = xp.concatenate([r.reshape(-1) for r in results])
            order = xp.concatenate([b[2] for b in lay.buckets])
            hv = xp.empty(items.count, dtype=xp.uint64)
            hv[order] = xp.concatenate(hashes)
            out = Items(xp, lay.gather(buf), items.state, items.sample, items.h, items.w, items.start)
            return out, hv
        # Crops: the valid grids, bucket by bucket, each read from its padded result.
        src, hs, ws, bases, widths = [], [], [], [], []
        offset = 0
        for (_, _, idx, _), res in zip(lay.buckets, results):
            keep = xp.nonzero(res.valid)[0]
            m, OH, OW = res.arr.shape
            src.append(idx[keep])
            hs.append(res.h[keep])
            ws.append(res.w[keep])
            bases.append(offset + keep * (OH * OW))
            widths.append(xp.full(keep.shape[0], OW, dtype=xp.int64))
            offset += m * OH * OW
        src = xp.concatenate(src)
        if src.shape[0] == 0:
            return None, None
        h, w = xp.concatenate(hs).astype(xp.int64), xp.concatenate(ws).astype(xp.int64)
        sizes = h * w
        out = Items(xp, None, items.state[src], items.sample[src], h, w, dsl_kernels.cumsum(xp, sizes, exclusive=True))
        base, width = xp.concatenate(bases), xp.concatenate(widths)
        buf = xp.concatenate([r.arr.reshape(-1) for r in results])
        total = int(sizes.sum())
        if dsl_kernels.enabled(xp):
            out.cells = xp.empty(total, dtype=xp.uint8)
            kernels.copy_rows(xp, buf, out.cells, base, width, out.start, w, h, w)
        else:
            out.cells = buf[pitched_positions(xp, base, width, h, w, total, int(buf.shape[0]))]
        return out, xp.concatenate(hashes)

    def _apply_padded_kernels(self, items: Items, lay, tr):
        """:meth:`_apply_padded` on a GPU: the results are copied out of their padded stacks and
        hashed in one kernel (no masking of the padding, no concatenation of the buckets'
        results), a crop's kept grids are found with a kernel per bucket and one after, and the
        host waits for the device once per crop transform (for how many grids and cells it keeps),
        not once per bucket."""
        xp, hasher = self.xp, self.problem.hasher
        if tr.primitive.pad == "inplace":
            cells = None
            hashes = []
            for bucket in lay.buckets:
                H, W, idx, _ = bucket
                h, w = lay.sides(bucket)
                res = tr.padded(xp, lay.stack(bucket), h, w)
                if cells is None:  # cut after the first kernels are launched: a waiting crop finishes meanwhile
                    cells = self._output_cells(int(items.cells.shape[0]))
                hashes.append(hasher.copy_padded(res, lay.grid_bases(bucket), W, cells, lay.starts(bucket), h, w))
            if cells is None:
                cells = self._output_cells(int(items.cells.shape[0]))
            if len(hashes) == 1 and lay.ordered():  # one bucket in item order: nothing to scatter
                hv = hashes[0]
            else:
                hv = xp.empty(items.count, dtype=xp.uint64)
                if hashes:
                    hv[lay.order()] = _join(xp, hashes)
            return Items(xp, cells, items.state, items.sample, items.h, items.w, items.start), hv
        finish = self._crops_launched(items, lay, (tr,))
        if finish is None:
            return None, None
        if self._may_defer:
            return _Waiting(lambda: finish()[0], holds=finish.holds), None
        return finish()[0]

    def _crops_launched(self, items: Items, lay, trs: tuple):
        """Launch the kernels of K crop transforms ``trs`` (one, or a run of one primitive's; their
        results lie in padded stacks) on every bucket, and return the rest as a callable (its
        ``holds``: arrays to keep alive until it runs) that waits once for how many grids and cells
        each keeps and gives each transform's ``(Items, hashes)`` (``(None, None)``: none kept); or
        None when no bucket can give any transform a result. Buckets whose grids are all too large
        for a transform to give a result are skipped."""
        xp, hasher = self.xp, self.problem.hasher
        fits = [[lay.may_fit(b, tr.max_sides) for b in range(len(lay.buckets))] for tr in trs]
        if not any(any(fit) for fit in fits):
            return None
        results = [[tr.padded(xp, lay.stack(bucket), *lay.sides(bucket)) if ok else self._no_results()
                    for bucket, ok in zip(lay.buckets, fit)] for tr, fit in zip(trs, fits)]
        self._run_deferred()  # the host's board work, while the device runs the kernels just launched
        self._finish_waiting()  # the crop before this one, likewise
        # Every grid's flag, sides and source, transform by transform in bucket order (one kernel
        # for every transform and bucket), then the kept ones' with their states and samples (one
        # kernel, after the one wait for how many each transform keeps), then their cells copied
        # and hashed from wherever their bucket's results lie (one kernel).
        K, n = len(trs), lay.first_of_bucket[-1]
        ok, *sides = (xp.empty(K * n, dtype=bool), *(xp.empty(K * n, dtype=t) for t in (
            xp.int64, xp.int64, xp.int64, xp.uint64, xp.int64)))
        oh, ow, size, addr, opitch = sides
        arrays = []  # the results' cells, contiguous, kept until the copy below is queued
        entries = []
        for k, per_bucket in enumerate(results):
            for res, first, last in zip(per_bucket, lay.first_of_bucket, lay.first_of_bucket[1:]):
                if res.arr is not None:
                    res = Padded(xp.ascontiguousarray(res.arr), res.h, res.w, res.valid)
                    arrays.append(res.arr)
                entries.append((k * n + first, last - first, res))
        arrays += kernels.crop_sides(xp, entries, (ok, *sides))
        distinct = self._distinct
        weights = distinct.multiplicity if distinct is not None and distinct.view.items is items else None
        weighed = None  # how many of the block's grids the kept distinct grids stand for
        if weights is not None:
            weighed = xp.where(ok.reshape(K, n), weights[lay.order()][None, :], 0).reshape(-1)
        *counts, totals = kernels.crop_counts(xp, ok, size, n, weighed)
        totals = HostCopy(totals)

        def finish() -> list:
            counted = totals.get()
            kept_of, cells_of = counted[:K].tolist(), counted[K:2 * K].tolist()
            if not sum(kept_of):
                return [(None, None)] * K
            h, w, start, at, src, pitch, state, sample = kernels.crop_take(
                xp, ok, oh, ow, addr, opitch, lay.order(), items.state, items.sample, counts, sum(kept_of))
            cells = self._output_cells(sum(cells_of))
            hashes = hasher.copy_from(src, pitch, cells, at, h, w)
            outputs, a, c = [], 0, 0
            for k in range(K):
                m, size_k = kept_of[k], cells_of[k]
                if m == 0:
                    outputs.append((None, None))
                    continue
                represents = None if weights is None else int(counted[2 * K + k])
                outputs.append((Items(xp, cells[c:c + size_k], state[a:a + m], sample[a:a + m], h[a:a + m],
                                      w[a:a + m], start[a:a + m], represents=represents), hashes[a:a + m]))
                a, c = a + m, c + size_k
            return outputs

        finish.holds = arrays
        return finish

    def _no_results(self) -> Padded:
        """A bucket's results when none of its grids can have one: sides and flags that broadcast
        to any number of grids (``arr`` is never read: no grid is kept)."""
        if self._none is None:
            xp = self.xp
            one = xp.ones(1, dtype=xp.int64)
            self._none = Padded(None, one, one, xp.zeros(1, dtype=bool))
        return self._none
