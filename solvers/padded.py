"""The padded layout of a primitive's results: grids of many shapes in one zero-filled stack."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Padded:
    """Grids of different shapes in the top-left corners of one zero-filled ``(n, H, W)`` stack.

    Grid ``i`` is ``arr[i, :h[i], :w[i]]`` when ``valid[i]``; every cell outside it is 0.
    """

    arr: object
    h: object
    w: object
    valid: object


def pad_grids(grids) -> tuple:
    """Host grids of any shapes as one zero-padded uint8 stack (bottom and right) with their sides:
    ``(stack (n, H, W), h (n,), w (n,))``."""
    h = np.array([g.shape[0] for g in grids], dtype=np.int64)
    w = np.array([g.shape[1] for g in grids], dtype=np.int64)
    stack = np.zeros((len(grids), int(h.max()), int(w.max())), dtype=np.uint8)
    for i, g in enumerate(grids):
        stack[i, :g.shape[0], :g.shape[1]] = g
    return stack, h, w
