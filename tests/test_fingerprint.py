"""The code fingerprint that cache keys carry: it covers every module that can change a result."""
from __future__ import annotations

import shutil
from pathlib import Path

from pipeline.run.fingerprint import RESULT_PACKAGES, code_fingerprint, fingerprint_of

ROOT = Path(__file__).resolve().parent.parent


def _copy_tree(dest: Path) -> Path:
    for package in RESULT_PACKAGES:
        shutil.copytree(ROOT / package, dest / package, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def test_fingerprint_is_of_this_checkout_and_stable(tmp_path):
    assert fingerprint_of(ROOT) == code_fingerprint()
    assert fingerprint_of(_copy_tree(tmp_path)) == code_fingerprint()


def test_a_leaderboard_constant_changes_the_fingerprint(tmp_path):
    copy = _copy_tree(tmp_path)
    path = copy / "pipeline" / "search" / "leaderboard.py"
    source = path.read_text()
    assert "LEADERBOARD_SIZE = " in source
    path.write_text(source.replace("LEADERBOARD_SIZE = ", "LEADERBOARD_SIZE = 1 + ", 1))
    assert fingerprint_of(copy) != code_fingerprint()


def test_a_cuda_source_changes_the_fingerprint(tmp_path):
    copy = _copy_tree(tmp_path)
    path = copy / "pipeline" / "search" / "kernels.cu"
    path.write_text(path.read_text() + "// changed\n")
    assert fingerprint_of(copy) != code_fingerprint()


def test_a_new_module_in_a_result_package_changes_the_fingerprint(tmp_path):
    copy = _copy_tree(tmp_path)
    (copy / "pipeline" / "finish" / "extra.py").write_text("X = 1\n")
    assert fingerprint_of(copy) != code_fingerprint()


def test_code_that_only_runs_the_job_does_not_change_it(tmp_path):
    copy = _copy_tree(tmp_path)
    (copy / "pipeline" / "run").mkdir()
    (copy / "pipeline" / "run" / "progress.py").write_text("CHANGED = True\n")
    assert fingerprint_of(copy) == code_fingerprint()
