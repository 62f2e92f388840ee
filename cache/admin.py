"""Maintenance over every fingerprint: inventory, clear, refresh (used by ``python -m cache``).

These work on the stores directly (no fingerprint), touching only keys under the ``arcbatt:``
prefix. For a Redis URL they act on Redis and on this machine's local folder; other machines'
local folders are theirs to maintain.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from typing import Any, NamedTuple

from . import codec
from .backlog import Backlog
from .disk import DiskStore
from .redis_backend import RedisStore
from .urls import DEFAULT_LOCAL_DIR, parse_cache_url


class Location(NamedTuple):
    """One place entries live: a label and a DiskStore or RedisStore."""

    label: str
    store: Any


def open_locations(url: str | None, local_dir: str | None = None) -> list[Location]:
    """Return the stores behind `url`: the disk folder, and Redis first for a Redis URL."""
    parsed = parse_cache_url(url)
    if parsed.kind == "disk":
        disk = DiskStore(parsed.path)
        return [Location(f"disk:{disk.path}", disk)]
    remote = RedisStore(parsed.redis_url, socket_timeout=5.0, connect_timeout=2.0)
    disk = DiskStore(local_dir or DEFAULT_LOCAL_DIR)
    return [Location(remote.describe(), remote), Location(f"disk:{disk.path}", disk)]


def _backlog_of(disk: DiskStore) -> Backlog | None:
    path = os.path.join(disk.path, "backlog")
    return Backlog(disk.path) if os.path.isdir(path) else None


def inventory(location: Location) -> dict[str, Any]:
    """Count entries per namespace and fingerprint at `location` and measure its size.

    Returns ``{"label", "namespaces": {ns: entries}, "entries", "fingerprints", "bytes",
    "bytes_kind", "backlog"}``; for Redis, ``bytes`` is the sum of value lengths.
    """
    namespaces: Counter[str] = Counter()
    fingerprints: set[str] = set()
    keys = list(location.store.keys())
    for stored in keys:
        parts = codec.parse_key(stored)
        if parts is not None:
            namespaces[parts.ns] += 1
            fingerprints.add(f"{parts.format}:{parts.fingerprint}")
    result: dict[str, Any] = {
        "label": location.label,
        "namespaces": dict(sorted(namespaces.items())),
        "entries": sum(namespaces.values()),
        "fingerprints": len(fingerprints),
    }
    if isinstance(location.store, RedisStore):
        total = 0
        for start in range(0, len(keys), 1000):
            total += sum(location.store.value_sizes(keys[start : start + 1000]))
        result.update(bytes=total, bytes_kind="in values", backlog=None)
    else:
        backlog = _backlog_of(location.store)
        result.update(
            bytes=location.store.volume(),
            bytes_kind="on disk",
            backlog=None if backlog is None else len(backlog),
        )
    return result


def clear_all(location: Location) -> int:
    """Delete every arcbatt entry at `location` (and a disk folder's backlog); return the count."""
    deleted = location.store.delete_where(None)
    if isinstance(location.store, DiskStore):
        backlog = _backlog_of(location.store)
        if backlog is not None:
            backlog.clear()
    return deleted


def refresh(location: Location, older_than: float, now: float | None = None) -> int:
    """Delete entries at `location` written more than `older_than` seconds ago; return the count.

    The write time is the one recorded in each value's envelope; unreadable values are kept
    (use clear to remove them).
    """
    cutoff = (time.time() if now is None else now) - older_than

    def is_old(stored: str, raw: Any) -> bool:
        try:
            return codec.decode(raw).written_at < cutoff
        except codec.CorruptValue:
            return False

    return location.store.delete_where(is_old)
