"""Durations written as ``90s``, ``20m``, ``8h``, ``2d`` (also ``1.5h``)."""

from __future__ import annotations

import re

_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd])\s*$", re.IGNORECASE)


def parse_duration(text: str) -> float:
    """Return the seconds in `text` (``<number><s|m|h|d>``); raise ValueError if malformed."""
    match = _DURATION_RE.match(text) if isinstance(text, str) else None
    if not match:
        raise ValueError(f"bad duration {text!r}: use a number and a unit, like 90s, 20m, 8h or 2d")
    return float(match.group(1)) * _UNITS[match.group(2).lower()]
