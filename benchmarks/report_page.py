"""Size, render and open time of a run's report.html.

    python benchmarks/report_page.py RUN_DIR [--repeat 3]

Prints the page's size, the seconds to render it again from the run's report.json and
submission.json (what the run pays at every rewrite), and the seconds headless Chromium (Debian's
``chromium`` through Playwright) takes from navigation until the index holds every task and the
first task's grids are drawn, then to switch the filter to solved and to show another task.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.run.report_html import RunPage  # noqa: E402
from pipeline.run.tasks import load_tasks  # noqa: E402


def main() -> int:
    """Measure and print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    page_path = args.run_dir / "report.html"
    report = json.loads((args.run_dir / "report.json").read_text())
    submission = json.loads((args.run_dir / "submission.json").read_text())
    tasks, _ = load_tasks(report["run"]["dataset"])
    tasks = [t for t in tasks if t.id in submission]
    t0 = time.perf_counter()
    page = RunPage(tasks)
    t1 = time.perf_counter()
    html = page.html(report, submission)
    t2 = time.perf_counter()
    print(f"report_page: {platform.node()}, {os.cpu_count()} CPUs, {len(tasks)} tasks, "
          f"{page_path.stat().st_size / 1e6:.2f} MB on disk ({len(html.encode()) / 1e6:.2f} MB rendered now)")
    print(f"  encode grids once {t1 - t0:.3f} s, render {t2 - t1:.3f} s")

    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
        for _ in range(args.repeat):
            tab = browser.new_page(viewport={"width": 1400, "height": 900})
            start = time.perf_counter()
            tab.goto(page_path.as_uri())
            tab.wait_for_function(f"document.querySelectorAll('#rows tr').length === {len(tasks)} "
                                  "&& document.querySelector('#detail canvas') !== null")
            opened = time.perf_counter() - start
            start = time.perf_counter()
            tab.click("button[data-filter=solved]")
            tab.wait_for_function("document.querySelector('button[data-filter=solved]').classList.contains('on')")
            filtered = time.perf_counter() - start
            start = time.perf_counter()
            tab.click("#rows tr:nth-child(2)")
            tab.wait_for_function("document.querySelector('#rows tr:nth-child(2)').classList.contains('sel')")
            shown = time.perf_counter() - start
            print(f"  chromium {browser.version}: open {opened:.3f} s, filter {filtered:.3f} s, "
                  f"another task {shown:.3f} s")
            tab.close()
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
