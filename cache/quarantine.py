"""A damaged ``cache.db`` is moved aside, kept for inspection, and replaced by a fresh one.

A cache is an optimisation: losing it costs time, never results. So a database that SQLite cannot
read (overwritten with garbage: "file is not a database"; damaged pages: "database disk image is
malformed", found by ``PRAGMA quick_check`` when the cache opens) must not stop a run. Its files are
renamed to ``cache.db.corrupt-<time>`` (with their ``-wal`` and ``-shm``), one warning says where
they went, and the cache starts empty. Errors that are not damage (a locked or unwritable database)
are raised as they are.
"""
from __future__ import annotations

import os
import sqlite3
import time
import warnings
from typing import Callable, TypeVar

from .codec import CacheCorruptionWarning

DB_NAME = "cache.db"

T = TypeVar("T")


def is_damage(exc: BaseException) -> bool:
    """True for SQLite errors that mean a damaged file (not a lock, a permission or a full disk)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    if isinstance(exc, sqlite3.OperationalError):
        return "malformed" in str(exc)
    return True


def quick_check(connection: sqlite3.Connection) -> None:
    """Raise sqlite3.DatabaseError unless ``PRAGMA quick_check`` finds the database sound."""
    rows = connection.execute("PRAGMA quick_check").fetchall()
    if rows != [("ok",)]:
        raise sqlite3.DatabaseError(f"database disk image is malformed ({str(rows[0][0])[:80]})")


def quarantine(folder: str, why: BaseException) -> str:
    """Move the database files of ``folder`` aside; warn in one line; return the new name."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = os.path.join(folder, f"{DB_NAME}.corrupt-{stamp}-{os.getpid()}")
    for suffix in ("", "-wal", "-shm"):
        try:
            os.replace(os.path.join(folder, DB_NAME + suffix), target + suffix)
        except FileNotFoundError:
            pass  # another process moved it first, or it never existed
    warnings.warn(f"arcbatt cache: {os.path.join(folder, DB_NAME)} is damaged ({why}); moved to "
                  f"{os.path.basename(target)} and starting an empty cache", CacheCorruptionWarning,
                  stacklevel=3)
    return target


def open_or_quarantine(folder: str, opener: Callable[[], T], check: Callable[[T], None]) -> T:
    """``opener()`` checked by ``check``; on damage, quarantine the database and open a fresh one."""
    handle = None
    try:
        handle = opener()
        check(handle)
        return handle
    except sqlite3.DatabaseError as exc:
        if not is_damage(exc):
            raise
        if handle is not None:
            handle.close()
        quarantine(folder, exc)
        return opener()
