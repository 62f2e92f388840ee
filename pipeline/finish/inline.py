"""Inline step: straight-line solver source -> canonical source and solver id.

A found program is straight-line Python::

    def solve(I):
        x1 = rot90(I)
        x2 = crop_content(x1)
        x3 = recolor(x2, 3)
        O = overlay_or(x3, x1)
        return O

:func:`inline` parses it with :mod:`ast` (never executes it), turns it into a
DAG of calls and prints the canonical form::

    def solve(I):
        x1 = rot90(I)
        O = overlay_or(recolor(crop_content(x1), 3), x1)
        return O

How the canonical form is built, and why:

* **Graph, not text.** Every call becomes a node whose arguments are other nodes
  (or literal constants). Names, aliases (``a = b``), re-assignments, nesting
  versus temporaries and the order of statements are lost on the way in, so two
  programs that compute the same call graph get the same source.
* **Dead code** is whatever the returned value does not reach; it is dropped,
  and uses are counted on the live graph only (a value used once by live code
  and once by dead code is folded).
* **Folding.** A call (or dict literal) used once is written in place; one used
  two or more times stays a variable (no common-subexpression elimination: two
  equal calls written twice stay two calls). Int, bool, str and tuple constants are
  immutable and always written in place, even when bound to a variable. A dict
  literal bound to a variable used twice stays one shared variable (a callee
  could mutate it).
* **Order and names.** Variables are numbered ``x1, x2, ...`` in the order of a
  left-to-right, depth-first, post-order walk from the returned value: each
  variable is defined right before its first use and after everything it needs.
  This order depends on the graph only, so the order of independent source lines
  does not change the id; for the canonical source it is also the order of
  first definition. The parameter becomes ``I`` and the result ``O``.
* **Nesting cap.** A single-use call whose nesting would reach
  :data:`MAX_NESTING` calls is kept as a variable, so very long chains stay
  below CPython's parser limit (200 nested brackets) and the output always
  re-parses. The rule is structural, so the form stays a fixed point.
* **Literals** are printed as Python's ``repr`` of their value (what
  ``ast.unparse`` prints): ``-3``, ``'down'``, ``(1, 2)``, ``(1,)``, dicts
  with sorted keys and Python's own duplicate-key rule applied first. Keyword
  arguments are sorted by name. Strings are accepted besides the ints of the
  brief because the DSL's primitives take them (``gravity(x, 'down')``).

Meaning is preserved for pure callees: the inlined source calls the same
functions on the same values. What may differ when callees raise: dropped dead
code no longer raises, and reordering may change which of two failing calls
raises first (both forms still raise).

Rejected with :class:`InlineError` (a ``ValueError`` with a one-line message
naming the line): anything other than one ``def solve(<one parameter>)`` whose
body is assignments to plain names followed by one ``return``; expressions
other than calls of plain global names, names, int/bool/str constants and
tuple or dict literals of those; names read before they are assigned (or never
assigned); callees that are also local variables; callees that would clash with
the canonical names (``I``, ``O``, ``x<digits>``); callees that can observe or
escape the sandbox (``eval``, ``exec``, ``locals``, dunder names, ...).
"""

from __future__ import annotations

import ast
import hashlib
import keyword
import re
from dataclasses import dataclass

__all__ = ["Inlined", "InlineError", "inline", "chain_source", "solver_id", "MAX_NESTING"]

#: Most calls nested in one expression of the canonical source; deeper single-use
#: calls are kept as variables. Far above real solvers (3-10 lines), far below
#: CPython's limit of 200 nested brackets.
MAX_NESTING = 32

#: Deepest nesting of tuple literals accepted in constants.
MAX_LITERAL_NESTING = 8

_RESERVED = re.compile(r"(?:I|O|x[0-9]+)\Z")

# Callees that can observe local names (renaming would change meaning), run
# code, or reach outside: never part of a solver.
_FORBIDDEN_CALLEES = frozenset(
    {
        "eval", "exec", "compile", "open", "input", "print", "breakpoint", "help",
        "exit", "quit", "globals", "locals", "vars", "dir", "getattr", "setattr",
        "delattr", "hasattr", "solve",
    }
)

_PARAM = 0
_CALL = 1
_DICT = 2


