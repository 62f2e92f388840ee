"""Colour filters and recolourings (0 is the background)."""
from __future__ import annotations

from solvers import fused, kernels
from solvers.batch import colour_counts, shared_colour_counts
from solvers.padded import Padded
from solvers.registry import primitive

COLOURS = tuple((c,) for c in range(1, 10))


@primitive(COLOURS, elementwise=True)
def recolor(xp, g, c):
    """Paint every non-zero cell with colour ``c``."""
    return xp.where(g != 0, g.dtype.type(c), g.dtype.type(0))


@primitive(COLOURS, elementwise=True)
def remove_color(xp, g, c):
    """Erase colour ``c`` (set it to 0)."""
    return xp.where(g == c, g.dtype.type(0), g)


@primitive(COLOURS, elementwise=True)
def keep_color(xp, g, c):
    """Keep only colour ``c``; everything else becomes 0."""
    return xp.where(g == c, g, g.dtype.type(0))


def _nonzero_counts(xp, g):
    counts = colour_counts(xp, g)
    counts[:, 0] = 0
    return counts


@primitive(pad="inplace")
def keep_majority_color(xp, g):
    """Keep only the most frequent non-zero colour (ties: the lower colour)."""
    if kernels.enabled(xp):
        return fused.colour_pick(xp, g, shared_colour_counts(xp, g), "majority")
    counts = _nonzero_counts(xp, g)
    major = counts.argmax(axis=1).astype(g.dtype)
    return xp.where(g == major[:, None, None], g, g.dtype.type(0))


@primitive(pad="inplace")
def keep_minority_color(xp, g):
    """Keep only the least frequent non-zero colour present (ties: the lower colour)."""
    if kernels.enabled(xp):
        return fused.colour_pick(xp, g, shared_colour_counts(xp, g), "minority")
    counts = _nonzero_counts(xp, g)
    big = counts.max() + 1 if counts.size else 1
    minor = xp.where(counts > 0, counts, big).argmin(axis=1).astype(g.dtype)
    return xp.where((g == minor[:, None, None]) & (g != 0), g, g.dtype.type(0))


@primitive(pad="inplace")
def invert(xp, g):
    """Swap background and foreground: 0 becomes the majority non-zero colour, the rest 0."""
    if kernels.enabled(xp):
        return fused.colour_pick(xp, g, shared_colour_counts(xp, g), "invert")
    major = _nonzero_counts(xp, g).argmax(axis=1).astype(g.dtype)
    return xp.where(g == 0, major[:, None, None], g.dtype.type(0))


@primitive(layout="padded")
def majority_cell(xp, g, h, w):
    """A 1x1 grid of the most frequent non-zero colour."""
    major = _nonzero_counts(xp, g).argmax(axis=1).astype(g.dtype)
    one = xp.ones(g.shape[0], dtype=xp.int64)
    return Padded(major[:, None, None], one, one, one > 0)


@primitive((), elementwise=True)  # learned from the train pairs by the search, never enumerated
def colormap(xp, g, mapping):
    """Recolour by a table: ``mapping`` is a dict {colour: new colour} (others unchanged).

    The search learns this table from the train pairs as a final step.
    """
    table = list(range(10))
    for src, dst in dict(mapping).items():
        table[int(src)] = int(dst)
    return xp.asarray(table, dtype=g.dtype)[g]

