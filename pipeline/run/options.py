"""The options of one run (``python -m pipeline run``), as the command line gives them."""
from __future__ import annotations

from dataclasses import dataclass

from pipeline.search.mechanisms import MECHANISMS

# Leases are renewed by a heartbeat every third of this, so it only bounds how long a killed
# instance's tasks wait before another instance takes them over.
LEASE_TTL = 6.0


@dataclass
class RunOptions:
    """The options of ``python -m pipeline run`` (see the README for each flag)."""

    dataset: str = "arc1-train"
    count: int = 0
    once: bool = False
    initial: bool = False
    timeout: float = 5.0
    timing: bool = False
    force_cpu: bool = False
    force_gpu: bool = False
    export_best: bool = False
    workers: int | None = None
    budget: float | None = None
    cache_url: str | None = None
    out_dir: str | None = None
    seed: int = 0
    depth: int | None = None  # None: 3 on a GPU, 2 on the CPU
    states_per_task: int = 8000
    mechanisms: tuple = MECHANISMS  # those of pipeline.search.mechanisms.MECHANISMS switched on
    chunk: int | None = None
    gpus: int | None = None
    procs_per_gpu: int | None = None  # None: GPU_PROCS_DEFAULT within this instance's CPU share
    lease_ttl: float = LEASE_TTL
    local_cache: str = ".cache"
