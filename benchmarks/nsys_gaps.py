"""Device busy and idle time from an Nsight Systems capture (``nsys profile --export=sqlite``).

    python benchmarks/nsys_gaps.py capture.sqlite [--from-fraction 0.55]

Prints the span of the kernels, the time at least one kernel ran (busy), the gaps between
kernels (idle) by size, the kernels that took the most time (with their launch counts), the
copies by direction, and the CUDA runtime calls the host spent most time in (synchronisations
are where it waited for the device), for the part of the capture after ``--from-fraction`` of
its span (a later search of several in one process).
"""
from __future__ import annotations

import argparse
import sqlite3

import numpy as np


def device_gaps(start: np.ndarray, end: np.ndarray) -> tuple[int, int, np.ndarray]:
    """``(span, busy, gaps)`` of kernels that ran over ``[start, end)`` (sorted by start; any
    overlap): the time from the first start to the last end, the time at least one kernel ran,
    and the idle gap before each kernel after the first."""
    span = int(end.max() - start.min())
    reach = np.maximum.accumulate(end)
    gaps = np.maximum(start[1:] - reach[:-1], 0)
    return span, span - int(gaps.sum()), gaps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sqlite")
    parser.add_argument("--from-fraction", type=float, default=0.0)
    args = parser.parse_args()
    db = sqlite3.connect(f"file:{args.sqlite}?mode=ro", uri=True)
    rows = db.execute("SELECT k.start, k.end, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                      "JOIN StringIds s ON s.id = k.shortName ORDER BY k.start").fetchall()
    start = np.array([r[0] for r in rows], dtype=np.int64)
    end = np.array([r[1] for r in rows], dtype=np.int64)
    names = np.array([r[2] for r in rows])
    lo = int(start.min()) + int(args.from_fraction * (end.max() - start.min()))
    keep = start >= lo
    start, end, names = start[keep], end[keep], names[keep]
    span, busy, gaps = device_gaps(start, end)
    print(f"kernels {len(start)}, span {span / 1e9:.3f} s, busy {busy / 1e9:.3f} s ({busy / span:.0%}), "
          f"idle {gaps.sum() / 1e9:.3f} s")
    for lo_us, hi_us in ((0, 10), (10, 100), (100, 1000), (1000, 10000), (10000, 10**9)):
        sel = (gaps >= lo_us * 1000) & (gaps < hi_us * 1000)
        print(f"  gaps {lo_us}-{hi_us} us: {int(sel.sum())}, {gaps[sel].sum() / 1e9:.3f} s")
    print("kernels by device time (seconds, launches, name):")
    _print_totals(names, end - start, 30)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "CUPTI_ACTIVITY_KIND_MEMCPY" in tables:
        rows = db.execute("SELECT start, end, bytes, copyKind FROM CUPTI_ACTIVITY_KIND_MEMCPY "
                          "WHERE start >= ?", (lo,)).fetchall()
        kinds = {1: "host to device", 2: "device to host", 8: "device to device"}
        print("copies (seconds, count, name):")
        _print_totals(np.array([kinds.get(r[3], f"kind {r[3]}") for r in rows]),
                      np.array([r[1] - r[0] for r in rows], dtype=np.int64), 5)
    if "CUPTI_ACTIVITY_KIND_RUNTIME" in tables:
        rows = db.execute("SELECT r.start, r.end, s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
                          "JOIN StringIds s ON s.id = r.nameId WHERE r.start >= ?", (lo,)).fetchall()
        print("host's CUDA runtime calls (seconds, calls, name):")
        _print_totals(np.array([r[2] for r in rows]),
                      np.array([r[1] - r[0] for r in rows], dtype=np.int64), 12)


def _print_totals(names: np.ndarray, durations: np.ndarray, top: int) -> None:
    """Print the ``top`` names by summed duration (ns), with their counts."""
    if len(names) == 0:
        return
    uniq, inverse = np.unique(names, return_inverse=True)
    total = np.bincount(inverse, weights=durations)
    count = np.bincount(inverse)
    for i in np.argsort(-total)[:top]:
        print(f"  {total[i] / 1e9:8.3f} s {count[i]:8d}  {uniq[i]}")


if __name__ == "__main__":
    main()
