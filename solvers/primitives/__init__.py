"""All DSL primitives; importing this package registers them (order fixes the search order)."""
from solvers.primitives import geometry, colour, objects, scaling, lines, regions  # noqa: F401
# Added later: appended so that the transform indices above stay stable.
from solvers.primitives import recolour, draw, cells, repair, arrange  # noqa: F401
from solvers.primitives import moves  # noqa: F401
