"""Combinators of several grids of one shape: layered composition."""
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
