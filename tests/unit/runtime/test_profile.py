"""``Executable.profile``: every task is recorded once, with start <= end, and the tasks of one executor
instance never overlap (they run in FIFO order on one thread); outputs of ``run`` are unaffected."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import nnkiln

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "small_resnet.onnx"


@pytest.fixture(scope="module")
def module():  # noqa: ANN201
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return nnkiln.load(str(EXAMPLE))


@pytest.mark.parametrize("queues", [1, 2])
def test_profile_records_every_task_once_without_overlap(module, queues: int) -> None:  # noqa: ANN001
    exe = nnkiln.compile(module, queues=queues)
    feeds = {n: np.random.default_rng(0).standard_normal(s).astype(d) for n, s, d in exe.inputs}
    before = exe.run(feeds)
    times = exe.profile(feeds)
    assert sorted(t.task for t in times) == list(range(len(exe.blob.tasks)))
    for t in times:
        task = exe.blob.tasks[t.task]
        assert (t.executor, t.instance) == (task.executor, task.executor_index)
        assert 0 <= t.start_s <= t.end_s
    per_instance: dict[tuple[str, int], list] = {}
    for t in times:
        per_instance.setdefault((t.executor, t.instance), []).append(t)
    for spans in per_instance.values():
        spans.sort(key=lambda t: t.start_s)
        assert all(a.end_s <= b.start_s for a, b in zip(spans, spans[1:]))
        # FIFO: an instance runs its tasks in blob order
        assert [t.task for t in spans] == sorted(t.task for t in spans)
    after = exe.run(feeds)  # the normal path is restored
    for name in before:
        np.testing.assert_array_equal(before[name], after[name])
