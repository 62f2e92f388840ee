"""The post-search mechanisms: the programs that layers, templates, cell rules and sizes build, on
the host with NumPy, for the tasks that no program of a search's boards solves.

They run in this process, or spread over helper processes (:class:`Helpers`) where a GPU search
leaves the host's cores idle: the mechanisms of the snapshot of the level before the last run
while the device searches the last level, and those of the final boards are split between the
helpers. A task's programs never depend on which other tasks are built with it (a colour-roles
variant goes with its raw task, whose solved flag it reads), so the split does not change them.
"""
from __future__ import annotations

import multiprocessing
import time

import numpy as np

from pipeline.finish.program import FoundProgram
from pipeline.search.cell_rules import cell_rule_programs
from pipeline.search.colour_roles import VARIANT_SUFFIX
from pipeline.search.layers import MODES, compose_layers
from pipeline.search.sizes import sized_programs
from pipeline.search.templates import template_chains, template_pieces, template_programs

# Helper processes a search process starts at most: the final boards' mechanisms take 10-20 s
# in one process at depth 3 over 400 tasks, and each helper costs a Python start and 150 MB.
MAX_HELPERS = 8


def _solved(programs: dict, task_id: str) -> bool:
    """Whether a program of ``programs`` (task id -> FoundPrograms) solves task ``task_id``."""
    return any(p.solved for p in programs.get(task_id, ()))


def board_programs(search, tasks, boards) -> dict:
    """The programs of ``boards`` (each task's candidates, best first), by task id."""
    paths = iter(search.table.paths([cand.gid for board in boards[:len(tasks)] for cand in board]))
    named = [(tr.name, tr.args) for tr in search.transforms]
    programs = {}
    for t, task in enumerate(tasks):
        found = []
        for cand in boards[t]:
            steps = [named[i] for i in next(paths)]
            if cand.mapping is not None:
                steps.append(("colormap", (dict(cand.mapping),)))
            # The test outputs stay arrays (see FoundProgram): the few that are used become lists.
            found.append(FoundProgram(tuple(steps), cand.rank, cand.solved, cand.train_exact, cand.score,
                                      tuple(cand.test_outputs)))
        programs[task.id] = found
    return programs


def piece_chains(search, tasks, programs: dict, piece_boards) -> dict | None:
    """The chains of each unsolved task's pieces (those of ``piece_boards``, a
    :class:`~pipeline.search.pieces.PieceBoards`), by task id; None where pieces were not collected."""
    if piece_boards is None:
        return None
    todo = [t for t, task in enumerate(tasks) if not _solved(programs, task.id)]
    gids = [piece_boards.gids_of(t) for t in todo]
    paths = iter(search.table.paths([g for task_gids in gids for g in task_gids]))
    named = [(tr.name, tr.args) for tr in search.transforms]
    return {tasks[t].id: [tuple(named[i] for i in next(paths)) for _ in task_gids]
            for t, task_gids in zip(todo, gids)}


def add_mechanisms(tasks, programs: dict, pieces: dict | None, mechanisms: tuple) -> dict:
    """Add the programs of the post-search mechanisms that are on to ``programs`` (task id ->
    FoundPrograms, best first), in place: layers stacked from ``pieces`` (:func:`piece_chains`;
    None: no layers), templates, cell rules, sizes. Returns the seconds each took."""
    seconds = {}
    if pieces is not None:
        t0 = time.perf_counter()
        _add_layered(tasks, programs, pieces, templates="templates" in mechanisms,
                     modes=tuple(mode for mode in MODES if mode in mechanisms))
        seconds["search.layers"] = time.perf_counter() - t0
    if "templates" in mechanisms:
        _add_answers(tasks, programs, template_programs)
    if "cell_rules" in mechanisms:
        _add_answers(tasks, programs, cell_rule_programs)
    if "sizes" in mechanisms:
        t0 = time.perf_counter()
        _add_sized(tasks, programs)
        seconds["search.sizes"] = time.perf_counter() - t0
    return seconds


def _add_layered(tasks, programs: dict, pieces: dict, templates: bool = False, modes: tuple = MODES) -> None:
    """Add a layered program (:mod:`pipeline.search.layers`) to each task that no plain program solves,
    stacked from the task's ``pieces`` over the input or a program of its leaderboard (or, with
    ``templates``, over one of its train outputs: :mod:`pipeline.search.templates`); ``modes``: the
    ways besides painting a piece may be a layer (:data:`pipeline.search.layers.MODES`)."""
    todo = [t for t, task in enumerate(tasks) if not _solved(programs, task.id)]
    task_pieces = [pieces.get(tasks[t].id, []) for t in todo]
    bottoms = [[p.steps for p in programs[tasks[t].id] if not p.layers] for t in todo]
    if templates:
        task_pieces = [own + template_pieces(tasks[t]) for t, own in zip(todo, task_pieces)]
        bottoms = [own + template_chains(tasks[t]) for t, own in zip(todo, bottoms)]
    found = compose_layers(np, [tasks[t] for t in todo], task_pieces, bottoms, modes=modes)
    for i, program in found.items():
        programs[tasks[todo[i]].id].insert(0, program)


