"""``static-allocation`` (architecture spec §3.4): place every ``buf.alloc`` at a fixed offset.

What: for the target's default memory (the cpu target has one, ``host``):
1. live intervals [first task, last task] in schedule order (``nnkiln.analysis.liveness``), sizes
   rounded up to the memory's alignment; two buffers *conflict* when their intervals overlap; when the tasks carry
   predicted start/end cycles (several instances scheduled by the cost model: the npu), the intervals are spans of
   time instead (``liveness.in_time``), so reuse never serialises tasks the schedule runs side by side;
2. offset planning (``plan``): dynamic storage allocation, NP-hard. No plan is smaller than ``lower_bound``
   (the largest sum of the sizes live at one task), and that bound is not always reachable;
   (a) best fit in a given order (``place``): each buffer goes into the smallest gap, between the placed
       buffers it conflicts with, that fits it, else on top of them;
   (b) four orders (``orders``): by size (largest first, then longest lifetime), by start (linear scan), by
       breadth (TFLite's greedy-by-breadth: task positions by their total live size, largest first, each
       position's buffers largest first) and by lifetime (longest first, then largest);
   (c) while the best arena is above the bound, a local search (``improve``) from each order, best first:
       take a buffer reaching the top of the arena, or one it conflicts with, out of the order and put it
       back elsewhere (the front, the end, next to a buffer the top one conflicts with); keep the first move
       that lowers the arena, repeat. Why: no order suits every schedule. A Conv1d (8 channels, length 128),
       MaxPool1d(2), Conv1d (16 channels), BatchNorm1d + ReLU, AvgPool1d chain has buffers of 4096, 4096,
       2048, 4096, 4096, 4096 bytes, each live over two consecutive tasks: bound 8192; each of the four
       orders gives 10240 (by size: the 4096-byte buffers alternate between [0, 4096) and [4096, 8192), and
       the two around the 2048-byte one land in different halves), the search 8192.
       The search stops after ``SEARCH_WORK`` units of placement work (a buffer placed or a conflict looked
       at: ~0.15 s) or ``SEARCH_MOVES`` moves, so it stays cheap beside thousands of buffers;
   offsets are multiples of the alignment (the sizes are), so every ``buf.static_alloc`` verifies. The plan
   depends only on the intervals and their order (every sort breaks ties by index): same input, same plan.
   Over the test corpora (``bench/arena_ratio.py``: 1,762 models) every arena is at the lower bound;
3. address reuse is made safe for parallel executors: when buffer B shares bytes with an earlier
   buffer A (A's interval ends before B's starts), every task that writes B gets a token dependency
   on every task that uses A (WAR/WAW). Readers of B already depend on B's writers (RAW), so no task
   touching B can overlap a task touching A. Run ``optimize-async-deps`` afterwards.
4. ``buf.alloc`` → ``buf.static_alloc {memory, offset}``; module attributes ``nnkiln.arena_bytes``
   (the arena's size: highest end offset) and ``nnkiln.arena_lower_bound_bytes`` (``lower_bound``).

Legal before: async IR from ``wrap-into-async-regions``. After: no ``buf.alloc``; every pair of
buffers with overlapping bytes is ordered by token dependencies; no two conflicting buffers share bytes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from nnkiln.analysis.liveness import Interval, align_up, buffer_intervals, in_time, lower_bound
from nnkiln.dialects.async_ import ExecuteOp
from nnkiln.dialects.buf import StaticAllocOp
from nnkiln.errors import NnkilnError

SEARCH_WORK = 400_000  # placement work the local search may spend on one function (module docstring, 2c)
SEARCH_MOVES = 1_000  # moves it may try


def conflicts(intervals: Sequence[Interval]) -> list[list[int]]:
    """For each interval, the indices of the intervals overlapping it in time (a sweep by start)."""
    neighbours: list[list[int]] = [[] for _ in intervals]
    active: list[int] = []
    for i in sorted(range(len(intervals)), key=lambda i: (intervals[i].first, i)):
        first = intervals[i].first
        active = [j for j in active if intervals[j].last >= first]
        for j in active:
            neighbours[i].append(j)
            neighbours[j].append(i)
        active.append(i)
    return neighbours


@dataclass
class Placement:
    """Offsets of the intervals (by index) placed best fit in ``order``; ``tops[k]``: the arena after k+1."""

    order: list[int]
    offsets: list[int]
    tops: list[int]

    @property
    def arena(self) -> int:
        return self.tops[-1] if self.tops else 0


def place(sizes: Sequence[int], neighbours: Sequence[Sequence[int]], order: list[int], alignment: int,
          reuse: Placement | None = None, start: int = 0) -> Placement:
    """Best fit in ``order``: each buffer in the smallest gap between the placed buffers it conflicts with that
    fits it (the lowest such gap on a tie), else above them all. With ``reuse`` (a placement whose order has the
    same first ``start`` buffers) only ``order[start:]`` is placed again."""
    offsets = list(reuse.offsets) if reuse is not None else [-1] * len(sizes)
    tops = list(reuse.tops[:start]) if reuse is not None else []
    if reuse is not None:
        for i in order[start:]:
            offsets[i] = -1
    top = tops[-1] if tops else 0
    for i in order[start:]:
        size = sizes[i]
        busy = sorted((offsets[j], offsets[j] + sizes[j]) for j in neighbours[i] if offsets[j] >= 0)
        best_gap, best_at, cursor = -1, -1, 0
        for lo, hi in busy:
            gap = lo - cursor
            if gap >= size and (best_gap < 0 or gap < best_gap):
                best_gap, best_at = gap, cursor
            cursor = max(cursor, align_up(hi, alignment))
        offsets[i] = best_at if best_gap >= 0 else cursor
        top = max(top, offsets[i] + size)
        tops.append(top)
    return Placement(order, offsets, tops)


def breadth_order(intervals: Sequence[Interval]) -> list[int]:
    """TFLite's greedy-by-breadth order: task positions by their total live size (largest first, then earliest);
    each buffer comes with the first of those positions it is live at, the larger buffers of a position first.
    That position is the minimum rank over the buffer's interval (a sparse table of range minima)."""
    first = np.array([iv.first for iv in intervals], dtype=np.int64)
    last = np.array([iv.last for iv in intervals], dtype=np.int64)
    size = np.array([iv.size for iv in intervals], dtype=np.int64)
    t = int(last.max()) + 1
    delta = np.zeros(t + 1, dtype=np.int64)
    np.add.at(delta, first, size)
    np.add.at(delta, last + 1, -size)
    rank = np.empty(t, dtype=np.int64)
    rank[np.lexsort((np.arange(t), -np.cumsum(delta)[:t]))] = np.arange(t)
    table = [rank]  # table[k][p]: the smallest rank among positions p .. p + 2**k - 1
    while (1 << len(table)) <= t:
        half = 1 << (len(table) - 1)
        table.append(np.minimum(table[-1][:-half], table[-1][half:]))
    level = np.floor(np.log2(last - first + 1)).astype(np.int64)
    best = np.empty(len(intervals), dtype=np.int64)
    for k in np.unique(level).tolist():
        at = level == k
        best[at] = np.minimum(table[k][first[at]], table[k][last[at] - (1 << k) + 1])
    return np.lexsort((np.arange(len(intervals)), first, -size, best)).tolist()


