"""Ops of the ``rt`` dialect: the runtime level (L1) the backend serialises into a blob.

Architecture spec §3–§4 (npu-compiler-architecture.txt): after static allocation every buffer has a
fixed place, and the schedule is a list of tasks per executor synchronised by barriers.

- ``%b = rt.buffer {section = "arena", offset = 128 : i64, index = 0 : i64} : memref<1x8x8x4xf32>``
  A buffer at a fixed place. ``section`` is ``arena`` (``offset`` = byte offset into the arena,
  ``index`` = 0), ``input`` or ``output`` (``index`` = position among the function's inputs /
  outputs, ``offset`` = byte offset into that io buffer). An arena buffer may name the memory instance it is in
  (``memory = "CMX1"``: the npu's scratchpads; absent: the target's default memory, whose arena is the blob's
  first).
- ``rt.barrier {id = 3 : i64}``: declares barrier ``id``. The ids of one block are exactly
  ``0 .. n-1`` (n = number of declarations), each declared once. Producer and consumer counts are
  not stored: they are derived from the tasks (a producer updates, a consumer waits).
- ``rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64: 1>, updates = array<i64: 2>} { ...; rt.end }``
  One unit of work: a single-block region (``buf.kernel``/``buf.copy``/views/``buf.const``) ending
  in ``rt.end``; the region is not isolated (it uses ``rt.buffer``s and constants defined outside).

Semantics (the runtime's contract): tasks of one ``(executor, executor_index)`` run in IR order; a
task starts when every barrier it waits on has been updated by all of that barrier's producers; a
task decrements each barrier it updates when it finishes. A barrier id may be reused (physical
barriers): it is reset once all its consumers of the current use have started.

Decisions (the spec leaves these open):
- A task may not wait on and update the same barrier (it would wait for itself: a deadlock);
  ``waits`` and ``updates`` have no repeated ids.
- Barrier-set rules (ids in range, no duplicates, references declared) are checked against the
  ``rt.barrier`` ops of the same block, so they hold for each function on its own.
- ``section`` is a closed set (``Section``); it is stored as a string attribute for readable IR.
"""

from __future__ import annotations

from enum import Enum

from xdsl.dialects.builtin import I64, DenseArrayBase, IntegerAttr, MemRefType, StringAttr, i64
from xdsl.ir import Block, Operation, Region
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsTerminator

from nnkiln.ir.errors import VerifyError
from nnkiln.ir.walk_cache import memoized


class Section(Enum):
    """Where an ``rt.buffer`` lives."""

    ARENA = "arena"
    INPUT = "input"
    OUTPUT = "output"


def _int(attr: IntegerAttr) -> int:
    return int(attr.value.data)


def _ints(attr: DenseArrayBase | None) -> tuple[int, ...]:
    if attr is None:
        return ()
    return tuple(int(v) for v in attr.get_values())


def _declared_barriers(block: Block | None) -> list[int]:
    if block is None:
        return []
    # a barrier without its id is reported by its own verification: counting it here must not raise
    return memoized(("rt.barriers", id(block)), lambda: [b.barrier_id for b in block.ops
                                                          if isinstance(b, BarrierOp) and "id" in b.properties])


def _io_counts(op: Operation) -> tuple[int, int] | None:
    """(number of inputs, number of outputs) of the enclosing function, if it marks them with ``nnkiln.io``."""
    func = op.parent_op()
    while func is not None and not hasattr(func, "arg_attrs"):
        func = func.parent_op()
    if func is None:
        return None
    arg_attrs = getattr(func, "arg_attrs", None)
    if arg_attrs is None:
        return None
    n_in = n_out = 0
    for d in arg_attrs:
        io = d.data.get("nnkiln.io") if hasattr(d, "data") else None
        if isinstance(io, StringAttr):
            n_in += io.data == "input"
            n_out += io.data == "output"
    return n_in, n_out


