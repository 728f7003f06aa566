"""Edits of the blob's task list that rt-level fusion passes plan: which tasks run as which new tasks.

A plan is made on the blob tables (``analysis.task_table``, byte regions final after static allocation) and
applied to the IR by ``transforms.rt.apply_task_edits``; ``apply_to_tasks`` applies it to a task list directly
(tests of hand-made blobs). No xDSL.

Invariants of an edit: its ``tasks`` (at least one) are in one executor queue, in blob order, and the planner has
proved that the queue's tasks between them neither write what the edit's tasks read nor touch what they write;
the new tasks run in order on that queue where the LAST old task ran; the first new task waits where the first
old one waited, the last new task updates every barrier the old ones updated. Edits of one plan touch disjoint
tasks; an edit is applied whole or not at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from nnkiln.blob.format import TaskDesc


@dataclass(frozen=True)
class NewTask:
    """A task an edit introduces: ``kernel`` on buffers ``ins`` / ``outs`` (blob buffer indices)."""

    kernel: str
    ins: tuple[int, ...]
    outs: tuple[int, ...]
    attrs: dict[str, Any] = field(default_factory=dict)
    post_ops: tuple[dict[str, Any], ...] = ()
    operand_perms: tuple[tuple[int, ...], ...] = ()
    """Per ``ins``: the permutation the kernel reads it through (``buf.kernel``'s ``operand_perms``)."""


@dataclass(frozen=True)
class TaskEdit:
    """Tasks ``tasks`` (blob indices) are replaced by ``new`` (see the module docstring)."""

    tasks: tuple[int, ...]
    new: tuple[NewTask, ...]


def apply_to_tasks(tasks: Sequence[TaskDesc], edits: Sequence[TaskEdit]) -> list[TaskDesc]:
    """The task list with ``edits`` applied (each edit's new tasks where its last task was)."""
    last = {e.tasks[-1]: e for e in edits}
    gone = {t for e in edits for t in e.tasks}
    out: list[TaskDesc] = []
    for i, t in enumerate(tasks):
        e = last.get(i)
        if e is not None:
            waits = tasks[e.tasks[0]].waits
            updates = tuple(u for k in e.tasks for u in tasks[k].updates)
            for j, n in enumerate(e.new):
                args: dict[str, Any] = {"attrs": dict(n.attrs), "post_ops": [dict(p) for p in n.post_ops]}
                if any(n.operand_perms):
                    args["operand_perms"] = [list(p) for p in n.operand_perms]
                out.append(TaskDesc(t.executor, t.executor_index, n.kernel, args, tuple(n.ins), tuple(n.outs),
                                    waits if j == 0 else (), updates if j == len(e.new) - 1 else ()))
        elif i not in gone:
            out.append(t)
    return out


__all__ = ["NewTask", "TaskEdit", "apply_to_tasks"]
