"""Per-cell rules on a separator lattice: the grid keeps its shape and its separator lines, and
every cell of the lattice (see :func:`solvers.primitives.split.lattice`) is rewritten as a whole.
"""
from __future__ import annotations

import numpy as np

from solvers.padded import Padded
from solvers.primitives.split import choose_part, lattice_grids, lattice_parts
from solvers.ragged import no_result, per_grid, scatter_results
from solvers.registry import primitive
from solvers.stack_cache import per_stack


def _cell_colours(xp, g, h, w):
    """For the grids of the stack with a lattice: their indices, lattice, each pixel's cell index
    (-1 on separators and padding, (m, H, W)), and per cell (m, P) its most frequent non-zero colour
    (ties: the lower colour; 0 where it has none) and its number of non-zero pixels; made once per
    stack. None where no grid has a lattice."""
    def compute():
        found = lattice_grids(xp, g, h, w)
        if found is None:
            return None
        idx, lat = found
        m = idx.shape[0]
        Cm = int(lat.n_cols.max())
        P = int(lat.n_rows.max()) * Cm
        inside = (lat.row_part[:, :, None] >= 0) & (lat.col_part[:, None, :] >= 0)
        cell = xp.where(inside, lat.row_part[:, :, None] * Cm + lat.col_part[:, None, :], -1)
        key = (xp.arange(m)[:, None, None] * P + cell)[inside] * 10 + g[idx][inside].astype(np.int64)
        hist = xp.bincount(key, minlength=m * P * 10).reshape(m, P, 10)[:, :, 1:]
        major = xp.where(hist.max(axis=2) > 0, hist.argmax(axis=2) + 1, 0)
        return idx, lat, cell, major, hist.sum(axis=2)
    return per_stack(g, ("lattice cell colours",), compute)


@primitive((("all",), ("most",)), layout="padded", keeps_shape=True)
def fill_cells(xp, g, h, w, which):
    """Fill cells of the separator lattice with their most frequent non-zero colour (ties: the
    lower colour), separators unchanged. ``all``: every cell (empty cells stay empty); ``most``:
    the cells with the most non-zero pixels, every other cell cleared. Grids without a lattice
    give no result."""
    found = _cell_colours(xp, g, h, w) if g.shape[0] else None
    if found is None:
        return no_result(xp, g)
    idx, lat, cell, major, count = found
    if which == "most":
        major = xp.where(count == count.max(axis=1, keepdims=True), major, 0)
    m = idx.shape[0]
    painted = major[xp.arange(m)[:, None, None], xp.maximum(cell, 0)].astype(g.dtype)
    out = xp.where(cell >= 0, painted, g[idx])
    return scatter_results(xp, g, h, w, idx, Padded(out, h[idx], w[idx], xp.ones(m, dtype=bool)))


@primitive((("smallest",), ("largest",)), layout="padded", keeps_shape=True)
def part_to_lattice(xp, g, h, w, criterion):
    """On a lattice of as many cells down and across as each cell has pixels, choose the cell with
    the fewest (``smallest``) or most (``largest``) non-zero pixels (ties: the first in reading
    order) and fill every cell (i, j) with the colour of the chosen cell's pixel (i, j); separators
    unchanged. Other grids give no result."""
    return _from_chosen_cell(xp, g, h, w, criterion, within_cells=False)


@primitive((("largest",), ("unique_shape",)), layout="padded", keeps_shape=True)
def spread_part(xp, g, h, w, criterion):
    """Copy one cell of the separator lattice into every cell, separators unchanged: the cell with
    the most non-zero pixels (``largest``; ties: the first in reading order) or the one cell whose
    shape (its non-zero pixels) no other cell has (``unique_shape``). Grids without such a cell
    give no result."""
    return _from_chosen_cell(xp, g, h, w, criterion, within_cells=True)


def _from_chosen_cell(xp, g, h, w, criterion, within_cells: bool):
    """The lattice's cells filled from the cell that ``criterion`` chooses
    (:func:`solvers.primitives.split.choose_part`): ``within_cells``, pixel (i, j) of every cell
    from the chosen cell's pixel (i, j); else every pixel of lattice cell (i, j) from it, where
    the lattice has as many cells down and across as a cell has pixels."""
    found = lattice_parts(xp, g, h, w) if g.shape[0] else None
    if found is None:
        return no_result(xp, g)
    idx, lat, Cm, exists, features = found
    chosen, ok = choose_part(xp, exists, *features, criterion)
    if not within_cells:
        ok &= (lat.cell_h == lat.n_rows) & (lat.cell_w == lat.n_cols)
    top = xp.take_along_axis(lat.row_start, (chosen // Cm)[:, None], axis=1)
    left = xp.take_along_axis(lat.col_start, (chosen % Cm)[:, None], axis=1)
    sub = g[idx]
    m, H, W = sub.shape
    row_at, col_at = (lat.row_local, lat.col_local) if within_cells else (lat.row_part, lat.col_part)
    rows = xp.clip(top + row_at, 0, H - 1)
    cols = xp.clip(left + col_at, 0, W - 1)
    taken = sub[xp.arange(m)[:, None, None], rows[:, :, None], cols[:, None, :]]
    inside = (lat.row_part[:, :, None] >= 0) & (lat.col_part[:, None, :] >= 0)
    out = xp.where(inside & per_grid(ok), taken, sub)
    return scatter_results(xp, g, h, w, idx, Padded(out, h[idx], w[idx], ok))
