"""Shared helpers of the elementwise ONNX lowerings (private module), and the family's conventions.

The family (default domain, opsets 7..latest) is split by topic: ``elementwise_math`` (arithmetic,
unary math, Clip), ``elementwise_activation``, ``elementwise_logic`` (logic, comparison, bit ops) and
``elementwise_cast`` (Cast, CastLike).

Conventions of this family:

- Broadcasting: ONNX broadcasts numpy-style; TOSA needs equal ranks, so run-time operands go through
  ``broadcast.to_rank`` / ``equal_ranks`` and constants are reshaped with numpy at import.
- Constant folding: when every input is an import-time constant, the result is computed with numpy
  using the ONNX semantics of the op (integer ``Div`` truncates, ``Cast`` float->int truncates, ...).
- Integer types: TOSA 0.30's ADD/SUB/MUL/MAXIMUM/MINIMUM/INTDIV/ABS/comparisons are int32 only.
  int8/int16/uint8/uint16 operands are widened to int32 exactly (CAST for int8/int16; an identity
  RESCALE for uint8, ``uint16 - 32768`` via RESCALE with ``input_zp = 32768`` for uint16), computed in
  int32 and narrowed back with ONNX's wrap-around (two's complement) semantics: CAST int32->int8/int16
  truncates to the low bits (TOSA CAST pseudocode ``truncate``), uint8/uint16 are masked with
  BITWISE_AND first and then rescaled. int64 run-time values are carried as int32 (importer decision);
  int32 overflow is a TOSA REQUIRE (unpredictable), whereas ONNX wraps.
- Float deviations (all within ONNX's rtol 1e-3 / atol 1e-7; none for the ops not listed):
  * ``Div`` (float): TOSA 0.30 has no float division. ``a / b`` is ``a * RECIPROCAL(b)``: two roundings
    (error <= ~1.5 ulp instead of 0.5 ulp); if ``1/b`` is subnormal (|b| > 2^126 for fp32) precision
    is lost further.  ``Mean`` multiplies the sum by ``1/n``, ``Softsign`` and ``Celu`` likewise.
  * ``Sqrt``: ``RECIPROCAL(RSQRT(x))`` (two roundings; exact special values: +-0, +inf, NaN for
    negatives).  ``pow(x, 0.5)`` was rejected because it maps -0 to +0 and -inf to +inf.
  * ``Round``: exact (round half to even, signed zeros kept) by FLOOR/compare/SELECT.
  * Activations composed of EXP/LOG/TANH (Elu, Selu, Celu, Softplus, Mish, Gelu(tanh)) are exact
    compositions of the ONNX formulas up to the rounding of each TOSA op.
- Cast fp16 -> fp32 (not a TOSA 0.30 CAST mode) is composed exactly from integer CASTs (``elementwise_cast._f16_to_f32``).
- The other float->float Casts (fp32 -> fp16/bf16, bf16 -> fp32, fp16 <-> bf16), float Mod, BitCast and Pow
  with an integer base have no exact TOSA 0.30 composition and are ``tosa.custom`` ``math.cast`` /
  ``math.fmod`` / ``math.mod`` / ``math.bitcast`` / ``math.pow_int`` (exact numpy kernels). ``math.div`` (the
  correctly rounded float quotient) serves DynamicQuantizeLinear and QuantizeLinear with a run-time scale, where
  ``x · RECIPROCAL(scale)`` would move rounding ties; Div itself stays ``a · RECIPROCAL(b)``.
- Not supported (errors say "not supported"): unsigned integer bases of Pow, exponent conversions that are
  not exact, uint32/uint64/double/string/float8/int4 tensors.
  Erf and Gelu(approximate="none") are the documented exception: a measured float32 approximation
  (approx.py). Sin/Cos/Tan/Asin/Acos/Atan/Sinh/Cosh/Asinh/Acosh/Atanh (float32) are ``tosa.custom`` ops
  ``math.<name>`` with a numpy kernel (``nnkiln.reference.custom_math``), as the spec allows for what TOSA
  cannot express.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind, element_type
from nnkiln.dialects.tosa.ops_activation import ClampOp
from nnkiln.dialects.tosa.ops_elementwise_binary import BitwiseAndOp, MulOp, SubOp
from nnkiln.dialects.tosa.ops_elementwise_ternary import SelectOp
from nnkiln.dialects.tosa.ops_type_conversion import CastOp
from nnkiln.frontends.common.arith import kind_of_value, np_dtype, shape_of
from nnkiln.frontends.common.broadcast import to_rank
from nnkiln.frontends.onnx.importer import NodeContext, TensorValue
from nnkiln.frontends.onnx.lowerings._integers import rescale, widen_i32

Result = list[TensorValue | SSAValue | np.ndarray]

TOSA_INTS = (Kind.I8, Kind.I16, Kind.I32)

# ---------------------------------------------------------------------------------------------------
# small helpers


def emit(ctx: NodeContext, cls: type, args: Sequence[SSAValue], kind: Kind, **attrs: object) -> SSAValue:
    return ctx.g.value(cls, list(args), element_type(kind), **attrs)


def math_custom(ctx: NodeContext, name: str, args: Sequence[SSAValue], kind: Kind) -> SSAValue:
    """One ``tosa.custom`` ``math.<name>`` (config "math") on ``args`` with a ``kind`` result of their broadcast
    shape; its numpy kernel (``nnkiln.reference.custom_math``) serves the interpreter and the runtime."""
    from xdsl.dialects.builtin import TensorType

    from nnkiln.dialects.tosa.ops_custom import CustomOp
    from nnkiln.reference import custom_math

    custom_math.register()
    shape = np.broadcast_shapes(*(shape_of(a) for a in args))
    return ctx.g.value(CustomOp, list(args), [TensorType(element_type(kind), list(shape))], identifier=f"math.{name}",
                       config="math", implementation_attrs="{}")


def const_array(ctx: NodeContext, arr: np.ndarray, kind: Kind) -> np.ndarray:
    """``arr`` converted to the numpy storage dtype of ``kind``; integers must fit."""
    arr = np.asarray(arr)
    dtype = np_dtype(kind)
    if kind.is_int and arr.dtype.kind in "iub" and arr.size:
        lo, hi = kind.int_range
        if int(arr.min()) < lo or int(arr.max()) > hi:
            raise ctx.error(f"a constant does not fit {kind.value} (TOSA 0.30 has no 64-bit integers); not supported")
    if kind is Kind.BOOL:
        return arr.astype(np.bool_)
    return arr.astype(dtype)


def const(ctx: NodeContext, arr: np.ndarray, kind: Kind) -> SSAValue:
    return ctx.g.const(const_array(ctx, arr, kind))


def scalar(ctx: NodeContext, value: float | int | bool, kind: Kind, rank: int) -> SSAValue:
    """A ``tosa.const`` holding ``value`` with shape ``[1] * rank``."""
    return const(ctx, np.full((1,) * rank, value), kind)


def value_kind(tvs: Sequence[TensorValue]) -> Kind:
    """The element kind of an op's operands: the first run-time operand's, else the first constant's."""
    for tv in tvs:
        if not tv.is_const:
            return tv.kind
    return tvs[0].kind


