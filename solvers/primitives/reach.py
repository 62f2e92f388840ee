"""Rays from single cells to the objects they face along their row or column."""
from __future__ import annotations

from solvers import fused, kernels
from solvers.primitives.objects import label_objects
from solvers.registry import primitive


def _nearest_code(xp, code, axis, reverse):
    """For each cell, the code of the nearest non-zero code strictly before it along ``axis``
    (after it with ``reverse``); 0 where none."""
    if kernels.enabled(xp) and code.dtype == xp.int16 and code.ndim == 3:
        return fused.nearest_code(xp, code, axis, reverse)
    a = xp.moveaxis(code, axis, 0)
    if reverse:
        a = a[::-1]
    out = xp.zeros_like(a)
    for j in range(1, a.shape[0]):
        out[j] = xp.where(a[j - 1] != 0, a[j - 1], out[j - 1])
    if reverse:
        out = out[::-1]
    return xp.moveaxis(out, 0, axis)


@primitive(pad="inplace")
def dot_rays(xp, g):
    """Paint the background between each single cell (a one-cell object, 8-connected, one colour)
    and the cell of a larger object (an anchor) nearest to it along its row or column, with only
    background between, in the single cell's colour (column rays over row rays)."""
    labels, _, sizes, _ = label_objects(xp, g, 8, True)
    dot = (sizes[labels] == 1) & (labels > 0)
    # Codes: anchor cells keep their colour, single cells get theirs + 10.
    code = xp.where(dot, g.astype(xp.int16) + 10, g.astype(xp.int16))
    out = g
    for axis in (1, 2):
        before = _nearest_code(xp, code, axis, reverse=False)
        after = _nearest_code(xp, code, axis, reverse=True)
        anchor_before, anchor_after = (before > 0) & (before < 10), (after > 0) & (after < 10)
        ray = xp.where((before >= 10) & anchor_after, before - 10,
                       xp.where((after >= 10) & anchor_before, after - 10, 0))
        out = xp.where((out == 0) & (ray > 0), ray.astype(g.dtype), out)
    return out
