"""The blob writer: an ``rt``-level module -> blob bytes (format: ``nnkiln.blob.format``).

Input (the contract of ``async-to-rt`` and ``assign-physical-barriers``): the entry ``func.func``
(the only one, else ``@main``) whose arguments are memrefs marked ``nnkiln.io = "input"|"output"``
and named by ``nnkiln.name``; its body holds ``rt.barrier`` declarations, ``rt.buffer``s,
``buf.const``s, views (``buf.reshape``, ``buf.subview``) and ``rt.task``s whose bodies hold
``buf.kernel``, ``buf.copy``, ``buf.concat_view``, views and constants, ending in ``rt.end``.

Translation:
- every io argument becomes an IO descriptor plus a buffer covering it; ``rt.buffer`` becomes a
  buffer (arena at its offset; input/output: a view of that io tensor at its offset);
- ``buf.const`` appends its data to CONSTANTS (a constant that only feeds float32 MATMULs as their right
  operand in the target's GEMM panels, ``Target.gemm_weight_panels``, those MATMULs marked ``b_panels``); a
  view becomes a buffer aliasing its base's bytes; a
  kernel/copy/concat_view result is the same buffer as its ``outs``;
- each ``buf.kernel``/``buf.copy`` in a task becomes a blob task (kernel name, JSON attrs and
  post-ops, operand buffers) on the task's executor; the first carries the task's waits, the last its
  updates; a task with no kernel becomes one ``rt.nop`` task so its synchronisation is kept;
- barriers: a blob barrier record is one *use* of a physical barrier. Walking tasks in IR order, an
  update of barrier ``b`` starts a new use if ``b`` has none yet or its current use already has a
  consumer; a wait refers to the current use (a wait before any update of ``b`` is an error).
- metadata: module attributes ``nnkiln.arena_bytes`` and ``nnkiln.arena_lower_bound_bytes`` (the
  arena size defaults to the end of the last arena buffer), plus target, pipeline, compile time, and
  ``threads`` from ``nnkiln.threads`` when the module has it (``compile(threads=N)`` sets it).
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Operation, SSAValue

from nnkiln.blob.format import PANEL_WIDTH, Blob, Memory, pack_panels
from nnkiln.blob.writer import BlobBuilder
from nnkiln.errors import BlobError
from nnkiln.kinds import Kind

NOP_KERNEL = "rt.nop"


def _kind(t: Any, what: str) -> Kind:
    from nnkiln.dialects.tosa.base import kind_of

    if not isinstance(t, MemRefType):
        raise BlobError(f"{what}: expected a memref, got {t}")
    k = kind_of(t.element_type)
    if k is None:
        raise BlobError(f"{what}: element type {t.element_type} cannot be stored in a blob")
    return k


def _shape(t: MemRefType) -> tuple[int, ...]:
    return tuple(int(d) for d in t.get_shape())


def _entry(module: ModuleOp) -> FuncOp:
    funcs = [op for op in module.body.block.ops if isinstance(op, FuncOp)]
    if len(funcs) == 1:
        return funcs[0]
    named = [f for f in funcs if f.sym_name.data == "main"]
    if not named:
        raise BlobError("the rt-level module has no func.func @main")
    return named[0]


def _int_attr(module: ModuleOp, name: str) -> int | None:
    a = module.attributes.get(name)
    return int(a.value.data) if isinstance(a, IntegerAttr) else None


def _post_ops(attr: ArrayAttr | None) -> list[dict[str, Any]]:
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


def _packable_weights(func: FuncOp, width: int) -> set[SSAValue]:
    """``buf.const`` results that feed only float32, batch-1 ``tosa.matmul`` kernels as their right operand:
    they are written as ``width``-column panels (``blob.format.pack_panels``; 0: none)."""
    from nnkiln.dialects.buf import ConstOp, KernelOp

    if width <= 0:
        return set()

    def plain_matmul(op: Operation) -> bool:
        return (isinstance(op, KernelOp) and op.kernel.data == "tosa.matmul" and len(op.ins) >= 2
                and all(isinstance(v.type, MemRefType) and _kind(v.type, "operand") is Kind.F32
                        and _shape(v.type)[0] == 1 for v in (op.ins[0], op.ins[1], op.outs[0])))

    found: set[SSAValue] = set()
    for op in func.walk():
        if plain_matmul(op) and isinstance(op.ins[1].owner, ConstOp) and len(_shape(op.ins[1].type)) == 3:
            v = op.ins[1]
            if all(plain_matmul(u.operation) and u.index == 1 for u in v.uses):
                found.add(v)
    return found


class _Writer:
    def __init__(self, packed: set[SSAValue] | None = None) -> None:
        self.packed = packed or set()
        self.b = BlobBuilder()
        self.buf: dict[SSAValue, int] = {}
        self.current_use: dict[int, int] = {}
        self.use_consumed: dict[int, bool] = {}
        self.declared: set[int] = set()
        self.io_buffers: dict[tuple[str, int], int] = {}

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
            t = arg.type
            idx = self.b.add_io(label, _kind(t, f"argument {i}"), _shape(t), output=io.data == "output")
            self.io_buffers[(io.data, counts[io.data])] = idx
            counts[io.data] += 1
            self.buf[arg] = idx

    def declare(self, op: Operation) -> bool:
        """Buffers, constants and views (top level or in a task). True if handled."""
        from nnkiln.dialects.buf import ConcatViewOp, ConstOp, ReshapeOp, SubviewOp
        from nnkiln.dialects.rt import BufferOp, Section
        from nnkiln.ir.elements import to_numpy

        if isinstance(op, BufferOp):
            t = op.buffer.type
            kind = _kind(t, "rt.buffer")
            if op.section_kind is Section.ARENA:
                self.buf[op.buffer] = self.b.add_arena(kind, _shape(t), op.offset_value)
            else:
                key = (op.section_kind.value, op.index_value)
                if key not in self.io_buffers:
                    raise BlobError(f"rt.buffer refers to {key[0]} {key[1]}, which the function does not have")
                self.buf[op.buffer] = self.b.add_view(self.io_buffers[key], kind, _shape(t), op.offset_value)
            return True
        if isinstance(op, ConstOp):
            t = op.result.type
            data = to_numpy(op.values)
            if op.result in self.packed:
                data = pack_panels(data.reshape(data.shape[-2:]))
            self.buf[op.result] = self.b.add_const(data, _kind(t, "buf.const"))
            return True
        if isinstance(op, ReshapeOp):
            t = op.result.type
            self.buf[op.result] = self.b.add_view(self.value(op.source, op), _kind(t, op.name), _shape(t), 0)
            return True
        if isinstance(op, SubviewOp):
            t = op.result.type
            self.buf[op.result] = self.b.add_view(self.value(op.source, op), _kind(t, op.name), _shape(t),
                                                  op.byte_offset())
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

        items: list[tuple[str, list[int], list[int], dict[str, Any], list[dict[str, Any]]]] = []
        for op in task.body.block.ops:
            if isinstance(op, EndOp) or self.declare(op):
                continue
            if isinstance(op, KernelOp):
                ins = [self.value(v, op) for v in op.ins]
                outs = [self.value(v, op) for v in op.outs]
                attrs = op.tosa_attrs()
                if op.kernel.data == "tosa.matmul" and len(op.ins) >= 2 and op.ins[1] in self.packed:
                    attrs = {**attrs, "b_panels": PANEL_WIDTH}
                items.append((op.kernel.data, ins, outs, attrs, _post_ops(op.post_ops)))
            elif isinstance(op, CopyOp):
                items.append(("buf.copy", [self.value(v, op) for v in op.ins], [self.value(v, op) for v in op.outs], {}, []))
            else:
                raise BlobError(f"'{op.name}' cannot run inside rt.task (expected buf.kernel, buf.copy, views, constants)")
            for r, o in zip(op.results, op.outs):
                self.buf[r] = self.value(o, op)
        for b in (*task.wait_ids, *task.update_ids):
            if b not in self.declared:
                raise BlobError(f"rt.task uses barrier {b}, which is not declared")
        waits, updates = self.barrier_uses(task.wait_ids, task.update_ids)
        if not items:
            items.append((NOP_KERNEL, [], [], {}, []))
        for i, (kernel, ins, outs, attrs, posts) in enumerate(items):
            self.b.add_task(kernel, ins, outs, attrs=attrs, post_ops=posts, executor=task.executor_name,
                            executor_index=task.executor_index_value, waits=waits if i == 0 else (),
                            updates=updates if i == len(items) - 1 else ())


def _build(module: ModuleOp, target: str, pipeline: str, compile_seconds: float) -> tuple[BlobBuilder, dict[str, Any]]:
    """The filled builder of an rt-level module and the blob's metadata."""
    from nnkiln.dialects.rt import BarrierOp, TaskOp
    from nnkiln.targets import get_target

    func = _entry(module)
    w = _Writer(_packable_weights(func, get_target(target).gemm_weight_panels))
    w.args(func)
    for op in func.body.blocks[0].ops:
        if isinstance(op, BarrierOp):
            w.declared.add(op.barrier_id)
        elif isinstance(op, TaskOp):
            w.task(op)
        elif isinstance(op, ReturnOp):
            if op.operands:
                raise BlobError("the rt-level function returns values; results must be written to output arguments")
        elif not w.declare(op):
            raise BlobError(f"'{op.name}' cannot appear at the top level of an rt-level function")
    arena_end = max((b.offset + b.size for b in w.b.buffers if b.memory is Memory.ARENA), default=0)
    arena = _int_attr(module, "nnkiln.arena_bytes")
    lower = _int_attr(module, "nnkiln.arena_lower_bound_bytes")
    meta = {"arena_bytes": max(arena or 0, arena_end), "arena_lower_bound_bytes": lower if lower is not None else 0,
            "target": target, "pipeline": pipeline, "compile_seconds": float(compile_seconds)}
    threads = _int_attr(module, "nnkiln.threads")
    if threads:
        meta["threads"] = threads
    return w.b, meta


