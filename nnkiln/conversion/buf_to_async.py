"""``wrap-into-async-regions`` (= conversion ``buf-to-async``, architecture spec §3.3 "async regions").

What: every ``buf.kernel`` / ``buf.copy`` becomes the body of its own ``async.execute`` on an executor
instance chosen by a list scheduler; the executes' order in the IR is the schedule order.

- Aliases: results of kernels/copies/``buf.concat_view`` are replaced by the buffers they alias
  (their ``outs``), so every task names outer buffers (allocations, constants, arguments).
- Views (``buf.reshape``/``buf.subview``) are cloned into each task that uses them (a task is
  self-contained); ``buf.alloc``/``buf.const`` stay at the top of the function; those no task uses
  are erased (so the blob holds no dead constant).
- Dependencies: a task depends on every earlier task that wrote bytes it reads (RAW) or writes
  (WAW), and on every earlier task that read bytes it writes (WAR); accesses are byte ranges of base buffers
  (views resolved: ``byte_span``). ``optimize-async-deps`` removes the redundant ones.
- The npu's hardware path (a function with NCE kernels, ``cmx-tiling``): each task goes where ``placement`` says
  (an NCE tile on its cluster, a copy touching a CMX on a DMA engine, the rest on a SHAVE), costs the cost model's
  cycles with its operands in their memories, and the executor kinds are scheduled together by the feasible
  scheduler without memory limits (``nnkiln.analysis.feasible_schedule``; ``feasible-allocation`` re-schedules
  with the CMX capacities).
- Scheduling: the target's software-kernel executor (``Target.kernel_executor``: the cpu's cores, the npu's
  SHAVEs; ``threads`` overrides their count; 0 = the target's). A task's cost: on the cpu an estimate
  (multiply-accumulates for conv/matmul-like kernels, else bytes moved: ``estimate_cost``); on the other targets
  its cycles by the cost model (``nnkiln.targets.cost.task_cycles``, the numbers the simulator replays); priority = the longest cost path from the task to the end (bottom level). List
  scheduling: repeatedly take the ready task that can start earliest (ties: higher priority), put it
  on the executor instance that becomes free first. On one instance the program order is kept.
- Predicted times: when the cost model schedules several instances, each execute carries its predicted start and
  end cycles (``nnkiln.start_cycle`` / ``nnkiln.end_cycle``): ``static-allocation`` then plans buffers over time
  rather than positions, so reusing bytes never orders two tasks the schedule runs side by side.
- ``async.await_all`` of the tokens nobody waits for is placed before ``func.return``.

Legal before: buf IR (``tosa-to-buf``), one block per function. After: async IR; every kernel/copy
is inside an ``async.execute``; token dependencies cover every RAW/WAR/WAW hazard.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from nnkiln.analysis.liveness import END_CYCLE, START_CYCLE
from nnkiln.dialects.async_ import AwaitAllOp, ExecuteOp, YieldOp
from nnkiln.dialects.buf import (
    NCE_ATTR,
    AllocOp,
    ConcatViewOp,
    ConstOp,
    CopyOp,
    KernelOp,
    ReshapeOp,
    SubviewOp,
    base_buffer,
    byte_size,
    shape_and_itemsize,
)
from nnkiln.targets import ExecutorKind, MemoryKind, Target, find_memory

TASK_OPS = (KernelOp, CopyOp)
VIEW_OPS = (ReshapeOp, SubviewOp)


@dataclass
class Task:
    op: Operation
    reads: set[SSAValue]
    writes: set[SSAValue]
    cost: float
    deps: set[int] = field(default_factory=set)
    priority: float = 0.0
    start: float = 0.0  # set by ``list_schedule`` on several instances: the predicted start


def estimate_cost(op: Operation) -> float:
    """Rough work of a task: MACs for conv/matmul-like kernels, else bytes read and written."""
    moved = float(sum(byte_size(v.type) for v in op.operands))
    if isinstance(op, KernelOp) and op.kernel.data in ("tosa.conv2d", "tosa.depthwise_conv2d", "tosa.conv3d",
                                                        "tosa.transpose_conv2d", "tosa.fully_connected",
                                                        "tosa.matmul"):
        out = op.outs[0].type
        n_out = 1
        for d in out.get_shape():  # type: ignore[attr-defined]
            n_out *= d
        w = op.ins[1].type if op.kernel.data != "tosa.matmul" else op.ins[0].type
        shape = list(w.get_shape())  # type: ignore[attr-defined]
        k = shape[-1] if op.kernel.data != "tosa.depthwise_conv2d" else 1
        for d in shape[1:-1] if op.kernel.data != "tosa.fully_connected" else []:
            k *= d
        return moved + float(n_out * k)
    return moved


def memory_kind(v: SSAValue, target: Target) -> MemoryKind:
    """The kind of memory buffer ``v`` is in: its allocation's ``memory`` (a CMX), else the default memory."""
    owner = base_buffer(v).owner
    name = owner.memory_name if isinstance(owner, AllocOp) else None
    mem = find_memory(name) if name else None
    return mem.kind if mem is not None else target.default_memory.kind


