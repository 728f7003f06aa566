"""The blob tables of an ``rt``-level function: buffers and tasks exactly as the blob will hold them.

``TaskTable`` walks an rt-level ``func.func`` as the blob writer does (``nnkiln.conversion.rt_to_blob`` uses it):
every io argument, ``rt.buffer``, ``buf.const`` and view becomes a ``BufferDesc`` (views alias their base's bytes),
every ``buf.kernel`` / ``buf.copy`` in an ``rt.task`` a ``TaskDesc``, an empty ``rt.task`` one ``rt.nop`` task, and
barrier ids become uses of physical barriers. Besides the ``BlobBuilder`` it fills, it records which IR op each
task and buffer came from, so that rt-level passes can plan on the tables (byte regions, blob order) and rewrite
the IR (``ops``, ``rt_tasks``, ``values``), and the constants' arrays (``constant``).

Invariant: ``tasks[i]`` is ``ops[i]`` (``None`` for an ``rt.nop``) inside ``rt_tasks[i]``; ``values[k]`` is an SSA
value whose buffer is ``buffers[k]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, MemRefType, NameLoc, StringAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue

from nnkiln.blob.format import PANEL_WIDTH, BufferDesc, Memory, TaskDesc, pack_panels
from nnkiln.blob.writer import BlobBuilder
from nnkiln.errors import BlobError
from nnkiln.kinds import Kind

NOP_KERNEL = "rt.nop"
"""The blob kernel of an ``rt.task`` without kernels: it keeps the task's synchronisation."""


def kind_of_memref(t: Any, what: str) -> Kind:
    from nnkiln.dialects.tosa.base import kind_of

    if not isinstance(t, MemRefType):
        raise BlobError(f"{what}: expected a memref, got {t}")
    k = kind_of(t.element_type)
    if k is None:
        raise BlobError(f"{what}: element type {t.element_type} cannot be stored in a blob")
    return k


def shape_of(t: MemRefType) -> tuple[int, ...]:
    return tuple(int(d) for d in t.get_shape())




def post_ops_of(attr: ArrayAttr | None) -> list[dict[str, Any]]:
    from nnkiln.dialects.tosa.base import from_attr

    result = []
    for p in attr.data if attr is not None else ():
        d = p.data
        kernel = d.get("kernel")
        attrs = d.get("attrs")
        entry: dict[str, Any] = {
            "kernel": kernel.data if isinstance(kernel, StringAttr) else str(kernel),
            "attrs": {k: from_attr(v) for k, v in attrs.data.items()} if isinstance(attrs, DictionaryAttr) else {},
        }
        if isinstance(d.get("operand"), IntegerAttr):
            entry["operand"] = int(d["operand"].value.data)
        result.append(entry)
    return result


def packable_weights(func: FuncOp, width: int) -> set[SSAValue]:
    """``buf.const`` results that feed only float32, batch-1 ``tosa.matmul`` kernels as their right operand:
    they are written as ``width``-column panels (``blob.format.pack_panels``; 0: none)."""
    from nnkiln.dialects.buf import ConstOp, KernelOp

    if width <= 0:
        return set()

    def plain_matmul(op: Operation) -> bool:
        return (isinstance(op, KernelOp) and op.kernel.data == "tosa.matmul" and len(op.ins) >= 2
                and all(isinstance(v.type, MemRefType) and kind_of_memref(v.type, "operand") is Kind.F32
                        and shape_of(v.type)[0] == 1 for v in (op.ins[0], op.ins[1], op.outs[0])))

    found: set[SSAValue] = set()
    for op in func.walk():
        if plain_matmul(op) and isinstance(op.ins[1].owner, ConstOp) and len(shape_of(op.ins[1].type)) == 3:
            v = op.ins[1]
            if all(plain_matmul(u.operation) and u.index == 1 for u in v.uses):
                found.add(v)
    return found


