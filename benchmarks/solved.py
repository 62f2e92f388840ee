"""How many test outputs a submission gets right, per half of a dataset (the search-power benchmark).

ARC-1 train is split by a hash of the task id into a *design* half (tasks one may look at while
building the search) and a *check* half (only ever counted). A change that helps only the design
half is overfitting; both halves are printed.

    python benchmarks/solved.py SUBMISSION -d arc1-train [--report REPORT] [--json OUT]

With ``--report`` (the run's report.json) it also counts the solved tasks per mechanism used.
"""
from __future__ import annotations

import argparse
import collections
import hashlib
import json
import sys

from pipeline.run.score import score_submission
from pipeline.run.tasks import load_solutions


def half_of(task_id: str) -> str:
    """``design`` or ``check``: the half of a split a task belongs to, from a hash of its id."""
    return "design" if hashlib.sha256(task_id.encode()).digest()[0] % 2 == 0 else "check"


def main(argv=None) -> int:
    """Print the correct test outputs of a submission, over the dataset and per half."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("submission")
    parser.add_argument("-d", "--dataset", default="arc1-train")
    parser.add_argument("--report", help="the run's report.json: solved tasks per mechanism")
    parser.add_argument("--json", help="write the figures to this file too")
    args = parser.parse_args(argv)
    with open(args.submission) as fh:
        submission = json.load(fh)
    solutions = load_solutions(args.dataset)
    solutions = {k: v for k, v in solutions.items() if k in submission}
    correct, total, per_task = score_submission(submission, solutions)
    halves = collections.defaultdict(lambda: [0, 0])
    for task_id, hits in per_task.items():
        half = halves[half_of(task_id)]
        half[0] += sum(hits)
        half[1] += len(hits)
    figures = {"dataset": args.dataset, "correct": correct, "total": total,
               "halves": {k: {"correct": v[0], "total": v[1]} for k, v in sorted(halves.items())}}
    if args.report:
        with open(args.report) as fh:
            report = json.load(fh)
        used = collections.Counter()
        for task in report.get("tasks", []):
            if per_task.get(task["id"]) and all(per_task[task["id"]]):
                for mechanism in task.get("mechanisms", []) or ["plain"]:
                    used[mechanism] += 1
        figures["right_by_mechanism"] = dict(sorted(used.items()))
    print(f"{args.dataset}: {correct}/{total}", " ".join(
        f"{name} {v['correct']}/{v['total']}" for name, v in figures["halves"].items()))
    if "right_by_mechanism" in figures:
        print("tasks right by mechanism:", figures["right_by_mechanism"])
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(figures, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
