"""Buffer liveness over the task schedule (architecture spec §3.4 "static allocation").

At the async level the IR order of ``async.execute`` ops is the schedule order. A planned buffer
(``buf.alloc`` at the top of a function) is live from the first task that uses it to the last one
(inclusive), uses being operands of the kernels/copies inside a task, views resolved to their base.
``Interval.first``/``last`` are task positions in schedule order. ``lower_bound`` is the largest sum
of (aligned) sizes of simultaneously live buffers: no placement can use less memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.ir import Block, Operation, SSAValue

from nnkiln.dialects.async_ import ExecuteOp
from nnkiln.dialects.buf import AllocOp, base_buffer, byte_size


def align_up(n: int, alignment: int) -> int:
    return (n + alignment - 1) // alignment * alignment


@dataclass
class Interval:
    """A planned buffer's live range [first, last] in task positions and its size in bytes."""

    buffer: SSAValue
    size: int
    first: int
    last: int
    users: list[int] = field(default_factory=list)  # task positions using the buffer
    writers: list[int] = field(default_factory=list)  # task positions writing the buffer
    offset: int = -1

    def overlaps(self, other: Interval) -> bool:
        return self.first <= other.last and other.first <= self.last


def task_buffers(ex: Operation) -> tuple[dict[SSAValue, None], dict[SSAValue, None]]:
    """(bases read, bases written) by the ops inside a task, each in the order the ops use them (ordered sets:
    the allocator's ties break by this order, so a compile gives the same plan every time)."""
    reads: dict[SSAValue, None] = {}
    writes: dict[SSAValue, None] = {}
    for op in ex.walk():
        ins = getattr(op, "ins", None)
        outs = getattr(op, "outs", None)
        if ins is None or outs is None or op is ex:
            continue
        reads.update((base_buffer(v), None) for v in ins)
        writes.update((base_buffer(v), None) for v in outs)
    return reads, writes


def buffer_intervals(block: Block, alignment: int = 1) -> list[Interval]:
    """Live intervals of the ``buf.alloc`` buffers of ``block`` over its ``async.execute`` tasks."""
    intervals: dict[SSAValue, Interval] = {}
    tasks = [op for op in block.ops if isinstance(op, ExecuteOp)]
    for pos, ex in enumerate(tasks):
        reads, writes = task_buffers(ex)
        for b in {**reads, **writes}:
            if not isinstance(b.owner, AllocOp):
                continue
            iv = intervals.get(b)
            if iv is None:
                iv = intervals[b] = Interval(b, align_up(byte_size(b.type), alignment), pos, pos)
            iv.last = pos
            iv.users.append(pos)
            if b in writes:
                iv.writers.append(pos)
    return list(intervals.values())


def lower_bound(intervals: Sequence[Interval]) -> int:
    """max over task positions of the summed sizes of the buffers live there."""
    events: dict[int, int] = {}
    for iv in intervals:
        events[iv.first] = events.get(iv.first, 0) + iv.size
        events[iv.last + 1] = events.get(iv.last + 1, 0) - iv.size
    best = live = 0
    for pos in sorted(events):
        live += events[pos]
        best = max(best, live)
    return best
