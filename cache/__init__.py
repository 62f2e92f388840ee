"""arcbatt cache: one interface, a disk backend and a layered disk + Redis backend, leases, a CLI.

Open a cache with :func:`open_cache`::

    cache = open_cache("redis://127.0.0.1:6379/0", fingerprint)   # or None / "disk:.cache"
    cache.set("task", task_id, result)
    cache.get("task", task_id)

Values are JSON-compatible data stored as msgpack (never pickle); keys carry the fingerprint and a
format version, so results of other code are never served. See README.md in this folder.
"""

from .base import DEFAULT_REDIS_TTL, DEFAULT_SIZE_LIMIT, Cache
from .codec import FORMAT, CacheCorruptionWarning
from .disk import DiskCache
from .durations import parse_duration
from .layered import LayeredCache
from .leases import LeaseManager, default_owner
from .urls import CacheURLError, open_cache, parse_cache_url

__all__ = [
    "Cache",
    "CacheCorruptionWarning",
    "CacheURLError",
    "DEFAULT_REDIS_TTL",
    "DEFAULT_SIZE_LIMIT",
    "DiskCache",
    "FORMAT",
    "LayeredCache",
    "LeaseManager",
    "default_owner",
    "open_cache",
    "parse_cache_url",
    "parse_duration",
]
