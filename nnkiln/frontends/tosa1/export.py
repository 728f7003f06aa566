"""Export a TOSA 0.30 module to TOSA 1.x MLIR text (generic op form of the upstream MLIR ``tosa`` dialect).

``export_tosa1_mlir(module)`` writes the module's entry function (the only ``func.func``, else
``@main``) as ``"builtin.module"() ({ "func.func"() <{...}> ({ ^bb0(...): ... }) }) : () -> ()`` in
the generic form, as ``tosa-opt`` (tosa-tools 2026.x, TOSA 1.1 draft) parses it, so that it can be
serialised to a flatbuffer (``tosa-opt --tosa-serialize``), run with the 1.x reference model or fed to
IREE. Inputs and outputs carry ``{tosa.tensor_name = "..."}`` with nnkiln's input/output names (the
reference interpreter's convention: ``nnkiln.name`` in ``arg_attrs``/``res_attrs``, else the SSA name
hint / ``arg<i>``, else ``output<i>``); serialise with ``retain-graph-input-output-names=true`` to
keep them in the flatbuffer.

The mapping is the inverse of the importer's table (``nnkiln.frontends.tosa1.importer``):

=============================  ===================================================================
0.30 (nnkiln)                  1.x emitted
=============================  ===================================================================
zero-point properties          ``tosa.const`` ``tensor<1xT>`` operands, T = the element type of the
                               data operand/result they belong to (float ops: ``0.0``)
RESCALE multiplier / shift     ``tosa.const`` ``tensor<Nxi32>`` (scale32) or ``tensor<Nxi16>`` and
                               ``tensor<Nxi8>`` operands, N = 1 or the channel count
RESCALE double_round           ``rounding_mode = #tosa.rounding_mode<DOUBLE_ROUND|SINGLE_ROUND>``
``ui8``/``ui16`` data          signless ``i8``/``i16`` + RESCALE ``input_unsigned``/``output_unsigned``
                               (the zero point keeps its bits: ui8 128 → i8 -128)
MUL shift                      ``tosa.const tensor<1xi8>`` operand
CLAMP min_val/max_val          typed attributes of the input element type + ``nan_mode PROPAGATE``
MAXIMUM/MINIMUM, REDUCE_MAX/   ``nan_mode = PROPAGATE`` (0.30 propagates NaN)
MIN, MAX_POOL2D
ARGMAX                         ``nan_mode = IGNORE`` for floats (0.30's strict ``>`` never selects
                               NaN), PROPAGATE for integers (no NaN)
axis properties                ``axis = N : i32``; TRANSPOSE ``perms = array<i32: ...>``
RESHAPE new_shape, SLICE       ``tosa.const_shape`` operands ``!tosa.shape<N>`` (``tensor<Nxindex>``)
start/size, TILE multiples,
PAD padding
PAD pad_const                  ``tosa.const tensor<1xT>`` operand
conv family                    ``acc_type`` = the 0.30 output element type, ``local_bound = false``;
                               fp16/bf16 data with an fp32 output (0.30's "fp32 accumulate" rows,
                               which 1.x types as fp16/bf16 outputs) → the input and weight are CAST
                               to fp32 first (exact) and the conv runs in fp32
TRANSPOSE_CONV2D               ``out_pad`` = −(0.30 out_pad) (1.x adds it); ``out_shape`` dropped
FULLY_CONNECTED                RESHAPE input [N,IC] → [N,1,1,IC], weight [OC,IC] → [OC,1,1,IC]
                               (a constant weight is re-emitted reshaped), CONV2D 1×1, RESHAPE
                               [N,1,1,OC] → [N,OC]
AVG_POOL2D                     ``acc_type`` i32 (integers), f16 (fp16), f32 (bf16, fp32)
RESIZE (integer modes)         ``scale`` = [2^shift, stride_y, 2^shift, stride_x], same ``offset``,
                               ``border`` = (O−1)·stride − (I−1)·2^shift + offset (so 1.x's exact
                               output rule gives 0.30's ``output_size``); NEAREST →
                               ``NEAREST_NEIGHBOR``
FFT2D / RFFT2D                 ``local_bound = false``; RFFT2D: 0.30's [N,H/2+1,W/2+1] outputs are
                               SLICEs of 1.x's [N,H,W/2+1] outputs
quantized element types        their storage type
=============================  ===================================================================

Not exported (``Tosa1ExportError`` naming the op): float RESIZE (0.30 scales by float stride/offset,
1.x by rationals; the importer does not map it either), COND_IF, WHILE_LOOP, CUSTOM (regions /
custom ops), any op that is not a ``tosa`` op, and functions with dynamic shapes.

Constants print as hex strings (``dense<"0x...">``, little-endian element bytes) for 8/16/32-bit
integers and floats, as decimal lists for ``i1``, ``i4`` and ``i48``, and as splats when all
elements are equal, so every value round-trips exactly.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue

from nnkiln.dialects.tosa.base import Kind, from_attr, kind_of
from nnkiln.ir.elements import to_numpy
from nnkiln.ir.errors import InputError, NnkilnError

NAME_ATTR = "nnkiln.name"


class Tosa1ExportError(NnkilnError):
    """The module cannot be written as TOSA 1.x: names the op and the reason."""

    def __init__(self, message: str, *, op_name: str = ""):
        super().__init__(f"'{op_name}': {message}" if op_name else message)
        self.op_name = op_name


# ------------------------------------------------------------------------------------------------
# types and constants

_MLIR_TYPE: dict[Kind, str] = {
    Kind.BOOL: "i1", Kind.I4: "i4", Kind.I8: "i8", Kind.I16: "i16", Kind.I32: "i32", Kind.I48: "i48",
    Kind.U8: "i8", Kind.U16: "i16", Kind.F16: "f16", Kind.BF16: "bf16", Kind.F32: "f32",
}
_SIGNED: dict[Kind, Kind] = {Kind.U8: Kind.I8, Kind.U16: Kind.I16}
_NP_DTYPE: dict[Kind, Any] = {
    Kind.BOOL: np.bool_, Kind.I4: np.int8, Kind.I8: np.int8, Kind.I16: np.int16, Kind.I32: np.int32,
    Kind.I48: np.int64, Kind.F16: np.float16, Kind.BF16: ml_dtypes.bfloat16, Kind.F32: np.float32,
}
_FLOAT_BITS: dict[Kind, Any] = {Kind.F16: np.uint16, Kind.BF16: np.uint16, Kind.F32: np.uint32}


def _tensor_str(shape: Sequence[int], kind: Kind) -> str:
    dims = "".join(f"{d}x" for d in shape)
    return f"tensor<{dims}{_MLIR_TYPE[kind]}>"


def _signed(kind: Kind) -> Kind:
    return _SIGNED.get(kind, kind)


def _as_storage(arr: np.ndarray, kind: Kind) -> np.ndarray:
    """``arr`` in the numpy dtype of the (signless) 1.x element type; unsigned data keeps its bits."""
    arr = np.asarray(arr)
    if kind in _SIGNED:
        bits = np.dtype(np.uint8 if kind is Kind.U8 else np.uint16)
        return np.ascontiguousarray(arr.astype(bits) if arr.dtype != bits else arr).view(
            np.int8 if kind is Kind.U8 else np.int16)
    return np.ascontiguousarray(arr, dtype=_NP_DTYPE[kind])


def _float_literal(value: Any, kind: Kind) -> str:
    """A float as its exact bit pattern (``0x3F800000``): MLIR's hex float literal."""
    bits = np.asarray(value, dtype=_NP_DTYPE[kind]).reshape(1).view(_FLOAT_BITS[kind])[0]
    width = 4 if kind in (Kind.F16, Kind.BF16) else 8
    return f"0x{int(bits):0{width}X}"


