"""``static-allocation`` (architecture spec §3.4): place every ``buf.alloc`` at a fixed offset.

What: for the target's default memory (the cpu target has one, ``host``):
1. live intervals [first task, last task] in schedule order (``nnkiln.analysis.liveness``), sizes
   rounded up to the memory's alignment;
2. offset planning: two greedy heuristics, the smaller arena wins —
   (a) by size, largest first, best fit: among the gaps left by already-placed buffers whose
       intervals overlap, the smallest gap that fits (else on top of them);
   (b) by start time (linear scan), same best-fit placement;
   offsets are multiples of the alignment, so every ``buf.static_alloc`` verifies;
3. address reuse is made safe for parallel executors: when buffer B shares bytes with an earlier
   buffer A (A's interval ends before B's starts), every task that writes B gets a token dependency
   on every task that uses A (WAR/WAW). Readers of B already depend on B's writers (RAW), so no task
   touching B can overlap a task touching A. Run ``optimize-async-deps`` afterwards.
4. ``buf.alloc`` → ``buf.static_alloc {memory, offset}``; module attributes ``nnkiln.arena_bytes``
   (the arena's size: highest end offset) and ``nnkiln.arena_lower_bound_bytes`` (``lower_bound``).

Legal before: async IR from ``wrap-into-async-regions``. After: no ``buf.alloc``; every pair of
buffers with overlapping bytes is ordered by token dependencies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from nnkiln.analysis.liveness import Interval, align_up, buffer_intervals, lower_bound
from nnkiln.dialects.async_ import ExecuteOp
from nnkiln.dialects.buf import StaticAllocOp
from nnkiln.errors import NnkilnError


def place(intervals: list[Interval], alignment: int, key: Callable[[Interval], tuple]) -> int:
    """Best-fit placement in ``key`` order; sets ``offset``; returns the arena size."""
    order = sorted(intervals, key=key)
    firsts = np.zeros(len(order), dtype=np.int64)
    lasts = np.zeros(len(order), dtype=np.int64)
    lows = np.zeros(len(order), dtype=np.int64)
    highs = np.zeros(len(order), dtype=np.int64)
    top = 0
    for k, iv in enumerate(order):
        # the placed intervals overlapping iv in time (Interval.overlaps), as sorted (offset, end) pairs
        idx = np.flatnonzero((firsts[:k] <= iv.last) & (lasts[:k] >= iv.first))
        busy = sorted(zip(lows[idx].tolist(), highs[idx].tolist()))
        best: tuple[int, int] | None = None  # (gap size, offset)
        cursor = 0
        for lo, hi in busy:
            if lo - cursor >= iv.size and (best is None or lo - cursor < best[0]):
                best = (lo - cursor, cursor)
            cursor = max(cursor, align_up(hi, alignment))
        iv.offset = best[1] if best is not None else cursor
        firsts[k], lasts[k], lows[k], highs[k] = iv.first, iv.last, iv.offset, iv.offset + iv.size
        top = max(top, iv.offset + iv.size)
    return top


def plan(intervals: list[Interval], alignment: int) -> int:
    """Run both heuristics, keep the better one's offsets; returns the arena size."""
    heuristics = [lambda iv: (-iv.size, iv.first, iv.last), lambda iv: (iv.first, -iv.size)]
    best: tuple[int, list[int]] | None = None
    for key in heuristics:
        size = place(intervals, alignment, key)
        if best is None or size < best[0]:
            best = (size, [iv.offset for iv in intervals])
    assert best is not None
    for iv, off in zip(intervals, best[1]):
        iv.offset = off
    return best[0]


def add_reuse_dependencies(block: Block, intervals: list[Interval]) -> int:
    """Order tasks of buffers that share bytes; returns the number of dependencies added.

    For every pair (A, B) with A's interval ending before B's starts and overlapping bytes, every
    writer of B depends on every user of A (the pairs are found with numpy, one B at a time).
    """
    tasks = [op for op in block.ops if isinstance(op, ExecuteOp)]
    tokens = [ex.results[0] for ex in tasks]
    extra: dict[int, set[int]] = {}
    if intervals:
        last = np.array([iv.last for iv in intervals], dtype=np.int64)
        lo = np.array([iv.offset for iv in intervals], dtype=np.int64)
        hi = lo + np.array([iv.size for iv in intervals], dtype=np.int64)
        for b in intervals:
            if not b.writers:
                continue
            earlier = np.flatnonzero((last < b.first) & (lo < b.offset + b.size) & (hi > b.offset))
            if not len(earlier):
                continue
            users: set[int] = set()
            for i in earlier.tolist():
                users.update(intervals[i].users)
            for w in b.writers:
                extra.setdefault(w, set()).update(users)
    added = 0
    for w, srcs in extra.items():
        ex = tasks[w]
        have = set(ex.operands)
        new = [tokens[s] for s in sorted(srcs) if tokens[s] not in have]
        if new:
            ex.operands = [*ex.operands, *new]
            added += len(new)
    return added


@dataclass(frozen=True)
class StaticAllocation(ModulePass):
    """Replace ``buf.alloc`` by ``buf.static_alloc`` at planned offsets; record the arena size."""

    name = "static-allocation"
    target: str = "cpu"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from nnkiln.targets import get_target

        memory = get_target(self.target, threads=1).default_memory
        arena = bound = 0
        for func in [f for f in op.body.block.ops if isinstance(f, FuncOp)]:
            block = func.body.block
            intervals = buffer_intervals(block, memory.alignment)
            size = plan(intervals, memory.alignment)
            add_reuse_dependencies(block, intervals)
            arena, bound = max(arena, size), max(bound, lower_bound(intervals))
            for iv in intervals:
                Rewriter.replace_op(iv.buffer.owner, StaticAllocOp(iv.buffer.type, memory.name, iv.offset))  # type: ignore[arg-type]
            for alloc in [o for o in block.ops if o.name == "buf.alloc"]:  # never used by a task
                if not alloc.results[0].uses:
                    Rewriter.erase_op(alloc)
        if arena > memory.size:
            raise NnkilnError(f"the planned activations need {arena} bytes of memory '{memory.name}', but target "
                              f"'{self.target}' has {memory.size} bytes (smaller inputs or batch, or a bigger device)")
        op.attributes["nnkiln.arena_bytes"] = IntegerAttr(arena, i64)
        op.attributes["nnkiln.arena_lower_bound_bytes"] = IntegerAttr(bound, i64)
