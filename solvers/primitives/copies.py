"""Copies: the partial copies of many-coloured templates, completed."""
from __future__ import annotations

from solvers.primitives.attract import paint_cells
from solvers.primitives.draw import first_last
from solvers.primitives.objects import label_objects, pick_per_grid
from solvers.primitives.stamps import object_colour_counts
from solvers.ragged import Padded, no_result
from solvers.registry import primitive
from solvers.xp import repeat_index, stable_argsort

# Templates of more cells are not copied (their placements would cost more than they are worth).
MAX_TEMPLATE_CELLS = 40
# Template cells checked for a clash before the rest of each placement's cells.
PRECHECK_CELLS = 4


def turn(xp, dy, dx, bh, bw, symmetry):
    """Cell ``(dy, dx)`` of a box of sides ``bh`` x ``bw`` under ``symmetry`` (0-7, arrays that
    broadcast): bit 1 mirrors left to right, bit 2 upside down, bit 4 then transposes (the box's
    sides swap); 0 is the identity."""
    dx = xp.where(symmetry & 1, bw - 1 - dx, dx)
    dy = xp.where(symmetry & 2, bh - 1 - dy, dy)
    swap = (symmetry & 4) > 0
    return xp.where(swap, dx, dy), xp.where(swap, dy, dx)


def _expand(xp, counts):
    """For rows with ``counts`` (int64), which row each expanded entry comes from and its place
    among that row's entries."""
    row = repeat_index(xp, counts)
    start = xp.cumsum(counts) - counts
    return row, xp.arange(row.shape[0], dtype=xp.int64) - start[row]


