"""Local disk storage on diskcache: the raw store (DiskStore) and the disk-only cache (DiskCache).

One ``diskcache.Cache`` (SQLite in WAL mode plus files for values over 32 KiB), not a FanoutCache:
it is safe across threads and processes, and a single database keeps ``add`` and compare-and-set
atomic. Eviction is off (``eviction_policy='none'``): results are never dropped silently; the size
limit is recorded and reported, and entries leave only by expiry, ``clear`` or ``refresh``.

diskcache unpickles values and keys it did not store as raw bytes or strings. :class:`SafeDisk`
refuses to: a pickled value or key (written by anyone else) comes back as an unreadable marker.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import diskcache

from . import codec
from .base import DEFAULT_SIZE_LIMIT, Cache
from .codec import Entry
from .quarantine import open_or_quarantine, quick_check

SQLITE_TIMEOUT = 30.0
"""Seconds a disk operation waits for the SQLite lock before raising diskcache.Timeout."""


class Unreadable:
    """Marker returned by SafeDisk instead of unpickling foreign data."""

    def __init__(self, what: str) -> None:
        self.what = what

    def __repr__(self) -> str:
        return f"<unreadable {self.what}>"


class SafeDisk(diskcache.Disk):
    """A diskcache Disk that never unpickles: pickled keys and values read as Unreadable."""

    def get(self, key: Any, raw: bool) -> Any:
        """Return the stored key, or an Unreadable marker for a pickled key."""
        if not raw:
            return Unreadable("pickled key")
        return super().get(key, raw)

    def fetch(self, mode: int, filename: str | None, value: Any, read: bool) -> Any:
        """Return the stored value, or an Unreadable marker for a pickled value."""
        if mode == diskcache.core.MODE_PICKLE:
            return Unreadable("pickled value")
        return super().fetch(mode, filename, value, read)


def make_private_dir(path: str) -> str:
    """Create `path` (mode 0700) if missing and return its absolute form."""
    path = os.path.abspath(os.path.expanduser(path))
    if not os.path.isdir(path):
        os.makedirs(path, mode=0o700, exist_ok=True)
        os.chmod(path, 0o700)  # makedirs' mode is filtered by the umask
    return path


def open_diskcache(path: str, size_limit: int = DEFAULT_SIZE_LIMIT) -> diskcache.Cache:
    """Open (creating it 0700 if needed) a diskcache.Cache with our settings at `path`.

    A damaged database is moved aside and replaced by an empty one (see :mod:`cache.quarantine`).
    """
    path = make_private_dir(path)
    return open_or_quarantine(path, lambda: diskcache.Cache(
        path,
        disk=SafeDisk,
        timeout=SQLITE_TIMEOUT,
        size_limit=int(size_limit),
        eviction_policy="none",
    ), lambda dc: quick_check(dc._con))  # noqa: SLF001 - diskcache exposes no public handle


class DiskStore:
    """Envelope bytes under stored keys in one diskcache.Cache; no decoding, no statistics."""

    def __init__(self, path: str, size_limit: int = DEFAULT_SIZE_LIMIT) -> None:
        self.path = make_private_dir(path)
        self.size_limit = int(size_limit)
        self.dc = open_diskcache(self.path, self.size_limit)

    def get(self, stored: str) -> Any:
        """Return what is stored under `stored` (normally bytes), or None."""
        return self.dc.get(stored)

    def get_with_expiry(self, stored: str) -> tuple[Any, float | None]:
        """Return (value, absolute expiry time or None); value None when absent."""
        return self.dc.get(stored, expire_time=True)

    def set_many(self, items: dict[str, bytes], ttl: float | None) -> None:
        """Store every item in one transaction, all with the same `ttl`."""
        if len(items) == 1:
            (stored, raw), = items.items()
            self.dc.set(stored, raw, expire=ttl)
            return
        with self.dc.transact():
            for stored, raw in items.items():
                self.dc.set(stored, raw, expire=ttl)

    def add(self, stored: str, raw: bytes, ttl: float | None) -> bool:
        """Store `raw` if no readable live value is there (unreadable ones are replaced)."""
        with self.dc.transact():
            current = self.dc.get(stored)
            if current is not None and is_readable(current):
                return False
            self.dc.set(stored, raw, expire=ttl)
            return True

    def delete_many(self, stored_keys: list[str]) -> None:
        """Delete the stored keys (absent ones are ignored)."""
        if len(stored_keys) == 1:
            self.dc.delete(stored_keys[0])
            return
        with self.dc.transact():
            for stored in stored_keys:
                self.dc.delete(stored)

    def touch_if(self, stored: str, value: str, ttl: float) -> bool:
        """Reset the expiry of `stored` to `ttl` if its decoded value equals `value`."""
        with self.dc.transact():
            if not holds(self.dc.get(stored), value):
                return False
            return bool(self.dc.touch(stored, expire=ttl))

    def delete_if(self, stored: str, value: str) -> bool:
        """Delete `stored` if its decoded value equals `value`."""
        with self.dc.transact():
            if not holds(self.dc.get(stored), value):
                return False
            return bool(self.dc.delete(stored))

    def keys(self, prefix: str = codec.PREFIX + ":") -> Iterator[str]:
        """Yield the stored keys that start with `prefix` (skips foreign key types)."""
        for stored in self.dc.iterkeys():
            if isinstance(stored, str) and stored.startswith(prefix):
                yield stored

    def delete_where(self, predicate, prefix: str = codec.PREFIX + ":", batch: int = 500) -> int:
        """Delete the keys under `prefix` for which ``predicate(stored_key, raw)`` is true.

        `predicate` None deletes them all. Returns the number deleted.
        """
        doomed: list[str] = []
        deleted = 0

        def purge() -> int:
            with self.dc.transact():
                count = sum(bool(self.dc.delete(k)) for k in doomed)
            doomed.clear()
            return count

        for stored in list(self.keys(prefix)):
            if predicate is None or predicate(stored, self.dc.get(stored)):
                doomed.append(stored)
                if len(doomed) >= batch:
                    deleted += purge()
        if doomed:
            deleted += purge()
        return deleted

    def volume(self) -> int:
        """Return the bytes used on disk (database plus value files)."""
        return int(self.dc.volume())

    def close(self) -> None:
        """Close the SQLite connections of this thread (reopened on next use)."""
        self.dc.close()


def is_readable(raw: Any) -> bool:
    """Return True if `raw` decodes as one of our envelopes."""
    try:
        codec.decode(raw)
        return True
    except codec.CorruptValue:
        return False


def holds(raw: Any, value: str) -> bool:
    """Return True if `raw` decodes to an envelope whose value equals `value`."""
    if raw is None:
        return False
    try:
        return codec.decode(raw).value == value
    except codec.CorruptValue:
        return False


class DiskCache(Cache):
    """The disk-only cache: one diskcache directory shared by every process of this machine."""

    def __init__(
        self, path: str, fingerprint: str, *, size_limit: int = DEFAULT_SIZE_LIMIT
    ) -> None:
        super().__init__(fingerprint)
        self.store = DiskStore(path, size_limit)
        self._where = f"disk:{self.store.path}"

    @property
    def path(self) -> str:
        """Absolute path of the cache folder."""
        return self.store.path

    def describe(self) -> str:
        """Return ``disk:/absolute/path``."""
        return self._where

    def _lookup(self, stored_keys: list[str]) -> dict[str, Entry]:
        found = {}
        for stored in stored_keys:
            raw = self.store.get(stored)
            if raw is not None:
                entry = self._decode(raw, self._where, stored)
                if entry is not None:
                    found[stored] = entry
        return found

    def _write(self, items: dict[str, bytes], ttl: float | None) -> None:
        self.store.set_many(items, ttl)

    def _add(self, stored: str, raw: bytes, ttl: float | None) -> bool:
        return self.store.add(stored, raw, ttl)

    def _remove(self, stored_keys: list[str]) -> None:
        self.store.delete_many(stored_keys)

    def _touch_if(self, stored: str, value: str, ttl: float) -> bool:
        return self.store.touch_if(stored, value, ttl)

    def _delete_if(self, stored: str, value: str) -> bool:
        return self.store.delete_if(stored, value)

    def clear(self) -> None:
        """Delete every arcbatt entry of this folder (other diskcache keys are left alone)."""
        self.store.delete_where(None)

    def stats(self) -> dict[str, Any]:
        """Hit/miss counters plus ``disk_bytes`` and ``size_limit``."""
        result = super().stats()
        result["disk_bytes"] = self.store.volume()
        result["size_limit"] = self.store.size_limit
        return result

    def close(self) -> None:
        """Close the database connections."""
        self.store.close()