def orders(intervals: Sequence[Interval]) -> list[list[int]]:
    """The four heuristic orders (module docstring, 2b): size, start, breadth, lifetime; ties by index."""
    ivs = list(enumerate(intervals))
    return [[i for i, _ in sorted(ivs, key=lambda p: (-p[1].size, p[1].first - p[1].last, p[1].first, p[0]))],
            [i for i, _ in sorted(ivs, key=lambda p: (p[1].first, -p[1].size, p[0]))],
            breadth_order(intervals),
            [i for i, _ in sorted(ivs, key=lambda p: (p[1].first - p[1].last, -p[1].size, p[1].first, p[0]))]]


def _moves(current: Placement, sizes: Sequence[int], neighbours: Sequence[Sequence[int]],
           pos: list[int]) -> Iterator[tuple[int, int]]:
    """The moves (x, t) the search tries from ``current``, each once, in a fixed order: for each buffer c reaching
    the top, c and then the buffers it conflicts with (in placement order), each put back at index 0, at the end,
    or next to c or to a buffer c conflicts with."""
    top, n, seen = current.arena, len(current.order), set()
    for c in [i for i in current.order if current.offsets[i] + sizes[i] == top]:
        spots = sorted({0, n, pos[c], pos[c] + 1} | {pos[j] + d for j in neighbours[c] for d in (0, 1)})
        for x in [c, *sorted(neighbours[c], key=pos.__getitem__)]:
            for t in spots:
                if t not in (pos[x], pos[x] + 1) and (x, t) not in seen:
                    seen.add((x, t))
                    yield x, t


def improve(sizes: Sequence[int], neighbours: Sequence[Sequence[int]], current: Placement, alignment: int,
            bound: int, budget: list[int]) -> Placement:
    """Local search (module docstring, 2c) from ``current``: take the first move that lowers the arena, repeat,
    until the arena is ``bound``, no move helps, or ``budget`` ([work units, moves] left, shared by the calls)
    runs out. A move takes buffer x out of the order and puts it back at index t; only the buffers from the first
    changed index on are placed again."""
    while current.arena > bound:
        order = current.order
        pos = [0] * len(order)
        for k, i in enumerate(order):
            pos[i] = k
        for x, t in _moves(current, sizes, neighbours, pos):
            if budget[0] <= 0 or budget[1] <= 0:
                return current
            moved = order[:t] + [x] + order[t:]
            del moved[pos[x] + (1 if pos[x] >= t else 0)]
            start = min(t, pos[x])
            budget[0] -= sum(1 + len(neighbours[i]) for i in moved[start:])
            budget[1] -= 1
            candidate = place(sizes, neighbours, moved, alignment, current, start)
            if candidate.arena < current.arena:
                current = candidate
                break
        else:
            return current
    return current


def plan(intervals: list[Interval], alignment: int) -> int:
    """Offsets for ``intervals`` (module docstring, 2): the four orders placed best fit, then the local search
    from each, best first, while above the lower bound. Sets every ``offset``; returns the arena size."""
    if not intervals:
        return 0
    sizes = [iv.size for iv in intervals]
    neighbours = conflicts(intervals)
    bound = lower_bound(intervals)
    starts = sorted((place(sizes, neighbours, o, alignment) for o in orders(intervals)), key=lambda p: p.arena)
    best = starts[0]
    budget = [SEARCH_WORK, SEARCH_MOVES]
    for start in starts:
        if best.arena <= bound or budget[0] <= 0 or budget[1] <= 0:
            break
        found = improve(sizes, neighbours, start, alignment, bound, budget)
        if found.arena < best.arena:
            best = found
    for iv, offset in zip(intervals, best.offsets):
        iv.offset = offset
    return best.arena


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
            in_time(block, intervals)  # several instances scheduled by the cost model: plan over time
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
