"""Vectorised 64-bit hashing of grid stacks and of program states (NumPy or CuPy alike).

A grid's hash comes from six random integer projections of its cells (the coefficient of a cell
depends on its row and column, so a grid hashes the same alone or zero-padded inside a larger
stack), computed as one float32 matrix product per stack on the CPU (BLAS) and by one kernel on
the GPU (a group of lanes per grid, in integers): the coefficients are integers below 2048, so every
projection (at most 9 * 900 * 2047 < 2**24) is exact in float32 and identical on any device or
summation order. Two different grids agree on all six with probability at most
2048**-6 (about 1e-20). The projections and the shape are mixed into 64 bits with splitmix64. A
state (one program's result on every sample of a task) hashes as the wrapping sum of its mixed
grid hashes, salted by the task.
"""
from __future__ import annotations

import numpy as np

from pipeline.search import kernels

from solvers import kernels as dsl_kernels
from solvers.batch import MAX_SIDE

PROJECTIONS = 6
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_SHAPE = np.uint64(0x2545F4914F6CDD1D)
_SHIFTS = (np.uint64(30), np.uint64(27), np.uint64(31))


def splitmix64(xp, v):
    """The splitmix64 finaliser, elementwise on a uint64 array (wrapping arithmetic)."""
    if dsl_kernels.enabled(xp):
        return kernels.splitmix64(xp, v)
    v = v ^ (v >> _SHIFTS[0])
    v = v * _M1
    v = v ^ (v >> _SHIFTS[1])
    v = v * _M2
    return v ^ (v >> _SHIFTS[2])