def placement(op: Operation, target: Target) -> tuple[ExecutorKind, int | None]:
    """Where a task runs on an npu's hardware path: an NCE kernel (``nnkiln.nce = k``) on cluster k, a copy that
    touches a CMX on a DMA engine, anything else on a SHAVE (any instance: ``None``)."""
    if isinstance(op, KernelOp) and NCE_ATTR in op.attributes:
        return ExecutorKind.NCE, op.attributes[NCE_ATTR].value.data  # type: ignore[attr-defined]
    if isinstance(op, CopyOp) and any(memory_kind(v, target) is MemoryKind.CMX for v in op.operands):
        return ExecutorKind.DMA, None
    return target.kernel_executor.kind, None


def model_cost(target: Target, kind: ExecutorKind | None = None) -> Callable[[Operation], float]:
    """A task's cost as the cost model's cycles on one instance of ``kind`` (``nnkiln.targets.cost``; ``None``: the
    kind ``placement`` gives it), its operands in the memories they are allocated in."""
    from nnkiln.targets.cost import task_cycles

    def cost(op: Operation) -> float:
        kernel = op.kernel.data if isinstance(op, KernelOp) else "buf.copy"
        ins, outs = op.ins, op.outs  # type: ignore[attr-defined]
        mems = [memory_kind(v, target) for v in (*ins, *outs)]
        return float(task_cycles(target, kind or placement(op, target)[0], kernel, [shape_and_itemsize(v) for v in ins],
                                 [shape_and_itemsize(v) for v in outs], mems))

    return cost


def byte_span(v: SSAValue) -> tuple[SSAValue, int, int]:
    """``(base buffer, first byte, end byte)`` of the bytes ``v`` covers in its base (views resolved: a subview's
    byte offset, a reshape's same bytes; kernel/copy results are their ``outs``)."""
    lo, hi = 0, byte_size(v.type)
    while True:
        owner = v.owner
        if isinstance(owner, (*TASK_OPS, ConcatViewOp)):
            v = owner.outs[v.index]  # type: ignore[attr-defined]
        elif isinstance(owner, SubviewOp):
            off = owner.byte_offset()
            lo, hi, v = lo + off, hi + off, owner.source
        elif isinstance(owner, ReshapeOp):
            v = owner.source
        else:
            return v, lo, hi


def build_tasks(ops: list[Operation], cost: Callable[[Operation], float] = estimate_cost) -> list[Task]:
    """The tasks of ``ops`` with their hazards (module docstring), compared byte range by byte range: two tasks
    writing disjoint subviews of one buffer (the tiles of an npu op) do not depend on each other."""
    tasks: list[Task] = []
    writers: dict[SSAValue, list[tuple[int, int, int]]] = {}
    readers: dict[SSAValue, list[tuple[int, int, int]]] = {}

    def touching(table: dict[SSAValue, list[tuple[int, int, int]]], b: SSAValue, lo: int, hi: int) -> list[int]:
        return [j for a, z, j in table.get(b, ()) if a < hi and lo < z]

    for i, op in enumerate(ops):
        ins = op.ins if isinstance(op, TASK_OPS) else []  # type: ignore[attr-defined]
        outs = op.outs if isinstance(op, TASK_OPS) else []  # type: ignore[attr-defined]
        reads, writes = [byte_span(v) for v in ins], [byte_span(v) for v in outs]
        t = Task(op, {b for b, _, _ in reads}, {b for b, _, _ in writes}, cost(op))
        for b, lo, hi in (*reads, *writes):
            t.deps.update(touching(writers, b, lo, hi))
        for b, lo, hi in writes:
            t.deps.update(touching(readers, b, lo, hi))
        t.deps.discard(i)
        for b, lo, hi in reads:
            readers.setdefault(b, []).append((lo, hi, i))
        for b, lo, hi in writes:
            writers.setdefault(b, []).append((lo, hi, i))
        tasks.append(t)
    return tasks


def list_schedule(tasks: list[Task], instances: int) -> list[tuple[int, int]]:
    """(task index, executor instance) in schedule order. On one instance every topological order
    finishes at the same time, so the program order is kept: it is the order the frontends and passes
    chose for memory (depth-first; ``split-batch``'s sample after sample)."""
    if instances == 1:
        return [(i, 0) for i in range(len(tasks))]
    users: list[list[int]] = [[] for _ in tasks]
    for i, t in enumerate(tasks):
        for d in t.deps:
            users[d].append(i)
    for i in reversed(range(len(tasks))):
        tasks[i].priority = tasks[i].cost + max((tasks[u].priority for u in users[i]), default=0.0)
    free = [0.0] * instances  # time each instance becomes free
    last_task: list[int | None] = [None] * instances
    finish: dict[int, float] = {}
    waiting = [len(t.deps) for t in tasks]
    ready = [i for i, n in enumerate(waiting) if n == 0]
    order: list[tuple[int, int]] = []
    while ready:
        earliest_free = min(free)

        def ready_at(i: int) -> float:
            return max([0.0] + [finish[d] for d in tasks[i].deps])

        best = min(ready, key=lambda i: (max(earliest_free, ready_at(i)), -tasks[i].priority, i))
        ready.remove(best)
        at = ready_at(best)
        # an instance free by the time the task is ready; prefer the one that ran a dependency (no barrier)
        inst = min(range(instances), key=lambda k: (max(free[k], at), last_task[k] not in tasks[best].deps, k))
        start = max(free[inst], at)
        finish[best] = start + tasks[best].cost
        tasks[best].start = start
        free[inst] = finish[best]
        last_task[inst] = best
        order.append((best, inst))
        for u in users[best]:
            waiting[u] -= 1
            if waiting[u] == 0:
                ready.append(u)
    assert len(order) == len(tasks), "dependency cycle"
    return order


