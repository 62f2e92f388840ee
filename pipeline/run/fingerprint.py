"""A fingerprint of the code that produces cached results (DSL, search, result format).

Cache keys carry it, so editing a primitive or the search can never serve results of the old code.
"""
from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

RESULT_FORMAT = 1  # bump when the shape of any cached value changes
_ROOT = Path(__file__).resolve().parents[2]
_SOURCES = ("solvers", "pipeline/search/driver.py", "pipeline/search/problem.py", "pipeline/search/hashing.py",
            "pipeline/finish/program.py", "pipeline/finish/inline.py", "pipeline/finish/validate.py", "pipeline/finish/select.py",
            "pipeline/finish/store.py", "pipeline/finish/finisher.py")


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """16 hex digits of sha256 over the result-producing source files and the result format."""
    digest = hashlib.sha256(f"format={RESULT_FORMAT}".encode())
    for name in _SOURCES:
        path = _ROOT / name
        files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        for f in files:
            if f.exists():
                digest.update(str(f.relative_to(_ROOT)).encode())
                digest.update(f.read_bytes())
    return digest.hexdigest()[:16]
