"""Applying a transform to the distinct grids of a block only and mapping its outputs back (a block's
grids repeat: the same state reached by different programs).
"""
from __future__ import annotations

import functools

import numpy as np

from pipeline.search import kernels
from pipeline.search.absorb import _Output
from pipeline.search.apply import _Waiting
from pipeline.search.device import is_out_of_memory
from pipeline.search.keyset import first_positions
from pipeline.search.problem import Block, concat_items, Items
from solvers import kernels as dsl_kernels


# A block of at least this many grids applies each transform to its distinct grids only, when at
# least DISTINCT_MIN_REPEATS of its grids repeat another (results do not depend on it; see
# _distinct_grids). Measured on ARC-1 train: 42% of the grids entering level 3 repeat one in the
# same block (34% of their padded cells), 25% at level 2. On a GPU the first levels are bound by the
# host's launches, which the mapping back adds to.
DISTINCT_MIN_ITEMS = {"cpu": 1_000, "gpu": 500_000}
DISTINCT_MIN_REPEATS = 0.1


class DistinctGridsStep:
    """The distinct-grids step of :class:`~pipeline.search.driver.Search` (mixed into it)."""

    def _distinct_grids(self, block) -> "_DistinctGrids | None":
        """The distinct grids of ``block`` as a block of their own (each grid its own "state"), to
        apply the transforms to instead of every grid, or None where too few grids repeat or the
        block is small. Grids are the same where their hashes are (64 bits, as states are
        deduplicated); a transform's output depends on its grid alone, so mapping the outputs
        back gives every grid the output it would have had."""
        xp, items = self.xp, block.items
        n = items.count
        if n < DISTINCT_MIN_ITEMS["cpu" if xp is np else "gpu"]:
            return None
        t0 = self._now()
        view = None
        try:
            first = first_positions(xp, self._identity_parts(block)[1])
            is_first = first == xp.arange(n, dtype=xp.int64)
            firsts = xp.nonzero(is_first)[0]
            m = int(firsts.shape[0])
            if m <= (1 - DISTINCT_MIN_REPEATS) * n:
                grids = items.take(firsts, grouped=True)
                grids.state = xp.arange(m, dtype=xp.int64)
                of_item = (dsl_kernels.cumsum(xp, is_first) - 1)[first]
                view = _DistinctGrids(xp, block, Block(grids, xp.zeros(m, dtype=xp.int64), grids.state), of_item,
                                      xp.bincount(of_item, minlength=m) if dsl_kernels.enabled(xp) else None)
        except Exception as exc:  # no room for the view: the block's every grid, as without it
            if not is_out_of_memory(exc):
                raise
            view = None
            self._free_device_memory()
            self.stats.oom_splits += 1
        self.stats.add_time("search.distinct", self._now() - t0)
        return view


class _DistinctGrids:
    """A block's distinct grids as a block of their own (``view``: grid j is its state j and has id
    j) and, per grid of the block, the view's grid it repeats (``of_item``); :meth:`mapped` turns
    outputs made from the view into the block's."""

    def __init__(self, xp, block: Block, view: Block, of_item, multiplicity=None):
        self.xp = xp
        self.block = block
        self.view = view
        self.of_item = of_item
        self.multiplicity = multiplicity  # per distinct grid, how many of the block's it stands for

    def mapped(self, outputs):
        """The outputs of a run of transforms applied to the view (a list of :class:`_Output`, or a
        :class:`_Waiting` for them) as outputs of the block, in the same order."""
        if isinstance(outputs, _Waiting):
            return _Waiting(functools.partial(self._mapped_list, outputs.finish), outputs.holds)
        return self._mapped_list(lambda: outputs)

    def _mapped_list(self, outputs) -> list:
        # A transform's outputs come in several parts where the view was split (out of memory):
        # each part holds some distinct grids, so the parts are mapped back together.
        parts: dict = {}
        for o in outputs():
            parts.setdefault(o.transform, []).append(o)
        return [o for o in (self._mapped(group) for group in parts.values()) if o is not None]

    def _mapped(self, parts: list) -> "_Output | None":
        xp, items, view = self.xp, self.block.items, self.view.items
        o = parts[0]
        out = o.items
        if len(parts) == 1 and out.state is view.state:  # every distinct grid's output, in their order
            at = self.of_item

            def side(v):  # the block's own sides where the output has the view's (maybe swapped)
                return items.h if v is view.h else items.w if v is view.w else v[at]

            mapped = Items(xp, out.cells, items.state, items.sample, side(out.h), side(out.w), out.start[at])
            return _Output(self.block, o.transform, mapped, o.hashes[at])
        # Some grids have no output (crops), or the view was split: find each grid's output by its
        # distinct grid (the view's ids number them).
        parts = [p for p in parts if p.items.count]
        if not parts:
            return None
        o = parts[0]
        out = o.items
        if len(parts) > 1:
            out = concat_items(xp, [p.items for p in parts])
            out.state = xp.concatenate([p.block.gid[p.items.state] for p in parts])
            hashes = xp.concatenate([p.hashes for p in parts])
        else:
            hashes = o.hashes
            if o.block is not self.view:
                out = Items(xp, out.cells, o.block.gid[out.state], out.sample, out.h, out.w, out.start)
        if out.represents is not None and dsl_kernels.enabled(xp):  # counted with the crop: no wait here
            *parts, hv = kernels.mapped_back(xp, self.of_item, self.view.num_states, out.state, items.state,
                                             items.sample, out.h, out.w, out.start, hashes, out.represents)
            return _Output(self.block, o.transform, Items(xp, out.cells, *parts), hv)
        place = xp.full(self.view.num_states, -1, dtype=xp.int64)
        place[out.state] = xp.arange(out.count, dtype=xp.int64)
        at = place[self.of_item]
        sel = xp.nonzero(at >= 0)[0]
        at = at[sel]
        mapped = Items(xp, out.cells, items.state[sel], items.sample[sel], out.h[at], out.w[at], out.start[at])
        return _Output(self.block, o.transform, mapped, hashes[at])
