"""Import a TOSA 1.x flatbuffer graph (``test.tosa``) into nnkiln's TOSA 0.30 dialect.

The result is a module with one ``func.func @main``; argument ``i`` carries
``arg_attrs = {nnkiln.name = "<1.x input tensor name>"}`` and result ``j`` carries
``res_attrs = {nnkiln.name = "<1.x output tensor name>"}`` (the reference interpreter's naming
convention). 1.x constants (``CONST``) become ``tosa.const``; 1.x shape constants (``CONST_SHAPE``)
and the constant *input tensors* that 1.x uses where 0.30 has attributes (zero points, RESCALE's
multiplier/shift, MUL's shift, PAD's pad_const) are folded into properties.

Result types are taken from the 1.x output tensors (not inferred), so that nnkiln's verifier, not the
importer, judges whether an output shape is legal (this is what makes the 1.x ERROR_IF tests useful).

Errors: a graph that 0.30 cannot express raises ``UnsupportedIn030``; a feature of 0.30 this importer
does not translate raises ``NotImported``; a graph that is malformed in both versions (unknown tensor
name, wrong operand count, a runtime tensor where a constant is needed, a type no version has)
raises ``InvalidTosa1Graph`` with a ``rule``. All are ``FrontendError``s.

Differences between TOSA 0.30 and TOSA 1.x (1.1 draft, the flatbuffer schema of tosa-tools 2026.x)
and what the importer does with each:

=============================  ===================================================  ========================
Topic                          1.x                                                  0.30 / importer
=============================  ===================================================  ========================
zero points (AVG_POOL2D,       const input tensors of shape [1] (``input_zp``,      properties ``input_zp``,
CONV2D/3D, DEPTHWISE,          ``weight_zp``, ``output_zp``, ``input1_zp``,         ... (i64); a runtime
TRANSPOSE_CONV2D, MATMUL,      ``A_zp``, ``B_zp``)                                  tensor → InvalidTosa1Graph
NEGATE, RESCALE)
RESCALE multiplier / shift     const input tensors (i32 or i16 / i8)                ``multiplier``/``shift``
                                                                                    int arrays
RESCALE rounding               ``rounding_mode`` SINGLE / DOUBLE / INEXACT           ``double_round`` false /
                                                                                    true; INEXACT → unsupported
RESCALE unsigned data          ``input_unsigned``/``output_unsigned`` flags on      ``ui8``/``ui16`` element
                               i8/i16 tensors                                        types (the tensor is typed
                                                                                    unsigned; zp bits read as
                                                                                    unsigned); unsigned i32 or
                                                                                    a tensor used both signed
                                                                                    and unsigned → Invalid /
                                                                                    unsupported
MUL shift                      const i8 input tensor [1]                            ``shift`` property
CLAMP bounds                   ``min_val``/``max_val`` raw bytes of the input type  int (or float) properties
                               + ``nan_mode``                                       decoded by the input type;
                                                                                    float IGNORE → unsupported
NaN mode (MAXIMUM, MINIMUM,    ``nan_mode`` PROPAGATE/IGNORE                        0.30 propagates NaN
REDUCE_MAX/MIN, MAX_POOL2D,                                                         (PROPAGATE maps; IGNORE
CLAMP)                                                                              on floats → unsupported;
                                                                                    ignored for integers)
ARGMAX NaN                     ``nan_mode``: PROPAGATE selects the first NaN         0.30 never selects NaN
                                                                                    (``>``): float PROPAGATE →
                                                                                    unsupported, IGNORE maps
shapes (RESHAPE new_shape,     ``!tosa.shape`` operands from CONST_SHAPE            int array properties;
SLICE start/size, TILE         (int64 data)                                         non-constant shapes →
multiples, PAD padding,                                                             InvalidTosa1Graph
RESIZE scale/offset/border)
PAD                            ``padding`` shape [2·rank], ``pad_const`` const      ``padding`` (flattened
                               tensor [1]                                           [rank,2]), ``pad_const``
conv accumulator               ``acc_type`` attribute (i32, i48, fp16, fp32)        implied by the output type:
                                                                                    acc_type ≠ output type
                                                                                    (e.g. fp16 out with fp32
                                                                                    acc) → unsupported
conv bias                      shape [OC] or [1] (broadcast)                        [OC]: a const [1] bias is
                                                                                    broadcast to [OC]; a
                                                                                    runtime [1] bias →
                                                                                    unsupported
``local_bound`` (conv, FFT)    float precision hint                                  ignored (no semantics for
                                                                                    integers)
TRANSPOSE_CONV2D               ``out_pad`` *adds* (oy = iy·s + out_pad_top + ky);   ``out_pad`` = −(1.x
                               no ``out_shape``                                     out_pad) (0.30 subtracts;
                                                                                    must be ≥ 0, so a positive
                                                                                    1.x out_pad → unsupported);
                                                                                    ``out_shape`` = output shape
RESIZE                         ``scale`` = [y_n, y_d, x_n, x_d], offset, border;     needs y_n == x_n == 2^k,
                               OH = ((IH−1)·y_n − off + border)/y_d + 1             1 ≤ k ≤ 11 (else
                                                                                    unsupported): shift = k,
                                                                                    stride = [y_d, x_d], same
                                                                                    offset, ``output_size`` =
                                                                                    output shape, border_0.30
                                                                                    = OH − 1 − idiv((IH−1)·2^k
                                                                                    − off, y_d) (0.30's border
                                                                                    only sizes the output)
AVG_POOL2D                     ``acc_type``                                         int: must be i32; float:
                                                                                    must be the natural one
                                                                                    (fp32 for fp32/bf16, fp16
                                                                                    for fp16) else unsupported
TABLE                          ``table`` is a (const) input                          ``table`` operand (as 1.x)
FULLY_CONNECTED                absent (lowered to CONV2D)                           never produced
RESCALE rank 0, GATHER/SCATTER  allowed in 1.x                                      unsupported (0.30: RESCALE
of bool                                                                             rank 1–4; no bool GATHER)
ERF, COS, SIN, CAST float↔     exist in 1.x                                         unsupported
float, FP8/FP6/FP4/MX types,
INT64, block-scaled ops,
shape ops (DIM, ADD_SHAPE…),
VARIABLE*, *_ADAPTIVE pools,
ROW_GATHER, MATMUL_T, CONV2D_
BLOCK_SCALED
COND_IF, WHILE_LOOP, CUSTOM    regions / custom ops                                 NotImported (exist in
                                                                                    0.30; not translated here)
rank-0 tensors, bool, int4,    same                                                 same types (``i1``, ``i4``,
int48                                                                               ``i48``)
unranked / variable tensors    allowed by the schema                                InvalidTosa1Graph /
                                                                                    unsupported
=============================  ===================================================  ========================
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, StringAttr, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from nnkiln.dialects.tosa.base import Kind, element_type, to_attr
from nnkiln.frontends.tosa1.schema import (
    DType,
    NanPropagationMode,
    OpCode,
    TosaBasicBlock,
    TosaOperator,
    TosaTensor,
    data_itemsize,
    decode_shape_data,
    decode_tensor_data,
    read_graph,
)
from nnkiln.ir.errors import FrontendError
from nnkiln.limits import LimitError, check_tensor

NAME_ATTR = "nnkiln.name"


class UnsupportedIn030(FrontendError):
    """A valid TOSA 1.x graph uses an operator, type or mode that TOSA 0.30 does not have."""


class NotImported(FrontendError):
    """A 1.x construct that 0.30 has but this importer does not translate (control flow, custom)."""


class InvalidTosa1Graph(FrontendError):
    """The graph breaks a rule that holds in both versions (structure, operand count, const-ness)."""

    def __init__(self, message: str, *, rule: str = "", file: str = "", node: str = ""):
        super().__init__(message, file=file, node=node)
        self.rule = rule


_KINDS: dict[DType, Kind] = {
    DType.BOOL: Kind.BOOL,
    DType.INT4: Kind.I4,
    DType.INT8: Kind.I8,
    DType.INT16: Kind.I16,
    DType.INT32: Kind.I32,
    DType.INT48: Kind.I48,
    DType.FP32: Kind.F32,
    DType.FP16: Kind.F16,
    DType.BF16: Kind.BF16,
}
_UNSIGNED = {Kind.I8: Kind.U8, Kind.I16: Kind.U16}


@dataclass
class Tosa1Import:
    """An imported graph: the module plus the 1.x names and 0.30 element kinds of its inputs/outputs."""

    module: ModuleOp
    input_names: list[str]
    input_kinds: list[Kind]
    output_names: list[str]
    output_kinds: list[Kind]
    version: tuple[int, int, int, bool] = (0, 0, 0, True)


@dataclass
class _State:
    block: TosaBasicBlock
    filename: str
    tensors: dict[str, TosaTensor] = field(default_factory=dict)
    values: dict[str, SSAValue] = field(default_factory=dict)
    consts: dict[str, np.ndarray] = field(default_factory=dict)
    shapes: dict[str, list[int]] = field(default_factory=dict)
    kind_override: dict[str, Kind] = field(default_factory=dict)
    ops: list[Operation] = field(default_factory=list)


# ------------------------------------------------------------------------------------------------
# entry points


def import_tosa1_file(path: str) -> Tosa1Import:
    """Import ``path`` (a ``.tosa`` file, or a test directory holding ``desc.json`` + ``test.tosa``)."""
    if os.path.isdir(path):
        desc_path = os.path.join(path, "desc.json")
        name = "test.tosa"
        if os.path.exists(desc_path):
            with open(desc_path) as f:
                name = json.load(f).get("tosa_file", name)
        path = os.path.join(path, name)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as err:
        raise FrontendError(f"cannot read: {err.strerror}", file=path) from None
    return import_tosa1_bytes(data, filename=path)


def import_tosa1_bytes(data: bytes, filename: str = "<tosa>") -> Tosa1Import:
    """Import a TOSA 1.x flatbuffer (the ``main`` block of the first region)."""
    try:
        return _import_bytes(data, filename)
    except FrontendError as err:  # e.g. a lazily read, corrupt attribute table: the reader did not know the file
        err.file = err.file or filename
        raise
    except LimitError as err:
        if str(err).startswith(filename):
            raise
        raise LimitError(f"{filename}: {err}") from None


def _import_bytes(data: bytes, filename: str) -> Tosa1Import:
    graph = read_graph(data, filename)
    if graph.version[0] < 1:
        raise UnsupportedIn030(f"graph version {graph.version[:3]} is not TOSA 1.x", file=filename)
    if not graph.regions or not graph.regions[0].blocks:
        raise InvalidTosa1Graph("graph has no region/basic block", rule="graph structure", file=filename)
    main = graph.regions[0]
    if len(graph.regions) > 1 or len(main.blocks) > 1:
        raise NotImported("graphs with several regions/blocks (control flow) are not imported", file=filename)
    result = _import_block(main.blocks[0], filename)
    result.version = graph.version
    return result


# ------------------------------------------------------------------------------------------------
# the block


def _import_block(block: TosaBasicBlock, filename: str) -> Tosa1Import:
    st = _State(block, filename)
    for t in block.tensors:
        if t.name in st.tensors:
            raise InvalidTosa1Graph(f"tensor '{t.name}' is declared twice", rule="unique tensor names", file=filename)
        st.tensors[t.name] = t
    for s in block.shapes:
        st.shapes[s.name] = decode_shape_data(s)
    _unsigned_pass(st)

    arg_types: list[Attribute] = []
    in_kinds: list[Kind] = []
    for name in block.inputs:
        t = _tensor(st, name, "graph input")
        kind = _kind_of_tensor(st, t)
        arg_types.append(TensorType(element_type(kind), _static_shape(st, t)))
        in_kinds.append(kind)
    body = Block(arg_types=arg_types)
    for name, arg in zip(block.inputs, body.args):
        st.values[name] = arg

    producers: set[str] = set()
    for op in block.operators:
        for o in op.outputs:
            if o in producers or o in block.inputs:
                raise InvalidTosa1Graph(f"tensor '{o}' is written twice", rule="single assignment", file=filename,
                                        node=op.op_name)
            producers.add(o)
    for op in block.operators:
        _import_op(st, op)

    results: list[SSAValue] = []
    out_kinds: list[Kind] = []
    for name in block.outputs:
        results.append(_value(st, name, None))
        out_kinds.append(_kind_of_tensor(st, _tensor(st, name, "graph output")))
    body.add_ops(st.ops)
    body.add_op(ReturnOp(*results))
    ftype = ([a.type for a in body.args], [r.type for r in results])
    func = FuncOp(
        "main", ftype, Region(body),
        arg_attrs=ArrayAttr([DictionaryAttr({NAME_ATTR: StringAttr(n)}) for n in block.inputs]),
        res_attrs=ArrayAttr([DictionaryAttr({NAME_ATTR: StringAttr(n)}) for n in block.outputs]),
    )
    return Tosa1Import(ModuleOp([func]), list(block.inputs), in_kinds, list(block.outputs), out_kinds)


def _unsigned_pass(st: _State) -> None:
    """RESCALE's input_unsigned/output_unsigned make its input/output tensor ``ui8``/``ui16``."""
    for op in st.block.operators:
        if op.op != OpCode.RESCALE or op.attribute is None:
            continue
        a = op.attribute  # RescaleAttribute { scale32 0, rounding_mode 1, per_channel 2, input_unsigned 3, output_unsigned 4 }
        for flag, names in ((a.bool(3), op.inputs[:1]), (a.bool(4), op.outputs[:1])):
            if not flag:
                continue
            for n in names:
                t = st.tensors.get(n)
                if t is None:
                    continue
                base = _KINDS.get(t.dtype)
                if base not in _UNSIGNED:
                    raise InvalidTosa1Graph(
                        f"RESCALE marks {t.dtype.name} tensor '{n}' unsigned; only 8/16-bit data can be unsigned "
                        "(0.30: no such unsigned type in RESCALE's supported data types)",
                        rule="RESCALE supported data types", file=st.filename, node=op.op_name)
                st.kind_override[n] = _UNSIGNED[base]
    # a tensor read signed by another op and unsigned by RESCALE cannot be typed in 0.30
    for op in st.block.operators:
        if op.op == OpCode.RESCALE:
            continue
        for n in [*op.inputs, *op.outputs]:
            if n in st.kind_override:
                raise UnsupportedIn030(
                    f"tensor '{n}' is unsigned for RESCALE and signed for {op.op_name}; 0.30 types data, not ops",
                    file=st.filename, node=op.op_name)


