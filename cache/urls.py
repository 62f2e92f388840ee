"""Cache URLs (``disk:PATH``, ``redis://host:port/db``) and :func:`open_cache`."""

from __future__ import annotations

import urllib.parse
from typing import Any, NamedTuple

from .base import Cache

DEFAULT_URL = "disk:.cache"
DEFAULT_LOCAL_DIR = ".cache"


class CacheURLError(ValueError):
    """A cache URL that is not ``disk:PATH`` or ``redis://host[:port][/db]``."""


class CacheURL(NamedTuple):
    """A parsed cache URL: kind "disk" (with path) or "redis" (with the redis URL)."""

    kind: str
    path: str | None
    redis_url: str | None


def parse_cache_url(url: str | None) -> CacheURL:
    """Parse a cache URL; None means ``disk:.cache``. Raise CacheURLError when malformed."""
    if url is None:
        url = DEFAULT_URL
    if not isinstance(url, str):
        raise CacheURLError(f"cache URL must be a string, got {type(url).__name__}")
    url = url.strip()
    if url.startswith("disk:"):
        path = url[len("disk:") :]
        return CacheURL("disk", path or DEFAULT_LOCAL_DIR, None)
    if url.startswith(("redis://", "rediss://")):
        parts = urllib.parse.urlsplit(url)
        try:
            port = parts.port
        except ValueError:
            raise CacheURLError(f"bad port in cache URL {url!r}") from None
        if not parts.hostname:
            raise CacheURLError(f"no host in cache URL {url!r} (use redis://host:port/db)")
        if parts.query or parts.fragment:
            raise CacheURLError(f"cache URL {url!r}: query strings are not supported")
        db = parts.path.lstrip("/")
        if db and not db.isdigit():
            raise CacheURLError(f"bad database number {db!r} in cache URL {url!r}")
        if port is None:
            url = urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc + ":6379"))
        return CacheURL("redis", None, url)
    raise CacheURLError(
        f"unsupported cache URL {url!r}: use disk:PATH or redis://host:port/db"
    )


def open_cache(url: str | None, fingerprint: str, **options: Any) -> Cache:
    """Open the cache named by `url` for results of code identified by `fingerprint`.

    - None or ``disk:PATH`` (PATH defaults to ``.cache``): a DiskCache in that folder.
    - ``redis://host:port/db``: a LayeredCache, local disk (``local_dir``, default ``.cache``)
      mirrored to that Redis. Opening does not connect: an unreachable Redis never raises.

    `options` go to the backend: ``size_limit`` for both; ``local_dir``, ``default_ttl``,
    ``cooldown``, ``max_cooldown``, ``socket_timeout``, ``connect_timeout``, ``retries`` for Redis.
    Raises CacheURLError for a malformed URL and ValueError for a malformed fingerprint.
    """
    from .disk import DiskCache
    from .layered import LayeredCache

    parsed = parse_cache_url(url)
    if parsed.kind == "disk":
        options.pop("local_dir", None)
        return DiskCache(parsed.path, fingerprint, **options)
    local_dir = options.pop("local_dir", None) or DEFAULT_LOCAL_DIR
    return LayeredCache(parsed.redis_url, fingerprint, local_dir=local_dir, **options)