def blob_from_module(module: ModuleOp, *, target: str = "cpu", pipeline: str = "",
                     compile_seconds: float = 0.0) -> Blob:
    """The ``Blob`` of an rt-level module (see the module docstring)."""
    builder, meta = _build(module, target, pipeline, compile_seconds)
    return builder.finish(**meta)


def blob_and_bytes_from_module(module: ModuleOp, *, target: str = "cpu", pipeline: str = "",
                               compile_seconds: float = 0.0) -> tuple[Blob, bytes]:
    """The ``Blob`` of an rt-level module and its encoded bytes, with each constant copied once.

    The blob's constants are a read-only view into the bytes (see ``BlobBuilder.finish_encoded``).
    """
    builder, meta = _build(module, target, pipeline, compile_seconds)
    return builder.finish_encoded(**meta)


def blob_in_memory_from_module(module: ModuleOp, *, target: str = "cpu", pipeline: str = "",
                               compile_seconds: float = 0.0) -> Blob:
    """The ``Blob`` of an rt-level module whose constants stay the IR's own arrays (``ConstantStore``)."""
    builder, meta = _build(module, target, pipeline, compile_seconds)
    return builder.finish_in_memory(**meta)


def write_blob(module: ModuleOp, **kwargs: Any) -> bytes:
    """The blob bytes of an rt-level module."""
    return blob_and_bytes_from_module(module, **kwargs)[1]


__all__ = ["NOP_KERNEL", "blob_and_bytes_from_module", "blob_in_memory_from_module", "blob_from_module", "write_blob"]
