"""Ordinary mistakes end in one clear line and the right exit code, never a traceback, and the
submission left behind (where one can be written) is valid. Each case runs the real command."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipeline.run.score import validate_submission
from pipeline.run.tasks import load_tasks

ROOT = Path(__file__).resolve().parent.parent
ENV = dict(os.environ, PYTHONPATH=str(ROOT))
QUICK = ["-c", "2", "-D", "1", "-m", "-w", "1"]


def run(*args, cwd=ROOT, timeout=120):
    """``python -m pipeline run ARGS`` in ``cwd``; the CompletedProcess."""
    return subprocess.run([sys.executable, "-m", "pipeline", "run", *args], cwd=cwd, env=ENV,
                          capture_output=True, text=True, timeout=timeout)


def card(*args, cwd, timeout=120):
    """``bash run_card.sh ARGS`` started from ``cwd``."""
    return subprocess.run(["bash", str(ROOT / "run_card.sh"), *args], cwd=cwd, env=ENV,
                          capture_output=True, text=True, timeout=timeout)


def one_line(stderr: str, fragment: str) -> str:
    """The single stderr line holding ``fragment``; fails on a traceback or on several lines."""
    assert "Traceback" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if fragment in line]
    assert len(lines) == 1, stderr
    return lines[0]


def assert_valid_submission(out: Path, dataset="arc1-train", count=2) -> None:
    """submission.json in ``out`` is complete and valid for the first ``count`` tasks."""
    tasks, _ = load_tasks(dataset, count)
    submission = json.loads((out / "submission.json").read_text())
    assert validate_submission(submission, tasks) == []


@pytest.fixture
def read_only():
    """Make folders read-only for this process, also as root (chattr +i); undone afterwards."""
    made = []

    def make(path: Path) -> Path:
        path.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(path)]).returncode:
                pytest.skip("running as root without chattr +i: no folder is read-only")
        else:
            path.chmod(0o555)
        made.append(path)
        return path

    yield make
    for path in made:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(path)])
        else:
            path.chmod(0o755)


def test_output_folder_that_is_a_file(tmp_path):
    (tmp_path / "out").write_text("x")
    res = run(*QUICK, "-O", str(tmp_path / "out"), "-C", f"disk:{tmp_path / 'c'}")
    assert res.returncode == 2
    assert "is a file, not a folder" in one_line(res.stderr, "error:")


def test_read_only_output_folder_and_a_new_one_under_it(tmp_path, read_only):
    locked = read_only(tmp_path / "locked")
    for out in (locked, locked / "new"):
        res = run(*QUICK, "-O", str(out), "-C", f"disk:{tmp_path / 'c'}")
        assert res.returncode == 2, res.stderr
        assert "cannot be written" in one_line(res.stderr, "error:")


def test_read_only_cache_folder_and_a_new_one_under_it(tmp_path, read_only):
    locked = read_only(tmp_path / "locked")
    for i, cache in enumerate((locked, locked / "new")):
        out = tmp_path / f"out{i}"
        res = run(*QUICK, "-O", str(out), "-C", f"disk:{cache}")
        assert res.returncode == 2, res.stderr
        assert "cache folder" in one_line(res.stderr, "error:")
        assert_valid_submission(out)  # the fallback attempts were written before the cache opened


@pytest.mark.parametrize("damage", ["garbage", "pages"])
def test_damaged_cache_db_is_quarantined(tmp_path, damage):
    cache = tmp_path / "cache"
    assert run(*QUICK, "-O", str(tmp_path / "first"), "-C", f"disk:{cache}").returncode == 0
    db = cache / "cache.db"
    if damage == "garbage":
        db.write_bytes(os.urandom(50_000))
    else:
        with open(db, "r+b") as f:  # keep the header, wreck the pages after it
            f.seek(4096)
            f.write(b"\xff" * 8192)
    res = run(*QUICK, "-O", str(tmp_path / "out"), "-C", f"disk:{cache}")
    assert res.returncode == 0, res.stderr
    line = one_line(res.stderr, "is damaged")
    assert line.startswith("warning:") and "moved to cache.db.corrupt-" in line
    assert list(cache.glob("cache.db.corrupt-*")), "the damaged database is kept for inspection"
    assert_valid_submission(tmp_path / "out")


def test_deeply_nested_json_is_a_usage_error(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000 + "]" * 200_000)
    res = run(*QUICK, "-d", str(deep), "-O", str(tmp_path / "o"), "-C", f"disk:{tmp_path / 'c'}")
    assert res.returncode == 2
    assert "nested too deeply" in one_line(res.stderr, "error:")
    scored = subprocess.run([sys.executable, "-m", "pipeline", "score", str(deep), "-d", "arc1-train"],
                            cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=60)
    assert scored.returncode == 2
    assert "RecursionError" in one_line(scored.stderr, "error:")


@pytest.mark.parametrize("timeout", ["0", "-1", "nan"])
def test_non_positive_validation_timeout_is_a_usage_error(tmp_path, timeout):
    res = run(*QUICK, "-t", timeout, "-O", str(tmp_path / "o"), "-C", f"disk:{tmp_path / 'c'}")
    assert res.returncode == 2
    assert "-t/--timeout" in one_line(res.stderr, "error:")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("content", [{}, {"bad": {"train": [], "test": [{"input": [[1]]}]}}])
def test_a_dataset_without_a_valid_task_exits_2(tmp_path, content):
    path = tmp_path / "challenges.json"
    path.write_text(json.dumps(content))
    res = run(*QUICK, "-d", str(path), "-O", str(tmp_path / "o"), "-C", f"disk:{tmp_path / 'c'}")
    assert res.returncode == 2
    assert "no valid task found" in one_line(res.stderr, "error:")


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupt_exits_128_plus_signal_and_is_recorded(tmp_path, signum, code):
    out = tmp_path / "o"
    proc = subprocess.Popen([sys.executable, "-m", "pipeline", "run", "-c", "80", "-D", "2", "-m", "-w", "1",
                             "-O", str(out), "-C", f"disk:{tmp_path / 'c'}"], cwd=ROOT, env=ENV,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (out / "report.json").exists():
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.1)
    time.sleep(1.0)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert "Traceback" not in err
    one_line(err, "interrupted by " + signal.Signals(signum).name)
    report = json.loads((out / "report.json").read_text())
    assert report["run"]["interrupted"] == signal.Signals(signum).name
    assert report["run"]["truncated"] is True
    assert_valid_submission(out, count=80)


def test_unreachable_redis_is_said_in_one_line(tmp_path):
    from conftest_cache import free_port

    url = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    res = run(*QUICK, "-O", str(tmp_path / "o"), "-C", url, "--local-cache", str(tmp_path / "local"))
    assert res.returncode == 0, res.stderr
    line = one_line(res.stderr, "is unreachable")
    assert line.startswith("warning: Redis redis://127.0.0.1") and "nothing is shared" in line
    assert_valid_submission(tmp_path / "o")


def test_run_card_resolves_relative_paths_against_the_callers_folder(tmp_path):
    tasks, _ = load_tasks("arc1-train", 2)
    data = {t.id: {"train": [{"input": i.tolist(), "output": o.tolist()}
                             for i, o in zip(t.train_inputs, t.train_outputs)],
                   "test": [{"input": i.tolist()} for i in t.test_inputs]} for t in tasks}
    (tmp_path / "chal.json").write_text(json.dumps(data))
    res = card("-d", "chal.json", "-O", "rel_out", "-C", "disk:rel_cache", "-D", "1", "-m", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert f"outputs in {tmp_path / 'rel_out'}" in res.stderr
    assert (tmp_path / "rel_cache" / "cache.db").exists()
    assert_valid_submission(tmp_path / "rel_out")
    assert not (ROOT / "rel_out").exists() and not (ROOT / "rel_cache").exists()
