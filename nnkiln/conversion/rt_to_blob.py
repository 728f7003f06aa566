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
  ``threads`` from ``nnkiln.threads`` when the module has it (``compile(threads=N)`` sets it); the target's
  description (``Target.description``: memories, executors, ``max_physical_barriers``, ``clock_ghz``) and the
  simulator's replay of the finished task graph (``nnkiln.runtime.simulate``: ``simulated_cycles``,
  ``critical_path_cycles``, ``spill_bytes``, ``dma_bytes``, ``task_cycles``, ``task_start_cycles``), so the
  schedule a checker reads is in the blob (docs/blob-format.md).
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp

from nnkiln.analysis.task_table import NOP_KERNEL, TaskTable, packable_weights
from nnkiln.blob.format import Blob, Memory
from nnkiln.blob.writer import BlobBuilder
from nnkiln.errors import BlobError


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


def _build(module: ModuleOp, target: str, pipeline: str, compile_seconds: float) -> tuple[BlobBuilder, dict[str, Any]]:
    """The filled builder of an rt-level module and the blob's metadata."""
    from nnkiln.targets import get_target

    func = _entry(module)
    w = TaskTable.of_function(func, packable_weights(func, get_target(target).gemm_weight_panels))
    arena_end = max((b.offset + b.size for b in w.b.buffers if b.memory is Memory.ARENA and b.index == 0), default=0)
    arena = _int_attr(module, "nnkiln.arena_bytes")
    lower = _int_attr(module, "nnkiln.arena_lower_bound_bytes")
    meta = {"arena_bytes": max(arena or 0, arena_end), "arena_lower_bound_bytes": lower if lower is not None else 0,
            "target": target, "pipeline": pipeline, "compile_seconds": float(compile_seconds)}
    if w.output_dtypes:
        meta["output_dtypes"] = dict(w.output_dtypes)
    from nnkiln.reference.interpreter import empty_outputs, ignored_inputs

    ignored = ignored_inputs(module)
    if ignored:
        meta["ignored_inputs"] = [{"name": n, "dtype": d, "shape": list(s)} for n, d, s in ignored]
    empty = empty_outputs(module)
    if empty:
        meta["empty_outputs"] = [{"name": n, "dtype": d, "shape": list(s), "index": i} for n, d, s, i in empty]
    gemm = module.attributes.get("nnkiln.gemm")
    if isinstance(gemm, StringAttr):
        meta["gemm"] = gemm.data
    threads = _int_attr(module, "nnkiln.threads")
    if threads:
        meta["threads"] = threads
    from nnkiln.runtime.simulate import simulate

    tgt = get_target(target, threads=threads or None)
    meta.update(tgt.description())
    if len(w.arena_names) > 1:  # buffers in more than one memory: each memory instance is an arena of its own
        ends = [0] * len(w.arena_names)
        for b in w.b.buffers:
            if b.memory is Memory.ARENA:
                ends[b.index] = max(ends[b.index], b.offset + b.size)
        ends[0] = meta["arena_bytes"]
        meta["arenas"] = [{"name": n or tgt.default_memory.name, "bytes": e} for n, e in zip(w.arena_names, ends)]
    if not tgt.is_npu:  # the cpu's instances are threads: an rt module may use more queues than this machine has cores
        used = max((t.executor_index + 1 for t in w.b.tasks), default=1)
        meta["executors"] = [{**e, "count": max(e["count"], used)} for e in meta["executors"]]  # type: ignore[attr-defined]
    meta.update(simulate(w.b.preview(**meta), tgt).metadata())
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
