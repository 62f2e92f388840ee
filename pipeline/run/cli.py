"""Command line: ``python -m pipeline run [options]`` and ``python -m pipeline score FILE -d DATASET``.

Exit codes: 0 done; 2 bad usage, unreadable input or no valid task; 3 forced GPU unusable;
130 / 143 interrupted by SIGINT / SIGTERM (outputs written).
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from cache import CacheURLError, parse_duration
from pipeline.search.mechanisms import MECHANISMS


def _duration(text: str) -> float:
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of both subcommands."""
    parser = argparse.ArgumentParser(prog="python -m pipeline", description="arcbatt: batched ARC program search")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="search, validate and write submission.json and report.json")
    run.add_argument("-c", "--count", type=_positive_int, default=0, help="number of tasks (0: all), first N in file order")
    run.add_argument("-d", "--dataset", default="arc1-train",
                     help="arc1-train, arc1-eval, arc2-train, arc2-eval, a Kaggle folder or a challenges JSON file "
                          "(default: %(default)s)")
    run.add_argument("-o", "--once", action="store_true", help="one iteration only, then stop")
    run.add_argument("-i", "--initial", action="store_true", help="clear the cache and the solver store first")
    run.add_argument("-t", "--timeout", type=_seconds, default=5.0, help="validation timeout per solver, seconds")
    run.add_argument("-T", "--timing", action="store_true", help="print a timing table per stage")
    run.add_argument("-m", "--cpu", dest="force_cpu", action="store_true", help="force the CPU")
    run.add_argument("-g", "--gpu", dest="force_gpu", action="store_true", help="force the GPU (exit 3 if unusable)")
    run.add_argument("-b", "--export-best", action="store_true",
                     help="write best_solvers.py with the best solver per task")
    run.add_argument("-w", "--workers", type=int, default=None, help="worker processes for validation")
    run.add_argument("-B", "--budget", type=_duration, default=None, help="overall time budget: 90s, 20m, 8h")
    run.add_argument("-C", "--cache", dest="cache_url", default=None, help="disk:PATH or redis://host:port/db (default: disk:.cache, in the current folder)")
    run.add_argument("-O", "--out", dest="out_dir", default=None, help="output folder (default: runs/<timestamp>, in the current folder)")
    run.add_argument("-s", "--seed", type=int, default=0, help="random seed")
    run.add_argument("-D", "--depth", type=int, default=None, help="search depth, 0-4 (default: 3 on a GPU, 2 on the CPU)")
    run.add_argument("--states-per-task", type=int, default=8000, help="frontier states kept per task and level")
    run.add_argument("--without", action="append", default=[], choices=MECHANISMS, metavar="MECHANISM",
                     help=f"switch a search mechanism off (for ablations; repeatable): {', '.join(MECHANISMS)}")
    run.add_argument("--gpus", type=int, default=None, help="use at most this many GPUs")
    run.add_argument("--procs-per-gpu", type=_positive_int, default=None,
                     help="search processes sharing each GPU (default 1: more time-slice it, measured slower)")
    run.add_argument("--chunk", type=int, default=None, help="tasks claimed per search batch")
    run.add_argument("--lease-ttl", type=_seconds, default=6.0,
                     help="seconds before a crashed instance's task leases expire (renewed every third of it)")
    run.add_argument("--local-cache", default=".cache",
                     help="local disk folder kept beside a Redis cache (the local truth)")
    score = sub.add_parser("score", help="score a submission with the Kaggle 2025 rule")
    score.add_argument("submission")
    score.add_argument("-d", "--dataset", required=True)
    score.add_argument("-c", "--count", type=_positive_int, default=0, help="score only the first N tasks")
    score.add_argument("--html", nargs="?", const="", default=None, metavar="PATH",
                       help="also write a page marking each attempt right or wrong beside the expected output "
                            "(default PATH: score.html beside the submission)")
    return parser


