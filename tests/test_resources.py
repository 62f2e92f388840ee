"""CPU accounting: usable CPUs, default and fair worker counts, live run detection."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from pipeline.run import resources  # noqa: E402
from pipeline.run.resources import (  # noqa: E402
    default_workers,
    fair_workers,
    running_instances,
    usable_cpus,
)


def test_usable_cpus_is_positive_and_honours_affinity():
    n = usable_cpus()
    assert n >= 1
    assert n <= (os.cpu_count() or 1)
    if hasattr(os, "sched_getaffinity"):
        assert n <= len(os.sched_getaffinity(0))


def test_default_workers_is_min_4_usable():
    assert default_workers() == min(4, usable_cpus())


def test_fair_workers_requested_wins():
    assert fair_workers(3) == 3
    assert fair_workers(64) == 64
    assert fair_workers(0) == 1


@pytest.mark.parametrize("cpus, runs, expected", [
    (64, set(), 4), (64, {1}, 4), (8, {1, 2}, 4), (8, {1, 2, 3, 4}, 2), (8, set(range(1, 9)), 1),
    (8, set(range(1, 20)), 1), (2, set(), 2), (1, {1, 2}, 1),
])
def test_fair_workers_shares_cpus_between_runs(monkeypatch, cpus, runs, expected):
    monkeypatch.setattr(resources, "usable_cpus", lambda: cpus)
    monkeypatch.setattr(resources, "_run_pids", lambda tag, cache=None: set(runs))
    monkeypatch.setattr(resources, "_own_run_pid", lambda pids: min(pids) if pids else -1)
    assert fair_workers(None) == expected


def test_fair_workers_counts_this_process_when_it_is_not_a_run(monkeypatch):
    monkeypatch.setattr(resources, "usable_cpus", lambda: 8)
    monkeypatch.setattr(resources, "_run_pids", lambda tag, cache=None: {101, 102, 103})
    # This process is not among the runs: 3 others + itself share 8 CPUs.
    assert fair_workers(None) == 2


@pytest.mark.parametrize("cmdline, is_run", [
    (["python", "-m", "pipeline", "run", "-c", "5"], True),
    (["/usr/bin/python3", "/work/main/pipeline/__main__.py", "run"], True),
    (["python", "x.py", "--arcbatt-run"], True),
    (["python", "-m", "pipeline", "score", "sub.json"], False),
    (["vim", "pipeline/run.py"], False),
    (["pytest", "tests/test_pipeline.py", "-k", "run"], False),
    (["bash", "run_card.sh", "-c", "20"], False),
])
def test_run_cmdline_matching(cmdline, is_run):
    assert resources._is_run_cmdline(cmdline, "arcbatt-run") is is_run


def test_running_instances_sees_a_live_run():
    base = running_instances()
    # A stand-in process whose command line reads "... pipeline run".
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", "pipeline", "run"])
    try:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and proc.pid not in resources._run_pids("arcbatt-run"):
            time.sleep(0.05)
        assert proc.pid in resources._run_pids("arcbatt-run")
        # Other runs may start or end on a shared machine meanwhile: compare loosely.
        assert running_instances() >= 1
        assert running_instances() >= base + 1 or base > 0
    finally:
        proc.kill()
        proc.wait(5)
    assert not psutil.pid_exists(proc.pid) or proc.pid not in resources._run_pids("arcbatt-run")


def test_forked_children_of_a_run_do_not_count():
    code = ("import os, time\n"
            "pid = os.fork()\n"
            "time.sleep(30)\n")
    proc = subprocess.Popen([sys.executable, "-c", code, "pipeline", "run"])
    try:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not psutil.Process(proc.pid).children():
            time.sleep(0.05)
        children = psutil.Process(proc.pid).children()
        assert children, "the stand-in run did not fork"
        pids = resources._run_pids("arcbatt-run")
        assert proc.pid in pids
        assert all(c.pid not in pids for c in children)
    finally:
        for c in psutil.Process(proc.pid).children():
            c.kill()
        proc.kill()
        proc.wait(5)


@pytest.mark.parametrize("visible,max_gpus,expected", [
    ("0,1,2,3", None, 4), ("1,3", None, 2), ("0,1,2,3", 2, 2), ("", None, 0), ("-1", None, 0),
    ("0,-1,2", None, 1), ("GPU-5a1b,GPU-77c2", None, 2)])
def test_gpu_count_hint_follows_cuda_visible_devices(monkeypatch, visible, max_gpus, expected):
    from pipeline.run.devices import gpu_count_hint

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    assert gpu_count_hint(max_gpus) == expected


def test_gpu_count_hint_without_the_variable_counts_the_drivers_gpus(monkeypatch, tmp_path):
    """Without CUDA_VISIBLE_DEVICES: the driver's GPU folders, else (a container without
    /proc/driver/nvidia) the GPUs' device nodes, not nvidiactl or nvidia-uvm."""
    from pipeline.run import devices

    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    driver, dev = tmp_path / "gpus", tmp_path / "dev"
    driver.mkdir()
    dev.mkdir()
    for name in ("nvidia0", "nvidia1", "nvidia2", "nvidia3", "nvidiactl", "nvidia-uvm"):
        (dev / name).touch()
    monkeypatch.setattr(devices, "DRIVER_GPUS", str(driver / "*"))
    monkeypatch.setattr(devices, "GPU_DEVICE_NODES", str(dev / "nvidia[0-9]*"))
    assert devices.gpu_count_hint() == 4 and devices.gpu_count_hint(2) == 2
    for bus in ("0000:01:00.0", "0000:02:00.0"):
        (driver / bus).mkdir()
    assert devices.gpu_count_hint() == 2
    for path in list(dev.iterdir()) + list(driver.iterdir()):
        path.rmdir() if path.is_dir() else path.unlink()
    assert devices.gpu_count_hint() == 0


def test_only_runs_that_share_this_runs_cache_are_counted(tmp_path):
    """A run on another cache is not one of ours; runs on the same cache (however its path was
    written, relative to their own folder) are, and so are Redis runs on the same server and db."""
    from pipeline.run.cache_identity import cache_identity

    ours = tmp_path / "ours"
    ours.mkdir()
    sleeper = [sys.executable, "-c", "import time; time.sleep(30)", "pipeline", "run"]
    procs = {
        "same_relative": subprocess.Popen(sleeper + ["-C", "disk:ours"], cwd=tmp_path),
        "same_absolute": subprocess.Popen(sleeper + [f"--cache=disk:{ours}"]),
        "other": subprocess.Popen(sleeper + ["-C", f"disk:{tmp_path / 'other'}"]),
        "redis_same": subprocess.Popen(sleeper + ["-C", "redis://LOCALHOST:6390"]),
        "redis_other_db": subprocess.Popen(sleeper + ["-C", "redis://localhost:6390/3"]),
    }
    try:
        everyone = set(procs[name].pid for name in procs)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not everyone <= resources._run_pids("arcbatt-run"):
            time.sleep(0.05)
        disk_runs = resources._run_pids("arcbatt-run", cache_identity(f"disk:{ours}", "/"))
        assert {procs["same_relative"].pid, procs["same_absolute"].pid} <= disk_runs
        assert procs["other"].pid not in disk_runs and procs["redis_same"].pid not in disk_runs
        redis_runs = resources._run_pids("arcbatt-run", cache_identity("redis://localhost:6390/0", "/"))
        assert procs["redis_same"].pid in redis_runs
        assert procs["redis_other_db"].pid not in redis_runs and procs["other"].pid not in redis_runs
    finally:
        for proc in procs.values():
            proc.kill()
            proc.wait(5)
