"""Batch layout shared by all primitives.

A batch is a stack of grids of one shape, ``(n, h, w)`` ``uint8``. A primitive maps a batch to
either one stack (every grid gave a result of one shape) or to :class:`Parts`: several stacks of
different shapes, each with the indices (into the input batch) of the grids it holds. Grids that
appear in no part had no valid result (for example: no object to crop), which invalidates the
program state they belong to.
"""
from __future__ import annotations

from dataclasses import dataclass

from solvers import fused, kernels
from solvers.padded import Padded
from solvers.stack_cache import per_stack

MAX_SIDE = 30
NUM_COLOURS = 10


@dataclass
class Parts:
    """Results of a primitive grouped by output shape: ``items`` is a list of ``(index, grids)``."""

    items: list

    def __iter__(self):
        return iter(self.items)


def as_parts(xp, result, n: int) -> Parts:
    """Normalise a primitive's return value (stack, :class:`Parts` or :class:`Padded`) to Parts."""
    if isinstance(result, Parts):
        return result
    if isinstance(result, Padded):
        key = xp.where(result.valid, result.h * 64 + result.w, -1)
        if n and int(key.min()) == int(key.max()):  # most often: every grid valid, one shape
            if int(key[0]) < 0:
                return Parts([])
            hh, ww = divmod(int(key[0]), 64)
            return Parts([(xp.arange(n), result.arr[:, :hh, :ww])])
        parts = []
        for k in sorted(int(v) for v in xp.unique(key).tolist() if v >= 0):
            hh, ww = divmod(k, 64)
            idx = xp.nonzero(key == k)[0]
            parts.append((idx, result.arr[idx, :hh, :ww]))
        return Parts(parts)
    return Parts([(xp.arange(n), result)])


def colour_counts(xp, g):
    """Per-grid colour histogram: ``(n, 10)`` int64 counts of each colour (a new array each call,
    which the caller may change; the counts are made once per stack, see
    :mod:`solvers.stack_cache`)."""
    return shared_colour_counts(xp, g).copy()


def shared_colour_counts(xp, g):
    """:func:`colour_counts` without the copy: the stack's shared counts, which callers must not
    change (see :mod:`solvers.stack_cache`)."""
    return per_stack(g, ("colour counts",), lambda: _colour_counts(xp, g))


def _colour_counts(xp, g):
    if kernels.enabled(xp):
        return kernels.colour_counts(xp, g)
    n, h, w = g.shape
    flat = g.reshape(n, h * w).astype(xp.int64) + (xp.arange(n, dtype=xp.int64) * NUM_COLOURS)[:, None]
    return xp.bincount(flat.ravel(), minlength=n * NUM_COLOURS).reshape(n, NUM_COLOURS)


def bounding_boxes(xp, mask):
    """Bounding box of the true cells of each ``(h, w)`` mask: ``top, left, height, width, any``."""
    h, w = mask.shape[1:]
    rows = mask.any(axis=2)
    cols = mask.any(axis=1)
    has = rows.any(axis=1)
    top = rows.argmax(axis=1)
    bottom = h - 1 - rows[:, ::-1].argmax(axis=1)
    left = cols.argmax(axis=1)
    right = w - 1 - cols[:, ::-1].argmax(axis=1)
    return top, left, bottom - top + 1, right - left + 1, has


def crop_boxes(xp, g, top, left, height, width, valid) -> Padded:
    """Crop each grid to its box (one gather for the whole stack); ``valid`` false: no result."""
    n, h, w = g.shape
    rows = xp.arange(h)[None, :, None]
    cols = xp.arange(w)[None, None, :]
    inside = (rows < height[:, None, None]) & (cols < width[:, None, None]) & valid[:, None, None]
    src_r = xp.minimum(top[:, None, None] + rows, h - 1)
    src_c = xp.minimum(left[:, None, None] + cols, w - 1)
    picked = g[xp.arange(n)[:, None, None], src_r, src_c]
    return Padded(xp.where(inside, picked, g.dtype.type(0)), height, width, valid)


def crop_to_mask(xp, g, mask, valid=None) -> Padded:
    """Crop each grid to the bounding box of its cells where ``mask`` holds; grids with none (or
    where ``valid`` is false) have no result."""
    if kernels.enabled(xp):
        return fused.crop_to_mask(xp, g, mask, valid)
    top, left, height, width, has = bounding_boxes(xp, mask)
    return crop_boxes(xp, g, top, left, height, width, has if valid is None else has & valid)
