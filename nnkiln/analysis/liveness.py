"""Buffer liveness over the task schedule (architecture spec §3.4 "static allocation").

At the async level the IR order of ``async.execute`` ops is the schedule order. A planned buffer
(``buf.alloc`` at the top of a function) is live from the first task that uses it to the last one
(inclusive), uses being operands of the kernels/copies inside a task, views resolved to their base.
``Interval.first``/``last`` are task positions in schedule order. ``lower_bound`` is the largest sum
of (aligned) sizes of simultaneously live buffers: no placement can use less memory.

Predicted times (``in_time``): when the tasks carry the list scheduler's predicted start and end cycles
(``START_CYCLE`` / ``END_CYCLE``: several executor instances scheduled by the cost model), a buffer is live from the
earliest start to the latest end of its users, and ``first``/``last`` become ranks of those times (coordinate
compression: ``first`` = rank of the start, ``last`` = rank of the end - 1), so two buffers conflict exactly when
their time spans overlap. Why: on several instances, positions say nothing about concurrency; reusing the bytes
of a buffer whose users run beside the new buffer's writer would add a dependency that serialises them. Why it is
safe: the scheduler's picks start in non-decreasing time, so a buffer A ending (``end`` <= ``start``) before B
starts has every user of A earlier in schedule order than every writer of B (a user starts before it ends, and
ends by then), and the reuse dependencies ``static-allocation`` adds still point backwards.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.ir import Block, Operation, SSAValue

from nnkiln.dialects.async_ import ExecuteOp
from nnkiln.dialects.buf import AllocOp, base_buffer, byte_size

START_CYCLE, END_CYCLE = "nnkiln.start_cycle", "nnkiln.end_cycle"
"""Attributes of an ``async.execute``: its predicted start and end cycles (module docstring)."""


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


def in_time(block: Block, intervals: Sequence[Interval]) -> bool:
    """Re-express ``intervals`` (from ``buffer_intervals(block)``) over the tasks' predicted times when every task
    of ``block`` has them (module docstring); returns whether it did. ``users``/``writers`` stay positions."""
    tasks = [op for op in block.ops if isinstance(op, ExecuteOp)]
    if not tasks or any(START_CYCLE not in t.attributes or END_CYCLE not in t.attributes for t in tasks):
        return False
    start = [t.attributes[START_CYCLE].value.data for t in tasks]  # type: ignore[attr-defined]
    end = [t.attributes[END_CYCLE].value.data for t in tasks]  # type: ignore[attr-defined]
    rank = {p: i for i, p in enumerate(sorted({*start, *end}))}
    for iv in intervals:
        iv.first = min(rank[start[u]] for u in iv.users)
        iv.last = max(rank[end[u]] for u in iv.users) - 1
    return True


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
