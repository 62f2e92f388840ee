"""report.html in a real browser: headless Chromium (Debian's ``chromium``, driven by Playwright's
Python package) opens the report of a real small run and of its scored submission.

Skipped, with the reason, where Playwright or a ``chromium`` binary is missing (``.ci/run``
installs Chromium with apt-get). Screenshots are kept under ``tests/artifacts/`` (git-ignored).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright's Python package is not installed")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary (apt-get install chromium)")

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "tests" / "artifacts"
COUNT = 4


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    work = tmp_path_factory.mktemp("browser")
    res = subprocess.run([sys.executable, "-m", "pipeline", "run", "-c", str(COUNT), "-D", "1", "-m",
                          "-O", str(work / "out"), "-C", f"disk:{work / 'cache'}"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    return work / "out"


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        # --no-sandbox: CI and containers run as root, where Chromium's sandbox refuses to start.
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


def open_page(browser, path: Path):
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("requestfailed", lambda req: errors.append(f"request {req.url}"))
    page.goto(path.as_uri())
    page.wait_for_selector("#rows tr")
    return page, errors


def test_report_shows_grids_attempts_programs_and_filters(browser, run_dir):
    report = json.loads((run_dir / "report.json").read_text())
    solved = [t["id"] for t in report["tasks"] if t["status"] == "solved"]
    unsolved = [t["id"] for t in report["tasks"] if t["status"] != "solved"]
    assert solved and unsolved
    page, errors = open_page(browser, run_dir / "report.html")
    assert page.locator("#rows tr").count() == COUNT
    # The first solved task is shown: its train pairs, test input, both attempts and program.
    assert page.locator("#detail h2").get_attribute("data-task") == solved[0]
    for role in ("train-in", "train-out", "test-in", "attempt-1", "attempt-2"):
        assert page.locator(f"#detail canvas[data-role={role}]").count() >= 1, role
    program = page.locator("#detail pre.program").inner_text()
    assert program == next(t["program"] for t in report["tasks"] if t["id"] == solved[0])
    # A drawn grid has its colours: the first test input's middle pixel is opaque.
    assert page.locator("#detail canvas[data-role=test-in]").first.evaluate(
        "c => c.getContext('2d').getImageData(c.width / 2, c.height / 2, 1, 1).data[3]") == 255
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "report.png"
    page.screenshot(path=str(shot))
    print(f"screenshot: {shot}")
    # Filters and choosing a task.
    page.click("button[data-filter=solved]")
    assert sorted(page.locator("#rows tr").evaluate_all("rows => rows.map(r => r.dataset.id)")) == sorted(solved)
    page.click("button[data-filter=unsolved]")
    assert sorted(page.locator("#rows tr").evaluate_all("rows => rows.map(r => r.dataset.id)")) == sorted(unsolved)
    page.click(f"#rows tr[data-id='{unsolved[0]}']")
    assert page.locator("#detail h2").get_attribute("data-task") == unsolved[0]
    assert page.locator("#detail .program").inner_text() == "no validated program"
    page.click("button[data-filter=all]")
    page.click("th[data-key=seconds]")  # sorted by seconds, largest first
    shown = page.locator("#rows tr").evaluate_all("rows => rows.map(r => r.dataset.id)")
    seconds = {t["id"]: t["seconds"] for t in report["tasks"]}
    assert [seconds[i] for i in shown] == sorted(seconds.values(), reverse=True)
    assert page.locator("#charts svg").count() == 3
    assert errors == []


def test_score_page_marks_attempts_right_or_wrong_beside_the_expected_output(browser, run_dir):
    res = subprocess.run([sys.executable, "-m", "pipeline", "score", str(run_dir / "submission.json"),
                          "-d", "arc1-train", "-c", str(COUNT), "--html"], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    page, errors = open_page(browser, run_dir / "score.html")
    right = page.locator("#rows tr .st.right").count()
    assert right + page.locator("#rows tr .st.wrong").count() == COUNT and right >= 1
    assert page.locator("#detail canvas[data-role=expected]").count() >= 1
    marks = page.locator("#detail .mark").all_inner_texts()
    assert marks and all(m in ("\u2713 right", "\u2717 wrong") for m in marks)
    page.click("button[data-filter=wrong]")
    assert page.locator("#rows tr").count() == COUNT - right
    page.screenshot(path=str(ARTIFACTS / "score.png"))
    assert errors == []
