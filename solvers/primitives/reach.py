"""Reaching along the background: single cells moved to, drawn towards or printed onto the
objects they face along their row or column."""
from __future__ import annotations

from solvers.primitives.objects import label_objects
from solvers.registry import primitive

# Quarter turns (``rot90``) that make each direction point down, as in lines.py.
_TO_DOWN = {"down": 0, "left": 1, "up": 2, "right": 3}
_STEP = {"down": (1, 0), "up": (-1, 0), "left": (0, -1), "right": (0, 1)}
_NONE = 99  # more steps than any grid has


def _steps_down(xp, g, dot, anchor):
    """For each dot, the cells it can fall straight down before it meets the nearest anchor cell
    of its own colour below it (``_NONE`` where there is none; other cells: ``_NONE``)."""
    n, H, W = g.shape
    colours = xp.arange(1, 10, dtype=g.dtype)[:, None, None]
    nearest = xp.full((9, n, W), _NONE, dtype=xp.int16)  # per colour: the nearest anchor row below
    steps = xp.full((n, H, W), _NONE, dtype=xp.int16)
    for j in range(H - 1, -1, -1):
        row = g[:, j, :]
        below = xp.take_along_axis(nearest, (xp.maximum(row.astype(xp.int64), 1) - 1)[None], axis=0)[0]
        steps[:, j, :] = xp.where(dot[:, j, :] & (below < _NONE), below - j - 1, _NONE)
        nearest = xp.where(anchor[:, j, :][None] & (row[None] == colours), j, nearest)
    return steps


def _nearest_code(xp, code, axis, reverse):
    """For each cell, the code of the nearest non-zero code strictly before it along ``axis``
    (after it with ``reverse``); 0 where none."""
    a = xp.moveaxis(code, axis, 0)
    if reverse:
        a = a[::-1]
    out = xp.zeros_like(a)
    for j in range(1, a.shape[0]):
        out[j] = xp.where(a[j - 1] != 0, a[j - 1], out[j - 1])
    if reverse:
        out = out[::-1]
    return xp.moveaxis(out, 0, axis)


def _move_dots(xp, g, dot, anchor):
    n, H, W = g.shape
    best = xp.full((n, H, W), _NONE, dtype=xp.int16)
    dr = xp.zeros((n, H, W), dtype=xp.int16)
    dc = xp.zeros((n, H, W), dtype=xp.int16)
    for d, k in _TO_DOWN.items():
        rot = (1, 2)
        steps = xp.rot90(_steps_down(xp, xp.rot90(g, k, axes=rot), xp.rot90(dot, k, axes=rot),
                                     xp.rot90(anchor, k, axes=rot)), -k, axes=rot)
        closer = steps < best
        best = xp.where(closer, steps, best)
        dr = xp.where(closer, _STEP[d][0], dr)
        dc = xp.where(closer, _STEP[d][1], dc)
    out = xp.where(dot, g.dtype.type(0), g)
    gi, r, c = xp.nonzero(dot & (best < _NONE))
    if gi.shape[0]:
        s = best[gi, r, c]
        colour = g[gi, r, c]
        tr, tc = r + dr[gi, r, c] * s, c + dc[gi, r, c] * s
        # Colour by colour, so that where dots of two colours land on one cell the higher one wins
        # on every backend (a scatter's order among duplicates is not promised on a GPU).
        for k in range(1, 10):
            sel = colour == k
            out[gi[sel], tr[sel], tc[sel]] = g.dtype.type(k)
    return out


def _dot_rays(xp, g, dot, stamp):
    # Codes: anchors keep their colour, dots their colour + 10.
    code = xp.where(dot, g.astype(xp.int16) + 10, g.astype(xp.int16))
    target = (g != 0) & ~dot if stamp else g == 0
    out = g
    done = xp.zeros(g.shape, dtype=bool)
    for axis in (1, 2):
        before = _nearest_code(xp, code, axis, reverse=False)
        after = _nearest_code(xp, code, axis, reverse=True)
        if stamp:  # an anchor cell facing a dot
            ray = xp.where(before >= 10, before - 10, xp.where(after >= 10, after - 10, 0))
        else:      # a background cell between a dot and an anchor
            anchor_before, anchor_after = (before > 0) & (before < 10), (after > 0) & (after < 10)
            ray = xp.where((before >= 10) & anchor_after, before - 10,
                           xp.where((after >= 10) & anchor_before, after - 10, 0))
        paint = target & ~done & (ray > 0)
        out = xp.where(paint, ray.astype(g.dtype), out)
        done = done | paint
    return out


@primitive((("move",), ("ray",), ("stamp",)), pad="inplace")
def dots_to_anchors(xp, g, mode):
    """Single cells (one-cell objects, 8-connected, one colour) and the larger objects (anchors)
    they face along their row or column. ``move``: each single cell moves straight to the cell
    next to the nearest anchor cell of its own colour that it faces (passing over anything between;
    nearest first, then down, up, left, right), single cells facing none are erased. ``ray``: the
    background between a single cell and the anchor cell nearest to it along a row or column,
    with nothing between, is painted the single cell's colour (column rays over row rays);
    ``stamp``: the anchor cell that a single cell faces across the background takes its colour
    (facing along a column over along a row, from above or the left over below or the right)."""
    labels, _, sizes, _ = label_objects(xp, g, 8, True)
    dot = (sizes[labels] == 1) & (labels > 0)
    if mode == "move":
        return _move_dots(xp, g, dot, (g != 0) & ~dot)
    return _dot_rays(xp, g, dot, mode == "stamp")
