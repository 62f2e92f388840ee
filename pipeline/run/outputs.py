"""Writing result files so that a reader never sees a half-written one.

Files are serialised in memory, written to a temporary file in the same folder, flushed and
fsynced, then moved over the target with os.replace (atomic on POSIX and Windows). A crash or a
kill at any point leaves either the old file or the new one, never a mix.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

import numpy as np


def grid_to_list(arr: Any) -> list[list[int]]:
    """A 2-D grid (array or nested sequence) as a list of lists of Python ints, ready for JSON."""
    a = np.asarray(arr)
    if a.ndim != 2:
        raise ValueError(f"a grid must be 2-D, got shape {a.shape}")
    if a.dtype.kind not in "iub":
        raise ValueError(f"a grid must hold integers, got dtype {a.dtype}")
    return a.astype(np.int64).tolist()


def _json_default(obj: Any) -> Any:
    """JSON form of the numpy values results may hold (arrays, integers, floats, bools)."""
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"{type(obj).__name__} is not JSON serialisable")


def write_json_atomic(path: str | os.PathLike, obj: Any) -> None:
    """Write `obj` as compact JSON to `path` atomically: the file is the old one or the new one, never partial.

    Keys keep the order given (no sorting). Numpy arrays and scalars are converted; NaN and
    infinities are refused (ValueError), since they are not JSON. If serialisation fails nothing
    is written and the old file is untouched; no temporary file is left behind in any case.
    """
    text = json.dumps(obj, separators=(",", ":"), allow_nan=False, default=_json_default)
    write_text_atomic(path, text)


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically: the file is the old one or the new one, never partial."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; results are meant to be read by others
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    _fsync_dir(folder)


def _fsync_dir(folder: str) -> None:
    """Make the rename durable by fsyncing the folder (a no-op where folders cannot be opened)."""
    try:
        dir_fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)
