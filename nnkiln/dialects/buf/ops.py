"""The ``buf`` dialect: the bufferized level L2 (architecture spec §3.2 "bufferization").

Values are builtin ``memref`` types (row-major, contiguous, element types as in tosa, including
``!quant.uniform``). Ops:

- ``%b = buf.alloc : memref<...>``: a buffer still to be placed (static allocation plans it).
- ``%b = buf.static_alloc {memory = "host", offset = 128 : i64} : memref<...>``: a placed buffer;
  ``offset >= 0`` and a multiple of the memory's alignment (from ``nnkiln.targets``).
- ``%w = buf.const {values = dense<...> : tensor<...>} : memref<...>``: constant data (weights).
- ``%r = buf.kernel "tosa.conv2d" ins(%x, %w : memref<..>, memref<..>) outs(%o : memref<..>)
  {attrs = {...}, post_ops = [...]} -> memref<..>``: runs the kernel of a tosa op reading ``ins``
  and writing ``outs``; the results alias ``outs`` (identical types). ``attrs`` are the tosa op's
  properties unchanged. ``post_ops`` (optional) is an array of dictionaries
  ``{kernel = "tosa.clamp", attrs = {...}}`` or ``{kernel = "tosa.add", attrs = {}, operand = 2}``
  (``operand``: index into ``ins`` of the post-op's extra operand), applied in order to the result.
- ``%r = buf.copy ins(%a : memref<..>) outs(%b : memref<..>) -> memref<..>``: byte copy; same
  element type and element count.
- Views (no data movement): ``buf.reshape`` (same element type and element count, so the same
  bytes), ``buf.subview`` (a contiguous slice: leading dimensions of size 1, one partial
  dimension, trailing dimensions full), ``buf.concat_view`` (the result aliases ``outs``; the inputs
  are views of ``outs`` already written by their producers: it only orders them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    IntegerAttr,
    MemRefType,
    StringAttr,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import Pure

from nnkiln.blob.format import FusedKernel
from nnkiln.ir.elements import dtype_of, storage_type
from nnkiln.ir.errors import VerifyError


def num_elements(t: Attribute) -> int:
    n = 1
    for d in t.get_shape():  # type: ignore[attr-defined]
        n *= int(d)
    return n


def byte_size(t: Attribute) -> int:
    """Bytes of a memref/tensor type (row-major, contiguous; i4 takes one byte per element)."""
    return num_elements(t) * dtype_of(t.element_type).itemsize  # type: ignore[attr-defined]


def shape_and_itemsize(v: SSAValue) -> tuple[tuple[int, ...], int]:
    """A memref value as the cost model and the NCE tiler see it: (shape, bytes per element)."""
    shape = tuple(int(d) for d in v.type.get_shape())  # type: ignore[attr-defined]
    n = num_elements(v.type)
    return shape, (byte_size(v.type) // n if n else 1)


def _fail(op: Operation, message: str, rule: str) -> None:
    raise VerifyError(message, op_name=op.name, rule=rule)


class BufOp(IRDLOperation):
    irdl_options = (ParsePropInAttrDict(),)
    # verify_ reads only operand/result types and properties (nnkiln.ir.verify may skip re-verifying
    # an unchanged signature); a subclass that looks further must set False.
    VERIFY_IS_LOCAL: ClassVar[bool] = True


@irdl_op_definition
class AllocOp(BufOp):
    """A buffer to be placed by static allocation; ``memory`` (optional) names the memory instance it must be in
    (``"CMX0"``: a scratchpad of the npu; absent: the target's default memory)."""

    name = "buf.alloc"
    memory = opt_prop_def(StringAttr)
    result = result_def(MemRefType)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, t: MemRefType, memory: str | None = None):
        super().__init__(result_types=[t], properties={"memory": StringAttr(memory)} if memory else {})

    @property
    def memory_name(self) -> str | None:
        return self.memory.data if self.memory is not None else None

    def verify_(self) -> None:
        from nnkiln.targets import find_memory

        if self.memory is not None and find_memory(self.memory.data) is None:
            _fail(self, f"unknown memory '{self.memory.data}'", "memory is a memory of a known target")


