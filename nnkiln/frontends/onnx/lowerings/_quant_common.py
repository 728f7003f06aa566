"""Shared types and helpers of the quantization lowerings (private module), and the family's conventions.

The family: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearConv, QLinearMatMul,
ConvInteger, MatMulInteger (``quant_ops``, integer cores in ``_quant_kernels``), and the QDQ fusion that
runs quantized models as integer TOSA (``quant_qdq_fusion``).

Integer arithmetic follows TOSA 0.30: convolutions and matmuls take int8 operands with zero points and
accumulate in int32 (CONV2D §2.3.3, MATMUL §2.3.8, FULLY_CONNECTED §2.3.7); requantization is one
RESCALE (§2.13.2) whose (multiplier, shift) come from ``compute_scale_32`` (single rounding, round half
up; ONNX/onnxruntime round the real product half to even, so results can differ by 1 LSB at exact
halves). Per-channel scales use ``per_channel`` RESCALE along the last (channels-last) axis.

uint8: TOSA 0.30 allows uint8 only in RESCALE, so a uint8 tensor ``x`` with zero point ``z`` is used as
the int8 tensor ``x - 128`` with zero point ``z - 128`` (RESCALE u8→i8, exact), and uint8 results are
produced in int8 and shifted back by a final RESCALE i8→u8.

QuantizeLinear (float → int): ``y = saturate(round_half_even(x / scale) + zp)``; lowered as MUL by the
reciprocal of the scale (TOSA 0.30 has no float division: a 1-ulp difference of the quotient can move
an exact half), CLAMP to a safe range, CAST f32→i32 (rounds half to even, spec decision of CAST),
ADD zero point, CLAMP to the output range, and a narrowing CAST (unsigned outputs via RESCALE).
DequantizeLinear (int → float): widen to int32, SUB zero point, CAST to float, MUL scale — exactly ONNX's
``(x - zp) * scale`` in fp32.

Run-time scales / zero points (allowed by ONNX, e.g. in its node tests) take a float path that follows
ONNX's reference formulas: ``x · RECIPROCAL(scale)`` for QuantizeLinear, and for QLinearMatMul /
QLinearConv / MatMulInteger / ConvInteger an exact integer accumulator (int16 operands ``x - zp``,
MATMUL int16 → int48 or CONV2D int16×int8 → int48, RESCALE to int32) followed by
``rint(acc · scale product) + zp`` in float. A rank-0 uint8/uint16 run-time value cannot be read at all
in TOSA 0.30 (RESCALE takes ranks 1..4, RESHAPE has no unsigned types): such parameters must be constants.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind, element_type
from nnkiln.frontends.common.arith import kind_of_value, shape_of
from nnkiln.frontends.common.quant import AffineParams
from nnkiln.frontends.onnx.importer import NodeContext, TensorValue
from nnkiln.frontends.onnx.lowerings._integers import rescale, widen_i32

Result = list[Any]

I8, I16, I32, U8, U16, F32, F16, BF16 = (Kind.I8, Kind.I16, Kind.I32, Kind.U8, Kind.U16, Kind.F32, Kind.F16,
                                         Kind.BF16)
NP_DTYPES = {I8: np.int8, I16: np.int16, I32: np.int32, Kind.I48: np.int64, U8: np.uint8, U16: np.uint16, F32: np.float32,
       F16: np.float16}
RANGE = {I8: (-128, 127), U8: (0, 255), I16: (-32768, 32767), U16: (0, 65535), I32: (-(1 << 31), (1 << 31) - 1)}
#: unsigned kind → (signed kind of the same width, offset): signed = unsigned - offset
SIGNED = {U8: (I8, 128), U16: (I16, 32768), I8: (I8, 0), I16: (I16, 0), I32: (I32, 0)}
Q_KINDS = (I8, U8, I16, U16)
DQ_KINDS = (I8, U8, I16, U16, I32)
ONNX_ELEM = {2: U8, 3: I8, 4: U16, 5: I16, 6: I32}
UNSUPPORTED_ELEM = {17: "float8e4m3fn", 18: "float8e4m3fnuz", 19: "float8e5m2", 20: "float8e5m2fnuz",
                     21: "uint4", 22: "int4", 23: "float4e2m1", 25: "uint2", 26: "int2", 24: "float8e8m0"}


# ------------------------------------------------------------------------------------------------
# small helpers


def emit(ctx: NodeContext, cls: type, operands: Sequence[Any], kind: Kind, **attrs: Any) -> SSAValue:
    return ctx.g.value(cls, operands, element_type(kind), **attrs)


def const(ctx: NodeContext, arr: np.ndarray, kind: Kind) -> SSAValue:
    from xdsl.dialects.builtin import TensorType

    arr = np.asarray(arr)
    a = np.ascontiguousarray(arr.astype(NP_DTYPES[kind])).reshape(arr.shape)  # (ascontiguousarray makes 0-d 1-d)
    return ctx.g.const(a, TensorType(element_type(kind), a.shape))


def scalar_const(ctx: NodeContext, value: float | int, kind: Kind, rank: int) -> SSAValue:
    return const(ctx, np.full((1,) * rank, value), kind)


def to_signed(ctx: NodeContext, tv: TensorValue, zp: int) -> tuple[SSAValue, int]:
    """An 8/16/32-bit integer value as the signed kind of its width: (value, zero point)."""
    signed, off = SIGNED[tv.kind]
    if tv.is_const:
        arr = np.asarray(tv.const).astype(np.int64) - off
        return const(ctx, arr, signed), int(zp) - off
    v = ctx.importer.materialize(tv)
    if off:
        v = rescale(ctx, v, signed, input_zp=off)
    return v, int(zp) - off


def narrow_i32(ctx: NodeContext, v: SSAValue, kind: Kind) -> SSAValue:
    """An int32 value already within ``kind``'s range converted to ``kind`` (exact)."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import SubOp
    from nnkiln.dialects.tosa.ops_type_conversion import CastOp

    if kind is I32:
        return v
    if kind in (I8, I16):
        return emit(ctx, CastOp, [v], kind)
    signed, off = SIGNED[kind]
    c = emit(ctx, SubOp, [v, scalar_const(ctx, off, I32, len(shape_of(v)))], I32)
    return rescale(ctx, emit(ctx, CastOp, [c], signed), kind, output_zp=off)


