"""Repairs: filling holes (background cells) of a pattern from its own regularity."""
from __future__ import annotations

from solvers.batch import Parts, as_parts, colour_counts
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


@primitive(((False,), (True,)))
def complete_period(xp, g, crop):
    """Fill the holes (0 cells) of a periodic wallpaper with the colours of its repeating tile.

    The tile is the smallest lattice of translations that the non-zero cells agree with: a period
    ``px`` along the rows (up to 10 cells, or none), and a step down ``py`` rows (up to 10, or
    none) with a sideways shift ``s`` (so diagonal stripes count); grids with neither a row nor a
    column period up to 10 give no result. Each hole takes the colour of
    the other cells of its lattice class. Only grids with holes, at least half of their cells
    non-zero and two or more colours qualify; grids whose lattice leaves a hole unknown or whose
    classes disagree give no result. With ``crop`` the result is only the repaired holes (the
    bounding box of the 0 cells).
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
    vert = xp.stack([_agree(xp, g, dy, 0) for dy in range(1, P + 1)], axis=1)
    periodic = xp.nonzero(horiz.any(axis=1) | vert.any(axis=1))[0]
    if periodic.shape[0] == 0:
        return Parts([])
    idx, g, horiz = idx[periodic], g[periodic], horiz[periodic]
    m = idx.shape[0]
    px = xp.minimum(_first_true(xp, horiz, w), w)
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
    if crop:
        return Parts([(idx[keep][sub], arr) for sub, arr in as_parts(
            xp, _bbox_crop(xp, out[keep], g[keep] == 0), int(keep.shape[0]))])
    return Parts([(idx[keep], out[keep])])


def _mirrors(xp, h, w, offset):
    """Row/column sources and validity of the left-right, top-bottom and point mirrors whose axes
    lie ``offset`` cells past the centre (so a pattern cut short by ``offset`` lines still counts)."""
    r = (h - 1 + offset) - xp.arange(h)
    c = (w - 1 + offset) - xp.arange(w)
    rv = (r >= 0) & (r < h)
    cv = (c >= 0) & (c < w)
    rows, cols = xp.arange(h), xp.arange(w)
    r, c = xp.clip(r, 0, h - 1), xp.clip(c, 0, w - 1)
    ones_r, ones_c = xp.ones(h, dtype=bool), xp.ones(w, dtype=bool)
    return [(rows, ones_r, c, cv), (r, rv, cols, ones_c), (r, rv, c, cv)]


def _bbox_crop(xp, g, mask):
    from solvers.batch import bounding_boxes, crop_boxes

    top, left, hh, ww, has = bounding_boxes(xp, mask)
    return crop_boxes(xp, g, top, left, hh, ww, has)


@primitive(((False,), (True,)))
def repair_symmetry(xp, g, crop):
    """Restore a mirror-symmetric picture under a patch of noise.

    The noise is a colour whose cells, read from their left-right, top-bottom and point mirror
    images, leave every other cell equal to its mirrors and every noise cell known; the mirror
    axes lie at the centre or one cell past it (a picture cut short by two lines). The candidates
    are the two colours of the first cell (in reading order) that differs from its left-right
    mirror (or, if none does, its top-bottom mirror); the one with fewer cells wins, then the
    centred axes. The noise cells take their mirrors' colours. With ``crop`` the result is only
    the repaired patch (the bounding box of the noise cells). Symmetric grids and grids with no
    such colour give no result.
    """
    n, h, w = g.shape
    best = xp.zeros(g.shape, dtype=g.dtype)
    best_count = xp.full(n, h * w + 1, dtype=xp.int64)
    best_mask = xp.zeros(g.shape, dtype=bool)
    flat = g.reshape(n, h * w)
    for offset in (0, 2):
        views = []
        for r, rv, c, cv in _mirrors(xp, h, w, offset):
            views.append((g[:, r[:, None], c[None, :]], (rv[:, None] & cv[None, :])[None]))
        # The noise colour is on one side of every asymmetric pair: the first such pair of the
        # left-right mirror (else the top-bottom one) names the two candidates.
        cands = []
        for mg, valid in views[:2]:
            diff = (valid & (mg != g)).reshape(n, h * w)
            at = diff.argmax(axis=1)
            has = diff.any(axis=1)
            cands.append((has, flat[xp.arange(n), at], mg.reshape(n, h * w)[xp.arange(n), at]))
        (h1, a1, b1), (h2, a2, b2) = cands
        for colour in (xp.where(h1, a1, a2), xp.where(h1, b1, b2)):
            colour = xp.where(h1 | h2, colour, g.dtype.type(0))[:, None, None]
            noise = g == colour
            count = noise.sum(axis=(1, 2))
            bad = ~(h1 | h2)
            fill = xp.zeros_like(g)
            filled = ~noise
            for mg, valid in views:
                known = valid & (mg != colour)
                bad |= (~noise & known & (mg != g)).any(axis=(1, 2))
                take = ~filled & known
                fill = xp.where(take, mg, fill)
                filled = filled | take
            ok = ~bad & filled.all(axis=(1, 2)) & (count > 0) & (count < best_count)
            best = xp.where(ok[:, None, None], xp.where(noise, fill, g), best)
            best_mask = xp.where(ok[:, None, None], noise, best_mask)
            best_count = xp.where(ok, count, best_count)
    found = best_count <= h * w
    if crop:
        return _bbox_crop(xp, best, best_mask & found[:, None, None])
    keep = xp.nonzero(found)[0]
    return Parts([(keep, best[keep])]) if keep.shape[0] else Parts([])