@irdl_op_definition
class StaticAllocOp(BufOp):
    """A buffer placed at ``offset`` bytes in ``memory``; offset >= 0, aligned to the memory's alignment."""

    name = "buf.static_alloc"
    memory = prop_def(StringAttr)
    offset = prop_def(IntegerAttr[I64])
    result = result_def(MemRefType)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, t: MemRefType, memory: str, offset: int):
        super().__init__(result_types=[t], properties={"memory": StringAttr(memory), "offset": IntegerAttr(offset, i64)})

    def verify_(self) -> None:
        from nnkiln.targets import find_memory

        off = self.offset.value.data
        mem = find_memory(self.memory.data)
        if mem is None:
            _fail(self, f"unknown memory '{self.memory.data}'", "memory is a memory of a known target")
        if off < 0:
            _fail(self, f"offset = {off} is negative", "offset >= 0")
        if off % mem.alignment:  # type: ignore[union-attr]
            _fail(self, f"offset = {off} is not a multiple of {mem.alignment}",  # type: ignore[union-attr]
                  "offset % alignment(memory) == 0")


@irdl_op_definition
class ConstOp(BufOp):
    """Constant data; ``values``' shape equals the memref's and its element type is the memref's
    (the storage type for a quantized element type, as for ``tosa.const``)."""

    name = "buf.const"
    values = prop_def(DenseIntOrFPElementsAttr)
    result = result_def(MemRefType)
    traits = traits_def(Pure())
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, values: DenseIntOrFPElementsAttr, t: MemRefType):
        super().__init__(result_types=[t], properties={"values": values})

    def verify_(self) -> None:
        vt, rt = self.values.type, self.result.type
        if tuple(vt.get_shape()) != tuple(rt.get_shape()) or storage_type(rt.element_type) != vt.element_type:
            _fail(self, f"values has type {vt} but the buffer is {rt}",
                  "type(values) == buffer type (storage element type)")


def _parse_group(parser: Parser, keyword: str) -> tuple[list[UnresolvedOperand], list[Attribute]]:
    parser.parse_keyword(keyword)
    parser.parse_punctuation("(")
    if parser.parse_optional_punctuation(")") is not None:
        return [], []
    ops = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_unresolved_operand)
    parser.parse_punctuation(":")
    types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
    parser.parse_punctuation(")")
    return ops, types


def _print_group(printer: Printer, keyword: str, values: Sequence[SSAValue]) -> None:
    printer.print_string(f" {keyword}(")
    if values:
        printer.print_list(values, printer.print_operand)
        printer.print_string(" : ")
        printer.print_list([v.type for v in values], printer.print_attribute)
    printer.print_string(")")


class _InsOutsOp(BufOp):
    """Shared ``ins(...) outs(...) {props} -> types`` syntax and the alias rule for results."""

    ins = var_operand_def(MemRefType)
    outs = var_operand_def(MemRefType)
    results_ = var_result_def(MemRefType)
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())

    def print_head(self, printer: Printer) -> None:
        pass

    @classmethod
    def parse_head(cls, parser: Parser) -> dict[str, Attribute]:
        return {}

    def print(self, printer: Printer) -> None:
        self.print_head(printer)
        _print_group(printer, "ins", self.ins)
        _print_group(printer, "outs", self.outs)
        props = {k: v for k, v in self.properties.items() if k not in ("kernel", "operandSegmentSizes")}
        props.update(self.attributes)
        if props:
            printer.print_string(" ")
            printer.print_attr_dict(props)
        if self.results:
            printer.print_string(" -> ")
            printer.print_list([r.type for r in self.results], printer.print_attribute)

    @classmethod
    def parse(cls, parser: Parser):  # type: ignore[override]
        head = cls.parse_head(parser)
        ins, in_types = _parse_group(parser, "ins")
        outs, out_types = _parse_group(parser, "outs")
        extra = parser.parse_optional_attr_dict()
        result_types: list[Attribute] = []
        if parser.parse_optional_punctuation("->") is not None:
            result_types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        prop_names = set(cls.get_irdl_definition().properties)
        props = {**head, **{k: v for k, v in extra.items() if k in prop_names}}
        attrs = {k: v for k, v in extra.items() if k not in prop_names}
        op = cls.build(
            operands=[parser.resolve_operands(ins, in_types, parser.pos), parser.resolve_operands(outs, out_types, parser.pos)],
            result_types=[result_types], properties=props, attributes=attrs,
        )
        return op

    def verify_(self) -> None:
        if len(self.results) != len(self.outs) or any(r.type != o.type for r, o in zip(self.results, self.outs)):
            _fail(self, f"results {[str(r.type) for r in self.results]} vs outs {[str(o.type) for o in self.outs]}",
                  "results alias outs with identical types")


