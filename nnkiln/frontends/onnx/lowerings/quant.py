"""Quantization family: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearConv,
QLinearMatMul, ConvInteger, MatMulInteger, and the QDQ fusion that runs quantized models as integer TOSA.

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

QDQ fusion: a DequantizeLinear returns a ``DequantizedValue`` (a ``TensorValue`` that remembers the
integer tensor, scale and zero point, and emits its float path only if some lowering asks for its IR
value). The lowerings of Conv, MatMul, Gemm, Add, Relu, Clip, MaxPool, AveragePool, GlobalAveragePool,
Concat and the data-movement ops (Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Identity) are wrapped:
when all float inputs of the node are DequantizeLinear results and the node's only consumers are
QuantizeLinear nodes with one constant per-tensor scale and zero point, the node is emitted in integer
arithmetic and the QuantizeLinear returns that integer tensor; otherwise the original float lowering
runs (and the DequantizeLinear float path is emitted on demand). ``node → Relu → QuantizeLinear`` fuses
the ReLU as a clamp at the quantized zero. A DequantizeLinear → QuantizeLinear pair is one RESCALE.
uint8 results of fused ops are kept as int8 (``LazyValue.signed_view``) between fused ops.

Run-time scales / zero points (allowed by ONNX, e.g. in its node tests) take a float path that follows
ONNX's reference formulas: ``x · RECIPROCAL(scale)`` for QuantizeLinear, and for QLinearMatMul /
QLinearConv / MatMulInteger / ConvInteger an exact integer accumulator (int16 operands ``x - zp``,
MATMUL int16 → int48 or CONV2D int16×int8 → int48, RESCALE to int32) followed by
``rint(acc · scale product) + zp`` in float. A rank-0 uint8/uint16 run-time value cannot be read at all
in TOSA 0.30 (RESCALE takes ranks 1..4, RESHAPE has no unsigned types): such parameters must be constants.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind, element_type, kind_of
from nnkiln.frontends.common.broadcast import reshape
from nnkiln.frontends.common.layout import transpose, transpose_const
from nnkiln.frontends.common.quant import compute_scale_32
from nnkiln.frontends.onnx.importer import NodeContext, TensorValue
from nnkiln.frontends.onnx.lowerings import LOWERINGS, lowering

Result = list[Any]

I8, I16, I32, U8, U16, F32, F16, BF16 = (Kind.I8, Kind.I16, Kind.I32, Kind.U8, Kind.U16, Kind.F32, Kind.F16,
                                         Kind.BF16)
_NP = {I8: np.int8, I16: np.int16, I32: np.int32, Kind.I48: np.int64, U8: np.uint8, U16: np.uint16, F32: np.float32,
       F16: np.float16}
_RANGE = {I8: (-128, 127), U8: (0, 255), I16: (-32768, 32767), U16: (0, 65535), I32: (-(1 << 31), (1 << 31) - 1)}
#: unsigned kind → (signed kind of the same width, offset): signed = unsigned - offset
_SIGNED = {U8: (I8, 128), U16: (I16, 32768), I8: (I8, 0), I16: (I16, 0), I32: (I32, 0)}
_Q_KINDS = (I8, U8, I16, U16)
_DQ_KINDS = (I8, U8, I16, U16, I32)
_ONNX_ELEM = {2: U8, 3: I8, 4: U16, 5: I16, 6: I32}
_UNSUPPORTED_ELEM = {17: "float8e4m3fn", 18: "float8e4m3fnuz", 19: "float8e5m2", 20: "float8e5m2fnuz",
                     21: "uint4", 22: "int4", 23: "float4e2m1", 25: "uint2", 26: "int2", 24: "float8e8m0"}


# ------------------------------------------------------------------------------------------------
# small helpers


def _shape(v: SSAValue) -> tuple[int, ...]:
    return tuple(v.type.get_shape())  # type: ignore[attr-defined]


def _kind(v: SSAValue) -> Kind:
    k = kind_of(v.type)
    assert k is not None
    return k


def _emit(ctx: NodeContext, cls: type, operands: Sequence[Any], kind: Kind, **attrs: Any) -> SSAValue:
    return ctx.g.value(cls, operands, element_type(kind), **attrs)


def _const(ctx: NodeContext, arr: np.ndarray, kind: Kind) -> SSAValue:
    from xdsl.dialects.builtin import TensorType

    a = np.ascontiguousarray(np.asarray(arr).astype(_NP[kind]))
    return ctx.g.const(a, TensorType(element_type(kind), a.shape))


def _scalar_const(ctx: NodeContext, value: float | int, kind: Kind, rank: int) -> SSAValue:
    return _const(ctx, np.full((1,) * rank, value), kind)


def rescale(ctx: NodeContext, x: SSAValue, out_kind: Kind, *, input_zp: int = 0, output_zp: int = 0,
            scale: float | Sequence[float] = 1.0, per_channel: bool = False) -> SSAValue:
    """RESCALE (spec §2.13.2) of ``x`` by a real ``scale`` (a list along the last axis if
    ``per_channel``), with (multiplier, shift) from ``compute_scale_32`` and single rounding. Ranks
    other than 1..4 are reshaped around the op (signed kinds only; RESHAPE has no unsigned types)."""
    from nnkiln.dialects.tosa.ops_type_conversion import RescaleOp

    scales = [float(s) for s in (scale if isinstance(scale, (list, tuple, np.ndarray)) else [scale])]
    if per_channel and len(set(scales)) == 1:
        per_channel, scales = False, scales[:1]
    scale32 = _kind(x) is not Kind.I48
    try:
        if scale32:
            pairs = [compute_scale_32(s) if s != 1.0 else (1 << 30, 30) for s in scales]
        else:
            from nnkiln.frontends.common.quant import compute_scale_16

            pairs = [compute_scale_16(s) if s != 1.0 else (1 << 14, 14) for s in scales]
    except ValueError as err:
        raise ctx.error(f"a requantization scale is not supported: {err}") from None
    shape = _shape(x)
    if 1 <= len(shape) <= 4:
        flat = shape
    elif per_channel:
        flat = (int(np.prod(shape[:-1], dtype=np.int64)), shape[-1]) if len(shape) > 1 else (1, 1)
    else:
        flat = (int(np.prod(shape, dtype=np.int64)),)
    if flat != shape and (_kind(x) in (U8, U16) or out_kind in (U8, U16)):
        raise ctx.error(f"unsigned tensors of rank {len(shape)} are not supported (RESCALE takes ranks 1..4 "
                        "and RESHAPE has no unsigned types)")
    xin = reshape(ctx.g, x, flat)
    y = _emit(ctx, RescaleOp, [xin], out_kind, input_zp=int(input_zp), output_zp=int(output_zp),
              multiplier=[m for m, _ in pairs], shift=[s for _, s in pairs], scale32=scale32, double_round=False,
              per_channel=per_channel)
    return reshape(ctx.g, y, shape)


def to_signed(ctx: NodeContext, tv: TensorValue, zp: int) -> tuple[SSAValue, int]:
    """An 8/16/32-bit integer value as the signed kind of its width: (value, zero point)."""
    signed, off = _SIGNED[tv.kind]
    if tv.is_const:
        arr = np.asarray(tv.const).astype(np.int64) - off
        return _const(ctx, arr, signed), int(zp) - off
    v = ctx.importer.materialize(tv)
    if off:
        v = rescale(ctx, v, signed, input_zp=off)
    return v, int(zp) - off


def widen_i32(ctx: NodeContext, v: SSAValue) -> SSAValue:
    """An integer IR value as int32, exactly."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp
    from nnkiln.dialects.tosa.ops_type_conversion import CastOp

    k = _kind(v)
    if k is I32:
        return v
    if k in (I8, I16):
        return _emit(ctx, CastOp, [v], I32)
    if k is U8:
        return _emit(ctx, CastOp, [rescale(ctx, v, I16)], I32)
    if k is U16:
        c = _emit(ctx, CastOp, [rescale(ctx, v, I16, input_zp=32768)], I32)
        return _emit(ctx, AddOp, [c, _scalar_const(ctx, 32768, I32, len(_shape(v)))], I32)
    raise ctx.error(f"{k.value} values are not supported here")


