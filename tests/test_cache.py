"""Behaviour of the cache backends, leases and CLI, against real servers and real processes."""

from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import threading
import time
import traceback
import warnings
from pathlib import Path

import diskcache
import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, os.path.dirname(__file__))
from conftest_cache import (  # noqa: E402,F401  (fixtures are used by name)
    FINGERPRINT,
    REPO,
    any_cache,
    backend,
    redis_server,
)

from cache import (  # noqa: E402
    CacheCorruptionWarning,
    CacheURLError,
    DiskCache,
    LayeredCache,
    LeaseManager,
    open_cache,
    parse_cache_url,
    parse_duration,
)
from cache import codec  # noqa: E402

FORK = mp.get_context("fork")


# -- one suite, both backends ----------------------------------------------------------------


def test_get_set_roundtrip(any_cache):
    value = {"grid": [[0, 1], [2, 3]], "score": 0.75, "ok": True, "name": "solve", "none": None}
    assert any_cache.get("task", "a") is None
    any_cache.set("task", "a", value)
    assert any_cache.get("task", "a") == value
    any_cache.set("task", "a", [1, 2, 3])
    assert any_cache.get("task", "a") == [1, 2, 3]


def test_namespaces_and_fingerprints_are_separate(any_cache, backend):
    kind, url, local_dir = backend
    any_cache.set("task", "k", 1)
    any_cache.set("inline", "k", 2)
    assert any_cache.get("task", "k") == 1 and any_cache.get("inline", "k") == 2
    with open_cache(url, "otherfp", local_dir=local_dir) as other:
        assert other.get("task", "k") is None
        other.set("task", "k", 3)
    assert any_cache.get("task", "k") == 1


def test_many(any_cache):
    mapping = {f"k{i}": {"i": i, "sq": [i] * i} for i in range(150)}
    any_cache.set_many("store", mapping)
    got = any_cache.get_many("store", [f"k{i}" for i in range(0, 300, 2)])
    assert got == {f"k{i}": mapping[f"k{i}"] for i in range(0, 150, 2)}
    assert any_cache.get_many("store", []) == {}


def test_large_value(any_cache):
    big = {"rows": [list(range(1000)) for _ in range(60)]}  # > 32 KiB: diskcache uses a file
    any_cache.set("store", "big", big)
    assert any_cache.get("store", "big") == big


def test_add_is_set_if_absent(any_cache):
    assert any_cache.add("valid", "x", "first") is True
    assert any_cache.add("valid", "x", "second") is False
    assert any_cache.get("valid", "x") == "first"


def test_delete(any_cache):
    any_cache.set("task", "gone", 1)
    any_cache.delete("task", "gone")
    any_cache.delete("task", "never-there")
    assert any_cache.get("task", "gone") is None
    assert any_cache.add("task", "gone", 2) is True


def test_ttl_expires(any_cache):
    any_cache.set("task", "short", "v", ttl=0.3)
    any_cache.set("task", "long", "v")
    assert any_cache.add("task", "lease-like", "v", ttl=0.3) is True
    assert any_cache.get("task", "short") == "v"
    time.sleep(0.45)
    assert any_cache.get("task", "short") is None
    assert any_cache.get("task", "long") == "v"
    assert any_cache.add("task", "lease-like", "w", ttl=5) is True


@pytest.mark.redis
def test_redis_keys_carry_ttl_and_fingerprint(redis_server, tmp_path):
    with open_cache(redis_server.url, FINGERPRINT, local_dir=str(tmp_path)) as cache:
        cache.set("task", "a", 1)
        cache.set("task", "b", 1, ttl=60)
        raw = redis_server.client()
        key_a = f"arcbatt:{codec.FORMAT}:{FINGERPRINT}:task:a"
        assert raw.exists(key_a)
        assert 29 * 86400 < raw.ttl(key_a) <= 30 * 86400
        assert 0 < raw.ttl(f"arcbatt:{codec.FORMAT}:{FINGERPRINT}:task:b") <= 60
        assert all(raw.ttl(k) > 0 for k in raw.scan_iter("*"))


def test_stats(any_cache):
    any_cache.set("task", "a", 1)
    any_cache.get("task", "a")
    any_cache.get("task", "b")
    any_cache.get_many("inline", ["a", "b", "c"])
    stats = any_cache.stats()
    assert stats["hits"] == 1 and stats["misses"] == 4
    assert stats["hit_rate"] == pytest.approx(0.2)
    assert stats["namespaces"] == {
        "inline": {"hits": 0, "misses": 3},
        "task": {"hits": 1, "misses": 1},
    }


