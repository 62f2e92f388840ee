"""Export of the best solvers as one importable Python module (``run_card.sh -b``)."""
from __future__ import annotations

import os
import re
import tempfile

#: The exported module's name: importable from its folder (``import best_solvers``) without
#: hiding the ``solvers`` package (the DSL) that it imports.
EXPORT_MODULE = "best_solvers"

HEADER = '''"""Best solver of every task, exported by arcbatt ({dataset}).

Each ``solve_<task id>(I)`` takes a 2-D grid (numpy uint8 array or list of lists) and returns the
predicted output grid; ``SOLVERS`` maps task ids to them. Needs only the DSL (``solvers.dsl``).
"""
import numpy as np

from solvers.dsl import *  # noqa: F401,F403
'''


def function_name(task_id: str) -> str:
    """A valid Python function name for a task id."""
    return "solve_" + re.sub(r"\W", "_", task_id)


def write_solvers_module(path: str, sources: dict, dataset: str) -> None:
    """Write ``sources`` (task id -> canonical ``def solve(I)`` source) as a module at ``path``."""
    parts = [HEADER.format(dataset=dataset)]
    for task_id, src in sources.items():
        name = function_name(task_id)
        body = src.replace("def solve(I):", f"def {name}(I):\n    I = np.asarray(I, dtype=np.uint8)", 1)
        parts.append("\n" + body)
    parts.append("\nSOLVERS = {\n" + "".join(f"    {task_id!r}: {function_name(task_id)},\n"
                                           for task_id in sources) + "}\n")
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".solvers-", suffix=".py")
    with os.fdopen(fd, "w") as f:
        f.write("".join(parts))
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
