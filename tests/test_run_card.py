"""End to end: run_card.sh on a few real tasks -> valid submission.json and report.json; exit codes;
determinism; scoring; warm reruns from the cache; the exported solver module; time budgets."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from pipeline.run.score import score_submission, validate_submission
from pipeline.run.tasks import load_solutions, load_tasks

ROOT = Path(__file__).resolve().parent.parent
COUNT = 40


def run_card(*args, timeout=300):
    """Run run_card.sh with ``args``; returns the CompletedProcess."""
    return subprocess.run(["bash", str(ROOT / "run_card.sh"), *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    work = tmp_path_factory.mktemp("e2e")
    res = run_card("-c", str(COUNT), "-D", "1", "-m", "-b", "-T", "-O", str(work / "out"),
                   "-C", f"disk:{work / 'cache'}", "-s", "3")
    assert res.returncode == 0, res.stderr
    return work, res


def test_outputs_are_valid_and_complete(first_run):
    work, res = first_run
    tasks, _ = load_tasks("arc1-train", COUNT)
    submission = json.loads((work / "out" / "submission.json").read_text())
    assert validate_submission(submission, tasks) == []
    report = json.loads((work / "out" / "report.json").read_text())
    for key in ("dataset", "tasks", "device", "gpus", "workers", "seed", "depth", "seconds", "stages"):
        assert key in report["run"], key
    for key in ("states", "states_per_second", "grid_transforms_per_second"):
        assert key in report["search"], key
    search = report["search"]
    assert 0 < search["shard_mean_seconds"] <= search["shard_slowest_seconds"] <= search["seconds"]
    for key in ("hits", "misses", "hit_rate"):
        assert key in report["cache"], key
    for key in ("validated", "ok", "failed"):
        assert key in report["validation"], key
    assert [t["id"] for t in report["tasks"]] == [t.id for t in tasks]
    solved = [t for t in report["tasks"] if t["status"] == "solved"]
    assert solved and all(t["program"].startswith("def solve(I):") and t["train_fit"] == 1.0 for t in solved)
    assert report["run"]["device"] == "cpu" and report["search"]["states"] > 0
    assert "search" in res.stderr and "total" in res.stderr  # the -T timing table


def test_score_command_matches_scorer(first_run):
    work, _ = first_run
    path = work / "out" / "submission.json"
    res = subprocess.run([sys.executable, "-m", "pipeline", "score", str(path), "-d", "arc1-train",
                          "-c", str(COUNT)], cwd=ROOT, capture_output=True, text=True, check=True)
    last = res.stdout.strip().splitlines()[-1]
    tasks, _ = load_tasks("arc1-train", COUNT)
    sols = {k: v for k, v in load_solutions("arc1-train").items() if k in {t.id for t in tasks}}
    correct, total, _ = score_submission(json.loads(path.read_text()), sols)
    assert last == f"score: {correct}/{total}" and correct > 0


def test_same_seed_gives_identical_submission_and_warm_rerun_hits_cache(first_run, tmp_path):
    work, _ = first_run
    fresh = run_card("-c", str(COUNT), "-D", "1", "-m", "-O", str(tmp_path / "fresh"),
                     "-C", f"disk:{tmp_path / 'cache'}", "-s", "3", "-w", "1")
    assert fresh.returncode == 0, fresh.stderr
    first = (work / "out" / "submission.json").read_bytes()
    assert (tmp_path / "fresh" / "submission.json").read_bytes() == first
    warm = run_card("-c", str(COUNT), "-D", "1", "-m", "-O", str(tmp_path / "warm"),
                    "-C", f"disk:{work / 'cache'}", "-s", "3")
    assert warm.returncode == 0, warm.stderr
    assert (tmp_path / "warm" / "submission.json").read_bytes() == first
    report = json.loads((tmp_path / "warm" / "report.json").read_text())
    assert report["search"]["states"] == 0  # nothing recomputed: every task came from the cache
    assert report["cache"]["hit_rate"] >= 0.9


def test_exported_solvers_module_reproduces_predictions(first_run):
    work, _ = first_run
    path = work / "out" / "best_solvers.py"
    spec = importlib.util.spec_from_file_location("exported_solvers", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    report = json.loads((work / "out" / "report.json").read_text())
    submission = json.loads((work / "out" / "submission.json").read_text())
    tasks = {t.id: t for t in load_tasks("arc1-train", COUNT)[0]}
    solved = [t["id"] for t in report["tasks"] if t["status"] == "solved"]
    assert set(module.SOLVERS) == set(solved)
    for tid in solved:
        for j, grid in enumerate(tasks[tid].test_inputs):
            out = np.asarray(module.SOLVERS[tid](grid)).tolist()
            assert out == submission[tid][j]["attempt_1"], tid


def test_exported_module_imports_by_its_name_from_its_folder(first_run):
    work, _ = first_run
    code = "import best_solvers, solvers.dsl; print(len(best_solvers.SOLVERS))"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    res = subprocess.run([sys.executable, "-c", code], cwd=work / "out", env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    report = json.loads((work / "out" / "report.json").read_text())
    assert int(res.stdout) == sum(t["status"] == "solved" for t in report["tasks"]) > 0


def test_help_shows_defaults_and_bad_numbers_print_run_cards_usage():
    for text in (run_card("-h").stdout,
                 subprocess.run([sys.executable, "-m", "pipeline", "run", "-h"], cwd=ROOT, capture_output=True,
                                text=True).stdout):
        assert "arc1-train" in text and "disk:.cache" in text and "runs/<timestamp>" in text
    for flag, value in (("-c", "abc"), ("-D", "x"), ("-t", "soon")):
        res = run_card(flag, value)
        assert res.returncode == 2 and "run_card.sh" in res.stderr and "Flags" in res.stderr, res.stderr
        assert "usage: python -m pipeline" not in res.stderr


def test_bad_usage_exit_codes(tmp_path):
    assert run_card("-h").returncode == 0
    assert run_card("-x").returncode == 2
    bad = run_card("-d", "no-such-dataset", "-O", str(tmp_path / "o"), "-C", f"disk:{tmp_path / 'c'}")
    assert bad.returncode == 2 and "no-such-dataset" in bad.stderr
    assert run_card("-D", "9", "-O", str(tmp_path / "o")).returncode == 2
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    res = run_card("-d", str(broken), "-O", str(tmp_path / "o"), "-C", f"disk:{tmp_path / 'c'}")
    assert res.returncode == 2 and "broken.json" in res.stderr


def test_forced_gpu_without_a_usable_gpu_exits_3(tmp_path):
    from pipeline.run.devices import DeviceError, probe_gpu

    try:
        probe_gpu()
        pytest.skip("a usable GPU is present")
    except DeviceError:
        pass
    res = run_card("-g", "-c", "1", "-O", str(tmp_path / "o"), "-C", f"disk:{tmp_path / 'c'}")
    assert res.returncode == 3 and "GPU" in res.stderr


def test_gpu_processes_started_on_a_guess_end_when_no_gpu_is_usable(tmp_path):
    """With two GPUs visible by their driver's count (CUDA_VISIBLE_DEVICES) a run starts a second
    search process before it chooses its device; where CuPy finds no usable GPU the run goes on
    (auto: on the CPU, exit 0) or stops (-g: exit 3) without waiting on that process."""
    from pipeline.run.devices import DeviceError, probe_gpu

    try:
        probe_gpu()
        pytest.skip("a usable GPU is present")
    except DeviceError:
        pass
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="0,1")
    common = ["-c", "3", "-D", "1", "-C", f"disk:{tmp_path / 'c'}"]
    auto = subprocess.run(["bash", str(ROOT / "run_card.sh"), *common, "-O", str(tmp_path / "a")], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, env=env)
    assert auto.returncode == 0, auto.stderr
    assert "running on the CPU" in auto.stderr
    report = json.loads((tmp_path / "a" / "report.json").read_text())
    assert report["run"]["device"] == "cpu" and len(report["tasks"]) == 3
    forced = subprocess.run(["bash", str(ROOT / "run_card.sh"), *common, "-g", "-O", str(tmp_path / "g")],
                            cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    assert forced.returncode == 3 and "GPU" in forced.stderr


def test_budget_stops_in_time_with_complete_outputs(tmp_path):
    start = time.monotonic()
    res = run_card("-c", "60", "-D", "3", "-m", "-B", "8s", "-O", str(tmp_path / "o"),
                   "-C", f"disk:{tmp_path / 'c'}")
    elapsed = time.monotonic() - start
    assert res.returncode == 0, res.stderr
    assert elapsed < 8 + 12  # the budget plus process start-up and pool shut-down
    tasks, _ = load_tasks("arc1-train", 60)
    submission = json.loads((tmp_path / "o" / "submission.json").read_text())
    assert validate_submission(submission, tasks) == []
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["run"]["truncated"] is True


def test_bad_task_in_a_file_is_skipped_and_the_rest_run(tmp_path):
    tasks, _ = load_tasks("arc1-train", 3)
    data = {t.id: {"train": [{"input": i.tolist(), "output": o.tolist()} for i, o in
                             zip(t.train_inputs, t.train_outputs)],
                   "test": [{"input": i.tolist()} for i in t.test_inputs]} for t in tasks}
    data["badtask"] = {"train": [], "test": [{"input": [[1]]}]}
    path = tmp_path / "challenges.json"
    path.write_text(json.dumps(data))
    res = run_card("-d", str(path), "-D", "1", "-m", "-O", str(tmp_path / "o"), "-C", f"disk:{tmp_path / 'c'}")
    assert res.returncode == 0, res.stderr
    assert "badtask" in res.stderr
    submission = json.loads((tmp_path / "o" / "submission.json").read_text())
    assert set(submission) == {t.id for t in tasks}


def test_sigterm_mid_run_leaves_complete_outputs(tmp_path):
    import signal

    proc = subprocess.Popen([sys.executable, "-m", "pipeline", "run", "-c", "80", "-D", "2", "-m",
                             "-O", str(tmp_path / "o"), "-C", f"disk:{tmp_path / 'c'}"], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (tmp_path / "o" / "report.json").exists():
        assert time.monotonic() < deadline
        time.sleep(0.1)
    time.sleep(1.0)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    tasks, _ = load_tasks("arc1-train", 80)
    submission = json.loads((tmp_path / "o" / "submission.json").read_text())
    assert validate_submission(submission, tasks) == []
