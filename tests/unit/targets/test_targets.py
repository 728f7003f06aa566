"""The device models (issue 22, item 1): the npu targets as the issue gives them, and what the blob records."""

from __future__ import annotations

import pytest

from nnkiln.errors import NnkilnError
from nnkiln.targets import TARGET_NAMES, ExecutorKind, MemoryKind, find_memory, get_target


def test_npu_is_the_issues_device() -> None:
    t = get_target("npu")
    assert t.is_npu and t.clock_ghz == 1.3 and t.num_barriers == 32
    ddr, cmx = t.memories
    assert (ddr.name, ddr.kind, ddr.size, ddr.bandwidth_gbps, ddr.derate, ddr.count) == (
        "DDR", MemoryKind.DDR, 512 * 1024 * 1024, 8.0, 0.6, 1)
    assert (cmx.name, cmx.kind, cmx.size, cmx.bandwidth_gbps, cmx.derate, cmx.count) == (
        "CMX", MemoryKind.CMX, 917504, 32.0, 1.0, 4)
    assert [(e.kind, e.count) for e in t.executors] == [(ExecutorKind.NCE, 4), (ExecutorKind.SHAVE, 16),
                                                       (ExecutorKind.DMA, 2)]
    assert t.executor("NCE").dpus == 5
    assert t.kernel_executor.kind is ExecutorKind.SHAVE and t.default_memory is ddr
    assert all(e.name == e.kind.value for e in t.executors)  # a blob task's executor string is its kind


def test_npu_small() -> None:
    t = get_target("npu-small")
    assert t.num_barriers == 8 and t.memory("CMX").size == 262144 and t.memory("CMX").count == 1
    assert [(e.kind.value, e.count) for e in t.executors] == [("NCE", 1), ("SHAVE", 2), ("DMA", 1)]
    assert t.description() == {
        "memories": [{"name": "DDR", "kind": "DDR", "capacity": 536870912},
                     {"name": "CMX0", "kind": "CMX", "capacity": 262144}],
        "executors": [{"kind": "NCE", "count": 1}, {"kind": "SHAVE", "count": 2}, {"kind": "DMA", "count": 1}],
        "max_physical_barriers": 8, "clock_ghz": 1.3}


def test_threads_do_not_change_the_npu_and_names_are_known() -> None:
    assert get_target("npu", threads=3) == get_target("npu")
    assert set(TARGET_NAMES) == {"cpu", "npu", "npu-small"}
    assert [m["name"] for m in get_target("npu").description()["memories"]] == ["DDR", "CMX0", "CMX1", "CMX2", "CMX3"]
    for name in ("DDR", "CMX", "CMX3", "host"):
        assert find_memory(name) is not None
    assert find_memory("CMX9") is None
    cpu = get_target("cpu", threads=2)
    assert not cpu.is_npu and cpu.kernel_executor.kind is ExecutorKind.CPU
    assert cpu.description()["executors"] == [{"kind": "cpu", "count": 2}]
    with pytest.raises(NnkilnError, match="unknown target"):
        get_target("npu-large")