def _scalar_literal(value: Any, kind: Kind) -> str:
    if kind.is_float:
        return _float_literal(value, kind)
    if kind is Kind.BOOL:
        return "true" if bool(value) else "false"
    return str(int(value))


def _nested(arr: np.ndarray, kind: Kind) -> str:
    if arr.ndim == 0:
        return _scalar_literal(arr.item(), kind)
    return "[" + ", ".join(_nested(a, kind) for a in arr) + "]"


def _dense(arr: np.ndarray, kind: Kind) -> str:
    """``dense<...>`` for an array already in the 1.x storage dtype of ``kind``."""
    if arr.size == 0:
        return "dense<>"
    flat = arr.reshape(-1)
    if arr.size == 1 or bool(np.all(flat.view(np.uint8).reshape(flat.size, -1) ==
                                    flat[:1].view(np.uint8).reshape(1, -1))):
        return f"dense<{_scalar_literal(flat[0], kind)}>"
    if kind in (Kind.BOOL, Kind.I4, Kind.I48):
        return f"dense<{_nested(arr, kind)}>"
    raw = np.ascontiguousarray(arr).tobytes()  # little-endian host (x86/arm): MLIR's hex layout
    return f'dense<"0x{raw.hex().upper()}">'


# ------------------------------------------------------------------------------------------------
# the emitter


