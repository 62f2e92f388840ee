"""The device-idle arithmetic of benchmarks/nsys_gaps.py."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))
from nsys_gaps import device_gaps  # noqa: E402


def test_gaps_count_only_time_no_kernel_ran():
    # Kernels [0, 10), [5, 20) overlap; [15, 18) lies inside the second; then idle until 50.
    start = np.array([0, 5, 15, 50])
    end = np.array([10, 20, 18, 60])
    span, busy, gaps = device_gaps(start, end)
    assert span == 60
    assert gaps.tolist() == [0, 0, 30]
    assert busy == 30


def test_innermost_range_holds_each_time():
    from nsys_gaps import innermost
    # [0, 20) holds [2, 5) and [8, 12); [30, 40) stands apart.
    starts, ends = np.array([0, 2, 8, 30]), np.array([20, 5, 12, 40])
    t = np.array([1, 2, 4, 5, 9, 12, 19, 20, 35, 50, -1])
    assert innermost(starts, ends, t).tolist() == [0, 1, 1, 0, 2, 0, 0, -1, 3, -1, -1]


def test_innermost_range_of_each_thread():
    from nsys_gaps import innermost_by_thread
    # Thread 1: [0, 20) holding [2, 5). Thread 2: [3, 30), which crosses thread 1's ranges.
    starts, ends, tid = np.array([0, 2, 3]), np.array([20, 5, 30]), np.array([1, 1, 2])
    t = np.array([4, 4, 10, 25, 25, 40])
    t_tid = np.array([1, 2, 1, 1, 2, 2])
    assert innermost_by_thread(starts, ends, tid, t, t_tid).tolist() == [1, 2, 0, -1, 2, -1]
