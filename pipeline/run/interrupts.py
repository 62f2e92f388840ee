"""SIGINT and SIGTERM end a run the same way: outputs written, then exit 128 + the signal number.

A notebook's stop button, a shell loop's ``kill`` and Ctrl-C all mean "stop now, keep what is
done". Both signals raise :class:`Interrupted` in the main thread; the run catches it, records the
interruption in report.json, writes its outputs and exits 130 (SIGINT) or 143 (SIGTERM).
"""
from __future__ import annotations

import signal


class Interrupted(KeyboardInterrupt):
    """The run was asked to stop by a signal; ``signum`` says which."""

    def __init__(self, signum: int):
        super().__init__(f"signal {signum}")
        self.signum = signum


def install_handlers() -> None:
    """Make SIGINT and SIGTERM raise :class:`Interrupted` in the main thread."""
    def handler(signum, frame):
        raise Interrupted(signum)

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, handler)


def signal_of(exc: BaseException) -> int:
    """The signal number behind an interrupt (a bare KeyboardInterrupt is SIGINT)."""
    return getattr(exc, "signum", signal.SIGINT)


def exit_code(signum: int) -> int:
    """The shell's exit code for a run stopped by ``signum``: 128 + its number."""
    return 128 + int(signum)


def signal_name(signum: int) -> str:
    """``"SIGINT"``, ``"SIGTERM"``, ..."""
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"