class _Emitter:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.names: dict[SSAValue, str] = {}
        self.counter = 0
        self.const_cache: dict[tuple[str, str], str] = {}

    # -- values -----------------------------------------------------------------------------------

    def fresh(self) -> str:
        name = f"%{self.counter}"
        self.counter += 1
        return name

    def ref(self, value: SSAValue) -> str:
        name = self.names.get(value)
        if name is None:
            raise Tosa1ExportError(f"value {value.name_hint or ''} is used before it is defined (not in the entry "
                                   "function's block)")
        return name

    def emit(self, op_name: str, operands: Sequence[tuple[str, str]], results: Sequence[str],
             props: Sequence[tuple[str, str]] = ()) -> list[str]:
        """Emit ``"op_name"(operands) <{props}> : (types) -> results``; returns the result names."""
        if len(results) == 1:
            outs = [self.fresh()]
            lhs = outs[0]
        elif results:
            base = self.fresh()
            outs = [f"{base}#{i}" for i in range(len(results))]
            lhs = f"{base}:{len(results)}"
        else:
            outs, lhs = [], ""
        prop_text = ""
        if props:
            prop_text = " <{" + ", ".join(f"{k} = {v}" for k, v in sorted(props)) + "}>"
        res_types = results[0] if len(results) == 1 else "(" + ", ".join(results) + ")"
        line = (f"{lhs + ' = ' if lhs else ''}\"{op_name}\"({', '.join(n for n, _ in operands)}){prop_text} : "
                f"({', '.join(t for _, t in operands)}) -> {res_types}")
        self.lines.append(line)
        return outs

    def const(self, arr: np.ndarray, kind: Kind, shape: Sequence[int] | None = None) -> tuple[str, str]:
        """A ``tosa.const`` (deduplicated) holding ``arr`` (values of ``kind``); returns (name, type)."""
        data = _as_storage(np.asarray(arr), kind)
        shape = tuple(data.shape) if shape is None else tuple(shape)
        data = data.reshape(shape)
        ttype = _tensor_str(shape, _signed(kind))
        dense = _dense(data, _signed(kind))
        key = (ttype, dense)
        if key not in self.const_cache:
            (name,) = self.emit("tosa.const", [], [ttype], [("values", f"{dense} : {ttype}")])
            self.const_cache[key] = name
        return self.const_cache[key], ttype

    def scalar(self, value: int | float | bool, kind: Kind) -> tuple[str, str]:
        """A ``tensor<1xT>`` constant (zero points, MUL's shift, PAD's pad_const)."""
        if kind in _SIGNED:
            bits = 8 if kind is Kind.U8 else 16
            v = int(value) & ((1 << bits) - 1)
            return self.const(np.array([v], np.uint8 if bits == 8 else np.uint16), kind)
        return self.const(np.array([value]), kind)

    def shape(self, values: Sequence[int]) -> tuple[str, str]:
        """A ``tosa.const_shape`` (deduplicated); returns (name, ``!tosa.shape<N>``)."""
        vals = [int(v) for v in values]
        stype = f"!tosa.shape<{len(vals)}>"
        if not vals:
            dense = "dense<>"
        elif all(v == vals[0] for v in vals):
            dense = f"dense<{vals[0]}>"
        else:
            dense = "dense<[" + ", ".join(map(str, vals)) + "]>"
        key = (stype, dense)
        if key not in self.const_cache:
            (name,) = self.emit("tosa.const_shape", [], [stype], [("values", f"{dense} : tensor<{len(vals)}xindex>")])
            self.const_cache[key] = name
        return self.const_cache[key], stype


# ------------------------------------------------------------------------------------------------
# helpers on 0.30 ops


def _ttype(value: SSAValue, op_name: str) -> tuple[tuple[int, ...], Kind]:
    t = value.type
    if not isinstance(t, TensorType):
        raise Tosa1ExportError(f"operand/result of type {t} is not a tensor", op_name=op_name)
    kind = kind_of(t)
    if kind is None:
        raise Tosa1ExportError(f"element type {t.element_type} has no TOSA 1.x equivalent", op_name=op_name)
    shape = tuple(int(d) for d in t.get_shape())
    if any(d < 0 for d in shape):
        raise Tosa1ExportError(f"dynamic shape {t} (TOSA 1.x graphs here need static shapes)", op_name=op_name)
    return shape, kind


