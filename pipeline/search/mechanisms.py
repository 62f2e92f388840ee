"""The search's mechanisms beyond plain chains of transforms: their names, and which ones an answer used.

Each mechanism is on by default and can be switched off for an ablation
(``python -m pipeline run --without NAME``):

- ``layers``: layered composition (:mod:`pipeline.search.layers`), a stack of search states painted
  over each other per cell;
- ``colour_layers``: layers painted through a colour table learnt from the train pairs (with
  ``layers`` only);
- ``erasers``: layers that erase the cells below them to 0 where they are 0 (with ``layers`` only);
- ``colour_roles``: each task searched a second time with its examples' colours named by role
  (:mod:`pipeline.search.colour_roles`);
- ``free_steps``: one more level after the search's depth, of a few cheap normalisations only
  (:data:`FREE_STEPS`: crops to the content), applied to the states of the last level that a crop
  can still make right (every train grid at least its output's size, in a task whose outputs are
  smaller than its inputs), so that a depth-``d`` search also finds the depth-``d`` programs
  followed by one of them;
- ``templates``: a task's train outputs as constant grids (:mod:`pipeline.search.templates`), the
  bottom layer of a layered composition or, repeated, an answer of their own;
- ``cell_rules``: each cell's colour looked up by its own colour and by the directions in which its
  row and column hold a non-zero cell, in a table fitted to the train pairs
  (:mod:`pipeline.search.cell_rules`);
- ``sizes``: output-size rules fitted on the train pairs, and size-taking transforms applied to a
  task's candidate chains with the rule's size (:mod:`pipeline.search.sizes`);
- ``shallower``: the layers, templates and sizes also built from the boards and pieces as they
  stood after the level before the last (:attr:`pipeline.search.driver.Search.snapshot`), which the
  last level's candidates push off, so that a search finds what one a level shallower finds through
  them. Its answers are those of the other mechanisms: a report names those.

A report also names two things every run does: ``colour table`` (a colour table learnt from the
train pairs as the last step) and ``partial`` (the attempts come from a program that fits only
some train pairs).
"""
from __future__ import annotations

import ast

MECHANISMS = ("layers", "colour_layers", "erasers", "colour_roles", "free_steps", "templates", "cell_rules",
              "sizes", "shallower")
# The primitives of the free steps (all their argument values).
FREE_STEPS = ("crop_content", "crop_minority")


def mechanisms_of(source: str | None, solved: bool, depth: int | None = None) -> list[str]:
    """The mechanisms an answer used, from its program's canonical source (None: no program,
    the test inputs were the answer), whether it fits every train pair and the search's depth
    (a chain longer than it ends in a free step)."""
    used = []
    if source and ("paint(" in source or "erase(" in source):
        used.append("layers")
        if _colour_layers(source):
            used.append("colour_layers")
        if "erase(" in source:
            used.append("erasers")
    if source and "normalise_colours(" in source:
        used.append("colour_roles")
    if source and "constant(" in source:
        used.append("templates")
    if source and "ray_table(" in source:
        used.append("cell_rules")
    if source and "output_size(" in source:
        used.append("sizes")
    if source and "colormap(" in source:
        used.append("colour table")
    if source and depth is not None and _chain_calls(source) > depth:
        used.append("free_steps")
    if source and not solved:
        used.append("partial")
    return used



# Calls that wrap searched chains without being searched steps themselves (the colour table,
# layers, colour roles, templates, cell rules and output sizes).
_WRAPPERS = {"colormap", "paint", "erase", "normalise_colours", "restore_colours", "constant", "ray_table",
             "output_size", "fit_to", "tile_to", "mirror_tile_to", "resample_to"}


def _assignments(tree) -> dict:
    return {node.targets[0].id: node.value for node in ast.walk(tree)
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)}


def _colour_layers(source: str) -> bool:
    """Whether a canonical source paints a layer through a colour table (a ``colormap`` result
    painted over another grid)."""
    tree = ast.parse(source)
    assigned = _assignments(tree)

    def resolved(node):
        while isinstance(node, ast.Name) and node.id in assigned:
            node = assigned[node.id]
        return node

    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "paint"
               and any(isinstance(arg := resolved(a), ast.Call) and isinstance(arg.func, ast.Name)
                       and arg.func.id == "colormap" for a in node.args[1:])
               for node in ast.walk(tree))


def _chain_calls(source: str) -> int:
    """The searched calls of a canonical source's longest chain: the colour table, the layers'
    ``paint`` and the colour roles' renamings wrap chains and are not counted."""
    tree = ast.parse(source)
    assigned = _assignments(tree)

    def length(node) -> int:
        if isinstance(node, ast.Name):
            return length(assigned[node.id]) if node.id in assigned else 0
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            return 0
        if node.func.id == "normalise_colours":
            return 0
        if node.func.id in ("paint", "erase"):
            return max(map(length, node.args))
        inner = length(node.args[0]) if node.args else 0
        return inner + (node.func.id not in _WRAPPERS)

    return length(assigned["O"]) if "O" in assigned else 0
