"""The padded layout of a primitive's results: grids of many shapes in one zero-filled stack."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Padded:
    """Grids of different shapes in the top-left corners of one zero-filled ``(n, H, W)`` stack.

    Grid ``i`` is ``arr[i, :h[i], :w[i]]`` when ``valid[i]``; every cell outside it is 0.
    """

    arr: object
    h: object
    w: object
    valid: object
