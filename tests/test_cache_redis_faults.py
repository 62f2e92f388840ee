"""The layered cache under Redis faults: killed, restarted, hung (SIGSTOP), never started."""

from __future__ import annotations

import os
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from conftest_cache import FINGERPRINT, free_port, redis_server  # noqa: E402,F401

from cache import LeaseManager, open_cache  # noqa: E402
from cache.breaker import ALLOW, CLOSED, DENY, HALF_OPEN, OPEN, PROBE, CircuitBreaker  # noqa: E402

pytestmark = pytest.mark.redis


def _stored(cache, ns, keys):
    return [cache.stored_key(ns, k) for k in keys]


def test_breaker_states_and_backoff():
    now = [0.0]
    breaker = CircuitBreaker(cooldown=2.0, max_cooldown=5.0, clock=lambda: now[0])
    assert breaker.admit() == ALLOW
    assert breaker.failure() is True and breaker.state == OPEN
    assert breaker.admit() == DENY
    now[0] = 2.0
    assert breaker.admit() == PROBE and breaker.state == HALF_OPEN
    assert breaker.admit() == DENY  # one probe at a time
    breaker.failure()  # failed probe: cooldown doubles to 4
    now[0] = 5.9
    assert breaker.admit() == DENY
    now[0] = 6.0
    assert breaker.admit() == PROBE
    breaker.failure()  # cooldown capped at 5
    now[0] = 11.0
    assert breaker.admit() == PROBE
    breaker.success()
    assert breaker.state == CLOSED and breaker.admit() == ALLOW
    assert breaker.trips == 1 and breaker.failures == 3


def test_redis_killed_and_restarted_loses_nothing(redis_server, tmp_path):
    local = str(tmp_path / "local")
    cache = open_cache(redis_server.url, FINGERPRINT, local_dir=local, cooldown=0.3)
    before = {f"b{i}": i for i in range(20)}
    cache.set_many("task", before)
    assert cache.stats()["remote"]["backlog"] == 0

    redis_server.kill()
    during = {f"d{i}": {"i": i} for i in range(50)}
    started = time.monotonic()
    cache.set_many("task", dict(list(during.items())[:25]))
    for key, value in list(during.items())[25:]:
        cache.set("task", key, value)
    cache.delete("task", "b0")
    assert cache.add("valid", "solo", "me") is True
    assert cache.get_many("task", list(before)) == {k: v for k, v in before.items() if k != "b0"}
    assert cache.get("task", "d3") == {"i": 3}
    assert time.monotonic() - started < 3.0
    stats = cache.stats()["remote"]
    assert stats["state"] != "closed" and stats["backlog"] == 50 + 1 + 1

    redis_server.start()  # same port, empty (no persistence)
    published = cache.flush_backlog()
    assert published == 52 and cache.pending_backlog() == 0
    raw = redis_server.client()
    assert all(raw.exists(k) for k in _stored(cache, "task", during))
    assert raw.exists(cache.stored_key("valid", "solo"))
    assert not raw.exists(cache.stored_key("task", "b0"))
    assert all(raw.ttl(k) > 0 for k in raw.scan_iter("arcbatt:*"))
    cache.close()

    # another machine (its own local folder) now reads the outage writes through Redis
    with open_cache(redis_server.url, FINGERPRINT, local_dir=str(tmp_path / "other")) as other:
        assert other.get_many("task", list(during)) == during
        assert other.add("valid", "solo", "someone else") is False


def test_backlog_is_published_automatically_after_restart(redis_server, tmp_path):
    cache = open_cache(redis_server.url, FINGERPRINT, local_dir=str(tmp_path), cooldown=0.2)
    redis_server.kill()
    cache.set("task", "x", 1)
    assert cache.pending_backlog() == 1
    redis_server.start()
    time.sleep(0.3)
    cache.get("task", "never-written")  # next call past the cooldown probes and publishes
    assert cache.pending_backlog() == 0
    assert redis_server.client().exists(cache.stored_key("task", "x"))
    assert cache.stats()["remote"]["state"] == "closed"
    cache.close()


def test_backlog_survives_the_process_and_is_published_by_the_next(redis_server, tmp_path):
    local = str(tmp_path)
    first = open_cache(redis_server.url, FINGERPRINT, local_dir=local)
    redis_server.kill()
    first.set_many("store", {f"s{i}": i for i in range(10)})
    first.close()  # tries to publish at close: Redis is down, the backlog stays on disk
    redis_server.start()
    second = open_cache(redis_server.url, FINGERPRINT, local_dir=local)
    assert second.pending_backlog() == 10
    second.get("store", "s0")  # a hit on disk does not need Redis ...
    second.get("store", "absent")  # ... a miss does: the backlog goes first
    assert second.pending_backlog() == 0
    raw = redis_server.client()
    assert all(raw.exists(k) for k in _stored(second, "store", [f"s{i}" for i in range(10)]))
    second.close()


