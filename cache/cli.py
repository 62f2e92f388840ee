"""``python -m cache``: inspect and maintain the arcbatt cache.

    python -m cache [-C URL] [--local-dir DIR] stats
    python -m cache [-C URL] clear
    python -m cache [-C URL] refresh --older-than DURATION

URL is ``disk:PATH`` (default ``disk:.cache``) or ``redis://host:port/db``; for Redis the commands
also act on this machine's local folder (``--local-dir``, default ``.cache``). Exit codes: 0 done,
1 the cache could not be reached, 2 bad usage (URL, duration, arguments).
"""

from __future__ import annotations

import argparse
import sys

from . import admin
from .durations import parse_duration
from .redis_backend import REDIS_FAULTS
from .urls import DEFAULT_URL, CacheURLError, parse_cache_url


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return f"{n:.1f} GiB"


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of ``python -m cache``."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-C", "--cache", metavar="URL", default=argparse.SUPPRESS,
                        help="cache URL: disk:PATH or redis://host:port/db "
                        f"(default {DEFAULT_URL})")
    common.add_argument("--local-dir", metavar="DIR", default=argparse.SUPPRESS,
                        help="local folder of a Redis-backed cache (default .cache)")
    parser = argparse.ArgumentParser(prog="python -m cache", parents=[common],
                                     description="Inspect and maintain the arcbatt cache.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sub.add_parser("stats", parents=[common], help="entries per namespace and size")
    sub.add_parser("clear", parents=[common], help="delete every arcbatt entry")
    refresh = sub.add_parser("refresh", parents=[common],
                             help="delete entries written longer ago than a duration")
    refresh.add_argument("--older-than", required=True, metavar="DURATION",
                         help="age such as 90s, 20m, 8h, 2d")
    return parser


def _print_inventory(info: dict) -> None:
    print(f"{info['label']}  ({_human(info['bytes'])} {info['bytes_kind']})")
    width = max([len("namespace")] + [len(ns) for ns in info["namespaces"]])
    print(f"  {'namespace':<{width}}  {'entries':>10}")
    for ns, count in info["namespaces"].items():
        print(f"  {ns:<{width}}  {count:>10}")
    prints = info["fingerprints"]
    plural = "" if prints == 1 else "s"
    print(f"  {'total':<{width}}  {info['entries']:>10}  ({prints} fingerprint{plural})")
    if info["backlog"] is not None:
        print(f"  backlog: {info['backlog']} writes waiting for Redis")


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit code."""
    args = build_parser().parse_args(argv)
    url = getattr(args, "cache", DEFAULT_URL)
    try:
        parse_cache_url(url)
        older_than = parse_duration(args.older_than) if args.command == "refresh" else None
    except (CacheURLError, ValueError) as exc:
        print(f"python -m cache: error: {exc}", file=sys.stderr)
        return 2
    locations = admin.open_locations(url, getattr(args, "local_dir", None))
    try:
        for location in locations:
            if args.command == "stats":
                _print_inventory(admin.inventory(location))
            elif args.command == "clear":
                print(f"{location.label}: deleted {admin.clear_all(location)} entries")
            else:
                count = admin.refresh(location, older_than)
                print(f"{location.label}: deleted {count} entries older than {args.older_than}")
    except REDIS_FAULTS as exc:
        print(f"python -m cache: error: {location.label} unreachable: {exc}", file=sys.stderr)
        return 1
    finally:
        for location in locations:
            location.store.close()
    return 0