def _tensor(st: _State, name: str, what: str) -> TosaTensor:
    t = st.tensors.get(name)
    if t is None:
        raise InvalidTosa1Graph(f"{what} '{name}' is not a declared tensor", rule="tensor exists", file=st.filename)
    return t


def _kind_of_tensor(st: _State, t: TosaTensor) -> Kind:
    if t.name in st.kind_override:
        return st.kind_override[t.name]
    kind = _KINDS.get(t.dtype)
    if kind is None:
        if t.dtype is DType.UNKNOWN:
            raise InvalidTosa1Graph(f"tensor '{t.name}' has no element type", rule="element type", file=st.filename)
        raise UnsupportedIn030(f"tensor '{t.name}': element type {t.dtype.name} does not exist in TOSA 0.30",
                               file=st.filename)
    return kind


def _static_shape(st: _State, t: TosaTensor) -> list[int]:
    """The shape of ``t``, checked: ranked, static, at most rank 64 and within the limits (``nnkiln.limits``)."""
    if t.is_unranked:
        raise InvalidTosa1Graph(f"tensor '{t.name}' is unranked", rule="ranked tensors", file=st.filename)
    if any(d < 0 for d in t.shape):
        raise UnsupportedIn030(f"tensor '{t.name}' has a dynamic shape {t.shape}", file=st.filename)
    if len(t.shape) > 64:
        raise InvalidTosa1Graph(f"tensor '{t.name}' has rank {len(t.shape)} (at most 64)", rule="rank",
                                file=st.filename)
    check_tensor(t.shape, data_itemsize(t.dtype), f"{st.filename}: tensor '{t.name}'")
    return list(t.shape)


