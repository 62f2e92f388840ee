"""Concurrent run_card.sh instances share the work through the cache: each task is searched once,
every instance's submission covers all tasks and they are identical; a killed instance's leases
expire and its tasks are taken over."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest_cache import redis_server  # noqa: F401  (fixture)

ROOT = Path(__file__).resolve().parent.parent
COUNT = 24


def start(out, cache_url, *extra, local=None):
    cmd = [sys.executable, "-m", "pipeline", "run", "-c", str(COUNT), "-D", "1", "-m", "-w", "1",
           "-O", str(out), "-C", cache_url, "--chunk", "3", *extra]
    if local:
        cmd += ["--local-cache", str(local)]
    return subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def finish(procs, timeout=240):
    for p in procs:
        out, err = p.communicate(timeout=timeout)
        assert p.returncode == 0, err


def _check_shared(outs):
    reports = [json.loads((o / "report.json").read_text()) for o in outs]
    assert sum(r["run"]["searched_tasks"] for r in reports) == COUNT  # each task searched once
    subs = [(o / "submission.json").read_bytes() for o in outs]
    assert len(set(subs)) == 1
    assert len(json.loads(subs[0])) == COUNT


def test_two_instances_on_one_disk_cache_split_the_work(tmp_path):
    outs = [tmp_path / f"out{i}" for i in range(2)]
    procs = [start(o, f"disk:{tmp_path / 'cache'}") for o in outs]
    finish(procs)
    _check_shared(outs)


@pytest.mark.redis
def test_three_instances_on_one_redis_split_the_work(tmp_path, redis_server):  # noqa: F811
    outs = [tmp_path / f"out{i}" for i in range(3)]
    # Separate local folders: as on separate machines, only Redis is shared.
    procs = [start(o, redis_server.url, local=tmp_path / f"local{i}") for i, o in enumerate(outs)]
    finish(procs)
    _check_shared(outs)


def test_killed_instance_leases_expire_and_its_tasks_are_taken_over(tmp_path):
    from cache import LeaseManager, open_cache
    from pipeline.run.fingerprint import code_fingerprint
    from pipeline.run.tasks import load_tasks

    cache_url = f"disk:{tmp_path / 'cache'}"
    args = ["-c", "24", "-D", "2", "-m", "-w", "1", "-C", cache_url, "--chunk", "24", "--lease-ttl", "2"]
    # The first instance claims every task in one chunk, then is killed while it searches.
    first = subprocess.Popen([sys.executable, "-m", "pipeline", "run", *args, "-O", str(tmp_path / "dead")],
                             cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    task = load_tasks("arc1-train", 1)[0][0]
    lease = f"lease:{task.digest()}:d2:s0:n8000"
    cache = open_cache(cache_url, code_fingerprint())
    watcher = LeaseManager(cache, ttl=2)
    deadline = time.monotonic() + 60
    while watcher.holder(lease) is None:  # wait until the first instance holds its leases
        assert time.monotonic() < deadline and first.poll() is None
        time.sleep(0.1)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait(timeout=10)
    assert watcher.holder(lease) is not None  # still held by the dead instance
    cache.close()
    second = subprocess.run([sys.executable, "-m", "pipeline", "run", *args, "-O", str(tmp_path / "alive")],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr
    report = json.loads((tmp_path / "alive" / "report.json").read_text())
    assert report["run"]["searched_tasks"] == 24  # all taken over after the dead leases expired
    assert all(t["status"] != "pending" for t in report["tasks"])
