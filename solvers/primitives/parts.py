"""Loose lattices: parts of a grid cut by lines of any colour, the background included, into
cells of any sizes (or, without separator lines, into equal square blocks).

The strict lattice of :mod:`solvers.primitives.split` wants full lines of one non-zero colour
cutting the grid into cells of one size. A loose lattice takes, per grid, the first of:

1. the non-zero colour whose full rows and columns cut the grid into two or more cells, of any
   sizes (most lines wins; ties: the lower colour);
2. the background: full rows and columns of 0 cutting it into two or more rectangles, of which
   only those holding a non-zero cell are parts;
3. no separators: a grid 2, 3 or 4 times as long as it is wide (or wide as long) cut into square
   blocks.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from solvers.primitives.split import CRITERIA, choose_part, cut_features
from solvers.ragged import coords, no_result, per_grid, real_mask, remap, scatter_results
from solvers.registry import primitive
from solvers.stack_cache import per_stack
from solvers.xp import stable_argsort

MAX_BLOCKS = 4  # a grid cut into more than 4 square blocks without separators is not a row of parts


class LooseAxis(NamedTuple):
    """One axis of loose lattices: per line its part (-1 on separators and padding) and its place
    in the part; per part (sorted, padded with 0) its first line and its length; the part count."""

    part: object
    local: object
    start: object
    length: object
    count: object


def _line_colours(xp, g, real, across: int):
    """Per real row (``across=2``) or column (``across=1``): its colour where all its cells have one
    colour, else -1 (also on padding lines); and which lines are real."""
    first = g[:, :, :1] if across == 2 else g[:, :1, :]
    full = ((g == first) | ~real).all(axis=across)
    line_real = real[:, :, 0] if across == 2 else real[:, 0, :]
    colour = (first[:, :, 0] if across == 2 else first[:, 0, :]).astype(np.int64)
    return xp.where(full & line_real, colour, -1), line_real


def _run_starts(sep):
    """The lines (..., L) that start a run of non-separator lines."""
    start = ~sep
    start[..., 1:] &= sep[..., :-1]
    return start


def _axis(xp, sep, start) -> LooseAxis:
    """Parts along one axis from separator lines ``sep`` (n, L) and part starts ``start``."""
    n, L = sep.shape
    part = xp.where(sep, -1, xp.cumsum(start, axis=1) - 1)
    first = stable_argsort(xp, ~start, axis=1)
    count = start.sum(axis=1)
    at = xp.take_along_axis(first, xp.maximum(part, 0), axis=1)
    local = xp.where(part >= 0, xp.arange(L)[None, :] - at, -1)
    length = (part[:, :, None] == xp.arange(L)[None, None, :]).sum(axis=1)
    first = xp.where(xp.arange(L)[None, :] < count[:, None], first, 0)
    return LooseAxis(part, local, first, length, count)


def loose_lattice(xp, g, h, w):
    """The loose lattice (see the module) of each zero-padded grid: ``(rows, cols, ok, blank)``,
    rows and cols :class:`LooseAxis`, ``ok`` where the grid has one, ``blank`` where its separators
    are the background (then only parts holding a non-zero cell count)."""
    real = real_mask(xp, g, h, w)
    rc, rr = _line_colours(xp, g, real, 2)
    cc, cr = _line_colours(xp, g, real, 1)
    colours = xp.arange(10)[None, :, None]
    found = []
    for colour, line_real in ((rc, rr), (cc, cr)):
        is_c = colour[:, None, :] == colours
        runs = _run_starts(is_c | ~line_real[:, None, :]).sum(axis=2)
        found.append((runs, is_c.sum(axis=2)))
    (r_runs, r_lines), (c_runs, c_lines) = found
    lines = r_lines + c_lines
    valid = (r_runs * c_runs >= 2) & (lines >= 1)
    score = xp.where(valid, xp.where(colours[:, :, 0] > 0, 2 * lines, 1), -1)
    sep_colour = score.argmax(axis=1)
    has_sep = valid.any(axis=1)
    # Without separators: square blocks along the longer side.
    rows_k = xp.where(w > 0, h // xp.maximum(w, 1), 0)
    cols_k = xp.where(h > 0, w // xp.maximum(h, 1), 0)
    by_rows = ~has_sep & (h == rows_k * w) & (rows_k >= 2) & (rows_k <= MAX_BLOCKS)
    by_cols = ~has_sep & (w == cols_k * h) & (cols_k >= 2) & (cols_k <= MAX_BLOCKS)
    axes = []
    for colour, line_real, block, side in ((rc, rr, by_rows, w), (cc, cr, by_cols, h)):
        L = colour.shape[1]
        sep = ((colour == sep_colour[:, None]) & has_sep[:, None]) | ~line_real
        start = _run_starts(sep)
        cut = (xp.arange(L)[None, :] % xp.maximum(side, 1)[:, None] == 0) & line_real
        start = xp.where(block[:, None], cut, start)
        axes.append(_axis(xp, sep, start))
    ok = has_sep | by_rows | by_cols
    return axes[0], axes[1], ok, has_sep & (sep_colour == 0)


def loose_parts(xp, g, h, w):
    """The grids of the stack that have a loose lattice (their indices, the two axes, the most parts
    across ``Cm``, which parts exist (m, P) and their features (see
    :func:`solvers.primitives.split.part_features`), each (m, P)), made once per stack; None where
    no grid has one."""
    def compute():
        rows, cols, ok, blank = loose_lattice(xp, g, h, w)
        idx = xp.flatnonzero(ok)
        if idx.shape[0] == 0:
            return None
        rows, cols = LooseAxis(*(f[idx] for f in rows)), LooseAxis(*(f[idx] for f in cols))
        blank = blank[idx]
        m = idx.shape[0]
        Rm, Cm = int(rows.count.max()), int(cols.count.max())
        features = cut_features(xp, g[idx], rows.part, cols.part, rows.local, cols.local, Rm, Cm)
        p = xp.arange(Rm * Cm)[None, :]
        # Parts differ in size: the shape and content hashes take in the part's sides.
        sides = (xp.take_along_axis(rows.length, xp.broadcast_to(p // Cm, (m, Rm * Cm)), axis=1) * 31
                 + xp.take_along_axis(cols.length, xp.broadcast_to(p % Cm, (m, Rm * Cm)), axis=1))
        for f in (3, 4):
            features[f] = (features[f] * 961 + sides) % (1 << 36)
        exists = ((p // Cm) < rows.count[:, None]) & ((p % Cm) < cols.count[:, None])
        exists &= ~blank[:, None] | (features[0] > 0)
        return idx, rows, cols, Cm, exists, features
    return per_stack(g, ("loose lattice parts",), compute)


@primitive(tuple((c,) for c in CRITERIA), layout="padded")
def pick_cell(xp, g, h, w, criterion):
    """Crop to one part of the grid's loose lattice (see the module): cells between full lines of
    a non-zero colour, of any sizes; else the rectangles between full lines of 0 that hold a
    non-zero cell; else square blocks of a grid 2 to 4 times as long as wide. ``criterion`` as in
    :func:`solvers.primitives.split.pick_part`: ``largest``/``smallest`` most/fewest non-zero
    cells, ``most_colours``/``fewest_colours``, ``unique_colours``, ``unique_shape``, ``common``
    (ties: the first in reading order); parts of different sides never have one shape or content.
    Grids without such a part give no result."""
    found = loose_parts(xp, g, h, w) if g.shape[0] else None
    if found is None:
        return no_result(xp, g)
    idx, rows, cols, Cm, exists, features = found
    _, H, W = g.shape
    chosen, ok = choose_part(xp, exists, *features, criterion)
    i, j = (chosen // Cm)[:, None], (chosen % Cm)[:, None]
    top = xp.take_along_axis(rows.start, i, axis=1)[:, 0]
    left = xp.take_along_axis(cols.start, j, axis=1)[:, 0]
    ph = xp.take_along_axis(rows.length, i, axis=1)[:, 0]
    pw = xp.take_along_axis(cols.length, j, axis=1)[:, 0]
    R, C = coords(xp, H, W)
    res = remap(xp, g[idx], ph, pw, H, W, R + per_grid(top), C + per_grid(left), valid=ok)
    return scatter_results(xp, g, h, w, idx, res)