def _tensor_type(st: _State, name: str) -> TensorType:
    t = _tensor(st, name, "tensor")
    return TensorType(element_type(_kind_of_tensor(st, t)), _static_shape(st, t))


def _value(st: _State, name: str, op: TosaOperator | None) -> SSAValue:
    """The SSA value of a tensor; constants are materialized as ``tosa.const`` on first use."""
    if name in st.values:
        return st.values[name]
    if name in st.consts or (name in st.tensors and st.tensors[name].data):
        ttype = _tensor_type(st, name)  # first: a 1.x-only element type is UnsupportedIn030, not undecodable data
        arr = _const_array(st, name, op)
        cls = _op_class("tosa.const")
        c = cls.from_numpy(arr, ttype.element_type)  # type: ignore[attr-defined]
        st.ops.append(c)
        st.values[name] = c.results[0]
        return c.results[0]
    node = op.op_name if op else ""
    if name in st.shapes and op is None:
        raise UnsupportedIn030(f"graph output '{name}' is a shape (1.x's shape type): 0.30 has no shape values",
                               file=st.filename)
    if name in st.shapes:
        raise InvalidTosa1Graph(f"shape '{name}' is used where a tensor is expected", rule="operand kinds",
                                file=st.filename, node=node)
    if name not in st.tensors:
        raise InvalidTosa1Graph(f"operand '{name}' is not a declared tensor", rule="tensor exists",
                                file=st.filename, node=node)
    raise InvalidTosa1Graph(f"tensor '{name}' is read before it is written (not a graph input, constant or an "
                            "earlier operator's output)", rule="topological order", file=st.filename, node=node)


