"""After the search: inline each found solver, validate it in the pool, store it, pick attempts.

Every solver goes inline -> validate -> store before its predictions are used; one whose isolated
run disagrees with the batched evaluation is dropped and counted. Inlining is done here, never read
from the cache: the source that runs is always what this process derived from its own program. A
cached validation result is used only when its test outputs equal this process's own predictions.
"""
from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass, field

from pipeline.finish.inline import InlineError, inline
from pipeline.search.mechanisms import mechanisms_of
from pipeline.finish.plausible import Plausibility
from pipeline.finish.program import plain_grid
from pipeline.finish.select import choose_attempts
from pipeline.finish.store import StoredSolver, rank_solvers
from pipeline.finish.validate import POOL_ERROR_PREFIX, ValidationJob, ValidationResult

VALID_NS = "valid"
NEGATIVE_TTL = 24 * 3600.0  # failed validations are retried after a day


@dataclass
class ValidationCounts:
    """What happened to the solvers the search found."""

    found: int = 0
    unique: int = 0
    validated: int = 0
    ok: int = 0
    failed: Counter = field(default_factory=Counter)

    def to_dict(self) -> dict:
        """Report form."""
        return {"found": self.found, "unique": self.unique, "validated": self.validated, "ok": self.ok,
                "failed": dict(sorted(self.failed.items()))}


def _grids(arrs) -> list:
    return [a.astype(int).tolist() for a in arrs]


def _first_plausible(programs: list, plausible):
    """The first of ``programs`` (each with ``test_outputs``) whose every prediction is plausible, else the first."""
    return next((p for p in programs if all(plausible(j, g) for j, g in enumerate(p.test_outputs))), programs[0])


def _agrees(res: ValidationResult, prog) -> bool:
    """True when a validation's test outputs are the search's predictions."""
    return [plain_grid(g) for g in res.test_outputs or []] == [plain_grid(g) for g in prog.test_outputs]


