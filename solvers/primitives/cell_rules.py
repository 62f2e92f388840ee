"""Recolouring learnt per cell from what surrounds it: never enumerated, its table is fitted to a
task's train pairs (:mod:`pipeline.search.cell_rules`)."""
from __future__ import annotations

from solvers.registry import primitive

RAY_KEYS = 160  # the keys of ray_keys: 10 colours times 16 sets of directions


def ray_keys(xp, g):
    """Per cell of the stack ``g`` (n, h, w): its colour and the directions in which its column and
    row hold a non-zero cell, as ``colour * 16 + 8 * above + 4 * below + 2 * left + right``
    (int64, 0 to ``RAY_KEYS - 1``)."""
    filled = (g != 0).astype(xp.int64)
    down = xp.cumsum(filled, axis=1)
    across = xp.cumsum(filled, axis=2)
    above = (down - filled) > 0
    below = (down[:, -1:, :] - down) > 0
    left = (across - filled) > 0
    right = (across[:, :, -1:] - across) > 0
    return g.astype(xp.int64) * 16 + above * 8 + below * 4 + left * 2 + right


@primitive(())  # learnt from the train pairs by the cell-rules mechanism, never enumerated
def ray_table(xp, g, table):
    """Recolour each cell by ``table``, a dict {key: colour} keyed by the cell's colour and by the
    directions in which its column and row hold a non-zero cell (see :func:`ray_keys`); a cell
    whose key the table lacks keeps its colour."""
    lookup = [key // 16 for key in range(RAY_KEYS)]
    for key, colour in dict(table).items():
        if not (0 <= int(key) < RAY_KEYS and 0 <= int(colour) <= 9):
            raise ValueError(f"ray_table: entry {key}: {colour} is not a key 0-159 to a colour 0-9")
        lookup[int(key)] = int(colour)
    return xp.asarray(lookup, dtype=g.dtype)[ray_keys(xp, g)]