def _const_array(st: _State, name: str, op: TosaOperator | None) -> np.ndarray:
    if name in st.consts:
        return st.consts[name]
    t = st.tensors.get(name)
    if t is None:
        raise InvalidTosa1Graph(f"operand '{name}' is not a declared tensor", rule="tensor exists",
                                file=st.filename, node=op.op_name if op else "")
    if not t.data:  # 1.x takes these operands as tensors, which may be computed at run time; 0.30 as attributes
        raise UnsupportedIn030(f"'{name}' is a run-time tensor where 0.30 takes a constant attribute",
                               file=st.filename, node=op.op_name if op else "")
    if t.dtype not in _KINDS and t.dtype is not DType.SHAPE:
        _kind_of_tensor(st, t)  # an element type 0.30 lacks (fp8, fp4, ...): UnsupportedIn030 before any decoding
    arr = decode_tensor_data(t.data, t.dtype, t.shape, t.name)
    st.consts[name] = arr
    return arr


def _scalar(st: _State, op: TosaOperator, name: str, what: str, unsigned: bool = False) -> int:
    arr = _const_array(st, name, op)
    if arr.size != 1:
        raise InvalidTosa1Graph(f"{what} '{name}' has {arr.size} elements; one is required", rule=f"{what} shape [1]",
                                file=st.filename, node=op.op_name)
    v = arr.reshape(-1)[0]
    if unsigned:
        bits = arr.dtype.itemsize * 8
        return int(v) & ((1 << bits) - 1)
    return int(v)


