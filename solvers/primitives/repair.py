"""Repairs: filling holes (background cells) of a pattern from its own regularity."""
from __future__ import annotations

from solvers.batch import Parts, as_parts, colour_counts
from solvers.registry import primitive

MAX_PERIOD = 10


def _agreements(xp, g, dy, dxs):
    """Per grid and per shift ``dx`` in ``dxs``: every pair of non-zero cells ``(i, j)`` and
    ``(i + dy, j + dx)`` has one colour. Shifts that leave the grid (``dy >= h``, ``|dx| >= w``)
    never agree. Returns (n, len(dxs)) bool, from one comparison of stacked shifted copies."""
    n, h, w = g.shape
    P = max(abs(d) for d in dxs)
    padded = xp.pad(g, ((0, 0), (0, max(dy, 0)), (P, P)))
    shifted = xp.stack([padded[:, dy:dy + h, P + dx:P + dx + w] for dx in dxs], axis=1)
    a = g[:, None]
    ok = ~((a != shifted) & (a != 0) & (shifted != 0)).any(axis=(2, 3))
    inside = xp.asarray([dy < h and abs(dx) < w for dx in dxs])
    return ok & inside[None, :]


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
    zeros = (g == 0).sum(axis=(1, 2))
    idx = xp.nonzero((zeros > 0) & (2 * zeros <= h * w))[0]
    if idx.shape[0] == 0:
        return Parts([])
    counts = colour_counts(xp, g[idx])
    idx = idx[(counts[:, 1:] > 0).sum(axis=1) >= 2]
    if idx.shape[0] == 0:
        return Parts([])
    g = g[idx]
    m = idx.shape[0]
    P = MAX_PERIOD
    horiz = _agreements(xp, g, 0, range(1, P + 1))
    vert = _agreements(xp, g.transpose(0, 2, 1), 0, range(1, P + 1))
    periodic = xp.nonzero(horiz.any(axis=1) | vert.any(axis=1))[0]
    if periodic.shape[0] == 0:
        return Parts([])
    idx, g, horiz = idx[periodic], g[periodic], horiz[periodic]
    m = idx.shape[0]
    px = xp.where(horiz.any(axis=1), horiz.argmax(axis=1) + 1, w)
    # Step down: smallest dy with a sideways shift s in [0, px) such that (dy, s) and (dy, s - px)
    # are both agreed translations (the second only when the rows repeat, px <= P; s = 0 needs
    # only the first).
    shifts = xp.arange(P + 1)[None, :]
    py = xp.full(m, h, dtype=xp.int64)
    shift = xp.zeros(m, dtype=xp.int64)
    found = xp.zeros(m, dtype=bool)
    for dy in range(1, min(P, h - 1) + 1):
        agree = _agreements(xp, g, dy, range(-P, P + 1))           # column P + dx: shift dx
        fwd = agree[:, P:]                                         # s = 0 .. P
        back_at = xp.clip(P + shifts - px[:, None], 0, 2 * P)
        back = xp.take_along_axis(agree, back_at, axis=1) & (px[:, None] <= P)
        ok = fwd & ((shifts == 0) | back) & (shifts < px[:, None]) & ~found[:, None]
        take = ok.any(axis=1)
        py = xp.where(take, dy, py)
        shift = xp.where(take, ok.argmax(axis=1), shift)
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
    axes lie at the centre or, in grids of 8 or more cells a side, one cell past it (a picture
    cut short by two lines). The candidates
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
    for offset in (0, 2) if min(h, w) >= 8 else (0,):
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
