"""Micro-benchmark of array building blocks on NumPy vs CuPy (which calls are slow where)."""
import sys
import time

import numpy as np


def bench(xp, fn, *args, reps=5):
    sync = (lambda: xp.cuda.Device().synchronize()) if xp is not np else (lambda: None)
    fn(*args)
    sync()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn(*args)
    sync()
    return (time.perf_counter() - t0) / reps


def main():
    import cupy as cp
    from solvers.batch import colour_counts, bounding_boxes
    from solvers.primitives.objects import label_objects
    from solvers.primitives import transforms

    rng = np.random.default_rng(0)
    for n, h, w in ((100_000, 10, 10), (10_000, 30, 30)):
        g = (rng.integers(1, 10, (n, h, w)) * (rng.random((n, h, w)) < 0.3)).astype(np.uint8)
        for xp in (np, cp):
            a = xp.asarray(g)
            rows = [("colour_counts", bench(xp, colour_counts, xp, a)),
                    ("onehot_counts", bench(xp, lambda: (a[..., None] == xp.arange(10, dtype=a.dtype)).sum(axis=(1, 2)))),
                    ("bbox", bench(xp, bounding_boxes, xp, a != 0)),
                    ("label8multi", bench(xp, label_objects, xp, a, 8, False)),
                    ("label4colour", bench(xp, label_objects, xp, a, 4, True))]
            for t in transforms():
                if t.name in ("complete_period", "rarest_color_object", "crop_minority", "cell_summary",
                              "fill_bbox", "rot90", "recolor") and t.name not in [r[0] for r in rows]:
                    rows.append((t.name, bench(xp, lambda: t(xp, a), reps=2)))
            print(f"{xp.__name__:5} n={n} {h}x{w}: " + ", ".join(f"{k} {v * 1e3:.1f}ms" for k, v in rows), flush=True)


if __name__ == "__main__":
    sys.exit(main())
