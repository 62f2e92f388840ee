"""Connected objects: label every grid of a stack in one call, then pick one object per grid.

Labelling uses ``ndimage.label`` on the whole ``(n, h, w)`` stack with a structuring element that
never connects across grids, so a batch costs one C/CUDA call per colour, not one per grid.
"""
from __future__ import annotations

import numpy as np

from solvers import fused, kernels
from solvers.batch import bounding_boxes, colour_counts, crop_boxes
from solvers.registry import primitive
from solvers.stack_cache import per_stack
from solvers.xp import ndimage, repeat_index

CONNECTIVITY = {4: ((0, 1, 0), (1, 1, 1), (0, 1, 0)), 8: ((1, 1, 1), (1, 1, 1), (1, 1, 1))}
OBJECT_KINDS = tuple((conn, by_colour) for by_colour in (True, False) for conn in (4, 8))


def label_objects(xp, g, conn: int, by_colour: bool):
    """Label the non-zero objects of each grid.

    Returns ``labels`` (n, h, w) int32 (0 = background, labels unique across the stack, in no
    promised order), and indexed by label: ``owner`` (which grid it belongs to), ``sizes`` (cells;
    entry 0: background cells) and ``first`` (flat position in the stack of its first cell in
    reading order, for tie-breaking). Callers must not modify the returned arrays (see
    :mod:`solvers.stack_cache`).
    """
    return _labelling(xp, g, conn, by_colour)[:4]


def _labelling(xp, g, conn: int, by_colour: bool) -> tuple:
    """The stack's labelling, made once per stack (on a GPU with its per-grid picks too)."""
    return per_stack(g, ("objects", conn, bool(by_colour)), lambda: _label_objects(xp, g, conn, by_colour))


def _roots(xp, g, conn: int, by_colour: bool) -> tuple:
    """On a GPU: the stack's objects numbered within each grid (``kernels.object_roots``), made once
    per stack; the labelling (numbered across the stack) is made from them, when asked for."""
    return per_stack(g, ("object roots", conn, bool(by_colour)), lambda: kernels.object_roots(xp, g, conn, by_colour))


def _label_objects(xp, g, conn: int, by_colour: bool):
    if kernels.enabled(xp):
        return kernels.label_objects(xp, g, conn, by_colour, _roots(xp, g, conn, by_colour))
    nd = ndimage(xp)
    structure = np.zeros((3, 3, 3), dtype=bool)  # host array: both ndimage modules take it
    structure[1] = CONNECTIVITY[conn]
    n, h, w = g.shape
    if by_colour:
        # One call for all colours: one (h, w) slab per colour present in a grid (usually two or
        # three per grid rather than nine), labelled together.
        gi, ci = xp.nonzero(colour_counts(xp, g)[:, 1:] > 0)
        slabs = g[gi] == (ci + 1).astype(g.dtype)[:, None, None]
    else:
        gi = xp.arange(n)
        slabs = g != 0
    cells = h * w
    if slabs.shape[0]:
        lab, total = nd.label(slabs, structure=structure)
        total = int(total)
        # The object cells as flat positions (one index array, not three: a third of the work).
        at = xp.flatnonzero(lab)
        vals = lab.reshape(-1)[at].astype(xp.int64)
        slab = at // cells
        grid = gi[slab]
        place = grid * cells + (at - slab * cells)  # the cell's flat position in the stack
    else:
        total = 0
        vals = grid = place = xp.zeros(0, dtype=xp.int64)
    labels = xp.zeros(n * cells, dtype=xp.int32)
    labels[place] = vals.astype(xp.int32)
    owner = xp.zeros(total + 1, dtype=xp.int64)
    owner[vals] = grid
    sizes = xp.bincount(vals, minlength=total + 1)
    sizes[0] = n * cells - vals.shape[0]
    # Reading order of each object's first cell: ties between objects go to the earliest one. A
    # label lives in one slab, whose cells ``flatnonzero`` lists in reading order.
    first = xp.zeros(total + 1, dtype=xp.int64)
    if total:
        ids, at_first = xp.unique(vals, return_index=True)
        first[ids] = place[at_first]
    return labels.reshape(n, h, w), owner, sizes, first


def flat_grid_index(xp, shape):
    """For every cell of an ``(n, h, w)`` stack, flattened, the index of its grid."""
    n, h, w = shape
    return repeat_index(xp, xp.full(n, h * w, dtype=xp.int64), n * h * w)


def pick_per_grid(xp, owner, score, first, shape):
    """For each grid of a stack of ``shape`` (n, h, w), the label with the lowest ``score`` (an
    integer in -1023..1023, such as a size; ties: first in reading order); 0 if none."""
    n, h, w = shape
    ids = xp.arange(1, owner.shape[0])
    if ids.shape[0] == 0:
        return xp.zeros(n, dtype=xp.int64)
    # One sort of one int64 key (grid, then score, then the first cell's place in its grid)
    # instead of a three-key lexsort: three times fewer sorting passes, the same order.
    own = owner[1:]
    key = (own << 21) | ((score[1:] + 1024) << 10) | (first[1:] - own * (h * w))
    order = xp.argsort(key)
    own_sorted = own[order]
    lead = xp.ones(order.shape[0], dtype=bool)
    lead[1:] = own_sorted[1:] != own_sorted[:-1]
    chosen = xp.zeros(n, dtype=xp.int64)
    chosen[own_sorted[lead]] = ids[order[lead]]
    return chosen


