"""Raw access to a shared Redis: envelope bytes under stored keys, with short timeouts.

The client is built so that a down or hung server costs little per call: a connection pool,
0.5 s socket and connect timeouts, at most one retry without back-off, no CLIENT SETINFO round trip.
Every method raises the redis-py error it meets; the layered cache turns those into a circuit
breaker and a backlog. Batches go out as MGET and non-transactional pipelines; every key gets a TTL.
"""

from __future__ import annotations

import inspect
import urllib.parse
from collections.abc import Iterable, Iterator
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from . import codec
from .base import DEFAULT_REDIS_TTL

REDIS_FAULTS: tuple[type[BaseException], ...] = (redis.exceptions.RedisError, OSError)
"""Errors that mean "Redis is unavailable or misbehaving" (never a bug in the caller)."""

BATCH = 1000
"""Keys per MGET / pipeline / UNLINK round trip."""

# Compare-and-expire / compare-and-delete on the value inside our msgpack envelope (cmsgpack is
# part of Redis' Lua). Atomic on the server: a lease is renewed or released only by its owner.
_LUA_DECODE = """
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local ok, env = pcall(cmsgpack.unpack, raw)
if not ok or type(env) ~= 'table' or env['v'] ~= ARGV[1] then return 0 end
"""
LUA_TOUCH_IF = _LUA_DECODE + "return redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
LUA_DELETE_IF = _LUA_DECODE + "return redis.call('DEL', KEYS[1])\n"

# SET with one PX for many keys in a single command: a third of the client-side cost of a
# pipeline of SETs in redis-py (measured by benchmarks/bench_cache.py), same server work.
LUA_SET_MANY = """
for i = 1, #KEYS do redis.call('SET', KEYS[i], ARGV[i + 1], 'PX', ARGV[1]) end
return #KEYS
"""


def ttl_ms(ttl: float | None, default: float = DEFAULT_REDIS_TTL) -> int:
    """Return a Redis PX argument (milliseconds, at least 1) for `ttl` seconds or the default."""
    return max(1, int(round((default if ttl is None else ttl) * 1000)))