def narrow_i32(ctx: NodeContext, v: SSAValue, kind: Kind) -> SSAValue:
    """An int32 value already within ``kind``'s range converted to ``kind`` (exact)."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import SubOp
    from nnkiln.dialects.tosa.ops_type_conversion import CastOp

    if kind is I32:
        return v
    if kind in (I8, I16):
        return _emit(ctx, CastOp, [v], kind)
    signed, off = _SIGNED[kind]
    c = _emit(ctx, SubOp, [v, _scalar_const(ctx, off, I32, len(_shape(v)))], I32)
    return rescale(ctx, _emit(ctx, CastOp, [c], signed), kind, output_zp=off)


def requantize(ctx: NodeContext, x: SSAValue, input_zp: int, scale: float | Sequence[float], out_kind: Kind,
               out_zp: int, per_channel: bool = False, lo: int | None = None) -> SSAValue:
    """RESCALE int8/int16/int32 ``x`` (zero point ``input_zp``) by ``scale`` to ``out_kind`` with zero point
    ``out_zp``, optionally clamped below at ``lo`` (a quantized value of ``out_kind``; fused ReLU)."""
    from nnkiln.dialects.tosa.ops_activation import ClampOp

    signed, off = _SIGNED[out_kind]
    if _kind(x) is U8:
        x, input_zp = rescale(ctx, x, I8, input_zp=128), input_zp - 128
    y = rescale(ctx, x, signed, input_zp=input_zp if _kind(x) in (I8, U8) else 0, output_zp=out_zp - off,
                scale=scale, per_channel=per_channel) if _kind(x) in (I8,) or input_zp == 0 else None
    if y is None:  # int16/int32 inputs need a zero input_zp: subtract it in int32 first
        from nnkiln.dialects.tosa.ops_elementwise_binary import SubOp

        x32 = widen_i32(ctx, x)
        x32 = _emit(ctx, SubOp, [x32, _scalar_const(ctx, input_zp, I32, len(_shape(x32)))], I32)
        y = rescale(ctx, x32, signed, output_zp=out_zp - off, scale=scale, per_channel=per_channel)
    if lo is not None and lo - off > _RANGE[signed][0]:
        y = _emit(ctx, ClampOp, [y], signed, min_val=int(lo - off), max_val=int(_RANGE[signed][1]))
    if off:
        y = rescale(ctx, y, out_kind, output_zp=off)
    return y


def _scale_vec(ctx: NodeContext, arr: np.ndarray, what: str) -> np.ndarray:
    a = np.asarray(arr, dtype=np.float64).reshape(-1)
    if not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise ctx.error(f"{what} {a.tolist()[:8]} must be positive and finite; other scales are not supported")
    return a


def _axis_shape(rank: int, axis: int, n: int) -> tuple[int, ...]:
    s = [1] * rank
    s[axis] = n
    return tuple(s)


# ------------------------------------------------------------------------------------------------
# DequantizeLinear / QuantizeLinear


@dataclasses.dataclass
class QuantInfo:
    """How a float value is represented by an integer tensor: ``real = (q - zp) * scale``; ``scale`` and
    ``zp`` are 1-D arrays (length 1 for per-tensor, else along ``axis``)."""

    q: TensorValue
    scale: np.ndarray
    zp: np.ndarray
    axis: int

    @property
    def per_tensor(self) -> bool:
        return self.scale.size == 1 and self.zp.size == 1

    @property
    def s(self) -> float:
        return float(self.scale.reshape(-1)[0])

    @property
    def z(self) -> int:
        return int(self.zp.reshape(-1)[0])


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
        super().__init__(shape, kind, emit, const)


def signed_tensor(ctx: NodeContext, shape: tuple[int, ...], kind: Kind, signed: SSAValue) -> TensorValue:
    """A ``kind`` value held as ``signed`` (its signed-kind view, offset 128 / 32768 for unsigned kinds);
    the unsigned IR value is emitted only if something uses it."""
    _, off = _SIGNED[kind]
    if not off:
        tv = LazyValue(shape, kind, lambda: signed)
    else:
        tv = LazyValue(shape, kind, lambda: rescale(ctx, signed, kind, output_zp=off))
    tv.signed_view = (signed, off)
    return tv


def _zp_array(ctx: NodeContext, idx: int, scale: np.ndarray, default_kind: Kind) -> tuple[np.ndarray, Kind]:
    """Zero point input ``idx`` (or zeros of ``default_kind``) and the quantized kind it implies."""
    if ctx.has_input(idx):
        zv = ctx.input(idx)
        zp = np.asarray(ctx.const(idx, "zero point"))
        kind = _elem_kind_of_array(ctx, zp, zv.kind)
        return zp.astype(np.int64).reshape(-1) if zp.ndim else zp.astype(np.int64).reshape(1), kind
    return np.zeros(1, np.int64), default_kind


def _elem_kind_of_array(ctx: NodeContext, arr: np.ndarray, kind: Kind) -> Kind:
    name = np.dtype(arr.dtype).name
    if name in ("int8", "uint8", "int16", "uint16", "int32"):
        return {"int8": I8, "uint8": U8, "int16": I16, "uint16": U16, "int32": I32}[name]
    raise ctx.error(f"quantized type {name} is not supported (TOSA 0.30 has no float8/int4 arithmetic)")


def _check_block(ctx: NodeContext) -> None:
    if int(ctx.attr("block_size", 0) or 0) > 0:
        raise ctx.error("blocked quantization (block_size > 0) is not supported")


def _per_axis(ctx: NodeContext, rank: int, scale: np.ndarray, zp: np.ndarray) -> int:
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

    shape = _shape(q)
    rank = len(shape)
    x = widen_i32(ctx, q)
    zshape = _axis_shape(rank, axis, zp.size) if zp.size > 1 else (1,) * rank
    if np.any(zp != 0):
        x = _emit(ctx, SubOp, [x, _const(ctx, zp.reshape(zshape), I32)], I32)
    f = _emit(ctx, CastOp, [x], out_kind)
    sshape = _axis_shape(rank, axis, scale.size) if scale.size > 1 else (1,) * rank
    return _emit(ctx, MulOp, [f, _const(ctx, scale.astype(np.float32).reshape(sshape), out_kind)], out_kind)


@lowering("DequantizeLinear")
def DequantizeLinear(ctx: NodeContext) -> Result:
    """DequantizeLinear (opsets 10, 13, 19, 21, 23): ``y = (x - x_zero_point) * x_scale``.

    Per-tensor or per-axis (``axis``) scales and zero points, which must be constants; int8, uint8,
    int16, uint16 and int32 inputs; float8/int4 and ``block_size > 0`` are not supported. The float
    result is a ``DequantizedValue`` (see the module docstring); constants are dequantized at import."""
    _check_block(ctx)
    xv = ctx.input(0)
    if _dyn(ctx, 1, 2) and not xv.is_const:
        if xv.kind not in _DQ_KINDS:
            raise ctx.error(f"{xv.kind.value} input is not supported")
        return [dyn_dequantize(ctx)]
    if xv.is_const:
        kind = _elem_kind_of_array(ctx, np.asarray(xv.const), xv.kind)
    else:
        kind = xv.kind
    if kind not in _DQ_KINDS:
        raise ctx.error(f"{kind.value} input is not supported")
    sv = ctx.input(1)
    if sv.kind not in (F32, F16):
        raise ctx.error(f"a {sv.kind.value} scale is not supported")
    out_kind = sv.kind
    out_dtype = ctx.attr("output_dtype", 0)
    if out_dtype and out_dtype not in (1, 10):
        raise ctx.error(f"output_dtype {out_dtype} is not supported")
    if out_dtype:
        out_kind = F32 if out_dtype == 1 else F16
    scale_raw = np.asarray(ctx.const(1, "scale"))
    scale = scale_raw.astype(np.float64).reshape(-1)
    zp, zkind = _zp_array(ctx, 2, scale, kind)
    if scale.size > 1 and scale_raw.ndim != 1 or zp.size not in (1, scale.size):
        raise ctx.error(f"scale shape {list(scale_raw.shape)} / zero point size {zp.size} are not supported "
                        "(per-tensor or 1-D per-axis only)")
    axis = _per_axis(ctx, xv.rank, scale, zp)
    if scale.size > 1 and xv.shape[axis] != scale.size:
        raise ctx.error(f"scale has {scale.size} values but axis {axis} has size {xv.shape[axis]}")
    if kind is I32 and np.any(zp != 0):
        raise ctx.error("an int32 input with a non-zero zero point is not supported")
    info = QuantInfo(xv, scale, zp, axis)
    fdt = np.float32 if out_kind is F32 else np.float16
    if xv.is_const:
        x = np.asarray(xv.const).astype(np.int64)
        zb = zp.reshape(_axis_shape(xv.rank, axis, zp.size)) if zp.size > 1 else zp.reshape(())
        sb = scale_raw.astype(np.float32).reshape(_axis_shape(xv.rank, axis, scale.size)) if scale.size > 1 \
            else scale_raw.astype(np.float32).reshape(())
        y = ((x - zb).astype(np.float32) * sb).astype(fdt)
        return [DequantizedValue(tuple(xv.shape), out_kind, info, lambda: None, const=y)]  # type: ignore[arg-type,return-value]
    scale_f = scale_raw.astype(np.float32).reshape(-1).astype(np.float64)

    def emit() -> SSAValue:
        view = getattr(xv, "signed_view", None)
        if view is not None:
            return dequantize_ir(ctx, view[0], scale_f, zp - view[1], axis, out_kind)
        return dequantize_ir(ctx, ctx.importer.materialize(xv), scale_f, zp, axis, out_kind)

    return [DequantizedValue(tuple(xv.shape), out_kind, info, emit)]


def _q_out_kind(ctx: NodeContext) -> tuple[Kind, np.ndarray]:
    """(output kind, zero points) of QuantizeLinear / the output side of QLinear ops."""
    scale = np.asarray(ctx.const(1, "scale")).reshape(-1)
    if ctx.has_input(2):
        zp, kind = _zp_array(ctx, 2, scale, U8)
    else:
        od = int(ctx.attr("output_dtype", 0) or 0)
        if od in _UNSUPPORTED_ELEM:
            raise ctx.error(f"output type {_UNSUPPORTED_ELEM[od]} is not supported")
        kind = _ONNX_ELEM.get(od, U8) if od else U8
        zp = np.zeros(1, np.int64)
    if kind not in _Q_KINDS:
        raise ctx.error(f"{kind.value} output is not supported")
    return kind, zp


def quantize_ir(ctx: NodeContext, x: SSAValue, scale: np.ndarray, zp: np.ndarray, axis: int, kind: Kind
                ) -> TensorValue:
    """``saturate(round_half_even(x / scale) + zp)`` as ``kind`` (see the module docstring)."""
    from nnkiln.dialects.tosa.ops_activation import ClampOp
    from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp, MulOp
    from nnkiln.dialects.tosa.ops_type_conversion import CastOp

    shape = _shape(x)
    rank = len(shape)
    fk = _kind(x)
    sshape = _axis_shape(rank, axis, scale.size) if scale.size > 1 else (1,) * rank
    inv = (1.0 / scale.astype(np.float32).astype(np.float64)).astype(np.float32)
    v = _emit(ctx, MulOp, [x, _const(ctx, inv.reshape(sshape), fk)], fk)
    big = float(1 << 20) if fk is F32 else 60000.0
    v = _emit(ctx, ClampOp, [v], fk, min_val=-big, max_val=big)
    q = _emit(ctx, CastOp, [v], I32)
    if np.any(zp != 0):
        zshape = _axis_shape(rank, axis, zp.size) if zp.size > 1 else (1,) * rank
        q = _emit(ctx, AddOp, [q, _const(ctx, zp.reshape(zshape), I32)], I32)
    lo, hi = _RANGE[kind]
    q = clamp_i32(ctx, q, lo, hi)
    signed, off = _SIGNED[kind]
    if off:
        from nnkiln.dialects.tosa.ops_elementwise_binary import SubOp

        q = _emit(ctx, SubOp, [q, _scalar_const(ctx, off, I32, rank)], I32)
    return signed_tensor(ctx, shape, kind, _emit(ctx, CastOp, [q], signed))


def clamp_i32(ctx: NodeContext, q: SSAValue, lo: int, hi: int) -> SSAValue:
    """CLAMP has no int32 mode in TOSA 0.30: MAXIMUM / MINIMUM with scalar constants."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import MaximumOp, MinimumOp

    rank = len(_shape(q))
    q = _emit(ctx, MaximumOp, [q, _scalar_const(ctx, lo, I32, rank)], I32)
    return _emit(ctx, MinimumOp, [q, _scalar_const(ctx, hi, I32, rank)], I32)


