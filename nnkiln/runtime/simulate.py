"""The simulator (issue 22, item 7): a blob's task graph replayed against the cost model. No xDSL.

What it reads: the blob only (tasks, their queues and barrier records, buffer shapes) and the target its
metadata names (``nnkiln.targets``: data, for the cost model's clock, bandwidths and unit counts).

Replay (``simulate``): each task's cycles are ``nnkiln.targets.cost.task_cycles`` of its kernel and operand shapes
on its executor's kind (the executor string is the kind: ``"cpu"``, ``"SHAVE"``, ``"NCE"``, ``"DMA"``; another
string counts as ``cpu``). A task starts when the previous task of its queue (``(executor, executor_index)``,
blob order) has ended and every barrier record it waits on is complete (every producer has ended); it ends
``cycles`` later. No other resource is modelled (docs/npu-target.md). ``makespan`` = the last end.

Schedule-independent numbers:

- ``critical_path``: the longest chain of data dependencies weighted by cycles: task ``b`` depends on task
  ``a`` when ``b`` reads bytes ``a`` wrote last before ``b`` in blob order (the blob order is a topological
  order of the task graph, and every hazard between two accesses is ordered, so the last writer in blob order
  is the writer ``b`` sees). Write-after-read and write-after-write orderings (memory reuse) are not data
  dependencies: they come from the schedule and the memory plan.
- ``lower_bound``: ``max(critical_path, max over executor kinds of ceil(total cycles / instances))`` (instances:
  the metadata's ``executors`` when present, else the target's) — no
  schedule of these tasks on this device can finish earlier (the benchmark's ratio is makespan / bound).

``dma_bytes``: bytes moved by DMA tasks (the smaller side of a box copy); ``spill_bytes``: those of DMA tasks marked ``"spill": true`` in their
attrs (none before the feasible scheduler of phase 2+).

The compiler records ``simulate``'s result in the blob's metadata (``nnkiln.conversion.rt_to_blob``;
docs/blob-format.md); ``Executable.stats`` reports it and ``Executable.timeline()`` replays it.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from dataclasses import dataclass

from nnkiln.blob.format import Blob, BufferDesc, Memory
from nnkiln.errors import NnkilnError
from nnkiln.targets import ExecutorKind, MemoryKind, Target, get_target
from nnkiln.targets.cost import task_cycles

Queue = tuple[str, int]


@dataclass(frozen=True)
class Slot:
    """One task on the timeline: its index in the blob, start and end cycle."""

    task: int
    start: int
    end: int


@dataclass
class Simulation:
    """The replay of one blob (module docstring)."""

    cycles: list[int]
    start: list[int]
    makespan: int
    critical_path: int
    lower_bound: int
    dma_bytes: int
    spill_bytes: int
    queues: dict[Queue, list[int]]

    def timeline(self) -> dict[Queue, list[Slot]]:
        """Per executor instance ``(executor, index)``: its tasks in order with start and end cycles."""
        return {q: [Slot(i, self.start[i], self.start[i] + self.cycles[i]) for i in ts] for q, ts in self.queues.items()}

    def metadata(self) -> dict[str, object]:
        """The blob metadata keys that record this replay (docs/blob-format.md)."""
        return {"simulated_cycles": self.makespan, "critical_path_cycles": self.critical_path,
                "spill_bytes": self.spill_bytes, "dma_bytes": self.dma_bytes,
                "task_cycles": list(self.cycles), "task_start_cycles": list(self.start)}


def executor_kind(executor: str) -> ExecutorKind:
    """The kind of a blob task's executor string (``cpu`` for a string that names no kind)."""
    try:
        return ExecutorKind(executor)
    except ValueError:
        return ExecutorKind.CPU


def target_of(blob: Blob) -> Target:
    """The target the blob's metadata names (the cpu, for a name no target has)."""
    try:
        return get_target(str(blob.metadata.get("target", "cpu")), threads=1)
    except NnkilnError:  # an unknown name: the cost model's cpu numbers
        return get_target("cpu", threads=1)


