"""Parts of a grid: pick one part by a criterion, or overlay all parts cellwise.

A grid's parts are either the cells of its separator lattice (full rows and columns of one
non-zero colour that cut the grid into two or more cells of one size) or its objects (8-connected
non-zero cells of any colours). The search's states are grids, so the list of parts lives inside
one primitive: the result is again a grid.

Parts are compared through per-part features computed for the whole stack with ``bincount``:
non-zero cells, the set of colours, and two hashes, one of the shape (which cells are non-zero)
and one of the content (which colour each cell has), both relative to the part's top-left corner.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from solvers.batch import MAX_SIDE, crop_to_mask
from solvers.primitives.objects import label_objects, pick_per_grid
from solvers.ragged import coords, no_result, per_grid, real_mask, remap
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


def _runs(xp, sep):
    """For separator masks ``sep`` (..., L): the number of runs of other lines, the longest run,
    the lines inside runs, and each line's place in its run (-1 on separators)."""
    cur = xp.zeros(sep.shape[:-1], dtype=np.int64)
    runs, longest = xp.zeros_like(cur), xp.zeros_like(cur)
    local = xp.full(sep.shape, -1, dtype=np.int64)
    for i in range(sep.shape[-1]):
        s = sep[..., i]
        runs += ~s & (cur == 0)
        cur = xp.where(s, 0, cur + 1)
        longest = xp.maximum(longest, cur)
        local[..., i] = cur - 1
    return runs, longest, (~sep).sum(axis=-1), local


def _axis(xp, colour, real, sep_colour):
    """Part index, place, part starts, part count and part size along one axis for the chosen
    separator colour ``sep_colour`` (n,)."""
    sep = (colour == sep_colour[:, None]) | ~real
    runs, longest, _, local = _runs(xp, sep)
    start = ~sep
    start[:, 1:] &= sep[:, :-1]
    part = xp.where(sep, -1, xp.cumsum(start, axis=1) - 1)
    return part, local, stable_argsort(xp, ~start, axis=1), runs, longest


def shared_lattice(xp, g, h, w) -> Lattice:
    """:func:`lattice`, made once per stack (see :mod:`solvers.stack_cache`)."""
    return per_stack(g, ("split lattice",), lambda: lattice(xp, g, h, w))


def lattice(xp, g, h, w) -> Lattice:
    """The separator lattice of each zero-padded grid (real sides ``h``, ``w``).

    Separators are the full rows and columns of one non-zero colour; a colour qualifies where its
    lines cut the grid into at least two cells, all of one size. Of several, the colour with the
    most lines wins (ties: the lower colour).
    """
    real = real_mask(xp, g, h, w)
    colours = xp.arange(1, 10)[None, :, None]
    found = []
    for across in (2, 1):
        colour, line_real = _full_line_colours(xp, g, real, across)
        sep = (colour[:, None, :] == colours) | ~line_real[:, None, :]
        runs, longest, inside, _ = _runs(xp, sep)
        lines = (colour[:, None, :] == colours).sum(axis=2)
        found.append((colour, line_real, runs, (runs >= 1) & (longest * runs == inside), lines))
    (rc, rr, r_runs, r_equal, r_lines), (cc, cr, c_runs, c_equal, c_lines) = found
    valid = r_equal & c_equal & (r_runs * c_runs >= 2) & (r_lines + c_lines >= 1)
    score = xp.where(valid, r_lines + c_lines, -1)
    sep_colour = score.argmax(axis=1) + 1
    ok = valid.any(axis=1)
    axes = []
    for colour, line_real in ((rc, rr), (cc, cr)):
        part, local, start, runs, size = _axis(xp, colour, line_real, sep_colour)
        # Grids without a lattice have no parts.
        axes += [xp.where(ok[:, None], part, -1), local, start, xp.where(ok, runs, 0), size]
    return Lattice(*axes, ok)


CRITERIA = ("largest", "smallest", "most_colours", "fewest_colours", "unique_colours", "unique_shape", "common")
PICKS = tuple(("lattice", c) for c in CRITERIA) + tuple(("objects", c) for c in CRITERIA[2:])


def _colour_count(xp, colour_sets):
    """The number of colours in each colour set (a 9-bit mask)."""
    count = xp.zeros(colour_sets.shape, dtype=np.int64)
    for c in range(9):
        count += (colour_sets >> c) & 1
    return count


def occurrences(xp, group, key):
    """For each element, how many elements of its ``group`` have its ``key`` (``key`` < 2**36),
    through one sort of (group, key)."""
    _, inverse, counts = xp.unique(group * (1 << 36) + key, return_inverse=True, return_counts=True)
    return counts[inverse.reshape(-1)]


