"""The state table works out parents and transforms from merged outputs' positions."""
from types import SimpleNamespace

import numpy as np

from pipeline.search.problem import Block
from pipeline.search.state_table import MergedStates, StateTable


def block(tasks, gids):
    return Block(None, np.asarray(tasks, dtype=np.int64), np.asarray(gids, dtype=np.int64))


def test_merged_states_of_several_blocks():
    a, b = block([0, 0, 1], [0, 5, 1]), block([1, 2], [7, 2])
    merged = MergedStates([SimpleNamespace(block=a, transform=3), SimpleNamespace(block=b, transform=4),
                           SimpleNamespace(block=a, transform=9)])
    idx = np.array([0, 2, 3, 4, 6, 7])
    assert merged.size == 8
    assert merged.tasks(idx).tolist() == [0, 1, 1, 2, 0, 1]
    assert merged.parents(idx).tolist() == [0, 1, 7, 2, 5, 1]
    assert merged.transform(idx).tolist() == [3, 3, 4, 4, 9, 9]


def test_paths_follow_parents_across_batches():
    table = StateTable(3)  # states 0-2: the inputs of three tasks
    roots = block([0, 1, 2], [0, 1, 2])
    first = table.add(np.array([1, 2, 3]), MergedStates([SimpleNamespace(block=roots, transform=5),
                                                         SimpleNamespace(block=roots, transform=6)]))
    assert first == 3 and table.size == 6  # states 3, 4, 5: transform 5 of task 1, 5 of task 2, 6 of task 0
    level2 = block([0, 1], [5, 3])
    second = table.add(np.array([1, 2]), MergedStates([SimpleNamespace(block=level2, transform=8),
                                                       SimpleNamespace(block=level2, transform=2)]))
    assert second == 6
    assert table.path(6) == [5, 8]  # state 3 (task 1), then transform 8
    assert table.path(7) == [6, 2]  # state 5 (task 0), then transform 2
    assert table.path(4) == [5] and table.path(2) == []
    assert table.paths([6, 2, 7, 4, 6]) == [[5, 8], [], [6, 2], [5], [5, 8]]
    assert table.paths([]) == []
    assert table.add(np.array([], dtype=np.int64), MergedStates([SimpleNamespace(block=level2, transform=1)])) == 8
    assert table.size == 8


def test_paths_of_many_states_are_their_paths_one_by_one():
    rng = np.random.default_rng(3)
    tasks = 4
    table = StateTable(tasks)
    ids, task_of = list(range(tasks)), list(range(tasks))
    for _ in range(6):  # levels of batches, each from some of the states so far, in several outputs
        parents = rng.choice(len(ids), size=min(len(ids), int(rng.integers(1, 9))), replace=False)
        blk = block([task_of[i] for i in parents], [ids[i] for i in parents])
        outputs = [SimpleNamespace(block=blk, transform=int(t)) for t in rng.integers(0, 50, size=3)]
        merged = MergedStates(outputs)
        new = np.sort(rng.choice(merged.size, size=rng.integers(1, merged.size + 1), replace=False))
        first = table.add(new, merged)
        ids += list(range(first, first + len(new)))
        task_of += merged.tasks(new).tolist()
    gids = rng.integers(0, table.size, size=40).tolist()
    assert table.paths(gids) == [table.path(g) for g in gids]


def test_ascending_positions_locate_as_any_positions_do():
    """Many ascending positions (all new states of an absorb) take the run-based lookup; the
    tasks, parents and transforms are those of a position-by-position lookup."""
    rng = np.random.default_rng(7)
    blocks = [block(rng.integers(0, 9, size=n).tolist(), rng.integers(100, 999, size=n).tolist())
              for n in (5, 0, 40, 17)]
    outputs = [SimpleNamespace(block=blocks[int(k)], transform=t) for t, k in enumerate(rng.integers(0, 4, size=12))]
    merged = MergedStates(outputs)
    for size in (merged.size, merged.size // 2, 60):
        idx = np.sort(rng.choice(merged.size, size=size, replace=False))
        assert len(idx) > 4 * len(merged.offsets)
        owner = np.searchsorted(merged.offsets, idx, side="right") - 1
        local = idx - merged.offsets[owner]
        want_task = [outputs[o].block.task[i] for o, i in zip(owner, local)]
        assert merged.tasks(idx).tolist() == want_task
        assert merged.parents(idx).tolist() == [outputs[o].block.gid[i] for o, i in zip(owner, local)]
        assert merged.transform(idx).tolist() == owner.tolist()