def test_close_publishes_the_backlog(redis_server, tmp_path):
    cache = open_cache(redis_server.url, FINGERPRINT, local_dir=str(tmp_path), cooldown=60)
    redis_server.kill()
    cache.set("task", "late", "v")
    redis_server.start()
    cache.close()  # cooldown not over, but close publishes
    assert redis_server.client().exists(cache.stored_key("task", "late"))


def test_hung_redis_does_not_stall(redis_server, tmp_path):
    cache = open_cache(redis_server.url, FINGERPRINT, local_dir=str(tmp_path))
    cache.set_many("task", {f"k{i}": i for i in range(10)})
    redis_server.pause()
    try:
        started = time.monotonic()
        for i in range(50):
            op = i % 5
            if op == 0:
                cache.set("task", f"h{i}", i)
            elif op == 1:
                assert cache.get("task", f"k{i % 10}") == i % 10
            elif op == 2:
                cache.get("task", f"missing{i}")  # a miss would ask Redis
            elif op == 3:
                cache.set_many("inline", {f"m{i}": i, f"n{i}": i})
            else:
                assert cache.add("valid", f"a{i}", i) is True
        elapsed = time.monotonic() - started
        assert elapsed < 3.0, f"50 operations took {elapsed:.2f}s against a hung Redis"
        assert cache.stats()["remote"]["state"] != "closed"
    finally:
        redis_server.resume()
    assert cache.flush_backlog() > 0
    assert cache.pending_backlog() == 0
    raw = redis_server.client()
    assert all(raw.exists(cache.stored_key("task", f"h{i}")) for i in range(0, 50, 5))
    assert all(raw.exists(cache.stored_key("valid", f"a{i}")) for i in range(4, 50, 5))
    cache.close()


def test_redis_never_started(tmp_path):
    url = f"redis://127.0.0.1:{free_port()}/0"
    started = time.monotonic()
    with open_cache(url, FINGERPRINT, local_dir=str(tmp_path)) as cache:
        for i in range(100):
            cache.set("task", f"k{i}", i)
            assert cache.get("task", f"k{i}") == i
            assert cache.get("task", f"none{i}") is None
        lease = LeaseManager(cache, owner="solo", ttl=5)
        assert lease.try_acquire("job") and lease.renew("job") and lease.release("job")
        cache.clear()
        assert cache.pending_backlog() == 0
    assert time.monotonic() - started < 5.0


def test_lease_taken_during_outage_is_published_with_nx(redis_server, tmp_path):
    cache = open_cache(redis_server.url, FINGERPRINT, local_dir=str(tmp_path / "a"))
    redis_server.kill()
    mine = LeaseManager(cache, owner="outage-holder", ttl=30)
    assert mine.try_acquire("job") and mine.try_acquire("other")
    assert mine.renew("job")
    assert mine.release("other")
    redis_server.start()
    # meanwhile a second machine took "other" (free in the fresh Redis)
    with open_cache(redis_server.url, FINGERPRINT, local_dir=str(tmp_path / "b")) as remote:
        assert LeaseManager(remote, owner="machine-b").try_acquire("other")
    cache.flush_backlog()
    with open_cache(redis_server.url, FINGERPRINT, local_dir=str(tmp_path / "c")) as third:
        leases = LeaseManager(third, owner="machine-c", ttl=30)
        assert leases.holder("job") == "outage-holder"
        assert not leases.try_acquire("job")
        assert leases.holder("other") == "machine-b"  # the outage release did not delete it
    cache.close()


def test_lease_renew_retakes_a_lease_lost_by_a_redis_restart(redis_server, tmp_path):
    cache = open_cache(redis_server.url, FINGERPRINT, local_dir=str(tmp_path / "a"), cooldown=0.1)
    mine = LeaseManager(cache, owner="holder", ttl=30)
    assert mine.try_acquire("job")
    redis_server.kill()
    redis_server.start()  # the lease is gone from Redis
    time.sleep(0.15)
    assert mine.renew("job")
    with open_cache(redis_server.url, FINGERPRINT, local_dir=str(tmp_path / "b")) as other:
        assert LeaseManager(other, owner="intruder").holder("job") == "holder"
    cache.close()


def test_lease_released_on_one_machine_is_free_on_another(redis_server, tmp_path):
    with open_cache(redis_server.url, FINGERPRINT, local_dir=str(tmp_path / "a")) as a, \
            open_cache(redis_server.url, FINGERPRINT, local_dir=str(tmp_path / "b")) as b:
        holder = LeaseManager(a, owner="machine-a", ttl=600)
        other = LeaseManager(b, owner="machine-b", ttl=600)
        assert holder.try_acquire("job")
        assert other.holder("job") == "machine-a"  # read through Redis, not mirrored locally
        assert not other.try_acquire("job")
        assert holder.release("job")
        assert other.try_acquire("job")