def _shape_operand(st: _State, op: TosaOperator, name: str, what: str) -> list[int]:
    if name in st.shapes:
        return st.shapes[name]
    t = st.tensors.get(name)
    if t is not None and t.dtype is DType.SHAPE and t.data:
        return [int(v) for v in np.frombuffer(t.data, "<i8")]
    raise InvalidTosa1Graph(f"{what} '{name}' is not a constant shape", rule="constant shape operand",
                            file=st.filename, node=op.op_name)


# ------------------------------------------------------------------------------------------------
# operators


_OP_CLASSES: dict[str, type[Operation]] = {}


def _op_class(name: str) -> type[Operation]:
    if not _OP_CLASSES:
        from nnkiln.dialects.tosa import OPS

        _OP_CLASSES.update({c.name: c for c in OPS})
    cls = _OP_CLASSES.get(name)
    if cls is None:
        raise NotImported(f"the dialect has no op '{name}'")
    return cls


def _arity(st: _State, op: TosaOperator, n_in: int | None, n_out: int = 1) -> None:
    if n_in is not None and len(op.inputs) != n_in:
        raise InvalidTosa1Graph(f"{op.op_name} takes {n_in} inputs, got {len(op.inputs)}: {op.inputs}",
                                rule="operand count", file=st.filename, node=op.op_name)
    if len(op.outputs) != n_out:
        raise InvalidTosa1Graph(f"{op.op_name} has {n_out} outputs, got {len(op.outputs)}: {op.outputs}",
                                rule="result count", file=st.filename, node=op.op_name)