class GridHasher:
    """Hashes ``(m, h, w)`` uint8 stacks to ``(m,)`` uint64; the same seed gives the same hashes."""

    def __init__(self, xp, seed: int = 0):
        rng = np.random.default_rng(np.random.SeedSequence([0xA5C, seed]))
        coef = rng.integers(0, 2048, size=(MAX_SIDE, MAX_SIDE, PROJECTIONS)).astype(np.float32)
        mix = rng.integers(0, 2**63, size=PROJECTIONS, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
        self.xp = xp
        self.coef = xp.asarray(coef)
        self.mix = xp.asarray(mix)
        self._coef_by_shape: dict = {}

    def _coef(self, h: int, w: int, dtype):
        key = (h, w, dtype)
        if key not in self._coef_by_shape:
            flat = self.coef[:h, :w].reshape(h * w, PROJECTIONS).astype(dtype)
            self._coef_by_shape[key] = self.xp.ascontiguousarray(flat)
        return self._coef_by_shape[key]

    def _hash(self, arr, h, w):
        """Hashes of the (m, H, W) stack ``arr`` holding grids of real sides ``h``, ``w`` (one per
        grid; their cells outside those sides are 0)."""
        xp = self.xp
        m, H, W = arr.shape
        if dsl_kernels.enabled(xp):  # the search's copy-and-hash kernel, hashing only
            return kernels.copy_hash_rows(xp, arr.reshape(-1), xp.arange(m, dtype=xp.int64) * (H * W), W, None, None,
                                          h, w, self._coef(MAX_SIDE, MAX_SIDE, xp.int32), self.mix)
        proj = xp.matmul(arr.reshape(m, H * W).astype(xp.float32), self._coef(H, W, xp.float32))
        return self._mix(proj, h * 64 + w)

    def _mix(self, proj, shape_key):
        xp = self.xp
        proj = proj.astype(xp.uint64)
        if xp is np:  # an integer matrix-vector product (wrapping): 2-5x a reduction over the rows
            sums = proj @ self.mix
        else:  # the GPU's own path is the hash kernel; this is its array-call fallback
            sums = (proj * self.mix).sum(axis=1, dtype=xp.uint64)
        return splitmix64(xp, sums ^ (shape_key.astype(xp.uint64) * _SHAPE))

    def grids(self, arr):
        """Hash every grid of a ``(m, h, w)`` stack (shape included)."""
        m, h, w = arr.shape
        xp = self.xp
        return self._hash(arr, xp.full(m, h, dtype=xp.int64), xp.full(m, w, dtype=xp.int64))

    def padded(self, arr, h, w):
        """Hash grids held zero-padded in a ``(m, H, W)`` stack; ``h``, ``w`` are their real sides.

        Gives exactly the hashes :meth:`grids` gives for the unpadded grids (cells outside the
        real grid must be 0).
        """
        return self._hash(arr, h, w)

    def copy_padded(self, src, src_base, src_pitch: int, dst, dst_base, h, w):
        """GPU kernels only: copy grid ``i`` (``h[i]`` x ``w[i]``, row r at ``src_base[i] + r *
        src_pitch`` of the flat buffer ``src``) into ``dst`` from ``dst_base[i]`` on, rows packed,
        and return the hashes :meth:`padded` gives for it; cells outside the grids are ignored.
        ``src_pitch`` 0: rows packed (the flat layout); ``dst`` None: hash only."""
        return kernels.copy_hash_rows(self.xp, src, src_base, src_pitch, dst, dst_base, h, w,
                                      self._coef(MAX_SIDE, MAX_SIDE, self.xp.int32), self.mix)

    def copy_from(self, src, pitch, dst, dst_base, h, w):
        """GPU kernels only: :meth:`copy_padded` with each grid's own source address ``src`` (uint64)
        and row ``pitch``."""
        return kernels.copy_hash_from(self.xp, src, pitch, dst, dst_base, h, w,
                                      self._coef(MAX_SIDE, MAX_SIDE, self.xp.int32), self.mix)

    def lut_copy(self, src, start, h, w, luts, dst):
        """GPU kernels only: the grids of a flat layout mapped through each of K colour tables
        ``luts`` into ``dst`` ((K, cells)), and the hashes :meth:`padded` gives for them, (K, n)."""
        return kernels.lut_copy_hash(self.xp, src, start, h, w, luts, dst,
                                     self._coef(MAX_SIDE, MAX_SIDE, self.xp.int32), self.mix)

    def map_copy(self, src, start, h, w, table, dst):
        """GPU kernels only: the grids of a flat layout through each of K rigid coordinate maps
        (``table``, :func:`pipeline.search.kernels.coord_map_table`) into ``dst`` ((K, cells)), and the hashes
        :meth:`padded` gives for them, (K, n)."""
        return kernels.map_copy_hash(self.xp, src, start, h, w, table, dst,
                                     self._coef(MAX_SIDE, MAX_SIDE, self.xp.int32), self.mix)

    def map_take_copy(self, items, table, counts, kept_total: int, dst):
        """GPU kernels only: the grids that K coordinate maps keep (``counts``: the first three of
        :func:`pipeline.search.kernels.map_counts`), written to ``dst``: ``(h, w, start, state, sample,
        hashes)`` of :func:`pipeline.search.kernels.map_take_copy_hash`."""
        return kernels.map_take_copy_hash(self.xp, items.cells, items.start, items.h, items.w, items.state,
                                          items.sample, table, *counts, kept_total, dst,
                                          self._coef(MAX_SIDE, MAX_SIDE, self.xp.int32), self.mix)

    def fill_copy(self, stack, mask, dst_base, h, w, item, n: int, colours, dst, out):
        """GPU kernels only: each of K ``colours`` painted onto the ``mask`` cells of one bucket's
        grids, written to ``dst`` ((K, cells)) and hashed into ``out`` ((K, n), at the grids'
        items ``item``) as :meth:`padded` hashes them."""
        kernels.fill_copy_hash(self.xp, stack, mask, dst_base, h, w, item, n, colours, dst, out,
                               self._coef(MAX_SIDE, MAX_SIDE, self.xp.int32), self.mix)

    def item(self, grid_hash, sample):
        """Mix a grid hash with the index of the sample it belongs to (so states sum safely)."""
        xp = self.xp
        return splitmix64(xp, grid_hash + (sample.astype(xp.uint64) + np.uint64(1)) * _GOLDEN)

    def state_key(self, summed, task):
        """Final state key: the summed item hashes salted with the task index."""
        xp = self.xp
        return splitmix64(xp, summed ^ splitmix64(xp, task.astype(xp.uint64) * _GOLDEN + _GOLDEN))
