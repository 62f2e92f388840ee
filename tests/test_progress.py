"""Progress: shards' counters cross processes through the board; a real run's log lines come within
5 s of the search's start and at least every 5 s after; a budget run says what it decides."""
from __future__ import annotations

import io
import multiprocessing
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from pipeline.run.progress import Progress
from pipeline.search.progress import ShardBoard

ROOT = Path(__file__).resolve().parent.parent


def _write(writer, level, done, total, states, fitted):
    writer(level, done, total, states, fitted)


def test_board_sums_the_rows_that_other_processes_write():
    board = ShardBoard(3)
    try:
        writers = board.writers([["a"] * 5, ["b"] * 3], depth=2)
        ctx = multiprocessing.get_context("spawn")
        proc = ctx.Process(target=_write, args=(writers[1], 2, 30, 120, 700, 2))
        proc.start()
        proc.join(60)
        assert proc.exitcode == 0
        writers[0](1, 120, 120, 50, 1)
        snap = board.snapshot()
        assert (snap.level, snap.states, snap.fitted, snap.shards) == (1, 750, 3, 2)
        assert snap.level_fraction == pytest.approx((1.0 + 1.0) / 2)  # shard 1 is past level 1
        writers[0](2, 60, 120, 80, 1)
        assert board.snapshot().level_fraction == pytest.approx((0.5 + 0.25) / 2)
        board.finished(1)  # a returned shard counts as done on every level
        assert board.snapshot().level_fraction == pytest.approx((0.5 + 1.0) / 2)
        with pytest.raises(ValueError):
            board.writers([[1]] * 4, depth=2)
    finally:
        board.close()
    writers[0](1, 1, 1, 1, 1)  # a writer outliving the board does nothing


def test_log_lines_come_while_a_search_runs_and_stop_when_closed():
    stream = io.StringIO()
    board = ShardBoard(1)
    try:
        progress = Progress(10, "depth 2, iteration 1", solved=lambda: 3, stream=stream, every=0.05)
        writer = board.writers([list(range(10))], depth=2)[0]
        progress.searching(board, 10, 1)
        writer(2, 5, 10, 1000, 4)
        time.sleep(0.3)
        progress.searched()
        progress.advance(10)
        progress.close()
    finally:
        board.close()
    lines = stream.getvalue().splitlines()
    assert "searching 10 tasks in 1 process" in lines[0]
    assert any("level 2/2 50%, 1,000 states" in line and "4 fitted" in line and "3 solved" in line for line in lines)
    assert "10/10 tasks done, 3 solved" in lines[-1]
    count = len(stream.getvalue())
    time.sleep(0.2)
    assert len(stream.getvalue()) == count and not any(t.name == "arcbatt-progress" for t in threading.enumerate())


@pytest.mark.slow
def test_real_run_logs_progress_in_time_and_says_what_its_budget_decides(tmp_path):
    """Depth 1 on 40 tasks in chunks of 15, then deeper iterations within a 16 s budget: lines timed as
    they arrive."""
    cmd = [sys.executable, "-m", "pipeline", "run", "-c", "40", "-D", "1", "-m", "-B", "16s", "--chunk", "15",
           "-O", str(tmp_path / "out"), "-C", f"disk:{tmp_path / 'cache'}"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    arrivals = []
    for line in proc.stderr:
        arrivals.append((time.monotonic(), line.rstrip()))
    assert proc.wait(60) == 0, "\n".join(text for _, text in arrivals)
    log = "\n".join(text for _, text in arrivals)
    starts = [i for i, (_, text) in enumerate(arrivals) if "searching" in text]
    assert starts, log
    assert re.search(r"budget: \S+ left: iteration 2 searches depth 2 \(\d+ states per task and level\) on the "
                     r"\d+ unsolved tasks", log), log
    assert re.search(r"budget: stopping the search after depth \d|budget: no time left", log), log
    # From each search's start to its chunk's end, no gap over 5 s between lines.
    for i in starts:
        end = next(j for j in range(i, len(arrivals)) if re.search(r"\d+/\d+ tasks done", arrivals[j][1])
                   and "search of" not in arrivals[j][1])
        gaps = [b[0] - a[0] for a, b in zip(arrivals[i:end], arrivals[i + 1:end + 1])]
        assert all(g <= 5.0 for g in gaps), (gaps, log)
    deep = [text for _, text in arrivals if "iteration 2" in text and "search of" in text]
    assert deep and all(re.search(r"level \d/2 \d+%, [\d,]+ states \([\d,]+/s\), \d+ fitted", t) for t in deep), log