@dataclass(frozen=True)
class Inlined:
    """Result of :func:`inline`.

    ``source``: canonical source (``def solve(I): ... return O``, 4-space indent,
    trailing newline); ``solver_id``: first 16 hex digits of the sha256 of
    ``source``; ``size``: number of calls in ``source``.
    """

    source: str
    solver_id: str
    size: int


class InlineError(ValueError):
    """A source that is not an acceptable straight-line solver (one-line message)."""

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))


def solver_id(canonical_source: str) -> str:
    """Return the solver id of an already canonical source: sha256 hex, first 16 chars."""
    return hashlib.sha256(canonical_source.encode("utf-8")).hexdigest()[:16]


# ---------------------------------------------------------------- literals


def _literal_text(value) -> str:
    """Canonical text of a literal value (int, bool, str, tuple of those, dict)."""
    if isinstance(value, dict):
        try:
            items = sorted(value.items(), key=lambda kv: kv[0])
        except TypeError:
            raise InlineError("dict literal with keys of mixed types") from None
        return "{" + ", ".join(f"{_literal_text(k)}: {_literal_text(v)}" for k, v in items) + "}"
    try:
        return repr(value)
    except ValueError as e:  # int too large for str()
        raise InlineError(f"constant cannot be printed: {e}") from None


def _check_literal(value, depth: int = 0) -> None:
    """Validate a Python value given to :func:`chain_source` as a step argument."""
    t = type(value)
    if t is int or t is bool or t is str:
        return
    if t is tuple:
        if depth >= MAX_LITERAL_NESTING:
            raise InlineError("tuple constant nested too deeply")
        for v in value:
            _check_literal(v, depth + 1)
        return
    if t is dict and depth == 0:
        for k, v in value.items():
            _check_literal(k, 1)
            _check_literal(v, 1)
        return
    raise InlineError(
        f"unsupported constant {value!r:.60}: ints, bools, strings, tuples and dicts of those only"
    )


def _imm_value(node: ast.expr, depth: int = 0):
    """Value of an immutable literal (int, bool, str, -int, tuple of those) or raise."""
    if isinstance(node, ast.Constant):
        v = node.value
        if type(v) is int or type(v) is bool or type(v) is str:
            return v
        raise InlineError(
            f"line {node.lineno}: unsupported constant {v!r:.40}: ints, bools and strings only"
        )
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        o = node.operand
        if isinstance(o, ast.Constant) and type(o.value) is int:
            return -o.value
        raise InlineError(f"line {node.lineno}: unary minus is only allowed on an int constant")
    if isinstance(node, ast.Tuple):
        if depth >= MAX_LITERAL_NESTING:
            raise InlineError(f"line {node.lineno}: tuple constant nested too deeply")
        return tuple(_imm_value(e, depth + 1) for e in node.elts)
    raise InlineError(f"line {node.lineno}: unsupported expression {type(node).__name__} inside a constant")


# ---------------------------------------------------------------- parsing


