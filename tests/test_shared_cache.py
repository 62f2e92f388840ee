"""A shared cache is untrusted input: values planted in a real Redis change neither what runs nor
what is submitted; signing keeps well-formed forgeries out; results depend on the run's own
settings only; a killed instance's tasks are taken over within 10 s. Real runs, real Redis."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis as redis_py

from cache import codec
from conftest_cache import redis_server  # noqa: F401  (fixture)
from pipeline.finish.inline import solver_id
from pipeline.run.score import validate_submission
from pipeline.run.tasks import load_tasks

ROOT = Path(__file__).resolve().parent.parent
COUNT = 4
MARK = "planted-code-ran"


def env_with(key: str | None) -> dict:
    """The environment of a run: PYTHONPATH, and the signing key when given."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("ARCBATT_CACHE_KEY", None)
    if key:
        env["ARCBATT_CACHE_KEY"] = key
    return env


def run(out: Path, cache_url: str, local: Path | None, *extra, key=None, count=COUNT, cwd=ROOT):
    """One real run; returns the CompletedProcess (asserted to exit 0)."""
    cmd = [sys.executable, "-m", "pipeline", "run", "-c", str(count), "-D", "1", "-m", "-w", "1",
           "-O", str(out), "-C", cache_url, *extra]
    if local is not None:
        cmd += ["--local-cache", str(local)]
    res = subprocess.run(cmd, cwd=cwd, env=env_with(key), capture_output=True, text=True, timeout=180)
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    return res


def stored_keys(server) -> dict:
    """Every arcbatt key in the server by namespace."""
    keys: dict = {}
    for raw in server.client().scan_iter(match=b"arcbatt:*"):
        parts = codec.parse_key(raw)
        keys.setdefault(parts.ns, []).append(raw)
    return keys


HOSTILE_SOURCE = f"import os\nos.system('touch {MARK}')\ndef solve(I):\n    return I\n"
CALLING_OS = "def solve(I):\n    O = system('touch " + MARK + "')\n    return O\n"
WELL_FORMED = "def solve(I):\n    O = rot90(I)\n    return O\n"


def forged(ns: str, n_tests: int, malformed: bool) -> object:
    """A value an attacker could write under a key of namespace ``ns``."""
    seven = [[7]]
    if ns == "task":
        if malformed:
            return {"status": "solved", "program": HOSTILE_SOURCE, "train_fit": 1.0, "seconds": 0.0,
                    "attempts": b"\x00" * 8}
        return {"status": "solved", "program": WELL_FORMED, "train_fit": 1.0, "seconds": 0.0,
                "attempts": [{"attempt_1": seven, "attempt_2": seven}] * n_tests}
    if ns == "store":
        return [{"id": "x", "source": HOSTILE_SOURCE, "train_fit": 1.0, "size": 0, "seconds": 0.0,
                 "test_outputs": [seven]},
                {"id": solver_id(CALLING_OS), "source": CALLING_OS, "train_fit": 1.0, "size": 0,
                 "seconds": 0.0, "test_outputs": [seven]},
                {"id": solver_id(WELL_FORMED), "source": WELL_FORMED, "train_fit": 1.0, "size": 0,
                 "seconds": 0.0, "test_outputs": [seven] * n_tests}]
    if ns == "valid":
        return {"status": "ok", "error": None, "train_fit": 1.0, "test_outputs": [seven] * n_tests,
                "seconds": 0.0}
    return {"source": HOSTILE_SOURCE, "id": "x", "size": 1}


def plant(server, malformed: bool) -> int:
    """Overwrite every task, store and valid value and add inline values; return how many."""
    client = server.client()
    n_tests = 1  # the first arc1-train tasks have one test input each
    planted = 0
    keys = stored_keys(server)
    for ns in ("task", "store", "valid"):
        for raw in keys.get(ns, []):
            client.set(raw, codec.encode(forged(ns, n_tests, malformed)))
            planted += 1
    fingerprint = codec.parse_key(keys["task"][0]).fingerprint
    for i in range(5):
        client.set(codec.full_key(fingerprint, "inline", f"k{i}"), codec.encode(forged("inline", 1, True)))
    return planted


def submission(out: Path) -> dict:
    """The run's submission, checked to be valid and complete."""
    data = json.loads((out / "submission.json").read_text())
    tasks, _ = load_tasks("arc1-train", COUNT)
    assert validate_submission(data, tasks) == []
    return data


@pytest.mark.redis
def test_planted_code_and_malformed_records_change_nothing(tmp_path, redis_server):  # noqa: F811
    run(tmp_path / "first", redis_server.url, tmp_path / "local1")
    expected = submission(tmp_path / "first")
    assert plant(redis_server, malformed=True) >= COUNT
    res = run(tmp_path / "second", redis_server.url, tmp_path / "local2", "-b", cwd=tmp_path)
    assert submission(tmp_path / "second") == expected
    assert not (tmp_path / MARK).exists() and not (ROOT / MARK).exists()
    exported = (tmp_path / "second" / "best_solvers.py").read_text()
    assert MARK not in exported and "system" not in exported
    warned = [line for line in res.stderr.splitlines() if "malformed 'task' record" in line]
    assert len(warned) >= 1 and all(line.startswith("warning: ") for line in warned)
    report = json.loads((tmp_path / "second" / "report.json").read_text())
    assert report["run"]["searched_tasks"] == COUNT  # every planted record was a miss


