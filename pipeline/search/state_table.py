"""Where every state of a search came from, kept on the host for rebuilding programs.

A level makes tens of millions of states, and only the few that reach a leaderboard ever need
their program. So the table does not write a parent and a transform per state: it keeps, for each
batch of new states, their positions among the merged outputs they were found in
(:class:`MergedStates`), and works a state's parent and transform out when its path is asked for.
"""
from __future__ import annotations

import bisect

import numpy as np


class MergedStates:
    """The states of several transforms' outputs numbered one after another (output ``j``'s
    states follow those of outputs ``0..j-1``): for any of them, its task, the id of the state it
    was made from and the transform (None for the identity). Holds host arrays only."""

    def __init__(self, outputs: list):
        """``outputs``: objects with ``block`` (a :class:`pipeline.search.problem.Block`) and
        ``transform`` (an index or None), in order."""
        self.offsets = np.cumsum([0] + [o.block.num_states for o in outputs])
        transforms = [o.transform for o in outputs]
        self.transforms = None if None in transforms else np.asarray(transforms, dtype=np.int64)
        # The outputs of one block share its states: their host arrays are kept once.
        index: dict = {}
        self._owner = np.array([index.setdefault(id(o.block), len(index)) for o in outputs])
        hosts = {id(o.block): o.block.host_ids() for o in outputs}
        self._hosts = [hosts[key] for key in index]

    @property
    def size(self) -> int:
        """The number of merged states."""
        return int(self.offsets[-1])

    def _locate(self, idx):
        idx = np.asarray(idx)
        if len(idx) > 4 * len(self.offsets) and not (idx[1:] < idx[:-1]).any():
            # Ascending (all new states, as found): each output's run of them from a search of its
            # bounds, not a search per state (millions per absorb on a level that keeps them).
            ends = np.searchsorted(idx, self.offsets[1:], side="left")
            which = np.repeat(np.arange(len(ends)), np.diff(ends, prepend=0))
        else:
            which = np.searchsorted(self.offsets, idx, side="right") - 1
        return which, idx - self.offsets[which]

    def _gather(self, idx, part: int):
        which, local = self._locate(idx)
        if len(self._hosts) == 1:
            return self._hosts[0][part][local]
        out = np.empty(len(idx), dtype=np.int64)
        owner = self._owner[which]
        for k, host in enumerate(self._hosts):
            sel = owner == k
            out[sel] = host[part][local[sel]]
        return out

    def tasks(self, idx: np.ndarray) -> np.ndarray:
        """The task of each merged state ``idx``."""
        return self._gather(idx, 0)

    def parents(self, idx: np.ndarray) -> np.ndarray:
        """The id of the state each merged state ``idx`` was made from."""
        return self._gather(idx, 1)

    def transform(self, idx: np.ndarray):
        """The transform of each merged state ``idx`` (None: the identity)."""
        return None if self.transforms is None else self.transforms[self._locate(idx)[0]]


class StateTable:
    """Ids of every state ever created: a task's input is state ``task``, new states take the
    next ids in batches; :meth:`path` gives a state's transforms from its task's input."""

    def __init__(self, num_tasks: int):
        self.num_tasks = num_tasks
        self.size = num_tasks
        self._first: list[int] = []  # id of each batch's first state
        self._batches: list[tuple] = []  # (merged positions of its states, MergedStates)

    def add(self, idx, merged: MergedStates) -> int:
        """Register new states: the merged states ``idx`` of ``merged`` (made by a transform),
        in order; returns the id of the first (the others follow one by one). ``idx`` is an array,
        anything with a length that ``np.asarray`` makes one of (read when a path needs it), or a
        CuPy array (left on the GPU: a path gathers and copies only the positions it needs)."""
        first = self.size
        if len(idx):
            self._first.append(first)
            self._batches.append((idx, merged))
            self.size += len(idx)
        return first

    def path(self, gid: int) -> list[int]:
        """Transform indices from the task's input to state ``gid``."""
        steps = []
        while gid >= self.num_tasks:
            b = bisect.bisect_right(self._first, gid) - 1
            idx, merged = self._batches[b]
            at = _take(idx, np.arange(gid - self._first[b], gid - self._first[b] + 1))
            steps.append(int(merged.transform(at)[0]))
            gid = int(merged.parents(at)[0])
        return steps[::-1]

    def paths(self, gids) -> list[list[int]]:
        """:meth:`path` of every state of ``gids``, worked out together: a step back for all of
        them at once, batch by batch (a search's thousands of candidates took tens of small array
        calls each one at a time)."""
        cur = np.array(gids, dtype=np.int64).reshape(-1)
        steps: list[list[int]] = [[] for _ in range(cur.shape[0])]
        first = np.asarray(self._first, dtype=np.int64)
        live = np.nonzero(cur >= self.num_tasks)[0]
        while live.shape[0]:
            batch = np.searchsorted(first, cur[live], side="right") - 1
            for b in np.unique(batch).tolist():
                sel = live[batch == b]
                idx, merged = self._batches[b]
                at = _take(idx, cur[sel] - first[b])
                for k, t in zip(sel.tolist(), merged.transform(at).tolist()):
                    steps[k].append(t)
                cur[sel] = merged.parents(at)
            live = live[cur[live] >= self.num_tasks]
        return [s[::-1] for s in steps]


def _take(idx, at: np.ndarray) -> np.ndarray:
    """``idx[at]`` as a host array; from a CuPy array, only those positions are gathered and copied."""
    if hasattr(idx, "__cuda_array_interface__"):
        import cupy

        return cupy.asnumpy(idx[cupy.asarray(at)])
    return np.asarray(idx)[at]