@lowering("QuantizeLinear")
def QuantizeLinear(ctx: NodeContext) -> Result:
    """QuantizeLinear (opsets 10, 13, 19, 21, 23): ``y = saturate(round(x / y_scale) + y_zero_point)``,
    rounding half to even. Per-tensor or per-axis constant scales / zero points; int8, uint8, int16 and
    uint16 outputs (``output_dtype`` when there is no zero point; default uint8). Float8/int4 outputs and
    ``block_size > 0`` are not supported. When the input comes from a fused integer op (see the module
    docstring) with the same scale and zero point, that integer tensor is the result."""
    _check_block(ctx)
    xv = ctx.input(0)
    if xv.kind not in (F32, F16) and not (xv.is_const and np.asarray(xv.const).dtype.kind == "f"):
        if xv.kind is I32:
            pass
        else:
            raise ctx.error(f"{xv.kind.value} input is not supported")
    if _dyn(ctx, 1, 2):
        kind = _zp_kind(ctx, 2, _ONNX_ELEM.get(int(ctx.attr("output_dtype", 0) or 0), U8))
        if kind not in _Q_KINDS:
            raise ctx.error(f"{kind.value} output is not supported (float8/int4/int2/float4 have no TOSA type)")
        if xv.kind not in (F32, F16):
            raise ctx.error(f"{xv.kind.value} input is not supported")
        return [dyn_quantize(ctx, kind)]
    kind, zp = _q_out_kind(ctx)
    scale_raw = np.asarray(ctx.const(1, "scale"))
    scale = _scale_vec(ctx, scale_raw, "scale")
    if scale.size > 1 and scale_raw.ndim != 1 or zp.size not in (1, scale.size):
        raise ctx.error(f"scale shape {list(scale_raw.shape)} is not supported (per-tensor or 1-D per-axis only)")
    axis = _per_axis(ctx, xv.rank, scale, zp)
    fused = getattr(xv, "fused", None)
    if isinstance(xv, DequantizedValue) and fused is not None and scale.size == 1 and zp.size == 1:
        fq, fs, fz, fk = fused
        if fk is kind and fz == int(zp[0]) and np.float32(fs) == np.float32(scale[0]):
            return [fq]
    if isinstance(xv, DequantizedValue) and not xv.is_const and scale.size == 1 and zp.size == 1 \
            and kind in (I8, U8):
        act = _act(ctx, xv)
        if act is not None:  # DQ → Q: an integer requantization (identity when the parameters agree)
            t = _Target(float(np.float32(scale[0])), int(zp[0]), kind)
            if xv.info.q.kind is kind and xv.info.z == t.zp and np.float32(xv.info.s) == np.float32(t.scale):
                return [xv.info.q]
            q, z, s = act
            return [_out(ctx, _requant_signed(ctx, q, z, s / t.scale, t), t)]
    if xv.is_const:
        x = np.asarray(xv.const).astype(np.float32)
        sb = scale_raw.astype(np.float32)
        zb = zp
        if scale.size > 1:
            sb = sb.reshape(_axis_shape(xv.rank, axis, scale.size))
        else:
            sb = sb.reshape(())
        zb = zp.reshape(_axis_shape(xv.rank, axis, zp.size)) if zp.size > 1 else zp.reshape(())
        lo, hi = _RANGE[kind]
        y = np.clip(np.rint(x / sb).astype(np.float64) + zb, lo, hi).astype(_NP[kind])
        return [y]
    x = ctx.importer.materialize(xv)
    if xv.kind is I32:
        from nnkiln.dialects.tosa.ops_type_conversion import CastOp

        x = _emit(ctx, CastOp, [x], F32)
    return [quantize_ir(ctx, x, scale_raw.astype(np.float32).reshape(-1).astype(np.float64), zp, axis, kind)]


@lowering("DynamicQuantizeLinear")
def DynamicQuantizeLinear(ctx: NodeContext) -> Result:
    """DynamicQuantizeLinear (opset 11): uint8 quantization with a scale computed from the data's range.
    The scale depends on the data, so only constant inputs are supported (folded at import)."""
    xv = ctx.input(0)
    if not xv.is_const:
        raise ctx.error("a run-time input is not supported (the scale depends on the data; TOSA 0.30 "
                        "quantization parameters are attributes)")
    x = np.asarray(xv.const).astype(np.float32)
    lo = min(0.0, float(x.min())) if x.size else 0.0
    hi = max(0.0, float(x.max())) if x.size else 0.0
    scale = np.float32((hi - lo) / 255.0)
    if scale == 0:
        zp = np.uint8(0)
        y = np.zeros(x.shape, np.uint8)
    else:
        zpf = np.clip(np.rint(np.float32(0 - lo) / scale), 0, 255)
        zp = np.uint8(zpf)
        y = np.clip(np.rint(x / scale) + zpf, 0, 255).astype(np.uint8)
    return [y, np.array(scale, np.float32), np.array(zp, np.uint8)]


# ------------------------------------------------------------------------------------------------
# integer convolution and matmul cores


def _weight_i8(ctx: NodeContext, wv: TensorValue, wzp: np.ndarray, what: str) -> tuple[TensorValue, int]:
    """Weights as int8 with one zero point. Constant weights with per-channel zero points (axis 0) are
    shifted at import (``w - zp[c]`` must then fit int8); run-time weights need a scalar zero point."""
    if wzp.size == 1:
        if wv.is_const:
            arr = np.asarray(wv.const).astype(np.int64)
            signed, off = _SIGNED[_elem_kind_of_array(ctx, np.asarray(wv.const), wv.kind)]
            if signed is not I8:
                raise ctx.error(f"{what} of type {np.asarray(wv.const).dtype} is not supported (int8/uint8 only)")
            return TensorValue.constant((arr - off).astype(np.int8)), int(wzp[0]) - off
        if wv.kind not in (I8, U8):
            raise ctx.error(f"{what} of type {wv.kind.value} is not supported (int8/uint8 only)")
        v, z = to_signed(ctx, wv, int(wzp[0]))
        return TensorValue.of(v), z
    if not wv.is_const:
        raise ctx.error(f"per-channel zero points of a run-time {what} are not supported")
    arr = np.asarray(wv.const).astype(np.int64)
    shifted = arr - wzp.reshape((-1,) + (1,) * (arr.ndim - 1))
    if shifted.min(initial=0) < -128 or shifted.max(initial=0) > 127:
        raise ctx.error(f"{what} minus its per-channel zero points does not fit int8; not supported")
    return TensorValue.constant(shifted.astype(np.int8)), 0