def test_clear_removes_only_arcbatt_entries(any_cache, backend):
    any_cache.set("task", "a", 1)
    with open_cache(backend[1], "otherfp", local_dir=backend[2]) as other:
        other.set("task", "b", 2)
    any_cache.clear()
    assert any_cache.get("task", "a") is None
    with open_cache(backend[1], "otherfp", local_dir=backend[2]) as other:
        assert other.get("task", "b") is None


@pytest.mark.redis
def test_describe_and_urls(tmp_path, redis_server):
    with open_cache(f"disk:{tmp_path / 'd'}", FINGERPRINT) as disk:
        assert isinstance(disk, DiskCache)
        assert disk.describe() == f"disk:{tmp_path / 'd'}"
        assert (tmp_path / "d").stat().st_mode & 0o777 == 0o700
    with open_cache(redis_server.url, FINGERPRINT, local_dir=str(tmp_path / "l")) as layered:
        assert isinstance(layered, LayeredCache)
        assert layered.describe() == f"{redis_server.url}+disk:{tmp_path / 'l'}"
    assert parse_cache_url(None).path == ".cache"
    assert parse_cache_url("disk:").path == ".cache"
    assert parse_cache_url("redis://h/").redis_url == "redis://h:6379/"
    for bad in ["ftp://x", "redis://", "redis://h:99999/0", "redis://h:1/x", "cache"]:
        with pytest.raises(CacheURLError):
            parse_cache_url(bad)


def test_bad_names_and_values(tmp_path):
    with pytest.raises(ValueError):
        open_cache(f"disk:{tmp_path}", "bad:fingerprint")
    with open_cache(f"disk:{tmp_path}", FINGERPRINT) as cache:
        with pytest.raises(ValueError):
            cache.set("bad ns", "k", 1)
        with pytest.raises(TypeError):
            cache.set("task", "k", {1, 2})
        with pytest.raises(TypeError):
            cache.set("task", 5, 1)
        with pytest.raises(ValueError):
            cache.set("task", "k", 1, ttl=0)


def test_numpy_values_become_lists(tmp_path):
    np = pytest.importorskip("numpy")
    with open_cache(f"disk:{tmp_path}", FINGERPRINT) as cache:
        cache.set("task", "g", {"grid": np.arange(6).reshape(2, 3), "n": np.int64(4)})
        assert cache.get("task", "g") == {"grid": [[0, 1, 2], [3, 4, 5]], "n": 4}


def test_durations():
    assert parse_duration("90s") == 90
    assert parse_duration("20m") == 1200
    assert parse_duration("8h") == 8 * 3600
    assert parse_duration("2d") == 2 * 86400
    assert parse_duration("1.5h") == 5400
    for bad in ["", "5", "5x", "-3s", "h"]:
        with pytest.raises(ValueError):
            parse_duration(bad)


# -- corrupted and foreign values ------------------------------------------------------------


