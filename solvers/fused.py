"""Fused CUDA kernels: whole primitives in one kernel each, for those slowest as array calls.

Measured on an H100 on the level-2 block of a depth-2 run over all ARC-1 train tasks
(``benchmarks/primitive_costs.py --gpu --level 2``), ten primitives took over half of the
device time: their array calls build int64 indices and bool temporaries over padded stacks, sort
every object of the stack, or loop over shifts in Python (one launch per shift). Here each of them
is one kernel (a thread block per grid, a thread per cell, the grid in shared memory) or one
elementwise kernel (a thread per cell). Each gives exactly what the primitive's array calls give:
the GPU tests run every transform on NumPy (array calls) and on CuPy (these kernels) and compare.
The primitives call them only where :func:`solvers.kernels.enabled` says so; the CPU always runs
the array calls.
"""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from solvers.padded import Padded
from solvers.kernels import LABEL_SHARED, block_threads, loop_threads, per_grid_arg, thread_launch

# The kernels' CUDA source is fused.cu beside this file.
_SOURCE = LABEL_SHARED + "\n" + Path(__file__).with_name("fused.cu").read_text()


@functools.lru_cache(maxsize=None)
def _module():
    """All kernels of this module as one compiled module (compiled, or loaded from CuPy's disk
    cache, once per process and device context)."""
    import cupy

    return cupy.RawModule(code=_SOURCE, options=("-std=c++14",))


@functools.lru_cache(maxsize=None)
def _kernel(name: str):
    return _module().get_function(name)


def preload() -> None:
    """Load the compiled kernels now (on the current GPU), so a search does not wait for it."""
    _kernel("complete_period")


def _result_sides(xp, n: int):
    """A kernel's per-grid outputs of a padded result for ``n`` grids: its sides and whether each
    grid has a result (False until the kernel says so)."""
    return xp.empty(n, dtype=xp.int64), xp.empty(n, dtype=xp.int64), xp.zeros(n, dtype=bool)


def _block_results(xp, g):
    """Outputs of a block-per-grid kernel: the grids, their sides and whether each has a result."""
    return (xp.zeros_like(g), *_result_sides(xp, g.shape[0]))


def _padded_to_padded(xp, name: str, g, h, w, *flags, threads=block_threads) -> Padded:
    """Launch kernel ``name`` with a block per grid of the zero-padded stack ``g`` (real sides
    ``h``, ``w``) and ``threads(H * W)`` threads, arguments ``(g, h, w, H, W, *flags, out, out_h,
    out_w, valid)``, flags as int32; its results fill a stack of ``g``'s shape."""
    g = xp.ascontiguousarray(g)
    n, H, W = g.shape
    out, oh, ow, valid = _block_results(xp, g)
    if n:
        _kernel(name)((n,), (threads(H * W),),
                      (g, per_grid_arg(xp, h, n), per_grid_arg(xp, w, n), np.int32(H), np.int32(W),
                       *(np.int32(int(f)) for f in flags), out, oh, ow, valid))
    return Padded(out, oh, ow, valid)


def repair_symmetry(xp, g, h, w, offsets: int, crop: bool) -> Padded:
    """``repair.repair_symmetry`` on a zero-padded stack with real sides ``h``, ``w``, trying the
    first ``offsets`` (1 or 2) mirror-axis offsets of (0, 2)."""
    return _padded_to_padded(xp, "repair_symmetry", g, h, w, offsets, bool(crop))


def complete_period(xp, g, h, w, max_period: int, crop: bool) -> Padded:
    """``repair.complete_period`` on a zero-padded stack with real sides ``h``, ``w``: periods and
    steps up to ``max_period`` (at most 15)."""
    if not 1 <= max_period <= 15:
        raise ValueError(f"periods up to 15, got {max_period}")
    return _padded_to_padded(xp, "complete_period", g, h, w, max_period, bool(crop), threads=loop_threads)


