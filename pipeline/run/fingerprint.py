"""A fingerprint of the code that produces cached results (DSL, search, finishing, result format).

Cache keys carry it, so editing a primitive, the search or the checks of found programs can never
serve results of the old code. It hashes the sources of whole packages (a module added to one of
them is covered without a list to keep) and the DSL's registry: the transforms the search
enumerates, in their order.
"""
from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

RESULT_FORMAT = 1  # bump when the shape of any cached value changes
# The packages whose code decides a task's cached results; pipeline/run only runs them.
RESULT_PACKAGES = ("solvers", "pipeline/search", "pipeline/finish")
SOURCE_SUFFIXES = (".py", ".cu")
_ROOT = Path(__file__).resolve().parents[2]


def fingerprint_of(root: Path) -> str:
    """16 hex digits of sha256 over the result format, every source file of
    :data:`RESULT_PACKAGES` under ``root`` (Python and CUDA) (path and bytes) and the registered transforms."""
    from solvers.primitives import transforms

    digest = hashlib.sha256(f"format={RESULT_FORMAT}".encode())
    for package in RESULT_PACKAGES:
        for path in sorted(p for p in (root / package).rglob("*") if p.suffix in SOURCE_SUFFIXES):
            digest.update(path.relative_to(root).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    digest.update("\n".join(str(t) for t in transforms()).encode())
    return digest.hexdigest()[:16]


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """The fingerprint of this checkout's code (see :func:`fingerprint_of`)."""
    return fingerprint_of(_ROOT)