class _Exploit:
    """Unpickling this would create a marker file: proof that pickle ran."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (Path(self.marker),))


def _foreign_values(marker: str) -> list[object]:
    return [
        b"\xc1\xc1 not msgpack",
        msgpack.packb({"x": 1}),  # msgpack, but not our envelope
        msgpack.packb({"fmt": 999, "t": 0.0, "v": 1}),  # another format
        _Exploit(marker),  # diskcache would store this pickled
    ]


def test_corrupted_disk_value_is_a_miss_with_warning(tmp_path):
    marker = str(tmp_path / "pwned")
    path = tmp_path / "c"
    with open_cache(f"disk:{path}", FINGERPRINT) as cache:
        raw = diskcache.Cache(str(path), eviction_policy="none")
        for i, foreign in enumerate(_foreign_values(marker)):
            raw.set(cache.stored_key("task", f"k{i}"), foreign)
        raw.close()
        for i in range(4):
            with pytest.warns(CacheCorruptionWarning):
                assert cache.get("task", f"k{i}") is None
        assert cache.stats()["corrupt"] == 4
        assert not os.path.exists(marker), "a pickled value was unpickled"
        # an unreadable entry does not block add, and is replaced
        assert cache.add("task", "k0", "fresh") is True
        assert cache.get("task", "k0") == "fresh"


@pytest.mark.redis
def test_corrupted_redis_value_is_a_miss_with_warning(redis_server, tmp_path):
    with open_cache(redis_server.url, FINGERPRINT, local_dir=str(tmp_path / "l")) as cache:
        raw = redis_server.client()
        raw.set(cache.stored_key("task", "garbage"), b"\xc1\xc1")
        raw.set(cache.stored_key("task", "foreign"), msgpack.packb([1, 2, 3]))
        raw.set(cache.stored_key("task", "pickle"), pickle.dumps({"a": 1}))
        for key in ["garbage", "foreign", "pickle"]:
            with pytest.warns(CacheCorruptionWarning):
                assert cache.get("task", key) is None
        with pytest.warns(CacheCorruptionWarning):
            assert cache.get_many("task", ["garbage", "foreign", "nothing"]) == {}


@pytest.mark.redis
def test_corrupted_everywhere_and_repair_from_redis(redis_server, tmp_path):
    local = tmp_path / "l"
    with open_cache(redis_server.url, FINGERPRINT, local_dir=str(local)) as cache:
        stored_bad = cache.stored_key("task", "bad")
        stored_fix = cache.stored_key("task", "fix")
        cache.set("task", "fix", "good value")
        raw = diskcache.Cache(str(local), eviction_policy="none")
        raw.set(stored_bad, b"\x00junk")
        raw.set(stored_fix, b"\x00junk")
        redis_server.client().set(stored_bad, b"\x00junk")
        with pytest.warns(CacheCorruptionWarning):
            assert cache.get("task", "bad") is None
        with pytest.warns(CacheCorruptionWarning):  # local copy broken: Redis serves and repairs
            assert cache.get("task", "fix") == "good value"
        assert codec.decode(raw.get(stored_fix)).value == "good value"
        raw.close()
        with warnings.catch_warnings():
            warnings.simplefilter("error", CacheCorruptionWarning)
            assert cache.get("task", "fix") == "good value"


# -- many processes --------------------------------------------------------------------------

N_PROCS = 8
SHARED_KEYS = [f"key{i}" for i in range(16)]
CLAIM_KEYS = [f"claim{i}" for i in range(40)]


def _payload(worker: int, key: str, rnd: int) -> dict:
    size = 9000 if int(key[3:]) % 4 == 0 else 200  # some values above 32 KiB (diskcache files)
    stamp = worker * 1000 + rnd
    return {"w": worker, "k": key, "r": rnd, "n": size, "data": [stamp] * size}


def _problem(key: str, value) -> str | None:
    if not isinstance(value, dict) or value.get("k") != key:
        return f"{key}: wrong or foreign value {str(value)[:80]}"
    data, stamp = value["data"], value["w"] * 1000 + value["r"]
    if len(data) != value["n"] or any(x != stamp for x in data):
        return f"{key}: torn value from worker {value['w']}"
    return None


def _hammer(url, local_dir, worker, rounds, start, results):
    problems, won = [], []
    try:
        cache = open_cache(url, FINGERPRINT, local_dir=local_dir)
        start.wait(10)
        for rnd in range(rounds):
            mine = SHARED_KEYS[worker % 4 :: 4]
            cache.set_many("conc", {k: _payload(worker, k, rnd) for k in mine})
            cache.set("conc", SHARED_KEYS[(worker + rnd) % len(SHARED_KEYS)],
                      _payload(worker, SHARED_KEYS[(worker + rnd) % len(SHARED_KEYS)], rnd))
            for key in SHARED_KEYS[:4]:
                value = cache.get("conc", key)
                if value is not None:
                    problems.append(_problem(key, value))
            for key, value in cache.get_many("conc", SHARED_KEYS).items():
                problems.append(_problem(key, value))
        won = [k for k in CLAIM_KEYS if cache.add("claim", k, worker)]
        cache.close()
    except Exception:
        problems.append(traceback.format_exc())
    results.put((worker, [p for p in problems if p], won))


@pytest.mark.slow
def test_eight_processes_share_keys_without_loss_or_tearing(backend):
    kind, url, local_dir = backend
    start, results = FORK.Event(), FORK.Queue()
    procs = [FORK.Process(target=_hammer, args=(url, local_dir, w, 4, start, results))
             for w in range(N_PROCS)]
    for proc in procs:
        proc.start()
    start.set()
    outcome = [results.get(timeout=60) for _ in procs]
    for proc in procs:
        proc.join(timeout=10)
        assert proc.exitcode == 0
    problems = [p for _, ps, _ in outcome for p in ps]
    assert problems == []
    winners = [k for _, _, won in outcome for k in won]
    assert sorted(winners) == sorted(CLAIM_KEYS), "each add must succeed exactly once"
    with open_cache(url, FINGERPRINT, local_dir=local_dir) as cache:
        final = cache.get_many("conc", SHARED_KEYS)
        assert set(final) == set(SHARED_KEYS)
        assert [p for k, v in final.items() if (p := _problem(k, v))] == []
        claims = cache.get_many("claim", CLAIM_KEYS)
        by_key = {k: w for w, _, won in outcome for k in won}
        assert claims == by_key


# -- leases ----------------------------------------------------------------------------------


def test_lease_acquire_renew_release(any_cache):
    alice = LeaseManager(any_cache, owner="alice", ttl=5)
    bob = LeaseManager(any_cache, owner="bob", ttl=5)
    assert alice.try_acquire("task-1")
    assert not bob.try_acquire("task-1")
    assert alice.try_acquire("task-1")  # re-taking our own lease renews it
    assert alice.holder("task-1") == "alice"
    assert alice.renew("task-1")
    assert not bob.renew("task-1")
    assert not bob.release("task-1")
    assert alice.holder("task-1") == "alice"
    assert alice.release("task-1")
    assert bob.try_acquire("task-1")
    assert alice.held() == set() and bob.held() == {"task-1"}
    assert not alice.renew("task-1")


def test_default_owner_is_host_pid_random(any_cache):
    owner = LeaseManager(any_cache).owner
    host, pid, rand = owner.rsplit(":", 2)
    assert pid == str(os.getpid()) and len(rand) == 8 and host


def test_lease_renewer_keeps_lease_alive(any_cache):
    with LeaseManager(any_cache, owner="keeper", ttl=0.6) as keeper:
        assert keeper.try_acquire("job")
        keeper.start_renewer(interval=0.15)
        time.sleep(1.5)
        assert not LeaseManager(any_cache, owner="thief", ttl=0.6).try_acquire("job")
    assert LeaseManager(any_cache, owner="next", ttl=0.6).try_acquire("job")  # released on exit


def test_lease_of_killed_process_expires(backend):
    kind, url, local_dir = backend
    script = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(REPO)!r})
        from cache import open_cache, LeaseManager
        cache = open_cache({url!r}, {FINGERPRINT!r}, local_dir={local_dir!r})
        assert LeaseManager(cache, owner="victim", ttl=1.0).try_acquire("job")
        print("acquired", flush=True)
        time.sleep(60)
    """)
    command = [sys.executable, "-c", script]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout.readline().strip() == "acquired"
            acquired_at = time.monotonic()
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
        finally:
            if proc.poll() is None:
                proc.kill()
    with open_cache(url, FINGERPRINT, local_dir=local_dir) as cache:
        heir = LeaseManager(cache, owner="heir", ttl=5)
        assert heir.holder("job") == "victim"
        assert not heir.try_acquire("job")
        deadline = acquired_at + 4.0
        while not heir.try_acquire("job"):
            assert time.monotonic() < deadline, "lease of a killed holder never expired"
            time.sleep(0.05)
        assert time.monotonic() - acquired_at >= 0.9
        assert heir.holder("job") == "heir"


