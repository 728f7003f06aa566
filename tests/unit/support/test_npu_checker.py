"""Unit tests of ``tests/support/npu_checker.py`` on hand-written inspect JSON: a valid blob passes, and every
rule has a case that breaks it and is reported (a checker that cannot fail checks nothing)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from npu_checker import box_runs, check, critical_path, lower_bound, makespan_ratio


def _buf(i: int, memory: str, offset: int, size: int = 64, alias_of: int | None = None) -> dict[str, Any]:
    return {"index": i, "memory": memory, "io_index": 0, "offset": offset, "size": size, "dtype": "f32",
            "shape": [size // 4], "alias_of": alias_of}


def _task(i: int, executor: str, k: int, kernel: str, ins: list[int], outs: list[int], waits: list[int],
          updates: list[int], cycles: int, start: int, **args: Any) -> dict[str, Any]:
    return {"index": i, "executor": executor, "executor_index": k, "kernel": kernel, "attrs": {}, "args": args,
            "inputs": ins, "outputs": outs, "waits": waits, "updates": updates, "cycles": cycles,
            "start_cycle": start}


def _barrier(i: int, pid: int, producers: list[int], consumers: list[int]) -> dict[str, Any]:
    return {"index": i, "physical_id": pid, "producers": len(producers), "consumers": len(consumers),
            "producer_tasks": producers, "consumer_tasks": consumers}


def valid() -> dict[str, Any]:
    """DMA input and weights into CMX0, an NCE convolution on cluster 0, DMA the result to DDR, a SHAVE kernel
    writes the output. Physical barrier 0 is reused (records 0 and 2) after its first use is over."""
    meta = {"memories": [{"name": "DDR", "kind": "DDR", "capacity": 4096},
                         {"name": "CMX0", "kind": "CMX", "capacity": 256},
                         {"name": "CMX1", "kind": "CMX", "capacity": 256}],
            "executors": [{"kind": "NCE", "count": 2}, {"kind": "SHAVE", "count": 1}, {"kind": "DMA", "count": 2}],
            "max_physical_barriers": 2, "simulated_cycles": 100, "dma_bytes": 192, "spill_bytes": 0}
    buffers = [_buf(0, "input", 0), _buf(1, "output", 0), _buf(2, "constant", 0), _buf(3, "CMX0", 0),
               _buf(4, "CMX0", 64), _buf(5, "CMX0", 128), _buf(6, "DDR", 0)]
    tasks = [_task(0, "DMA", 0, "buf.copy", [0], [3], [], [0], 10, 0),
             _task(1, "DMA", 0, "buf.copy", [2], [4], [], [0], 10, 10),
             _task(2, "NCE", 0, "tosa.conv2d", [3, 4], [5], [0], [1], 50, 20),
             _task(3, "DMA", 0, "buf.copy", [5], [6], [1], [2], 10, 70),
             _task(4, "SHAVE", 0, "tosa.sigmoid", [6], [1], [2], [], 20, 80)]
    barriers = [_barrier(0, 0, [0, 1], [2]), _barrier(1, 1, [2], [3]), _barrier(2, 0, [3], [4])]
    return {"metadata": meta, "buffers": buffers, "tasks": tasks, "barriers": barriers}


def rules(d: dict[str, Any]) -> set[str]:
    """The rule tags of the violations ``check`` reports."""
    return {v.split("]")[0] + "]" for v in check(d)}


def test_the_valid_blob_passes() -> None:
    assert check(valid()) == []


def test_lower_bound_and_ratio() -> None:
    d = valid()
    assert critical_path(d) == 10 + 50 + 10 + 20  # DMA in -> NCE -> DMA out -> SHAVE
    assert lower_bound(d) == 90 and makespan_ratio(d) == pytest.approx(100 / 90)
    d["tasks"][1]["cycles"] = 200  # now the one DMA engine's total dominates: (10 + 200 + 10) / 2 -> 110
    d["metadata"]["executors"][2]["count"] = 1
    assert critical_path(d) == 200 + 50 + 10 + 20 and lower_bound(d) == 280
    d["tasks"][2]["cycles"] = 1
    d["tasks"][1]["cycles"] = 10
    assert lower_bound(d) == max(10 + 1 + 10 + 20, 30)


def test_device_rule() -> None:
    d = valid()
    d["tasks"][2]["executor_index"] = 2  # only 2 NCE clusters
    assert "[device]" in rules(d)
    d = valid()
    d["tasks"][0]["cycles"] = 0
    assert "[device]" in rules(d)
    d = valid()
    d["barriers"][0]["consumer_tasks"] = [2, 3]  # task 3 does not wait on it
    assert rules(d) == {"[device]"}


def test_race_rule() -> None:
    d = valid()
    d["tasks"][4]["waits"] = []  # the SHAVE reads DDR buffer 6 without waiting for the DMA that writes it
    d["barriers"][2]["consumer_tasks"], d["barriers"][2]["consumers"] = [], 0
    d["tasks"][4]["start_cycle"], d["metadata"]["simulated_cycles"] = 0, 80
    assert rules(d) == {"[race]", "[window]"}


def test_window_rule_catches_an_ordered_write_on_the_wrong_side() -> None:
    """Task 1 reads X, written by task 0 (its intended writer: the last writer before it in blob order); task 2
    writes X too, after task 1 in blob order, but the barrier orders it 0 -> 2 -> 1: every pair is ordered (no
    race), yet task 2's write lands between task 0's write and task 1's read."""
    d = valid()
    d["metadata"].update(simulated_cycles=30, dma_bytes=64)
    d["buffers"] = [_buf(0, "DDR", 0), _buf(1, "CMX0", 0)]
    d["tasks"] = [_task(0, "SHAVE", 0, "tosa.exp", [], [0], [], [], 10, 0),
                  _task(1, "DMA", 0, "buf.copy", [0], [1], [0], [], 10, 20),
                  _task(2, "SHAVE", 0, "tosa.exp", [], [0], [], [0], 10, 10)]
    d["barriers"] = [_barrier(0, 0, [2], [1])]
    assert rules(d) == {"[window]"}
    d["tasks"][1]["waits"], d["barriers"][0]["consumer_tasks"] = [], []  # and the reader not even ordered
    d["barriers"][0]["consumers"], d["tasks"][1]["start_cycle"], d["metadata"]["simulated_cycles"] = 0, 0, 20
    assert rules(d) == {"[race]", "[window]"}