def requantize(ctx: NodeContext, x: SSAValue, input_zp: int, scale: float | Sequence[float], out_kind: Kind,
               out_zp: int, per_channel: bool = False, lo: int | None = None) -> SSAValue:
    """RESCALE int8/int16/int32 ``x`` (zero point ``input_zp``) by ``scale`` to ``out_kind`` with zero point
    ``out_zp``, optionally clamped below at ``lo`` (a quantized value of ``out_kind``; fused ReLU)."""
    from nnkiln.dialects.tosa.ops_activation import ClampOp

    signed, off = SIGNED[out_kind]
    if kind_of_value(x) is U8:
        x, input_zp = rescale(ctx, x, I8, input_zp=128), input_zp - 128
    y = rescale(ctx, x, signed, input_zp=input_zp if kind_of_value(x) in (I8, U8) else 0, output_zp=out_zp - off,
                scale=scale, per_channel=per_channel) if kind_of_value(x) in (I8,) or input_zp == 0 else None
    if y is None:  # int16/int32 inputs need a zero input_zp: subtract it in int32 first
        from nnkiln.dialects.tosa.ops_elementwise_binary import SubOp

        x32 = widen_i32(ctx, x)
        x32 = emit(ctx, SubOp, [x32, scalar_const(ctx, input_zp, I32, len(shape_of(x32)))], I32)
        y = rescale(ctx, x32, signed, output_zp=out_zp - off, scale=scale, per_channel=per_channel)
    if lo is not None and lo - off > RANGE[signed][0]:
        y = emit(ctx, ClampOp, [y], signed, min_val=int(lo - off), max_val=int(RANGE[signed][1]))
    if off:
        y = rescale(ctx, y, out_kind, output_zp=off)
    return y


def scale_vec(ctx: NodeContext, arr: np.ndarray, what: str) -> np.ndarray:
    a = np.asarray(arr, dtype=np.float64).reshape(-1)
    if not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise ctx.error(f"{what} {a.tolist()[:8]} must be positive and finite; other scales are not supported")
    return a


def axis_shape(rank: int, axis: int, n: int) -> tuple[int, ...]:
    s = [1] * rank
    s[axis] = n
    return tuple(s)


# ------------------------------------------------------------------------------------------------
# DequantizeLinear / QuantizeLinear


