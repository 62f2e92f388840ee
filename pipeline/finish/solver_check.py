"""Which solver source may run: only source that passes the inliner's checks in this process.

Solver source reaches validation and the exported module from the search, and through the shared
cache from other instances, which anyone who can write to the cache could have planted. So the
source is never trusted because of where it came from: before it runs, this process parses it with
the inliner (:func:`pipeline.finish.inline.inline`: one ``def solve(I)`` of assignments of calls to plain
names, literals, a final return; nothing that can import, reach attributes or escape) and checks
that every callee is a name of the DSL module. The worker then executes it in a namespace that holds
only that module's names and :data:`SAFE_BUILTINS`.
"""
from __future__ import annotations

import ast
import builtins
import importlib
from functools import lru_cache

from pipeline.finish.inline import Inlined, InlineError, inline

#: The module whose public names (``__all__``) solvers may call.
DSL_MODULE = "solvers.dsl"

#: The builtins a solver's namespace holds: pure functions of plain values, nothing that imports,
#: opens files, reaches attributes by name or runs code.
SAFE_BUILTINS = {name: getattr(builtins, name) for name in (
    "abs", "all", "any", "bool", "dict", "enumerate", "float", "int", "len", "list", "max", "min",
    "range", "reversed", "round", "sorted", "str", "sum", "tuple", "zip",
    "ArithmeticError", "Exception", "IndexError", "KeyError", "TypeError", "ValueError",
    "ZeroDivisionError",
)}


@lru_cache(maxsize=None)
def dsl_names(module: str = DSL_MODULE) -> frozenset:
    """The public names of the DSL ``module`` (its ``__all__``)."""
    mod = importlib.import_module(module)
    return frozenset(getattr(mod, "__all__", ()))


def dsl_namespace(module: str = DSL_MODULE) -> dict:
    """A fresh global namespace for solvers: the DSL's names and the safe builtins only."""
    mod = importlib.import_module(module)
    namespace = {name: getattr(mod, name) for name in dsl_names(module)}
    namespace.update(__builtins__=dict(SAFE_BUILTINS), __name__="__solver__")
    return namespace


def callees(source: str) -> set:
    """Names called anywhere in ``source`` (which must parse)."""
    return {node.func.id for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}


def check_solver(source, module: str = DSL_MODULE) -> Inlined:
    """Return the inlined form of ``source`` if it may run, else raise :class:`InlineError`.

    It may run when the inliner accepts it and it calls only names of the DSL ``module``.
    """
    result = inline(source)  # raises InlineError for anything but a straight-line solver
    unknown = sorted(callees(source) - dsl_names(module))
    if unknown:
        raise InlineError(f"calls {', '.join(unknown[:3])}: not a name of {module}")
    return result
