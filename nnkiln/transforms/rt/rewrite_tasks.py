"""Applying planned task edits (``nnkiln.analysis.task_edits``) to an rt-level function: the rewrite step every
rt-level fusion pass shares.

Why not rewrite patterns: these passes plan on the whole queue of one function (byte regions after static
allocation, what is read later in run order); the plan is made once on the blob tables (``TaskTable``) and then
applied here, each edit whole or not at all.

Applying an edit: the views and constants inside the old ``rt.task``s move to the top level just before them (so
the new tasks may use them), uses of the old kernels' results become uses of their ``outs`` (a result is an
alias of its out buffer), the new tasks (one ``rt.task`` each) go where the last old task was, the first waiting
where the first old task waited and the last updating every barrier the old tasks updated, and the old tasks go.
An edit touching an ``rt.task`` with several kernels is skipped (its other kernels would go too).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block

from nnkiln.analysis.task_edits import NewTask, TaskEdit
from nnkiln.analysis.task_table import TaskTable
from nnkiln.blob.format import BufferDesc, TaskDesc


def rt_functions(module: ModuleOp) -> list[FuncOp]:
    """The functions of ``module`` that hold ``rt.task``s."""
    from nnkiln.dialects.rt import TaskOp

    return [f for f in module.body.block.ops if isinstance(f, FuncOp)
            and any(isinstance(op, TaskOp) for op in f.body.blocks[0].ops)]


def _attrs(values: dict[str, Any]) -> DictionaryAttr:
    from nnkiln.dialects.tosa.base import to_attr

    return DictionaryAttr({k: to_attr(v) for k, v in values.items()})


def _post_op(p: dict[str, Any]) -> DictionaryAttr:
    d = {"kernel": StringAttr(p["kernel"]), "attrs": _attrs(p.get("attrs", {}))}
    if p.get("operand") is not None:
        d["operand"] = IntegerAttr(int(p["operand"]), i64)
    return DictionaryAttr(d)


def _kernel(table: TaskTable, n: NewTask) -> Any:
    from nnkiln.dialects.buf import KernelOp

    return KernelOp(n.kernel, [table.values[b] for b in n.ins], [table.values[b] for b in n.outs], _attrs(n.attrs),
                    [_post_op(p) for p in n.post_ops] or None, n.operand_perms or None)


def apply_task_edits(table: TaskTable, edits: Sequence[TaskEdit]) -> int:
    """Apply ``edits`` (planned on ``table``, which must describe the function as it is now); returns how many were
    applied (see the module docstring)."""
    from nnkiln.dialects.rt import EndOp, TaskOp

    kernels_of = Counter(id(r) for r in table.rt_tasks)
    applied = 0
    for e in edits:
        olds = [table.rt_tasks[i] for i in e.tasks]
        if any(kernels_of[id(r)] != 1 or table.ops[i] is None for r, i in zip(olds, e.tasks)):
            continue
        for r, i in zip(olds, e.tasks):
            kernel = table.ops[i]
            for op in list(r.body.block.ops):
                if op is kernel or isinstance(op, EndOp):
                    continue
                op.detach()
                r.parent_block().insert_op_before(op, r)  # type: ignore[union-attr]
            for res, out in zip(kernel.results, kernel.outs):  # type: ignore[union-attr]
                res.replace_all_uses_with(out)
        anchor = olds[-1]
        waits = olds[0].wait_ids
        updates = tuple(dict.fromkeys(u for r in olds for u in r.update_ids))
        block = anchor.parent_block()
        for j, n in enumerate(e.new):
            task = TaskOp(anchor.executor_name, anchor.executor_index_value, waits if j == 0 else (),
                          updates if j == len(e.new) - 1 else (), Block([_kernel(table, n), EndOp()]))
            block.insert_op_before(task, anchor)  # type: ignore[union-attr]
        for r in olds:
            r.detach()
            r.erase()
        applied += 1
    return applied


def plan_and_apply(module: ModuleOp, plan: Callable[[list[TaskDesc], list[BufferDesc]], list[TaskEdit]]) -> None:
    """For every rt-level function of ``module``: its blob tables, ``plan(tasks, buffers)`` on them, the edits
    applied (the whole of an rt-level fusion pass)."""
    for func in rt_functions(module):
        table = TaskTable.of_function(func)
        apply_task_edits(table, plan(table.tasks, table.buffers))


__all__ = ["apply_task_edits", "plan_and_apply", "rt_functions"]