class TaskTable:
    """Fills a ``BlobBuilder`` from an rt-level function (``args``, then ``declare`` / ``task`` per top-level op in
    order; ``of_function`` does it all) and records where each task and buffer came from (module docstring).
    ``packed``: constants written as GEMM panels (``docs/blob-format.md``, "Packed GEMM weights")."""

    def __init__(self, packed: set[SSAValue] | None = None) -> None:
        self.packed = packed or set()
        self.arena_names: list[str | None] = [None]
        """The memory of each arena by index (``None``: the target's default memory; then ``rt.buffer`` memories in
        order of appearance): ``rt_to_blob`` names them in METADATA ``arenas``."""
        self.b = BlobBuilder()
        self.buf: dict[SSAValue, int] = {}
        self.ops: list[Operation | None] = []
        self.rt_tasks: list[Operation] = []
        self.values: list[SSAValue] = []
        self._arrays: dict[int, np.ndarray] = {}
        self.output_dtypes: dict[str, str] = {}
        """Output name -> the element type the model declares (``nnkiln.dtype``), where it is not the computed one."""
        self.current_use: dict[int, int] = {}
        self.use_consumed: dict[int, bool] = {}
        self.declared: set[int] = set()
        self.io_buffers: dict[tuple[str, int], int] = {}

    @classmethod
    def of_function(cls, func: FuncOp, packed: set[SSAValue] | None = None) -> TaskTable:
        """The tables of rt-level function ``func`` (``BlobError`` if it breaks the rt-level contract)."""
        from xdsl.dialects.func import ReturnOp

        from nnkiln.dialects.rt import BarrierOp, TaskOp

        table = cls(packed)
        table.args(func)
        for op in func.body.blocks[0].ops:
            if isinstance(op, BarrierOp):
                table.declared.add(op.barrier_id)
            elif isinstance(op, TaskOp):
                table.task(op)
            elif isinstance(op, ReturnOp):
                if op.operands:
                    raise BlobError("the rt-level function returns values; results must be written to output arguments")
            elif not table.declare(op):
                raise BlobError(f"'{op.name}' cannot appear at the top level of an rt-level function")
        return table

    @property
    def tasks(self) -> list[TaskDesc]:
        return self.b.tasks

    @property
    def buffers(self) -> list[BufferDesc]:
        return self.b.buffers

    def constant(self, k: int) -> np.ndarray | None:
        """The array of CONSTANT buffer ``k`` (a view for a view of a constant; its IR values, not GEMM panels)."""
        b = self.buffers[k]
        if b.memory is not Memory.CONSTANT:
            return None
        if k in self._arrays:
            return self._arrays[k]
        root = self._arrays.get(b.alias_of)
        if root is None:
            return None
        base = self.buffers[b.alias_of]
        raw = np.ascontiguousarray(root).reshape(-1).view(np.uint8)[b.offset - base.offset:b.offset - base.offset + b.size]
        return raw.view(b.dtype).reshape(b.shape)

    def _place(self, v: SSAValue, idx: int) -> int:
        self.buf[v] = idx
        while len(self.values) <= idx:
            self.values.append(v)
        return idx

    def value(self, v: SSAValue, op: Operation) -> int:
        if v not in self.buf:
            raise BlobError(f"'{op.name}': operand {v.name_hint or v} is not a placed buffer "
                            "(rt.buffer, io argument, constant or view)")
        return self.buf[v]

    def args(self, func: FuncOp) -> None:
        block = func.body.blocks[0]
        arg_attrs = func.arg_attrs.data if func.arg_attrs is not None else ()
        counts = {"input": 0, "output": 0}
        for i, arg in enumerate(block.args):
            d = arg_attrs[i].data if i < len(arg_attrs) else {}
            io = d.get("nnkiln.io")
            name = d.get("nnkiln.name")
            if not isinstance(io, StringAttr) or io.data not in counts:
                raise BlobError(f"argument {i} of @{func.sym_name.data} has no nnkiln.io = \"input\"|\"output\"")
            label = name.data if isinstance(name, StringAttr) else (arg.name_hint or f"{io.data}{counts[io.data]}")
            declared = d.get("nnkiln.dtype")
            if io.data == "output" and isinstance(declared, StringAttr):
                self.output_dtypes[label] = declared.data
            t = arg.type
            idx = self.b.add_io(label, kind_of_memref(t, f"argument {i}"), shape_of(t), output=io.data == "output")
            self.io_buffers[(io.data, counts[io.data])] = idx
            counts[io.data] += 1
            self._place(arg, idx)

    def declare(self, op: Operation) -> bool:
        """Buffers, constants and views (top level or in a task). True if handled."""
        from nnkiln.dialects.buf import ConcatViewOp, ConstOp, ReshapeOp, SubviewOp
        from nnkiln.dialects.rt import BufferOp, Section
        from nnkiln.ir.elements import to_numpy

        if isinstance(op, BufferOp):
            t = op.buffer.type
            kind = kind_of_memref(t, "rt.buffer")
            if op.section_kind is Section.ARENA:
                name = op.memory_name
                if name is not None and name not in self.arena_names:
                    self.arena_names.append(name)
                arena = self.arena_names.index(name) if name is not None else 0
                self._place(op.buffer, self.b.add_arena(kind, shape_of(t), op.offset_value, arena))
            else:
                key = (op.section_kind.value, op.index_value)
                if key not in self.io_buffers:
                    raise BlobError(f"rt.buffer refers to {key[0]} {key[1]}, which the function does not have")
                self._place(op.buffer, self.b.add_view(self.io_buffers[key], kind, shape_of(t), op.offset_value))
            return True
        if isinstance(op, ConstOp):
            t = op.result.type
            data = to_numpy(op.values)
            if op.result in self.packed:
                idx = self._place(op.result, self.b.add_const(pack_panels(data.reshape(data.shape[-2:])),
                                                              kind_of_memref(t, "buf.const")))
            else:
                idx = self._place(op.result, self.b.add_const(data, kind_of_memref(t, "buf.const")))
            self._arrays[idx] = data
            return True
        if isinstance(op, ReshapeOp):
            t = op.result.type
            self._place(op.result, self.b.add_view(self.value(op.source, op), kind_of_memref(t, op.name), shape_of(t), 0))
            return True
        if isinstance(op, SubviewOp):
            t = op.result.type
            self._place(op.result, self.b.add_view(self.value(op.source, op), kind_of_memref(t, op.name), shape_of(t),
                                                   op.byte_offset()))
            return True
        if isinstance(op, ConcatViewOp):
            for v in op.ins:
                self.value(v, op)
            for r, o in zip(op.results, op.outs):
                self.buf[r] = self.value(o, op)
            return True
        return False

    def barrier_uses(self, waits: tuple[int, ...], updates: tuple[int, ...]) -> tuple[list[int], list[int]]:
        w_uses = []
        for b in waits:
            if b not in self.current_use:
                raise BlobError(f"a task waits on barrier {b} before any task updates it (deadlock)")
            w_uses.append(self.current_use[b])
            self.use_consumed[b] = True
        u_uses = []
        for b in updates:
            if b not in self.current_use or self.use_consumed.get(b, False):
                self.current_use[b] = self.b.add_barrier(b)
                self.use_consumed[b] = False
            u_uses.append(self.current_use[b])
        return w_uses, u_uses

    def task(self, task: Operation) -> None:
        from nnkiln.dialects.buf import CopyOp, KernelOp
        from nnkiln.dialects.rt import EndOp

        items: list[tuple[str, list[int], list[int], dict[str, Any], list[dict[str, Any]], Operation | None,
                          list[tuple[int, ...]]]] = []
        for op in task.body.block.ops:
            if isinstance(op, EndOp) or self.declare(op):
                continue
            if isinstance(op, KernelOp):
                ins = [self.value(v, op) for v in op.ins]
                outs = [self.value(v, op) for v in op.outs]
                attrs = op.tosa_attrs()
                if op.kernel.data == "tosa.matmul" and len(op.ins) >= 2 and op.ins[1] in self.packed:
                    attrs = {**attrs, "b_panels": PANEL_WIDTH}
                items.append((op.kernel.data, ins, outs, attrs, post_ops_of(op.post_ops), op, op.perms()))
            elif isinstance(op, CopyOp):
                box = op.box()
                attrs: dict[str, Any] = {}
                if box:  # the box: its offsets and extent in the larger buffer's dimensions
                    small = [int(d) for d in (op.outs[0] if box[0] == "src" else op.ins[0]).type.get_shape()]
                    extent = list(small)
                    if op.src_perm is not None:
                        perm = [int(p) for p in op.src_perm.get_values()]
                        for d, p in enumerate(perm):
                            extent[p] = small[d]
                        attrs["src_perm"] = perm
                    attrs.update({f"{box[0]}_offsets": list(box[1]), "shape": extent})
                if op.spill is not None:
                    attrs["spill"] = True
                items.append(("buf.copy", [self.value(v, op) for v in op.ins], [self.value(v, op) for v in op.outs],
                              attrs, [], op, []))
            else:
                raise BlobError(f"'{op.name}' cannot run inside rt.task (expected buf.kernel, buf.copy, views, constants)")
            for r, o in zip(op.results, op.outs):
                self.buf[r] = self.value(o, op)
        for b in (*task.wait_ids, *task.update_ids):
            if b not in self.declared:
                raise BlobError(f"rt.task uses barrier {b}, which is not declared")
        waits, updates = self.barrier_uses(task.wait_ids, task.update_ids)
        if not items:
            items.append((NOP_KERNEL, [], [], {}, [], None, []))
        for i, (kernel, ins, outs, attrs, posts, op, perms) in enumerate(items):
            self.ops.append(op)
            self.rt_tasks.append(task)
            loc = getattr(op, "location", None)
            self.b.add_task(kernel, ins, outs, attrs=attrs, post_ops=posts, executor=task.executor_name,
                            executor_index=task.executor_index_value, waits=waits if i == 0 else (),
                            updates=updates if i == len(items) - 1 else (), operand_perms=perms,
                            source=loc.desc.data if isinstance(loc, NameLoc) else "")
