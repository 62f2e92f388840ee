"""Persistent backlog of writes that could not be published to Redis.

The backlog is a diskcache of its own in ``<local cache folder>/backlog``: one entry per stored key,
so a key written a thousand times during an outage is published once. Entries survive a crash and
are shared by every process using the same folder; whichever process reaches Redis first publishes
them. An entry names what Redis should be brought to:

- ``sync``: make Redis match the local disk (SET the local bytes with their remaining TTL, or UNLINK
  if the key is gone locally). Used by set, set_many and delete.
- ``add``: SET NX the local bytes (a lease or an add taken while Redis was away); nothing if gone.
- ``release``: compare-and-delete with the owner value kept in the entry (a lease let go).

Each entry carries a random nonce; after publishing, an entry is removed only if it is unchanged,
so a newer write queued meanwhile by another process is never dropped.
"""

from __future__ import annotations

import itertools
import os
import secrets
from typing import Any, NamedTuple

import msgpack

from .disk import open_diskcache

SYNC, ADD, RELEASE = "sync", "add", "release"


class Pending(NamedTuple):
    """One backlog entry as read by :meth:`Backlog.peek`."""

    stored: str
    op: str
    value: str | None
    raw: bytes


class Backlog:
    """Persistent, deduplicated queue of Redis publications, keyed by stored key."""

    def __init__(self, local_dir: str) -> None:
        self.path = os.path.join(local_dir, "backlog")
        self.dc = open_diskcache(self.path)

    def __len__(self) -> int:
        return len(self.dc)

    def record(self, stored_keys: list[str], op: str, value: str | None = None) -> None:
        """Queue `op` for each stored key (replacing any older entry for the same key)."""
        def entry() -> bytes:
            return msgpack.packb({"op": op, "v": value, "n": secrets.token_hex(8)})

        if len(stored_keys) == 1:
            self.dc.set(stored_keys[0], entry())
            return
        with self.dc.transact():
            for stored in stored_keys:
                self.dc.set(stored, entry())

    def peek(self, limit: int) -> list[Pending]:
        """Return up to `limit` entries in key order (unreadable entries are dropped)."""
        result = []
        for stored in itertools.islice(self.dc.iterkeys(), limit):
            raw = self.dc.get(stored)
            if not isinstance(stored, str) or not isinstance(raw, bytes):
                self.dc.delete(stored)
                continue
            try:
                fields: Any = msgpack.unpackb(raw, raw=False)
                result.append(Pending(stored, fields["op"], fields.get("v"), raw))
            except Exception:
                self.dc.delete(stored)
        return result

    def done(self, published: list[Pending]) -> None:
        """Remove the published entries that nobody replaced since they were read."""
        with self.dc.transact():
            for item in published:
                if self.dc.get(item.stored) == item.raw:
                    self.dc.delete(item.stored)

    def clear(self) -> None:
        """Drop every pending entry."""
        self.dc.clear()

    def close(self) -> None:
        """Close the database connections."""
        self.dc.close()
