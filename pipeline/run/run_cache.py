"""Open a run's cache: its folders checked first, and a one-line notice when Redis is unreachable.

The cache is shared: with ``-C redis://...`` the run still works from its local disk cache when
Redis does not answer, but then it shares nothing with the other instances, which a user starting
many instances must know at once rather than find out from a slow run.
"""
from __future__ import annotations

import sys

from cache import LayeredCache, open_cache, parse_cache_url
from pipeline.run.run_folders import writable_folder


def open_run_cache(url: str | None, local_cache: str, fingerprint: str):
    """The run's cache for ``url`` (``disk:PATH`` or ``redis://...``), its folder checked.

    Raises :class:`pipeline.run.run_folders.RunFolderError` for a cache folder that cannot be used.
    """
    parsed = parse_cache_url(url)
    if parsed.kind == "disk":
        writable_folder(parsed.path, "cache folder (-C disk:)")
        return open_cache(url, fingerprint)
    writable_folder(local_cache, "local cache folder (--local-cache)")
    cache = open_cache(url, fingerprint, local_dir=local_cache)
    if isinstance(cache, LayeredCache):
        why = cache.unreachable()
        if why is not None:
            print(f"warning: Redis {cache.remote.describe()} is unreachable ({why[:160]}); working from "
                  f"the local cache, nothing is shared with other instances until it answers",
                  file=sys.stderr)
    return cache
