"""CPU accounting for worker pools: how many processes this run may use.

Server runs start several instances of ``python -m pipeline run`` on one machine (``run_card.sh``
in a shell loop), and Kaggle notebooks have a few slow cores inside a cgroup.  The helpers here
size worker pools from what the process may really use (CPU affinity and cgroup quotas, not the
host's core count) and share the CPUs fairly between the instances that run at the same time.
"""

from __future__ import annotations

import math
import os

import psutil

__all__ = ["usable_cpus", "default_workers", "running_instances", "fair_workers"]

#: Upper bound for default pool sizes: validation workers are cheap, and more than 4 rarely pays
#: against the parent's own work (search, inlining) on the machines this project targets.
MAX_DEFAULT_WORKERS = 4


def usable_cpus() -> int:
    """Return the number of CPUs this process may use, at least 1.

    The CPU affinity mask (``taskset``, container cpusets), capped by a cgroup v2 or v1 CPU quota
    (Docker ``--cpus``, Kaggle): ``os.cpu_count()`` alone would report the host's cores.
    """
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    quota = _cgroup_cpu_quota()
    if quota is not None:
        n = min(n, quota)
    return max(1, n)


def _cgroup_cpu_quota() -> int | None:
    """CPUs allowed by this process's cgroup CPU quota, rounded up; None where there is none."""
    for path, parse in (("/sys/fs/cgroup/cpu.max", lambda t: t.split()),
                        ("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", None)):
        try:
            with open(path) as f:
                text = f.read()
            if parse is not None:
                quota, period = parse(text)
            else:
                with open("/sys/fs/cgroup/cpu/cpu.cfs_period_us") as f:
                    quota, period = text.strip(), f.read().strip()
            if quota in ("max", "-1"):
                return None
            return max(1, math.ceil(int(quota) / int(period)))
        except (OSError, ValueError):
            continue
    return None


def default_workers() -> int:
    """Return the default number of worker processes: ``min(4, usable_cpus())``."""
    return max(1, min(MAX_DEFAULT_WORKERS, usable_cpus()))


def _is_run_cmdline(cmdline: list[str], tag: str) -> bool:
    """True if a command line is an arcbatt run: ``… pipeline run …`` or one carrying ``tag``.

    Matches the module form ``python -m pipeline run …`` and a script form whose argument ends
    with ``pipeline`` or ``pipeline/__main__.py`` followed by ``run``; ``tag`` anywhere in an
    argument also counts (for launchers that mark their processes explicitly).
    """
    if tag and any(tag in arg for arg in cmdline):
        return True
    for prev, arg in zip(cmdline, cmdline[1:]):
        if arg != "run":
            continue
        p = prev.replace("\\", "/").rstrip("/")
        if p == "pipeline" or p.endswith("/pipeline") or p.endswith("pipeline/__main__.py"):
            return True
    return False


def _run_pids(tag: str, cache: str | None = None) -> set[int]:
    """PIDs of live arcbatt run processes on this machine (top-level ones only).

    A process whose parent is itself a matching run is left out: with the ``fork`` start method
    a run's worker processes inherit its command line and must not count as runs. With ``cache``
    (a :func:`pipeline.run.cache_identity.cache_identity`), only runs whose command line names that
    cache count; a run whose cache cannot be read (a tagged launcher) counts.
    """
    matched: dict[int, int] = {}
    for proc in psutil.process_iter(["pid", "ppid", "cmdline", "status"]):
        info = proc.info
        if info.get("status") == psutil.STATUS_ZOMBIE:
            continue
        cmdline = info.get("cmdline") or []
        if cmdline and _is_run_cmdline(list(cmdline), tag) and _uses_cache(proc, list(cmdline), cache):
            matched[info["pid"]] = info.get("ppid") or 0
    return {pid for pid, ppid in matched.items() if ppid not in matched}


def _uses_cache(proc, cmdline: list, cache: str | None) -> bool:
    """True unless ``proc`` is known to use a cache other than ``cache``."""
    if cache is None:
        return True
    from pipeline.run.cache_identity import cmdline_cache_identity

    try:
        theirs = cmdline_cache_identity(cmdline, proc.cwd())
    except psutil.Error:
        return True
    return theirs is None or theirs == cache


def running_instances(tag: str = "arcbatt-run", cache: str | None = None) -> int:
    """Count the live arcbatt run processes on this machine, this one included if it is a run.

    A run is a process whose command line reads ``… pipeline run …`` (``python -m pipeline run``,
    what ``run_card.sh`` starts) or carries ``tag`` in an argument.  Zombies and the forked
    children of a run are not counted.  Processes that cannot be inspected are skipped.  With
    ``cache``, only the runs that share that cache count (see :func:`_run_pids`).
    """
    try:
        return len(_run_pids(tag, cache))
    except Exception:  # psutil failing (permissions, /proc hidden): assume we are alone
        return 0


def fair_workers(requested: int | None, tag: str = "arcbatt-run", cache: str | None = None) -> int:
    """Return the number of worker processes to start.

    ``requested`` (the ``-w`` flag) wins when given (at least 1).  Otherwise the usable CPUs are
    shared between the runs now live on the machine (see :func:`running_instances`; this process
    always counts as one): ``max(1, min(4, usable_cpus() // instances))``.
    """
    if requested is not None:
        return max(1, int(requested))
    try:
        pids = _run_pids(tag, cache)
    except Exception:
        pids = set()
    instances = len(pids | {_own_run_pid(pids)})
    return max(1, min(MAX_DEFAULT_WORKERS, usable_cpus() // max(1, instances)))


def _own_run_pid(run_pids: set[int]) -> int:
    """The PID that stands for this process among the runs: itself or its nearest run ancestor."""
    pid = os.getpid()
    try:
        proc = psutil.Process(pid)
        for anc in [proc, *proc.parents()]:
            if anc.pid in run_pids:
                return anc.pid
    except psutil.Error:
        pass
    return pid
