"""Progress display of one iteration: a tqdm bar on a terminal, a plain line every few seconds otherwise.

A search chunk can run for minutes without finishing a task, so the display does not wait for
tasks: while a chunk searches, a background thread reads its shards' counters
(:class:`~pipeline.search.progress.ShardBoard`) every ``every`` seconds and shows the level, the
share of that level's transforms done, states and states per second, and tasks fitted so far. The
first line comes when the search starts. On a terminal the bar shows the current level's share
(it restarts at each level: the last level is most of the work, and a share of levels would jump);
elsewhere each line is complete in itself, for logs.
"""
from __future__ import annotations

import sys
import threading
import time

from tqdm import tqdm

LOG_EVERY = 3.0  # seconds between lines in a log
BAR_EVERY = 0.5  # seconds between bar refreshes on a terminal


class Progress:
    """Tasks finished in one iteration, and the running search's counters while a chunk searches.

    ``solved()`` returns the tasks solved so far in the run (validated solvers); lines show the
    seconds since ``start`` (``time.monotonic()``; default now). Close it to stop its thread.
    """

    def __init__(self, total: int, label: str, solved=None, stream=None, every: float | None = None,
                 start: float | None = None):
        self.stream = stream or sys.stderr
        self.total = total
        self.done = 0
        self.label = label
        self.solved = solved or (lambda: 0)
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.every = every if every is not None else (BAR_EVERY if self.tty else LOG_EVERY)
        # The bar's text after it is tqdm's ``unit`` field (its postfix field adds a comma).
        self.bar = (tqdm(total=100, desc=label, unit="", file=self.stream,
                         bar_format="{desc} {percentage:3.0f}%|{bar:24}| {unit}") if self.tty else None)
        self.start = time.monotonic() if start is None else start
        self.last_line = time.monotonic()
        self.board = None
        self.chunk_tasks = 0
        self.search_start = 0.0
        self.phase = ""  # what runs between a chunk's search and its tasks' end (validation)
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._beat, name="arcbatt-progress", daemon=True)
        self.thread.start()

    def note(self, text: str) -> None:
        """A one-off message (an iteration starts, the budget stops the search), kept above the bar."""
        with self.lock:
            if self.bar is not None:
                self.bar.write(text, file=self.stream)
            else:
                print(text, file=self.stream, flush=True)

    def advance(self, n: int) -> None:
        """``n`` more tasks finished."""
        self.done += n
        chunk_ended, self.phase = bool(self.phase), ""
        if self.tty or chunk_ended or self.done >= self.total or time.monotonic() - self.last_line >= self.every:
            self._show()

    def searching(self, board, tasks: int, shards: int) -> None:
        """A chunk of ``tasks`` starts searching in ``shards`` processes reporting to ``board``."""
        with self.lock:
            self.board, self.chunk_tasks, self.search_start = board, tasks, time.monotonic()
        self.note(f"[{self._elapsed():7.1f}s] {self.label}: searching {tasks} tasks in {shards} "
                  f"process{'es' if shards > 1 else ''}")

    def searched(self) -> None:
        """The chunk's search has returned."""
        with self.lock:
            self.board = None
            self.phase = f"validating the solvers of {self.chunk_tasks} tasks"

    def line(self) -> str:
        """The current state in one line."""
        text = f"{self.label}: {self.done}/{self.total} tasks done, {self.solved()} solved"
        board = self.board
        if board is not None:
            snap = board.snapshot()
            seconds = max(1e-9, time.monotonic() - self.search_start)
            level = f"level {snap.level}/{snap.depth} {100 * snap.level_fraction:.0f}%" if snap.level else "preparing"
            text += (f"; search of {self.chunk_tasks} tasks: {level}, {snap.states:,} states "
                     f"({snap.states / seconds:,.0f}/s), {snap.fitted} fitted")
        elif self.phase:
            text += f"; {self.phase}"
        return text

    def _elapsed(self) -> float:
        return time.monotonic() - self.start

    def _show(self) -> None:
        with self.lock:
            if self.bar is not None:
                snap = self.board.snapshot() if self.board is not None else None
                share = snap.level_fraction if snap is not None and snap.level else self.done / max(1, self.total)
                self.bar.n = round(100 * share, 1)
                self.bar.unit = self.line().split(": ", 1)[1]
                self.bar.refresh()
            else:
                self.last_line = time.monotonic()
                print(f"[{self._elapsed():7.1f}s] {self.line()}", file=self.stream, flush=True)

    def _beat(self) -> None:
        while not self.stop.wait(self.every):
            if self.board is not None or self.phase or self.bar is not None:
                self._show()

    def close(self) -> None:
        """Stop the thread and finish the display."""
        self.stop.set()
        self.thread.join(timeout=5)
        if self.bar is not None:
            self._show()
            self.bar.close()