_FUSED = frozenset(k.value for k in FusedKernel)

NCE_ATTR = "nnkiln.nce"
"""The discardable attribute of a ``buf.kernel`` the npu's NCE runs (``cmx-tiling``): its cluster index."""


@irdl_op_definition
class KernelOp(_InsOutsOp):
    """Runs the kernel of the tosa op ``kernel`` (its properties in ``attrs``) on ``ins`` into ``outs``, or a kernel
    that an rt-level pass fused from several (``nnkiln.blob.format.FusedKernel``).

    ``operand_perms`` (optional, one entry per ``ins``): the kernel reads ``ins[k]`` through the permutation
    ``operand_perms[k]`` (a transposed view; empty: as it is), so that a transpose feeding only this kernel need not
    run (``fold-transposes-into-operands``).
    """

    name = "buf.kernel"
    kernel = prop_def(StringAttr)
    attrs = prop_def(DictionaryAttr)
    post_ops = opt_prop_def(ArrayAttr[DictionaryAttr])
    operand_perms = opt_prop_def(ArrayAttr[DenseArrayBase])

    def __init__(self, kernel: str, ins: Sequence[SSAValue], outs: Sequence[SSAValue],
                 attrs: DictionaryAttr | dict[str, Attribute] | None = None,
                 post_ops: Sequence[DictionaryAttr] | None = None,
                 operand_perms: Sequence[Sequence[int]] | None = None):
        props: dict[str, Attribute] = {"kernel": StringAttr(kernel),
                                       "attrs": attrs if isinstance(attrs, DictionaryAttr) else DictionaryAttr(attrs or {})}
        if post_ops:
            props["post_ops"] = ArrayAttr(list(post_ops))
        if operand_perms is not None and any(operand_perms):
            props["operand_perms"] = ArrayAttr([DenseArrayBase.from_list(i64, list(p)) for p in operand_perms])
        super().__init__(operands=[list(ins), list(outs)], result_types=[[o.type for o in outs]], properties=props)

    def print_head(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.kernel)

    @classmethod
    def parse_head(cls, parser: Parser) -> dict[str, Attribute]:
        return {"kernel": StringAttr(parser.parse_str_literal("kernel name"))}

    def verify_(self) -> None:
        super().verify_()
        if not self.kernel.data.startswith("tosa.") and self.kernel.data not in _FUSED:
            _fail(self, f"kernel '{self.kernel.data}' is not a tosa op name", "kernel names a tosa op or a fused kernel")
        for k, perm in enumerate(self.perms() if self.operand_perms is not None else ()):
            if k >= len(self.ins) or (perm and sorted(perm) != list(range(len(self.ins[k].type.get_shape())))):
                _fail(self, f"operand_perms[{k}] = {list(perm)} for {len(self.ins)} ins",
                      "operand_perms holds a permutation of each operand's dimensions (or nothing)")
        for i, p in enumerate(self.post_ops.data if self.post_ops else ()):
            d = p.data
            if not isinstance(d.get("kernel"), StringAttr) or not isinstance(d.get("attrs"), DictionaryAttr):
                _fail(self, f"post_ops[{i}] = {p}", "post-op has kernel (string) and attrs (dictionary)")
            idx = d.get("operand")
            if idx is not None and not (isinstance(idx, IntegerAttr) and 0 <= idx.value.data < len(self.ins)):
                _fail(self, f"post_ops[{i}] operand = {idx} with {len(self.ins)} ins", "post-op operand indexes ins")

    def perms(self) -> list[tuple[int, ...]]:
        """``operand_perms`` as tuples, one per ``ins`` (empty: read as it is)."""
        got = [tuple(int(v) for v in p.get_values()) for p in self.operand_perms.data] if self.operand_perms else []
        return got + [()] * (len(self.ins) - len(got))

    def tosa_attrs(self) -> dict[str, Any]:
        """``attrs`` as Python values (``nnkiln.dialects.tosa.base.from_attr``)."""
        from nnkiln.dialects.tosa.base import from_attr

        return {k: from_attr(v) for k, v in self.attrs.data.items()}


