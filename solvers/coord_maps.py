"""The coordinate maps of the geometric primitives, each defined once.

A coordinate map gives, for an input grid of ``h`` x ``w`` cells and the map's arguments ``a``,
``b``: the output's sides, whether there is an output, and for each output cell ``(r, c)`` the
input cell it reads. The table below holds each map as expressions over those names; the array
form (for NumPy or CuPy, over whole stacks) and the CUDA form (the switches of the search's map
kernels) are both made from it, so a primitive's meaning lives in one place.

Expressions are written in Python syntax over non-negative integers (``//`` is the integer
division CUDA's ``/`` gives there); ``mirror_index(i, side)`` is the position in a line of
``side`` cells of position ``i`` in the line followed by its mirror image.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property


@dataclass(frozen=True)
class CoordMap:
    """One coordinate map: output sides, the condition for an output, the source of each cell."""

    rows: str  # output rows from h, w, a, b
    cols: str  # output columns
    src_row: str  # input row of output cell (r, c)
    src_col: str  # input column
    valid: tuple = ()  # conditions for an output (besides sides in 1..30)

    @cached_property
    def _code(self):
        return {k: compile(getattr(self, k), k, "eval") for k in ("rows", "cols", "src_row", "src_col")} | {
            "valid": [compile(v, "valid", "eval") for v in self.valid]}

    def sides(self, h, w, a: int = 0, b: int = 0):
        """``(rows, cols)`` of the output of an ``h`` x ``w`` input (ints or arrays)."""
        names = {"h": h, "w": w, "a": a, "b": b}
        return eval(self._code["rows"], {}, names), eval(self._code["cols"], {}, names)

    def source(self, r, c, h, w, a: int = 0, b: int = 0):
        """``(row, col)``: the input cell that output cell ``(r, c)`` reads (arrays broadcast)."""
        names = {"r": r, "c": c, "h": h, "w": w, "a": a, "b": b, "mirror_index": mirror_index}
        return eval(self._code["src_row"], {}, names), eval(self._code["src_col"], {}, names)

    def is_valid(self, h, w, a: int = 0, b: int = 0):
        """Where an ``h`` x ``w`` input has an output by the map's own conditions (None: always)."""
        ok = None
        for cond in self._code["valid"]:
            v = eval(cond, {}, {"h": h, "w": w, "a": a, "b": b})
            ok = v if ok is None else ok & v
        return ok


MIRROR_INDEX = "i - (i >= side) * (2 * (i - side) + 1)"
_MIRROR_INDEX = compile(MIRROR_INDEX, "mirror_index", "eval")


def mirror_index(i, side):
    """Index into a line of ``side`` cells from a position in the line followed by its mirror."""
    return eval(_MIRROR_INDEX, {}, {"i": i, "side": side})


# In the order of their codes in the CUDA switches.
COORD_MAPS: dict[str, CoordMap] = {
    "rot90": CoordMap("w", "h", "c", "w - 1 - r"),
    "rot180": CoordMap("h", "w", "h - 1 - r", "w - 1 - c"),
    "rot270": CoordMap("w", "h", "h - 1 - c", "r"),
    "flip_lr": CoordMap("h", "w", "r", "w - 1 - c"),
    "flip_ud": CoordMap("h", "w", "h - 1 - r", "c"),
    "transpose": CoordMap("w", "h", "c", "r"),
    "antitranspose": CoordMap("w", "h", "h - 1 - c", "w - 1 - r"),
    "upscale": CoordMap("h * a", "w * a", "r // a", "c // a"),
    "downscale": CoordMap("h // a", "w // a", "r * a", "c * a", ("h % a == 0", "w % a == 0")),
    "tile": CoordMap("h * a", "w * b", "r % h", "c % w"),
    "mirror_lr": CoordMap("h", "2 * w", "r", "mirror_index(c, w)"),
    "mirror_ud": CoordMap("2 * h", "w", "mirror_index(r, h)", "c"),
    "mirror_4": CoordMap("2 * h", "2 * w", "mirror_index(r, h)", "mirror_index(c, w)"),
}
CODES = {name: k for k, name in enumerate(COORD_MAPS)}
# The maps that give every grid a result of its own number of cells, and those of them whose
# result has the input's sides swapped.
RIGID_MAPS = frozenset(n for n, m in COORD_MAPS.items() if {m.rows, m.cols} == {"h", "w"})
SWAPPING_MAPS = frozenset(n for n, m in COORD_MAPS.items() if (m.rows, m.cols) == ("w", "h"))


def _cuda(expr: str) -> str:
    return expr.replace("//", "/").replace(" and ", " && ")


def cuda_source() -> str:
    """The CUDA device functions of the maps, made from :data:`COORD_MAPS`: ``coord_map_sides``
    (the output's sides of map ``m`` with arguments ``a``, ``b`` on an ``h`` x ``w`` grid, and
    whether there is an output) and ``coord_map_source`` (the input cell's index, rows packed,
    that output cell ``(r, c)`` reads)."""
    sides, source = [], []
    for name, k in CODES.items():
        m = COORD_MAPS[name]
        ok = " && ".join(f"({_cuda(v)})" for v in m.valid) or "true"
        sides.append(f"        case {k}: y = {_cuda(m.rows)}; x = {_cuda(m.cols)}; ok = {ok}; break;  // {name}")
        source.append(f"        case {k}: y = {_cuda(m.src_row)}; x = {_cuda(m.src_col)}; break;  // {name}")
    return "\n".join([
        f"__device__ __forceinline__ int mirror_index(int i, int side) {{ return {MIRROR_INDEX}; }}",
        "",
        "__device__ bool coord_map_sides(int m, int a, int b, int h, int w, int* oh, int* ow) {",
        "    int y = 0, x = 0;",
        "    bool ok = false;",
        "    switch (m) {",
        *sides,
        "        default: break;",
        "    }",
        "    *oh = y;",
        "    *ow = x;",
        "    return ok && y >= 1 && x >= 1 && y <= 30 && x <= 30;",
        "}",
        "",
        "__device__ __forceinline__ int coord_map_source(int m, int a, int b, int h, int w, int r, int c) {",
        "    int y = 0, x = 0;",
        "    switch (m) {",
        *source,
        "        default: break;",
        "    }",
        "    return y * w + x;",
        "}",
        "",
    ])
