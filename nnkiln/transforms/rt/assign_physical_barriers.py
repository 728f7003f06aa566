"""``assign-physical-barriers{max-barriers=N}``: map virtual barrier ids to at most N physical ids.

What (architecture spec §4 "virtual → physical barriers"): ``async-to-rt`` gives every token with a
cross-queue consumer its own (virtual) barrier. The runtime has ``N`` physical barriers
(``max-barriers``; 0 = the target's ``num_barriers``); a physical barrier may be reused once all the
consumers of its previous use have started.

Algorithm (interval colouring in task order):
1. Happens-before: task ``a`` precedes ``b`` when ``a`` is an earlier task of ``b``'s queue (FIFO) or
   ``b`` waits on a barrier ``a`` updates; ``anc[t]`` = the strict ancestors of ``t`` (bitsets; the
   IR order is topological).
2. Virtual barriers are visited by their first producer (task order). A physical id ``p`` whose
   current use ``u`` has only consumers that are strict ancestors of every producer of the new
   barrier ``b`` is free for ``b`` (its consumers have started — they have even finished — before any
   producer of ``b`` can update ``p``; "strict" also keeps a task from waiting on and updating one id).
   The free id used longest ago is taken; otherwise a new id while fewer than ``N`` exist.
3. Limit reached: ``b`` is merged into the use ``u`` of some id when every producer of ``u ∪ b``
   comes before every consumer of ``u ∪ b`` in task order. The merged use makes ``b``'s consumers also
   wait for ``u``'s producers and vice versa: extra dependencies (serialisation), all pointing forward
   in task order, so no cycle and FIFO stays consistent.
4. No merge possible: the whole schedule is serialised — every task goes to instance 0 of its
   executor and all barriers are dropped; FIFO in task order (a topological order) enforces every
   dependency. (A ``PassError`` if the function uses several executor kinds.)

Result: ``waits``/``updates`` hold physical ids, declarations ``rt.barrier`` ids ``0..P-1`` (P <= N).
Uses of one physical id are totally ordered: in task order its producers of use k, then its
consumers of use k, then the producers of use k + 1, ... so a reader splits uses at the first updating
task after a waiting task (the backend's barrier records). Every dependency of the input schedule is
still enforced (tested by a property test over random schedules).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, ModuleOp, i64
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from nnkiln.dialects.rt import BarrierOp, TaskOp
from nnkiln.errors import PassError


@dataclass
class Use:
    producers: set[int] = field(default_factory=set)
    consumers: set[int] = field(default_factory=set)
    virtual: list[int] = field(default_factory=list)


def happens_before(tasks: list[TaskOp]) -> list[int]:
    """Strict ancestors of each task as bitsets (FIFO per queue + barrier edges on virtual ids)."""
    producers: dict[int, list[int]] = {}
    for i, t in enumerate(tasks):
        for b in t.update_ids:
            producers.setdefault(b, []).append(i)
    last_on_queue: dict[tuple[str, int], int] = {}
    anc: list[int] = []
    for i, t in enumerate(tasks):
        bits = 0
        preds = [p for b in t.wait_ids for p in producers.get(b, [])]
        q = (t.executor_name, t.executor_index_value)
        if q in last_on_queue:
            preds.append(last_on_queue[q])
        for p in preds:
            bits |= anc[p] | (1 << p)
        anc.append(bits)
        last_on_queue[q] = i
    return anc


def assign(tasks: list[TaskOp], limit: int) -> dict[int, int] | None:
    """Virtual id → physical id, or None when the schedule must be serialised."""
    anc = happens_before(tasks)
    virtual: dict[int, Use] = {}
    for i, t in enumerate(tasks):
        for b in t.update_ids:
            virtual.setdefault(b, Use()).producers.add(i)
        for b in t.wait_ids:
            virtual.setdefault(b, Use()).consumers.add(i)
    current: list[Use] = []  # physical id → its current use
    last_start: list[int] = []
    mapping: dict[int, int] = {}
    for b, use in sorted(virtual.items(), key=lambda kv: (min(kv[1].producers, default=-1), kv[0])):
        start = min(use.producers, default=-1)

        def free(u: Use) -> bool:
            return all(all((anc[p] >> c) & 1 for p in use.producers) for c in u.consumers | u.producers)

        candidates = [p for p, u in enumerate(current) if free(u)]
        if candidates:
            p = min(candidates, key=lambda q: (last_start[q], q))
            current[p] = Use(set(use.producers), set(use.consumers), [b])
            last_start[p] = start
        elif len(current) < limit:
            p = len(current)
            current.append(Use(set(use.producers), set(use.consumers), [b]))
            last_start.append(start)
        else:
            p = -1
            for q, u in enumerate(current):
                prods, cons = u.producers | use.producers, u.consumers | use.consumers
                if cons and max(prods) < min(cons):
                    p = q
                    u.producers, u.consumers = prods, cons
                    u.virtual.append(b)
                    break
            if p < 0:
                return None
        mapping[b] = p
    return mapping


def _set(task: TaskOp, waits: list[int], updates: list[int]) -> None:
    task.properties["waits"] = DenseArrayBase.from_list(i64, sorted(set(waits)))
    task.properties["updates"] = DenseArrayBase.from_list(i64, sorted(set(updates)))


def rewrite_block(block: Block, limit: int) -> None:
    tasks = [op for op in block.ops if isinstance(op, TaskOp)]
    if not tasks:
        return
    mapping = assign(tasks, limit)
    if mapping is None:  # serialise: one queue per executor kind, no barriers
        if len({t.executor_name for t in tasks}) > 1:
            raise PassError(f"assign-physical-barriers: {limit} barriers are too few for this schedule")
        for t in tasks:
            t.properties["executor_index"] = IntegerAttr(0, i64)
            _set(t, [], [])
        count = 0
    else:
        for t in tasks:
            _set(t, [mapping[b] for b in t.wait_ids], [mapping[b] for b in t.update_ids])
        count = len(set(mapping.values()))
    for op in [o for o in block.ops if isinstance(o, BarrierOp)]:
        Rewriter.erase_op(op)
    for i in range(count):
        block.insert_op_before(BarrierOp(i), tasks[0])


@dataclass(frozen=True)
class AssignPhysicalBarriers(ModulePass):
    """Reuse barrier ids whose uses are ordered; keep at most ``max-barriers`` ids (serialising if needed)."""

    name = "assign-physical-barriers"
    max_barriers: int = 0
    target: str = "cpu"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from nnkiln.targets import get_target

        limit = self.max_barriers or get_target(self.target, threads=1).num_barriers
        for func in [f for f in op.body.block.ops if isinstance(f, FuncOp)]:
            rewrite_block(func.body.block, limit)
