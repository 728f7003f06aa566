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
4. Delayed signalling: a later task ``x`` that happens after every producer of ``b`` (a later task of
   the producer's queue, FIFO, or one the producers precede through barriers: queues of several
   executor kinds), placed before every consumer of ``b``, updates ``b`` instead, when an id is free for
   ``x``; the consumers now also wait for ``x`` (serialisation), all edges forward in task order.
5. Otherwise two queues of one executor are serialised into one (the pair with the most barrier
   traffic between them; task order is a topological order, so FIFO on the merged queue enforces
   both queues' order and the dependencies between them), waits implied by FIFO are dropped, and
   the assignment restarts. With one executor kind, in the limit every executor has one queue and needs
   no barrier at all; with several kinds (the npu: NCE, DMA, SHAVE) the last resort is ``chain``: the tasks
   run one at a time in task order, which two ids always allow (rare: 1 of 680 random 30-op graphs on
   npu-small).

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


def happens_before(tasks: list[TaskOp], extra: dict[int, set[int]] | None = None) -> list[int]:
    """Strict ancestors of each task as bitsets (FIFO per queue + barrier edges on virtual ids +
    ``extra`` predecessor edges added by delayed signalling)."""
    producers: dict[int, list[int]] = {}
    for i, t in enumerate(tasks):
        for b in t.update_ids:
            producers.setdefault(b, []).append(i)
    last_on_queue: dict[tuple[str, int], int] = {}
    anc: list[int] = []
    for i, t in enumerate(tasks):
        bits = 0
        preds = [p for b in t.wait_ids for p in producers.get(b, [])] + sorted((extra or {}).get(i, ()))
        q = (t.executor_name, t.executor_index_value)
        if q in last_on_queue:
            preds.append(last_on_queue[q])
        for p in preds:
            bits |= anc[p] | (1 << p)
        anc.append(bits)
        last_on_queue[q] = i
    return anc


def assign(tasks: list[TaskOp], limit: int) -> dict[int, tuple[int, set[int]]] | None:
    """Virtual id → (physical id, the tasks that update it), or None when the schedule must be serialised."""
    extra: dict[int, set[int]] = {}
    anc = happens_before(tasks)
    virtual: dict[int, Use] = {}
    for i, t in enumerate(tasks):
        for b in t.update_ids:
            virtual.setdefault(b, Use()).producers.add(i)
        for b in t.wait_ids:
            virtual.setdefault(b, Use()).consumers.add(i)
    current: list[Use] = []  # physical id → its current use
    previous: list[set[int]] = []  # physical id → the tasks of its previous use
    last_start: list[int] = []
    mapping: dict[int, tuple[int, set[int]]] = {}

    def free_for(producers: set[int]) -> list[int]:
        return [p for p, u in enumerate(current)
                if all(all((anc[x] >> c) & 1 for x in producers) for c in u.consumers | u.producers)]

    for b, use in sorted(virtual.items(), key=lambda kv: (min(kv[1].producers, default=-1), kv[0])):
        start = min(use.producers, default=-1)
        candidates = free_for(use.producers)
        if candidates:
            p = min(candidates, key=lambda q: (last_start[q], q))
        elif len(current) < limit:
            p = len(current)
            current.append(Use())
            previous.append(set())
            last_start.append(start)
        else:
            p = _merge(current, previous, use, b, anc)
            if p >= 0:
                mapping[b] = (p, set(use.producers))
                continue
            delayed = _delay(tasks, use, free_for, anc)
            if delayed is None:
                return None
            p, x = delayed
            for c in use.consumers:
                extra.setdefault(c, set()).add(x)
            anc = happens_before(tasks, extra)
            use = Use({x}, set(use.consumers), [b])
        previous[p] = current[p].producers | current[p].consumers
        current[p] = Use(set(use.producers), set(use.consumers), [b])
        last_start[p] = start
        mapping[b] = (p, set(use.producers))
    return mapping


def _merge(current: list[Use], previous: list[set[int]], use: Use, b: int, anc: list[int]) -> int:
    """Merge ``use`` into a current use when every producer precedes every consumer in task order and
    the previous use of that id is over before ``use``'s producers (as for a reuse)."""
    for q, u in enumerate(current):
        prods, cons = u.producers | use.producers, u.consumers | use.consumers
        if cons and max(prods) < min(cons) and all((anc[x] >> c) & 1 for x in use.producers for c in previous[q]):
            u.producers, u.consumers = prods, cons
            u.virtual.append(b)
            return q
    return -1


def _delay(tasks: list[TaskOp], use: Use, free_for, anc: list[int]) -> tuple[int, int] | None:  # noqa: ANN001
    """Delayed signalling: a later task ``x``, before every consumer in task order, that happens after every
    producer (a later task of a single producer's queue, by FIFO, or any task the producers precede through
    barriers), signals instead; pick the first ``x`` for which an id is free. Returns (physical id, x)."""
    if not use.producers or not use.consumers:
        return None
    for x in range(max(use.producers) + 1, min(use.consumers)):
        if all((anc[x] >> t) & 1 for t in use.producers):
            ids = free_for({x})
            if ids:
                return ids[0], x
    return None


def _set(task: TaskOp, waits: list[int], updates: list[int]) -> None:
    task.properties["waits"] = DenseArrayBase.from_list(i64, sorted(set(waits)))
    task.properties["updates"] = DenseArrayBase.from_list(i64, sorted(set(updates)))


def merge_two_queues(tasks: list[TaskOp]) -> bool:
    """Serialise two queues of one executor into one (the pair with the most barrier traffic between
    them); waits now implied by FIFO order are dropped, and updates nobody waits for. False if every
    executor has a single queue left."""
    queue = [(t.executor_name, t.executor_index_value) for t in tasks]
    producers: dict[int, list[int]] = {}
    for i, t in enumerate(tasks):
        for b in t.update_ids:
            producers.setdefault(b, []).append(i)
    traffic: dict[tuple[tuple[str, int], tuple[str, int]], int] = {}
    for i, t in enumerate(tasks):
        for b in t.wait_ids:
            for p in producers.get(b, []):
                if queue[p] != queue[i] and queue[p][0] == queue[i][0]:
                    key = (min(queue[p], queue[i]), max(queue[p], queue[i]))
                    traffic[key] = traffic.get(key, 0) + 1
    names: dict[str, set[tuple[str, int]]] = {}
    for q in queue:
        names.setdefault(q[0], set()).add(q)
    pairs = [k for k in traffic] or [tuple(sorted(qs))[:2] for qs in names.values() if len(qs) > 1]
    if not pairs:
        return False
    keep, gone = max(pairs, key=lambda k: (traffic.get(k, 0), [-x[1] for x in k]))  # type: ignore[misc]
    for i, t in enumerate(tasks):
        if queue[i] == gone:
            t.properties["executor_index"] = IntegerAttr(keep[1], i64)
            queue[i] = keep
    waited: set[int] = set()
    for i, t in enumerate(tasks):
        kept = [b for b in t.wait_ids if any(queue[p] != queue[i] for p in producers.get(b, []))]
        waited.update(kept)
        _set(t, kept, list(t.update_ids))
    for t in tasks:
        _set(t, list(t.wait_ids), [b for b in t.update_ids if b in waited])
    return True


def chain(tasks: list[TaskOp]) -> None:
    """The last resort (queues of several executor kinds that cannot be merged): run the tasks one at a time in IR
    order, a task waiting for the previous one when their queues differ. IR order is a topological order, so every
    dependency still holds, and two physical ids always suffice (a use's consumer precedes the next use's producer)."""
    base = 1 + max((b for t in tasks for b in (*t.wait_ids, *t.update_ids)), default=0)
    for i, t in enumerate(tasks):
        same = i > 0 and (tasks[i - 1].executor_name, tasks[i - 1].executor_index_value) == (
            t.executor_name, t.executor_index_value)
        nxt = i + 1 < len(tasks) and (tasks[i + 1].executor_name, tasks[i + 1].executor_index_value) == (
            t.executor_name, t.executor_index_value)
        _set(t, [] if i == 0 or same else [base + i], [] if i + 1 == len(tasks) or nxt else [base + i + 1])


def rewrite_block(block: Block, limit: int) -> None:
    tasks = [op for op in block.ops if isinstance(op, TaskOp)]
    if not tasks:
        return
    mapping = assign(tasks, limit)
    while mapping is None:  # serialise queue pairs until the barriers fit
        if not merge_two_queues(tasks):
            chain(tasks)
            mapping = assign(tasks, limit)
            if mapping is None:
                raise PassError(f"assign-physical-barriers: {limit} barriers are too few even for one task at a "
                                "time")
            break
        mapping = assign(tasks, limit)
    updates: dict[int, list[int]] = {}
    for p, producers in mapping.values():
        for x in producers:
            updates.setdefault(x, []).append(p)
    for i, t in enumerate(tasks):
        _set(t, [mapping[b][0] for b in t.wait_ids], updates.get(i, []))
    count = len({p for p, _ in mapping.values()})
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
