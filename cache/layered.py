"""The layered cache: a local disk cache that is the truth, mirrored to a shared Redis.

Every write goes to the local disk and then to Redis; reads try the disk first, then Redis, and copy
Redis hits to the disk (except entries written with an explicit TTL, such as leases). Redis is an
accelerator shared by every instance and machine, never a dependency: when it fails (refused,
reset, timed out, hung), a circuit breaker stops calling it for a cooldown, operations go on from
the disk, and writes that could not be published wait in a persistent backlog that is published as
soon as Redis answers again (the next successful probe, :meth:`LayeredCache.flush_backlog`, or
:meth:`LayeredCache.close`). No Redis error reaches the caller.

``add`` asks Redis first (SET NX) while Redis is reachable, so it is atomic across machines; during
an outage it falls back to the local disk (atomic on this machine only) and is published with NX
later.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from . import codec
from .backlog import ADD, RELEASE, SYNC, Backlog
from .base import DEFAULT_REDIS_TTL, DEFAULT_SIZE_LIMIT, Cache
from .breaker import DENY, PROBE, CircuitBreaker
from .codec import Entry
from .disk import DiskStore, is_readable
from .redis_backend import REDIS_FAULTS, RedisStore, ttl_ms

log = logging.getLogger("arcbatt.cache")

BACKLOG_CHUNK = 500
"""Backlog entries published per pipeline round trip."""


class LayeredCache(Cache):
    """Local disk (truth) plus shared Redis (mirror), with a circuit breaker and a backlog."""

    def __init__(
        self,
        redis_url: str,
        fingerprint: str,
        *,
        local_dir: str = ".cache",
        size_limit: int = DEFAULT_SIZE_LIMIT,
        default_ttl: float = DEFAULT_REDIS_TTL,
        cooldown: float = 2.0,
        max_cooldown: float = 30.0,
        socket_timeout: float = 0.5,
        connect_timeout: float = 0.5,
        retries: int = 1,
    ) -> None:
        super().__init__(fingerprint)
        self.disk = DiskStore(local_dir, size_limit)
        self.remote = RedisStore(
            redis_url,
            socket_timeout=socket_timeout,
            connect_timeout=connect_timeout,
            retries=retries,
            default_ttl=default_ttl,
        )
        self.backlog = Backlog(self.disk.path)
        self.breaker = CircuitBreaker(cooldown, max_cooldown)
        self._flush_lock = threading.Lock()
        self._needs_flush = len(self.backlog) > 0  # left by an earlier process
        self._counter_lock = threading.Lock()
        self._remote_hits = 0
        self._published = 0
        self._where_disk = f"disk:{self.disk.path}"
        self._where_remote = self.remote.describe()

    # -- description and statistics ---------------------------------------------------------

    def describe(self) -> str:
        """Return ``redis://host:port/db+disk:/path`` (password masked)."""
        return f"{self._where_remote}+{self._where_disk}"

    def pending_backlog(self) -> int:
        """Return the number of keys waiting to be published to Redis (all local processes)."""
        return len(self.backlog)

    def stats(self) -> dict[str, Any]:
        """Hit/miss counters plus a ``remote`` section: breaker state, backlog, errors."""
        result = super().stats()
        result["disk_bytes"] = self.disk.volume()
        result["size_limit"] = self.disk.size_limit
        result["remote"] = {
            "url": self._where_remote,
            "state": self.breaker.state,
            "hits": self._remote_hits,
            "errors": self.breaker.failures,
            "outages": self.breaker.trips,
            "backlog": len(self.backlog),
            "published_from_backlog": self._published,
        }
        return result

    # -- breaker and backlog ----------------------------------------------------------------

    def _fault(self, exc: BaseException) -> None:
        """Record a Redis failure; log once per outage."""
        if self.breaker.failure():
            log.warning(
                "arcbatt cache: Redis %s unavailable (%s: %s); working from %s and queuing "
                "writes until it answers again",
                self._where_remote,
                type(exc).__name__,
                exc,
                self._where_disk,
            )

    def _remote_ok(self) -> bool:
        """Return True if this call may use Redis now (probing and publishing when due)."""
        verdict = self.breaker.admit()
        if verdict == DENY:
            return False
        if verdict == PROBE:
            return self._probe()
        if self._needs_flush:
            try:
                self._publish_backlog(wait=False)
            except REDIS_FAULTS as exc:
                self._fault(exc)
                return False
        return True

    def _probe(self) -> bool:
        """Holding the probe slot: PING, publish the backlog, close the breaker on success."""
        try:
            self.remote.ping()
            self._publish_backlog(wait=True)
        except REDIS_FAULTS as exc:
            self._fault(exc)
            return False
        except BaseException:
            self.breaker.failure()
            raise
        self.breaker.success()
        log.info("arcbatt cache: Redis %s answers again", self._where_remote)
        return True

    def unreachable(self) -> str | None:
        """Ping Redis now: None if it answers, else why not (one line; the breaker opens quietly,
        so the caller's notice is the only one for this outage)."""
        try:
            self.remote.ping()
        except REDIS_FAULTS as exc:
            self.breaker.failure()
            return f"{type(exc).__name__}: {exc}"
        return None

    def flush_backlog(self) -> int:
        """Try Redis now (whatever the breaker says) and publish the backlog.

        Returns the number of backlog entries published (0 if Redis is still unavailable, the
        backlog was empty, or another thread is probing). Never raises for Redis errors.
        """
        if not self.breaker.force_probe():
            return 0
        before = self._published
        self._probe()
        return self._published - before

    def _publish_backlog(self, wait: bool) -> int:
        """Publish pending backlog entries in pipelines; raise REDIS_FAULTS on failure."""
        if not self._flush_lock.acquire(blocking=wait, timeout=30.0 if wait else -1):
            return 0
        try:
            total = 0
            rounds = len(self.backlog) // BACKLOG_CHUNK + 3
            for _ in range(rounds):
                batch = self.backlog.peek(BACKLOG_CHUNK)
                if not batch:
                    break
                pipe = self.remote.pipeline()
                now = time.time()
                for item in batch:
                    if item.op == RELEASE:
                        if isinstance(item.value, str):
                            self.remote.delete_if_in(pipe, item.stored, item.value)
                        continue
                    raw, expire_at = self.disk.get_with_expiry(item.stored)
                    if raw is None or (expire_at is not None and expire_at <= now):
                        if item.op == SYNC:
                            pipe.unlink(item.stored)
                        continue
                    try:
                        codec.decode(raw)
                    except codec.CorruptValue:
                        continue  # never spread unreadable local bytes
                    ttl = None if expire_at is None else expire_at - now
                    px = ttl_ms(ttl, self.remote.default_ttl)
                    pipe.set(item.stored, raw, px=px, nx=(item.op == ADD))
                pipe.execute()
                self.backlog.done(batch)
                total += len(batch)
            self._needs_flush = len(self.backlog) > 0
            with self._counter_lock:
                self._published += total
            if total:
                log.info("arcbatt cache: published %d queued writes to Redis", total)
            return total
        finally:
            self._flush_lock.release()

    def _publish(self, stored_keys: list[str], action: Callable[[], Any], op: str,
                 value: str | None = None) -> None:
        """Run `action` on Redis if allowed; otherwise (or on failure) queue `op` in the backlog."""
        if self._remote_ok():
            try:
                action()
                return
            except REDIS_FAULTS as exc:
                self._fault(exc)
        self.backlog.record(stored_keys, op, value)

    # -- cache operations -------------------------------------------------------------------

    def _lookup(self, stored_keys: list[str]) -> dict[str, Entry]:
        found: dict[str, Entry] = {}
        missing = []
        for stored in stored_keys:
            raw = self.disk.get(stored)
            entry = None if raw is None else self._decode(raw, self._where_disk, stored)
            if entry is None:
                missing.append(stored)
            else:
                found[stored] = entry
        if not missing or not self._remote_ok():
            return found
        try:
            raws = self.remote.get_many(missing)
        except REDIS_FAULTS as exc:
            self._fault(exc)
            return found
        copies: dict[str, bytes] = {}
        for stored, raw in raws.items():
            entry = self._decode(raw, self._where_remote, stored)
            if entry is None:
                continue
            found[stored] = entry
            # Entries written with an explicit TTL (leases, short-lived data) are not mirrored:
            # a local copy could outlive a release made elsewhere; Redis stays their truth.
            if entry.expires_at is None:
                copies[stored] = raw
        if raws:
            with self._counter_lock:
                self._remote_hits += len(found) - (len(stored_keys) - len(missing))
        if copies:
            self.disk.set_many(copies, None)
        return found

    def _write(self, items: dict[str, bytes], ttl: float | None) -> None:
        self.disk.set_many(items, ttl)
        self._publish(list(items), lambda: self.remote.set_many(items, ttl), SYNC)

    def _add(self, stored: str, raw: bytes, ttl: float | None) -> bool:
        current = self.disk.get(stored)
        if current is not None and is_readable(current):
            return False
        if self._remote_ok():
            try:
                added = self.remote.add(stored, raw, ttl)
            except REDIS_FAULTS as exc:
                self._fault(exc)
            else:
                if added:
                    self.disk.set_many({stored: raw}, ttl)
                return added
        added = self.disk.add(stored, raw, ttl)
        if added:
            self.backlog.record([stored], ADD)
        return added

    def _remove(self, stored_keys: list[str]) -> None:
        self.disk.delete_many(stored_keys)
        self._publish(stored_keys, lambda: self.remote.delete_many(stored_keys), SYNC)

    def _touch_if(self, stored: str, value: str, ttl: float) -> bool:
        local = self.disk.touch_if(stored, value, ttl)
        if self._remote_ok():
            try:
                remote = self.remote.touch_if(stored, value, ttl)
                if not remote and local:
                    # Redis lost the entry (restart, flush) while we held it: take it back if free.
                    raw = self.disk.get(stored)
                    remote = isinstance(raw, bytes) and self.remote.add(stored, raw, ttl)
                    if not remote:
                        self.disk.delete_if(stored, value)  # someone else holds it now
                return bool(remote)
            except REDIS_FAULTS as exc:
                self._fault(exc)
        if local:
            self.backlog.record([stored], ADD)
        return local

    def _delete_if(self, stored: str, value: str) -> bool:
        local = self.disk.delete_if(stored, value)
        if self._remote_ok():
            try:
                return self.remote.delete_if(stored, value) or local
            except REDIS_FAULTS as exc:
                self._fault(exc)
        self.backlog.record([stored], RELEASE, value)
        return local

    def clear(self) -> None:
        """Delete every arcbatt entry locally, in the backlog and (if reachable) in Redis.

        In Redis only keys under the ``arcbatt:`` prefix are removed (SCAN + UNLINK), never the
        whole database. If Redis is unavailable a warning is logged and its entries stay.
        """
        self.disk.delete_where(None)
        self.backlog.clear()
        self._needs_flush = False
        if self._remote_ok():
            try:
                self.remote.delete_where(None)
                return
            except REDIS_FAULTS as exc:
                self._fault(exc)
        log.warning("arcbatt cache: Redis %s unavailable, its entries were not cleared",
                    self._where_remote)

    def close(self) -> None:
        """Publish the backlog if Redis answers, then close connections and files."""
        if len(self.backlog):
            self.flush_backlog()
        self.remote.close()
        self.backlog.close()
        self.disk.close()