class _Graph:
    """SSA graph of a straight-line solver.

    ``kind[i]``/``data[i]`` describe node ``i``: ``_PARAM`` (the parameter),
    ``_CALL`` with ``(func, args, kwargs)`` or ``_DICT`` with its literal text.
    A reference to a value (``ref``) is a node id (int) or the literal text of
    an immutable constant (str).
    """

    __slots__ = ("kind", "data", "children", "locals", "env")

    def __init__(self, param: str, local_names: set):
        self.kind = [_PARAM]
        self.data = [None]
        self.children = [()]
        self.locals = local_names
        self.env = {param: 0}

    def expr(self, node: ast.expr):
        """Convert an expression to a ref, adding call and dict nodes."""
        if isinstance(node, ast.Name):
            ref = self.env.get(node.id)
            if ref is None:
                if node.id in self.locals:
                    raise InlineError(f"line {node.lineno}: name {node.id!r} used before definition")
                raise InlineError(f"line {node.lineno}: name {node.id!r} is not defined")
            return ref
        if isinstance(node, ast.Call):
            f = node.func
            if not isinstance(f, ast.Name):
                raise InlineError(
                    f"line {node.lineno}: callee must be a plain function name, not {type(f).__name__}"
                )
            name = f.id
            if name in self.locals:
                raise InlineError(f"line {node.lineno}: callee {name!r} is also a local variable")
            if _RESERVED.match(name):
                raise InlineError(f"line {node.lineno}: callee {name!r} clashes with canonical variable names")
            if name in _FORBIDDEN_CALLEES or name.startswith("__"):
                raise InlineError(f"line {node.lineno}: callee {name!r} is not allowed in a solver")
            args = []
            for a in node.args:
                if isinstance(a, ast.Starred):
                    raise InlineError(f"line {node.lineno}: starred arguments are not allowed")
                args.append(self.expr(a))
            kwargs = []
            for k in node.keywords:
                if k.arg is None:
                    raise InlineError(f"line {node.lineno}: **kwargs arguments are not allowed")
                kwargs.append((k.arg, self.expr(k.value)))
            kwargs.sort(key=lambda kv: kv[0])
            children = [r for r in args if r.__class__ is int]
            children.extend(r for _, r in kwargs if r.__class__ is int)
            self.kind.append(_CALL)
            self.data.append((name, args, kwargs))
            self.children.append(children)
            return len(self.kind) - 1
        if isinstance(node, ast.Dict):
            d = {}
            for k, v in zip(node.keys, node.values):
                if k is None:
                    raise InlineError(f"line {node.lineno}: ** unpacking in a dict is not allowed")
                d[_imm_value(k, 1)] = _imm_value(v, 1)
            self.kind.append(_DICT)
            self.data.append(_literal_text(d))
            self.children.append(())
            return len(self.kind) - 1
        if isinstance(node, (ast.Constant, ast.UnaryOp, ast.Tuple)):
            return _literal_text(_imm_value(node))
        raise InlineError(f"line {node.lineno}: unsupported expression {type(node).__name__}")


def _parse(source: str):
    """Parse and check the solver; return ``(graph, output_ref)``."""
    if not isinstance(source, str):
        raise InlineError(f"source must be str, not {type(source).__name__}")
    try:
        module = ast.parse(source)
    except SyntaxError as e:
        raise InlineError(f"syntax error at line {e.lineno}: {e.msg}") from None
    except (ValueError, RecursionError, MemoryError) as e:
        raise InlineError(f"cannot parse source: {type(e).__name__}: {e}") from None
    body = module.body
    if len(body) != 1 or not isinstance(body[0], ast.FunctionDef):
        first = next((s for s in body if not isinstance(s, ast.FunctionDef)), None)
        if first is not None:
            raise InlineError(
                f"line {first.lineno}: only 'def solve(I): ...' is allowed at top level, "
                f"found {type(first).__name__}"
            )
        raise InlineError(f"expected exactly one function 'solve', found {len(body)} definitions")
    fn = body[0]
    if fn.name != "solve":
        raise InlineError(f"line {fn.lineno}: function must be named 'solve', not {fn.name!r}")
    if fn.decorator_list:
        raise InlineError(f"line {fn.lineno}: decorators are not allowed")
    a = fn.args
    if (
        len(a.args) != 1 or a.posonlyargs or a.kwonlyargs or a.vararg or a.kwarg
        or a.defaults or a.kw_defaults
    ):
        raise InlineError(f"line {fn.lineno}: solve must take exactly one plain parameter")
    if a.args[0].annotation is not None or fn.returns is not None:
        raise InlineError(f"line {fn.lineno}: annotations are not allowed")
    param = a.args[0].arg

    stmts = fn.body
    last = stmts[-1]
    for s in stmts:
        if isinstance(s, ast.Return):
            if s is not last:
                raise InlineError(f"line {s.lineno}: return must be the last statement")
        elif not isinstance(s, ast.Assign):
            raise InlineError(
                f"line {s.lineno}: unsupported statement {type(s).__name__}: "
                "only 'name = call(...)' and a final return"
            )
    if not isinstance(last, ast.Return):
        raise InlineError(f"line {last.lineno}: solve must end with 'return <name>'")
    if last.value is None:
        raise InlineError(f"line {last.lineno}: return needs a value")

    local_names = {param}
    for s in stmts[:-1]:
        if len(s.targets) != 1:
            raise InlineError(f"line {s.lineno}: chained assignment is not allowed")
        t = s.targets[0]
        if not isinstance(t, ast.Name):
            raise InlineError(
                f"line {s.lineno}: assignment target must be a plain name, not {type(t).__name__}"
            )
        local_names.add(t.id)

    g = _Graph(param, local_names)
    env = g.env
    for s in stmts[:-1]:
        ref = g.expr(s.value)
        env[s.targets[0].id] = ref
    return g, g.expr(last.value)


