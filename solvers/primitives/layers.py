"""Combinators of several grids of one shape (layered composition: painting, erasing), and the
constant grid a layer may start from."""
from solvers.registry import primitive


@primitive(())  # found by layered composition after the search, never enumerated
def paint(xp, g, *layers):
    """Paint each layer in turn over ``g`` where the layer is non-zero (the last one on top).

    Every layer has ``g``'s shape (a stack like ``g``, or one grid for the whole stack).
    """
    out = g.copy()
    for layer in layers:
        layer = xp.asarray(layer, dtype=g.dtype)
        if layer.shape[-2:] != g.shape[-2:]:
            raise ValueError(f"paint: a {layer.shape[-2]}x{layer.shape[-1]} layer over a "
                             f"{g.shape[-2]}x{g.shape[-1]} grid")
        out = xp.where(layer != 0, layer, out)
    return out


@primitive(())  # found by layered composition after the search, never enumerated
def erase(xp, g, mask):
    """``g`` with 0 wherever ``mask`` (``g``'s shape: a stack like ``g``, or one grid) is 0."""
    mask = xp.asarray(mask, dtype=g.dtype)
    if mask.shape[-2:] != g.shape[-2:]:
        raise ValueError(f"erase: a {mask.shape[-2]}x{mask.shape[-1]} mask over a "
                         f"{g.shape[-2]}x{g.shape[-1]} grid")
    return xp.where(mask != 0, g, 0).astype(g.dtype)


@primitive(())  # given a train output by the templates mechanism, never enumerated
def constant(xp, g, grid):
    """The grid ``grid`` (a tuple of rows of colours 0-9) for every grid of the stack, whatever it holds."""
    out = xp.asarray(grid, dtype=xp.int64)  # ragged rows raise ValueError
    if out.ndim != 2 or not 1 <= min(out.shape) <= max(out.shape) <= 30 or int(out.min()) < 0 or int(out.max()) > 9:
        raise ValueError(f"constant: a {out.shape} array is not a grid of 1 to 30 cells a side of colours 0-9")
    return xp.ascontiguousarray(xp.broadcast_to(out.astype(g.dtype), (g.shape[0],) + out.shape))
