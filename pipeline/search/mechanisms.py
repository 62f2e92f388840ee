"""The search's mechanisms beyond plain chains of transforms: their names, and which ones an answer used.

Each mechanism is on by default and can be switched off for an ablation
(``python -m pipeline run --without NAME``):

- ``layers``: layered composition (:mod:`pipeline.search.layers`), a stack of search states painted
  over each other per cell;
- ``colour_roles``: each task searched a second time with its examples' colours named by role
  (:mod:`pipeline.search.colour_roles`);
- ``sizes``: output-size rules fitted on the train pairs, and size-taking transforms applied to a
  task's candidate chains with the rule's size (:mod:`pipeline.search.sizes`).

A report also names two things every run does: ``colour table`` (a colour table learnt from the
train pairs as the last step) and ``partial`` (the attempts come from a program that fits only
some train pairs).
"""
from __future__ import annotations

MECHANISMS = ("layers", "colour_roles", "sizes")


def mechanisms_of(source: str | None, solved: bool) -> list[str]:
    """The mechanisms an answer used, from its program's canonical source (None: no program,
    the test inputs were the answer) and whether it fits every train pair."""
    used = []
    if source and "paint(" in source:
        used.append("layers")
    if source and "normalise_colours(" in source:
        used.append("colour_roles")
    if source and "output_size(" in source:
        used.append("sizes")
    if source and "colormap(" in source:
        used.append("colour table")
    if source and not solved:
        used.append("partial")
    return used