def conv_i32(ctx: NodeContext, x: SSAValue, x_zp: int, wv: TensorValue, w_zp: int,
             bias: np.ndarray | None) -> tuple[SSAValue, int]:
    """Integer Conv of int8 NCHW (or NCL) ``x`` with int8 weights ``wv`` (M, C/g, K..): the int32
    accumulator in channels-last layout (1-D as [N, 1, L, M]) and the number of spatial axes. Geometry
    attributes are read from ``ctx`` as ONNX Conv defines them (see nn_conv for the exact-division rules)."""
    from nnkiln.dialects.tosa.ops_data_layout import ConcatOp
    from nnkiln.dialects.tosa.ops_tensor import Conv2DOp, DepthwiseConv2DOp
    from nnkiln.frontends.onnx.lowerings.nn_conv import (
        spatial_attrs,
        to_channels_last,
        trim_input,
        window_geometry,
        slice_value,
    )

    xs = _shape(x)
    k = len(xs) - 2
    if k not in (1, 2) or len(wv.shape) != len(xs):
        raise ctx.error(f"an integer convolution with input rank {len(xs)} is not supported (1-D and 2-D only)")
    kernel = list(wv.shape[2:])
    in_sizes = list(xs[2:])
    strides, dilations, pairs = spatial_attrs(ctx, in_sizes, kernel)
    group = int(ctx.attr("group", 1))
    ctx.attr("kernel_shape")
    c_in, m_out = xs[1], wv.shape[0]
    if group < 1 or c_in % group or m_out % group or wv.shape[1] * group != c_in:
        raise ctx.error(f"group {group} does not fit input channels {c_in} and weight {list(wv.shape)}")
    geo = [window_geometry(s, kk, st, d, b, e, False) for s, kk, st, d, (b, e) in
           zip(in_sizes, kernel, strides, dilations, pairs)]
    if any(o < 1 for o, _ in geo):
        raise ctx.error(f"the kernel {kernel} is larger than the padded input {in_sizes}")
    xl = to_channels_last(ctx, x)
    xl, ends = trim_input(ctx, xl, [e for _, e in geo])
    begins = [b for b, _ in pairs]
    if k == 1:
        kernel, strides, dilations, begins, ends = [1] + kernel, [1] + strides, [1] + dilations, [0] + begins, [0] + ends
    pad = [p for b, e in zip(begins, ends) for p in (b, e)]
    attrs = dict(pad=pad, stride=strides, dilation=dilations, input_zp=int(x_zp), weight_zp=int(w_zp))
    acc_kind = Kind.I48 if _kind(x) is I16 else I32
    b = np.zeros(m_out, np.int64) if bias is None else np.asarray(bias).astype(np.int64).reshape(-1)
    if b.size != m_out:
        raise ctx.error(f"bias has {b.size} values, expected {m_out}")
    w4 = (m_out, wv.shape[1], *kernel)

    def weight(perm: Sequence[int], shape: Sequence[int]) -> SSAValue:
        if wv.is_const:
            return _const(ctx, transpose_const(np.asarray(wv.const).reshape(shape), perm), I8)
        return transpose(ctx.g, reshape(ctx.g, ctx.importer.materialize(wv), shape), perm)

    if group == 1:
        y = _emit(ctx, Conv2DOp, [xl, weight((0, 2, 3, 1), w4), _const(ctx, b, acc_kind)], acc_kind, **attrs)
    elif group == c_in:
        mult = m_out // c_in
        y = _emit(ctx, DepthwiseConv2DOp, [xl, weight((2, 3, 0, 1), (c_in, mult, *kernel)), _const(ctx, b, acc_kind)],
                  acc_kind, **attrs)
    else:
        cg, mg = c_in // group, m_out // group
        w = weight((0, 2, 3, 1), w4)
        shp = _shape(xl)
        parts = []
        for gi in range(group):
            xg = slice_value(ctx, xl, [0, 0, 0, gi * cg], [shp[0], shp[1], shp[2], cg])
            wsh = _shape(w)
            wg = slice_value(ctx, w, [gi * mg, 0, 0, 0], [mg, *wsh[1:]])
            parts.append(_emit(ctx, Conv2DOp, [xg, wg, _const(ctx, b[gi * mg:(gi + 1) * mg], acc_kind)], acc_kind, **attrs))
        y = _emit(ctx, ConcatOp, [parts], acc_kind, axis=3)
    if acc_kind is not I32:
        y = rescale(ctx, y, I32)
    return y, k


def _from_channels_last(ctx: NodeContext, y: SSAValue, k: int) -> SSAValue:
    from nnkiln.frontends.onnx.lowerings.nn_conv import to_channels_first

    assert _kind(y) not in (U8, U16), "TRANSPOSE has no unsigned types: change the layout in the signed kind"
    return to_channels_first(ctx, y, k)


def _finish_conv(ctx: NodeContext, acc: SSAValue, k: int, scale: np.ndarray, out_kind: Kind, out_zp: int,
                 lo: int | None = None) -> SSAValue:
    """Requantize a channels-last int32 accumulator and return it in ONNX layout as ``out_kind``."""
    signed, off = _SIGNED[out_kind]
    y = requantize(ctx, acc, 0, list(scale), signed, out_zp - off, per_channel=scale.size > 1,
                   lo=None if lo is None else lo - off)
    y = _from_channels_last(ctx, y, k)
    if off:
        y = rescale(ctx, y, out_kind, output_zp=off)
    return y


def matmul_i32(ctx: NodeContext, a: SSAValue, a_zp: int, bv: TensorValue, b_zp: int) -> SSAValue:
    """int8 ``a`` [.., M, K] × int8 ``bv`` [.., K, N] (numpy batch broadcasting) → int32 [.., M, N]."""
    from nnkiln.dialects.tosa.ops_tensor import MatMulOp

    a_shape = _shape(a)
    b_shape = tuple(bv.shape)
    if len(a_shape) < 2 or len(b_shape) < 2:
        raise ctx.error("integer matmuls of 1-D operands are not supported")
    m, kk = a_shape[-2:]
    k2, n = b_shape[-2:]
    if kk != k2:
        raise ctx.error(f"inner dimensions differ: {list(a_shape)} x {list(b_shape)}")
    a_b, b_b = math.prod(a_shape[:-2]), math.prod(b_shape[:-2])
    batch = tuple(int(d) for d in np.broadcast_shapes(a_shape[:-2], b_shape[:-2]))
    nb = math.prod(batch)
    if b_b == 1:
        if a_b != nb:
            raise ctx.error("broadcasting A's batch is not supported")
        a3 = reshape(ctx.g, a, (1, nb * m, kk))
        b3 = _const(ctx, np.asarray(bv.const).reshape(1, kk, n), I8) if bv.is_const else \
            reshape(ctx.g, ctx.importer.materialize(bv), (1, kk, n))
    elif a_b == nb and b_b == nb:
        a3 = reshape(ctx.g, a, (nb, m, kk))
        b3 = _const(ctx, np.asarray(bv.const).reshape(nb, kk, n), I8) if bv.is_const else \
            reshape(ctx.g, ctx.importer.materialize(bv), (nb, kk, n))
    else:
        raise ctx.error("broadcasting batch dimensions of integer matmuls is not supported")
    y = _emit(ctx, MatMulOp, [a3, b3], I32, A_zp=int(a_zp), B_zp=int(b_zp))
    return reshape(ctx.g, y, (*batch, m, n))


def _act_i8(ctx: NodeContext, idx: int, zp: np.ndarray, what: str) -> tuple[SSAValue, int]:
    v = ctx.input(idx)
    kind = _elem_kind_of_array(ctx, np.asarray(v.const), v.kind) if v.is_const else v.kind
    if kind not in (I8, U8):
        raise ctx.error(f"{what} of type {kind.value} is not supported (int8/uint8 only)")
    if zp.size != 1:
        raise ctx.error(f"a per-axis zero point of {what} is not supported")
    return to_signed(ctx, v if not v.is_const else TensorValue.constant(np.asarray(v.const)), int(zp[0]))


def _zp_input(ctx: NodeContext, idx: int) -> np.ndarray:
    if not ctx.has_input(idx):
        return np.zeros(1, np.int64)
    return np.asarray(ctx.const(idx, "zero point")).astype(np.int64).reshape(-1)


def _out_kind_of_zp(ctx: NodeContext, idx: int) -> Kind:
    if not ctx.has_input(idx):
        return U8
    v = ctx.input(idx)
    return _elem_kind_of_array(ctx, np.asarray(v.const), v.kind) if v.is_const else v.kind


@lowering("QLinearConv")
def QLinearConv(ctx: NodeContext) -> Result:
    """QLinearConv (opset 10): int8/uint8 Conv with per-tensor input/output and per-tensor or per-output-
    channel weight quantization; int32 bias (scale x_scale·w_scale). CONV2D / DEPTHWISE_CONV2D in int8
    with zero points → int32 → RESCALE by x_scale·w_scale/y_scale (per channel) to the output type.
    Run-time weights, scales or zero points: ``dyn_conv_i32`` and a float requantization (ONNX's
    reference formula: ``rint(acc · x_scale·w_scale/y_scale) + y_zero_point``)."""
    if _dyn(ctx, 1, 2, 3, 4, 5, 6, 7):
        from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp

        acc, k = dyn_conv_i32(ctx, 0, 2, 3, 5)
        if ctx.has_input(8):
            acc = _emit(ctx, AddOp, [acc, _param(ctx, 8, 4, 3, I32)], I32)
        factor = _scale_product(ctx, [1, 4], 6, 4, {4: 3})
        out_kind = _zp_kind(ctx, 7, U8)
        if out_kind not in (I8, U8):
            raise ctx.error(f"{out_kind.value} output is not supported")
        signed, off = _SIGNED[out_kind]
        y = _dyn_requant(ctx, acc, factor, 7, signed, zp_offset=off)  # computed as y - off in int8
        y = _from_channels_last(ctx, y, k)
        return [rescale(ctx, y, out_kind, output_zp=off) if off else y]
    x_scale = _scale_vec(ctx, ctx.const(1, "x_scale"), "x_scale")
    x_zp = _zp_input(ctx, 2)
    w_scale = _scale_vec(ctx, ctx.const(4, "w_scale"), "w_scale")
    w_zp = _zp_input(ctx, 5)
    y_scale = _scale_vec(ctx, ctx.const(6, "y_scale"), "y_scale")
    y_zp = _zp_input(ctx, 7)
    out_kind = _out_kind_of_zp(ctx, 7)
    if out_kind not in (I8, U8) or x_scale.size != 1 or y_scale.size != 1 or y_zp.size != 1:
        raise ctx.error("only per-tensor int8/uint8 input and output quantization is supported")
    x, xz = _act_i8(ctx, 0, x_zp, "x")
    w, wz = _weight_i8(ctx, ctx.input(3), w_zp, "w")
    bias = ctx.optional_const(8, "bias")
    acc, k = conv_i32(ctx, x, xz, w, wz, bias)
    m = w.shape[0]
    scale = np.broadcast_to(x_scale[0] * w_scale / y_scale[0], (m,)) if w_scale.size > 1 else x_scale * w_scale / y_scale
    return [_finish_conv(ctx, acc, k, np.asarray(scale), out_kind, int(y_zp[0]))]


@lowering("ConvInteger")
def ConvInteger(ctx: NodeContext) -> Result:
    """ConvInteger (opset 10): ``conv(x - x_zero_point, w - w_zero_point)`` in int32 (CONV2D int8 → int32;
    run-time weights or zero points: ``dyn_conv_i32``)."""
    if _dyn(ctx, 1, 2, 3):
        acc, k = dyn_conv_i32(ctx, 0, 2, 1, 3)
        return [_from_channels_last(ctx, acc, k)]
    x_zp = _zp_input(ctx, 2)
    w_zp = _zp_input(ctx, 3)
    x, xz = _act_i8(ctx, 0, x_zp, "x")
    w, wz = _weight_i8(ctx, ctx.input(1), w_zp, "w")
    acc, k = conv_i32(ctx, x, xz, w, wz, None)
    return [_from_channels_last(ctx, acc, k)]