@irdl_op_definition
class BufferOp(IRDLOperation):
    """``rt.buffer``: a buffer at a fixed place (architecture spec §4, static allocation).

    Rules: ``section`` is one of ``arena``/``input``/``output``; ``offset >= 0``; ``index >= 0``;
    arena buffers have ``index = 0``; an input/output index is below the number of the enclosing
    function's inputs/outputs (when it marks them with ``nnkiln.io``); the result is a memref with a
    static shape.
    """

    name = "rt.buffer"

    section = prop_def(StringAttr)
    offset = prop_def(IntegerAttr[I64])
    index = opt_prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, i64))
    memory = opt_prop_def(StringAttr)
    buffer = result_def(MemRefType)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict `:` type($buffer)"

    def __init__(self, section: Section | str, offset: int, index: int, result_type: MemRefType,
                 memory: str | None = None):
        sec = Section(section).value if not isinstance(section, Section) else section.value
        props = {"section": StringAttr(sec), "offset": IntegerAttr(offset, i64), "index": IntegerAttr(index, i64)}
        if memory is not None:
            props["memory"] = StringAttr(memory)
        super().__init__(properties=props, result_types=[result_type])

    @property
    def memory_name(self) -> str | None:
        """The memory instance of an arena buffer (``None``: the target's default memory)."""
        return self.memory.data if self.memory is not None else None

    @property
    def section_kind(self) -> Section:
        return Section(self.section.data)

    @property
    def offset_value(self) -> int:
        return _int(self.offset)

    @property
    def index_value(self) -> int:
        return _int(self.index) if self.index is not None else 0

    def verify_(self) -> None:
        names = [s.value for s in Section]
        sec = self.section.data
        if sec not in names:
            raise VerifyError(f"section = \"{sec}\" is not one of {names}", op_name=self.name, rule="section enum")
        if self.offset_value < 0:
            raise VerifyError(f"offset = {self.offset_value} is negative", op_name=self.name, rule="offset >= 0")
        idx = self.index_value
        if idx < 0:
            raise VerifyError(f"index = {idx} is negative", op_name=self.name, rule="index >= 0")
        if sec == Section.ARENA.value and idx != 0:
            raise VerifyError(f"arena buffer has index = {idx}", op_name=self.name, rule="arena buffers have index 0")
        if self.memory is not None and sec != Section.ARENA.value:
            raise VerifyError(f"{sec} buffer names memory '{self.memory.data}'", op_name=self.name,
                              rule="only arena buffers name a memory")
        t = self.buffer.type
        if any(int(d) < 0 for d in t.get_shape()):
            raise VerifyError(f"{t} has a dynamic dimension", op_name=self.name, rule="static shape")
        counts = _io_counts(self)
        if counts is not None and sec != Section.ARENA.value:
            n = counts[0] if sec == Section.INPUT.value else counts[1]
            if idx >= n:
                raise VerifyError(f"{sec} index = {idx} but the function has {n} {sec}s", op_name=self.name,
                                  rule=f"index < number of {sec}s")


@irdl_op_definition
class BarrierOp(IRDLOperation):
    """``rt.barrier``: declares barrier ``id`` (architecture spec §4, virtual/physical barriers).

    Rules: ``0 <= id < n`` where n is the number of ``rt.barrier`` ops in the block; no id is
    declared twice.
    """

    name = "rt.barrier"

    id = prop_def(IntegerAttr[I64])

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict"

    def __init__(self, barrier_id: int):
        super().__init__(properties={"id": IntegerAttr(barrier_id, i64)})

    @property
    def barrier_id(self) -> int:
        return _int(self.id)

    def verify_(self) -> None:
        ids = _declared_barriers(self.parent_block())
        n = len(ids) if ids else 1
        bid = self.barrier_id
        if not 0 <= bid < n:
            raise VerifyError(f"barrier id = {bid} is outside [0, {n}) ({n} barriers declared)",
                              op_name=self.name, rule="barrier ids in range 0..n-1")
        if ids.count(bid) > 1:
            raise VerifyError(f"barrier id = {bid} is declared {ids.count(bid)} times",
                              op_name=self.name, rule="no duplicate barrier ids")


