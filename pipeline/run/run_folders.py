"""The folders a run writes to, made ready before any work: the output folder and the disk cache.

A mistake in ``-O`` or ``-C disk:`` (a read-only folder, a path that is a file, a parent that
cannot take a new folder) is found here, before the search starts, and reported as one line naming
the path and the reason (:class:`RunFolderError`, exit 2) instead of a traceback after the work.
"""
from __future__ import annotations

import os
import tempfile


class RunFolderError(Exception):
    """An output or cache folder that cannot be used (one-line message naming it)."""


def writable_folder(path: str, what: str) -> str:
    """Create ``path`` if needed and check that files can be created in it; return its absolute form.

    Raises :class:`RunFolderError` for a path that is a file, a folder that cannot be created
    (read-only parent) or one that cannot be written.
    """
    path = os.path.abspath(os.path.expanduser(path))
    if os.path.exists(path) and not os.path.isdir(path):
        raise RunFolderError(f"{what} {path} is a file, not a folder")
    try:
        os.makedirs(path, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".arcbatt-probe-"):
            pass
    except OSError as exc:
        raise RunFolderError(f"{what} {path} cannot be written: {exc.strerror or exc}") from None
    return path
