"""Lines by place: every other column or row, counted from the last, marked."""
from __future__ import annotations

from solvers.primitives.recolour import mark
from solvers.ragged import Padded, coords, per_grid
from solvers.registry import primitive


@primitive((("cols",), ("rows",)), layout="padded", keeps_shape=True)
def mark_alternate_lines(xp, g, h, w, axis):
    """Give the mark (next colour, ``c % 9 + 1``) to the non-zero cells of every other column
    (``rows``: row), counting from the last one (the last, the third last, ...)."""
    R, C = coords(xp, g.shape[1], g.shape[2])
    from_end = per_grid(w) - 1 - C if axis == "cols" else per_grid(h) - 1 - R
    marked = (from_end % 2 == 0) & (g != 0)
    return Padded(xp.where(marked, mark(xp, g), g), h, w, xp.ones(g.shape[0], dtype=bool))
