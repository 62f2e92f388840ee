"""The cache interface shared by every backend, and its hit/miss statistics.

A backend implements a handful of operations on *stored keys* (see :mod:`cache.codec`) and
envelope bytes; :class:`Cache` turns them into the public API on (namespace, key, value), counts
hits and misses, and enforces the naming rules.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from typing import Any

from . import codec
from .codec import Entry
from .signing import signer_from_env

DEFAULT_REDIS_TTL = 30 * 24 * 3600.0
"""TTL of a Redis key written without an explicit ttl (seconds)."""

DEFAULT_SIZE_LIMIT = 8 * 2**30
"""Declared size of the local disk cache (bytes). Nothing is evicted to honour it; see DiskStore."""


class CacheStats:
    """Thread-safe hit and miss counters, per namespace."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ns: dict[str, list[int]] = {}
        self.corrupt = 0

    def record(self, ns: str, hits: int, misses: int) -> None:
        """Add `hits` and `misses` to the counters of namespace `ns`."""
        with self._lock:
            counts = self._ns.setdefault(ns, [0, 0])
            counts[0] += hits
            counts[1] += misses

    def snapshot(self) -> dict[str, Any]:
        """Return ``{"hits", "misses", "hit_rate", "namespaces": {ns: {"hits", "misses"}}}``."""
        with self._lock:
            namespaces = {ns: {"hits": h, "misses": m} for ns, (h, m) in sorted(self._ns.items())}
        hits = sum(v["hits"] for v in namespaces.values())
        misses = sum(v["misses"] for v in namespaces.values())
        total = hits + misses
        return {
            "hits": hits,
            "misses": misses,
            "hit_rate": hits / total if total else 0.0,
            "namespaces": namespaces,
        }


def _check_ttl(ttl: float | None) -> float | None:
    if ttl is None:
        return None
    ttl = float(ttl)
    if not ttl > 0:
        raise ValueError(f"ttl must be a positive number of seconds, got {ttl}")
    return ttl


