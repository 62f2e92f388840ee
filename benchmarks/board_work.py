"""The host's leaderboard work in a GPU search, call by call.

    python benchmarks/board_work.py [--depth 2]

Searches all of arc1-train twice on GPU 0 (after the warm-up, as a run does) and prints, for the
second search, every call of the board update's host steps that took over 2 ms (reading the
boards' picks, ordering the offers, merging them into the leaderboards, queueing the test grids
of the candidates that enter) and each step's total.
"""
from __future__ import annotations

import argparse
import collections
import functools
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=2)
    args = parser.parse_args()
    import pipeline.search.leaderboard as leaderboard
    import pipeline.search.boards as boards
    import pipeline.search.driver as search
    import pipeline.search.candidate_outputs as candidate_outputs
    from pipeline.search import shards as engine
    from pipeline.run.tasks import load_tasks
    from pipeline.search import kernels

    tasks, _ = load_tasks("arc1-train", 0)
    engine.warm_up(0)
    log: list = []

    def timed(owner, name: str, label: str) -> None:
        real = getattr(owner, name)

        @functools.wraps(real)
        def call(*a, **k):
            t = time.perf_counter()
            try:
                return real(*a, **k)
            finally:
                log.append((label, time.perf_counter() - t))
        setattr(owner, name, call)

    timed(search.Search, "_offer", "offer (all of it)")
    timed(leaderboard.Leaderboards, "offer", "  leaderboards' merge")
    timed(candidate_outputs.CandidateOutputs, "queue", "    candidate outputs queued")
    timed(boards, "offer_order", "  offers' order")
    timed(kernels, "read_board_picks", "picks read")
    for rep in range(2):
        log.clear()
        t = time.perf_counter()
        engine.search_shard(tasks, args.depth, 0, None, 8000, 0)
        print(f"search {rep + 1}: {time.perf_counter() - t:.3f} s")
    totals: dict = collections.defaultdict(float)
    for label, seconds in log:
        totals[label] += seconds
        if seconds > 0.002:
            print(f"{label:24} {seconds * 1000:7.2f} ms")
    print("totals (ms):", {label: round(seconds * 1000, 1) for label, seconds in totals.items()})


if __name__ == "__main__":
    main()
