"""The registry's declarations about primitives, checked against what the primitives do."""
from __future__ import annotations

import collections

import numpy as np
import pytest

from pipeline.run.tasks import load_tasks
from pipeline.search.chain_grids import _apply
from solvers.primitives import transforms


@pytest.fixture(scope="module")
def real_grids():
    """Train grids of every fourth ARC-1 train task: 1x1 to 30x30, square and not."""
    tasks, _ = load_tasks("arc1-train", 0)
    return [np.asarray(g, dtype=np.uint8) for t in tasks[::4] for g in t.train_inputs + t.train_outputs]


def test_a_transform_declared_to_keep_shape_gives_every_grid_its_input_shape(real_grids):
    """``keeps_shape`` (the search's last level relies on it): every result has its input's
    shape, on stacks of one shape and on zero-padded stacks of many shapes."""
    by_shape = collections.defaultdict(list)
    for grid in real_grids:
        by_shape[grid.shape].append(grid)
    kept = [tr for tr in transforms() if tr.primitive.keeps_shape]
    assert len(kept) > 100
    for tr in kept:
        step = (tr.name, tr.args)
        results = 0
        for grids in list(by_shape.values()) + [real_grids]:
            for grid, out in zip(grids, _apply(step, grids)):
                if out is not None:
                    results += 1
                    assert out.shape == grid.shape, (tr.name, tr.args, grid.shape, out.shape)
        assert results, tr.name  # each gives some result to check


def test_shape_changing_transforms_are_not_declared_to_keep_shape():
    names = {tr.name for tr in transforms() if tr.primitive.keeps_shape}
    assert not names & {"rot90", "transpose", "crop_content", "upscale", "tile", "downscale", "largest_object"}
