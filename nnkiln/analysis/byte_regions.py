"""Byte regions of blob buffers, and what reads them later: the hazard checks of the rt-level fusion passes.

A region is ``(memory, index, byte offset, size)``: two buffers share bytes only in the same memory and io index.
These work on the blob tables (``analysis.task_table``): after static allocation the places are final, so a pass
that moves a read or drops a write can prove it safe only here. No xDSL.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from nnkiln.blob.format import BufferDesc, Memory, TaskDesc

Region = tuple[Any, int, int, int]


def region(b: BufferDesc) -> Region:
    """The bytes ``b`` covers."""
    return (b.memory, b.index, b.offset, b.size)


def overlap(a: Region, b: Region) -> bool:
    """Whether two regions share a byte."""
    return a[0] == b[0] and a[1] == b[1] and a[2] < b[2] + b[3] and b[2] < a[2] + a[3]


def outputs_overlap_inputs(ins: Sequence[int], outs: Sequence[int], buffers: Sequence[BufferDesc]) -> bool:
    """Whether an output's bytes intersect an input's."""
    return any(overlap(region(buffers[o]), region(buffers[i])) for o in outs for i in ins)


def live_after(reg: Region, after: int, tasks: Sequence[TaskDesc], buffers: Sequence[BufferDesc],
               single_queue: bool) -> bool:
    """Whether some byte of ``reg`` may be read after task ``after`` (blob order) before being overwritten. Always
    true outside the arena (graph inputs and outputs) and with several queues (blob order is not run order)."""
    if reg[0] is not Memory.ARENA or not single_queue:
        return True
    left = [(reg[2], reg[2] + reg[3])]  # byte ranges still holding the values
    for t in tasks[after + 1:]:
        for b in t.ins:
            r = region(buffers[b])
            if r[0] == reg[0] and r[1] == reg[1] and any(lo < r[2] + r[3] and r[2] < hi for lo, hi in left):
                return True
        for b in t.outs:
            r = region(buffers[b])
            if r[0] != reg[0] or r[1] != reg[1]:
                continue
            w0, w1 = r[2], r[2] + r[3]
            nxt: list[tuple[int, int]] = []
            for lo, hi in left:
                if w1 <= lo or hi <= w0:
                    nxt.append((lo, hi))
                    continue
                if lo < w0:
                    nxt.append((lo, w0))
                if w1 < hi:
                    nxt.append((w1, hi))
            left = nxt
        if not left:
            return False
    return False


def queues(tasks: Sequence[TaskDesc]) -> list[list[int]]:
    """The task indices of each ``(executor, executor_index)`` queue, in blob (= run) order."""
    out: dict[tuple[str, int], list[int]] = {}
    for i, t in enumerate(tasks):
        out.setdefault((t.executor, t.executor_index), []).append(i)
    return list(out.values())


__all__ = ["Region", "live_after", "outputs_overlap_inputs", "overlap", "queues", "region"]
