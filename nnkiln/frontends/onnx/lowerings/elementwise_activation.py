"""Activation ONNX ops: Relu, LeakyRelu, PRelu, Elu, Selu, Celu, ThresholdedRelu, HardSigmoid, HardSwish,
Softplus, Softsign, Mish, Gelu (tanh approximation exactly; approximate="none" through approx.py's erf).

Activations composed of EXP/LOG/TANH are exact compositions of the ONNX formulas up to the rounding of
each TOSA op (see ``_elementwise_common``). Gelu with approximate="none" needs erf, which no finite
composition of TOSA ops computes exactly: it uses the measured float32 approximation of ``approx.py``.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind
from nnkiln.dialects.tosa.ops_activation import ClampOp, TanhOp
from nnkiln.dialects.tosa.ops_comparison import GreaterEqualOp, GreaterOp
from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp, MaximumOp, MinimumOp, SubOp
from nnkiln.dialects.tosa.ops_elementwise_unary import AbsOp, ExpOp, LogOp, ReciprocalOp
from nnkiln.frontends.onnx.importer import NodeContext
from nnkiln.frontends.onnx.lowerings import lowering
from nnkiln.frontends.onnx.lowerings._elementwise_common import (
    Result,
    all_const,
    binop,
    clamp,
    cmp,
    consts,
    emit,
    lower_unary,
    mul,
    operands,
    select,
    splat,
    unop,
)

# ---------------------------------------------------------------------------------------------------
# activations


@lowering("Relu")
def Relu(ctx: NodeContext) -> Result:
    """Relu: floats CLAMP(0, +inf); int8/int16 CLAMP(0, max); int32 MAXIMUM(x, 0)."""
    def build(x: SSAValue, k: Kind) -> SSAValue:
        if k.is_float:
            return clamp(ctx, x, 0.0, math.inf)
        if k in (Kind.I8, Kind.I16):
            return emit(ctx, ClampOp, [x], k, min_val=0, max_val=k.int_range[1])
        if k is Kind.I32:
            return binop(ctx, MaximumOp, x, splat(ctx, 0, x))
        raise ctx.error(f"{k.value} inputs are not supported")

    return lower_unary(ctx, lambda x: np.maximum(x, 0), build, float_only=False)


@lowering("LeakyRelu")
def LeakyRelu(ctx: NodeContext) -> Result:
    """LeakyRelu: ``MAXIMUM(x, x * alpha)`` for 0 < alpha <= 1, ``MINIMUM(x, x * alpha)`` for alpha > 1 (the
    same values, infinities and NaN included: x * alpha keeps x's sign and never makes a NaN there; two ops that
    the runtime fuses), else ``SELECT(x >= 0, x, x * alpha)``."""
    alpha = float(ctx.attr("alpha", 0.01))
    return lower_unary(ctx, lambda x: np.where(x >= 0, x, x * np.asarray(alpha, x.dtype)),
                       lambda x, k: _leaky(ctx, x, splat(ctx, alpha, x), alpha, alpha))


def _leaky(ctx: NodeContext, x: SSAValue, slope: SSAValue, lo: float, hi: float) -> SSAValue:
    """``x >= 0 ? x : x * slope`` for slopes in [lo, hi] (see LeakyRelu)."""
    if 0.0 < lo and hi <= 1.0:
        return binop(ctx, MaximumOp, x, mul(ctx, x, slope))
    if lo > 1.0 and math.isfinite(hi):
        return binop(ctx, MinimumOp, x, mul(ctx, x, slope))
    return select(ctx, cmp(ctx, GreaterEqualOp, x, splat(ctx, 0.0, x)), x, mul(ctx, x, slope))


@lowering("PRelu")
def PRelu(ctx: NodeContext) -> Result:
    """PRelu: ``SELECT(x < 0, x * slope, x)`` (slope broadcast to x); float with constant slopes all in (0, 1] or
    all above 1 (finite): MAXIMUM / MINIMUM of x and x * slope, as LeakyRelu."""
    if all_const(ctx):
        x, s = consts(ctx)[:2]
        return [np.where(x < 0, x * s, x).astype(x.dtype)]
    tvs = [ctx.input(0), ctx.input(1)]
    kind = tvs[0].kind
    if not (kind.is_float or kind is Kind.I32):
        raise ctx.error(f"{kind.value} inputs are not supported")
    x, s = operands(ctx, tvs, kind)
    if kind.is_float and tvs[1].is_const:
        slopes = np.asarray(tvs[1].const, np.float64)
        if slopes.size and np.isfinite(slopes).all() and (((slopes > 0) & (slopes <= 1)).all() or (slopes > 1).all()):
            return [_leaky(ctx, x, s, float(slopes.min()), float(slopes.max()))]
    zero = splat(ctx, 0, x)
    return [select(ctx, cmp(ctx, GreaterOp, zero, x), mul(ctx, x, s), x)]


def _expm1_times(ctx: NodeContext, x: SSAValue, factor: float) -> SSAValue:
    """``(EXP(x) - 1) * factor``."""
    e = binop(ctx, SubOp, unop(ctx, ExpOp, x), splat(ctx, 1.0, x))
    return e if factor == 1.0 else mul(ctx, e, splat(ctx, factor, x))


@lowering("Elu")
def Elu(ctx: NodeContext) -> Result:
    """Elu: ``SELECT(x > 0, x, (EXP(x) - 1) * alpha)``."""
    alpha = float(ctx.attr("alpha", 1.0))
    return lower_unary(ctx, lambda x: np.where(x > 0, x, (np.exp(x) - 1) * alpha),
                  lambda x, k: select(ctx, cmp(ctx, GreaterOp, x, splat(ctx, 0.0, x)), x, _expm1_times(ctx, x, alpha)))


@lowering("Selu")
def Selu(ctx: NodeContext) -> Result:
    """Selu: ``SELECT(x > 0, x * gamma, (EXP(x) - 1) * (alpha * gamma))``."""
    alpha = float(ctx.attr("alpha", 1.67326319217681884765625))
    gamma = float(ctx.attr("gamma", 1.05070102214813232421875))
    ag = float(np.float32(alpha) * np.float32(gamma))
    return lower_unary(ctx, lambda x: np.where(x > 0, x * gamma, (np.exp(x) - 1) * ag),
                  lambda x, k: select(ctx, cmp(ctx, GreaterOp, x, splat(ctx, 0.0, x)), mul(ctx, x, splat(ctx, gamma, x)),
                                       _expm1_times(ctx, x, ag)))


@lowering("Celu")
def Celu(ctx: NodeContext) -> Result:
    """Celu: ``MAXIMUM(x, 0) + MINIMUM(0, (EXP(x * (1/alpha)) - 1) * alpha)``."""
    alpha = float(ctx.attr("alpha", 1.0))

    def build(x: SSAValue, k: Kind) -> SSAValue:
        zero = splat(ctx, 0.0, x)
        scaled = x if alpha == 1.0 else mul(ctx, x, splat(ctx, 1.0 / alpha, x))
        neg = binop(ctx, MinimumOp, zero, _expm1_times(ctx, scaled, alpha))
        return binop(ctx, AddOp, binop(ctx, MaximumOp, x, zero), neg)

    return lower_unary(ctx, lambda x: np.maximum(x, 0) + np.minimum(0, alpha * (np.exp(x / alpha) - 1)), build)


@lowering("ThresholdedRelu")
def ThresholdedRelu(ctx: NodeContext) -> Result:
    """ThresholdedRelu: ``SELECT(x > alpha, x, 0)``."""
    alpha = float(ctx.attr("alpha", 1.0))
    return lower_unary(ctx, lambda x: np.where(x > alpha, x, 0),
                  lambda x, k: select(ctx, cmp(ctx, GreaterOp, x, splat(ctx, alpha, x)), x, splat(ctx, 0.0, x)))


def _hard_sigmoid(ctx: NodeContext, x: SSAValue, alpha: float, beta: float) -> SSAValue:
    lin = binop(ctx, AddOp, mul(ctx, x, splat(ctx, alpha, x)), splat(ctx, beta, x))
    return clamp(ctx, lin, 0.0, 1.0)


@lowering("HardSigmoid")
def HardSigmoid(ctx: NodeContext) -> Result:
    """HardSigmoid: ``CLAMP(x * alpha + beta, 0, 1)``."""
    alpha = float(ctx.attr("alpha", 0.2))
    beta = float(ctx.attr("beta", 0.5))
    return lower_unary(ctx, lambda x: np.clip(x * alpha + beta, 0, 1),
                  lambda x, k: _hard_sigmoid(ctx, x, alpha, beta))


@lowering("HardSwish")
def HardSwish(ctx: NodeContext) -> Result:
    """HardSwish: ``x * CLAMP(x * (1/6) + 0.5, 0, 1)``."""
    return lower_unary(ctx, lambda x: x * np.clip(x / 6 + 0.5, 0, 1),
                  lambda x, k: mul(ctx, x, _hard_sigmoid(ctx, x, 1.0 / 6.0, 0.5)))


def _softplus(ctx: NodeContext, x: SSAValue) -> SSAValue:
    return unop(ctx, LogOp, binop(ctx, AddOp, unop(ctx, ExpOp, x), splat(ctx, 1.0, x)))


@lowering("Softplus")
def Softplus(ctx: NodeContext) -> Result:
    """Softplus: ``LOG(EXP(x) + 1)`` (the ONNX formula; overflows to inf for large x like ONNX's)."""
    return lower_unary(ctx, lambda x: np.log(np.exp(x) + 1), lambda x, k: _softplus(ctx, x))


@lowering("Softsign")
def Softsign(ctx: NodeContext) -> Result:
    """Softsign: ``x * RECIPROCAL(ABS(x) + 1)``."""
    return lower_unary(ctx, lambda x: x / (1 + np.abs(x)),
                  lambda x, k: mul(ctx, x, unop(ctx, ReciprocalOp, binop(ctx, AddOp, unop(ctx, AbsOp, x), splat(ctx, 1.0, x)))))


@lowering("Mish")
def Mish(ctx: NodeContext) -> Result:
    """Mish: ``x * TANH(LOG(EXP(x) + 1))``."""
    return lower_unary(ctx, lambda x: x * np.tanh(np.log(np.exp(x) + 1)),
                  lambda x, k: mul(ctx, x, unop(ctx, TanhOp, _softplus(ctx, x))))


@lowering("Gelu")
def Gelu(ctx: NodeContext) -> Result:
    """Gelu: approximate="tanh": ``0.5 * x * (1 + TANH(sqrt(2/pi) * (x + 0.044715 * x^3)))`` (exact
    composition); approximate="none": ``0.5 * x * (1 + erf(x / sqrt(2)))`` with the documented float32
    erf approximation of ``approx.py`` (as the Erf op)."""
    approx = ctx.attr("approximate", "none")
    if approx == "none":
        from nnkiln.frontends.onnx.lowerings.approx import gelu_erf

        return gelu_erf(ctx)
    if approx != "tanh":
        raise ctx.error(f'approximate="{approx}" is not a Gelu mode ("none" or "tanh")')
    c = math.sqrt(2.0 / math.pi)

    def fold(x: np.ndarray) -> np.ndarray:
        return 0.5 * x * (1 + np.tanh(c * (x + 0.044715 * x ** 3)))

    def build(x: SSAValue, k: Kind) -> SSAValue:
        x3 = mul(ctx, mul(ctx, x, x), x)
        inner = mul(ctx, binop(ctx, AddOp, x, mul(ctx, x3, splat(ctx, 0.044715, x))), splat(ctx, c, x))
        t = binop(ctx, AddOp, unop(ctx, TanhOp, inner), splat(ctx, 1.0, x))
        return mul(ctx, mul(ctx, x, splat(ctx, 0.5, x)), t)

    return lower_unary(ctx, fold, build)
