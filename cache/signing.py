"""Optional signing of cache values: an HMAC that only holders of a shared key can compute.

A Redis shared by several machines may be writable by others. With the same secret in the
environment variable ``ARCBATT_CACHE_KEY`` on every instance, each value is stored with
``HMAC-SHA256(secret, stored key + envelope)``; a value whose MAC is missing or wrong (planted,
altered, or copied from another key) is unreadable and counts as a miss, like a corrupt one. The
stored key is part of what is signed, so a genuine value cannot be replayed under another key.

Without the variable nothing is signed and nothing is checked: values are then only as trustworthy
as everyone who can write to the cache (see cache/README.md for Redis AUTH and ACLs).
"""
from __future__ import annotations

import hashlib
import hmac
import os
from typing import Any

import msgpack

KEY_ENV = "ARCBATT_CACHE_KEY"
"""Environment variable holding the shared secret (any text; 32 random bytes in hex is plenty)."""


class Signer:
    """Computes and checks the MAC of cache values with one secret."""

    def __init__(self, secret: bytes) -> None:
        if not secret:
            raise ValueError("a signing secret must not be empty")
        self._secret = bytes(secret)

    def mac(self, stored_key: str, fields: list, default: Any = None) -> bytes:
        """The MAC of ``fields`` (the envelope's format, times and value) stored under ``stored_key``."""
        packed = msgpack.packb([stored_key, *fields], use_bin_type=True, default=default)
        return hmac.new(self._secret, packed, hashlib.sha256).digest()

    def verify(self, stored_key: str, fields: list, mac: Any) -> bool:
        """True when ``mac`` is the MAC of ``fields`` under ``stored_key``."""
        if not isinstance(mac, bytes):
            return False
        try:
            expected = self.mac(stored_key, fields)
        except (TypeError, ValueError, OverflowError):
            return False
        return hmac.compare_digest(expected, mac)


def signer_from_env(environ=None) -> Signer | None:
    """The :class:`Signer` for ``ARCBATT_CACHE_KEY``, or None when it is unset or empty."""
    secret = (os.environ if environ is None else environ).get(KEY_ENV, "")
    return Signer(secret.encode("utf-8")) if secret else None
