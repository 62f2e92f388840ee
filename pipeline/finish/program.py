"""Programs found by the search, as data and as straight-line Python source."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.finish.inline import chain_source, layer_calls


def plain_grid(grid) -> list:
    """A grid as a list of rows of Python ints (from a 2-D NumPy array or any nested sequence)."""
    if isinstance(grid, np.ndarray):
        return grid.tolist()
    return [[int(v) for v in row] for row in grid]


@dataclass(frozen=True, eq=False)
class FoundProgram:
    """A ranked program for one task and its batched-evaluation predictions for the test inputs.

    ``steps`` is the chain of ``(primitive name, args)``; a learned colour table, if any, is the
    last step (``colormap``). ``layers``, for a layered composition, are further chains on the
    input, each painted over the result of those before it where it is non-zero (those whose
    indices are in ``erasers`` instead erase it, to 0, where they are 0). ``roles``, when
    set, are the fixed colours of a colour-roles program (:mod:`pipeline.search.colour_roles`): the
    chains run on the input renamed by role, and the result is named back. ``sized``, when set, is
    ``(name, args, rule)``: the result is finally made the size that the size rule ``rule`` gives
    for the input by the size-taking transform ``name`` (:mod:`solvers.primitives.sizes`); with
    ``sized_first``, that transform makes the input the rule's size before the chains run on it. ``rank`` orders programs: solved ones (every train pair fitted)
    above 50, shorter first; others by partial credit (exact pairs + cell accuracy, at most 2).
    ``test_outputs`` holds one grid per test input: a 2-D uint8 NumPy array as the search made it,
    or a list of rows (:func:`plain_grid` gives that form). The search leaves them arrays: a
    depth-2 search's thousands of candidates took 10-15 ms to become lists, and only the few that
    become attempts or are checked against their validation ever need to.
    """

    steps: tuple
    rank: float
    solved: bool
    train_exact: int
    score: float
    test_outputs: tuple  # one grid per test input (see above)
    layers: tuple = ()  # chains of steps painted over ``steps``' result, the last on top
    roles: tuple | None = None  # fixed colours, where the chains run on the input renamed by role
    sized: tuple | None = None  # (transform name, args, size rule) applied last, to the rule's size
    sized_first: bool = False  # ``sized`` applied to the input, before the chains, instead
    erasers: tuple = ()  # indices of the ``layers`` that erase (to 0 where they are 0) rather than paint

    def __eq__(self, other) -> bool:
        """Equal fields, the test outputs compared as grids (an array equals the same rows as lists)."""
        if not isinstance(other, FoundProgram):
            return NotImplemented
        return ((self.steps, self.layers, self.erasers, self.roles, self.sized, self.sized_first, self.rank,
                 self.solved, self.train_exact, self.score)
                == (other.steps, other.layers, other.erasers, other.roles, other.sized, other.sized_first, other.rank,
                    other.solved, other.train_exact, other.score)
                and len(self.test_outputs) == len(other.test_outputs)
                and all(plain_grid(a) == plain_grid(b) for a, b in zip(self.test_outputs, other.test_outputs)))

    __hash__ = None  # mutable-looking contents (arrays): not a dict key

    def identity(self) -> str:
        """What the program computes, as a string (chains, layers, roles, size step): equal for
        two finds of one program, whatever their ranks and predictions' array types."""
        return repr((self.steps, self.layers, self.erasers, self.roles, self.sized, self.sized_first))

    @property
    def size(self) -> int:
        """Number of calls (a layered composition's ``paint``, the colour roles' renamings and the
        size transform with its ``output_size`` included)."""
        return (len(self.steps) + sum(len(layer) for layer in self.layers) + len(layer_calls(len(self.layers), self.erasers))
                + 2 * (self.roles is not None) + 2 * (self.sized is not None))

    @property
    def learned(self) -> int:
        """Number of parameters learnt from the train pairs (a colour table's entries)."""
        return sum(len(a) for chain in (self.steps, *self.layers) for _, args in chain for a in args
                   if isinstance(a, dict))

    def source(self) -> str:
        """Straight-line Python source: ``def solve(I): ...`` using the DSL's primitive names."""
        return chain_source([(name, args) for name, args in self.steps],
                            [[(name, args) for name, args in layer] for layer in self.layers], self.roles,
                            self.sized, self.sized_first, self.erasers)

    def to_dict(self) -> dict:
        """Plain-data form (JSON/msgpack safe) for caches and process boundaries."""
        return {"steps": [[n, _plain(a)] for n, a in self.steps], "rank": self.rank, "solved": self.solved,
                "train_exact": self.train_exact, "score": self.score,
                "test_outputs": [plain_grid(g) for g in self.test_outputs],
                "layers": [[[n, _plain(a)] for n, a in layer] for layer in self.layers],
                "roles": None if self.roles is None else list(self.roles),
                "sized": None if self.sized is None else [self.sized[0], _plain(self.sized[1]), list(self.sized[2])],
                "sized_first": self.sized_first, "erasers": list(self.erasers)}

    @classmethod
    def from_dict(cls, d: dict) -> "FoundProgram":
        """Inverse of :meth:`to_dict`."""
        steps = tuple((n, _unplain(a)) for n, a in d["steps"])
        layers = tuple(tuple((n, _unplain(a)) for n, a in layer) for layer in d.get("layers", ()))
        roles, sized = d.get("roles"), d.get("sized")
        if sized is not None:
            sized = (sized[0], _unplain(sized[1]), tuple(sized[2]))
        return cls(steps, float(d["rank"]), bool(d["solved"]), int(d["train_exact"]), float(d["score"]),
                   tuple(d["test_outputs"]), layers, None if roles is None else tuple(int(c) for c in roles), sized,
                   bool(d.get("sized_first", False)), tuple(int(k) for k in d.get("erasers", ())))


def _plain(args):
    out = []
    for a in args:
        if isinstance(a, dict):
            out.append({"__map__": [[int(k), int(v)] for k, v in sorted(a.items())]})
        else:
            out.append(a)
    return out


def _unplain(args):
    res = []
    for a in args:
        if isinstance(a, dict) and "__map__" in a:
            res.append({int(k): int(v) for k, v in a["__map__"]})
        elif isinstance(a, list):
            res.append(tuple(a))
        else:
            res.append(a)
    return tuple(res)