def mask_url(url: str) -> str:
    """Return `url` with any password replaced by ``***``."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return urllib.parse.urlunsplit(parts._replace(netloc=f"{user}:***@{netloc}"))


def _no_setinfo_kwargs() -> dict[str, Any]:
    """Keyword arguments that turn off CLIENT SETINFO for this redis-py version."""
    params = inspect.signature(redis.connection.AbstractConnection.__init__).parameters
    if "driver_info" in params:  # redis-py >= 7
        return {"driver_info": None}
    return {"lib_name": None, "lib_version": None}


class RedisStore:
    """Envelope bytes in Redis under stored keys. Methods raise REDIS_FAULTS on failure."""

    def __init__(
        self,
        url: str,
        *,
        socket_timeout: float = 0.5,
        connect_timeout: float = 0.5,
        retries: int = 1,
        default_ttl: float = DEFAULT_REDIS_TTL,
    ) -> None:
        self.url = url
        self.default_ttl = float(default_ttl)
        self.pool = redis.ConnectionPool.from_url(
            url,
            socket_timeout=socket_timeout,
            socket_connect_timeout=connect_timeout,
            retry=Retry(NoBackoff(), retries),
            health_check_interval=0,
            **_no_setinfo_kwargs(),
        )
        self.client = redis.Redis(connection_pool=self.pool)
        self._touch_if = self.client.register_script(LUA_TOUCH_IF)
        self._delete_if = self.client.register_script(LUA_DELETE_IF)
        self._set_many = self.client.register_script(LUA_SET_MANY)

    def describe(self) -> str:
        """Return the URL with its password masked."""
        return mask_url(self.url)

    def ping(self) -> None:
        """Raise unless the server answers PING."""
        self.client.ping()

    def get_many(self, stored_keys: list[str]) -> dict[str, bytes]:
        """Return ``{stored: bytes}`` for present keys (MGET, BATCH keys per round trip)."""
        found: dict[str, bytes] = {}
        for start in range(0, len(stored_keys), BATCH):
            chunk = stored_keys[start : start + BATCH]
            for stored, raw in zip(chunk, self.client.mget(chunk)):
                if raw is not None:
                    found[stored] = raw
        return found

    def set_many(self, items: dict[str, bytes], ttl: float | None) -> None:
        """SET every item with PX `ttl` (or the default TTL): one Lua call per BATCH keys."""
        px = ttl_ms(ttl, self.default_ttl)
        if len(items) == 1:
            (stored, raw), = items.items()
            self.client.set(stored, raw, px=px)
            return
        keys, values = list(items), list(items.values())
        for start in range(0, len(keys), BATCH):
            self._set_many(keys=keys[start : start + BATCH],
                           args=[px, *values[start : start + BATCH]])

    def add(self, stored: str, raw: bytes, ttl: float | None) -> bool:
        """SET NX PX: store if absent; return True if stored."""
        return bool(self.client.set(stored, raw, px=ttl_ms(ttl, self.default_ttl), nx=True))

    def delete_many(self, stored_keys: Iterable[str]) -> None:
        """UNLINK the keys, BATCH per round trip."""
        keys = list(stored_keys)
        for start in range(0, len(keys), BATCH):
            self.client.unlink(*keys[start : start + BATCH])

    def touch_if(self, stored: str, value: str, ttl: float) -> bool:
        """Atomically set a TTL on `stored` if the value in its envelope equals `value`."""
        return bool(self._touch_if(keys=[stored], args=[value, ttl_ms(ttl)]))

    def delete_if(self, stored: str, value: str) -> bool:
        """Atomically delete `stored` if the value in its envelope equals `value`."""
        return bool(self._delete_if(keys=[stored], args=[value]))

    def pipeline(self) -> Any:
        """Return a non-transactional pipeline (for publishing a backlog in one round trip)."""
        return self.client.pipeline(transaction=False)

    def delete_if_in(self, pipe: Any, stored: str, value: str) -> None:
        """Queue a compare-and-delete of `stored` on `pipe`."""
        self._delete_if(keys=[stored], args=[value], client=pipe)

    def keys(self, prefix: str = codec.PREFIX + ":") -> Iterator[str]:
        """Yield stored keys starting with `prefix` (SCAN, never KEYS)."""
        for raw in self.client.scan_iter(match=prefix + "*", count=BATCH):
            try:
                yield raw.decode("utf-8") if isinstance(raw, bytes) else raw
            except UnicodeDecodeError:
                continue

    def delete_where(self, predicate, prefix: str = codec.PREFIX + ":") -> int:
        """UNLINK keys under `prefix` for which ``predicate(stored, raw)`` holds (None: all).

        Scans in batches; with a predicate each batch is read with one MGET. Returns the count.
        """
        deleted = 0
        batch: list[str] = []

        def purge() -> int:
            doomed = list(batch)
            if predicate is not None:
                values = self.client.mget(batch)
                doomed = [k for k, raw in zip(batch, values)
                          if raw is not None and predicate(k, raw)]
            if doomed:
                self.client.unlink(*doomed)
            batch.clear()
            return len(doomed)

        for stored in self.keys(prefix):
            batch.append(stored)
            if len(batch) >= BATCH:
                deleted += purge()
        if batch:
            deleted += purge()
        return deleted

    def value_sizes(self, stored_keys: list[str]) -> list[int]:
        """Return STRLEN of each key (one pipeline)."""
        pipe = self.client.pipeline(transaction=False)
        for stored in stored_keys:
            pipe.strlen(stored)
        return [int(n) for n in pipe.execute()]

    def close(self) -> None:
        """Close every pooled connection."""
        self.pool.disconnect()
