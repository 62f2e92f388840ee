"""Grid hashes: the batched hasher against a plain one-grid-at-a-time reading of its definition."""
from __future__ import annotations

import numpy as np

from pipeline.search.hashing import PROJECTIONS, GridHasher

_M = (1 << 64) - 1


def _splitmix(z: int) -> int:
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9 & _M
    z = (z ^ (z >> 27)) * 0x94D049BB133111EB & _M
    return z ^ (z >> 31)


def _one_grid(hasher: GridHasher, grid: np.ndarray) -> int:
    """The definition in Python integers: six projections of the cells by their row and column,
    mixed with odd 64-bit constants, the shape and splitmix64."""
    h, w = grid.shape
    coef = np.asarray(hasher.coef)[:h, :w].astype(np.int64)
    total = 0
    for j in range(PROJECTIONS):
        projection = int((grid.astype(np.int64) * coef[:, :, j]).sum())
        total = (total + projection * int(hasher.mix[j])) & _M
    return _splitmix(total ^ ((h * 64 + w) * 0x2545F4914F6CDD1D & _M))


def test_batched_hashes_follow_the_definition_alone_and_padded():
    rng = np.random.default_rng(5)
    hasher = GridHasher(np, 11)
    for h, w in [(1, 1), (3, 7), (30, 30), (12, 5)]:
        grids = (rng.integers(0, 10, (20, h, w)) * (rng.random((20, h, w)) < 0.6)).astype(np.uint8)
        want = [_one_grid(hasher, g) for g in grids]
        assert hasher.grids(grids).tolist() == want
        padded = np.zeros((20, 30, 30), dtype=np.uint8)
        padded[:, :h, :w] = grids
        assert hasher.padded(padded, np.full(20, h), np.full(20, w)).tolist() == want
    # Different grids hash differently (and a grid's shape counts).
    a = np.zeros((1, 2, 3), dtype=np.uint8)
    b = np.zeros((1, 3, 2), dtype=np.uint8)
    assert hasher.grids(a)[0] != hasher.grids(b)[0]