def crop_to_mask(xp, g, mask, valid=None) -> Padded:
    """``batch.crop_to_mask``: each grid cropped to the bounding box of its cells where ``mask``
    holds (grids with none, or where ``valid`` is false, have no result)."""
    g = xp.ascontiguousarray(g)
    n, H, W = g.shape
    out, oh, ow, ok = _block_results(xp, g)
    if n:
        mask = xp.ascontiguousarray(xp.broadcast_to(mask, g.shape), dtype=bool)
        valid = 0 if valid is None else xp.ascontiguousarray(xp.broadcast_to(valid, (n,)), dtype=bool)
        _kernel("crop_to_mask")((n,), (loop_threads(H * W),),
                                (g, mask, valid, np.int32(H), np.int32(W), out, oh, ow, ok))
    return Padded(out, oh, ow, ok)


def crop_objects(xp, g, labels, chosen) -> Padded:
    """``objects._crop_chosen``: each grid cropped to the object labelled ``chosen[i]`` (others
    erased); grids with none (0) have no result."""
    g = xp.ascontiguousarray(g)
    n, H, W = g.shape
    out, oh, ow, valid = _block_results(xp, g)
    if n:
        _kernel("crop_object")((n,), (loop_threads(H * W),),
                               (g, xp.ascontiguousarray(labels), per_grid_arg(xp, chosen, n), np.int32(H),
                                np.int32(W), out, oh, ow, valid))
    return Padded(out, oh, ow, valid)


def mark_hollow(xp, g, labels, first, hole):
    """``recolour.mark_hollow`` from the stack's 8-connected one-colour objects (``labels``,
    ``first`` of the kernel labelling) and its enclosed background ``hole``."""
    g = xp.ascontiguousarray(g)
    n, H, W = g.shape
    out = xp.empty_like(g)
    if g.size:
        _kernel("mark_hollow")((n,), (block_threads(H * W),),
                               (g, xp.ascontiguousarray(labels), xp.ascontiguousarray(first),
                                xp.ascontiguousarray(hole), np.int32(H), np.int32(W), out))
    return out


def smallest_periods(xp, g, h, w):
    """``arrange._smallest_period`` down the rows and across the columns: ``(py, px)`` (n,) int64."""
    g = xp.ascontiguousarray(g)
    n, H, W = g.shape
    py, px = xp.empty(n, dtype=xp.int64), xp.empty(n, dtype=xp.int64)
    if n:
        # Threads 1..H-1 test row shifts, threads 32 + (1..W-1) column shifts.
        _kernel("smallest_periods")((n,), (64,),
                                    (g, per_grid_arg(xp, h, n), per_grid_arg(xp, w, n), np.int32(H), np.int32(W),
                                     py, px))
    return py, px


def _line_draw(xp, g, connect: bool, dirs: int = 0, count: int = 0, vertical: bool = False,
               marked: bool = False):
    g = xp.ascontiguousarray(g)
    n, H, W = g.shape
    if H > 30 or W > 30:  # a thread per line, 32 of each
        raise ValueError(f"grids up to 30x30, got {H}x{W}")
    out = xp.empty_like(g)
    if g.size:
        _kernel("line_draw")((n,), (64,),
                             (g, out, np.int32(H), np.int32(W), np.int32(bool(connect)), np.int32(dirs),
                              np.int32(count), np.int32(bool(vertical)), np.int32(bool(marked))))
    return out


def connect(xp, g, vertical: bool, marked: bool):
    """``draw.connect`` (``vertical``: axis ``hv``) on an (n, H, W) stack."""
    return _line_draw(xp, g, True, vertical=vertical, marked=marked)


def halo(xp, g, conn: int):
    """``draw.halo`` on an (n, H, W) stack (``conn``: 4 or 8 neighbours)."""
    g = xp.ascontiguousarray(g)
    n, H, W = g.shape
    out = xp.empty_like(g)
    if g.size:
        grid, block = thread_launch(g.size)
        _kernel("halo")(grid, block, (g, out, np.int64(g.size), np.int32(H), np.int32(W), np.int32(conn)))
    return out