@pytest.mark.redis
def test_with_a_signing_key_well_formed_forgeries_are_misses(tmp_path, redis_server):  # noqa: F811
    key = "a shared secret"
    run(tmp_path / "first", redis_server.url, tmp_path / "local1", key=key)
    expected = submission(tmp_path / "first")
    # Signed values are shared: a second machine with the key reuses every task.
    run(tmp_path / "shared", redis_server.url, tmp_path / "local2", key=key)
    assert json.loads((tmp_path / "shared" / "report.json").read_text())["run"]["searched_tasks"] == 0
    plant(redis_server, malformed=False)
    res = run(tmp_path / "second", redis_server.url, tmp_path / "local3", key=key, cwd=tmp_path)
    assert submission(tmp_path / "second") == expected
    assert "wrong signature" in res.stderr
    assert json.loads((tmp_path / "second" / "report.json").read_text())["run"]["searched_tasks"] == COUNT


def _challenges(tmp_path: Path, start: int, stop: int) -> Path:
    """A challenges file of arc1-train tasks start..stop-1."""
    tasks, _ = load_tasks("arc1-train", stop)
    data = {t.id: {"train": [{"input": i.tolist(), "output": o.tolist()}
                             for i, o in zip(t.train_inputs, t.train_outputs)],
                   "test": [{"input": i.tolist()} for i in t.test_inputs]} for t in tasks[start:stop]}
    path = tmp_path / "challenges.json"
    path.write_text(json.dumps(data))
    return path


def test_depth_1_after_depth_2_on_one_cache_gives_the_solo_depth_1_submission(tmp_path):
    # arc1-train tasks 28..40 hold two that depth 2 solves and depth 1 does not.
    data = str(_challenges(tmp_path, 28, 41))
    common = ["-c", "0", "-d", data, "-m", "-w", "1"]

    def go(out, cache, depth):
        res = subprocess.run([sys.executable, "-m", "pipeline", "run", *common, "-D", str(depth), "-O",
                              str(tmp_path / out), "-C", f"disk:{tmp_path / cache}"], cwd=ROOT,
                             env=env_with(None), capture_output=True, text=True, timeout=180)
        assert res.returncode == 0, res.stderr
        return (json.loads((tmp_path / out / "submission.json").read_text()),
                json.loads((tmp_path / out / "report.json").read_text()))

    solo, solo_report = go("solo", "fresh", 1)
    deep, deep_report = go("deep", "shared", 2)
    after, after_report = go("after", "shared", 1)
    solved = lambda report: sum(t["status"] == "solved" for t in report["tasks"])  # noqa: E731
    assert solved(deep_report) > solved(solo_report)  # the case is real: depth 2 finds more
    assert after == solo
    assert [(t["id"], t["status"], t["program"]) for t in after_report["tasks"]] == \
        [(t["id"], t["status"], t["program"]) for t in solo_report["tasks"]]


@pytest.mark.redis
def test_a_killed_instances_tasks_are_taken_over_within_10_s(tmp_path, redis_server):  # noqa: F811
    """Default lease settings: a kill -9 leaves leases that expire within 10 s, then a second
    instance takes every task over."""
    args = ["-c", "16", "-D", "2", "-m", "-w", "1", "-C", redis_server.url, "--chunk", "16"]
    first = subprocess.Popen([sys.executable, "-m", "pipeline", "run", *args, "-O", str(tmp_path / "dead"),
                              "--local-cache", str(tmp_path / "local1")], cwd=ROOT, env=env_with(None),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    client: redis_py.Redis = redis_server.client()
    deadline = time.monotonic() + 60
    while not list(client.scan_iter(match=b"arcbatt:*:lease:*")):
        assert time.monotonic() < deadline and first.poll() is None
        time.sleep(0.05)
    time.sleep(1.0)  # let it hold them through a heartbeat
    os.killpg(first.pid, signal.SIGKILL)
    first.wait(timeout=10)
    killed = time.monotonic()
    assert list(client.scan_iter(match=b"arcbatt:*:lease:*")), "the dead instance's leases are still there"
    second = subprocess.Popen([sys.executable, "-m", "pipeline", "run", *args, "-O", str(tmp_path / "alive"),
                               "--local-cache", str(tmp_path / "local2")], cwd=ROOT, env=env_with(None),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    taken = None
    while second.poll() is None and taken is None:
        held = {client.get(k) for k in client.scan_iter(match=b"arcbatt:*:lease:*")}
        owners = {codec.decode(v).value.split(":")[1] for v in held if v is not None}
        if owners == {str(second.pid)}:
            taken = time.monotonic() - killed
        time.sleep(0.05)
    _, err = second.communicate(timeout=240)
    assert second.returncode == 0, err
    report = json.loads((tmp_path / "alive" / "report.json").read_text())
    assert report["run"]["searched_tasks"] == 16
    assert taken is not None and taken < 10.0, taken


ACL_RULES = "on >s3cret ~arcbatt:* +@read +@write +@keyspace +@scripting +@connection -@dangerous"  # the README's


@pytest.mark.redis
def test_the_documented_acl_user_is_enough_for_a_run(tmp_path, redis_server):  # noqa: F811
    redis_server.client().execute_command("ACL", "SETUSER", "arcbatt", *ACL_RULES.split())
    url = redis_server.url.replace("redis://", "redis://arcbatt:s3cret@")
    res = run(tmp_path / "o", url, tmp_path / "local", "-i")
    assert "unreachable" not in res.stderr and "unavailable" not in res.stderr, res.stderr
    assert "s3cret" not in res.stderr and "s3cret" not in (tmp_path / "o" / "report.json").read_text()
    assert len(stored_keys(redis_server).get("task", [])) == COUNT
    submission(tmp_path / "o")
    wrong = redis_server.url.replace("redis://", "redis://arcbatt:wrong@")
    res = run(tmp_path / "o2", wrong, tmp_path / "local2")
    assert "is unreachable" in res.stderr  # a refused login is said at the start like an outage
