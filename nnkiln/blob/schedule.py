"""Validation of the device description and the recorded schedule in a blob's METADATA (docs/blob-format.md,
"Device and schedule"). No xDSL.

The compiler records the target it compiled for (``memories``, ``executors``, ``max_physical_barriers``,
``clock_ghz``) and the simulator's replay (``simulated_cycles``, ``critical_path_cycles``, ``spill_bytes``,
``dma_bytes``, ``task_cycles``, ``task_start_cycles``: ``nnkiln.runtime.simulate``). Every key is optional (a blob
of an older compiler has none); a present key must be well formed and agree with the tables:

- ``memories``: ``[{name, kind: "DDR"|"CMX", capacity >= 0}]``, names unique;
- ``executors``: ``[{kind: "cpu"|"NCE"|"SHAVE"|"DMA", count >= 1}]``, kinds unique; then every task's executor is one
  of those kinds and its ``executor_index`` below the count;
- ``max_physical_barriers`` >= 1: every barrier record's ``physical_id`` is below it;
- ``task_cycles`` / ``task_start_cycles``: one integer per task, cycles > 0, starts >= 0, and together a timeline
  of the task graph: a task starts no earlier than the end of the previous task of its queue and of every producer
  of each barrier record it waits on; ``simulated_cycles`` (required with them) is the last end.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nnkiln.blob.format import BarrierDesc, TaskDesc

MEMORY_KINDS = ("DDR", "CMX")
EXECUTOR_KINDS = ("cpu", "NCE", "SHAVE", "DMA")
"""The values of ``nnkiln.targets.MemoryKind`` / ``ExecutorKind`` (the blob package imports no compiler part)."""


def _int(v: Any, lo: int = 0) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= lo


def check_schedule(meta: dict[str, Any], tasks: list[TaskDesc], barriers: list[BarrierDesc],
                   fail: Callable[[str], Exception]) -> None:
    """Raise ``fail(message)`` unless the device and schedule keys of ``meta`` are valid (module docstring)."""
    mems = meta.get("memories")
    if mems is not None:
        if not isinstance(mems, list) or any(
                not isinstance(m, dict) or not isinstance(m.get("name"), str) or m.get("kind") not in MEMORY_KINDS
                or not _int(m.get("capacity")) for m in mems) or len({m["name"] for m in mems}) != len(mems):
            raise fail(f"METADATA memories = {mems!r} is not a list of {{name, kind, capacity}} with unique names")
    exes = meta.get("executors")
    if exes is not None:
        if not isinstance(exes, list) or any(
                not isinstance(e, dict) or e.get("kind") not in EXECUTOR_KINDS or not _int(e.get("count"), 1)
                for e in exes) or len({e["kind"] for e in exes}) != len(exes):
            raise fail(f"METADATA executors = {exes!r} is not a list of {{kind, count >= 1}} with unique kinds")
        count = {e["kind"]: e["count"] for e in exes}
        for i, t in enumerate(tasks):
            if t.executor not in count or t.executor_index >= count[t.executor]:
                raise fail(f"task {i} runs on {t.executor} {t.executor_index}, which the executors {exes} lack")
    limit = meta.get("max_physical_barriers")
    if limit is not None:
        if not _int(limit, 1):
            raise fail(f"METADATA max_physical_barriers = {limit!r} is not an integer >= 1")
        for i, b in enumerate(barriers):
            if b.physical_id >= limit:
                raise fail(f"barrier {i}: physical id {b.physical_id} >= max_physical_barriers {limit}")
    for key in ("simulated_cycles", "critical_path_cycles", "spill_bytes", "dma_bytes"):
        if key in meta and not _int(meta[key]):
            raise fail(f"METADATA {key} = {meta[key]!r} is not a non-negative integer")
    cycles, start = meta.get("task_cycles"), meta.get("task_start_cycles")
    if cycles is None and start is None:
        return
    if (not isinstance(cycles, list) or not isinstance(start, list) or len(cycles) != len(tasks)
            or len(start) != len(tasks) or not all(_int(c, 1) for c in cycles) or not all(_int(s) for s in start)):
        raise fail("METADATA task_cycles / task_start_cycles are not one integer per task (cycles > 0, starts >= 0)")
    end_of_record = [0] * len(barriers)
    for i, t in enumerate(tasks):
        for u in t.updates:
            end_of_record[u] = max(end_of_record[u], start[i] + cycles[i])
    free: dict[tuple[str, int], int] = {}
    for i, t in enumerate(tasks):
        q = (t.executor, t.executor_index)
        ready = max([free.get(q, 0), *(end_of_record[w] for w in t.waits)])
        if start[i] < ready:
            raise fail(f"task {i} starts at cycle {start[i]}, before its queue or barriers allow ({ready})")
        free[q] = start[i] + cycles[i]
    if meta.get("simulated_cycles") != max((s + c for s, c in zip(start, cycles)), default=0):
        raise fail(f"METADATA simulated_cycles = {meta.get('simulated_cycles')!r} is not the end of the last task")


__all__ = ["EXECUTOR_KINDS", "MEMORY_KINDS", "check_schedule"]