def _by_size(xp, g, conn: int, by_colour: bool, largest: bool):
    """The labels of ``g``'s labelling and, per grid, the label of its largest (or smallest)
    object; ties: first in reading order; 0 where it has none. One labelling (also outside a
    stack-cache scope); inside one, the picks too are made once per stack. On a GPU the labels
    are numbered within each grid (``kernels.object_roots``: no wait to number them across the
    stack), which is all that comparing a grid's cells with its pick needs."""
    if kernels.enabled(xp):  # numbered within each grid and picked by one kernel: no wait
        local, _, _, picks = _roots(xp, g, conn, by_colour)
        return local, picks[:, 0 if largest else 1]
    labelling = _labelling(xp, g, conn, by_colour)
    labels, owner, sizes, first = labelling[:4]

    def pick():
        return pick_per_grid(xp, owner, -sizes if largest else sizes, first, labels.shape)
    return labels, per_stack(g, ("by size", conn, bool(by_colour), bool(largest)), pick)


def _crop_chosen(xp, g, labels, chosen):
    if kernels.enabled(xp):
        return fused.crop_objects(xp, g, labels, chosen)
    mask = (labels == chosen[:, None, None]) & (chosen[:, None, None] > 0)
    top, left, hh, ww, has = bounding_boxes(xp, mask)
    return crop_boxes(xp, xp.where(mask, g, g.dtype.type(0)), top, left, hh, ww, has)


@primitive(OBJECT_KINDS, pad="crop")
def largest_object(xp, g, conn, by_colour):
    """Crop to the largest object (by cell count; ties: first in reading order); others erased."""
    return _crop_chosen(xp, g, *_by_size(xp, g, conn, by_colour, largest=True))


@primitive(OBJECT_KINDS, pad="crop")
def smallest_object(xp, g, conn, by_colour):
    """Crop to the smallest object (by cell count; ties: first in reading order); others erased."""
    return _crop_chosen(xp, g, *_by_size(xp, g, conn, by_colour, largest=False))


@primitive(((8, True), (8, False)), pad="inplace")
def keep_largest_object(xp, g, conn, by_colour):
    """Erase everything but the largest object, in place."""
    labels, chosen = _by_size(xp, g, conn, by_colour, largest=True)
    if kernels.enabled(xp):
        return kernels.keep_label(xp, labels, chosen, g, keep=True)
    return xp.where(labels == chosen[:, None, None], g, g.dtype.type(0))


@primitive(((8, True), (8, False)), pad="inplace")
def remove_largest_object(xp, g, conn, by_colour):
    """Erase the largest object, in place."""
    labels, chosen = _by_size(xp, g, conn, by_colour, largest=True)
    if kernels.enabled(xp):
        return kernels.keep_label(xp, labels, chosen, g, keep=False)
    return xp.where((labels == chosen[:, None, None]) & (labels > 0), g.dtype.type(0), g)


@primitive(pad="inplace")
def remove_noise(xp, g):
    """Erase single-cell objects (8-connected, same colour)."""
    labels, _, sizes, _ = label_objects(xp, g, 8, True)
    if kernels.enabled(xp):
        return fused.label_paint(xp, g, labels, sizes, erase_single=True)
    return xp.where(sizes[labels] == 1, g.dtype.type(0), g)


@primitive(pad="crop")
def rarest_color_object(xp, g):
    """Crop to the object (8-connected, any colours) containing the grid's least frequent colour."""
    from solvers.batch import colour_counts, shared_colour_counts

    if kernels.enabled(xp):  # objects numbered within each grid: enough to pick and crop one
        labels = _roots(xp, g, 8, False)[0]
        return _crop_chosen(xp, g, labels, fused.rarest_label(xp, g, labels, shared_colour_counts(xp, g)))
    counts = colour_counts(xp, g)
    counts[:, 0] = 0
    big = g.shape[1] * g.shape[2] + 1  # above any colour's count (known without asking the device)
    rare = xp.where(counts > 0, counts, big).argmin(axis=1)
    labels, _, _, _ = label_objects(xp, g, 8, False)
    hit = (g == rare[:, None, None].astype(g.dtype)) & (g != 0)
    # The first labelled cell of the rare colour in reading order decides the object.
    n, h, w = g.shape
    flat_hit = hit.reshape(n, h * w)
    pos = flat_hit.argmax(axis=1)
    chosen = labels.reshape(n, h * w)[xp.arange(n), pos].astype(xp.int64)
    chosen = xp.where(flat_hit.any(axis=1), chosen, 0)
    return _crop_chosen(xp, g, labels, chosen)
