"""Registry of DSL primitives and the transforms the search enumerates.

A :class:`Primitive` is one batched function ``fn(xp, grids, *args)``. A :class:`Transform` is a
primitive with its arguments fixed (``recolor`` with colour 3); the search enumerates transforms.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from solvers.coord_maps import COORD_MAPS

PRIMITIVES: dict[str, "Primitive"] = {}


@dataclass(frozen=True)
class Primitive:
    """One batched grid function and the argument tuples the search tries for it."""

    name: str
    fn: Callable
    arg_values: tuple = ((),)
    doc: str = ""
    elementwise: bool = False  # output cell depends only on the input cell: runs on flat buffers
    pad: str | None = None     # "inplace" / "crop": gives the same result on zero-padded grids
    layout: str = "exact"      # "padded": fn(xp, g, h, w, *args) on zero-padded grids of many shapes
    # (args) -> (most rows, most columns) of an input that can give a result (None: any); the search
    # skips grids larger than that without calling the primitive.
    max_sides: Callable | None = None
    # fill(xp, g) -> the cells (bool, g's shape) that the primitive paints with its one argument, a
    # colour, leaving the others as they are: a GPU applies several colours in one pass.
    fill: Callable | None = None
    # The name of the coordinate map (solvers.coord_maps.COORD_MAPS) that gives the same grids as fn,
    # its arguments the map's: a GPU applies a run of such transforms in one kernel, straight from
    # the flat layout.
    coord_map: str | None = None
    # Every result has its input's shape (declared, or implied by ``elementwise`` or ``pad="inplace"``):
    # the search's last level skips such transforms on states that no result of one can help.
    keeps_shape: bool = False


@dataclass(frozen=True)
class Transform:
    """A primitive with fixed arguments: a unary map from a grid batch to grid batches."""

    primitive: Primitive
    args: tuple = field(default=())

    @property
    def name(self) -> str:
        """The primitive's name."""
        return self.primitive.name

    @property
    def max_sides(self) -> tuple[int, int] | None:
        """The most rows and columns of an input grid that can give a result (None: no bound)."""
        bound = self.primitive.max_sides
        return None if bound is None else bound(*self.args)

    @property
    def coord_map(self) -> tuple[str, int, int] | None:
        """The coordinate map that computes this transform, as ``(name, a, b)`` (None: none)."""
        name = self.primitive.coord_map
        return None if name is None else (name, *(tuple(self.args) + (0, 0))[:2])

    def __call__(self, xp, grids):
        """Apply to a ``(n, h, w)`` stack of one shape; returns a stack, :class:`solvers.batch.Parts`
        or :class:`solvers.padded.Padded`."""
        if self.primitive.layout == "padded":
            n, h, w = grids.shape
            return self.primitive.fn(xp, grids, xp.full(n, h, dtype=xp.int64), xp.full(n, w, dtype=xp.int64),
                                     *self.args)
        return self.primitive.fn(xp, grids, *self.args)

    def padded(self, xp, grids, h, w):
        """Apply to zero-padded grids of many shapes (only for padding-aware primitives)."""
        if self.primitive.layout == "padded":
            return self.primitive.fn(xp, grids, h, w, *self.args)
        return self.primitive.fn(xp, grids, *self.args)

    def call_source(self, var: str) -> str:
        """Python source of a call of this transform on variable ``var``."""
        args = "".join(", " + repr(a) for a in self.args)
        return f"{self.name}({var}{args})"

    def __str__(self) -> str:
        return self.call_source("x")


def primitive(arg_values=((),), elementwise: bool = False, pad: str | None = None, layout: str = "exact",
              max_sides: Callable | None = None, fill: Callable | None = None, coord_map: str | None = None,
              keeps_shape: bool = False):
    """Decorator: register a batched function ``fn(xp, grids, *args)`` as a DSL primitive.

    ``elementwise`` declares that each output cell depends on its input cell alone, so the search
    may apply the function to all grids of all shapes at once as one flat buffer. ``pad`` declares
    that the function may run on grids zero-padded (bottom and right) to a common size: with
    ``"inplace"`` it returns the padded stack whose top-left ``h x w`` corners are the results; with
    ``"crop"`` it returns :class:`solvers.padded.Padded` crops that lie inside the real grids. The
    search then runs it once per size bucket instead of once per exact shape. ``layout="padded"``
    declares ``fn(xp, g, h, w, *args)``: it takes zero-padded grids with their real sides and
    returns :class:`solvers.padded.Padded` (see :mod:`solvers.ragged`); it also runs per bucket.
    ``max_sides(*args)`` gives the most rows and columns of an input that can have a result (for
    primitives whose output grows past 30 cells a side): the search skips larger grids.
    ``fill(xp, g)`` declares (for a ``pad="inplace"`` primitive whose one argument is a colour) the
    mask of the cells it paints with that colour, the others left as they are: on a GPU the
    search then paints, copies and hashes several colours' outputs in one kernel.
    ``coord_map`` names the coordinate map of :data:`solvers.coord_maps.COORD_MAPS` that computes the
    same grids (for a ``layout="padded"`` primitive of at most two integer arguments): on a GPU the
    search applies runs of such transforms together, in one or two kernels.
    ``keeps_shape`` declares that every result has its input's shape (``elementwise`` and
    ``pad="inplace"`` imply it; ``tests/test_registry.py`` checks it on real grids).
    """
    if layout not in ("exact", "padded"):
        raise ValueError(f"layout must be 'exact' or 'padded', not {layout!r}")
    if pad not in (None, "inplace", "crop"):
        raise ValueError(f"pad must be None, 'inplace' or 'crop', not {pad!r}")
    if fill is not None and (pad != "inplace" or any(len(a) != 1 for a in arg_values)):
        raise ValueError("fill needs pad='inplace' and one argument (a colour)")
    if coord_map is not None:
        if coord_map not in COORD_MAPS or layout != "padded" or any(len(a) > 2 for a in arg_values):
            raise ValueError(f"coord_map {coord_map!r}: a map of solvers.coord_maps.COORD_MAPS, for a "
                             "padded-layout primitive of at most two arguments")

    def register(fn):
        name = fn.__name__
        if name in PRIMITIVES:
            raise ValueError(f"primitive {name!r} registered twice")
        PRIMITIVES[name] = Primitive(name, fn, tuple(tuple(a) for a in arg_values),
                                     (fn.__doc__ or "").strip(), elementwise, pad, layout, max_sides, fill, coord_map,
                                     keeps_shape or elementwise or pad == "inplace")
        return fn

    return register