def _clone_views(value: SSAValue, body: Block, cache: dict[SSAValue, SSAValue]) -> SSAValue:
    """``value`` usable inside ``body``: view chains are cloned into it."""
    if value in cache:
        return cache[value]
    owner = value.owner
    if isinstance(owner, VIEW_OPS):
        src = _clone_views(owner.source, body, cache)
        clone = owner.clone()
        clone.operands = [src]
        body.add_op(clone)
        cache[value] = clone.results[0]
        return clone.results[0]
    return value


def wrap_function(func: FuncOp, executor: str, instances: int,
                  cost: Callable[[Operation], float] = estimate_cost,
                  place: Callable[[Operation], tuple[ExecutorKind, int | None]] | None = None,
                  pools: dict[str, int] | None = None) -> None:
    block = func.body.block
    for op in list(block.ops):  # results → the buffers they alias
        if isinstance(op, (*TASK_OPS, ConcatViewOp)):
            for r, o in zip(op.results, op.outs):  # type: ignore[attr-defined]
                r.replace_all_uses_with(o)
            if isinstance(op, ConcatViewOp):
                op.detach()
                op.erase()
    task_ops = [op for op in block.ops if isinstance(op, TASK_OPS)]
    tasks = build_tasks(task_ops, cost)
    kinds = [executor] * len(tasks)
    if place is not None and pools is not None:  # several executor kinds (the npu's hardware path)
        from nnkiln.analysis.feasible_schedule import Job, schedule

        where = [place(t.op) for t in tasks]
        kinds = [k.value for k, _ in where]
        plan = schedule([Job(set(t.deps), max(1, int(t.cost)), k, pin) for t, (k, pin) in
                         zip(tasks, [(k.value, p) for k, p in where])], pools)
        for i, t in enumerate(tasks):
            t.start = plan.start[i]
        order = [(i, plan.instance[i]) for i in plan.order]
        timed = True
    else:
        order = list_schedule(tasks, instances)
        timed = instances > 1 and cost is not estimate_cost
    ret = block.last_op
    assert isinstance(ret, ReturnOp)
    tokens: dict[int, SSAValue] = {}
    consumed: set[int] = set()
    position = {}  # task -> its first position in the schedule
    for k, (o, _) in enumerate(order):
        position.setdefault(o, k)
    for i, inst in order:
        op = tasks[i].op
        op.detach()
        ex = ExecuteOp([tokens[d] for d in sorted(tasks[i].deps, key=position.__getitem__)], kinds[i], inst)
        body = ex.body.block
        cache: dict[SSAValue, SSAValue] = {}
        op.operands = [_clone_views(v, body, cache) for v in op.operands]
        body.add_op(op)
        body.add_op(YieldOp())
        block.insert_op_before(ex, ret)
        if timed:
            ex.attributes[START_CYCLE] = IntegerAttr(int(tasks[i].start), i64)
            ex.attributes[END_CYCLE] = IntegerAttr(int(tasks[i].start + tasks[i].cost), i64)
        tokens[i] = ex.token
        consumed.update(tasks[i].deps)
    sinks = [tokens[i] for i, _ in order if i not in consumed]
    if sinks:
        block.insert_op_before(AwaitAllOp(sinks), ret)
    for op in reversed(list(block.ops)):  # top-level views are now unused; so are dead constants/allocations
        if isinstance(op, (*VIEW_OPS, ConstOp, AllocOp)) and not op.results[0].uses:
            op.detach()
            op.erase()


@dataclass(frozen=True)
class WrapIntoAsyncRegions(ModulePass):
    """Wrap each kernel/copy into an ``async.execute`` scheduled on the target's compute executors."""

    name = "wrap-into-async-regions"
    target: str = "cpu"
    threads: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from nnkiln.targets import get_target

        target = get_target(self.target, self.threads or None)
        ex = target.kernel_executor
        instances = min(self.threads, ex.count) if self.threads else ex.count
        cost = estimate_cost if ex.kind is ExecutorKind.CPU else model_cost(target, ex.kind)
        for func in [f for f in op.body.block.ops if isinstance(f, FuncOp)]:
            if target.is_npu and any(NCE_ATTR in o.attributes for o in func.body.block.ops):
                pools = {e.kind.value: e.count for e in target.executors}
                pools[ex.kind.value] = instances
                wrap_function(func, ex.name, instances, model_cost(target), lambda o: placement(o, target), pools)
            else:
                wrap_function(func, ex.name, instances, cost)