@lowering("MatMulInteger")
def MatMulInteger(ctx: NodeContext) -> Result:
    """MatMulInteger (opset 10): ``(A - a_zero_point) × (B - b_zero_point)`` in int32 (MATMUL int8 → int32).
    A per-column B zero point is folded into a constant B (which must then fit int8); run-time zero points
    use ``dyn_matmul_i32``."""
    if _dyn(ctx, 2, 3) or (ctx.has_input(2) and np.asarray(ctx.input(2).const).size > 1):
        return [dyn_matmul_i32(ctx, 0, 2, 1, 3)]
    a_zp = _zp_input(ctx, 2)
    b_zp = _zp_input(ctx, 3)
    a, az = _act_i8(ctx, 0, a_zp, "A")
    bv = ctx.input(1)
    if b_zp.size > 1:
        if not bv.is_const:
            raise ctx.error("a per-column zero point of a run-time B is not supported")
        arr = np.asarray(bv.const).astype(np.int64) - b_zp
        if arr.min(initial=0) < -128 or arr.max(initial=0) > 127:
            raise ctx.error("B minus its per-column zero points does not fit int8; not supported")
        b, bz = TensorValue.constant(arr.astype(np.int8)), 0
    else:
        b, bz = _weight_i8(ctx, bv, b_zp, "B")
    return [matmul_i32(ctx, a, az, b, bz)]


@lowering("QLinearMatMul")
def QLinearMatMul(ctx: NodeContext) -> Result:
    """QLinearMatMul (opsets 10, 21): MATMUL int8 with zero points → int32 → RESCALE by
    a_scale·b_scale/y_scale (per column when b_scale is per column) to the output type. Run-time scales
    or zero points: ``dyn_matmul_i32`` and ONNX's float formula ``rint(acc · a_scale·b_scale/y_scale) + y_zp``."""
    if _dyn(ctx, 1, 2, 4, 5, 6, 7):
        acc = dyn_matmul_i32(ctx, 0, 2, 3, 5)
        rank = len(_shape(acc))
        factor = _scale_product(ctx, [1, 4], 6, rank, {4: rank - 1})
        return [_dyn_requant(ctx, acc, factor, 7, _zp_kind(ctx, 7, U8))]
    a_scale = _scale_vec(ctx, ctx.const(1, "a_scale"), "a_scale")
    a_zp = _zp_input(ctx, 2)
    b_scale = _scale_vec(ctx, ctx.const(4, "b_scale"), "b_scale")
    b_zp = _zp_input(ctx, 5)
    y_scale = _scale_vec(ctx, ctx.const(6, "y_scale"), "y_scale")
    y_zp = _zp_input(ctx, 7)
    out_kind = _out_kind_of_zp(ctx, 7)
    if out_kind not in (I8, U8) or a_scale.size != 1 or y_scale.size != 1:
        raise ctx.error("only per-tensor int8/uint8 A and output quantization is supported")
    a, az = _act_i8(ctx, 0, a_zp, "a")
    bv = ctx.input(3)
    if b_zp.size > 1:
        if not bv.is_const:
            raise ctx.error("a per-column zero point of a run-time b is not supported")
        arr = np.asarray(bv.const).astype(np.int64) - b_zp
        if arr.min(initial=0) < -128 or arr.max(initial=0) > 127:
            raise ctx.error("b minus its per-column zero points does not fit int8; not supported")
        b, bz = TensorValue.constant(arr.astype(np.int8)), 0
    else:
        b, bz = _weight_i8(ctx, bv, b_zp, "b")
    acc = matmul_i32(ctx, a, az, b, bz)
    scale = a_scale[0] * b_scale / y_scale[0]
    n = _shape(acc)[-1]
    scale = np.broadcast_to(scale, (n,)) if scale.size > 1 else scale
    return [requantize(ctx, acc, 0, list(scale), out_kind, int(y_zp[0]), per_channel=scale.size > 1)]


# ------------------------------------------------------------------------------------------------
# QDQ fusion (see the module docstring)


@dataclasses.dataclass
class _Target:
    """The quantization of a node's output by its QuantizeLinear consumers."""

    scale: float
    zp: int
    kind: Kind
    relu: bool = False  # a Relu sits between the node and its QuantizeLinear consumers (clamp at real 0)


def _graph_maps(imp: Any) -> tuple[dict[str, list[Any]], set[str]]:
    """(consumers of each value, graph output names) of the top-level graph, cached on the importer."""
    cached = getattr(imp, "_nnkiln_quant_maps", None)
    if cached is None:
        graph = imp.model.proto.graph
        consumers: dict[str, list[Any]] = {}
        for node in graph.node:
            for name in node.input:
                if name:
                    consumers.setdefault(name, []).append(node)
            for a in node.attribute:  # values read by sub-graphs count as consumed by the node
                for sub in list(a.graphs) + ([a.g] if a.HasField("g") else []):
                    from nnkiln.frontends.onnx.lowerings.control import free_names

                    for name in free_names(sub):
                        consumers.setdefault(name, []).append(node)
        cached = (consumers, {o.name for o in graph.output})
        imp._nnkiln_quant_maps = cached  # noqa: SLF001  (workaround: no importer hook for analyses)
    return cached


def _q_target(ctx: NodeContext) -> _Target | None:
    """The per-tensor quantization all consumers of the node's first output apply, if every consumer is
    a QuantizeLinear with constant parameters (and the output is no graph output)."""
    imp = ctx.importer
    outs = [o for o in ctx.node.output if o]
    if not outs or outs[0] != ctx.node.output[0]:
        return None
    consumers, graph_outputs = _graph_maps(imp)
    name = outs[0]
    if any(o in graph_outputs for o in outs):
        return None
    if any(consumers.get(o) for o in outs[1:]):
        return None
    users = consumers.get(name, [])
    relu = False
    if len(users) == 1 and users[0].op_type == "Relu" and ctx.op_type != "Relu" and users[0].output[0] not in graph_outputs:
        users = consumers.get(users[0].output[0], [])  # node → Relu → QuantizeLinear: fuse the ReLU as a clamp
        relu = True
    if not users or any(u.op_type != "QuantizeLinear" or u.domain not in ("", "ai.onnx") for u in users):
        return None
    # the node must belong to the top-level graph (sub-graph nodes are not in the maps)
    top_producers = getattr(imp, "_nnkiln_quant_producers", None)
    if top_producers is None:
        top_producers = {o for n in imp.model.proto.graph.node for o in n.output if o}
        imp._nnkiln_quant_producers = top_producers  # noqa: SLF001
    if name not in top_producers or getattr(imp, "_nnkiln_in_subgraph", False):
        return None
    target: _Target | None = None
    for u in users:
        if len(u.input) < 2:
            return None
        sv = imp.values.get(u.input[1])
        if sv is None or not sv.is_const or np.asarray(sv.const).size != 1:
            return None
        if any(a.name == "block_size" and a.i > 0 for a in u.attribute):
            return None
        scale = float(np.asarray(sv.const, dtype=np.float32).reshape(-1)[0])
        if not (scale > 0 and math.isfinite(scale)):
            return None
        if len(u.input) > 2 and u.input[2]:
            zv = imp.values.get(u.input[2])
            if zv is None or not zv.is_const or np.asarray(zv.const).size != 1:
                return None
            dt = np.dtype(np.asarray(zv.const).dtype).name
            kind = {"int8": I8, "uint8": U8}.get(dt)
            zp = int(np.asarray(zv.const).reshape(-1)[0])
        else:
            od = next((a.i for a in u.attribute if a.name == "output_dtype"), 0)
            kind = {0: U8, 2: U8, 3: I8}.get(od)
            zp = 0
        if kind is None:
            return None
        t = _Target(scale, zp, kind, relu)
        if target is not None and target != t:
            return None
        target = t
    return target


def _act(ctx: NodeContext, tv: TensorValue | None) -> tuple[SSAValue, int, float] | None:
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
    view = getattr(info, "_i8_view", None)
    sv = getattr(info.q, "signed_view", None)
    if view is None and sv is not None:
        view = (sv[0], info.z - sv[1])
    if view is None:
        v, z = to_signed(ctx, info.q, info.z)
        view = (v, z)
        info._i8_view = view  # type: ignore[attr-defined]
    return view[0], view[1], info.s


def _fused(ctx: NodeContext, q: TensorValue, t: _Target, float_kind: Kind = F32) -> DequantizedValue:
    """The float output of a fused node: known as the integer tensor ``q`` (in ``t``'s type)."""
    info = QuantInfo(q, np.array([t.scale]), np.array([t.zp]), 0)

    def emit() -> SSAValue:
        sv = getattr(q, "signed_view", None)
        if sv is not None:
            return dequantize_ir(ctx, sv[0], np.array([t.scale]), np.array([t.zp - sv[1]]), 0, float_kind)
        return dequantize_ir(ctx, ctx.importer.materialize(q), np.array([t.scale]), np.array([t.zp]), 0, float_kind)

    dv = DequantizedValue(tuple(q.shape), float_kind, info, emit)
    dv.fused = (q, t.scale, t.zp, t.kind)  # type: ignore[attr-defined]
    return dv


def _out(ctx: NodeContext, y_signed: SSAValue, t: _Target) -> TensorValue:
    """A result computed in the signed kind with zero point ``t.zp - offset``, as a ``t.kind`` value."""
    return signed_tensor(ctx, _shape(y_signed), t.kind, y_signed)


