"""``feasible-allocation`` (architecture spec §4.1.2.4): schedule the npu's tasks so every CMX fits, and place the
CMX buffers.

What, for each function with scratchpad buffers (``buf.alloc {memory = "CMX<k>"}``, from ``cmx-tiling``):
1. describe every ``async.execute`` as a job (its token dependencies, the cost model's cycles with its operands in
   their memories, its executor kind, the NCE cluster it is pinned to) and every CMX buffer by the tasks using it;
2. run the feasible memory scheduler (``nnkiln.analysis.feasible_schedule``): data tasks (the DMAs filling a CMX
   buffer) start only once their compute task (the NCE tile) has all its CMX buffers placed, first fit, so no
   CMX ever holds more than its capacity; executor instances of a kind are chosen as they become free; at most
   ``num_barriers / 4`` tiles are in flight at once (each needs about two barriers for its loads and its store,
   and the device has ``num_barriers``: more in flight and ``assign-physical-barriers`` must serialise);
3. re-order the executes by start time (the spec's step 3: "all operations will appear in non-descending order of
   start time") and give each its instance and predicted ``nnkiln.start_cycle`` / ``nnkiln.end_cycle``;
4. add the dependencies that make reusing CMX bytes safe (step 5: a buffer's writer waits for every user of the
   buffers whose bytes it takes; they have finished by then in the schedule, so nothing is delayed);
5. ``buf.alloc {memory = "CMX<k>"}`` → ``buf.static_alloc {memory = "CMX<k>", offset}`` (step 6).
DDR buffers keep their ``buf.alloc``: ``static-allocation`` plans them next, over the predicted times.

4b. spills (step 4): when nothing runs and no group fits (CMX full of resident NCE outputs, or fragmented) the
   scheduler moves a resident buffer out to DDR and back; each becomes a ``buf.copy {spill}`` DMA into a new DDR
   buffer and a ``buf.copy {spill}`` back into a new CMX buffer, the readers that had not run read the copy.

Legal before: async IR from ``wrap-into-async-regions``. After: every CMX buffer placed inside its memory; at every
instant of the predicted schedule the live buffers of a CMX are disjoint; token dependencies order every pair of
tasks whose CMX buffers share bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from nnkiln.analysis.feasible_schedule import Buf, Job, ScheduleError, schedule
from nnkiln.analysis.liveness import END_CYCLE, START_CYCLE, align_up, task_buffers
from nnkiln.conversion.buf_to_async import TASK_OPS, model_cost
from nnkiln.dialects.async_ import ExecuteOp, YieldOp
from nnkiln.dialects.buf import NCE_ATTR, AllocOp, CopyOp, StaticAllocOp, byte_size
from nnkiln.errors import PassError
from nnkiln.targets import MemoryKind, Target, find_memory


def _payload(ex: ExecuteOp) -> Operation:
    """The kernel or copy an execute runs."""
    return next(o for o in ex.body.block.ops if isinstance(o, TASK_OPS))


def scratchpad_allocs(block: Block) -> list[AllocOp]:
    """The ``buf.alloc``s of ``block`` in a CMX."""
    out = []
    for op in block.ops:
        if isinstance(op, AllocOp) and op.memory_name:
            mem = find_memory(op.memory_name)
            if mem is not None and mem.kind is MemoryKind.CMX:
                out.append(op)
    return out


def allocate_function(block: Block, target: Target, cmx_bytes: int = 0) -> dict[str, int]:
    """Schedule and place one function's tasks and CMX buffers (module docstring) in the first ``cmx_bytes`` of each
    CMX (0: all of it); returns each CMX's peak bytes."""
    allocs = scratchpad_allocs(block)
    if not allocs:
        return {}
    executes = [op for op in block.ops if isinstance(op, ExecuteOp)]
    index = {ex.token: i for i, ex in enumerate(executes)}
    cost = model_cost(target)
    jobs = []
    for ex in executes:
        op = _payload(ex)
        pin = op.attributes[NCE_ATTR].value.data if NCE_ATTR in op.attributes else None  # type: ignore[attr-defined]
        jobs.append(Job({index[d] for d in ex.dependencies}, max(1, int(cost(op))), ex.executor.data, pin))
    cmx = target.memory_of_kind(MemoryKind.CMX)
    assert cmx is not None
    buf_of: dict[SSAValue, int] = {a.result: k for k, a in enumerate(allocs)}
    bufs = [Buf(a.memory_name or "", align_up(byte_size(a.result.type), cmx.alignment), []) for a in allocs]
    for i, ex in enumerate(executes):
        reads, writes = task_buffers(ex)
        for b in {**reads, **writes}:
            if b in buf_of:
                bufs[buf_of[b]].users.append(i)
    pools = {e.kind.value: e.count for e in target.executors}
    from nnkiln.targets.cost import dma_cycles

    ddr = target.default_memory
    try:
        plan = schedule(jobs, pools, bufs, dict.fromkeys(cmx.instance_names(), min(cmx.size, cmx_bytes or cmx.size)),
                        max_groups=max(1, target.num_barriers // 4),
                        dma_cycles=lambda n: dma_cycles(target, n, cmx, ddr))
    except ScheduleError as err:
        raise PassError(f"feasible-allocation: {err}") from None
    values = [a.result for a in allocs]
    first = block.first_op
    for sp in plan.spills:  # step 4: the spill and pull-back DMAs, the readers redirected to the copy
        held = values[sp.buffer]
        out, back = AllocOp(held.type), AllocOp(held.type, memory=plan.bufs[sp.restored].memory)  # type: ignore[arg-type]
        block.insert_op_before(out, first)  # type: ignore[arg-type]
        block.insert_op_before(back, first)  # type: ignore[arg-type]
        allocs.append(back)
        values.append(back.result)
        for src, dst in ((held, out.result), (out.result, back.result)):
            ex = ExecuteOp([], "DMA", 0)
            ex.body.block.add_ops([CopyOp(src, dst, spill=True), YieldOp()])
            block.insert_op_before(ex, executes[-1].next_op)  # type: ignore[arg-type]
            executes.append(ex)
        for u in sp.readers:
            for inner in executes[u].body.block.ops:
                inner.operands = [back.result if v is held else v for v in inner.operands]
    anchor = executes[-1].next_op
    tokens = [ex.token for ex in executes]
    for i in plan.order:
        ex = executes[i]
        ex.detach()
        block.insert_op_before(ex, anchor)  # type: ignore[arg-type]
        ex.properties["executor_index"] = IntegerAttr(plan.instance[i], i64)
        ex.attributes[START_CYCLE] = IntegerAttr(plan.start[i], i64)
        ex.attributes[END_CYCLE] = IntegerAttr(plan.end[i], i64)
        deps = plan.jobs[i].deps | plan.extra_deps.get(i, set())
        ex.operands = [tokens[d] for d in sorted(deps, key=lambda d: (plan.start[d], d))]
    for a, b in zip(allocs, plan.bufs):
        Rewriter.replace_op(a, StaticAllocOp(a.result.type, b.memory, b.offset))  # type: ignore[arg-type]
    return plan.peak


@dataclass(frozen=True)
class FeasibleAllocation(ModulePass):
    """Schedule tasks so every CMX fits, place CMX buffers, add the dependencies their reuse needs."""

    name = "feasible-allocation"
    target: str = "npu"
    cmx_bytes: int = 0
    """Plan within this many bytes of each CMX (0: the device's capacity): leaves the rest of the scratchpad to
    something else, and lets a test make a model run out of CMX."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from nnkiln.targets import get_target

        target = get_target(self.target)
        if not target.is_npu:
            return
        for func in [f for f in op.body.block.ops if isinstance(f, FuncOp)]:
            allocate_function(func.body.block, target, self.cmx_bytes)