def _emit(st: _State, op: TosaOperator, name: str, operands: Sequence[str | SSAValue],
          props: dict[str, Any] | None = None, operand_segments: bool = False) -> Operation:
    cls = _op_class(name)
    vals = [o if isinstance(o, SSAValue) else _value(st, o, op) for o in operands]
    defined = cls.get_irdl_definition().properties  # type: ignore[attr-defined]
    properties: dict[str, Attribute] = {}
    for k, v in (props or {}).items():
        if k not in defined:
            raise NotImported(f"{name} has no property '{k}' in this dialect", file=st.filename, node=op.op_name)
        properties[k] = to_attr(v)
    new = cls.create(operands=vals, result_types=[_tensor_type(st, o) for o in op.outputs], properties=properties)
    st.ops.append(new)
    for o, r in zip(op.outputs, new.results):
        r.name_hint = _hint(o)
        st.values[o] = r
    return new


def _hint(name: str) -> str | None:
    h = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return h if h and not h[0].isdigit() else None


def _kind(st: _State, name: str) -> Kind:
    return _kind_of_tensor(st, _tensor(st, name, "tensor"))


def _nan_ok(st: _State, op: TosaOperator, mode: int, data: str) -> None:
    """0.30 propagates NaN: only PROPAGATE (or an integer type) maps."""
    if mode == NanPropagationMode.IGNORE and _kind(st, data).is_float:
        raise UnsupportedIn030(f"{op.op_name} nan_mode = IGNORE (0.30 always propagates NaN)",
                               file=st.filename, node=op.op_name)


def _attr(op: TosaOperator) -> Any:
    if op.attribute is None:
        class _Empty:
            def int32(self, slot: int, default: int = 0) -> int: return default
            def uint32(self, slot: int, default: int = 0) -> int: return default
            def bool(self, slot: int, default: bool = False) -> bool: return default
            def int32s(self, slot: int) -> list[int]: return []
            def ubytes(self, slot: int) -> bytes: return b""
            def string(self, slot: int) -> str: return ""
        return _Empty()
    return op.attribute


_SIMPLE: dict[OpCode, tuple[str, int]] = {}
for _n, _k in [
    ("ADD", 2), ("SUB", 2), ("BITWISE_AND", 2), ("BITWISE_OR", 2), ("BITWISE_XOR", 2), ("INTDIV", 2),
    ("LOGICAL_AND", 2), ("LOGICAL_LEFT_SHIFT", 2), ("LOGICAL_RIGHT_SHIFT", 2), ("LOGICAL_OR", 2),
    ("LOGICAL_XOR", 2), ("POW", 2), ("ABS", 1), ("BITWISE_NOT", 1), ("CEIL", 1), ("CLZ", 1), ("EXP", 1),
    ("FLOOR", 1), ("LOG", 1), ("LOGICAL_NOT", 1), ("RECIPROCAL", 1), ("RSQRT", 1), ("SIGMOID", 1),
    ("TANH", 1), ("SELECT", 3), ("EQUAL", 2), ("GREATER", 2), ("GREATER_EQUAL", 2), ("IDENTITY", 1),
    ("GATHER", 2), ("SCATTER", 3), ("TABLE", 2), ("REDUCE_ALL", 1), ("REDUCE_ANY", 1), ("REDUCE_PRODUCT", 1),
    ("REDUCE_SUM", 1),
]:
    _SIMPLE[OpCode[_n]] = ("tosa." + _n.lower(), _k)