def _type_str(value: SSAValue, op_name: str) -> str:
    shape, kind = _ttype(value, op_name)
    return _tensor_str(shape, kind)


def _kind(value: SSAValue, op_name: str) -> Kind:
    return _ttype(value, op_name)[1]


def _shape(value: SSAValue, op_name: str) -> tuple[int, ...]:
    return _ttype(value, op_name)[0]


def _prop(op: Operation, name: str) -> Any:
    attr = op.properties.get(name)
    if attr is None:
        attr = op.attributes.get(name)
    if attr is None:
        raise Tosa1ExportError(f"missing property '{name}'", op_name=op.name)
    return from_attr(attr)


def _ints(values: Sequence[int]) -> str:
    return "array<i64: " + ", ".join(str(int(v)) for v in values) + ">" if values else "array<i64>"


def _bool(v: Any) -> str:
    return "true" if bool(v) else "false"


_PROPAGATE = "#tosa.nan_mode<PROPAGATE>"
_IGNORE = "#tosa.nan_mode<IGNORE>"


class _Exporter:
    def __init__(self, em: _Emitter) -> None:
        self.em = em

    def operand(self, v: SSAValue, op_name: str) -> tuple[str, str]:
        return self.em.ref(v), _type_str(v, op_name)

    def bind(self, op: Operation, names: Sequence[str]) -> None:
        for r, n in zip(op.results, names):
            self.em.names[r] = n

    def simple(self, op: Operation, name: str | None = None, props: Sequence[tuple[str, str]] = (),
               extra: Sequence[tuple[str, str]] = ()) -> None:
        operands = [self.operand(v, op.name) for v in op.operands] + list(extra)
        outs = self.em.emit(name or op.name, operands, [_type_str(r, op.name) for r in op.results], props)
        self.bind(op, outs)

    # -- per-op translations ----------------------------------------------------------------------

    def const(self, op: Operation) -> None:
        values = op.properties.get("values")
        if not isinstance(values, DenseIntOrFPElementsAttr):
            raise Tosa1ExportError("values is not a dense elements attribute", op_name=op.name)
        shape, kind = _ttype(op.results[0], op.name)
        name, _ = self.em.const(np.asarray(to_numpy(values)), kind, shape)
        self.em.names[op.results[0]] = name

    def axis(self, op: Operation, nan_mode: str | None = None) -> None:
        props = [("axis", f"{int(_prop(op, 'axis'))} : i32")]
        if nan_mode is not None:
            props.append(("nan_mode", nan_mode))
        self.simple(op, props=props)

    def nan(self, op: Operation) -> None:
        self.simple(op, props=[("nan_mode", _PROPAGATE)])

    def argmax(self, op: Operation) -> None:
        mode = _IGNORE if _kind(op.operands[0], op.name).is_float else _PROPAGATE
        self.axis(op, mode)

    def ars(self, op: Operation) -> None:
        self.simple(op, props=[("round", _bool(_prop(op, "round")))])

    def mul(self, op: Operation) -> None:
        self.simple(op, extra=[self.em.scalar(int(_prop(op, "shift")), Kind.I8)])

    def negate(self, op: Operation) -> None:
        ki, ko = _kind(op.operands[0], op.name), _kind(op.results[0], op.name)
        self.simple(op, extra=[self.em.scalar(_prop(op, "input1_zp"), ki),
                               self.em.scalar(_prop(op, "output_zp"), ko)])

    def clamp(self, op: Operation) -> None:
        kind = _kind(op.operands[0], op.name)
        t = _MLIR_TYPE[kind]

        def bound(v: Any) -> str:
            return f"{_scalar_literal(v, kind)} : {t}"

        self.simple(op, props=[("min_val", bound(_prop(op, "min_val"))), ("max_val", bound(_prop(op, "max_val"))),
                               ("nan_mode", _PROPAGATE)])

    def concat(self, op: Operation) -> None:
        self.simple(op, props=[("axis", f"{int(_prop(op, 'axis'))} : i32")])

    def pad(self, op: Operation) -> None:
        kind = _kind(op.operands[0], op.name)
        self.simple(op, extra=[self.em.shape(_prop(op, "padding")), self.em.scalar(_prop(op, "pad_const"), kind)])

    def reshape(self, op: Operation) -> None:
        self.simple(op, extra=[self.em.shape(_prop(op, "new_shape"))])

    def slice(self, op: Operation) -> None:
        self.simple(op, extra=[self.em.shape(_prop(op, "start")), self.em.shape(_prop(op, "size"))])

    def tile(self, op: Operation) -> None:
        self.simple(op, extra=[self.em.shape(_prop(op, "multiples"))])

    def transpose(self, op: Operation) -> None:
        perms = ", ".join(str(int(p)) for p in _prop(op, "perms"))
        self.simple(op, props=[("perms", f"array<i32: {perms}>" if perms else "array<i32>")])

    def _widened(self, v: SSAValue, op_name: str) -> tuple[str, str]:
        """``v`` as fp32: a constant is re-emitted, anything else goes through CAST (exact for fp16/bf16)."""
        shape, kind = _ttype(v, op_name)
        owner = v.owner
        if isinstance(owner, Operation) and owner.name == "tosa.const":
            values = owner.properties["values"]
            assert isinstance(values, DenseIntOrFPElementsAttr)
            return self.em.const(np.asarray(to_numpy(values)).astype(np.float32), Kind.F32, shape)
        src = self.operand(v, op_name)
        t = _tensor_str(shape, Kind.F32)
        (name,) = self.em.emit("tosa.cast", [src], [t])
        return name, t

    def conv(self, op: Operation) -> None:
        inp, weight, bias = op.operands
        ki, kw, ko = _kind(inp, op.name), _kind(weight, op.name), _kind(op.results[0], op.name)
        if ko is Kind.F32 and ki in (Kind.F16, Kind.BF16):
            data = [self._widened(inp, op.name), self._widened(weight, op.name)]
            ki = kw = Kind.F32
        else:
            data = [self.operand(inp, op.name), self.operand(weight, op.name)]
        zps = [self.em.scalar(0.0 if ki.is_float else _prop(op, "input_zp"), ki),
               self.em.scalar(0.0 if kw.is_float else _prop(op, "weight_zp"), kw)]
        props = [("acc_type", _MLIR_TYPE[ko]), ("local_bound", "false"), ("stride", _ints(_prop(op, "stride")))]
        if op.name == "tosa.transpose_conv2d":
            props.append(("out_pad", _ints([-int(p) for p in _prop(op, "out_pad")])))
        else:
            props += [("pad", _ints(_prop(op, "pad"))), ("dilation", _ints(_prop(op, "dilation")))]
        operands = data + [self.operand(bias, op.name)] + zps
        outs = self.em.emit(op.name, operands, [_type_str(op.results[0], op.name)], props)
        self.bind(op, outs)

    def fully_connected(self, op: Operation) -> None:
        inp, weight, bias = op.operands
        (n, ic), ki = _ttype(inp, op.name)
        (oc, _), kw = _ttype(weight, op.name)
        ko = _kind(op.results[0], op.name)
        widen = ko is Kind.F32 and ki in (Kind.F16, Kind.BF16)
        if widen:
            x = self._widened(inp, op.name)[0]
            ki = kw = Kind.F32
        else:
            x = self.em.ref(inp)
        x4t = _tensor_str((n, 1, 1, ic), ki)
        (x4,) = self.em.emit("tosa.reshape", [(x, _tensor_str((n, ic), ki)), self.em.shape([n, 1, 1, ic])], [x4t])
        w4t = _tensor_str((oc, 1, 1, ic), kw)
        owner = weight.owner
        if isinstance(owner, Operation) and owner.name == "tosa.const":
            values = owner.properties["values"]
            assert isinstance(values, DenseIntOrFPElementsAttr)
            w4, _ = self.em.const(np.asarray(to_numpy(values)), kw, (oc, 1, 1, ic))
        else:
            src = self._widened(weight, op.name) if widen else self.operand(weight, op.name)
            (w4,) = self.em.emit("tosa.reshape", [src, self.em.shape([oc, 1, 1, ic])], [w4t])
        zps = [self.em.scalar(0.0 if ki.is_float else _prop(op, "input_zp"), ki),
               self.em.scalar(0.0 if kw.is_float else _prop(op, "weight_zp"), kw)]
        y4t = _tensor_str((n, 1, 1, oc), ko)
        (y4,) = self.em.emit("tosa.conv2d", [(x4, x4t), (w4, w4t), self.operand(bias, op.name)] + zps, [y4t], [
            ("acc_type", _MLIR_TYPE[ko]), ("local_bound", "false"), ("stride", _ints([1, 1])),
            ("pad", _ints([0, 0, 0, 0])), ("dilation", _ints([1, 1]))])
        outs = self.em.emit("tosa.reshape", [(y4, y4t), self.em.shape([n, oc])], [_type_str(op.results[0], op.name)])
        self.bind(op, outs)

    def avg_pool(self, op: Operation) -> None:
        ki, ko = _kind(op.operands[0], op.name), _kind(op.results[0], op.name)
        acc = Kind.I32 if not ki.is_float else (Kind.F16 if ki is Kind.F16 else Kind.F32)
        zero = 0.0 if ki.is_float else None
        zps = [self.em.scalar(zero if zero is not None else _prop(op, "input_zp"), ki),
               self.em.scalar(zero if zero is not None else _prop(op, "output_zp"), ko)]
        self.simple(op, extra=zps, props=[("acc_type", _MLIR_TYPE[acc]), ("kernel", _ints(_prop(op, "kernel"))),
                                          ("stride", _ints(_prop(op, "stride"))), ("pad", _ints(_prop(op, "pad")))])

    def max_pool(self, op: Operation) -> None:
        self.simple(op, props=[("kernel", _ints(_prop(op, "kernel"))), ("stride", _ints(_prop(op, "stride"))),
                               ("pad", _ints(_prop(op, "pad"))), ("nan_mode", _PROPAGATE)])

    def matmul(self, op: Operation) -> None:
        ka, kb = _kind(op.operands[0], op.name), _kind(op.operands[1], op.name)
        zps = [self.em.scalar(0.0 if ka.is_float else _prop(op, "A_zp"), ka),
               self.em.scalar(0.0 if kb.is_float else _prop(op, "B_zp"), kb)]
        self.simple(op, extra=zps)

    def rescale(self, op: Operation) -> None:
        ki, ko = _kind(op.operands[0], op.name), _kind(op.results[0], op.name)
        scale32 = bool(_prop(op, "scale32"))
        mult = np.array([int(v) for v in _prop(op, "multiplier")])
        shift = np.array([int(v) for v in _prop(op, "shift")])
        extra = [self.em.const(mult, Kind.I32 if scale32 else Kind.I16), self.em.const(shift, Kind.I8),
                 self.em.scalar(_prop(op, "input_zp"), ki), self.em.scalar(_prop(op, "output_zp"), ko)]
        rounding = "DOUBLE_ROUND" if bool(_prop(op, "double_round")) else "SINGLE_ROUND"
        self.simple(op, extra=extra, props=[
            ("scale32", _bool(scale32)), ("rounding_mode", f"#tosa.rounding_mode<{rounding}>"),
            ("per_channel", _bool(_prop(op, "per_channel"))),
            ("input_unsigned", _bool(ki in _SIGNED)), ("output_unsigned", _bool(ko in _SIGNED))])

    def resize(self, op: Operation) -> None:
        kind = _kind(op.operands[0], op.name)
        if kind.is_float:
            raise Tosa1ExportError("float RESIZE is not exported: 0.30 scales by float stride/offset, 1.x by "
                                   "integer ratios (not bit-identical)", op_name=op.name)
        ishape, oshape = _shape(op.operands[0], op.name), _shape(op.results[0], op.name)
        shift = int(_prop(op, "shift"))
        stride = [int(v) for v in _prop(op, "stride")]
        offset = [int(v) for v in _prop(op, "offset")]
        n = 1 << shift
        border = [(oshape[1 + i] - 1) * stride[i] - (ishape[1 + i] - 1) * n + offset[i] for i in range(2)]
        mode = str(getattr(_prop(op, "mode"), "value", _prop(op, "mode"))).upper()
        mode = "NEAREST_NEIGHBOR" if mode.startswith("NEAREST") else mode
        self.simple(op, extra=[self.em.shape([n, stride[0], n, stride[1]]), self.em.shape(offset),
                               self.em.shape(border)], props=[("mode", f"#tosa.resize_mode<{mode}>")])

    def fft(self, op: Operation) -> None:
        props = [("local_bound", "false")]
        if op.name == "tosa.fft2d":
            props.append(("inverse", _bool(_prop(op, "inverse"))))
            self.simple(op, props=props)
            return
        # RFFT2D: 0.30 outputs [N, H/2+1, W/2+1], 1.x [N, H, W/2+1]: compute the 1.x result, slice rows
        (n, h, w) = _shape(op.operands[0], op.name)
        full = _tensor_str((n, h, w // 2 + 1), Kind.F32)
        parts = self.em.emit(op.name, [self.operand(op.operands[0], op.name)], [full, full], props)
        outs = []
        for part, res in zip(parts, op.results):
            start, size = self.em.shape([0, 0, 0]), self.em.shape(list(_shape(res, op.name)))
            outs += self.em.emit("tosa.slice", [(part, full), start, size], [_type_str(res, op.name)])
        self.bind(op, outs)


_PLAIN = {
    "tosa.add", "tosa.sub", "tosa.bitwise_and", "tosa.bitwise_or", "tosa.bitwise_xor", "tosa.intdiv",
    "tosa.logical_and", "tosa.logical_left_shift", "tosa.logical_right_shift", "tosa.logical_or",
    "tosa.logical_xor", "tosa.pow", "tosa.abs", "tosa.bitwise_not", "tosa.ceil", "tosa.clz", "tosa.exp",
    "tosa.floor", "tosa.log", "tosa.logical_not", "tosa.reciprocal", "tosa.rsqrt", "tosa.sigmoid", "tosa.tanh",
    "tosa.select", "tosa.equal", "tosa.greater", "tosa.greater_equal", "tosa.identity", "tosa.gather",
    "tosa.scatter", "tosa.table", "tosa.cast",
}

_HANDLERS: dict[str, Callable[[_Exporter, Operation], None]] = {
    "tosa.const": _Exporter.const,
    "tosa.reduce_all": _Exporter.axis,
    "tosa.reduce_any": _Exporter.axis,
    "tosa.reduce_product": _Exporter.axis,
    "tosa.reduce_sum": _Exporter.axis,
    "tosa.reduce_max": lambda ex, op: ex.axis(op, _PROPAGATE),
    "tosa.reduce_min": lambda ex, op: ex.axis(op, _PROPAGATE),
    "tosa.reverse": _Exporter.axis,
    "tosa.argmax": _Exporter.argmax,
    "tosa.maximum": _Exporter.nan,
    "tosa.minimum": _Exporter.nan,
    "tosa.arithmetic_right_shift": _Exporter.ars,
    "tosa.mul": _Exporter.mul,
    "tosa.negate": _Exporter.negate,
    "tosa.clamp": _Exporter.clamp,
    "tosa.concat": _Exporter.concat,
    "tosa.pad": _Exporter.pad,
    "tosa.reshape": _Exporter.reshape,
    "tosa.slice": _Exporter.slice,
    "tosa.tile": _Exporter.tile,
    "tosa.transpose": _Exporter.transpose,
    "tosa.conv2d": _Exporter.conv,
    "tosa.conv3d": _Exporter.conv,
    "tosa.depthwise_conv2d": _Exporter.conv,
    "tosa.transpose_conv2d": _Exporter.conv,
    "tosa.fully_connected": _Exporter.fully_connected,
    "tosa.avg_pool2d": _Exporter.avg_pool,
    "tosa.max_pool2d": _Exporter.max_pool,
    "tosa.matmul": _Exporter.matmul,
    "tosa.rescale": _Exporter.rescale,
    "tosa.resize": _Exporter.resize,
    "tosa.fft2d": _Exporter.fft,
    "tosa.rfft2d": _Exporter.fft,
}
for _n in _PLAIN:
    _HANDLERS[_n] = _Exporter.simple

_NOT_EXPORTED = {
    "tosa.cond_if": "control flow (regions) is not exported",
    "tosa.while_loop": "control flow (regions) is not exported",
    "tosa.yield": "control flow (regions) is not exported",
    "tosa.custom": "CUSTOM ops are not exported (no portable 1.x meaning)",
}

EXPORTED_OPS: frozenset[str] = frozenset(_HANDLERS)
"""The 0.30 ops ``export_tosa1_mlir`` translates."""


# ------------------------------------------------------------------------------------------------
# entry points


def _entry(module: ModuleOp) -> FuncOp:
    funcs = [op for op in module.ops if isinstance(op, FuncOp)]
    if len(funcs) == 1:
        return funcs[0]
    for f in funcs:
        if f.sym_name.data == "main":
            return f
    raise Tosa1ExportError(f"the module has {len(funcs)} functions and none is @main")


def _dict_name(attrs: ArrayAttr | None, i: int) -> str | None:
    if attrs is None or i >= len(attrs.data):
        return None
    d = attrs.data[i]
    if isinstance(d, DictionaryAttr):
        s = d.data.get(NAME_ATTR)
        if isinstance(s, StringAttr):
            return s.data
    return None


def _io_names(func: FuncOp) -> tuple[list[str], list[str]]:
    ins = []
    for i, arg in enumerate(func.body.block.args):
        ins.append(_dict_name(func.arg_attrs, i) or arg.name_hint or f"arg{i}")
    n_out = len(func.function_type.outputs.data)
    outs = [_dict_name(func.res_attrs, i) or f"output{i}" for i in range(n_out)]
    return ins, outs


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def export_tosa1_mlir(module: ModuleOp) -> str:
    """The entry function of ``module`` (TOSA 0.30) as TOSA 1.x MLIR text in the generic op form.

    Raises ``Tosa1ExportError`` (an ``NnkilnError``) naming the first op that has no 1.x translation.
    The module should have been verified (``module.verify()``); the exporter trusts its types.
    """
    func = _entry(module)
    if len(func.body.blocks) != 1:
        raise Tosa1ExportError("the entry function must have exactly one block", op_name="func.func")
    block = func.body.block
    em = _Emitter()
    ex = _Exporter(em)
    in_names, out_names = _io_names(func)
    arg_decls = []
    arg_types = []
    for i, arg in enumerate(block.args):
        name = f"%arg{i}"
        em.names[arg] = name
        t = _type_str(arg, "func.func")
        arg_types.append(t)
        arg_decls.append(f"{name}: {t}")
    returned: list[SSAValue] = []
    for op in block.ops:
        if op.name in ("func.return", "tosa.yield") and op is block.last_op:
            returned = list(op.operands)
            break
        if op.name in _NOT_EXPORTED:
            raise Tosa1ExportError(_NOT_EXPORTED[op.name], op_name=op.name)
        handler = _HANDLERS.get(op.name)
        if handler is None:
            raise Tosa1ExportError("no TOSA 1.x translation for this op", op_name=op.name)
        if op.regions and any(r.blocks for r in op.regions):
            raise Tosa1ExportError("ops with regions are not exported", op_name=op.name)
        handler(ex, op)
    res_types = [_type_str(v, "func.return") for v in returned]
    ret_operands = ", ".join(em.ref(v) for v in returned)
    em.lines.append(f"\"func.return\"({ret_operands}) : ({', '.join(res_types)}) -> ()")

    arg_attrs = ", ".join("{tosa.tensor_name = " + _quote(n) + "}" for n in in_names)
    res_attrs = ", ".join("{tosa.tensor_name = " + _quote(n) + "}" for n in out_names)
    ftype = f"({', '.join(arg_types)}) -> " + (res_types[0] if len(res_types) == 1 else f"({', '.join(res_types)})")
    sym = func.sym_name.data
    out = ['"builtin.module"() ({',
           f'  "func.func"() <{{arg_attrs = [{arg_attrs}], function_type = {ftype}, '
           f'res_attrs = [{res_attrs}], sym_name = {_quote(sym)}}}> ({{',
           f"  ^bb0({', '.join(arg_decls)}):"]
    out += ["    " + line for line in em.lines]
    out += ["  }) : () -> ()", "}) : () -> ()", ""]
    return "\n".join(out)


def export_main(argv: Sequence[str] | None = None) -> int:
    """``nnkiln export-tosa1 FILE.mlir [-o OUT.mlir]``: parse, verify and write TOSA 1.x MLIR.

    Writes to stdout without ``-o`` (or with ``-o -``). Returns 0; errors are raised as
    ``NnkilnError`` subclasses (``InputError`` unreadable/unparsable input, ``VerifyError`` invalid IR,
    ``Tosa1ExportError`` an op without a 1.x translation) for the command line to report.
    """
    from nnkiln.ir.text import parse_module
    from nnkiln.ir.verify import verify_module

    ap = argparse.ArgumentParser(prog="nnkiln export-tosa1",
                                 description="Write a TOSA 0.30 .mlir file as TOSA 1.x MLIR (generic form) for "
                                             "tosa-opt / the TOSA reference model / IREE.")
    ap.add_argument("file", help="an .mlir file (tosa 0.30 dialect), or - for stdin")
    ap.add_argument("-o", "--output", default=None, help="output .mlir file (default: stdout)")
    args = ap.parse_args(list(argv) if argv is not None else None)
    if args.file == "-":
        text = sys.stdin.read()
    else:
        try:
            with open(args.file, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError) as err:
            raise InputError(f"{args.file}: cannot read: {err}") from None
    module = parse_module(text, filename=args.file)
    verify_module(module)
    result = export_tosa1_mlir(module)
    if args.output in (None, "-"):
        sys.stdout.write(result)
    else:
        try:
            with open(args.output, "w", encoding="utf-8") as f:
                f.write(result)
        except OSError as err:
            raise InputError(f"{args.output}: cannot write: {err}") from None
    return 0


__all__ = ["EXPORTED_OPS", "Tosa1ExportError", "export_main", "export_tosa1_mlir"]
