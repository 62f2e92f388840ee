"""Repairs: filling holes (background cells) of a pattern from its own regularity."""
from __future__ import annotations

from solvers.batch import Parts, colour_counts
from solvers.registry import primitive

MAX_PERIOD = 10


def _agree(xp, g, dy, dx):
    """Per grid: every pair of non-zero cells ``(i, j)`` and ``(i + dy, j + dx)`` has one colour."""
    n, h, w = g.shape
    if dy >= h or abs(dx) >= w:
        return xp.zeros(n, dtype=bool)
    a = g[:, dy:, max(dx, 0):w + min(dx, 0)]
    b = g[:, :h - dy, max(-dx, 0):w - max(dx, 0)]
    return ~((a != b) & (a != 0) & (b != 0)).any(axis=(1, 2))


def _first_true(xp, table, fallback):
    """Index (+1) of the first true column of each row of ``table``; ``fallback`` where none."""
    return xp.where(table.any(axis=1), table.argmax(axis=1) + 1, fallback)


@primitive()
def complete_period(xp, g):
    """Fill the holes (0 cells) of a periodic wallpaper with the colours of its repeating tile.

    The tile is the smallest lattice of translations that the non-zero cells agree with: a period
    ``px`` along the rows (up to 10 cells, or none), and a step down ``py`` rows (up to 10, or
    none) with a sideways shift ``s`` (so diagonal stripes count). Each hole takes the colour of
    the other cells of its lattice class. Only grids with holes, at least half of their cells
    non-zero and two or more colours qualify; grids whose lattice leaves a hole unknown or whose
    classes disagree give no result.
    """
    n, h, w = g.shape
    counts = colour_counts(xp, g)
    zeros = counts[:, 0]
    cand = (zeros > 0) & (2 * zeros <= h * w) & ((counts[:, 1:] > 0).sum(axis=1) >= 2)
    idx = xp.nonzero(cand)[0]
    if idx.shape[0] == 0:
        return Parts([])
    g = g[idx]
    m = idx.shape[0]
    P = MAX_PERIOD
    horiz = xp.stack([_agree(xp, g, 0, dx) for dx in range(1, P + 1)], axis=1)
    px = _first_true(xp, horiz, w)
    px = xp.minimum(px, w)
    # Step down: smallest dy with a sideways shift s in [0, px) such that (dy, s) and (dy, s - px)
    # are both agreed translations (the second only matters when the rows repeat).
    D = min(P, h - 1)
    py = xp.full(m, h, dtype=xp.int64)
    shift = xp.zeros(m, dtype=xp.int64)
    found = xp.zeros(m, dtype=bool)
    agree = {}
    for dy in range(1, D + 1):
        for s in range(0, min(P, w - 1) + 1):
            if (dy, s) not in agree:
                agree[(dy, s)] = _agree(xp, g, dy, s)
            if s == 0:
                back = xp.ones(m, dtype=bool)
            else:
                # Rows without a period admit no sideways shift; otherwise (dy, s - px) must agree
                # too (px differs per grid: look it up among the shifts for each possible px).
                back = xp.zeros(m, dtype=bool)
                for p in range(s + 1, P + 1):
                    if p - s >= w:
                        continue
                    if (dy, s - p) not in agree:
                        agree[(dy, s - p)] = _agree(xp, g, dy, s - p)
                    back |= (px == p) & agree[(dy, s - p)]
            take = agree[(dy, s)] & back & (s < px) & ~found
            py = xp.where(take, dy, py)
            shift = xp.where(take, s, shift)
            found |= take
    # Lattice classes: row i lies in band i // py; shift columns back by s per band.
    rows = xp.arange(h)[None, :, None]
    cols = xp.arange(w)[None, None, :]
    band = rows // py[:, None, None]
    ci = rows % py[:, None, None]
    cj = (cols - shift[:, None, None] * band) % px[:, None, None]
    per = (py * px)[:, None, None]
    cls = xp.arange(m)[:, None, None] * (h * w) + ci * px[:, None, None] + cj
    cls = xp.broadcast_to(cls, g.shape).ravel()
    vals = g.ravel().astype(xp.int64)
    nz = vals != 0
    size = m * h * w
    cnt = xp.bincount(cls[nz], minlength=size)
    tot = xp.bincount(cls[nz], weights=vals[nz], minlength=size)
    sq = xp.bincount(cls[nz], weights=(vals * vals)[nz], minlength=size)
    uniform = tot * tot == cnt * sq
    colour = xp.where(cnt > 0, tot / xp.maximum(cnt, 1), 0).round().astype(g.dtype)
    cell_ok = (uniform & (cnt > 0))[cls].reshape(g.shape) | (g != 0)
    cell_ok &= uniform[cls].reshape(g.shape)
    good = cell_ok.all(axis=(1, 2)) & (per[:, 0, 0] < h * w)
    out = xp.where(g == 0, colour[cls].reshape(g.shape), g)
    keep = xp.nonzero(good)[0]
    if keep.shape[0] == 0:
        return Parts([])
    return Parts([(idx[keep], out[keep])])
