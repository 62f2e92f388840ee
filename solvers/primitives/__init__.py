"""All DSL primitives; importing this package registers them (order fixes the search order)."""
from solvers.primitives import geometry, colour, objects, scaling, lines, regions  # noqa: F401
from solvers.primitives import recolour, draw, cells, repair, arrange  # noqa: F401
from solvers.primitives import moves, paint_more, split, counts, boxes, rings  # noqa: F401
from solvers.primitives import reach, stamps, shapes, stride, attract, dot_stamps  # noqa: F401
from solvers.primitives import lattice  # noqa: F401
from solvers.primitives import copies  # noqa: F401
from solvers.primitives import rects  # noqa: F401
from solvers.primitives import parts  # noqa: F401
from solvers.primitives import tallies  # noqa: F401
from solvers.primitives import paths  # noqa: F401
# Applied around found programs, never enumerated: their place does not change the search order.
from solvers.primitives import layers, roles, sizes, cell_rules  # noqa: F401
from solvers.registry import PRIMITIVES, Transform


def transforms() -> list[Transform]:
    """All transforms the search enumerates, in a fixed order (registration order, then args)."""
    return [Transform(p, args) for p in PRIMITIVES.values() for args in p.arg_values]