@dataclasses.dataclass
class QuantInfo(AffineParams):
    """How a float value is represented by an integer tensor: ``real = (q - zp) * scale``; ``scale`` and
    ``zp`` are 1-D arrays (length 1 for per-tensor, else along ``axis``)."""

    q: TensorValue
    scale: np.ndarray
    zp: np.ndarray
    axis: int
    i8_view: tuple[SSAValue, int] | None = dataclasses.field(default=None, compare=False, repr=False)
    """``q`` as int8 with its zero point, once computed (``act``)."""


class LazyValue(TensorValue):
    """A run-time value whose IR is emitted by ``emit`` on first use (``ssa``), so that values only a
    fused integer path needs never reach the IR. ``signed_view``, when set, is ``(value, offset)``: the same
    tensor in the signed kind of its width, ``value = self - offset`` (uint8 results are kept in int8)."""

    def __init__(self, shape: tuple[int, ...], kind: Kind, emit: Callable[[], SSAValue],
                 const: np.ndarray | None = None):
        self._ssa_value: SSAValue | None = None
        self._emit_fn = emit
        self.signed_view: tuple[SSAValue, int] | None = None
        super().__init__(shape, kind, None, const)

    @property  # type: ignore[override]
    def ssa(self) -> SSAValue | None:
        if self._ssa_value is None and self.const is None:
            self._ssa_value = self._emit_fn()
        return self._ssa_value

    @ssa.setter
    def ssa(self, value: SSAValue | None) -> None:
        if value is not None:
            self._ssa_value = value


class DequantizedValue(LazyValue):
    """A float value known as a quantized tensor (``info``); its float IR value is emitted on demand."""

    def __init__(self, shape: tuple[int, ...], kind: Kind, info: QuantInfo, emit: Callable[[], SSAValue],
                 const: np.ndarray | None = None):
        self.info = info
        self.fused: tuple[TensorValue, float, int, Kind] | None = None
        """Set on the output of a fused node: (integer tensor, scale, zero point, kind)."""
        super().__init__(shape, kind, emit, const)


def signed_tensor(ctx: NodeContext, shape: tuple[int, ...], kind: Kind, signed: SSAValue) -> TensorValue:
    """A ``kind`` value held as ``signed`` (its signed-kind view, offset 128 / 32768 for unsigned kinds);
    the unsigned IR value is emitted only if something uses it."""
    _, off = SIGNED[kind]
    if not off:
        tv = LazyValue(shape, kind, lambda: signed)
    else:
        tv = LazyValue(shape, kind, lambda: rescale(ctx, signed, kind, output_zp=off))
    tv.signed_view = (signed, off)
    return tv


def zp_array(ctx: NodeContext, idx: int, scale: np.ndarray, default_kind: Kind) -> tuple[np.ndarray, Kind]:
    """Zero point input ``idx`` (or zeros of ``default_kind``) and the quantized kind it implies."""
    if ctx.has_input(idx):
        zv = ctx.input(idx)
        zp = np.asarray(ctx.const(idx, "zero point"))
        kind = elem_kind_of_array(ctx, zp, zv.kind)
        return zp.astype(np.int64).reshape(-1) if zp.ndim else zp.astype(np.int64).reshape(1), kind
    return np.zeros(1, np.int64), default_kind


def elem_kind_of_array(ctx: NodeContext, arr: np.ndarray, kind: Kind) -> Kind:
    name = np.dtype(arr.dtype).name
    if name in ("int8", "uint8", "int16", "uint16", "int32"):
        return {"int8": I8, "uint8": U8, "int16": I16, "uint16": U16, "int32": I32}[name]
    raise ctx.error(f"quantized type {name} is not supported (TOSA 0.30 has no float8/int4 arithmetic)")


def check_block(ctx: NodeContext) -> None:
    if int(ctx.attr("block_size", 0) or 0) > 0:
        raise ctx.error("blocked quantization (block_size > 0) is not supported")


def per_axis(ctx: NodeContext, rank: int, scale: np.ndarray, zp: np.ndarray) -> int:
    """The normalised ``axis`` attribute (default 1) for per-axis parameters; 0 for per-tensor ones."""
    if scale.size == 1 and zp.size == 1:
        return 0
    axis = int(ctx.attr("axis", 1))
    if axis < 0:
        axis += rank
    if not 0 <= axis < rank:
        raise ctx.error(f"axis {ctx.attr('axis', 1)} is out of range for rank {rank}")
    return axis