_HALF_OPS = {"and": 0, "or": 1, "xor": 2, "nor": 3}


def overlay_halves(xp, g, h, w, axis: str, op: str) -> Padded:
    """``regions.overlay_halves`` in one kernel: an (n, H, max(1, W // 2)) stack for ``lr``, an
    (n, max(1, H // 2), W) one for ``ud``, 0 outside each grid's half; the halves' sides and
    whether a grid has halves."""
    g = xp.ascontiguousarray(g)
    n, H, W = g.shape
    across = axis == "lr"
    OH, OW = (H, max(1, W // 2)) if across else (max(1, H // 2), W)
    out = xp.empty((n, OH, OW), dtype=g.dtype)
    oh, ow, valid = _result_sides(xp, n)
    if out.size:
        grid, block = thread_launch(out.size)
        _kernel("overlay_halves")(grid, block, (g, per_grid_arg(xp, h, n), per_grid_arg(xp, w, n), np.int32(H),
                                                np.int32(W), np.int32(OH), np.int32(OW), np.int32(across),
                                                np.int32(_HALF_OPS[op]), out, np.int64(out.size), oh, ow, valid))
    return Padded(out, oh, ow, valid)


def keep_lines(xp, g, h, w, rows: bool, cols: bool, nonzero: bool) -> Padded:
    """``regions.dedup_lines`` (``nonzero`` false: rows, then columns, equal to the one before them
    removed) and ``regions.compress`` (``nonzero``: lines with no non-zero cell removed)."""
    # Two warps: the serial scans of lines take at most 30 threads; the copies loop over cells.
    return _padded_to_padded(xp, "keep_lines", g, h, w, bool(rows), bool(cols), bool(nonzero),
                             threads=lambda cells: 64)


def line_majority(xp, g, h, w, axis: str) -> Padded:
    """``paint_more.line_majority`` (``axis``: ``rows``, ``cols`` or ``auto``)."""
    # Two warps: the lines' histograms take at most 30 threads; the counts and copies loop over cells.
    return _padded_to_padded(xp, "line_majority", g, h, w, {"rows": 0, "cols": 1, "auto": 2}[axis],
                             threads=lambda cells: 64)


def cell_summary(xp, g, h, w, count: bool) -> Padded:
    """``cells.cell_summary`` (``count``: mode ``count``, else ``major``) as (n, 15, 15) grids."""
    g = xp.ascontiguousarray(g)
    n, H, W = g.shape
    out = xp.empty((n, 15, 15), dtype=xp.uint8)
    oh, ow, valid = _result_sides(xp, n)
    if n:
        _kernel("cell_summary")((n,), (loop_threads(H * W, 256),),
                                (g, per_grid_arg(xp, h, n), per_grid_arg(xp, w, n), np.int32(H), np.int32(W),
                                 np.int32(bool(count)), out, oh, ow, valid))
    return Padded(out, oh, ow, valid)


_RAY_SOURCES = {"down": 0, "up": 1, "left": 2, "right": 3}  # carries: from above, below, right, left


def rays(xp, g, directions):
    """``lines.rays`` with the rays of ``directions`` (in the order of priority) on a stack."""
    dirs = sum(_RAY_SOURCES[d] << (2 * j) for j, d in enumerate(directions))
    return _line_draw(xp, g, False, dirs=dirs, count=len(directions))


def nearest_code(xp, code, axis: int, reverse: bool):
    """``reach._nearest_code`` on an (n, H, W) int16 stack (``axis`` 1 or 2)."""
    code = xp.ascontiguousarray(code)
    n, H, W = code.shape
    out = xp.empty_like(code)
    lines = n * (W if axis == 1 else H)
    if lines:
        grid, block = thread_launch(lines)
        _kernel("nearest_code")(grid, block, (code, out, np.int64(n), np.int32(H), np.int32(W),
                                              np.int32(axis == 1), np.int32(bool(reverse))))
    return out


_DIAGONAL_CODES = {"down_right": 0, "down_left": 1, "up_right": 2, "up_left": 3}


def diagonal_rays(xp, g, directions):
    """``moves.diagonal_rays`` with the rays of ``directions`` (in the order of priority) on a
    uint8 stack of at most 30x30 grids."""
    g = xp.ascontiguousarray(g)
    n, H, W = g.shape
    if H > 30 or W > 30:  # a thread per diagonal, 64 threads
        raise ValueError(f"grids up to 30x30, got {H}x{W}")
    dirs = sum(_DIAGONAL_CODES[d] << (2 * j) for j, d in enumerate(directions))
    out = xp.empty_like(g)
    if n:
        _kernel("diagonal_rays")((n,), (64,), (g, out, np.int32(H), np.int32(W), np.int32(dirs),
                                                np.int32(len(directions))))
    return out


def keep_largest_block(xp, g):
    """``rects.keep_largest_block`` on a uint8 stack, one block of 32 threads per grid."""
    g = xp.ascontiguousarray(g)
    n, H, W = g.shape
    out = xp.empty_like(g)
    if n:
        _kernel("keep_largest_block")((n,), (32,), (g, out, np.int32(H), np.int32(W)))
    return out


def colour_boxes(xp, g):
    """``paint_more.colour_boxes`` on a uint8 stack."""
    g = xp.ascontiguousarray(g)
    n, H, W = g.shape
    out = xp.empty_like(g)
    if n:
        _kernel("colour_boxes")((n,), (loop_threads(H * W),), (g, out, np.int32(H), np.int32(W)))
    return out


def slide_to_colour(xp, g, h, w, c: int):
    """``attract.slide_to_colour`` on a zero-padded uint8 stack with real sides ``h``, ``w``: the
    moved grids (grids without ``c`` copied)."""
    g = xp.ascontiguousarray(g)
    n, H, W = g.shape
    out = xp.empty_like(g)
    if n:
        _kernel("slide_to_colour")((n,), (loop_threads(H * W),),
                                   (g, per_grid_arg(xp, h, n), per_grid_arg(xp, w, n), np.int32(H), np.int32(W),
                                    np.int32(c), out))
    return out


_MIRRORS = {"lr": 0, "ud": 1, "rot180": 2, "diag": 3, "all": 4}


def symmetrize(xp, g, h, w, kind: str):
    """The cells of ``regions.symmetrize`` on a zero-padded stack with real sides ``h``, ``w``."""
    g = xp.ascontiguousarray(g)
    n, H, W = g.shape
    out = xp.empty_like(g)
    if g.size:
        grid, block = thread_launch(g.size)
        _kernel("symmetrize")(grid, block, (g, per_grid_arg(xp, h, n), per_grid_arg(xp, w, n), np.int32(H), np.int32(W),
                                            np.int32(_MIRRORS[kind]), out, np.int64(g.size)))
    return out


def edge_cells(xp, g, interior: bool):
    """``regions.outline`` (``interior`` False) or ``regions.interior`` of the uint8 stack ``g``
    in one kernel."""
    g = xp.ascontiguousarray(g)
    n, H, W = g.shape
    out = xp.empty_like(g)
    if g.size:
        grid, block = thread_launch(g.size)
        _kernel("edge_cells")(grid, block, (g, np.int64(g.size), np.int32(H), np.int32(W), np.int32(bool(interior)),
                                            out))
    return out


_COLOUR_PICKS = {"majority": 0, "minority": 1, "invert": 2}


def colour_pick(xp, g, counts, mode: str):
    """``colour.keep_majority_color`` (``mode`` ``majority``), ``keep_minority_color``
    (``minority``) or ``invert`` on an (n, H, W) stack with its colour counts (n, 10), in one kernel."""
    g = xp.ascontiguousarray(g)
    n, H, W = g.shape
    out = xp.empty_like(g)
    if g.size:
        grid, block = thread_launch(g.size)
        _kernel("colour_pick")(grid, block, (g, xp.ascontiguousarray(counts), np.int64(g.size), np.int32(H * W),
                                             np.int32(_COLOUR_PICKS[mode]), out))
    return out


def colour_column(xp, counts, skip: int) -> Padded:
    """``arrange.colour_column`` from the stack's colour counts ((n, 10), not changed), in one kernel:
    an (n, 9 - skip, 1) stack."""
    n = int(counts.shape[0])
    out = xp.empty((n, 9 - skip, 1), dtype=xp.uint8)
    oh, ow, valid = _result_sides(xp, n)
    if n:
        grid, block = thread_launch(n)
        _kernel("colour_column")(grid, block, (xp.ascontiguousarray(counts, dtype=xp.int64), np.int64(n),
                                               np.int32(skip), out, oh, ow, valid))
    return Padded(out, oh, ow, valid)


def label_paint(xp, g, labels, value, erase_single: bool):
    """``objects.remove_noise`` (``erase_single``: cells of labels whose ``value`` is 1 erased), or
    every labelled cell painted its label's ``value`` clipped to 1..9 and the rest 0
    (``recolour.color_by_size`` and ``color_by_rank``), in one kernel."""
    g, labels = xp.ascontiguousarray(g), xp.ascontiguousarray(labels)
    out = xp.empty_like(g)
    if g.size:
        grid, block = thread_launch(g.size)
        _kernel("label_paint")(grid, block, (g, labels, xp.ascontiguousarray(value, dtype=xp.int64), np.int64(g.size),
                                             np.int32(0 if erase_single else 1), out))
    return out


def size_rank_paint(xp, labels, sizes):
    """``recolour.color_by_rank`` from the labelling (``labels`` (n, H, W), ``sizes`` per label) in
    one kernel, without a sort."""
    labels = xp.ascontiguousarray(labels)
    n, H, W = labels.shape
    out = xp.empty(labels.shape, dtype=xp.uint8)
    if labels.size:
        _kernel("size_rank_paint")((n,), (loop_threads(H * W),),
                                   (labels, xp.ascontiguousarray(sizes, dtype=xp.int64), np.int32(H * W), out))
    return out


def differs_from_major(xp, g, counts, h, w):
    """``geometry.crop_minority``'s mask on a zero-padded stack (real sides ``h``, ``w``; colour
    counts of the padded grids), in one kernel."""
    g = xp.ascontiguousarray(g)
    n, H, W = g.shape
    mask = xp.empty(g.shape, dtype=bool)
    if g.size:
        grid, block = thread_launch(g.size)
        _kernel("differs_from_major")(grid, block, (g, xp.ascontiguousarray(counts), per_grid_arg(xp, h, n),
                                                    per_grid_arg(xp, w, n), np.int64(g.size), np.int32(H), np.int32(W),
                                                    mask))
    return mask


def rarest_label(xp, g, labels, counts):
    """``objects.rarest_color_object``'s choice: per grid, the label of the first cell (reading
    order) of its least frequent colour present, 0 when it has none."""
    g, labels = xp.ascontiguousarray(g), xp.ascontiguousarray(labels)
    n, H, W = g.shape
    chosen = xp.empty(n, dtype=xp.int64)
    if n:
        _kernel("rarest_label")((n,), (loop_threads(H * W),), (g, labels, xp.ascontiguousarray(counts),
                                                               np.int32(H * W), chosen))
    return chosen


def rotations_4(xp, g, h, w, rows: int, cols: int):
    """The cells of ``arrange.rotations_4`` as an (n, rows, cols) stack, in one kernel."""
    g = xp.ascontiguousarray(g)
    n, H, W = g.shape
    out = xp.empty((n, rows, cols), dtype=g.dtype)
    if out.size:
        grid, block = thread_launch(out.size)
        _kernel("rotations_4")(grid, block, (g, per_grid_arg(xp, h, n), per_grid_arg(xp, w, n), np.int32(H), np.int32(W),
                                             np.int32(rows), np.int32(cols), np.int64(out.size), out))
    return out
