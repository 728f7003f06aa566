"""``async-to-rt``: the async level → the runtime level L1 (architecture spec §4 "runtime tasks and barriers").

What:
- Buffers get fixed places: ``buf.static_alloc`` → ``rt.buffer {section = "arena", offset}`` (with ``memory =
  "CMX<k>"`` for a buffer in an npu scratchpad: each memory instance is an arena of its own); a
  function argument marked ``nnkiln.io = "input"``/``"output"`` → ``rt.buffer {section, index =
  its position among the inputs/outputs, offset = 0}`` (the arguments stay, the buffers replace
  their uses). ``buf.const`` stays.
- Each ``async.execute`` → ``rt.task`` with the same executor/executor_index and body (``async.yield``
  → ``rt.end``), in the same order.
- Virtual barriers: one per token that has a consumer on ANOTHER queue. A dependency between tasks of
  the same ``(executor, executor_index)`` queue needs no barrier: the queue runs in IR order (FIFO)
  and the producer is earlier. ``waits`` = the barriers of the task's remaining dependencies,
  ``updates`` = its own barrier. ``rt.barrier {id}`` declarations (ids 0..n-1, in schedule order)
  precede the tasks. ``async.await_all`` disappears (the run ends when every task has finished).
Why: the runtime executes queues synchronised by barrier counters, not tokens.
Legal before: async IR after ``static-allocation`` (no ``buf.alloc``). After: rt IR; every token
dependency is enforced by a barrier or by FIFO order; run ``assign-physical-barriers`` next.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import DictionaryAttr, ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from nnkiln.dialects.async_ import AwaitAllOp, ExecuteOp, YieldOp
from nnkiln.dialects.buf import AllocOp, StaticAllocOp
from nnkiln.dialects.rt import BarrierOp, BufferOp, EndOp, TaskOp
from nnkiln.errors import PassError
from nnkiln.targets import MemoryKind, find_memory


def _io_buffers(func: FuncOp, block: Block, first: Operation | None) -> None:
    counters = {"input": 0, "output": 0}
    attrs = func.arg_attrs.data if func.arg_attrs is not None else [DictionaryAttr({})] * len(block.args)
    for arg, d in zip(block.args, attrs):
        io = d.data.get("nnkiln.io")
        if not isinstance(io, StringAttr) or io.data not in counters:
            continue
        buf = BufferOp(io.data, 0, counters[io.data], arg.type)  # type: ignore[arg-type]
        counters[io.data] += 1
        if first is None:
            block.insert_op_before(buf, block.last_op)  # type: ignore[arg-type]
        else:
            block.insert_op_before(buf, first)
        arg.replace_all_uses_with(buf.buffer)


def convert_block(func: FuncOp) -> None:
    block = func.body.block
    if any(isinstance(o, AllocOp) for o in block.ops):
        raise PassError("async-to-rt: buffers are not placed yet (run static-allocation first)")
    _io_buffers(func, block, block.first_op)
    for op in list(block.ops):
        if isinstance(op, StaticAllocOp):
            mem = find_memory(op.memory.data)
            scratch = op.memory.data if mem is not None and mem.kind is MemoryKind.CMX else None
            Rewriter.replace_op(op, BufferOp("arena", op.offset.value.data, 0, op.result.type,  # type: ignore[arg-type]
                                             memory=scratch))
    executes = [op for op in block.ops if isinstance(op, ExecuteOp)]
    queue = {ex.token: (ex.executor.data, ex.index) for ex in executes}
    deps = {ex: [d for d in ex.dependencies if queue[d] != (ex.executor.data, ex.index)] for ex in executes}
    barrier: dict = {}
    for ex in executes:
        for d in deps[ex]:
            barrier.setdefault(d, None)
    for i, tok in enumerate(t.token for t in executes if t.token in barrier):
        barrier[tok] = i
    if executes and barrier:
        for i in range(len(barrier)):
            block.insert_op_before(BarrierOp(i), executes[0])
    for ex in executes:
        waits = sorted(barrier[d] for d in deps[ex])
        updates = [barrier[ex.token]] if ex.token in barrier else []
        body = ex.body.block
        ex.body.detach_block(body)
        assert isinstance(body.last_op, YieldOp)
        Rewriter.replace_op(body.last_op, EndOp())
        task = TaskOp(ex.executor.data, ex.index, waits, updates, body)
        task.attributes.update(ex.attributes)
        block.insert_op_before(task, ex)
    for op in list(block.ops):
        if isinstance(op, AwaitAllOp):
            Rewriter.erase_op(op)
    for ex in reversed(executes):
        Rewriter.erase_op(ex)


@dataclass(frozen=True)
class AsyncToRt(ModulePass):
    """Lower async executes to rt tasks with virtual barriers and placed buffers to rt buffers."""

    name = "async-to-rt"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func in [f for f in op.body.block.ops if isinstance(f, FuncOp)]:
            convert_block(func)