def dequantize_ir(ctx: NodeContext, q: SSAValue, scale: np.ndarray, zp: np.ndarray, axis: int,
                  out_kind: Kind) -> SSAValue:
    """``(q - zp) * scale`` in ``out_kind`` for a run-time integer ``q`` (per-tensor or along ``axis``)."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import MulOp, SubOp
    from nnkiln.dialects.tosa.ops_type_conversion import CastOp

    shape = shape_of(q)
    rank = len(shape)
    x = widen_i32(ctx, q)
    zshape = axis_shape(rank, axis, zp.size) if zp.size > 1 else (1,) * rank
    if np.any(zp != 0):
        x = emit(ctx, SubOp, [x, const(ctx, zp.reshape(zshape), I32)], I32)
    f = emit(ctx, CastOp, [x], out_kind)
    sshape = axis_shape(rank, axis, scale.size) if scale.size > 1 else (1,) * rank
    return emit(ctx, MulOp, [f, const(ctx, scale.astype(np.float32).reshape(sshape), out_kind)], out_kind)


def q_out_kind(ctx: NodeContext) -> tuple[Kind, np.ndarray]:
    """(output kind, zero points) of QuantizeLinear / the output side of QLinear ops."""
    scale = np.asarray(ctx.const(1, "scale")).reshape(-1)
    if ctx.has_input(2):
        zp, kind = zp_array(ctx, 2, scale, U8)
    else:
        od = int(ctx.attr("output_dtype", 0) or 0)
        if od in UNSUPPORTED_ELEM:
            raise ctx.error(f"output type {UNSUPPORTED_ELEM[od]} is not supported")
        kind = ONNX_ELEM.get(od, U8) if od else U8
        zp = np.zeros(1, np.int64)
    if kind not in Q_KINDS:
        raise ctx.error(f"{kind.value} output is not supported")
    return kind, zp


def quantize_ir(ctx: NodeContext, x: SSAValue, scale: np.ndarray, zp: np.ndarray, axis: int, kind: Kind
                ) -> TensorValue:
    """``saturate(round_half_even(x / scale) + zp)`` as ``kind`` (see the module docstring)."""
    from nnkiln.dialects.tosa.ops_activation import ClampOp
    from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp, MulOp
    from nnkiln.dialects.tosa.ops_type_conversion import CastOp

    shape = shape_of(x)
    rank = len(shape)
    fk = kind_of_value(x)
    sshape = axis_shape(rank, axis, scale.size) if scale.size > 1 else (1,) * rank
    inv = (1.0 / scale.astype(np.float32).astype(np.float64)).astype(np.float32)
    v = emit(ctx, MulOp, [x, const(ctx, inv.reshape(sshape), fk)], fk)
    big = float(1 << 20) if fk is F32 else 60000.0
    v = emit(ctx, ClampOp, [v], fk, min_val=-big, max_val=big)
    q = emit(ctx, CastOp, [v], I32)
    if np.any(zp != 0):
        zshape = axis_shape(rank, axis, zp.size) if zp.size > 1 else (1,) * rank
        q = emit(ctx, AddOp, [q, const(ctx, zp.reshape(zshape), I32)], I32)
    lo, hi = RANGE[kind]
    q = clamp_i32(ctx, q, lo, hi)
    signed, off = SIGNED[kind]
    if off:
        from nnkiln.dialects.tosa.ops_elementwise_binary import SubOp

        q = emit(ctx, SubOp, [q, scalar_const(ctx, off, I32, rank)], I32)
    return signed_tensor(ctx, shape, kind, emit(ctx, CastOp, [q], signed))


def clamp_i32(ctx: NodeContext, q: SSAValue, lo: int, hi: int) -> SSAValue:
    """CLAMP has no int32 mode in TOSA 0.30: MAXIMUM / MINIMUM with scalar constants."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import MaximumOp, MinimumOp

    rank = len(shape_of(q))
    q = emit(ctx, MaximumOp, [q, scalar_const(ctx, lo, I32, rank)], I32)
    return emit(ctx, MinimumOp, [q, scalar_const(ctx, hi, I32, rank)], I32)