_AXIS_OPS = {OpCode.REDUCE_ALL, OpCode.REDUCE_ANY, OpCode.REDUCE_PRODUCT, OpCode.REDUCE_SUM}

_NOT_IN_030 = {
    "ERF", "COS", "SIN", "VARIABLE", "VARIABLE_WRITE", "VARIABLE_READ", "MATMUL_T_BLOCK_SCALED",
    "CAST_FROM_BLOCK_SCALED", "CAST_TO_BLOCK_SCALED", "DIM", "CONCAT_SHAPE", "ADD_SHAPE", "SUB_SHAPE", "MUL_SHAPE",
    "SLICE_SHAPE", "EXP2_SHAPE", "LOG2_CEIL_SHAPE", "LOG2_FLOOR_SHAPE", "MAX_SHAPE", "MIN_SHAPE", "MOD_SHAPE",
    "DIV_CEIL_SHAPE", "DIV_FLOOR_SHAPE", "ASSERT_EQUAL_SHAPE", "CONV2D_BLOCK_SCALED", "MAX_POOL2D_ADAPTIVE",
    "AVG_POOL2D_ADAPTIVE", "RESHAPE_BLOCK_SCALED", "ROW_GATHER_BLOCK_SCALED", "ROW_GATHER", "MATMUL_T",
}


def _import_op(st: _State, op: TosaOperator) -> None:
    try:
        code = OpCode(op.op)
    except ValueError:
        raise InvalidTosa1Graph(f"unknown operator code {op.op}", rule="operator exists", file=st.filename) from None
    name = code.name
    if code == OpCode.CONST:
        _arity(st, op, 0)
        t = _tensor(st, op.outputs[0], "CONST output")
        if not t.data and _static_shape(st, t) and 0 not in t.shape:
            raise InvalidTosa1Graph(f"CONST '{t.name}' has no data", rule="const data", file=st.filename, node=name)
        return  # materialized lazily on first use as a tensor (attribute-only constants vanish)
    if code == OpCode.CONST_SHAPE:
        _arity(st, op, 0)
        out = op.outputs[0]
        if out not in st.shapes:
            _shape_operand(st, op, out, "CONST_SHAPE output")
        return
    if name in _NOT_IN_030:
        raise UnsupportedIn030(f"operator {name} does not exist in TOSA 0.30", file=st.filename, node=name)
    if code in (OpCode.COND_IF, OpCode.WHILE_LOOP, OpCode.CUSTOM):
        raise NotImported(f"{name} is not translated by the TOSA 1.x importer", file=st.filename, node=name)
    if code in (OpCode.FFT2D, OpCode.RFFT2D):
        from nnkiln.frontends.tosa1.importer_ops import fft

        fft(st, op, code)
        return
    for o in op.outputs:
        _tensor(st, o, f"{name} output")
    if code in (OpCode.GATHER, OpCode.SCATTER) and op.inputs and op.inputs[0] in st.tensors \
            and st.tensors[op.inputs[0]].dtype is DType.BOOL:
        raise UnsupportedIn030(f"{name} of bool data (0.30: i8/i16/i32/float only)", file=st.filename, node=name)
    if code in _SIMPLE:
        target, n = _SIMPLE[code]
        _arity(st, op, n)
        props = {"axis": _attr(op).int32(0)} if code in _AXIS_OPS else {}
        _emit(st, op, target, op.inputs, props)
        return
    from nnkiln.frontends.tosa1.importer_ops import HANDLERS

    handler = HANDLERS.get(code)
    if handler is None:
        raise NotImported(f"operator {name} is not handled", file=st.filename, node=name)
    handler(st, op)