def main(argv=None) -> int:
    """Entry point; returns the exit code."""
    from pipeline.run.devices import DeviceError
    from pipeline.run.interrupts import exit_code, install_handlers, signal_name, signal_of
    from pipeline.run.run_folders import RunFolderError
    from pipeline.run.tasks import DatasetError

    args = build_parser().parse_args(argv)
    install_handlers()
    _one_line_warnings()
    try:
        if args.command == "score":
            return _score(args)
        return _run(args)
    except DatasetError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except CacheURLError as exc:
        print(f"error: bad cache URL: {exc}", file=sys.stderr)
        return 2
    except DeviceError as exc:
        print(f"error: GPU unusable: {exc}", file=sys.stderr)
        return 3
    except RunFolderError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:  # before the run's outputs existed
        print(f"interrupted by {signal_name(signal_of(exc))}", file=sys.stderr)
        return exit_code(signal_of(exc))


def _one_line_warnings() -> None:
    """Warnings (a damaged cache, a malformed cache record) print as one line each."""
    import warnings

    warnings.formatwarning = lambda message, category, *args, **kwargs: f"warning: {message}\n"


def _run(args) -> int:
    from pipeline.run.options import RunOptions
    from pipeline.run.runner import Run

    if args.force_cpu and args.force_gpu:
        print("error: -m (CPU) and -g (GPU) exclude each other", file=sys.stderr)
        return 2
    if args.depth is not None and not 0 <= args.depth <= 4:
        print(f"error: depth must be 0 to 4, got {args.depth}", file=sys.stderr)
        return 2
    if args.workers is not None and args.workers < 1:
        print("error: -w needs at least 1 worker", file=sys.stderr)
        return 2
    opts = RunOptions(dataset=args.dataset, count=args.count, once=args.once, initial=args.initial,
                      timeout=args.timeout, timing=args.timing, force_cpu=args.force_cpu,
                      force_gpu=args.force_gpu, export_best=args.export_best, workers=args.workers,
                      budget=args.budget, cache_url=args.cache_url, out_dir=args.out_dir, seed=args.seed,
                      depth=args.depth, states_per_task=args.states_per_task, chunk=args.chunk, gpus=args.gpus,
                      procs_per_gpu=args.procs_per_gpu,
                      mechanisms=tuple(m for m in MECHANISMS if m not in args.without),
                      lease_ttl=args.lease_ttl, local_cache=args.local_cache)
    return Run(opts).execute()


def _score(args) -> int:
    from pipeline.run.score import score_submission
    from pipeline.run.tasks import load_solutions, load_tasks

    try:
        with open(args.submission) as f:
            submission = json.load(f)
    except (OSError, ValueError, RecursionError) as exc:
        print(f"error: cannot read submission {args.submission}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    solutions = load_solutions(args.dataset)
    tasks = None
    if args.count or args.html is not None:
        tasks, _ = load_tasks(args.dataset, args.count)
    if args.count:
        ids = {t.id for t in tasks}
        solutions = {k: v for k, v in solutions.items() if k in ids}
    correct, total, per_task = score_submission(submission, solutions)
    solved_tasks = sum(all(v) for v in per_task.values())
    print(f"tasks fully correct: {solved_tasks}/{len(per_task)}")
    if isinstance(submission, dict):
        _print_overlap(submission, solutions, args.dataset)
    if args.html is not None:
        from pipeline.run.report_html import write_score_page

        path = args.html or os.path.join(os.path.dirname(os.path.abspath(args.submission)), "score.html")
        write_score_page(path, tasks, submission, solutions, args.submission)
        print(f"page: {path}")
    print(f"score: {correct}/{total}")
    return 0


def _print_overlap(submission: dict, solutions: dict, dataset: str) -> None:
    """Say how many of the submission's tasks the dataset lacks, and the other way round."""
    extra = sum(1 for k in submission if k not in solutions)
    missing = sum(1 for k in solutions if k not in submission)
    if extra:
        print(f"{extra} of the submission's {len(submission)} tasks are not in {dataset}")
    if missing:
        print(f"{missing} of the {len(solutions)} scored tasks of {dataset} are not in the submission (scored wrong)")