def zp_input(ctx: NodeContext, idx: int) -> np.ndarray:
    if not ctx.has_input(idx):
        return np.zeros(1, np.int64)
    return np.asarray(ctx.const(idx, "zero point")).astype(np.int64).reshape(-1)


def out_kind_of_zp(ctx: NodeContext, idx: int) -> Kind:
    if not ctx.has_input(idx):
        return U8
    v = ctx.input(idx)
    return elem_kind_of_array(ctx, np.asarray(v.const), v.kind) if v.is_const else v.kind


# ------------------------------------------------------------------------------------------------
# shared by QuantizeLinear and the QDQ fusion


@dataclasses.dataclass
class Target:
    """The quantization of a node's output by its QuantizeLinear consumers."""

    scale: float
    zp: int
    kind: Kind
    relu: bool = False  # a Relu sits between the node and its QuantizeLinear consumers (clamp at real 0)


def act(ctx: NodeContext, tv: TensorValue | None) -> tuple[SSAValue, int, float] | None:
    """A per-tensor int8/uint8 DequantizeLinear result as (int8 value, zero point, scale)."""
    if not isinstance(tv, DequantizedValue):
        return None
    info = tv.info
    if not info.per_tensor:
        return None
    if info.q.is_const:
        if np.asarray(info.q.const).dtype.name not in ("int8", "uint8"):
            return None
    elif info.q.kind not in (I8, U8):
        return None
    view = info.i8_view
    sv = getattr(info.q, "signed_view", None)
    if view is None and sv is not None:
        view = (sv[0], info.z - sv[1])
    if view is None:
        v, z = to_signed(ctx, info.q, info.z)
        view = (v, z)
        info.i8_view = view
    return view[0], view[1], info.s


def as_target(ctx: NodeContext, y_signed: SSAValue, t: Target) -> TensorValue:
    """A result computed in the signed kind with zero point ``t.zp - offset``, as a ``t.kind`` value."""
    return signed_tensor(ctx, shape_of(y_signed), t.kind, y_signed)


def requant_signed(ctx: NodeContext, x: SSAValue, xz: int, scale: float | Sequence[float], t: Target,
                    per_channel: bool = False, lo: float | None = None, hi: float | None = None) -> SSAValue:
    """RESCALE to the signed kind of ``t`` (zero point shifted), clamped to real bounds ``lo``/``hi``."""
    from nnkiln.dialects.tosa.ops_activation import ClampOp

    signed, off = SIGNED[t.kind]
    zp = t.zp - off
    same = not per_channel and isinstance(scale, float) and abs(scale - 1.0) < 1e-9 and xz == zp and kind_of_value(x) is signed
    y = x if same else requantize(ctx, x, xz, scale, signed, zp, per_channel=per_channel)
    if lo is None and t.relu:
        lo = 0.0
    rlo, rhi = RANGE[signed]
    qlo = rlo if lo is None else max(rlo, min(rhi, zp + int(np.rint(lo / t.scale))))
    qhi = rhi if hi is None else min(rhi, max(rlo, zp + int(np.rint(hi / t.scale))))
    if qlo > rlo or qhi < rhi:
        y = emit(ctx, ClampOp, [y], signed, min_val=int(qlo), max_val=int(qhi))
    return y


def is_dynamic(ctx: NodeContext, *idx: int) -> bool:
    """Whether any of the inputs ``idx`` is a run-time value. A rank-0 unsigned run-time parameter cannot
    even be read (RESCALE takes ranks 1..4, RESHAPE has no unsigned types): it must be a constant, or computed in
    int32 (``TensorValue.wide``, which ``param`` reads)."""
    for i in idx:
        tv = ctx.input(i) if ctx.has_input(i) else None
        if tv is not None and not tv.is_const and tv.kind in (U8, U16) and tv.rank == 0 and tv.wide is None:
            ctx.const(i, "a rank-0 unsigned value, which TOSA 0.30 cannot convert at run time")
    return any(ctx.has_input(i) and not ctx.input(i).is_const for i in idx)


def zp_kind(ctx: NodeContext, idx: int, default: Kind) -> Kind:
    if not ctx.has_input(idx):
        return default
    tv = ctx.input(idx)
    return elem_kind_of_array(ctx, np.asarray(tv.const), tv.kind) if tv.is_const else tv.kind