def _choose(xp, exists, cells, colour_sets, shapes, contents, criterion):
    """Per grid, the index of the part chosen by ``criterion`` among the parts where ``exists``
    (n, P), parts in reading order (ties: the first), and whether the choice is defined."""
    n_colours = _colour_count(xp, colour_sets)
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


def _part_features(xp, key, colour, local_r, local_c, size):
    """Per part (``key`` 0..size-1 for every counted cell): non-zero cells, colour set (bit c-1 for
    colour c), shape hash and content hash."""
    hist = xp.bincount(key * 10 + colour, minlength=size * 10).reshape(size, 10)
    present = hist[:, 1:] > 0
    colour_sets = (present * (1 << xp.arange(9))).sum(axis=1)
    at = local_r * MAX_SIDE + local_c
    shape_w = xp.asarray(_SHAPE_WEIGHTS.reshape(-1), dtype=np.float64)[at] * (colour > 0)
    content_w = xp.asarray(_CONTENT_WEIGHTS.reshape(10, -1), dtype=np.float64)[colour, at]
    shapes = xp.bincount(key, weights=shape_w, minlength=size).astype(np.int64)
    contents = xp.bincount(key, weights=content_w, minlength=size).astype(np.int64)
    return hist[:, 1:].sum(axis=1), colour_sets, shapes, contents


