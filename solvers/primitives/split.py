"""Parts of a grid: pick one part by a criterion, or overlay all parts cellwise.

A grid's parts are the cells of its separator lattice: full rows and columns of one non-zero
colour that cut the grid into two or more cells of one size. The search's states are grids, so the
list of parts lives inside one primitive: the result is again a grid.

Parts are compared through per-part features computed for the whole stack with ``bincount``:
non-zero cells, the set of colours, and two hashes, one of the shape (which cells are non-zero)
and one of the content (which colour each cell has), both relative to the part's top-left corner.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from solvers.batch import MAX_SIDE
from solvers.padded import Padded
from solvers.ragged import coords, no_result, per_grid, real_mask, remap, scatter_results
from solvers.registry import primitive
from solvers.stack_cache import per_stack
from solvers.xp import stable_argsort

# Random weights per cell position (and per colour): a part's hash is their sum over its cells.
# Sums of at most 900 weights below 2**24 are exact in float64 (bincount's weights).
_RNG = np.random.default_rng(20240611)
_SHAPE_WEIGHTS = _RNG.integers(1, 1 << 24, size=(MAX_SIDE, MAX_SIDE))
_CONTENT_WEIGHTS = _RNG.integers(1, 1 << 20, size=(10, MAX_SIDE, MAX_SIDE)) * (np.arange(10) > 0)[:, None, None]


class Lattice(NamedTuple):
    """The separator lattice of each grid of a stack, per axis (rows, then columns): for every
    line its part index (-1 on separators and padding) and its place inside the part, where each
    part starts, the number of parts and their size; ``ok`` where the grid has a lattice."""

    row_part: object
    row_local: object
    row_start: object
    n_rows: object
    cell_h: object
    col_part: object
    col_local: object
    col_start: object
    n_cols: object
    cell_w: object
    ok: object


def _full_line_colours(xp, g, real, across: int):
    """Per real row (``across=2``) or column (``across=1``): its colour where all its cells have
    one non-zero colour, else 0; and which lines are real (not padding)."""
    first = g[:, :, :1] if across == 2 else g[:, :1, :]
    full = ((g == first) | ~real).all(axis=across)
    line_real = real[:, :, 0] if across == 2 else real[:, 0, :]
    colour = (first[:, :, 0] if across == 2 else first[:, 0, :]).astype(np.int64)
    return xp.where(full & line_real, colour, 0), line_real


def _runs(xp, sep, places: bool = False):
    """For separator masks ``sep`` (..., L): the number of runs of other lines, the longest run,
    the lines inside runs, and (with ``places``) each line's place in its run (-1 on separators)."""
    cur = xp.zeros(sep.shape[:-1], dtype=np.int64)
    runs, longest = xp.zeros_like(cur), xp.zeros_like(cur)
    local = xp.full(sep.shape, -1, dtype=np.int64) if places else None
    for i in range(sep.shape[-1]):
        s = sep[..., i]
        runs += ~s & (cur == 0)
        cur = xp.where(s, 0, cur + 1)
        longest = xp.maximum(longest, cur)
        if places:
            local[..., i] = cur - 1
    return runs, longest, (~sep).sum(axis=-1), local


def _axis(xp, colour, real, sep_colour):
    """Part index, place, part starts, part count and part size along one axis for the chosen
    separator colour ``sep_colour`` (n,)."""
    sep = (colour == sep_colour[:, None]) | ~real
    runs, longest, _, local = _runs(xp, sep, places=True)
    start = ~sep
    start[:, 1:] &= sep[:, :-1]
    part = xp.where(sep, -1, xp.cumsum(start, axis=1) - 1)
    return part, local, stable_argsort(xp, ~start, axis=1), runs, longest


def shared_lattice(xp, g, h, w) -> Lattice:
    """:func:`lattice`, made once per stack (see :mod:`solvers.stack_cache`)."""
    return per_stack(g, ("split lattice",), lambda: lattice(xp, g, h, w))