def narrow(ctx: NodeContext, v: SSAValue, kind: Kind) -> SSAValue:
    """An int32 value converted to ``kind`` with wrap-around (ONNX's two's complement semantics)."""
    if kind is Kind.I32:
        return v
    if kind in (Kind.I8, Kind.I16):
        return emit(ctx, CastOp, [v], kind)  # CAST narrowing truncates to the low bits
    rank = len(shape_of(v))
    if kind is Kind.U8:
        low = emit(ctx, BitwiseAndOp, [v, scalar(ctx, 0xFF, Kind.I32, rank)], Kind.I32)
        return rescale(ctx, emit(ctx, CastOp, [low], Kind.I16), Kind.U8)
    if kind is Kind.U16:
        low = emit(ctx, BitwiseAndOp, [v, scalar(ctx, 0xFFFF, Kind.I32, rank)], Kind.I32)
        centred = emit(ctx, SubOp, [low, scalar(ctx, 32768, Kind.I32, rank)], Kind.I32)
        return rescale(ctx, emit(ctx, CastOp, [centred], Kind.I16), Kind.U16, output_zp=32768)
    if kind is Kind.BOOL:
        return emit(ctx, CastOp, [v], Kind.BOOL)
    raise ctx.error(f"int32 values cannot be narrowed to {kind.value}; not supported")