def _lattice_parts(xp, g, h, w):
    """The stack's lattice, the most parts across ``Cm``, which parts exist (n, P) and their
    features (each (n, P)), made once per stack."""
    def compute():
        lat = shared_lattice(xp, g, h, w)
        n = g.shape[0]
        Rm, Cm = max(1, int(lat.n_rows.max())), max(1, int(lat.n_cols.max()))
        part = lat.row_part[:, :, None] * Cm + lat.col_part[:, None, :]
        inside = (lat.row_part[:, :, None] >= 0) & (lat.col_part[:, None, :] >= 0)
        key = (xp.arange(n)[:, None, None] * (Rm * Cm) + part)[inside]
        local_r = xp.broadcast_to(lat.row_local[:, :, None], g.shape)[inside]
        local_c = xp.broadcast_to(lat.col_local[:, None, :], g.shape)[inside]
        features = _part_features(xp, key, g[inside].astype(np.int64), local_r, local_c, n * Rm * Cm)
        p = xp.arange(Rm * Cm)[None, :]
        exists = ((p // Cm) < lat.n_rows[:, None]) & ((p % Cm) < lat.n_cols[:, None])
        return lat, Cm, exists, [f.reshape(n, Rm * Cm) for f in features]
    return per_stack(g, ("split lattice parts",), compute)


def _pick_lattice_cell(xp, g, h, w, criterion):
    lat, Cm, exists, features = _lattice_parts(xp, g, h, w)
    n, H, W = g.shape
    chosen, ok = _choose(xp, exists, *features, criterion)
    top = xp.take_along_axis(lat.row_start, (chosen // Cm)[:, None], axis=1)[:, 0]
    left = xp.take_along_axis(lat.col_start, (chosen % Cm)[:, None], axis=1)[:, 0]
    R, C = coords(xp, H, W)
    return remap(xp, g, lat.cell_h, lat.cell_w, H, W, R + per_grid(top), C + per_grid(left), valid=lat.ok & ok)


def _object_parts(xp, g):
    """The stack's objects (8-connected, any colours) and their features (indexed by label),
    made once per stack."""
    def compute():
        labels, owner, sizes, first = label_objects(xp, g, 8, False)
        n, H, W = g.shape
        size = owner.shape[0]
        at = xp.flatnonzero(labels)
        lab = labels.reshape(-1)[at].astype(np.int64)
        r, c = (at // W) % H, at % W
        top = (first % (H * W)) // W
        left = (xp.bincount(lab * W + c, minlength=size * W).reshape(size, W) > 0).argmax(axis=1)
        colour = g.reshape(-1)[at].astype(np.int64)
        return labels, owner, first, _part_features(xp, lab, colour, r - top[lab], c - left[lab], size)
    return per_stack(g, ("split objects",), compute)


def _pick_object(xp, g, criterion):
    labels, owner, first, (cells, colour_sets, shapes, contents) = _object_parts(xp, g)
    n = g.shape[0]
    if criterion in ("most_colours", "fewest_colours"):
        n_colours = _colour_count(xp, colour_sets)
        score, ok = (n_colours if criterion == "fewest_colours" else -n_colours), xp.ones(n, dtype=bool)
    else:
        key = {"unique_colours": colour_sets, "unique_shape": shapes, "common": contents}[criterion]
        count = xp.concatenate([xp.zeros(1, dtype=np.int64), occurrences(xp, owner[1:], key[1:])])
        if criterion == "common":
            score = -xp.minimum(count, 1023)
            top = _max_per_grid(xp, owner[1:], count[1:], n)
            at_top = xp.bincount(owner[1:], weights=(count[1:] == top[owner[1:]]).astype(np.float64), minlength=n)
            ok = (top >= 2) & (at_top.astype(np.int64) == top)
        else:
            once = count == 1
            once[0] = False
            score = xp.where(once, 0, 1)
            ok = xp.bincount(owner[1:], weights=once[1:].astype(np.float64), minlength=n) == 1
    chosen = xp.where(ok, pick_per_grid(xp, owner, score, first, g.shape), 0)
    mask = (labels == per_grid(chosen)) & per_grid(chosen > 0)
    return crop_to_mask(xp, xp.where(mask, g, g.dtype.type(0)), mask)


def _max_per_grid(xp, owner, value, n):
    """The largest ``value`` per grid (0 where a grid has none), ``value`` >= 0 and small."""
    table = xp.bincount(owner * 1024 + xp.minimum(value, 1023), minlength=n * 1024).reshape(n, 1024) > 0
    return 1023 - table[:, ::-1].argmax(axis=1)


@primitive(PICKS, layout="padded")
def pick_part(xp, g, h, w, parts, criterion):
    """Split the grid into ``parts`` (``lattice``: the cells between separator lines, all of one
    size; ``objects``: 8-connected non-zero objects of any colours) and crop to one part.

    ``largest``/``smallest``: most/fewest non-zero cells; ``most_colours``/``fewest_colours``:
    most/fewest distinct non-zero colours (ties: first in reading order); ``unique_colours``: the
    one part whose set of colours no other part has; ``unique_shape``: the one part whose shape
    (its non-zero cells) no other part has; ``common``: a part whose content occurs most often,
    where no other content occurs as often. Grids without such a part give no result.
    """
    if g.shape[0] == 0:
        return no_result(xp, g)
    if parts == "lattice":
        return _pick_lattice_cell(xp, g, h, w, criterion)
    return _pick_object(xp, g, criterion)


COMBINE_OPS = (("or",), ("and",), ("one",), ("nor",))
MAX_PARTS_PER_SIDE = 4  # overlaying more parts than 4 x 4 is not what lattices of that many cells ask


@primitive(COMBINE_OPS, layout="padded")
def combine_parts(xp, g, h, w, op):
    """Overlay the cells of the separator lattice (see :func:`pick_part`; at most 4 x 4 cells)
    cellwise. ``or``: every cell from the first part in reading order that has it non-zero;
    ``and``: cells non-zero in all parts (the first part's colour); ``one``: cells non-zero in
    exactly one part (its colour); ``nor``: cells zero in all parts, painted 1.
    """
    if g.shape[0] == 0:
        return no_result(xp, g)
    lat = shared_lattice(xp, g, h, w)
    n, H, W = g.shape
    valid = lat.ok & (lat.n_rows <= MAX_PARTS_PER_SIDE) & (lat.n_cols <= MAX_PARTS_PER_SIDE)
    if not bool(valid.any()):
        return no_result(xp, g)
    Rm = min(MAX_PARTS_PER_SIDE, int(lat.n_rows.max()))
    Cm = min(MAX_PARTS_PER_SIDE, int(lat.n_cols.max()))
    R, C = coords(xp, H, W)
    zero = g.dtype.type(0)
    first = xp.zeros_like(g)
    count = xp.zeros(g.shape, dtype=np.int64)
    for i in range(Rm):
        for j in range(Cm):
            has = per_grid((i < lat.n_rows) & (j < lat.n_cols))
            src_r = R + per_grid(lat.row_start[:, min(i, H - 1)])
            src_c = C + per_grid(lat.col_start[:, min(j, W - 1)])
            part = xp.where(has, remap(xp, g, lat.cell_h, lat.cell_w, H, W, src_r, src_c).arr, zero)
            count += part != 0
            first = xp.where(first == 0, part, first)
    inside = real_mask(xp, g, lat.cell_h, lat.cell_w)
    if op == "or":
        out = first
    elif op == "and":
        out = xp.where(count == per_grid(lat.n_rows * lat.n_cols), first, zero)
    elif op == "one":
        out = xp.where(count == 1, first, zero)
    else:
        out = xp.where(inside & (count == 0), g.dtype.type(1), zero)
    res = remap(xp, out, lat.cell_h, lat.cell_w, H, W, R, C, valid=valid)
    return res