def lattice_grids(xp, g, h, w):
    """The indices of the stack's grids that have a lattice and their lattices
    (:func:`shared_lattice` of those grids alone), or None where no grid has one."""
    whole = shared_lattice(xp, g, h, w)
    idx = xp.flatnonzero(whole.ok)
    if idx.shape[0] == 0:
        return None
    return idx, Lattice(*(f[idx] for f in whole))


def lattice(xp, g, h, w) -> Lattice:
    """The separator lattice of each zero-padded grid (real sides ``h``, ``w``).

    Separators are the full rows and columns of one non-zero colour; a colour qualifies where its
    lines cut the grid into at least two cells, all of one size. Of several, the colour with the
    most lines wins (ties: the lower colour).
    """
    real = real_mask(xp, g, h, w)
    rc, rr = _full_line_colours(xp, g, real, 2)
    cc, cr = _full_line_colours(xp, g, real, 1)
    n, H, W = g.shape
    lat = Lattice(xp.full((n, H), -1, dtype=np.int64), xp.full((n, H), -1, dtype=np.int64),
                  xp.zeros((n, H), dtype=np.int64), xp.zeros(n, dtype=np.int64), xp.zeros(n, dtype=np.int64),
                  xp.full((n, W), -1, dtype=np.int64), xp.full((n, W), -1, dtype=np.int64),
                  xp.zeros((n, W), dtype=np.int64), xp.zeros(n, dtype=np.int64), xp.zeros(n, dtype=np.int64),
                  xp.zeros(n, dtype=bool))
    # Only grids with a full line of a non-zero colour can have a lattice: most have none.
    sub = xp.flatnonzero((rc > 0).any(axis=1) | (cc > 0).any(axis=1))
    if sub.shape[0] == 0:
        return lat
    colours = xp.arange(1, 10)[None, :, None]
    found = []
    for colour, line_real in ((rc[sub], rr[sub]), (cc[sub], cr[sub])):
        sep = (colour[:, None, :] == colours) | ~line_real[:, None, :]
        runs, longest, inside, _ = _runs(xp, sep)
        lines = (colour[:, None, :] == colours).sum(axis=2)
        found.append((colour, line_real, runs, (runs >= 1) & (longest * runs == inside), lines))
    (_, _, r_runs, r_equal, r_lines), (_, _, c_runs, c_equal, c_lines) = found
    valid = r_equal & c_equal & (r_runs * c_runs >= 2) & (r_lines + c_lines >= 1)
    sep_colour = xp.where(valid, r_lines + c_lines, -1).argmax(axis=1) + 1
    ok = valid.any(axis=1)
    fields = []
    for colour, line_real, _, _, _ in found:
        part, local, start, runs, size = _axis(xp, colour, line_real, sep_colour)
        fields += [xp.where(ok[:, None], part, -1), local, start, xp.where(ok, runs, 0), size]
    for whole, part in zip(lat, fields + [ok]):
        whole[sub] = part
    return lat


CRITERIA = ("largest", "smallest", "most_colours", "fewest_colours", "unique_colours", "unique_shape", "common")
PICKS = tuple((c,) for c in CRITERIA)


def occurrences(xp, group, key):
    """For each element, how many elements of its ``group`` have its ``key`` (``key`` < 2**36),
    through one sort of (group, key)."""
    _, inverse, counts = xp.unique(group * (1 << 36) + key, return_inverse=True, return_counts=True)
    return counts[inverse.reshape(-1)]


def choose_part(xp, exists, cells, colour_sets, n_colours, shapes, contents, criterion):
    """Per grid, the index of the part chosen by ``criterion`` among the parts where ``exists``
    (n, P), parts in reading order (ties: the first), and whether the choice is defined."""
    big = 1 << 20
    if criterion in ("largest", "smallest", "most_colours", "fewest_colours"):
        value = cells if criterion in ("largest", "smallest") else n_colours
        score = value if criterion in ("smallest", "fewest_colours") else -value
        score = xp.where(exists, score, big)
        return score.argmin(axis=1), exists.any(axis=1)
    key = {"unique_colours": colour_sets, "unique_shape": shapes, "common": contents}[criterion]
    n, P = key.shape
    grid = xp.broadcast_to(xp.arange(n)[:, None], (n, P))
    count = xp.zeros((n, P), dtype=np.int64)
    count[exists] = occurrences(xp, grid[exists], key[exists])
    if criterion == "common":
        top = count.max(axis=1)
        # The most frequent content must be the only one that frequent.
        ok = (top >= 2) & ((count == top[:, None]).sum(axis=1) == top)
        return xp.where(exists, -count, big).argmin(axis=1), ok
    once = (count == 1) & exists
    return once.argmax(axis=1), once.sum(axis=1) == 1