@primitive(((False,), (True,)), layout="padded", keeps_shape=True)
def complete_copies(xp, g, h, w, turned):
    """Complete the partial copies of the templates.

    A template is an object (8-connected, any colours) with the most colours of its grid (two or
    more) and at most 40 cells. A partial copy is a placement of a template inside the grid (with
    ``turned`` also rotated or mirrored) such that:

    - every template cell of one of its colours lies on a cell of that colour; the cell where the
      first of them (in the template's reading order) lands, the anchor, lies outside every
      template, and the anchor's whole object lies on template cells of its colours;
    - every other template cell lies on background or on a cell of its own colour, at least one
      on background.

    The copy's background cells are painted with the template's colours. For each anchor and
    template colour only the first symmetry that fits counts (the unturned placement first);
    where copies overlap, the highest colour. Grids with no partial copy give no result.
    """
    n = g.shape[0]
    labels, owner, sizes, first = label_objects(xp, g, 8, False)
    total = owner.shape[0] - 1
    if n == 0 or total == 0:
        return no_result(xp, g)
    colours = object_colour_counts(xp, g, labels, total)
    most = colours[pick_per_grid(xp, owner, -colours, first, g.shape)]
    template = (colours >= 2) & (colours == most[owner]) & (sizes <= MAX_TEMPLATE_CELLS)
    template[0] = False
    # Only grids that hold a template can have a copy: their cells alone are looked at (about a
    # quarter of the grids of a depth-2 block of ARC-1 train, a ninth of its object cells).
    with_template = xp.zeros(n, dtype=bool)
    with_template[owner[template]] = True
    grids = xp.nonzero(with_template)[0]
    if grids.shape[0] == 0:
        return no_result(xp, g)
    gi, r, c = xp.nonzero(labels[grids])
    gi = grids[gi]
    lab = labels[gi, r, c].astype(xp.int64)
    colour = g[gi, r, c].astype(xp.int64)
    top, bottom = first_last(xp, lab, r, total)
    left, right = first_last(xp, lab, c, total)
    # Template cells grouped by template (reading order within each), relative to its box.
    in_template = template[lab]
    order = stable_argsort(xp, lab[in_template])
    t_lab = lab[in_template][order]
    t_dy, t_dx = r[in_template][order] - top[t_lab], c[in_template][order] - left[t_lab]
    t_colour = colour[in_template][order]
    t_start = xp.searchsorted(t_lab, xp.arange(total + 1))
    # A template's colour classes (by template and colour), each anchored on its first cell.
    class_key = t_lab * 16 + t_colour
    class_order = stable_argsort(xp, class_key)
    sorted_key = class_key[class_order]
    lead = xp.ones(sorted_key.shape[0], dtype=bool)
    lead[1:] = sorted_key[1:] != sorted_key[:-1]
    anchor = class_order[lead]                       # the class's first template cell
    class_lab, class_colour = t_lab[anchor], t_colour[anchor]
    class_size = xp.diff(xp.append(xp.nonzero(lead)[0], sorted_key.shape[0]))
    # Classes by grid and colour, to meet the cells outside templates of that grid and colour.
    by_grid = owner[class_lab] * 16 + class_colour
    grid_order = stable_argsort(xp, by_grid)
    by_grid = by_grid[grid_order]
    outside = ~in_template
    p_gi, p_r, p_c = gi[outside], r[outside], c[outside]
    p_key = p_gi * 16 + colour[outside]
    lo = xp.searchsorted(by_grid, p_key, side="left")
    hi = xp.searchsorted(by_grid, p_key, side="right")
    pi, k = _expand(xp, hi - lo)
    ci = grid_order[lo[pi] + k]
    symmetries = 8 if turned else 1
    cand_p = xp.repeat(pi, symmetries)
    cand_class = xp.repeat(ci, symmetries)
    sym = xp.tile(xp.arange(symmetries, dtype=xp.int64), pi.shape[0])
    t = class_lab[cand_class]
    bh, bw = bottom[t] - top[t] + 1, right[t] - left[t] + 1
    ay, ax = turn(xp, t_dy[anchor[cand_class]], t_dx[anchor[cand_class]], bh, bw, sym)
    y0, x0 = p_r[cand_p] - ay, p_c[cand_p] - ax
    side_h, side_w = xp.where(sym & 4, bw, bh), xp.where(sym & 4, bh, bw)
    cand_gi = p_gi[cand_p]
    fits = (y0 >= 0) & (x0 >= 0) & (y0 + side_h <= h[cand_gi]) & (x0 + side_w <= w[cand_gi])
    keep = xp.nonzero(fits)[0]
    cand_p, cand_class, sym, t, bh, bw, y0, x0, cand_gi = (
        a[keep] for a in (cand_p, cand_class, sym, t, bh, bw, y0, x0, cand_gi))
    # Most placements clash on one of their template's first few cells: those go before every
    # placement meets every cell of its template.
    row, k = _expand(xp, xp.minimum(sizes[t], PRECHECK_CELLS).astype(xp.int64))
    cell = t_start[t[row]] + k
    dy, dx = turn(xp, t_dy[cell], t_dx[cell], bh[row], bw[row], sym[row])
    have = g[cand_gi[row], y0[row] + dy, x0[row] + dx]
    clash = (have != 0) & (have != t_colour[cell])
    keep = xp.nonzero(xp.bincount(row[clash], minlength=int(t.shape[0])) == 0)[0]
    cand_p, cand_class, sym, t, bh, bw, y0, x0, cand_gi = (
        a[keep] for a in (cand_p, cand_class, sym, t, bh, bw, y0, x0, cand_gi))
    # Every placement against every cell of its template.
    row, k = _expand(xp, sizes[t].astype(xp.int64))
    cell = t_start[t[row]] + k
    dy, dx = turn(xp, t_dy[cell], t_dx[cell], bh[row], bw[row], sym[row])
    y, x, want = y0[row] + dy, x0[row] + dx, t_colour[cell]
    have = g[cand_gi[row], y, x].astype(xp.int64)
    m = int(keep.shape[0])
    clash = xp.bincount(row[(have != 0) & (have != want)], minlength=m) > 0
    blank = xp.bincount(row[have == 0], minlength=m) > 0
    of_class = (want == class_colour[cand_class[row]]) & (have == want)
    whole = xp.bincount(row[of_class], minlength=m) == class_size[cand_class]
    p_lab = labels[p_gi, p_r, p_c].astype(xp.int64)[cand_p]
    covered = (have == want) & (labels[cand_gi[row], y, x] == p_lab[row])
    inside = xp.bincount(row[covered], minlength=m) == sizes[p_lab]
    copy = ~clash & blank & whole & inside
    # The first symmetry that fits, per cell outside the templates and template colour class.
    group = cand_p * (class_lab.shape[0] + 1) + cand_class
    first_fit = xp.full(m, -1, dtype=xp.int64)
    at = xp.nonzero(copy)[0]
    if at.shape[0]:
        lead = xp.ones(at.shape[0], dtype=bool)
        lead[1:] = group[at][1:] != group[at][:-1]
        first_fit[at[lead]] = at[lead]
    chosen = first_fit[row] == row
    paint = chosen & (have == 0)
    out = paint_cells(xp, g, cand_gi[row][paint], y[paint], x[paint], want[paint])
    found = xp.bincount(cand_gi[row][paint], minlength=n) > 0
    return Padded(out, h, w, found)