# ---------------------------------------------------------------- printing


def _render(g: _Graph, out) -> tuple[str, int]:
    """Canonical source and call count for the value ``out`` of graph ``g``."""
    if out.__class__ is str:  # a constant is returned
        return f"def solve(I):\n    O = {out}\n    return O\n", 0

    children = g.children
    kind = g.kind
    n = len(kind)
    # Pass 1: left-to-right depth-first post-order of the live nodes (iterative:
    # a chain of thousands of statements must not hit the recursion limit).
    state = bytearray(n)
    order = []
    stack = [out]
    while stack:
        v = stack[-1]
        st = state[v]
        if st == 0:
            state[v] = 1
            ch = children[v]
            for i in range(len(ch) - 1, -1, -1):
                c = ch[i]
                if state[c] == 0:
                    stack.append(c)
        else:
            stack.pop()
            if st == 1:
                state[v] = 2
                order.append(v)
    uses = [0] * n
    for v in order:
        for c in children[v]:
            uses[c] += 1

    # Pass 2: print in post-order; a node used twice (or nested too deep) gets
    # the next variable name, everything else is written in place.
    data = g.data
    text = [None] * n
    depth = [0] * n
    lines = ["def solve(I):"]
    calls = 0
    k = 0
    for v in order:
        kv = kind[v]
        if kv == _CALL:
            calls += 1
            name, args, kwargs = data[v]
            d = 0
            parts = []
            for r in args:
                if r.__class__ is int:
                    parts.append(text[r])
                    if depth[r] > d:
                        d = depth[r]
                else:
                    parts.append(r)
            for kw, r in kwargs:
                if r.__class__ is int:
                    parts.append(f"{kw}={text[r]}")
                    if depth[r] > d:
                        d = depth[r]
                else:
                    parts.append(f"{kw}={r}")
            t = f"{name}({', '.join(parts)})"
            d += 1
        elif kv == _DICT:
            t = data[v]
            d = 1
        else:  # the parameter
            text[v] = "I"
            continue
        if v != out and (uses[v] > 1 or d >= MAX_NESTING):
            k += 1
            var = f"x{k}"
            lines.append(f"    {var} = {t}")
            t = var
            d = 0
        text[v] = t
        depth[v] = d
    lines.append(f"    O = {text[out]}")
    lines.append("    return O\n")
    return "\n".join(lines), calls


# ---------------------------------------------------------------- public API


def inline(source: str) -> Inlined:
    """Inline a straight-line solver and return its canonical form.

    ``source`` is ``def solve(I):`` followed by ``name = call(args...)`` lines
    and a final ``return <name>`` (nested calls, aliases ``a = b`` and constants
    bound to names are accepted too). Single-use values are folded into their
    user, multi-use values stay variables named ``x1, x2, ...``, dead
    assignments are dropped and the result is ``O``. The result's ``source`` is
    a fixed point (``inline(r.source) == r``) and does not depend on variable
    names, dead code or the order of independent lines.

    Pure: parses with :mod:`ast`, never executes anything. Raises
    :class:`InlineError` (one-line message) for anything that is not such a
    solver.
    """
    g, out = _parse(source)
    src, calls = _render(g, out)
    return Inlined(src, solver_id(src), calls)


