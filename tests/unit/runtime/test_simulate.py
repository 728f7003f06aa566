"""The simulator (``nnkiln.runtime.simulate``) on a hand-made blob with hand-computed cycles, and the reader's
checks of the schedule a blob records (``nnkiln.blob.schedule``)."""

from __future__ import annotations

import numpy as np
import pytest

from nnkiln.blob.format import Blob
from nnkiln.blob.reader import decode
from nnkiln.blob.writer import BlobBuilder, encode
from nnkiln.errors import BlobError
from nnkiln.kinds import Kind
from nnkiln.runtime import load_blob
from nnkiln.runtime.simulate import Slot, simulate
from nnkiln.targets import get_target

# npu-small, SHAVE: abs of 1000 floats = 2000 + max(1000 / 8, ceil(8000 * 13 / 48) = 2167) = 4167 cycles;
# add of two = 2000 + max(2000 / 8, 12000 * 13 / 48 = 3250) = 5250 cycles.
ABS, ADD = 4167, 5250


def _blob() -> Blob:
    b = BlobBuilder()
    x = b.add_io("x", Kind.F32, (1, 1000), output=False)
    y = b.add_io("y", Kind.F32, (1, 1000), output=True)
    a0 = b.add_arena(Kind.F32, (1, 1000), 0)
    a1 = b.add_arena(Kind.F32, (1, 1000), 4096)
    bar = b.add_barrier(0)
    b.add_task("tosa.abs", [x], [a0], executor="SHAVE", executor_index=0)
    b.add_task("tosa.negate", [x], [a1], executor="SHAVE", executor_index=1, updates=[bar],
               attrs={"input1_zp": 0, "output_zp": 0})
    b.add_task("tosa.add", [a0, a1], [y], executor="SHAVE", executor_index=0, waits=[bar])
    meta = {"arena_bytes": 8192, "target": "npu-small", "pipeline": "test", **get_target("npu-small").description()}
    blob = b.preview(**meta)
    return b.finish(**meta, **simulate(blob).metadata())


def test_replay_by_hand() -> None:
    blob = _blob()
    sim = simulate(blob)
    assert sim.cycles == [ABS, ABS, ADD]
    assert sim.start == [0, 0, ABS]
    assert sim.makespan == ABS + ADD == sim.critical_path == sim.lower_bound
    assert sim.timeline() == {("SHAVE", 0): [Slot(0, 0, ABS), Slot(2, ABS, ABS + ADD)], ("SHAVE", 1): [Slot(1, 0, ABS)]}
    assert sim.dma_bytes == sim.spill_bytes == 0
    back = decode(encode(blob))
    assert back.metadata["simulated_cycles"] == ABS + ADD and back.metadata["task_start_cycles"] == [0, 0, ABS]
    exe = load_blob(encode(blob))
    assert exe.stats["simulated_cycles"] == ABS + ADD and exe.stats["critical_path_cycles"] == ABS + ADD
    assert exe.timeline() == sim.timeline()
    x = np.linspace(-1, 1, 1000, dtype=np.float32).reshape(1, 1000)
    for seed in (None, 0, 1, 2):
        np.testing.assert_array_equal(exe.run({"x": x}, schedule_seed=seed)["y"], np.abs(x) - x)


def test_the_critical_path_follows_data_not_queues() -> None:
    """Both first tasks on one queue: the makespan grows, the data chain does not."""
    blob = _blob()
    blob.tasks[1].executor_index = 0
    sim = simulate(blob)
    assert sim.makespan == 2 * ABS + ADD and sim.critical_path == ABS + ADD
    assert sim.lower_bound == max(ABS + ADD, -(-(2 * ABS + ADD) // 2))


@pytest.mark.parametrize(("edit", "message"), [
    (lambda m: m.update(task_start_cycles=[0, 0, ABS - 1]), "before its queue or barriers allow"),
    (lambda m: m.update(task_cycles=[ABS, 0, ADD]), "one integer per task"),
    (lambda m: m.update(simulated_cycles=1), "end of the last task"),
    (lambda m: m.update(max_physical_barriers=0), "max_physical_barriers"),
    (lambda m: m.update(executors=[{"kind": "SHAVE", "count": 1}]), "lack"),
    (lambda m: m.update(executors=[{"kind": "GPU", "count": 1}]), "executors"),
    (lambda m: m.update(memories=[{"name": "DDR", "kind": "SRAM", "capacity": 1}]), "memories"),
])
def test_the_reader_checks_the_recorded_schedule(edit, message: str) -> None:  # noqa: ANN001
    blob = _blob()
    edit(blob.metadata)
    with pytest.raises(BlobError, match=message):
        decode(encode(blob))