LEASE_NAMES = [f"task-{i}" for i in range(20)]


def _race(url, local_dir, who, start, results):
    try:
        cache = open_cache(url, FINGERPRINT, local_dir=local_dir)
        manager = LeaseManager(cache, owner=f"racer-{who}", ttl=30)
        order = LEASE_NAMES if who == 0 else LEASE_NAMES[::-1]
        start.wait(10)
        results.put((who, [n for n in order if manager.try_acquire(n)]))
        cache.close()
    except Exception:
        results.put((who, traceback.format_exc()))


def test_two_processes_race_for_leases(backend):
    kind, url, local_dir = backend
    for attempt in range(3):  # fresh lease names per attempt are not needed: clear between
        start, results = FORK.Event(), FORK.Queue()
        procs = [FORK.Process(target=_race, args=(url, local_dir, who, start, results))
                 for who in (0, 1)]
        for proc in procs:
            proc.start()
        start.set()
        got = dict(results.get(timeout=30) for _ in procs)
        for proc in procs:
            proc.join(timeout=10)
        assert all(isinstance(v, list) for v in got.values()), got
        assert sorted(got[0] + got[1]) == sorted(LEASE_NAMES), got
        assert not set(got[0]) & set(got[1])
        with open_cache(url, FINGERPRINT, local_dir=local_dir) as cache:
            for name in got[0]:
                assert LeaseManager(cache, owner="x").holder(name) == "racer-0"
            cache.clear()


