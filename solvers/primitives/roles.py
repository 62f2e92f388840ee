"""Colour roles: a grid's colours renamed by how often they occur, and named back.

A task whose marker colour differs from example to example ("paint the object in the marker's
colour") becomes one program once each example's colours are named by role. ``fixed`` colours
(background, colours every example shares, colours the task paints with) keep their names; the
others are renamed, most frequent first (ties: the smaller colour), onto the free colour names
in increasing order. The renaming depends on the grid alone, so a program can undo it.
"""
from solvers.registry import primitive


def role_tables(xp, g, fixed):
    """Per grid of the stack ``g`` (n, h, w): its renaming table (n, 10), colour -> role colour."""
    n = g.shape[0]
    counts = xp.zeros((n, 10), dtype=xp.int64)
    for colour in range(10):
        counts[:, colour] = (g == colour).reshape(n, -1).sum(axis=1)
    colours = xp.arange(10, dtype=xp.int64)
    is_fixed = xp.zeros(10, dtype=bool)
    for colour in fixed:
        is_fixed[int(colour)] = True
    free = [c for c in range(10) if c not in {int(f) for f in fixed}]
    key = xp.where(is_fixed[None, :], 1000 + colours[None, :], xp.where(counts > 0, -16 * counts, 0) + colours[None, :])
    order = xp.argsort(key, axis=1)[:, :len(free)]
    table = xp.tile(colours, (n, 1))
    rows = xp.arange(n)[:, None]
    table[rows, order] = xp.asarray(free, dtype=xp.int64)[None, :]
    return table


def _stack(xp, grid, like):
    """``grid`` as a stack of ``like``'s length (one grid is repeated)."""
    grid = xp.asarray(grid, dtype=like.dtype)
    return grid if grid.ndim == 3 else xp.broadcast_to(grid, like.shape[:1] + grid.shape)


@primitive(())  # applied by the colour-roles mechanism around a found program, never enumerated
def normalise_colours(xp, g, fixed):
    """Rename the colours of each grid by role (see the module), ``fixed`` colours kept."""
    table = role_tables(xp, g, fixed)
    return xp.take_along_axis(table, g.reshape(g.shape[0], -1).astype(xp.int64), axis=1) \
        .reshape(g.shape).astype(g.dtype)


@primitive(())
def restore_colours(xp, g, original, fixed):
    """Name the role colours of each grid back as :func:`normalise_colours` of ``original`` renamed them."""
    original = _stack(xp, original, g)
    table = role_tables(xp, original, fixed)
    inverse = xp.argsort(table, axis=1)
    return xp.take_along_axis(inverse, g.reshape(g.shape[0], -1).astype(xp.int64), axis=1) \
        .reshape(g.shape).astype(g.dtype)