def operands(ctx: NodeContext, tvs: Sequence[TensorValue], kind: Kind) -> list[SSAValue]:
    """The operands as IR values of equal rank in ``kind`` (constants converted with numpy; run-time
    integers of another kind widened to int32 when ``kind`` is int32)."""
    rank = max(tv.rank for tv in tvs)
    out = []
    for tv in tvs:
        if tv.is_const:
            arr = np.asarray(tv.const)
            out.append(const(ctx, arr.reshape((1,) * (rank - arr.ndim) + arr.shape), kind))
            continue
        v = ctx.importer.materialize(tv)
        if tv.kind is not kind:
            if kind is Kind.I32 and (tv.kind.is_int or tv.kind is Kind.BOOL):
                v = widen_i32(ctx, v)
            elif kind.is_float and tv.kind in TOSA_INTS:
                v = emit(ctx, CastOp, [v], kind)
            else:
                raise ctx.error(f"operands of types {tv.kind.value} and {kind.value} are not supported")
        out.append(to_rank(ctx.g, v, rank))
    return out


def all_const(ctx: NodeContext) -> bool:
    present = [v for v in ctx.inputs if v is not None]
    return bool(present) and all(v.is_const for v in present)


def consts(ctx: NodeContext) -> list[np.ndarray]:
    return [np.asarray(v.const) for v in ctx.inputs if v is not None]


def present_inputs(ctx: NodeContext) -> list[TensorValue]:
    return [v for v in ctx.inputs if v is not None]


def require_float(ctx: NodeContext, kind: Kind) -> None:
    if not kind.is_float:
        raise ctx.error(f"{kind.value} inputs are not supported (TOSA 0.30 computes this op on floats only)")


def int_domain(kind: Kind) -> Kind:
    """The kind integer arithmetic runs in: int32 for every integer kind."""
    return Kind.I32 if kind.is_int else kind


# ---------------------------------------------------------------------------------------------------
# building blocks in a fixed kind


def binop(ctx: NodeContext, cls: type, a: SSAValue, b: SSAValue, kind: Kind | None = None) -> SSAValue:
    return emit(ctx, cls, [a, b], kind if kind is not None else kind_of_value(a))


def unop(ctx: NodeContext, cls: type, a: SSAValue) -> SSAValue:
    return emit(ctx, cls, [a], kind_of_value(a))


def mul(ctx: NodeContext, a: SSAValue, b: SSAValue) -> SSAValue:
    return emit(ctx, MulOp, [a, b], kind_of_value(a))


def cmp(ctx: NodeContext, cls: type, a: SSAValue, b: SSAValue) -> SSAValue:
    return emit(ctx, cls, [a, b], Kind.BOOL)


def select(ctx: NodeContext, c: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
    return emit(ctx, SelectOp, [c, a, b], kind_of_value(a))


def splat(ctx: NodeContext, value: float | int, like: SSAValue) -> SSAValue:
    return scalar(ctx, value, kind_of_value(like), len(shape_of(like)))


def clamp(ctx: NodeContext, x: SSAValue, lo: float, hi: float) -> SSAValue:
    return emit(ctx, ClampOp, [x], kind_of_value(x), min_val=float(lo), max_val=float(hi))


# ---------------------------------------------------------------------------------------------------
# unary ops with constant folding


def lower_unary(ctx: NodeContext, fold: Callable[[np.ndarray], np.ndarray],
                build: Callable[[SSAValue, Kind], SSAValue], float_only: bool = True) -> Result:
    if all_const(ctx):
        x = consts(ctx)[0]
        with np.errstate(all="ignore"):
            return [np.asarray(fold(x)).astype(x.dtype) if x.dtype != np.bool_ else np.asarray(fold(x))]
    tv = ctx.input(0)
    if float_only:
        require_float(ctx, tv.kind)
    return [build(ctx.tensor(0), tv.kind)]