def _requant_signed(ctx: NodeContext, x: SSAValue, xz: int, scale: float | Sequence[float], t: _Target,
                    per_channel: bool = False, lo: float | None = None, hi: float | None = None) -> SSAValue:
    """RESCALE to the signed kind of ``t`` (zero point shifted), clamped to real bounds ``lo``/``hi``."""
    from nnkiln.dialects.tosa.ops_activation import ClampOp

    signed, off = _SIGNED[t.kind]
    zp = t.zp - off
    same = not per_channel and isinstance(scale, float) and abs(scale - 1.0) < 1e-9 and xz == zp and _kind(x) is signed
    y = x if same else requantize(ctx, x, xz, scale, signed, zp, per_channel=per_channel)
    if lo is None and t.relu:
        lo = 0.0
    rlo, rhi = _RANGE[signed]
    qlo = rlo if lo is None else max(rlo, min(rhi, zp + int(np.rint(lo / t.scale))))
    qhi = rhi if hi is None else min(rhi, max(rlo, zp + int(np.rint(hi / t.scale))))
    if qlo > rlo or qhi < rhi:
        y = _emit(ctx, ClampOp, [y], signed, min_val=int(qlo), max_val=int(qhi))
    return y


def _bias_i32(ctx: NodeContext, tv: TensorValue | None, scale: np.ndarray, n: int) -> np.ndarray | None:
    """A constant bias as int32 in units of ``scale`` (the accumulator scale), or None if not constant."""
    if tv is None:
        return np.zeros(n, np.int64)
    if not tv.is_const:
        return None
    if isinstance(tv, DequantizedValue) and tv.info.q.is_const and np.all(tv.info.zp == 0):
        s = tv.info.scale
        if s.size in (1, n) and np.allclose(np.broadcast_to(s, (n,)), np.broadcast_to(scale, (n,)), rtol=1e-6, atol=0):
            return np.broadcast_to(np.asarray(tv.info.q.const).astype(np.int64).reshape(-1), (n,)).copy()
    b = np.asarray(tv.const, dtype=np.float64).reshape(-1)
    if b.size not in (1, n):
        return None
    r = np.rint(np.broadcast_to(b, (n,)) / np.broadcast_to(scale, (n,)))
    if np.any(np.abs(r) >= (1 << 31)):
        return None
    return r.astype(np.int64)