def test_window_rule_reads_before_any_write() -> None:
    """A read of bytes no earlier task wrote (the initial value), with a later write not ordered after it."""
    d = valid()
    d["metadata"].update(simulated_cycles=10, dma_bytes=64)
    d["buffers"] = [_buf(0, "DDR", 0), _buf(1, "CMX0", 0)]
    d["tasks"] = [_task(0, "DMA", 0, "buf.copy", [0], [1], [], [], 10, 0),
                  _task(1, "SHAVE", 0, "tosa.exp", [], [0], [], [], 10, 0)]
    d["barriers"] = []
    assert rules(d) == {"[race]", "[window]"}


def test_memory_rule() -> None:
    d = valid()
    d["buffers"][5]["offset"] = 200  # 200 + 64 > 256
    assert "[memory]" in rules(d)
    d = valid()
    for b in d["buffers"]:
        if b["memory"] == "DDR":
            b["memory"] = "arena"  # phase 1's name is no memory of the device
    assert rules(d) == {"[memory]"}
    d = valid()
    d["buffers"].append(_buf(7, "DDR", 32, 64, alias_of=6))  # a view sticking out of its base
    assert rules(d) == {"[memory]"}
    d = valid()
    d["buffers"][6]["offset"] = -4
    assert "[memory]" in rules(d)


def test_nce_locality_rule() -> None:
    d = valid()
    d["tasks"][2]["executor_index"] = 1  # cluster 1 reading CMX0
    assert rules(d) == {"[nce]"}
    d = valid()
    d["tasks"][2]["inputs"] = [3, 2]  # the weights straight from the constants section
    assert "[nce]" in rules(d)


def test_barrier_rules() -> None:
    d = valid()
    d["barriers"][1]["physical_id"] = 2  # limit 2
    assert rules(d) == {"[barrier]"}
    d = valid()
    d["barriers"][1]["physical_id"] = 0  # id 0 in use by record 0 (consumer task 2) while task 2 produces record 1
    assert rules(d) == {"[barrier]"}