def _operands(buffers: list[BufferDesc], idx: tuple[int, ...]) -> list[tuple[tuple[int, ...], int]]:
    out = []
    for i in idx:
        b = buffers[i]
        n = 1
        for d in b.shape:
            n *= d
        out.append((b.shape, b.size // n if n else 1))
    return out


def _memory_kinds(blob: Blob, target: Target) -> list[MemoryKind]:
    """The kind of memory of each buffer: an arena buffer's arena names a memory instance of the target; io
    tensors and constants are in the default memory."""
    kinds = []
    for name, _ in blob.arenas:
        m = next((m for m in target.memories if name == m.name or name in m.instance_names()), None)
        kinds.append(m.kind if m is not None else target.default_memory.kind)
    default = target.default_memory.kind
    return [kinds[b.index] if b.memory is Memory.ARENA and b.index < len(kinds) else default for b in blob.buffers]


def cycles_of(blob: Blob, target: Target | None = None) -> list[int]:
    """Every task's cycles by the cost model."""
    target = target or target_of(blob)
    kinds = _memory_kinds(blob, target)
    return [task_cycles(target, executor_kind(t.executor), t.kernel, _operands(blob.buffers, t.ins),
                        _operands(blob.buffers, t.outs), [kinds[j] for j in (*t.ins, *t.outs)]) for t in blob.tasks]


def replay(blob: Blob, cycles: list[int]) -> tuple[list[int], dict[Queue, list[int]]]:
    """Start cycles of the tasks (module docstring) and the queues; the blob must be valid (acyclic)."""
    queues: dict[Queue, list[int]] = {}
    for i, t in enumerate(blob.tasks):
        queues.setdefault((t.executor, t.executor_index), []).append(i)
    pending = [b.producers for b in blob.barriers]
    ready_at = [0] * len(blob.barriers)
    start = [0] * len(blob.tasks)
    head = dict.fromkeys(queues, 0)
    free = dict.fromkeys(queues, 0)
    done, progress = 0, True
    while progress:
        progress = False
        for q, ts in queues.items():
            while head[q] < len(ts):
                i = ts[head[q]]
                t = blob.tasks[i]
                if any(pending[w] for w in t.waits):
                    break
                start[i] = max([free[q], *(ready_at[w] for w in t.waits)])
                end = start[i] + cycles[i]
                free[q] = end
                for u in t.updates:
                    pending[u] -= 1
                    ready_at[u] = max(ready_at[u], end)
                head[q] += 1
                done += 1
                progress = True
    if done != len(blob.tasks):
        raise ValueError("the task graph deadlocks (a validated blob cannot)")
    return start, queues


class _Painted:
    """Which task last wrote each byte of one memory region: sorted disjoint segments ``(lo, hi, task)``."""

    def __init__(self) -> None:
        self.los: list[int] = []
        self.segs: list[tuple[int, int, int]] = []

    def writers(self, lo: int, hi: int) -> set[int]:
        i = max(bisect.bisect_right(self.los, lo) - 1, 0)
        found = set()
        while i < len(self.segs) and self.segs[i][0] < hi:
            if self.segs[i][1] > lo:
                found.add(self.segs[i][2])
            i += 1
        return found

    def paint(self, lo: int, hi: int, task: int) -> None:
        i = max(bisect.bisect_right(self.los, lo) - 1, 0)
        while i < len(self.segs) and self.segs[i][1] <= lo:
            i += 1
        j = i
        keep: list[tuple[int, int, int]] = []
        while j < len(self.segs) and self.segs[j][0] < hi:
            s = self.segs[j]
            if s[0] < lo:
                keep.append((s[0], lo, s[2]))
            if s[1] > hi:
                keep.append((hi, s[1], s[2]))
            j += 1
        new = sorted([*keep, (lo, hi, task)])
        self.segs[i:j] = new
        self.los[i:j] = [s[0] for s in new]


def critical_path(blob: Blob, cycles: list[int]) -> int:
    """The longest chain of data dependencies weighted by cycles (module docstring)."""
    regions: dict[tuple[Memory, int], _Painted] = defaultdict(_Painted)
    chain = [0] * len(blob.tasks)

    def region(b: BufferDesc) -> tuple[tuple[Memory, int], int, int]:
        return (b.memory, b.index), b.offset, b.offset + b.size

    for i, t in enumerate(blob.tasks):
        before = 0
        for j in t.ins:
            key, lo, hi = region(blob.buffers[j])
            if key in regions and hi > lo:
                before = max([before, *(chain[w] for w in regions[key].writers(lo, hi))])
        chain[i] = before + cycles[i]
        for j in t.outs:
            key, lo, hi = region(blob.buffers[j])
            if hi > lo:
                regions[key].paint(lo, hi, i)
    return max(chain, default=0)


def simulate(blob: Blob, target: Target | None = None) -> Simulation:
    """Replay ``blob`` against the cost model (module docstring)."""
    target = target or target_of(blob)
    cycles = cycles_of(blob, target)
    start, queues = replay(blob, cycles)
    makespan = max((s + c for s, c in zip(start, cycles)), default=0)
    chain = critical_path(blob, cycles)
    totals: dict[ExecutorKind, int] = defaultdict(int)
    for t, c in zip(blob.tasks, cycles):
        totals[executor_kind(t.executor)] += c
    counts = {e.kind: e.count for e in target.executors}
    for e in blob.metadata.get("executors", ()):  # the counts the blob was compiled for (the cpu's threads)
        counts[ExecutorKind(e["kind"])] = int(e["count"])
    per_kind = max((-(-total // max(1, counts.get(k, 1))) for k, total in totals.items()), default=0)
    dma = spill = 0
    for t in blob.tasks:
        if executor_kind(t.executor) is ExecutorKind.DMA:
            moved = min(sum(blob.buffers[j].size for j in t.ins), sum(blob.buffers[j].size for j in t.outs))
            dma += moved
            spill += moved if t.args.get("attrs", {}).get("spill") else 0
    return Simulation(cycles, start, makespan, chain, max(chain, per_kind), dma, spill, queues)


__all__ = ["Simulation", "Slot", "critical_path", "cycles_of", "executor_kind", "replay", "simulate", "target_of"]