# -- CLI -------------------------------------------------------------------------------------


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "cache", *args], capture_output=True, text=True,
                          cwd=REPO, env=env, timeout=60)


def test_cli_stats_refresh_clear(backend):
    kind, url, local_dir = backend
    extra = ["--local-dir", local_dir] if local_dir else []
    old = time.time() - 3 * 3600
    with open_cache(url, FINGERPRINT, local_dir=local_dir) as cache:
        cache.set_many("task", {f"t{i}": i for i in range(5)})
        cache.set("inline", "i1", "src")
        cache._write({cache.stored_key("task", f"old{i}"): codec.encode(i, now=old)
                      for i in range(3)}, None)
    with open_cache(url, "otherfp", local_dir=local_dir) as cache:
        cache.set("valid", "v", 1)

    out = _cli("-C", url, *extra, "stats")
    assert out.returncode == 0, out.stderr
    assert "task" in out.stdout and "inline" in out.stdout and "valid" in out.stdout
    lines = {tuple(line.split()[:2]) for line in out.stdout.splitlines()}
    assert ("task", "8") in lines and ("inline", "1") in lines and ("valid", "1") in lines
    assert ("total", "10") in lines and "2 fingerprints" in out.stdout
    assert ("redis://" in out.stdout) == (kind == "layered")

    out = _cli("refresh", "-C", url, *extra, "--older-than", "2h")
    assert out.returncode == 0, out.stderr
    assert "deleted 3 entries" in out.stdout
    with open_cache(url, FINGERPRINT, local_dir=local_dir) as cache:
        assert cache.get_many("task", [f"old{i}" for i in range(3)]) == {}
        assert len(cache.get_many("task", [f"t{i}" for i in range(5)])) == 5

    out = _cli("-C", url, *extra, "clear")
    assert out.returncode == 0, out.stderr
    out = _cli("-C", url, *extra, "stats")
    assert ("total", "0") in {tuple(line.split()[:2]) for line in out.stdout.splitlines()}


@pytest.mark.redis
def test_cli_clear_spares_foreign_redis_keys(redis_server, tmp_path):
    raw = redis_server.client()
    raw.set("someone-else:key", b"keep")
    with open_cache(redis_server.url, FINGERPRINT, local_dir=str(tmp_path)) as cache:
        cache.set("task", "a", 1)
    out = _cli("-C", redis_server.url, "--local-dir", str(tmp_path), "clear")
    assert out.returncode == 0, out.stderr
    assert raw.get("someone-else:key") == b"keep"
    assert list(raw.scan_iter("arcbatt:*")) == []


def test_cli_bad_usage_exits_2(tmp_path):
    out = _cli("-C", "ftp://nowhere", "stats")
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1
    assert "unsupported cache URL" in out.stderr
    out = _cli("-C", f"disk:{tmp_path}", "refresh", "--older-than", "5 parsecs")
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1
    assert "bad duration" in out.stderr


def test_same_owner_string_reacquires_its_lease(any_cache):
    assert LeaseManager(any_cache, owner="node-1:worker-3", ttl=5).try_acquire("job")
    restarted = LeaseManager(any_cache, owner="node-1:worker-3", ttl=5)  # a restarted worker
    assert restarted.try_acquire("job") and restarted.held() == {"job"}
    assert not LeaseManager(any_cache, owner="node-2:worker-1", ttl=5).try_acquire("job")


def test_threads_share_one_instance(any_cache):
    errors = []

    def work(t: int) -> None:
        try:
            for i in range(30):
                any_cache.set("task", f"t{t}-{i}", {"t": t, "i": i})
                assert any_cache.get("task", f"t{t}-{i}") == {"t": t, "i": i}
                any_cache.add("claim", f"c{i}", t)
        except Exception as exc:  # collected: assertion errors in threads are otherwise lost
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    written = [f"t{t}-{i}" for t in range(8) for i in range(30)]
    assert len(any_cache.get_many("task", written)) == 240
    assert len(any_cache.get_many("claim", [f"c{i}" for i in range(30)])) == 30


# -- codec properties ------------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=5)
    | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None)
@given(JSON_VALUES)
def test_codec_roundtrip(value):
    entry = codec.decode(codec.encode(value, ttl=10, now=1000.0))
    assert entry == (value, 1000.0, 1010.0)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_codec_rejects_arbitrary_bytes_cleanly(raw):
    try:
        entry = codec.decode(raw)
    except codec.CorruptValue:
        return
    assert isinstance(entry, codec.Entry)  # only a well-formed envelope gets through
