"""No import circle among the project's modules: each package's modules import only downwards.

The imports are read from the sources with ``ast`` (module level and inside functions alike: a
lazy import is still a dependency), resolved to the project's modules, and searched for a cycle.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("pipeline", "solvers", "cache")


def project_modules(root: Path) -> dict[str, Path]:
    """Every module of the project's packages under ``root``: dotted name -> file."""
    modules = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def imports_of(name: str, path: Path, modules: dict) -> set[str]:
    """The project modules that module ``name`` (its source at ``path``) imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            # "from a import b": a's submodule b when there is one, else a itself
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                       for alias in node.names]
        else:
            continue
        found.update(t for t in targets if t in modules and t != name)
    return found


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (module -> modules it imports) as a list of modules whose first
    and last are the same, or None when there is none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            cycle = visit(start)
            if cycle:
                return cycle
    return None


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the project modules it imports, for the packages under ``root``."""
    modules = project_modules(root)
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def test_the_project_has_no_import_cycle():
    cycle = find_cycle(import_graph(ROOT))
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_a_cycle_is_found(tmp_path):
    """The check sees a circle of two modules, one of them importing lazily inside a function, and
    one through a package's ``from ... import`` of a submodule."""
    (tmp_path / "solvers").mkdir()
    (tmp_path / "solvers" / "__init__.py").write_text("")
    (tmp_path / "solvers" / "a.py").write_text("from solvers.b import thing\n")
    (tmp_path / "solvers" / "b.py").write_text("def thing():\n    from solvers import a\n    return a\n")
    for package in ("pipeline", "cache"):
        (tmp_path / package).mkdir()
    cycle = find_cycle(import_graph(tmp_path))
    assert cycle is not None and set(cycle) == {"solvers.a", "solvers.b"}

    (tmp_path / "solvers" / "b.py").write_text("def thing():\n    return 1\n")
    assert find_cycle(import_graph(tmp_path)) is None