def chain_source(steps, layers=(), roles=None, sized=None, sized_first=False, erasers=()) -> str:
    """Straight-line source of the unary chain ``steps`` applied to ``I``.

    ``steps`` is a list of ``(function_name, extra_args)``; each function gets
    the previous result as first argument, then ``extra_args`` (ints, bools,
    strings, tuples, dicts of those)::

        chain_source([("rot90", ()), ("recolor", (3,))])
        == "def solve(I):\\n    x1 = rot90(I)\\n    O = recolor(x1, 3)\\n    return O\\n"

    ``layers``, when given, are further chains applied to ``I``, each painted over the result
    of the ones before where it is non-zero (``O = paint(base, layer1, layer2, ...)``, the last
    on top); a run of such layers is one ``paint``, and the layers whose indices are in ``erasers``
    instead erase the result to 0 where they are 0 (``erase(result, layer)``). ``sized``, when given as ``(function_name, extra_args, rule)``, makes that result
    the size the size rule gives for the chains' input: ``name(result, output_size(I, rule),
    *extra_args)``; with ``sized_first``, the input is made that size so, and the chains run on
    the result. ``roles`` (a tuple of fixed colours), when given, runs the chains (and the
    size rule) on ``normalise_colours(I, roles)`` and names the result back with
    ``restore_colours``. An empty chain gives the identity solver (``O = I``). Raises
    :class:`InlineError` for a bad function name or argument.
    """
    lines = ["def solve(I):"]
    start = "I"
    if roles is not None:
        _check_literal(tuple(roles))
        lines.append(f"    x0 = normalise_colours(I, {_literal_text(tuple(roles))})")
        start = "x0"
    results = []
    chains = (steps, *layers)
    num_vars = sum(len(c) for c in chains)
    if sized is not None:
        name, extra, rule = sized
        _check_literal(tuple(rule))
        _chain_lines([(name, extra)], 0, [], None)  # checks the name and arguments
        size_line = f"    x{num_vars + 1} = output_size({start}, {_literal_text(tuple(rule))})"
        sized_args = "".join(", " + _literal_text(a) for a in tuple(extra))
    if sized is not None and sized_first:
        lines += [size_line, f"    x{num_vars + 2} = {name}({start}, x{num_vars + 1}{sized_args})"]
        start = f"x{num_vars + 2}"
    last = None if layers or roles is not None or (sized is not None and not sized_first) else "O"
    for k, chain in enumerate(chains):
        first_var = sum(len(c) for c in chains[:k]) + 1
        results.append(_chain_lines(chain, first_var, lines, last, start))
    result = _stacked(results[0], results[1:], erasers)
    if sized is not None and not sized_first:
        lines.append(size_line)
        result = f"{name}({result}, x{num_vars + 1}{sized_args})"
    if roles is not None:
        result = f"restore_colours({result}, I, {_literal_text(tuple(roles))})"
    if result != "O":
        lines.append(f"    O = {result}")
    lines.append("    return O\n")
    return "\n".join(lines)


def layer_calls(count: int, erasers=()) -> list:
    """How ``count`` layers stack (bottom up): the calls that write them, each ``("paint", [layer
    indices])`` for a run of painted layers or ``("erase", [index])`` for a layer in ``erasers``."""
    calls: list = []
    for k in range(count):
        if k in erasers:
            calls.append(("erase", [k]))
        elif calls and calls[-1][0] == "paint":
            calls[-1][1].append(k)
        else:
            calls.append(("paint", [k]))
    return calls


def _stacked(base: str, layers: list, erasers=()) -> str:
    """The expression that stacks the results ``layers`` over ``base`` (see :func:`layer_calls`)."""
    result = base
    for name, ks in layer_calls(len(layers), erasers):
        result = f"{name}({', '.join([result] + [layers[k] for k in ks])})"
    return result


def _chain_lines(steps, first_var: int, lines: list, result: str | None, start: str = "I") -> str:
    """Append the lines of one unary chain on ``start`` to ``lines`` (variables numbered from
    ``first_var``, the last one named ``result`` when given); the name of its result."""
    prev = start
    for i, step in enumerate(steps):
        try:
            name, extra = step
            extra = tuple(extra)
        except (TypeError, ValueError):
            raise InlineError(f"step {i}: expected (function_name, args), got {step!r:.60}") from None
        if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
            raise InlineError(f"step {i}: bad function name {name!r:.60}")
        if _RESERVED.match(name) or name in _FORBIDDEN_CALLEES or name.startswith("__"):
            raise InlineError(f"step {i}: function name {name!r} is not allowed")
        parts = [prev]
        for a in extra:
            _check_literal(a)
            parts.append(_literal_text(a))
        var = result if result and i == len(steps) - 1 else f"x{first_var + i}"
        lines.append(f"    {var} = {name}({', '.join(parts)})")
        prev = var
    return prev
