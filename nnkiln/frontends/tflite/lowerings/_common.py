"""Helpers shared by the TFLite lowerings: fused activations, SAME/VALID padding, and TFLite's integer
requantization (``QuantizeMultiplier`` + ``MultiplyByQuantizedMultiplier``) as one TOSA RESCALE.

TFLite computes ``MultiplyByQuantizedMultiplier(x, m, e)`` (``m`` a Q31 multiplier in [2^30, 2^31), ``e`` the
exponent from ``frexp``) as ``RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x·2^max(e,0), m), max(-e,0))``:
a rounding at bit 31 then a second rounding, half away from zero. TOSA's RESCALE with ``double_round`` and
``shift = 31 - e`` computes exactly that (spec §1.9.2 ``apply_scale_32``; the extra ±2^30 reproduces the first
rounding when shift > 31). The multiplier is quantized from the real scale computed in double precision from the
float32 scales, as TFLite does, so the integer results are bit-identical to TFLite's reference kernels.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind, element_type
from nnkiln.frontends.common.arith import kind_of_value, shape_of
from nnkiln.frontends.common.broadcast import reshape
from nnkiln.frontends.common.graph import GraphBuilder

# ActivationFunctionType of schema.fbs
NONE, RELU, RELU_N1_TO_1, RELU6, TANH, SIGN_BIT = range(6)


def quantize_multiplier(real: float) -> tuple[int, int]:
    """TFLite's ``QuantizeMultiplier``: (Q31 multiplier, exponent) with real ≈ m·2^(e-31)."""
    if real == 0.0:
        return 0, 0
    q, e = math.frexp(real)
    m = math.floor(q * (1 << 31) + 0.5)  # TfLiteRound: half away from zero (q > 0)
    if m == 1 << 31:
        m //= 2
        e += 1
    if e < -31:
        return 0, 0
    return int(m), int(e)


def rescale_tfl(g: GraphBuilder, x: SSAValue, out_kind: Kind, scales: float | Sequence[float], *, input_zp: int = 0,
                output_zp: int = 0) -> SSAValue:
    """One RESCALE computing TFLite's ``MultiplyByQuantizedMultiplier(x - input_zp, m, e) + output_zp`` (per
    channel along the last axis when ``scales`` has several values), saturated to ``out_kind``."""
    vals = [float(s) for s in np.atleast_1d(np.asarray(scales, dtype=np.float64))]
    pairs = [quantize_multiplier(s) for s in vals]
    return rescale_raw(g, x, out_kind, [m for m, _ in pairs], [e for _, e in pairs], input_zp=input_zp,
                       output_zp=output_zp)


def rescale_raw(g: GraphBuilder, x: SSAValue, out_kind: Kind, multipliers: Sequence[int], exponents: Sequence[int],
                *, input_zp: int = 0, output_zp: int = 0) -> SSAValue:
    """RESCALE by TFLite (Q31 multiplier, exponent) pairs as given (double rounding, ``shift = 31 - e``)."""
    from nnkiln.dialects.tosa.ops_type_conversion import RescaleOp

    per_channel = len(multipliers) > 1
    mults, shifts = [], []
    for m, e in zip(multipliers, exponents):
        if m == 0:
            m, e = 0, 0
        shift = 31 - e
        if not 2 <= shift <= 62:
            raise g.error(f"requantization multiplier {m}·2^{e - 31} is outside what a 32-bit RESCALE can express")
        mults.append(int(m))
        shifts.append(int(shift))
    shape = shape_of(x)
    flat = shape if 1 <= len(shape) <= 4 else (
        (int(np.prod(shape[:-1])), shape[-1]) if per_channel and len(shape) > 1 else (int(np.prod(shape)),))
    y = g.value(RescaleOp, [reshape(g, x, flat)], element_type(out_kind), input_zp=int(input_zp),
                output_zp=int(output_zp), multiplier=mults, shift=shifts, scale32=True, double_round=True,
                per_channel=per_channel)
    return reshape(g, y, shape)


