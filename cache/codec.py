"""Keys and values of the arcbatt cache: naming, the msgpack envelope, safe decoding.

Every stored value is a msgpack map ``{"fmt": FORMAT, "t": written_at, "v": value}`` (plus ``"e"``,
the absolute expiry time, when the writer gave an explicit TTL). msgpack is used rather than pickle
on purpose: anyone who can write to a shared Redis must not be able to run code in our processes.
Anything that does not decode to such an envelope (garbage bytes, a foreign msgpack value, a pickled
object, another format version) is reported as unreadable and treated as a miss by the caches.

Every key is ``arcbatt:{FORMAT}:{fingerprint}:{ns}:{key}``: the fingerprint (derived by the caller
from the DSL source and the result format) and the format version make stale results unreachable
after a code change, instead of being served.

With a :class:`~cache.signing.Signer` (``ARCBATT_CACHE_KEY`` set), the envelope also carries
``"s"``, an HMAC over the stored key, format, times and value; decoding with a signer refuses an
envelope whose ``"s"`` is missing or wrong.
"""

from __future__ import annotations

import re
import time
import warnings
from typing import Any, NamedTuple

import msgpack

PREFIX = "arcbatt"
"""First segment of every key we write; `clear` and the CLI touch only keys with this prefix."""

FORMAT = 1
"""Version of the envelope and key layout. Bump it when either changes."""

_NAME_RE = re.compile(r"^[A-Za-z0-9_.\-]{1,200}$")


class CacheCorruptionWarning(UserWarning):
    """A stored value could not be read (corrupted or foreign); it was treated as a miss."""


class CorruptValue(ValueError):
    """Raised by :func:`decode` for bytes that are not an envelope written by this code."""


class Entry(NamedTuple):
    """A decoded cache value with its metadata."""

    value: Any
    written_at: float
    expires_at: float | None


def check_name(kind: str, name: str) -> str:
    """Return `name` if it is a valid fingerprint or namespace, else raise ValueError.

    Names are 1 to 200 characters of letters, digits, ``_``, ``.`` and ``-`` (no ``:``), so that a
    full key can always be split back into its parts.
    """
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise ValueError(f"invalid cache {kind} {name!r}: use 1-200 of [A-Za-z0-9_.-]")
    return name


def full_key(fingerprint: str, ns: str, key: str) -> str:
    """Return the stored key for (fingerprint, namespace, key); `key` may be any string."""
    if not isinstance(key, str):
        raise TypeError(f"cache keys must be str, got {type(key).__name__}")
    return f"{PREFIX}:{FORMAT}:{fingerprint}:{ns}:{key}"


class KeyParts(NamedTuple):
    """The parts of a stored key, as returned by :func:`parse_key`."""

    format: str
    fingerprint: str
    ns: str
    key: str


def parse_key(stored: str | bytes) -> KeyParts | None:
    """Split a stored key into its parts; None if it is not an arcbatt key."""
    if isinstance(stored, bytes):
        try:
            stored = stored.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if not isinstance(stored, str):
        return None
    parts = stored.split(":", 4)
    if len(parts) != 5 or parts[0] != PREFIX:
        return None
    return KeyParts(parts[1], parts[2], parts[3], parts[4])


def _plain(obj: Any) -> Any:
    """msgpack `default` hook: numpy arrays and scalars become lists and numbers; nothing else."""
    tolist = getattr(obj, "tolist", None)
    if callable(tolist):
        return tolist()
    raise TypeError(
        f"cache values must be JSON-compatible (dict/list/str/int/float/bool/None), "
        f"got {type(obj).__name__}"
    )


def encode(value: Any, ttl: float | None = None, now: float | None = None, signer=None,
           stored_key: str = "") -> bytes:
    """Wrap `value` in the envelope and pack it with msgpack.

    `ttl` (seconds) records the absolute expiry in the envelope (readers learn that the entry is
    short-lived and do not mirror it). `now` overrides the write time (tests, tools).
    Raises TypeError for values that are not JSON-compatible (numpy arrays are converted to lists).
    With `signer`, the envelope is signed for `stored_key` (see the module docstring).
    """
    now = time.time() if now is None else float(now)
    envelope: dict[str, Any] = {"fmt": FORMAT, "t": now, "v": value}
    if ttl is not None:
        envelope["e"] = now + float(ttl)
    try:
        if signer is not None:
            # The value as the reader will see it (numpy arrays as lists), so both MACs agree.
            plain = msgpack.unpackb(msgpack.packb(value, use_bin_type=True, default=_plain), raw=False,
                                    strict_map_key=False)
            envelope["s"] = signer.mac(stored_key, [FORMAT, now, envelope.get("e"), plain])
        return msgpack.packb(envelope, use_bin_type=True, default=_plain)
    except (OverflowError, ValueError) as exc:
        raise TypeError(f"cache value cannot be encoded: {exc}") from None


def _refuse_ext(code: int, data: bytes) -> Any:
    raise CorruptValue(f"msgpack extension type {code} is not allowed")


def decode(raw: Any, signer=None, stored_key: str = "") -> Entry:
    """Unpack an envelope written by :func:`encode`; raise CorruptValue for anything else.

    With `signer`, an envelope not signed with its secret for `stored_key` is refused too.
    """
    if isinstance(raw, (bytearray, memoryview)):
        raw = bytes(raw)
    if not isinstance(raw, bytes):
        raise CorruptValue(f"stored value is a {type(raw).__name__}, not msgpack bytes")
    try:
        envelope = msgpack.unpackb(
            raw, raw=False, strict_map_key=False, ext_hook=_refuse_ext, use_list=True
        )
    except CorruptValue:
        raise
    except Exception as exc:  # msgpack raises many types (ExtraData, FormatError, ValueError…)
        raise CorruptValue(f"undecodable bytes ({type(exc).__name__})") from None
    if not isinstance(envelope, dict) or "v" not in envelope:
        raise CorruptValue("not an arcbatt envelope")
    if envelope.get("fmt") != FORMAT:
        raise CorruptValue(f"format {envelope.get('fmt')!r}, expected {FORMAT}")
    written = envelope.get("t")
    expires = envelope.get("e")
    if not isinstance(written, (int, float)) or not (
        expires is None or isinstance(expires, (int, float))
    ):
        raise CorruptValue("malformed envelope metadata")
    if signer is not None and not signer.verify(stored_key, [FORMAT, written, expires, envelope["v"]],
                                                envelope.get("s")):
        raise CorruptValue("missing or wrong signature (ARCBATT_CACHE_KEY)")
    return Entry(envelope["v"], float(written), None if expires is None else float(expires))


def decode_or_warn(raw: Any, where: str, stored_key: str, signer=None) -> Entry | None:
    """Decode `raw` (checking its signature with `signer`); if unreadable, warn
    (CacheCorruptionWarning) and return None."""
    try:
        return decode(raw, signer, stored_key)
    except CorruptValue as exc:
        warnings.warn(
            f"arcbatt cache: unreadable value at {where} key {stored_key!r} ({exc}); "
            "treated as a miss",
            CacheCorruptionWarning,
            stacklevel=4,
        )
        return None