def cut_features(xp, sub, row_part, col_part, row_local, col_local, Rm: int, Cm: int) -> list:
    """The :func:`part_features` of the parts of a stack ``sub`` (m, H, W) cut along its rows and
    columns: ``row_part`` (m, H) and ``col_part`` (m, W) number each line's part (-1: no part),
    ``row_local`` and ``col_local`` its place in it; at most ``Rm`` x ``Cm`` parts. Each feature
    is (m, Rm * Cm), part ``i * Cm + j`` at row part ``i`` and column part ``j``."""
    m = sub.shape[0]
    part = row_part[:, :, None] * Cm + col_part[:, None, :]
    inside = (row_part[:, :, None] >= 0) & (col_part[:, None, :] >= 0)
    key = (xp.arange(m)[:, None, None] * (Rm * Cm) + part)[inside]
    local_r = xp.broadcast_to(row_local[:, :, None], sub.shape)[inside]
    local_c = xp.broadcast_to(col_local[:, None, :], sub.shape)[inside]
    features = part_features(xp, key, sub[inside].astype(np.int64), local_r, local_c, m * Rm * Cm)
    return [f.reshape(m, Rm * Cm) for f in features]


def part_features(xp, key, colour, local_r, local_c, size):
    """Per part (``key`` 0..size-1 for every counted cell): non-zero cells, colour set (bit c-1 for
    colour c), number of colours, shape hash and content hash."""
    hist = xp.bincount(key * 10 + colour, minlength=size * 10).reshape(size, 10)
    present = hist[:, 1:] > 0
    colour_sets = (present * (1 << xp.arange(9))).sum(axis=1)
    at = local_r * MAX_SIDE + local_c
    shape_w = xp.asarray(_SHAPE_WEIGHTS.reshape(-1), dtype=np.float64)[at] * (colour > 0)
    content_w = xp.asarray(_CONTENT_WEIGHTS.reshape(10, -1), dtype=np.float64)[colour, at]
    shapes = xp.bincount(key, weights=shape_w, minlength=size).astype(np.int64)
    contents = xp.bincount(key, weights=content_w, minlength=size).astype(np.int64)
    return hist[:, 1:].sum(axis=1), colour_sets, present.sum(axis=1), shapes, contents