def test_barrier_reuse_needs_the_previous_producers_done_too() -> None:
    """Record 0 (no consumer) and record 1 share physical id 0 while their producers run side by side on two DMA
    engines: the counter would count both. A rule over consumers only would miss it."""
    d = valid()
    d["metadata"].update(simulated_cycles=20, dma_bytes=0)
    d["tasks"] = [_task(0, "DMA", 0, "buf.copy", [], [], [], [0], 10, 0),
                  _task(1, "DMA", 1, "buf.copy", [], [], [], [1], 10, 0),
                  _task(2, "NCE", 0, "tosa.conv2d", [], [], [1], [], 10, 10)]
    d["barriers"] = [_barrier(0, 0, [0], []), _barrier(1, 0, [1], [2])]
    assert rules(d) == {"[barrier]"}
    d["barriers"][1]["physical_id"] = 1
    assert check(d) == []


def test_barrier_reuse_in_any_record_order() -> None:
    """The records of physical id 0 listed against their order of use (record 0 is now the second use): valid."""
    d = valid()
    swap = {0: 2, 2: 0, 1: 1}
    for t in d["tasks"]:
        t["waits"] = [swap[b] for b in t["waits"]]
        t["updates"] = [swap[b] for b in t["updates"]]
    d["barriers"] = [_barrier(0, 0, [3], [4]), _barrier(1, 1, [2], [3]), _barrier(2, 0, [0, 1], [2])]
    assert check(d) == []
    d["barriers"][1]["physical_id"] = 0  # three uses of id 0, the middle one overlapping both
    assert rules(d) == {"[barrier]"}


def test_deadlock_rule() -> None:
    d = valid()
    d["tasks"][0]["waits"] = [2]  # waits on a barrier a later task of its own queue updates
    d["barriers"][2]["consumer_tasks"], d["barriers"][2]["consumers"] = [0, 4], 2
    assert rules(d) == {"[deadlock]"}


def test_replay_rule() -> None:
    d = valid()
    d["tasks"][4]["start_cycle"] = 81
    assert rules(d) == {"[replay]"}
    d = valid()
    d["metadata"]["simulated_cycles"] = 99
    assert rules(d) == {"[replay]"}


def test_accounting_rule() -> None:
    d = valid()
    d["metadata"]["dma_bytes"] = 128
    assert rules(d) == {"[accounting]"}
    d = valid()
    d["tasks"][3]["args"]["spill"] = True  # a spill the metadata does not count
    assert rules(d) == {"[accounting]"}
    d["metadata"]["spill_bytes"] = 64
    assert check(d) == []


def test_box_runs() -> None:
    assert box_runs([4, 4], 64, [0, 0], [4, 4]) == [(0, 64)]
    assert box_runs([4, 4], 64, [1, 0], [2, 4]) == [(16, 48)]  # whole rows: one run
    assert box_runs([4, 4], 64, [0, 1], [2, 2]) == [(4, 12), (20, 28)]
    assert box_runs([4, 4], 64, [0, 0], [0, 4]) == []
    assert box_runs([4, 4], 64, [3, 0], [2, 4]) == [(0, 64)]  # outside the shape: the whole buffer


def test_dma_boxes_are_exact() -> None:
    """Two DMA engines write the two halves (columns) of one DDR buffer: disjoint boxes, no race; overlapping
    boxes race."""
    d = valid()
    d["metadata"].update(simulated_cycles=10, dma_bytes=64)
    d["buffers"] = [_buf(0, "CMX0", 0, 32), _buf(1, "CMX0", 32, 32), {**_buf(2, "DDR", 0, 64), "shape": [4, 4]}]
    d["buffers"][0]["shape"] = d["buffers"][1]["shape"] = [4, 2]
    box = {"src_offsets": [0, 0], "shape": [4, 2]}
    d["tasks"] = [_task(0, "DMA", 0, "buf.copy", [0], [2], [], [], 10, 0, dst_offsets=[0, 0], **box),
                  _task(1, "DMA", 1, "buf.copy", [1], [2], [], [], 10, 0, dst_offsets=[0, 2], **box)]
    d["barriers"] = []
    assert check(d) == []
    d["tasks"][1]["args"]["dst_offsets"] = [0, 1]
    assert rules(d) == {"[race]"}


def test_the_checker_does_not_modify_its_input() -> None:
    d = valid()
    before = copy.deepcopy(d)
    check(d)
    lower_bound(d)
    assert d == before