@irdl_op_definition
class CopyOp(_InsOutsOp):
    """Copies ``ins[0]`` into ``outs[0]`` (same element type and element count), or a box of one into the other
    (a strided DMA): with ``src_offsets``, ``outs[0] = ins[0][src_offsets : src_offsets + shape(outs[0])]``; with
    ``dst_offsets``, ``outs[0][dst_offsets : dst_offsets + shape(ins[0])] = ins[0]`` (same rank, box inside the
    buffer; the rest of ``outs[0]`` keeps its bytes). ``src_perm`` (with ``src_offsets``) permutes the box as it
    moves: ``outs[0] = transpose(ins[0][box], src_perm)``, the box's extent along source dimension ``src_perm[d]``
    being ``shape(outs[0])[d]`` (a DMA's strided read in another dimension order). ``spill`` marks a copy the feasible scheduler inserted to
    move a scratchpad buffer out and back (the simulator counts its bytes as ``spill_bytes``)."""

    name = "buf.copy"
    src_offsets = opt_prop_def(DenseArrayBase[I64])
    dst_offsets = opt_prop_def(DenseArrayBase[I64])
    src_perm = opt_prop_def(DenseArrayBase[I64])
    spill = opt_prop_def(IntegerAttr[I64])

    def __init__(self, src: SSAValue, dst: SSAValue, src_offsets: Sequence[int] | None = None,
                 dst_offsets: Sequence[int] | None = None, spill: bool = False,
                 src_perm: Sequence[int] | None = None):
        props: dict[str, Attribute] = {}
        if src_offsets is not None:
            props["src_offsets"] = DenseArrayBase.from_list(i64, list(src_offsets))
        if src_perm is not None:
            props["src_perm"] = DenseArrayBase.from_list(i64, list(src_perm))
        if dst_offsets is not None:
            props["dst_offsets"] = DenseArrayBase.from_list(i64, list(dst_offsets))
        if spill:
            props["spill"] = IntegerAttr(1, i64)
        super().__init__(operands=[[src], [dst]], result_types=[[dst.type]], properties=props)

    def box(self) -> tuple[str, tuple[int, ...]] | None:
        """``("src" | "dst", offsets)`` of a box copy, else ``None``."""
        if self.src_offsets is not None:
            return "src", tuple(int(v) for v in self.src_offsets.get_values())
        if self.dst_offsets is not None:
            return "dst", tuple(int(v) for v in self.dst_offsets.get_values())
        return None

    def verify_(self) -> None:
        super().verify_()
        if len(self.ins) != 1 or len(self.outs) != 1:
            _fail(self, f"{len(self.ins)} ins, {len(self.outs)} outs", "one input and one output")
        a, b = self.ins[0].type, self.outs[0].type
        if storage_type(a.element_type) != storage_type(b.element_type):
            _fail(self, f"copy from {a} to {b}", "same element type")
        box = self.box()
        if box is None:
            if num_elements(a) != num_elements(b):
                _fail(self, f"copy from {a} to {b}", "same element type and element count")
            return
        if self.src_offsets is not None and self.dst_offsets is not None:
            _fail(self, "both src_offsets and dst_offsets", "a box on one side only")
        side, offs = box
        big, small = (a, b) if side == "src" else (b, a)
        bs, ss = tuple(big.get_shape()), tuple(small.get_shape())
        if self.src_perm is not None:
            perm = [int(p) for p in self.src_perm.get_values()]
            if side != "src" or sorted(perm) != list(range(len(ss))):
                _fail(self, f"src_perm {perm} for a {side} box of rank {len(ss)}",
                      "src_perm is a permutation of the dimensions, with src_offsets")
            unperm = [0] * len(ss)
            for d, p in enumerate(perm):
                unperm[p] = ss[d]
            ss = tuple(unperm)
        if len(offs) != len(bs) or len(ss) != len(bs) or any(o < 0 or o + n > d for o, n, d in zip(offs, ss, bs)):
            _fail(self, f"{side}_offsets {list(offs)} with a box of {list(ss)} in {list(bs)}",
                  "box inside the buffer, same rank")


@irdl_op_definition
class ConcatViewOp(_InsOutsOp):
    """Orders the writes of ``ins`` (views of ``outs[0]``) before uses of the result (aliases ``outs[0]``)."""

    name = "buf.concat_view"

    def verify_(self) -> None:
        super().verify_()
        if len(self.outs) != 1:
            _fail(self, f"{len(self.outs)} outs", "one output buffer")