@irdl_op_definition
class TaskOp(IRDLOperation):
    """``rt.task``: a unit of work on one executor instance (architecture spec §4, runtime tasks).

    Rules: ``executor`` is non-empty; ``executor_index >= 0``; the body is one block ending in
    ``rt.end``; every id in ``waits``/``updates`` is declared by an ``rt.barrier`` of the same block;
    no id is repeated in either list; no id is in both lists.
    """

    name = "rt.task"

    executor = prop_def(StringAttr)
    executor_index = opt_prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, i64))
    waits = opt_prop_def(DenseArrayBase[I64], default_value=DenseArrayBase.from_list(i64, []))
    updates = opt_prop_def(DenseArrayBase[I64], default_value=DenseArrayBase.from_list(i64, []))
    body = region_def("single_block")

    @classmethod
    def parse(cls, parser: Parser) -> TaskOp:
        """``rt.task {executor = "cpu", ...} { ... }``: properties in the dict, then the body region."""
        attrs = parser.parse_optional_attr_dict()
        body = parser.parse_region()
        names = set(cls.get_irdl_definition().properties)
        props = {k: v for k, v in attrs.items() if k in names}
        extra = {k: v for k, v in attrs.items() if k not in names}
        return cls.create(properties=props, attributes=extra, regions=[body])

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attr_dict({**self.properties, **self.attributes})
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    def __init__(
        self,
        executor: str,
        executor_index: int,
        waits: list[int] | tuple[int, ...],
        updates: list[int] | tuple[int, ...],
        body: Region | Block | None = None,
    ):
        if body is None:
            blk = Block()
            blk.add_op(EndOp())
            body = Region(blk)
        elif isinstance(body, Block):
            body = Region(body)
        super().__init__(
            properties={
                "executor": StringAttr(executor),
                "executor_index": IntegerAttr(executor_index, i64),
                "waits": DenseArrayBase.from_list(i64, list(waits)),
                "updates": DenseArrayBase.from_list(i64, list(updates)),
            },
            regions=[body],
        )

    @property
    def executor_name(self) -> str:
        return self.executor.data

    @property
    def executor_index_value(self) -> int:
        return _int(self.executor_index) if self.executor_index is not None else 0

    @property
    def wait_ids(self) -> tuple[int, ...]:
        return _ints(self.waits)

    @property
    def update_ids(self) -> tuple[int, ...]:
        return _ints(self.updates)

    def verify_(self) -> None:
        if not self.executor.data:
            raise VerifyError("executor is empty", op_name=self.name, rule="executor names an executor")
        if self.executor_index_value < 0:
            raise VerifyError(f"executor_index = {self.executor_index_value} is negative", op_name=self.name,
                              rule="executor_index >= 0")
        if len(self.body.blocks) != 1:
            raise VerifyError(f"body has {len(self.body.blocks)} blocks", op_name=self.name,
                              rule="single-block body")
        if not isinstance(self.body.block.last_op, EndOp):
            raise VerifyError("body does not end with rt.end", op_name=self.name, rule="body ends with rt.end")
        waits, updates = self.wait_ids, self.update_ids
        for what, ids in (("waits", waits), ("updates", updates)):
            dup = sorted({i for i in ids if ids.count(i) > 1})
            if dup:
                raise VerifyError(f"{what} repeats barrier(s) {dup}", op_name=self.name, rule=f"no repeated ids in {what}")
        both = sorted(set(waits) & set(updates))
        if both:
            raise VerifyError(f"barrier(s) {both} are both waited on and updated", op_name=self.name,
                              rule="a task does not wait on a barrier it updates")
        if waits or updates:
            declared = set(_declared_barriers(self.parent_block()))
            for what, ids in (("waits", waits), ("updates", updates)):
                missing = sorted(set(ids) - declared)
                if missing:
                    raise VerifyError(f"{what} references undeclared barrier(s) {missing}", op_name=self.name,
                                      rule=f"{what} reference declared barriers")


@irdl_op_definition
class EndOp(IRDLOperation):
    """``rt.end``: the terminator of an ``rt.task`` body."""

    name = "rt.end"

    traits = traits_def(IsTerminator(), HasParent(TaskOp))
    assembly_format = "attr-dict"

    def __init__(self) -> None:
        super().__init__()


__all__ = ["BarrierOp", "BufferOp", "EndOp", "Section", "TaskOp"]