def _weight_info(tv: TensorValue | None, axis: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(int weights, scales, zero points) of a constant DequantizeLinear weight, per-tensor or along ``axis``."""
    if not isinstance(tv, DequantizedValue) or not tv.info.q.is_const:
        return None
    arr = np.asarray(tv.info.q.const)
    if arr.dtype.name not in ("int8", "uint8"):
        return None
    info = tv.info
    if not info.per_tensor and info.axis != axis % arr.ndim:
        return None
    return arr, info.scale, info.zp


def _fuse_conv(ctx: NodeContext, t: _Target) -> TensorValue | None:
    x = _act(ctx, ctx.inputs[0])
    wi = _weight_info(ctx.inputs[1] if len(ctx.inputs) > 1 else None, 0)
    if x is None or wi is None or ctx.inputs[0].rank not in (3, 4):  # type: ignore[union-attr]
        return None
    xq, xz, xs = x
    w, ws, wz = wi
    m = w.shape[0]
    wq, wzz = _weight_i8(ctx, TensorValue.constant(w), wz if wz.size > 1 else wz.reshape(1), "weight")
    acc_scale = xs * np.broadcast_to(ws, (m,)).astype(np.float64)
    bias = _bias_i32(ctx, ctx.inputs[2] if ctx.has_input(2) else None, acc_scale, m)
    if bias is None:
        return None
    acc, k = conv_i32(ctx, xq, xz, wq, wzz, bias)
    signed, off = _SIGNED[t.kind]
    scale = acc_scale / t.scale
    y = _requant_signed(ctx, acc, 0, list(scale) if ws.size > 1 else float(scale[0]), t, per_channel=ws.size > 1)
    return _out(ctx, _from_channels_last(ctx, y, k), t)


def _fuse_matmul(ctx: NodeContext, t: _Target) -> TensorValue | None:
    a = _act(ctx, ctx.inputs[0])
    bv = ctx.inputs[1]
    if a is None or bv is None or ctx.inputs[0].rank < 2 or bv.rank < 2:  # type: ignore[union-attr]
        return None
    aq, az, as_ = a
    b_act = _act(ctx, bv) if not bv.is_const else None
    if b_act is not None:
        bq, bz, bs = b_act
        acc = matmul_i32(ctx, aq, az, TensorValue.of(bq), bz)
        return _out(ctx, _requant_signed(ctx, acc, 0, as_ * bs / t.scale, t), t)
    wi = _weight_info(bv, bv.rank - 1)
    if wi is None:
        return None
    w, ws, wz = wi
    n = w.shape[-1]
    if wz.size > 1:
        shifted = w.astype(np.int64) - wz.reshape(-1)
        if shifted.min(initial=0) < -128 or shifted.max(initial=0) > 127:
            return None
        wtv, wzz = TensorValue.constant(shifted.astype(np.int8)), 0
    else:
        wtv, wzz = _weight_i8(ctx, TensorValue.constant(w), wz.reshape(1), "B")
    acc = matmul_i32(ctx, aq, az, wtv, wzz)
    scale = as_ * np.broadcast_to(ws, (n,)).astype(np.float64) / t.scale
    pc = ws.size > 1
    return _out(ctx, _requant_signed(ctx, acc, 0, list(scale) if pc else float(scale[0]), t, per_channel=pc), t)


def _fuse_gemm(ctx: NodeContext, t: _Target) -> TensorValue | None:
    from nnkiln.dialects.tosa.ops_tensor import FullyConnectedOp

    if float(ctx.attr("alpha", 1.0)) != 1.0 or float(ctx.attr("beta", 1.0)) != 1.0 or ctx.attr("transA", 0):
        return None
    trans_b = bool(ctx.attr("transB", 0))
    a = _act(ctx, ctx.inputs[0])
    wi = _weight_info(ctx.inputs[1], 0 if trans_b else 1)
    if a is None or wi is None or ctx.inputs[0].rank != 2:  # type: ignore[union-attr]
        return None
    aq, az, as_ = a
    w, ws, wz = wi
    w = w if trans_b else w.T  # [N, K]
    n = w.shape[0]
    wtv, wzz = _weight_i8(ctx, TensorValue.constant(np.ascontiguousarray(w)), wz.reshape(-1), "B")
    acc_scale = as_ * np.broadcast_to(ws, (n,)).astype(np.float64)
    cv = ctx.inputs[2] if ctx.has_input(2) else None
    if cv is not None and cv.rank == 2 and cv.shape[0] != 1:
        return None
    bias = _bias_i32(ctx, cv, acc_scale, n)
    if bias is None:
        return None
    acc = _emit(ctx, FullyConnectedOp, [aq, _const(ctx, np.asarray(wtv.const), I8), _const(ctx, bias, I32)], I32,
                input_zp=int(az), weight_zp=int(wzz))
    scale = acc_scale / t.scale
    pc = ws.size > 1
    return _out(ctx, _requant_signed(ctx, acc, 0, list(scale) if pc else float(scale[0]), t, per_channel=pc), t)


_ADD_SHIFT = 20


def _fuse_add(ctx: NodeContext, t: _Target) -> TensorValue | None:
    """ADD as in the TOSA lowerings of tfl.add: both operands RESCALEd to int32 at a common scale
    (``2·max(scale_a, scale_b)`` with 20 extra fraction bits), ADD, RESCALE to the output."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp
    from nnkiln.frontends.common.broadcast import equal_ranks

    ops = [_act(ctx, ctx.inputs[i]) for i in range(2)]
    if any(o is None for o in ops):
        return None
    (aq, az, as_), (bq, bz, bs) = ops  # type: ignore[misc]
    try:
        np.broadcast_shapes(_shape(aq), _shape(bq))
    except ValueError:
        return None
    max2 = 2.0 * max(as_, bs)
    a32 = rescale(ctx, aq, I32, input_zp=az, scale=as_ / max2 * (1 << _ADD_SHIFT))
    b32 = rescale(ctx, bq, I32, input_zp=bz, scale=bs / max2 * (1 << _ADD_SHIFT))
    a32, b32 = equal_ranks(ctx.g, a32, b32)
    s = _emit(ctx, AddOp, [a32, b32], I32)
    return _out(ctx, _requant_signed(ctx, s, 0, max2 / ((1 << _ADD_SHIFT) * t.scale), t), t)


def _fuse_relu(ctx: NodeContext, t: _Target) -> TensorValue | None:
    x = _act(ctx, ctx.inputs[0])
    if x is None:
        return None
    xq, xz, xs = x
    return _out(ctx, _requant_signed(ctx, xq, xz, xs / t.scale, t, lo=0.0), t)


def _fuse_clip(ctx: NodeContext, t: _Target) -> TensorValue | None:
    x = _act(ctx, ctx.inputs[0])
    if x is None:
        return None
    lo, hi = ctx.attr("min"), ctx.attr("max")
    for i, name in ((1, "lo"), (2, "hi")):
        if ctx.has_input(i):
            v = ctx.inputs[i]
            if not v.is_const:  # type: ignore[union-attr]
                return None
            val = float(np.asarray(v.const).reshape(-1)[0])  # type: ignore[union-attr]
            lo, hi = (val, hi) if name == "lo" else (lo, val)
    xq, xz, xs = x
    return _out(ctx, _requant_signed(ctx, xq, xz, xs / t.scale, t, lo=lo, hi=hi), t)


def _with_input(ctx: NodeContext, value: SSAValue, idx: int = 0) -> NodeContext:
    inputs = list(ctx.inputs)
    inputs[idx] = TensorValue.of(value)
    return dataclasses.replace(ctx, inputs=inputs, used_attrs=set())


def _single(results: Sequence[Any], ctx: NodeContext) -> SSAValue | None:
    r = results[0]
    if isinstance(r, TensorValue):
        return ctx.importer.materialize(r)
    return r if isinstance(r, SSAValue) else None


def _fuse_movement(orig: Callable[[NodeContext], Sequence[Any]]) -> Callable[[NodeContext, _Target], TensorValue | None]:
    """Ops that only move or select values (and MaxPool, which commutes with monotone requantization):
    run the original lowering on the int8 tensor, then requantize to the output."""

    def fuse(ctx: NodeContext, t: _Target) -> TensorValue | None:
        x = _act(ctx, ctx.inputs[0])
        if x is None or any(isinstance(v, DequantizedValue) and not v.is_const for v in ctx.inputs[1:]):
            return None
        xq, xz, xs = x
        y = _single(orig(_with_input(ctx, xq)), ctx)
        if y is None or _kind(y) is not I8:
            return None
        return _out(ctx, _requant_signed(ctx, y, xz, xs / t.scale, t), t)

    return fuse


def _fuse_avgpool(orig: Callable[[NodeContext], Sequence[Any]], is_global: bool
                  ) -> Callable[[NodeContext, _Target], TensorValue | None]:
    """AVG_POOL2D on the raw int8 values (zero points 0; the divisor excludes padding, so the mean of
    ``x`` is the mean of ``x - zp`` plus ``zp``), then requantize."""

    def fuse(ctx: NodeContext, t: _Target) -> TensorValue | None:
        from nnkiln.dialects.tosa.ops_tensor import AvgPool2dOp
        from nnkiln.frontends.onnx.lowerings.nn_conv import to_channels_first, to_channels_last

        x = _act(ctx, ctx.inputs[0])
        if x is None:
            return None
        xq, xz, xs = x
        shape = _shape(xq)
        if len(shape) not in (3, 4):
            return None
        if is_global:
            xl = to_channels_last(ctx, xq)
            _, h, w, _ = _shape(xl)
            y = _emit(ctx, AvgPool2dOp, [xl], I8, kernel=[h, w], stride=[1, 1], pad=[0, 0, 0, 0], input_zp=0,
                      output_zp=0)
            y = to_channels_first(ctx, y, len(shape) - 2)
        else:
            if ctx.attr("count_include_pad", 0) and any(ctx.attr("pads") or []):
                return None
            try:
                from nnkiln.frontends.onnx.lowerings.nn_conv import _pool_common
            except ImportError:
                return None
            y = _pool_common(_with_input(ctx, xq), AvgPool2dOp)
        return _out(ctx, _requant_signed(ctx, y, xz, xs / t.scale, t), t)

    return fuse


def _fuse_concat(ctx: NodeContext, t: _Target) -> TensorValue | None:
    from nnkiln.dialects.tosa.ops_data_layout import ConcatOp

    parts = [_act(ctx, v) for v in ctx.inputs]
    if not parts or any(p is None for p in parts):
        return None
    rank = len(_shape(parts[0][0]))  # type: ignore[index]
    axis = int(ctx.attr("axis", 0))
    axis = axis + rank if axis < 0 else axis
    signed, _ = _SIGNED[t.kind]
    vals = [_requant_signed(ctx, q, z, s / t.scale, t) for q, z, s in parts]  # type: ignore[misc]
    return _out(ctx, _emit(ctx, ConcatOp, [vals], signed, axis=axis), t)


_U8_MOVEMENT = ("MaxPool", "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze", "Slice", "Concat",
                "GlobalMaxPool", "Identity", "Gather", "Split", "Pad", "Expand", "Tile", "DepthToSpace",
                "SpaceToDepth")


def _u8_via_i8(ctx: NodeContext, orig: Callable[[NodeContext], Sequence[Any]]) -> Sequence[Any] | None:
    """uint8 tensors through value-moving ops (QOperator models): shift to int8, run, shift back."""
    if ctx.op_type == "Pad" or not ctx.inputs or ctx.inputs[0] is None:
        return None
    idxs = [0] if ctx.op_type != "Concat" else list(range(len(ctx.inputs)))
    tvs = [ctx.inputs[i] for i in idxs]
    if not all(tv is not None and not tv.is_const and tv.kind is U8 for tv in tvs):
        return None
    inputs = list(ctx.inputs)
    for i in idxs:
        inputs[i] = TensorValue.of(rescale(ctx, ctx.importer.materialize(inputs[i]), I8, input_zp=128))  # type: ignore[arg-type]
    res = orig(dataclasses.replace(ctx, inputs=inputs, used_attrs=set()))
    out = []
    for r in res:
        v = ctx.importer.materialize(r) if isinstance(r, TensorValue) else r
        if isinstance(v, SSAValue) and _kind(v) is I8:
            v = rescale(ctx, v, U8, output_zp=128)
        out.append(v)
    return out


def _wrap(op_type: str, make: Callable[[Callable[[NodeContext], Sequence[Any]]],
                                       Callable[[NodeContext, _Target], TensorValue | None]] | None) -> None:
    orig = LOWERINGS.get(op_type)
    if orig is None:
        return
    fuse = make(orig) if make is not None else None

    def lowering_with_qdq(ctx: NodeContext) -> Sequence[Any]:
        if fuse is not None:
            t = _q_target(ctx)
            if t is not None:
                y = fuse(ctx, t)
                if y is not None:
                    return [_fused(ctx, y, t)] + [None] * (len(ctx.node.output) - 1)
        if op_type in _U8_MOVEMENT:
            r = _u8_via_i8(ctx, orig)
            if r is not None:
                return r
        return orig(ctx)

    lowering_with_qdq.__doc__ = (orig.__doc__ or "") + "\n\n(QDQ fusion and uint8 handling: see quant.py.)"
    lowering_with_qdq.__wrapped__ = orig  # type: ignore[attr-defined]
    LOWERINGS[op_type] = lowering_with_qdq


def _const_fuse(fn: Callable[[NodeContext, _Target], TensorValue | None]
                ) -> Callable[[Callable[[NodeContext], Sequence[Any]]], Callable[[NodeContext, _Target], TensorValue | None]]:
    return lambda orig: fn


def install_qdq_fusion() -> None:
    """Wrap the float lowerings registered so far with the QDQ fusion (idempotent)."""
    if getattr(install_qdq_fusion, "done", False):
        return
    install_qdq_fusion.done = True  # type: ignore[attr-defined]
    _wrap("Conv", _const_fuse(_fuse_conv))
    _wrap("MatMul", _const_fuse(_fuse_matmul))
    _wrap("Gemm", _const_fuse(_fuse_gemm))
    _wrap("Add", _const_fuse(_fuse_add))
    _wrap("Relu", _const_fuse(_fuse_relu))
    _wrap("Clip", _const_fuse(_fuse_clip))
    _wrap("Concat", _const_fuse(_fuse_concat))
    _wrap("AveragePool", lambda orig: _fuse_avgpool(orig, False))
    _wrap("GlobalAveragePool", lambda orig: _fuse_avgpool(orig, True))
    for op in ("MaxPool", "GlobalMaxPool", "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze", "Identity",
               "Slice"):
        _wrap(op, _fuse_movement)
    for op in _U8_MOVEMENT:
        if op not in ("MaxPool", "GlobalMaxPool", "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze",
                      "Identity", "Slice", "Concat"):
            _wrap(op, None)


install_qdq_fusion()


# ------------------------------------------------------------------------------------------------
# run-time quantization parameters (float path; no fusion)


def _dyn(ctx: NodeContext, *idx: int) -> bool:
    """Whether any of the inputs ``idx`` is a run-time value. A rank-0 unsigned run-time parameter cannot
    even be read (RESCALE takes ranks 1..4, RESHAPE has no unsigned types): it must be a constant."""
    for i in idx:
        if ctx.has_input(i) and not ctx.input(i).is_const and ctx.input(i).kind in (U8, U16) and ctx.input(i).rank == 0:
            ctx.const(i, "a rank-0 unsigned value, which TOSA 0.30 cannot convert at run time")
    return any(ctx.has_input(i) and not ctx.input(i).is_const for i in idx)


def _param(ctx: NodeContext, idx: int, rank: int, axis: int, kind: Kind | None = None) -> SSAValue:
    """Parameter input ``idx`` (scalar, [1] or 1-D along ``axis``) reshaped to broadcast against a
    rank-``rank`` tensor; integer parameters are widened to int32 (``kind`` = I32)."""
    tv = ctx.input(idx)
    n = int(np.prod(tv.shape, dtype=np.int64))
    if tv.rank > 1:
        raise ctx.error(f"a rank-{tv.rank} quantization parameter is not supported (blocked quantization)")
    shape = _axis_shape(rank, axis, n) if n > 1 else (1,) * rank
    if tv.is_const:
        arr = np.asarray(tv.const)
        k = kind or (F32 if arr.dtype.kind == "f" and arr.dtype != np.float16 else F16 if arr.dtype == np.float16 else I32)
        return _const(ctx, (arr.astype(np.int64) if k is I32 else arr).reshape(shape), k)
    v = ctx.importer.materialize(tv)
    if kind is I32:
        v = widen_i32(ctx, v)
    return reshape(ctx.g, v, shape)


def _zp_kind(ctx: NodeContext, idx: int, default: Kind) -> Kind:
    if not ctx.has_input(idx):
        return default
    tv = ctx.input(idx)
    return _elem_kind_of_array(ctx, np.asarray(tv.const), tv.kind) if tv.is_const else tv.kind


def _dyn_axis(ctx: NodeContext, rank: int, idxs: Sequence[int]) -> int:
    n = max((int(np.prod(ctx.input(i).shape, dtype=np.int64)) for i in idxs if ctx.has_input(i)), default=1)
    axis = int(ctx.attr("axis", 1))
    if n > 1:
        axis = axis + rank if axis < 0 else axis
        if not 0 <= axis < rank:
            raise ctx.error(f"axis {ctx.attr('axis', 1)} is out of range for rank {rank}")
    return axis if n > 1 else 0


def dyn_dequantize(ctx: NodeContext) -> SSAValue:
    """``(x - zp) * scale`` with run-time scale and/or zero point."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import MulOp, SubOp
    from nnkiln.dialects.tosa.ops_type_conversion import CastOp

    xv = ctx.input(0)
    rank = xv.rank
    axis = _dyn_axis(ctx, rank, (1, 2))
    fk = ctx.input(1).kind
    if fk not in (F32, F16):
        raise ctx.error(f"a {fk.value} scale is not supported")
    x = widen_i32(ctx, ctx.tensor(0))
    if ctx.has_input(2):
        x = _emit(ctx, SubOp, [x, _param(ctx, 2, rank, axis, I32)], I32)
    f = _emit(ctx, CastOp, [x], fk)
    return _emit(ctx, MulOp, [f, _param(ctx, 1, rank, axis)], fk)


def _dyn_round(ctx: NodeContext, v: SSAValue, zp: SSAValue | None, kind: Kind) -> SSAValue:
    """round_half_even(v) + zp saturated to ``kind`` (v float, zp int32 or None)."""
    from nnkiln.dialects.tosa.ops_activation import ClampOp
    from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp
    from nnkiln.dialects.tosa.ops_type_conversion import CastOp

    fk = _kind(v)
    big = float(1 << 20) if fk is F32 else 60000.0
    v = _emit(ctx, ClampOp, [v], fk, min_val=-big, max_val=big)
    q = _emit(ctx, CastOp, [v], I32)
    if zp is not None:
        q = _emit(ctx, AddOp, [q, zp], I32)
    lo, hi = _RANGE[kind]
    return narrow_i32(ctx, clamp_i32(ctx, q, lo, hi), kind)


def dyn_quantize(ctx: NodeContext, kind: Kind) -> SSAValue:
    """``saturate(round(x / scale) + zp)`` with run-time scale and/or zero point (x · RECIPROCAL(scale))."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import MulOp
    from nnkiln.dialects.tosa.ops_elementwise_unary import ReciprocalOp

    xv = ctx.input(0)
    rank = xv.rank
    axis = _dyn_axis(ctx, rank, (1, 2))
    x = ctx.tensor(0)
    fk = _kind(x)
    s = _param(ctx, 1, rank, axis)
    if _kind(s) is not fk:
        raise ctx.error("a scale of another float type than the input is not supported")
    r = _emit(ctx, ReciprocalOp, [s], fk)
    v = _emit(ctx, MulOp, [x, r], fk)
    zp = _param(ctx, 2, rank, axis, I32) if ctx.has_input(2) else None
    return _dyn_round(ctx, v, zp, kind)


def _centered_i16(ctx: NodeContext, idx: int, zp_idx: int, rank: int, axis: int) -> SSAValue:
    """``x - zp`` (8-bit x) as int16: exact, since both are 8-bit."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import SubOp
    from nnkiln.dialects.tosa.ops_type_conversion import CastOp

    tv = ctx.input(idx)
    kind = _elem_kind_of_array(ctx, np.asarray(tv.const), tv.kind) if tv.is_const else tv.kind
    if kind not in (I8, U8):
        raise ctx.error(f"{kind.value} operands are not supported (int8/uint8 only)")
    x = widen_i32(ctx, ctx.tensor(idx)) if not tv.is_const else _const(ctx, np.asarray(tv.const).astype(np.int64), I32)
    if ctx.has_input(zp_idx):
        x = _emit(ctx, SubOp, [x, _param(ctx, zp_idx, rank, axis, I32)], I32)
    return _emit(ctx, CastOp, [x], I16)


def dyn_matmul_i32(ctx: NodeContext, a_idx: int, az_idx: int, b_idx: int, bz_idx: int) -> SSAValue:
    """(A - a_zp) × (B - b_zp) in int32 for run-time zero points: int16 operands, MATMUL int16 → int48,
    RESCALE int48 → int32 (exact: |sum| < 2^31 for K < 33025). a_zp may be per row, b_zp per column."""
    from nnkiln.dialects.tosa.ops_tensor import MatMulOp

    av, bv = ctx.input(a_idx), ctx.input(b_idx)
    if av.rank < 2 or bv.rank < 2:
        raise ctx.error("integer matmuls of 1-D operands are not supported")
    a = _centered_i16(ctx, a_idx, az_idx, av.rank, av.rank - 2)
    b = _centered_i16(ctx, b_idx, bz_idx, bv.rank, bv.rank - 1)
    (m, k), (k2, n) = av.shape[-2:], bv.shape[-2:]
    if k != k2:
        raise ctx.error(f"inner dimensions differ: {list(av.shape)} x {list(bv.shape)}")
    a_b, b_b = math.prod(av.shape[:-2]), math.prod(bv.shape[:-2])
    batch = tuple(int(d) for d in np.broadcast_shapes(av.shape[:-2], bv.shape[:-2]))
    nb = math.prod(batch)
    if b_b == 1 and a_b == nb:
        a3, b3 = reshape(ctx.g, a, (1, nb * m, k)), reshape(ctx.g, b, (1, k, n))
    elif a_b == nb and b_b == nb:
        a3, b3 = reshape(ctx.g, a, (nb, m, k)), reshape(ctx.g, b, (nb, k, n))
    else:
        raise ctx.error("broadcasting batch dimensions of integer matmuls is not supported")
    y = _emit(ctx, MatMulOp, [a3, b3], Kind.I48, A_zp=0, B_zp=0)
    return reshape(ctx.g, rescale(ctx, y, I32), (*batch, m, n))


def dyn_conv_i32(ctx: NodeContext, x_idx: int, xz_idx: int, w_idx: int, wz_idx: int) -> tuple[SSAValue, int]:
    """conv(x - x_zp, w - w_zp) in int32 (channels last) for run-time weights / zero points:
    ``x - x_zp`` as int16 (CONV2D int16×int8 → int48), ``w`` shifted to int8 by ``off`` (128 for uint8)
    and the rest of the weight zero point added back as ``(off - w_zp[m]) · Σ_window(x - x_zp)``
    (the window sum is a CONV2D with a weight of ones). ``group`` must be 1."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp, MulOp, SubOp

    if int(ctx.attr("group", 1)) != 1:
        raise ctx.error("grouped integer convolutions with run-time weights or zero points are not supported")
    xv, wv = ctx.input(x_idx), ctx.input(w_idx)
    x16 = _centered_i16(ctx, x_idx, xz_idx, xv.rank, 1)
    wkind = _elem_kind_of_array(ctx, np.asarray(wv.const), wv.kind) if wv.is_const else wv.kind
    if wkind not in (I8, U8):
        raise ctx.error(f"{wkind.value} weights are not supported (int8/uint8 only)")
    w8, _ = to_signed(ctx, wv, 0)
    off = _SIGNED[wkind][1]
    acc, k = conv_i32(ctx, x16, 0, TensorValue.of(w8), 0, None)
    wz_const = ctx.input(wz_idx).const if ctx.has_input(wz_idx) else np.zeros(1, np.int64)
    if wz_const is not None and np.all(np.asarray(wz_const).astype(np.int64) == off):
        return acc, k
    ones = TensorValue.constant(np.ones((1, *wv.shape[1:]), np.int8))
    wsum, _ = conv_i32(ctx, x16, 0, ones, 0, None)  # [N, OH, OW, 1]
    if ctx.has_input(wz_idx):
        wz = _param(ctx, wz_idx, 4, 3, I32)  # [1, 1, 1, M] or [1, 1, 1, 1]
        corr = _emit(ctx, SubOp, [_scalar_const(ctx, off, I32, 4), wz], I32)
    else:
        corr = _scalar_const(ctx, off, I32, 4)
    return _emit(ctx, AddOp, [acc, _emit(ctx, MulOp, [wsum, corr], I32, shift=0)], I32), k


def _scale_product(ctx: NodeContext, idxs: Sequence[int], div_idx: int, rank: int, axis_of: dict[int, int]) -> SSAValue:
    """Π scale[i] / scale[div_idx] as a run-time float tensor broadcasting against rank ``rank``."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import MulOp
    from nnkiln.dialects.tosa.ops_elementwise_unary import ReciprocalOp

    vals = [_param(ctx, i, rank, axis_of.get(i, 0)) for i in idxs]
    p = vals[0]
    for v in vals[1:]:
        p = _emit(ctx, MulOp, [p, v], _kind(p))
    d = _param(ctx, div_idx, rank, 0)
    return _emit(ctx, MulOp, [p, _emit(ctx, ReciprocalOp, [d], _kind(d))], _kind(p))


def _dyn_requant(ctx: NodeContext, acc: SSAValue, factor: SSAValue, zp_idx: int, out_kind: Kind,
                 zp_offset: int = 0) -> SSAValue:
    """``saturate(rint(acc · factor) + zp)`` as ``out_kind``; with ``zp_offset`` the result is computed
    as ``value - zp_offset`` (a uint8 result held in int8)."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import MulOp, SubOp
    from nnkiln.dialects.tosa.ops_type_conversion import CastOp

    fk = _kind(factor)
    f = _emit(ctx, MulOp, [_emit(ctx, CastOp, [acc], fk), factor], fk)
    rank = len(_shape(acc))
    zp = _param(ctx, zp_idx, rank, 0, I32) if ctx.has_input(zp_idx) else None
    if zp_offset:
        off = _scalar_const(ctx, zp_offset, I32, rank)
        zp = _emit(ctx, SubOp, [zp, off], I32) if zp is not None else _emit(ctx, SubOp, [_scalar_const(ctx, 0, I32, rank), off], I32)
    return _dyn_round(ctx, f, zp, out_kind)