@irdl_op_definition
class ReshapeOp(BufOp):
    """A view of ``source`` with another shape: same element type and element count (same bytes)."""

    name = "buf.reshape"
    source = operand_def(MemRefType)
    result = result_def(MemRefType)
    traits = traits_def(Pure())
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, t: MemRefType):
        super().__init__(operands=[source], result_types=[t])

    def verify_(self) -> None:
        a, b = self.source.type, self.result.type
        if a.element_type != b.element_type or byte_size(a) != byte_size(b):
            _fail(self, f"reshape {a} to {b}", "views preserve element type and byte size")


@irdl_op_definition
class SubviewOp(BufOp):
    """A contiguous slice ``source[offsets : offsets + sizes]``: dims before the partial one have size 1,
    dims after it are full, so the view is one contiguous byte range starting at ``byte_offset()``."""

    name = "buf.subview"
    source = operand_def(MemRefType)
    offsets = prop_def(DenseArrayBase[I64])
    sizes = prop_def(DenseArrayBase[I64])
    result = result_def(MemRefType)
    traits = traits_def(Pure())
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, offsets: Sequence[int], sizes: Sequence[int], t: MemRefType):
        super().__init__(operands=[source], result_types=[t], properties={
            "offsets": DenseArrayBase.from_list(i64, list(offsets)), "sizes": DenseArrayBase.from_list(i64, list(sizes))})

    def byte_offset(self) -> int:
        shape = tuple(self.source.type.get_shape())
        offs = self.offsets.get_values()
        idx = 0
        for d, o in zip(shape, offs):
            idx = idx * d + o
        return idx * dtype_of(self.source.type.element_type).itemsize

    def verify_(self) -> None:
        src, res = self.source.type, self.result.type
        shape = tuple(src.get_shape())
        offs, sizes = tuple(self.offsets.get_values()), tuple(self.sizes.get_values())
        if len(offs) != len(shape) or len(sizes) != len(shape):
            _fail(self, f"offsets {offs} / sizes {sizes} for rank {len(shape)}", "one offset and size per dimension")
        if any(o < 0 or s < 0 or o + s > d for o, s, d in zip(offs, sizes, shape)):
            _fail(self, f"offsets {offs} sizes {sizes} exceed {shape}", "0 <= offset, offset + size <= dim")
        if not contiguous_box(shape, offs, sizes):
            _fail(self, f"offsets {offs} sizes {sizes} of {shape}", "contiguous slice (trailing dims full)")
        if tuple(res.get_shape()) != sizes or res.element_type != src.element_type:
            _fail(self, f"result {res} for sizes {sizes}", "result shape == sizes, same element type")


def contiguous_box(shape: Sequence[int], offsets: Sequence[int], sizes: Sequence[int]) -> bool:
    """Whether the box ``[offsets, offsets + sizes)`` of a row-major ``shape`` is one contiguous range: every
    dimension after the first one of extent other than 1 is whole."""
    nonunit = [i for i, n in enumerate(sizes) if n != 1]
    k = nonunit[0] if nonunit else len(shape)
    return all(sizes[i] == shape[i] and offsets[i] == 0 for i in range(k + 1, len(shape)))


def view_source(op: Operation) -> SSAValue | None:
    """The buffer a view op (or a kernel/copy result) aliases, else ``None``."""
    if isinstance(op, (ReshapeOp, SubviewOp)):
        return op.source
    return None



def base_buffer(value: SSAValue) -> SSAValue:
    """The buffer ``value`` ultimately aliases: kernel/copy/concat results resolve to their ``outs``,
    views to their source, until an allocation, constant, ``rt.buffer`` or block argument."""
    while True:
        owner = value.owner
        if isinstance(owner, _InsOutsOp):
            value = owner.outs[value.index]  # type: ignore[attr-defined]
        elif isinstance(owner, (ReshapeOp, SubviewOp)):
            value = owner.source
        else:
            return value


__all__ = ["NCE_ATTR", "AllocOp", "ConcatViewOp", "ConstOp", "CopyOp", "KernelOp", "ReshapeOp", "StaticAllocOp", "base_buffer",
           "SubviewOp", "byte_size", "contiguous_box", "num_elements", "shape_and_itemsize", "view_source"]
