"""Progress display: a tqdm bar on a terminal, one log line every few seconds otherwise."""
from __future__ import annotations

import sys
import time

from tqdm import tqdm

LOG_EVERY = 5.0


class Progress:
    """Counts finished tasks; ``inner`` shows progress inside the current search chunk."""

    def __init__(self, total: int, label: str, stream=None):
        self.stream = stream or sys.stderr
        self.total = total
        self.done = 0
        self.label = label
        self.inner_text = ""
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.bar = tqdm(total=total, desc=label, unit="task", file=self.stream) if self.tty else None
        self.start = time.monotonic()
        self.last_log = self.start

    def advance(self, n: int) -> None:
        """``n`` more tasks finished."""
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
        self._maybe_log(force=self.done >= self.total)

    def inner(self, done: int, total: int) -> None:
        """Progress inside the running search (transform batches done / total)."""
        self.inner_text = f"search {100.0 * done / max(1, total):.0f}%"
        if self.bar is not None:
            self.bar.set_postfix_str(self.inner_text, refresh=False)
            self.bar.refresh()
        self._maybe_log()

    def _maybe_log(self, force: bool = False) -> None:
        if self.bar is not None:
            return
        now = time.monotonic()
        if force or now - self.last_log >= LOG_EVERY:
            self.last_log = now
            print(f"[{now - self.start:7.1f}s] {self.label}: {self.done}/{self.total} tasks"
                  f"{', ' + self.inner_text if self.inner_text else ''}", file=self.stream, flush=True)

    def close(self) -> None:
        """Finish the display."""
        if self.bar is not None:
            self.bar.close()