def lattice_parts(xp, g, h, w):
    """The grids of the stack that have a lattice (their indices, the lattice, the most parts
    across ``Cm``, which parts exist (m, P) and their features, each (m, P)), made once per stack;
    None where no grid has one."""
    def compute():
        found = lattice_grids(xp, g, h, w)
        if found is None:
            return None
        idx, lat = found
        Rm, Cm = int(lat.n_rows.max()), int(lat.n_cols.max())
        features = cut_features(xp, g[idx], lat.row_part, lat.col_part, lat.row_local, lat.col_local, Rm, Cm)
        p = xp.arange(Rm * Cm)[None, :]
        exists = ((p // Cm) < lat.n_rows[:, None]) & ((p % Cm) < lat.n_cols[:, None])
        return idx, lat, Cm, exists, features
    return per_stack(g, ("split lattice parts",), compute)


# Not enumerated by the search: on arc1-train at depth 2 it solved nothing combine_parts does not
# (PICKS are its arguments for hand-written programs and the tests).
@primitive((), layout="padded")
def pick_part(xp, g, h, w, criterion):
    """Split the grid into the cells between its separator lines (full rows and columns of one
    non-zero colour cutting it into two or more cells of one size) and crop to one cell.

    ``largest``/``smallest``: most/fewest non-zero cells; ``most_colours``/``fewest_colours``:
    most/fewest distinct non-zero colours (ties: first in reading order); ``unique_colours``: the
    one part whose set of colours no other part has; ``unique_shape``: the one part whose shape
    (its non-zero cells) no other part has; ``common``: a part whose content occurs most often,
    where no other content occurs as often. Grids without such a part give no result.
    """
    found = lattice_parts(xp, g, h, w) if g.shape[0] else None
    if found is None:
        return no_result(xp, g)
    idx, lat, Cm, exists, features = found
    _, H, W = g.shape
    chosen, ok = choose_part(xp, exists, *features, criterion)
    top = xp.take_along_axis(lat.row_start, (chosen // Cm)[:, None], axis=1)[:, 0]
    left = xp.take_along_axis(lat.col_start, (chosen % Cm)[:, None], axis=1)[:, 0]
    R, C = coords(xp, H, W)
    res = remap(xp, g[idx], lat.cell_h, lat.cell_w, H, W, R + per_grid(top), C + per_grid(left), valid=ok)
    return scatter_results(xp, g, h, w, idx, res)


COMBINE_OPS = (("or",), ("and",), ("one",), ("nor",))
MAX_PARTS_PER_SIDE = 4  # overlaying more parts than 4 x 4 is not what lattices of that many cells ask


@primitive(COMBINE_OPS, layout="padded")
def combine_parts(xp, g, h, w, op):
    """Overlay the cells of the separator lattice (see :func:`pick_part`; at most 4 x 4 cells)
    cellwise. ``or``: every cell from the first part in reading order that has it non-zero;
    ``and``: cells non-zero in all parts (the first part's colour); ``one``: cells non-zero in
    exactly one part (its colour); ``nor``: cells zero in all parts, painted 1.
    """
    found = _overlay(xp, g, h, w)
    if found is None:
        return no_result(xp, g)
    idx, lat, first, count = found
    zero = g.dtype.type(0)
    if op == "or":
        out = first
    elif op == "and":
        out = xp.where(count == per_grid(lat.n_rows * lat.n_cols), first, zero)
    elif op == "one":
        out = xp.where(count == 1, first, zero)
    else:
        out = xp.where(real_mask(xp, first, lat.cell_h, lat.cell_w) & (count == 0), g.dtype.type(1), zero)
    res = Padded(out, lat.cell_h, lat.cell_w, xp.ones(idx.shape[0], dtype=bool))
    return scatter_results(xp, g, h, w, idx, res)


def _overlay(xp, g, h, w):
    """For the grids of the stack with a lattice of at most 4 x 4 cells: their indices, lattice,
    and per cell of a part the first non-zero colour over the parts in reading order and the
    number of parts where it is non-zero; made once per stack. None where no grid qualifies."""
    def compute():
        whole = shared_lattice(xp, g, h, w)
        idx = xp.flatnonzero(whole.ok & (whole.n_rows <= MAX_PARTS_PER_SIDE) & (whole.n_cols <= MAX_PARTS_PER_SIDE))
        if idx.shape[0] == 0:
            return None
        lat = Lattice(*(f[idx] for f in whole))
        sub = g[idx]
        rows, cols = int(lat.cell_h.max()), int(lat.cell_w.max())
        R, C = coords(xp, rows, cols)
        first = xp.zeros((idx.shape[0], rows, cols), dtype=g.dtype)
        count = xp.zeros(first.shape, dtype=np.int64)
        for i in range(int(lat.n_rows.max())):
            for j in range(int(lat.n_cols.max())):
                has = per_grid((i < lat.n_rows) & (j < lat.n_cols))
                src_r = R + per_grid(lat.row_start[:, i])
                src_c = C + per_grid(lat.col_start[:, j])
                part = remap(xp, sub, lat.cell_h, lat.cell_w, rows, cols, src_r, src_c).arr
                part = xp.where(has, part, g.dtype.type(0))
                count += part != 0
                first = xp.where(first == 0, part, first)
        return idx, lat, first, count
    return per_stack(g, ("split overlay",), compute)
