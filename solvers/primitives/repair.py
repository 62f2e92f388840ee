"""Repairs: filling holes (background cells) of a pattern from its own regularity."""
from __future__ import annotations

from solvers import fused, kernels
from solvers.batch import crop_to_mask
from solvers.padded import Padded
from solvers.ragged import coords, no_result, per_grid, real_mask, scatter_results
from solvers.registry import primitive

MAX_PERIOD = 10
_SHIFT_CELLS = 1 << 24  # cells of shifted copies compared at once (bounds the bool temporaries)


def _agreements(xp, g, h, w, dys: range, dxs: range):
    """Per grid and per shift ``(dy, dx)``, ``dy`` in ``dys`` (>= 0) and ``dx`` in ``dxs``: every
    pair of non-zero cells ``(i, j)`` and ``(i + dy, j + dx)`` has one colour. ``g`` is zero-padded
    with real sides ``h``, ``w`` (padding cells are 0, as cells off the grid would be); shifts that
    leave the grid (``dy >= h``, ``|dx| >= w``) never agree. Returns (n, len(dys), len(dxs)) bool,
    comparing as many shifted copies at once as fit in _SHIFT_CELLS."""
    n, H, W = g.shape
    P = max(abs(dxs.start), abs(dxs.stop - 1))
    padded = xp.zeros((n, H + dys.stop - 1, W + 2 * P), dtype=g.dtype)
    padded[:, :H, P:P + W] = g
    # windows[:, dy, P + dx] is the stack shifted by (dy, dx): a view of the padded copy.
    s0, s1, s2 = padded.strides
    windows = xp.lib.stride_tricks.as_strided(padded, (n, dys.stop, 2 * P + 1, H, W), (s0, s1, s2, s1, s2))
    windows = windows[:, dys.start:, P + dxs.start:P + dxs.stop]
    a = g[:, None, None]
    a_set = a != 0
    dx_step = max(1, min(len(dxs), _SHIFT_CELLS // (n * H * W)))
    dy_step = max(1, _SHIFT_CELLS // (n * H * W * dx_step))
    rows = []
    for i in range(0, len(dys), dy_step):
        cols = []
        for j in range(0, len(dxs), dx_step):
            shifted = xp.ascontiguousarray(windows[:, i:i + dy_step, j:j + dx_step])
            differ = a != shifted
            differ &= shifted != 0
            differ &= a_set
            cols.append(differ.any(axis=(3, 4)))
        rows.append(cols[0] if len(cols) == 1 else xp.concatenate(cols, axis=2))
    clash = rows[0] if len(rows) == 1 else xp.concatenate(rows, axis=1)
    dy, dx = xp.arange(dys.start, dys.stop), xp.arange(dxs.start, dxs.stop)
    return ~clash & (dy[None, :, None] < per_grid(h)) & (abs(dx)[None, None, :] < per_grid(w))


@primitive(((False,), (True,)), layout="padded")
def complete_period(xp, g, h, w, crop):
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
    if kernels.enabled(xp):
        return fused.complete_period(xp, g, h, w, MAX_PERIOD, crop)
    n, H, W = g.shape
    area = h * w
    filled = g != 0
    zeros = area - filled.sum(axis=(1, 2))
    # Two colours or more: some non-zero cell differs from the grid's largest colour.
    colours = (filled & (g != per_grid(g.max(axis=(1, 2))))).any(axis=(1, 2))
    idx = xp.nonzero((zeros > 0) & (2 * zeros <= area) & colours)[0]
    if idx.shape[0] == 0:
        return no_result(xp, g)
    P = MAX_PERIOD
    sub, gh, gw = g[idx], h[idx], w[idx]
    horiz = _agreements(xp, sub, gh, gw, range(0, 1), range(1, P + 1))[:, 0]
    vert = _agreements(xp, sub, gh, gw, range(1, P + 1), range(0, 1))[:, :, 0]
    periodic = xp.nonzero(horiz.any(axis=1) | vert.any(axis=1))[0]
    if periodic.shape[0] == 0:
        return no_result(xp, g)
    idx, sub, gh, gw, horiz = idx[periodic], sub[periodic], gh[periodic], gw[periodic], horiz[periodic]
    m = idx.shape[0]
    px = xp.where(horiz.any(axis=1), horiz.argmax(axis=1) + 1, gw)
    # Step down: smallest dy with a sideways shift s in [0, px) such that (dy, s) and (dy, s - px)
    # are both agreed translations (the second only when the rows repeat, px <= P; s = 0 needs
    # only the first). Steps of h or more rows never agree, so grids stop at their own height.
    agree = _agreements(xp, sub, gh, gw, range(1, max(1, min(P, H - 1)) + 1), range(-P, P + 1))
    s = xp.arange(P + 1)[None, None, :]
    back_at = xp.clip(P + s - per_grid(px), 0, 2 * P)                # column P + dx: shift dx
    back = xp.take_along_axis(agree, back_at, axis=2) & per_grid(px <= P)
    ok = agree[:, :, P:] & ((s == 0) | back) & (s < per_grid(px))   # [grid, dy - 1, s]
    step_ok = ok.any(axis=2)
    found = step_ok.any(axis=1)
    first = step_ok.argmax(axis=1)
    py = xp.where(found, first + 1, gh)
    shift = xp.where(found, ok[xp.arange(m), first].argmax(axis=1), 0)
    # Lattice classes: row i lies in band i // py; shift columns back by s per band. Grid k's
    # classes are numbered from k * H * W; padding cells get classes too, but count nothing.
    rows, cols = coords(xp, H, W)
    band = rows // per_grid(py)
    cls = (xp.arange(m)[:, None, None] * (H * W) + (rows % per_grid(py)) * per_grid(px)
           + (cols - per_grid(shift) * band) % per_grid(px)).ravel()
    size = m * H * W
    cnt = xp.bincount(cls, weights=(sub != 0).ravel(), minlength=size)
    tot = xp.bincount(cls, weights=sub.ravel(), minlength=size)
    # A class is uniform exactly when all its non-zero cells equal its (rounded) mean; an empty
    # class has colour 0, which leaves its holes unknown.
    colour = (tot / xp.maximum(cnt, 1)).round().astype(g.dtype)[cls].reshape(sub.shape)
    real = real_mask(xp, sub, gh, gw)
    cell_ok = ((sub == colour) | (sub == 0)) & (colour != 0)
    good = (cell_ok | ~real).all(axis=(1, 2)) & (py * px < gh * gw)
    # Every real cell of a repaired grid is its class colour.
    out = xp.where(real & per_grid(good), colour, g.dtype.type(0))
    if crop:
        res = crop_to_mask(xp, out, (sub == 0) & real, good)
    else:
        res = Padded(out, gh, gw, good)
    return scatter_results(xp, g, h, w, idx, res)


def _rows(xp, g, r):
    """``out[i, k] = g[i, r[i, k]]``: whole rows of each grid, in one take over the stack's rows."""
    n, H, W = g.shape
    at = (xp.arange(n)[:, None] * H + r).ravel()
    return xp.take(g.reshape(n * H, W), at, axis=0).reshape(n, r.shape[1], W)


def _mirrors(xp, g, h, w, offsets):
    """The left-right, top-bottom and point mirror images of each grid of the zero-padded stack
    ``g`` (real sides ``h``, ``w``), for mirror axes ``offsets`` (K,) cells past the centre (so a
    pattern cut short by that many lines still counts): (n, K, H, W) each, with where they are
    valid (the real cells whose mirror lies in the grid). Whole rows are gathered (columns on the
    transpose): far cheaper than gathering cells."""
    n, H, W = g.shape
    K = offsets.shape[0]
    R, C = coords(xp, H, W)
    R, C = R[:, :, 0], C[:, 0, :]                                   # (1, H), (1, W)
    real_r, real_c = R < h[:, None], C < w[:, None]                 # (n, H), (n, W)
    # Row i of a grid mirrors row h - 1 + offset - i, which lies in the grid for offset <= i < h.
    r = xp.clip((h[:, None] - 1 + offsets)[:, :, None] - R[:, None], 0, H - 1)   # (n, K, H)
    c = xp.clip((w[:, None] - 1 + offsets)[:, :, None] - C[:, None], 0, W - 1)   # (n, K, W)
    rv = real_r[:, None] & (R[:, None] >= offsets[None, :, None])
    cv = real_c[:, None] & (C[:, None] >= offsets[None, :, None])
    gt = xp.ascontiguousarray(g.transpose(0, 2, 1))
    lr = _rows(xp, gt, c.reshape(n, K * W)).reshape(n, K, W, H)
    lr = xp.ascontiguousarray(lr.transpose(0, 1, 3, 2))
    tb = _rows(xp, g, r.reshape(n, K * H)).reshape(n, K, H, W)
    point = _rows(xp, lr.reshape(n * K, H, W), r.reshape(n * K, H)).reshape(n, K, H, W)
    rv, cv = rv[:, :, :, None], cv[:, :, None, :]
    real_r, real_c = real_r[:, None, :, None], real_c[:, None, None, :]
    return [(lr, real_r & cv), (tb, rv & real_c), (point, rv & cv)]


@primitive(((False,), (True,)), layout="padded")
def repair_symmetry(xp, g, h, w, crop):
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
    n, H, W = g.shape
    if kernels.enabled(xp):
        return fused.repair_symmetry(xp, g, h, w, 2 if min(H, W) >= 8 else 1, crop)
    # Every grid tries each axis offset (K of them) and, for each, two candidate colours: arrays
    # are (n, K, H, W) per offset and (n, K, 2, H, W) per offset and colour.
    offsets = xp.asarray((0, 2) if min(H, W) >= 8 else (0,))
    K = offsets.shape[0]
    # Each mirror image with where it is valid and differs from the cell.
    views = [(mg, valid & (mg != g[:, None])) for mg, valid in _mirrors(xp, g, h, w, offsets)]
    # The noise colour is on one side of every asymmetric pair: the first such pair of the
    # left-right mirror (else the top-bottom one) names the two candidates. Reading order in the
    # padded stack is each grid's own (padding cells never differ).
    cands = []
    grid_start = (xp.arange(n) * (H * W))[:, None]                  # flat index of each grid's cells
    view_start = (xp.arange(n * K) * (H * W)).reshape(n, K)         # and of each grid's views
    for mg, differs in views[:2]:
        differs = differs.reshape(n, K, H * W)
        at = differs.argmax(axis=2)
        cands.append((differs.any(axis=2), xp.take(g, grid_start + at), xp.take(mg, view_start + at)))
    (h1, a1, b1), (h2, a2, b2) = cands
    asymmetric = (h1 | h2) & ((offsets == 0) | (xp.minimum(h, w) >= 8)[:, None])
    colour = xp.stack([xp.where(h1, a1, a2), xp.where(h1, b1, b2)], axis=2)[:, :, :, None, None]
    noise = (g[:, None, None] == colour) & real_mask(xp, g, h, w)[:, None, None]  # colour may be 0
    count = noise.sum(axis=(3, 4))
    # A mirror is known where it is not noise; every other cell must equal its known mirrors. A
    # cell clashes with a mirror that differs from it and is not noise: on a noise cell that is
    # exactly a known mirror. So a cell fails (noise with no known mirror, or another cell unlike
    # a known mirror) where it clashes with some mirror != it is noise.
    clash = []
    for mg, differs in views:
        c = mg[:, :, None] != colour
        c &= differs[:, :, None]
        clash.append(c)
    fails = ((clash[0] | clash[1] | clash[2]) ^ noise).any(axis=(3, 4))
    ok = asymmetric[:, :, None] & ~fails & (count > 0)
    # The first (offset, colour) with the fewest noise cells wins, as in trying them in turn.
    key = xp.where(ok, count, per_grid(h * w + 1)).reshape(n, 2 * K)
    pick = key.argmin(axis=1)[:, None]
    found = ok.reshape(n, 2 * K).any(axis=1)
    # Noise cells take their first known mirror.
    (lr, _), (tb, _), (point, _) = views
    fill = xp.where(clash[0], lr[:, :, None], xp.where(clash[1], tb[:, :, None], point[:, :, None]))
    fill = _rows(xp, fill.reshape(n, 2 * K, H * W), pick).reshape(n, H, W)
    noise = _rows(xp, noise.reshape(n, 2 * K, H * W), pick).reshape(n, H, W)
    best = xp.where(noise, fill, g)
    if crop:
        return crop_to_mask(xp, best, noise & per_grid(found))
    return Padded(xp.where(per_grid(found), best, g.dtype.type(0)), h, w, found)
