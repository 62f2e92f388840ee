"""Device busy and idle time from an Nsight Systems capture (``nsys profile --export=sqlite``).

    python benchmarks/nsys_gaps.py capture.sqlite [--from-fraction 0.55]

Prints the span of the kernels, the time at least one kernel ran (busy), the gaps between
kernels (idle) by size, the kernels that took the most time (with their launch counts), the
copies by direction, and the CUDA runtime calls the host spent most time in (synchronisations
are where it waited for the device), for the part of the capture after ``--from-fraction`` of
its span (a later search of several in one process).

With NVTX ranges in the capture (``profile_search.py --nvtx``, ``nsys profile -t cuda,nvtx``) it
also attributes every kernel launch and every wait to the range the host was in when it made
the call: per range name, the host's time in it, its launches, their device time, and its
synchronisations.
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
    if "NVTX_EVENTS" in tables and "CUPTI_ACTIVITY_KIND_RUNTIME" in tables:
        _print_ranges(db, lo, np.maximum.accumulate(end)[:-1], gaps)


def innermost(starts: np.ndarray, ends: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Index of the innermost range holding each time in ``t`` (ranges sorted by start, nested or
    apart, never crossing); -1 for none."""
    owner = np.full(len(t), -1, dtype=np.int64)
    stack: list = []
    j = 0
    for k in np.argsort(t, kind="stable"):
        while j < len(starts) and starts[j] <= t[k]:
            while stack and ends[stack[-1]] <= starts[j]:
                stack.pop()
            stack.append(j)
            j += 1
        while stack and ends[stack[-1]] <= t[k]:
            stack.pop()
        owner[k] = stack[-1] if stack else -1
    return owner


def innermost_by_thread(starts: np.ndarray, ends: np.ndarray, range_tid: np.ndarray, t: np.ndarray,
                        t_tid: np.ndarray) -> np.ndarray:
    """:func:`innermost` where ranges and times belong to threads (``range_tid``, ``t_tid``): each
    time's innermost range among its own thread's (ranges of one thread nest or lie apart; those of
    two threads may cross)."""
    owner = np.full(len(t), -1, dtype=np.int64)
    for tid in np.unique(t_tid):
        mine = np.nonzero(range_tid == tid)[0]
        at = np.nonzero(t_tid == tid)[0]
        found = innermost(starts[mine], ends[mine], t[at])
        owner[at] = np.where(found >= 0, mine[np.maximum(found, 0)], -1)
    return owner


def _print_ranges(db, lo: int, gap_start: np.ndarray, gaps: np.ndarray) -> None:
    """Per NVTX range name (CuPy's own cub/thrust ranges left out): host time in it less its inner
    ranges, kernel launches made in it (not in an inner range) and their device time,
    synchronising calls made in it, how many times it ran, and the device's idle time that began
    while the host was in it (``gaps`` starting at ``gap_start``: the step that kept the device
    waiting; with several threads, the range of the thread that launched most kernels)."""
    ranges = db.execute("SELECT e.start, e.end, COALESCE(e.text, s.value), e.globalTid FROM NVTX_EVENTS e "
                        "LEFT JOIN StringIds s ON s.id = e.textId WHERE e.end IS NOT NULL "
                        "AND e.start >= ? ORDER BY e.start", (lo,)).fetchall()
    ranges = [r for r in ranges if r[2] and not r[2].startswith(("cub::", "thrust::"))]
    if not ranges:
        return
    starts = np.array([r[0] for r in ranges], dtype=np.int64)
    ends = np.array([r[1] for r in ranges], dtype=np.int64)
    names = np.array([r[2] for r in ranges] + ["(outside ranges)"])
    range_tid = np.array([r[3] or 0 for r in ranges], dtype=np.int64)
    calls = db.execute("SELECT r.start, s.value, k.start, k.end, r.globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
                       "JOIN StringIds s ON s.id = r.nameId LEFT JOIN CUPTI_ACTIVITY_KIND_KERNEL k "
                       "ON k.correlationId = r.correlationId WHERE r.start >= ?", (lo,)).fetchall()
    t = np.array([c[0] for c in calls], dtype=np.int64)
    call_tid = np.array([c[4] or 0 for c in calls], dtype=np.int64)
    owner = names[innermost_by_thread(starts, ends, range_tid, t, call_tid)]  # -1 picks "(outside ranges)"
    kernel = np.array([c[2] is not None for c in calls])
    device = np.array([(c[3] - c[2]) if c[2] is not None else 0 for c in calls], dtype=np.int64)
    sync = np.array(["Synchronize" in c[1] for c in calls])
    # A range's own host time: its span less its direct inner ranges' spans.
    duration = ends - starts
    parent = innermost_by_thread(starts, ends, range_tid, starts - 1, range_tid)  # strictly before: not itself
    own = duration.astype(np.float64)
    np.subtract.at(own, parent[parent >= 0], duration[parent >= 0])
    uniq, inverse = np.unique(names, return_inverse=True)
    host = np.bincount(inverse[:-1], weights=own, minlength=len(uniq))
    runs = np.bincount(inverse[:-1], minlength=len(uniq))
    pos = np.searchsorted(uniq, owner)
    launches = np.bincount(pos, weights=kernel, minlength=len(uniq))
    dev = np.bincount(pos, weights=device, minlength=len(uniq))
    syncs = np.bincount(pos, weights=sync, minlength=len(uniq))
    tids, launched = np.unique(call_tid[kernel], return_counts=True) if kernel.any() else (np.zeros(1, np.int64), 0)
    main_tid = np.full(len(gap_start), tids[np.argmax(launched)], dtype=np.int64)
    idle = np.bincount(np.searchsorted(uniq, names[innermost_by_thread(starts, ends, range_tid, gap_start, main_tid)]),
                       weights=gaps, minlength=len(uniq))
    print("by NVTX range (own host seconds, device idle begun in it, kernel launches, their device "
          "seconds, stream syncs, runs, name):")
    for i in np.argsort(-(host + dev))[:50]:
        print(f"  {host[i] / 1e9:7.3f} s {idle[i] / 1e9:7.3f} s {int(launches[i]):7d} {dev[i] / 1e9:7.3f} s "
              f"{int(syncs[i]):6d} {int(runs[i]):6d}  {uniq[i]}")


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
