"""The coordinate maps' one table (solvers.coord_maps) and the forms made from it."""
from __future__ import annotations

import numpy as np

from pipeline.search import kernels as search_kernels
from solvers import coord_maps
from solvers.ragged import apply_coord_map


def test_the_search_kernels_compile_the_generated_switches():
    source = search_kernels.source()
    assert coord_maps.cuda_source() in source
    for name, code in coord_maps.CODES.items():
        assert f"case {code}: " in coord_maps.cuda_source() and f"// {name}" in coord_maps.cuda_source()


def test_rigid_and_swapping_maps_follow_from_the_sides():
    assert coord_maps.RIGID_MAPS == {"rot90", "rot180", "rot270", "flip_lr", "flip_ud", "transpose", "antitranspose"}
    assert coord_maps.SWAPPING_MAPS == {"rot90", "rot270", "transpose", "antitranspose"}


def test_array_form_matches_numpy_on_one_grid():
    rng = np.random.default_rng(0)
    grid = rng.integers(1, 10, (3, 5)).astype(np.uint8)
    want = {"rot90": np.rot90(grid), "rot180": np.rot90(grid, 2), "rot270": np.rot90(grid, 3),
            "flip_lr": grid[:, ::-1], "flip_ud": grid[::-1], "transpose": grid.T, "antitranspose": np.rot90(grid, 2).T,
            "mirror_lr": np.hstack([grid, grid[:, ::-1]]), "mirror_ud": np.vstack([grid, grid[::-1]]),
            "upscale": np.kron(grid, np.ones((2, 2), dtype=np.uint8)), "tile": np.tile(grid, (2, 3))}
    args = {"upscale": (2, 0), "tile": (2, 3)}
    stack = np.zeros((1, 30, 30), dtype=np.uint8)
    stack[0, :3, :5] = grid
    h, w = np.array([3]), np.array([5])
    for name, expected in want.items():
        out = apply_coord_map(np, stack[:, :3, :5], h, w, name, *args.get(name, (0, 0)))
        got = out.arr[0, :int(out.h[0]), :int(out.w[0])]
        assert bool(np.all(out.valid)) if out.valid is not None else True
        assert np.array_equal(got, expected), name
    down = apply_coord_map(np, stack[:, :3, :5], h, w, "downscale", 2)
    assert not bool(down.valid[0])  # 3 x 5 does not divide by 2
