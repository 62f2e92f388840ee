"""Chains of many tasks worked out together (pipeline.search.chain_grids) give the grids of the
single-grid face, step by step, for grids of many shapes and steps with and without results."""
from __future__ import annotations

import numpy as np

from pipeline.search.chain_grids import chain_grids, chain_key
from pipeline.search.layers import run_steps
from solvers.primitives import transforms


def _grids(seed, count):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        h, w = rng.integers(1, 13, size=2)
        g = rng.integers(0, 10, size=(h, w)).astype(np.uint8)
        g[rng.random((h, w)) < 0.6] = 0
        out.append(g)
    return out


def _single(chain, grids):
    made = [run_steps(chain, g) for g in grids]
    return None if any(g is None for g in made) else made


def test_every_transform_gives_the_single_grid_results():
    steps = [(t.name, t.args) for t in transforms()]
    inputs = [_grids(seed, 3) for seed in range(6)]  # six tasks, grids of many shapes
    chains = [[(step,) for step in steps[k::6]] for k in range(6)]
    made = chain_grids(inputs, chains)
    for task_inputs, task_chains, task_made in zip(inputs, chains, made):
        for chain in task_chains:
            expected, got = _single(chain, task_inputs), task_made[chain_key(chain)]
            assert (got is None) == (expected is None), chain
            if got is not None:
                assert all(np.array_equal(a, b) for a, b in zip(got, expected)), chain


def test_chains_share_prefixes_and_keep_unhashable_arguments():
    inputs = [_grids(7, 2), _grids(8, 3)]
    rays = (("keep_color", (2,)), ("rays", ("down",)))
    table = (("colormap", ({2: 5, 5: 2},)),)
    chains = [[rays, rays[:1], table], [rays, rays + table, ()]]
    made = chain_grids(inputs, chains)
    for task_inputs, task_chains, task_made in zip(inputs, chains, made):
        assert task_made[()] is not None
        for chain in task_chains:
            for k in range(len(chain) + 1):
                got, expected = task_made[chain_key(chain[:k])], _single(chain[:k], task_inputs)
                assert all(np.array_equal(a, b) for a, b in zip(got, expected))
    assert chain_key(rays) == rays and hash(chain_key(rays + table)) is not None