def quantized_act_range(act: int, scale: float, zp: int, kind: Kind = Kind.I8) -> tuple[int, int]:
    """TFLite's ``CalculateActivationRangeQuantized``: the integer clamp bounds of a fused activation."""
    qmin, qmax = (-128, 127) if kind is Kind.I8 else ((-32768, 32767) if kind is Kind.I16 else (0, 255))

    def qr(v: float) -> int:  # zero_point + TfLiteRound(f / scale), the division in float32
        r = float(np.float32(v) / np.float32(scale))
        return zp + int(math.copysign(math.floor(abs(r) + 0.5), r))

    if act == RELU:
        return max(qmin, qr(0.0)), qmax
    if act == RELU6:
        return max(qmin, qr(0.0)), min(qmax, qr(6.0))
    if act == RELU_N1_TO_1:
        return max(qmin, qr(-1.0)), min(qmax, qr(1.0))
    return qmin, qmax


def fused_activation(ctx: object, x: SSAValue, act: int | None = None) -> SSAValue:
    """Apply the op's ``fused_activation_function`` (TFLite's ActivationFunctionType) to ``x``: a CLAMP (float
    bounds, or the quantized bounds of the output tensor), TANH, or nothing."""
    from nnkiln.dialects.tosa.ops_activation import ClampOp, TanhOp
    from nnkiln.frontends.tflite.importer import OpContext

    assert isinstance(ctx, OpContext)
    if act is None:
        act = int(ctx.opt("FusedActivationFunction", NONE))
    if act == NONE:
        return x
    g = ctx.g
    et = x.type.element_type  # type: ignore[attr-defined]
    kind = kind_of_value(x)
    if act == TANH and kind.is_float:
        return g.value(TanhOp, [x], et)
    if act not in (RELU, RELU6, RELU_N1_TO_1):
        raise ctx.error(f"fused activation {act} is not supported")
    if kind.is_float:
        lo, hi = {RELU: (0.0, 3.4028234663852886e38), RELU6: (0.0, 6.0), RELU_N1_TO_1: (-1.0, 1.0)}[act]
        return g.value(ClampOp, [x], et, min_val=lo, max_val=hi)
    q = ctx.quant(ctx.tout())
    lo_i, hi_i = quantized_act_range(act, float(q.scale[0]), int(q.zero_point[0]), kind)
    if (lo_i, hi_i) == quantized_act_range(NONE, 1.0, 0, kind):
        return x
    return g.value(ClampOp, [x], et, min_val=lo_i, max_val=hi_i)


def same_padding(size: int, kernel: int, stride: int, dilation: int) -> tuple[int, int, int]:
    """TFLite's SAME padding (``ComputePaddingHeightWidth``): (before, after, output size)."""
    eff = (kernel - 1) * dilation + 1
    out = (size + stride - 1) // stride
    total = max((out - 1) * stride + eff - size, 0)
    return total // 2, total - total // 2, out


def window_pads(ctx: object, shape: Sequence[int], kernel: Sequence[int], strides: Sequence[int],
                dilations: Sequence[int]) -> tuple[list[tuple[int, int]], list[int]]:
    """Per spatial axis (H, W) the (before, after) padding of the op's ``Padding`` option, with the after padding
    adjusted so TOSA's exact output-size division holds (negative: rows never read, trimmed by the caller)."""
    from nnkiln.frontends.tflite.importer import OpContext

    assert isinstance(ctx, OpContext)
    pairs: list[tuple[int, int]] = []
    outs = []
    same = int(ctx.opt("Padding", 0)) == 0
    for size, k, s, d in zip(shape, kernel, strides, dilations):
        eff = (k - 1) * d + 1
        if same:
            b, _, out = same_padding(size, k, s, d)
        else:
            b, out = 0, (size - eff) // s + 1
        need = (out - 1) * s + eff - size - b
        pairs.append((b, need))
        outs.append(out)
    return pairs, outs
