"""Which cache a run uses, as one comparable string, from its options or from its command line.

Instances share the machine's CPUs only with the runs that share their cache (the runs that split
the same tasks between them); an unrelated run on another cache is someone else's work and must not
halve this run's processes. :func:`cmdline_cache_identity` reads another process's cache from its
command line and working folder, the way that process resolved it.
"""
from __future__ import annotations

import os
import urllib.parse

from cache import CacheURLError, parse_cache_url


def cache_identity(url: str | None, cwd: str) -> str:
    """``disk:<real absolute path>`` or ``redis://host:port/db`` for a ``-C`` value used in ``cwd``."""
    parsed = parse_cache_url(url)
    if parsed.kind == "disk":
        return "disk:" + os.path.realpath(os.path.join(cwd, os.path.expanduser(parsed.path)))
    parts = urllib.parse.urlsplit(parsed.redis_url)
    db = parts.path.lstrip("/") or "0"
    return f"{parts.scheme}://{(parts.hostname or '').lower()}:{parts.port}/{int(db)}"


def _option(args: list, short: str, long: str) -> str | None:
    """The last value given to ``short``/``long`` in ``args`` (``-C X``, ``-CX``, ``--cache X``,
    ``--cache=X``), or None."""
    value = None
    for i, arg in enumerate(args):
        if arg in (short, long) and i + 1 < len(args):
            value = args[i + 1]
        elif arg.startswith(long + "="):
            value = arg[len(long) + 1:]
        elif arg.startswith(short) and len(arg) > len(short) and not arg.startswith("--"):
            value = arg[len(short):]
    return value


def cmdline_cache_identity(cmdline: list, cwd: str) -> str | None:
    """The cache identity of a ``… pipeline run …`` command line run in ``cwd``; None if unknown."""
    try:
        start = next(i for i, arg in enumerate(cmdline) if arg == "run") + 1
    except StopIteration:
        return None
    try:
        return cache_identity(_option(cmdline[start:], "-C", "--cache"), cwd)
    except (CacheURLError, ValueError):
        return None
