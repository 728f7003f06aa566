"""Runtime faults (issue 21, item 5): a kernel raising mid-run names the task and releases every worker; a Ctrl-C
(KeyboardInterrupt) while the calling thread waits on a barrier stops the other workers too; afterwards the
executable runs normally again."""

from __future__ import annotations

import threading
import time
import types

import numpy as np
import pytest

import nnkiln.runtime.executable as executable_module
from nnkiln.blob.writer import BlobBuilder
from nnkiln.errors import BlobError
from nnkiln.kinds import Kind
from nnkiln.runtime import load_blob


def three_queue_executable():  # noqa: ANN201
    """z = ((x + x) + x) + x over three executor queues chained by barriers: queue 0 (the caller's thread) waits for
    queue 1, queue 2 waits for queue 0."""
    b = BlobBuilder()
    x = b.add_io("x", Kind.F32, (1, 4), output=False)
    z = b.add_io("z", Kind.F32, (1, 4), output=True)
    t1, t2 = b.add_arena(Kind.F32, (1, 4), 0), b.add_arena(Kind.F32, (1, 4), 64)
    bar0, bar1 = b.add_barrier(0), b.add_barrier(1)
    b.add_task("tosa.add", [t1, x], [t2], executor_index=0, waits=[bar0], updates=[bar1])
    b.add_task("tosa.add", [x, x], [t1], executor_index=1, updates=[bar0])
    b.add_task("tosa.add", [t2, x], [z], executor_index=2, waits=[bar1])
    return load_blob(b.finish_encoded(arena_lower_bound_bytes=128, target="cpu", pipeline="test")[1])


def _replace(exe, task: int, fn) -> None:  # noqa: ANN001
    for queue in exe._units:
        for k, (old, i, waits, updates) in enumerate(queue):
            if i == task:
                queue[k] = (fn(old), i, waits, updates)


X = np.arange(4, dtype=np.float32).reshape(1, 4)


def test_the_three_queues_compute_z() -> None:
    np.testing.assert_array_equal(three_queue_executable().run({"x": X})["z"], 4 * X)


def test_a_kernel_raising_mid_run_names_the_task_and_releases_the_workers() -> None:
    exe = three_queue_executable()
    before = threading.active_count()

    def boom(old):  # noqa: ANN001, ANN202
        def fn(views):  # noqa: ANN001, ANN202
            raise RuntimeError("boom")
        return fn

    _replace(exe, 1, boom)  # queue 1: queue 0 waits for it, queue 2 waits for queue 0
    with pytest.raises(BlobError, match=r"task 1 \(tosa.add\) failed: RuntimeError: boom"):
        exe.run({"x": X})
    assert threading.active_count() == before  # every worker returned


def test_ctrl_c_while_waiting_on_a_barrier_stops_every_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    exe = three_queue_executable()
    caller = threading.current_thread()

    class InterruptedWait(threading.Condition):
        def wait(self, timeout=None):  # noqa: ANN001, ANN202
            if threading.current_thread() is caller:
                raise KeyboardInterrupt  # what a Ctrl-C does to the caller blocked here
            return super().wait(timeout)

    def slow(old):  # noqa: ANN001, ANN202
        def fn(views):  # noqa: ANN001, ANN202
            time.sleep(0.2)  # the caller's queue reaches its barrier first
            old(views)
        return fn

    before = threading.active_count()
    _replace(exe, 1, slow)
    fake = types.SimpleNamespace(**{**vars(threading), "Condition": InterruptedWait})  # only the runtime's conditions
    monkeypatch.setattr(executable_module, "threading", fake)
    with pytest.raises(KeyboardInterrupt):
        exe.run({"x": X})
    assert threading.active_count() == before, threading.enumerate()  # queue 2, waiting on a barrier never updated, was released
    monkeypatch.undo()
    np.testing.assert_array_equal(exe.run({"x": X})["z"], 4 * X)  # the lock was released: runs again
