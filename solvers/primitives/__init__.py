"""All DSL primitives; importing this package registers them (order fixes the search order)."""
from solvers.primitives import geometry, colour, objects, scaling, lines, regions  # noqa: F401
