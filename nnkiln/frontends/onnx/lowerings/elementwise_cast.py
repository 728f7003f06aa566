"""Cast and CastLike (ONNX float->int truncation, int64 carried as int32, fp16 -> fp32 composed exactly).

The other float->float Casts (fp32 -> fp16/bf16 needs rounding at an exponent-dependent bit position, which
TOSA 0.30 cannot express without one SELECT per exponent band; bf16 -> fp32 values exceed the int32 range of
the integer split used for fp16) are one ``tosa.custom`` ``math.cast`` each (``_float_cast``: numpy's
round-to-nearest-even conversion, the kernel shared by the reference interpreter and the runtime).
Not supported (errors say "not supported"): uint32/uint64/double/string/float8/int4 tensors. See
``_elementwise_common`` for the family conventions.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind
from nnkiln.dialects.tosa.ops_comparison import EqualOp, GreaterOp
from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp, BitwiseAndOp, LogicalAndOp, SubOp
from nnkiln.dialects.tosa.ops_elementwise_unary import LogicalNotOp, ReciprocalOp
from nnkiln.dialects.tosa.ops_type_conversion import CastOp
from nnkiln.frontends.common.arith import np_dtype, shape_of, trunc_toward_zero
from nnkiln.frontends.onnx.importer import NodeContext, TensorValue
from nnkiln.frontends.onnx.lowerings import lowering
from nnkiln.frontends.onnx.lowerings._elementwise_common import (
    TOSA_INTS,
    Result,
    binop,
    cmp,
    emit,
    math_custom,
    mul,
    narrow,
    scalar,
    select,
    splat,
    unop,
)
from nnkiln.frontends.onnx.lowerings._integers import widen_i32

# ---------------------------------------------------------------------------------------------------
# Cast, CastLike


def _onnx_target(ctx: NodeContext, to: int) -> tuple[Kind, np.dtype]:
    import onnx
    from onnx import helper

    from nnkiln.frontends.onnx.importer import kind_of_onnx_type

    kind = kind_of_onnx_type(to)
    if kind is None:
        name = onnx.TensorProto.DataType.Name(to) if to in onnx.TensorProto.DataType.values() else str(to)
        raise ctx.error(f"casting to {name} is not supported (no TOSA 0.30 equivalent)")
    return kind, np.dtype(helper.tensor_dtype_to_np_dtype(to))


def _f16_to_f32(ctx: NodeContext, x: SSAValue) -> SSAValue:
    """fp16 -> fp32 exactly without a float->float CAST: split ``x`` into integer pieces.

    ``n1 = CAST<i32>(x)`` (an integer within 1 of x; |x| <= 65504 fits), ``f1 = x - n1`` (exact in fp16,
    a multiple of 2^-24 with |f1| < 1), ``m2 = f1 * 2^15`` (exact, < 32768), ``n2 = CAST<i32>(m2)``,
    ``f2 = m2 - n2`` (a multiple of 2^-9), ``n3 = f2 * 2^9`` (an integer). Then
    ``x = n1 + n2 * 2^-15 + n3 * 2^-24`` and every partial sum is representable in fp32 (for |x| >= 1,
    f1 is a multiple of 2^-10 so n3 = 0; for |x| < 1 the sum spans < 24 bits), so the fp32 additions
    are exact. NaN, +-inf and -0 (lost by the integer split) are restored with SELECT.
    """
    rank = len(shape_of(x))

    def c16(v: float) -> SSAValue:
        return scalar(ctx, v, Kind.F16, rank)

    def c32(v: float) -> SSAValue:
        return scalar(ctx, v, Kind.F32, rank)

    n1 = emit(ctx, CastOp, [x], Kind.I32)
    f1 = binop(ctx, SubOp, x, emit(ctx, CastOp, [n1], Kind.F16))
    m2 = mul(ctx, f1, c16(2.0 ** 15))
    n2 = emit(ctx, CastOp, [m2], Kind.I32)
    f2 = binop(ctx, SubOp, m2, emit(ctx, CastOp, [n2], Kind.F16))
    n3 = emit(ctx, CastOp, [mul(ctx, f2, c16(2.0 ** 9))], Kind.I32)
    r = emit(ctx, CastOp, [n1], Kind.F32)
    r = binop(ctx, AddOp, r, mul(ctx, emit(ctx, CastOp, [n2], Kind.F32), c32(2.0 ** -15)))
    r = binop(ctx, AddOp, r, mul(ctx, emit(ctx, CastOp, [n3], Kind.F32), c32(2.0 ** -24)))
    r = select(ctx, unop(ctx, LogicalNotOp, cmp(ctx, EqualOp, x, x)), c32(math.nan), r)
    r = select(ctx, cmp(ctx, EqualOp, x, c16(math.inf)), c32(math.inf), r)
    r = select(ctx, cmp(ctx, EqualOp, x, c16(-math.inf)), c32(-math.inf), r)
    neg_zero = binop(ctx, LogicalAndOp, cmp(ctx, EqualOp, x, c16(0.0)),
                    cmp(ctx, GreaterOp, c16(0.0), unop(ctx, ReciprocalOp, x)))
    return select(ctx, neg_zero, c32(-0.0), r)


def _np_cast(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    if dtype == np.bool_:
        return x.astype(np.bool_)
    if x.dtype.kind == "f" and dtype.kind in "iu":
        with np.errstate(invalid="ignore"):
            return np.trunc(x.astype(np.float64)).astype(dtype)
    return x.astype(dtype)


def _float_cast(ctx: NodeContext, x: SSAValue, src: Kind, target: Kind) -> SSAValue:
    """A float -> float conversion TOSA 0.30's CAST lacks (f32 -> f16 / bf16, bf16 -> f32, f16 <-> bf16): one
    ``tosa.custom`` ``math.cast`` whose kernel converts with round to nearest even, overflow to ±inf, NaN
    kept (numpy / ml_dtypes ``astype``: what ONNX specifies for these types)."""
    if target not in (Kind.F32, Kind.F16, Kind.BF16) or src not in (Kind.F32, Kind.F16, Kind.BF16):
        raise ctx.error(f"casting {src.value} to {target.value} is not supported")
    return math_custom(ctx, "cast", [x], target)


def _unsigned_scalar(ctx: NodeContext, tv: TensorValue, target: Kind) -> TensorValue:
    """A run-time rank-0 value cast to uint8 / uint16, which TOSA 0.30 cannot hold (RESCALE takes ranks 1..4,
    RESHAPE has no unsigned types): computed in int32 as the cast's exact value (float truncated toward zero,
    then wrapped to the target's range like the ranked casts), as ``TensorValue.wide``, which graph outputs and
    quantization parameters read."""
    if tv.wide is not None:
        x = tv.wide
    elif tv.kind.is_float:
        x = emit(ctx, CastOp, [trunc_toward_zero(ctx.g, ctx.importer.materialize(tv))], Kind.I32)
    else:
        x = widen_i32(ctx, ctx.importer.materialize(tv))
    mask = 0xFF if target is Kind.U8 else 0xFFFF
    wrapped = emit(ctx, BitwiseAndOp, [x, scalar(ctx, mask, Kind.I32, 0)], Kind.I32)
    return TensorValue((), target, wide=wrapped)


def _cast(ctx: NodeContext, tv: TensorValue, target: Kind, dtype: np.dtype) -> Result:
    """ONNX Cast to ``target`` (exact; see the module docstring for what is not supported)."""
    if tv.is_const:
        return [_np_cast(np.asarray(tv.const), dtype)]
    if target in (Kind.U8, Kind.U16) and (tv.rank == 0 or tv.wide is not None):
        return [_unsigned_scalar(ctx, tv, target)]
    if tv.wide is not None:  # an unsigned value held in int32 (the same values): cast those
        tv = TensorValue.of(tv.wide)
    src = tv.kind
    x = ctx.importer.materialize(tv)
    if src is target:
        return [x]
    if src is Kind.F16 and target is Kind.F32:
        return [_f16_to_f32(ctx, x)]
    if src.is_float and target.is_float:
        return [_float_cast(ctx, x, src, target)]
    if target is Kind.BOOL:
        if src.is_float:
            return [unop(ctx, LogicalNotOp, cmp(ctx, EqualOp, x, splat(ctx, 0.0, x)))]
        v = x if src in TOSA_INTS else widen_i32(ctx, x)
        return [emit(ctx, CastOp, [v], Kind.BOOL)]
    if src.is_float:
        # ONNX truncates toward zero; CAST rounds to nearest, so round first: CEIL below 0, FLOOR above.
        t = trunc_toward_zero(ctx.g, x)
        if target in TOSA_INTS:
            return [emit(ctx, CastOp, [t], target)]
        return [narrow(ctx, emit(ctx, CastOp, [t], Kind.I32), target)]
    # src is an integer or bool
    if target.is_float:
        v = x if src in TOSA_INTS else widen_i32(ctx, x)
        return [emit(ctx, CastOp, [v], target)]
    if src in TOSA_INTS + (Kind.BOOL,) and target in TOSA_INTS:
        return [emit(ctx, CastOp, [x], target)]
    return [narrow(ctx, widen_i32(ctx, x), target)]


@lowering("Cast")
def Cast(ctx: NodeContext) -> Result:
    """Cast: CAST, with ONNX's float->int truncation composed as ``SELECT(x < 0, CEIL, FLOOR)`` before
    CAST (exact), int64 targets carried as int32, float->bool as ``x != 0``, bool->float via int32.
    fp16->fp32 is composed exactly (``_f16_to_f32``); other float<->float casts are a ``math.cast`` custom
    op (see the module docstring)."""
    to = ctx.attr("to")
    if to is None:
        raise ctx.error("attribute 'to' is required")
    ctx.attr("saturate")
    ctx.attr("round_mode")
    target, dtype = _onnx_target(ctx, int(to))
    return _cast(ctx, ctx.input(0), target, dtype)


@lowering("BitCast")
def BitCast(ctx: NodeContext) -> Result:
    """BitCast (opset 26): the same bits read as another type of the same size (f32 <-> i32, i8 <-> u8,
    u16 <-> i16, bool -> u8). TOSA 0.30 has no bit reinterpretation: one ``tosa.custom`` ``math.bitcast``
    (a numpy view). Types carried in another width (int64, float64) and targets of bool are not supported."""
    from nnkiln.reference import custom_math

    to = ctx.attr("to")
    if to is None:
        raise ctx.error("attribute 'to' is required")
    target, dtype = _onnx_target(ctx, int(to))
    tv = ctx.input(0)
    store_in, store_out = np.dtype(np_dtype(tv.kind)), np.dtype(np_dtype(target))
    if store_out.itemsize != dtype.itemsize:
        raise ctx.error(f"bit casting to {dtype} is not supported ({dtype} values are carried as {target.value})")
    if store_in.itemsize != store_out.itemsize or target is Kind.BOOL:
        raise ctx.error(f"bit casting {tv.kind.value} to {dtype} is not supported (different sizes or a bool target)")
    if tv.is_const:
        return [custom_math.bitcast(np.asarray(tv.const, store_in), store_out)]
    return [math_custom(ctx, "bitcast", [ctx.importer.materialize(tv)], target)]


@lowering("CastLike")
def CastLike(ctx: NodeContext) -> Result:
    """CastLike: Cast to the element type of input 1."""
    ctx.attr("saturate")
    ctx.attr("round_mode")
    like = ctx.input(1)
    dtype = np.asarray(like.const).dtype if like.is_const else np_dtype(like.kind)
    return _cast(ctx, ctx.input(0), like.kind, np.dtype(dtype))