def _add_answers(tasks, programs: dict, make) -> None:
    """Add the programs ``make(task)`` gives (:func:`pipeline.search.templates.template_programs`,
    :func:`pipeline.search.cell_rules.cell_rule_programs`) to each task that no program solves, in
    rank order."""
    for task in tasks:
        if not _solved(programs, task.id):
            found = make(task)
            if found:
                programs[task.id] = sorted(programs[task.id] + found, key=lambda p: -p.rank)


def _add_sized(tasks, programs: dict) -> None:
    """Add sized programs (:mod:`pipeline.search.sizes`) to each task that no program solves (nor
    its raw task, for a colour-roles variant), made from the input and its leaderboard's chains."""
    todo = [t for t, task in enumerate(tasks)
            if not _solved(programs, task.id) and not _solved(programs, task.id.removesuffix(VARIANT_SUFFIX))]
    chains = [[p.steps for p in programs[tasks[t].id] if not p.layers and p.sized is None] for t in todo]
    found = sized_programs([tasks[t] for t in todo], chains)
    for i, sized in found.items():
        task_id = tasks[todo[i]].id
        programs[task_id] = sorted(sized + programs[task_id], key=lambda p: -p.rank)


def built(tasks, programs: dict, pieces: dict | None, mechanisms: tuple) -> tuple[dict, dict]:
    """:func:`add_mechanisms` of ``tasks`` as a helper process runs it: their programs with the
    mechanisms' added (``programs`` may hold other tasks' too) and the seconds each took."""
    mine = {task.id: list(programs[task.id]) for task in tasks}
    return mine, add_mechanisms(tasks, mine, pieces, mechanisms)


def helper_count(cores: int, search_processes: int) -> int:
    """Helper processes for each of ``search_processes`` GPU search processes that share ``cores``
    CPUs: the cores the search processes leave, shared out, at most :data:`MAX_HELPERS` each."""
    return max(0, min(MAX_HELPERS, cores // max(1, search_processes) - 1))


def split(tasks, parts: int, cost) -> list[list]:
    """``tasks`` in at most ``parts`` groups of about equal ``cost(task)`` (the largest first, each
    to the lightest group), a colour-roles variant with its raw task."""
    families: dict = {}
    for task in tasks:
        families.setdefault(task.id.removesuffix(VARIANT_SUFFIX), []).append(task)
    groups: list = [[] for _ in range(max(1, min(parts, len(families))))]
    loads = [0.0] * len(groups)
    for family in sorted(families.values(), key=lambda f: -sum(cost(t) for t in f)):
        g = loads.index(min(loads))
        groups[g] += family
        loads[g] += sum(cost(t) for t in family)
    return [g for g in groups if g]


class Helpers:
    """Helper processes for the post-search mechanisms (none: they run in this process, when the
    result is asked for). Use as a context manager, or call :meth:`close`."""

    def __init__(self, count: int):
        self.count = count
        self._pool = None
        if count > 0:
            from pebble import ProcessPool

            # spawn: the search process holds a CUDA context, which a forked child cannot use.
            self._pool = ProcessPool(max_workers=count, context=multiprocessing.get_context("spawn"))

    def submit(self, tasks, programs: dict, pieces: dict | None, mechanisms: tuple, cost) -> "Built":
        """Start :func:`add_mechanisms` on ``tasks`` (split between the helpers by the ``cost`` of
        those no program solves: the mechanisms build nothing for the others); its
        :meth:`Built.result` gives ``programs`` with the mechanisms' programs added."""
        if self._pool is None:
            return Built(programs, [], lambda: add_mechanisms(tasks, programs, pieces, mechanisms))

        def work(task) -> float:
            return 0.0 if _solved(programs, task.id) else cost(task)

        futures = []
        for group in split(tasks, self.count, work):
            ids = {t.id for t in group}
            futures.append(self._pool.schedule(built, args=(
                group, {i: programs[i] for i in ids},
                None if pieces is None else {i: p for i, p in pieces.items() if i in ids}, mechanisms)))
        return Built(programs, futures, None)

    def close(self) -> None:
        """End the helper processes (work not asked for is lost)."""
        if self._pool is not None:
            self._pool.stop()
            self._pool.join(timeout=30)
            self._pool = None

    def __enter__(self) -> "Helpers":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Built:
    """The post-search mechanisms' programs under way (see :meth:`Helpers.submit`)."""

    def __init__(self, programs: dict, futures: list, run_here):
        self._programs, self._futures, self._run_here = programs, futures, run_here

    def result(self) -> tuple[dict, dict]:
        """The programs, the mechanisms' added, and the seconds each mechanism took (summed over
        the helpers). A helper's error is raised here with its traceback."""
        if self._run_here is not None:
            return self._programs, self._run_here()
        seconds: dict = {}
        for future in self._futures:
            programs, took = future.result()
            self._programs.update(programs)
            for stage, s in took.items():
                seconds[stage] = seconds.get(stage, 0.0) + s
        return self._programs, seconds