class SolverPipeline:
    """Inline, validate and store the solvers of many tasks at once; then choose attempts."""

    def __init__(self, cache, pool, store, timer):
        self.cache = cache
        self.pool = pool
        self.store = store
        self.timer = timer
        self.counts = ValidationCounts()

    def _inline(self, source: str):
        res = inline(source)
        return res.source, res.solver_id, res.size

    def _validate(self, jobs: list) -> list:
        """Validate ``jobs``; jobs the pool failed (not their solvers) are said loudly and sent once more."""
        fresh = self.pool.validate_many(jobs) if jobs else []
        again = [i for i, res in enumerate(fresh) if res.error and res.error.startswith(POOL_ERROR_PREFIX)]
        if again:
            print(f"warning: the validation pool failed {len(again)} solver(s), not their fault "
                  f"({fresh[again[0]].error[:160]}); retrying them", file=sys.stderr)
            for i, res in zip(again, self.pool.validate_many([jobs[i] for i in again])):
                fresh[i] = res
        return fresh

    def finish(self, tasks, programs: dict, task_seconds: dict, key_suffix: str = "", depth: int | None = None) -> dict:
        """Task results (id -> record) for ``tasks`` given the search's ``programs`` per task id
        (found at ``depth``: a longer chain used a free step).

        Solvers are stored under ``task.digest() + key_suffix``: the suffix names the settings
        that produced them (depth, seed, ...), so runs of other settings never mix in.
        """
        # 1. inline every solver (train fit complete) the search found
        with self.timer("inline"):
            todo = []  # (task, FoundProgram, canonical source, id, size)
            for task in tasks:
                seen = set()
                for prog in programs.get(task.id, []):
                    if not prog.solved:
                        continue
                    self.counts.found += 1
                    try:
                        src, sid, size = self._inline(prog.source())
                    except InlineError as exc:
                        self.counts.failed[f"inline: {exc}"[:80]] += 1
                        continue
                    if sid in seen:
                        continue
                    seen.add(sid)
                    self.counts.unique += 1
                    # The simplicity prior: calls, plus every parameter learnt from the train pairs.
                    todo.append((task, prog, src, sid, size + prog.learned))
        # 2. validate in isolated workers (cached: positive forever, negative for a day)
        with self.timer("validate"):
            # The timeout can change a verdict, so it is part of the key.
            keys = [f"{sid}:{task.digest()}:t{self.pool.timeout:g}" for task, _, _, sid, _ in todo]
            known = self.cache.get_many(VALID_NS, keys) if keys else {}
            results: dict[str, ValidationResult] = {}
            for k, v in known.items():
                try:
                    results[k] = ValidationResult.from_dict(v)
                except (TypeError, ValueError):
                    pass  # a malformed cached result: the solver is simply validated again
            jobs, job_keys = [], []
            grids_of: dict = {}
            for (task, prog, src, _, _), k in zip(todo, keys):
                if k in results and not (results[k].ok and not _agrees(results[k], prog)):
                    continue
                # Not cached, or a cached "ok" whose outputs contradict this process's own search
                # (planted or damaged): validated here.
                if task.id not in grids_of:
                    grids_of[task.id] = (_grids(task.train_inputs), _grids(task.train_outputs),
                                         _grids(task.test_inputs))
                tr_in, tr_out, te_in = grids_of[task.id]
                jobs.append(ValidationJob(src, tr_in, tr_out, te_in))
                job_keys.append(k)
            fresh = self._validate(jobs)
            for k, res in zip(job_keys, fresh):
                results[k] = res
                if res.error and res.error.startswith(POOL_ERROR_PREFIX):
                    continue  # the pool failed, not the solver: do not remember it
                self.cache.set(VALID_NS, k, res.to_dict(), ttl=None if res.ok else NEGATIVE_TTL)
        # 3. keep the solvers whose isolated run agrees with the search, store them
        with self.timer("store"):
            accepted: dict = {}
            for (task, prog, src, sid, size), k in zip(todo, keys):
                res = results[k]
                self.counts.validated += 1
                if not res.ok:
                    pool_fault = res.error and res.error.startswith(POOL_ERROR_PREFIX)
                    self.counts.failed["pool error (not the solver)" if pool_fault else res.status] += 1
                    continue
                if not _agrees(res, prog):
                    self.counts.failed["disagrees with search"] += 1
                    continue
                self.counts.ok += 1
                accepted.setdefault(task.id, []).append(
                    StoredSolver(sid, src, res.train_fit, size, res.seconds, res.test_outputs))
            for task in tasks:  # shared with other instances ...
                self.store.add(task.digest() + key_suffix, accepted.get(task.id, []))
            # ... but the attempts come only from solvers validated here: whatever the cache holds
            # (planted or not) never changes this run's submission.
            stored = {task.id: rank_solvers(accepted.get(task.id, []))[: self.store.limit] for task in tasks}
        # 4. attempts: stored solvers first, then the best partial programs; for each test input
        #    the plausible predictions (pipeline.finish.plausible) before the others
        with self.timer("select"):
            records = {}
            for task in tasks:
                solvers = stored[task.id]
                # Programs that fit only some train pairs: most pairs first, then cell accuracy,
                # then fewer calls (a stable sort keeps the search's order among equals).
                partial = sorted((p for p in programs.get(task.id, []) if not p.solved),
                                 key=lambda p: (-p.train_exact, -p.score, p.size + p.learned))
                ranked = [s.test_outputs for s in solvers] + [list(p.test_outputs) for p in partial]
                plausible = Plausibility(task)
                attempts = choose_attempts(ranked, _grids(task.test_inputs), plausible)
                # The program reported: the first whose every prediction is plausible, else the first.
                if solvers:
                    lead = _first_plausible(solvers, plausible)
                    status, program, fit = "solved", lead.source, lead.train_fit
                    used = mechanisms_of(program, True, depth)
                else:
                    status, program = "unsolved", None
                    lead = _first_plausible(partial, plausible) if partial else None
                    fit = lead.train_exact / len(task.train_inputs) if partial else 0.0
                    used = mechanisms_of(lead.source(), False, depth) if partial else []
                records[task.id] = {"id": task.id, "status": status, "program": program,
                                    "train_fit": round(float(fit), 4), "mechanisms": used,
                                    "seconds": round(float(task_seconds.get(task.id, 0.0)), 4),
                                    "attempts": attempts}
        return records
