"""Leases: named, expiring claims on work, visible to every process and machine sharing a cache.

A lease is an entry in the ``lease`` namespace whose value is the owner string. It is taken with an
atomic add with a TTL (Redis ``SET NX PX`` while Redis is reachable, a diskcache add with expiry
otherwise), renewed and released only by its owner (a Lua compare-and-expire / compare-and-delete
in Redis, a compare inside a SQLite transaction on disk). A holder that crashes stops renewing, so
its leases expire after the TTL and others can take them.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading

from .base import Cache

log = logging.getLogger("arcbatt.cache")

LEASE_NS = "lease"


def default_owner() -> str:
    """Return ``hostname:pid:random``, unique to this process (and this manager)."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


class LeaseManager:
    """Take, renew and release leases in `cache` under the name `owner`.

    Renew held leases yourself with :meth:`renew_all` more often than `ttl`, or start the background
    renewer with :meth:`start_renewer`. Use as a context manager to stop the renewer and release
    everything on exit.
    """

    def __init__(self, cache: Cache, owner: str | None = None, ttl: float = 60.0) -> None:
        if not ttl > 0:
            raise ValueError(f"lease ttl must be positive, got {ttl}")
        self.cache = cache
        self.owner = owner or default_owner()
        self.ttl = float(ttl)
        self._held: set[str] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None

    def try_acquire(self, name: str) -> bool:
        """Take lease `name` unless another owner holds it; True if we hold it now (renewed)."""
        taken = self.cache.add(LEASE_NS, name, self.owner, ttl=self.ttl) or self.cache.touch_if(
            LEASE_NS, name, self.owner, self.ttl
        )  # the second form: already ours (same owner string), so renew it
        if taken:
            with self._lock:
                self._held.add(name)
        return taken

    def renew(self, name: str) -> bool:
        """Extend lease `name` by the TTL if we still own it; False (and forget it) otherwise."""
        ok = self.cache.touch_if(LEASE_NS, name, self.owner, self.ttl)
        if not ok:
            with self._lock:
                lost = name in self._held
                self._held.discard(name)
            if lost:
                log.warning("arcbatt lease %r lost by %s (expired or taken)", name, self.owner)
        return ok

    def release(self, name: str) -> bool:
        """Let go of lease `name` if we own it; True if something was released."""
        with self._lock:
            self._held.discard(name)
        return self.cache.delete_if(LEASE_NS, name, self.owner)

    def holder(self, name: str) -> str | None:
        """Return the owner string of lease `name`, or None if nobody holds it."""
        value = self.cache.get(LEASE_NS, name)
        return value if isinstance(value, str) else None

    def held(self) -> set[str]:
        """Return the names of the leases we believe we hold."""
        with self._lock:
            return set(self._held)

    def renew_all(self) -> set[str]:
        """Renew every held lease; return the names that were lost."""
        lost = set()
        for name in self.held():
            if not self.renew(name):
                lost.add(name)
        return lost

    def start_renewer(self, interval: float | None = None) -> None:
        """Start a daemon thread that calls :meth:`renew_all` every `interval` (default ttl/3)."""
        if self._renewer is not None and self._renewer.is_alive():
            return
        period = self.ttl / 3 if interval is None else float(interval)
        self._stop.clear()

        def loop() -> None:
            while not self._stop.wait(period):
                try:
                    self.renew_all()
                except Exception:  # keep renewing; a disk error now may pass
                    log.exception("arcbatt lease renewer failed; retrying")

        self._renewer = threading.Thread(target=loop, name="arcbatt-lease-renewer", daemon=True)
        self._renewer.start()

    def stop_renewer(self) -> None:
        """Stop the background renewer (waits for it to finish its round)."""
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join(timeout=max(5.0, self.ttl))
            self._renewer = None

    def release_all(self) -> None:
        """Release every held lease."""
        for name in self.held():
            self.release(name)

    def __enter__(self) -> "LeaseManager":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop_renewer()
        self.release_all()