class Cache(ABC):
    """A key-value cache of JSON-compatible values, namespaced and bound to a fingerprint.

    Values written through one fingerprint are invisible through another, so results computed by
    older code are never served. All methods are safe to call from several threads; separate
    processes (and, with Redis, separate machines) see each other's writes.
    """

    def __init__(self, fingerprint: str) -> None:
        self.fingerprint = codec.check_name("fingerprint", fingerprint)
        #: Signs written values and checks read ones when ARCBATT_CACHE_KEY is set (else None).
        self.signer = signer_from_env()
        self._stats = CacheStats()

    # -- public API -------------------------------------------------------------------------

    def stored_key(self, ns: str, key: str) -> str:
        """Return the backend key for (`ns`, `key`) under this cache's fingerprint."""
        return codec.full_key(self.fingerprint, codec.check_name("namespace", ns), key)

    def get(self, ns: str, key: str) -> Any:
        """Return the value stored under (`ns`, `key`), or None on a miss.

        Unreadable (corrupted or foreign) values count as misses and emit a CacheCorruptionWarning.
        """
        stored = self.stored_key(ns, key)
        entry = self._lookup([stored]).get(stored)
        self._stats.record(ns, int(entry is not None), int(entry is None))
        return None if entry is None else entry.value

    def get_many(self, ns: str, keys: Iterable[str]) -> dict[str, Any]:
        """Return ``{key: value}`` for the keys of `keys` that are present (hits only)."""
        by_stored = {self.stored_key(ns, k): k for k in keys}
        if not by_stored:
            return {}
        found = self._lookup(list(by_stored))
        self._stats.record(ns, len(found), len(by_stored) - len(found))
        return {by_stored[s]: entry.value for s, entry in found.items()}

    def set(self, ns: str, key: str, value: Any, ttl: float | None = None) -> None:
        """Store `value` under (`ns`, `key`), replacing any previous value.

        `ttl` (seconds) makes the entry expire; None keeps it locally until cleared (and applies
        the default TTL to a shared Redis copy).
        """
        ttl = _check_ttl(ttl)
        stored = self.stored_key(ns, key)
        self._write({stored: codec.encode(value, ttl, signer=self.signer, stored_key=stored)}, ttl)

    def set_many(self, ns: str, mapping: Mapping[str, Any], ttl: float | None = None) -> None:
        """Store every ``key: value`` of `mapping` (one batch per backend), like :meth:`set`."""
        ttl = _check_ttl(ttl)
        stored = {self.stored_key(ns, k): v for k, v in mapping.items()}
        items = {s: codec.encode(v, ttl, signer=self.signer, stored_key=s) for s, v in stored.items()}
        if items:
            self._write(items, ttl)

    def add(self, ns: str, key: str, value: Any, ttl: float | None = None) -> bool:
        """Store `value` only if (`ns`, `key`) holds no live value; return True if it was stored.

        Atomic across threads and processes (and across machines while Redis is reachable).
        """
        ttl = _check_ttl(ttl)
        stored = self.stored_key(ns, key)
        return self._add(stored, codec.encode(value, ttl, signer=self.signer, stored_key=stored), ttl)

    def delete(self, ns: str, key: str) -> None:
        """Remove (`ns`, `key`) if present."""
        self._remove([self.stored_key(ns, key)])

    def touch_if(self, ns: str, key: str, value: str, ttl: float) -> bool:
        """Give (`ns`, `key`) a new `ttl` only if its current value equals the string `value`.

        Returns True if the entry was present with that value. Used by leases to renew.
        """
        if not isinstance(value, str):
            raise TypeError("touch_if compares string values only")
        ttl = _check_ttl(ttl)
        if ttl is None:
            raise ValueError("touch_if needs a ttl")
        return self._touch_if(self.stored_key(ns, key), value, ttl)

    def delete_if(self, ns: str, key: str, value: str) -> bool:
        """Remove (`ns`, `key`) only if its current value equals the string `value`.

        Returns True if something was removed. Used by leases to release.
        """
        if not isinstance(value, str):
            raise TypeError("delete_if compares string values only")
        return self._delete_if(self.stored_key(ns, key), value)

    def stats(self) -> dict[str, Any]:
        """Return hit/miss counters of this instance (see CacheStats.snapshot) and backend facts."""
        result = self._stats.snapshot()
        result["corrupt"] = self._stats.corrupt
        result["backend"] = self.describe()
        return result

    def __enter__(self) -> "Cache":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.describe()} fingerprint={self.fingerprint}>"

    # -- backend hooks ----------------------------------------------------------------------

    @abstractmethod
    def describe(self) -> str:
        """Return a short description such as ``disk:/path`` or ``redis://h:p/0+disk:/path``."""

    @abstractmethod
    def clear(self) -> None:
        """Remove every arcbatt entry (all fingerprints, all namespaces) from this backend."""

    @abstractmethod
    def close(self) -> None:
        """Release connections and files; publish what is pending where that applies."""

    @abstractmethod
    def _lookup(self, stored_keys: list[str]) -> dict[str, Entry]:
        """Return decoded entries for the stored keys that are present and readable."""

    @abstractmethod
    def _write(self, items: dict[str, bytes], ttl: float | None) -> None:
        """Store envelope bytes under stored keys."""

    @abstractmethod
    def _add(self, stored: str, raw: bytes, ttl: float | None) -> bool:
        """Store `raw` under `stored` if absent; return True if stored."""

    @abstractmethod
    def _remove(self, stored_keys: list[str]) -> None:
        """Delete stored keys."""

    @abstractmethod
    def _touch_if(self, stored: str, value: str, ttl: float) -> bool:
        """Compare-and-expire on one stored key."""

    @abstractmethod
    def _delete_if(self, stored: str, value: str) -> bool:
        """Compare-and-delete on one stored key."""

    def _decode(self, raw: Any, where: str, stored: str) -> Entry | None:
        """Decode `raw` found at `where`, warning and counting when it is unreadable."""
        entry = codec.decode_or_warn(raw, where, stored, self.signer)
        if entry is None:
            with self._stats._lock:
                self._stats.corrupt += 1
        return entry
