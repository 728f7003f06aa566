"""Quantization arithmetic shared by frontends (spec §1.9.2 "precision scaling").

``compute_scale_32`` / ``compute_scale_16`` turn a real scale into TOSA's (multiplier, shift) pair as
the TOSA lowerings document's ``computeMultiplierAndShift`` does: scale = m·2^-n with 1 <= m < 2 (via
frexp), multiplier = round(m·2^30) (2^14 for 16-bit) with shift = 30 + n (14 + n), the multiplier
renormalised when rounding reaches 2^31, and shifts outside [2, 62] clamped by moving the surplus into
the multiplier (scales below 2^-32 saturate to the smallest representable).

Framework-neutral integer building blocks (used by the ONNX QDQ fusion / QLinear lowerings and the NNEF
integer path; they take a ``GraphBuilder`` and raise ``QuantError`` — a ValueError — that the frontends turn
into their own diagnostics):

* ``rescale``: one RESCALE (spec §2.13.2) by a real scale (per-tensor or per-channel along the last axis),
  (multiplier, shift) from ``compute_scale_32`` (``compute_scale_16`` for int48 inputs), single rounding;
  scale 1 is the exact identity (multiplier 2^30, shift 30); other ranks than 1..4 are reshaped around it.
* ``requant_i8``: RESCALE to int8 with an output zero point, then an optional CLAMP to quantized bounds
  (fused ReLU / clamp).
* ``conv_i32_cl``: int8 (or int16) channels-last CONV2D / DEPTHWISE_CONV2D / grouped CONV2D+CONCAT with
  zero points, accumulating in int32 (int48 for int16 inputs, rescaled to int32).
* ``add_common_scale``: the quantized ADD of the TOSA lowerings of ``tfl.add``: both int8 operands RESCALEd
  to int32 at the common scale ``2·max(s_a, s_b) / 2^20``, then ADD in int32.
* ``bias_i32``: a real bias in units of the accumulator scale (``rint(b / (s_in·s_w))``), or None when it
  does not fit int32.
* ``AffineParams``: ``per_tensor`` / ``s`` / ``z`` of a record holding ``scale`` and ``zp`` arrays.
* ``softmax_i8``: softmax of int8 codes in integer arithmetic (exp table, CLZ-normalised INT_DIV, RESCALE).
* ``qparams_from_range``: NNEF-style ``linear_quantize(min, max, bits)`` ranges as (scale, zero point) of
  the int8 code ``k - 2^(bits-1)`` (see the function).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from xdsl.ir import SSAValue

    from nnkiln.dialects.tosa.base import Kind
    from nnkiln.frontends.common.graph import GraphBuilder


class AffineParams:
    """Mixin for the frontends' records of an affine-quantized tensor (``real = (q - zp)·scale``) that hold
    ``scale`` and ``zp`` as numpy arrays (one element per tensor, or one per channel)."""

    scale: np.ndarray
    zp: np.ndarray

    @property
    def per_tensor(self) -> bool:
        return self.scale.size == 1 and self.zp.size == 1

    @property
    def s(self) -> float:
        """The (first) scale as a float."""
        return float(self.scale.reshape(-1)[0])

    @property
    def z(self) -> int:
        """The (first) zero point as an int."""
        return int(self.zp.reshape(-1)[0])


class QuantError(ValueError):
    """A quantization parameter TOSA 0.30 cannot express (the frontends add their own context)."""


def _compute_scale(scale: float, bits: int) -> tuple[int, int]:
    if not (scale > 0.0 and math.isfinite(scale)):
        raise ValueError(f"scale must be positive and finite, got {scale}")
    frac_bits = bits - 2
    mantissa, exponent = math.frexp(scale)  # scale = mantissa * 2**exponent, 0.5 <= mantissa < 1
    multiplier = math.floor(mantissa * (1 << (frac_bits + 1)) + 0.5)  # std::round: half away from zero
    if multiplier == 1 << (frac_bits + 1):
        multiplier //= 2
        exponent += 1
    shift = frac_bits + 1 - exponent
    # multiplier is now in [2^frac_bits, 2^(frac_bits+1)); scale ~= multiplier * 2^-shift
    while shift > 62:
        multiplier = (multiplier + 1) >> 1
        shift -= 1
    while shift < 2:
        if multiplier << 1 >= 1 << (bits - 1):
            raise ValueError(f"scale {scale} is too large for a {bits}-bit multiplier")
        multiplier <<= 1
        shift += 1
    return int(multiplier), int(shift)


def compute_scale_32(scale: float) -> tuple[int, int]:
    """(multiplier, shift) with a 32-bit multiplier: scale ≈ multiplier · 2^-shift."""
    return _compute_scale(scale, 32)


def compute_scale_16(scale: float) -> tuple[int, int]:
    """(multiplier, shift) with a 16-bit multiplier: scale ≈ multiplier · 2^-shift."""
    return _compute_scale(scale, 16)


# ------------------------------------------------------------------------------------------------
# IR building blocks (see the module docstring)

ADD_SHIFT = 20
"""Extra fraction bits of the common int32 scale of a quantized ADD (as the tfl.add lowering)."""

I8_RANGE = (-128, 127)


def rescale(g: GraphBuilder, x: SSAValue, out_kind: Kind, *, input_zp: int = 0, output_zp: int = 0,
            scale: float | Sequence[float] = 1.0, per_channel: bool = False) -> SSAValue:
    """RESCALE of ``x`` by a real ``scale`` (a list along the last axis if ``per_channel``)."""
    from nnkiln.dialects.tosa.base import Kind, element_type
    from nnkiln.dialects.tosa.ops_type_conversion import RescaleOp
    from nnkiln.frontends.common.arith import kind_of_value, shape_of
    from nnkiln.frontends.common.broadcast import reshape

    scales = [float(s) for s in (scale if isinstance(scale, (list, tuple, np.ndarray)) else [scale])]
    if per_channel and len(set(scales)) == 1:
        per_channel, scales = False, scales[:1]
    scale32 = kind_of_value(x) is not Kind.I48
    try:
        if scale32:
            pairs = [compute_scale_32(s) if s != 1.0 else (1 << 30, 30) for s in scales]
        else:
            pairs = [compute_scale_16(s) if s != 1.0 else (1 << 14, 14) for s in scales]
    except ValueError as err:
        raise QuantError(f"a requantization scale is not supported: {err}") from None
    shape = shape_of(x)
    if 1 <= len(shape) <= 4:
        flat = shape
    elif per_channel:
        flat = (int(np.prod(shape[:-1], dtype=np.int64)), shape[-1]) if len(shape) > 1 else (1, 1)
    else:
        flat = (int(np.prod(shape, dtype=np.int64)),)
    unsigned = (Kind.U8, Kind.U16)
    if flat != shape and (kind_of_value(x) in unsigned or out_kind in unsigned):
        raise QuantError(f"unsigned tensors of rank {len(shape)} are not supported (RESCALE takes ranks 1..4 "
                         "and RESHAPE has no unsigned types)")
    xin = reshape(g, x, flat)
    y = g.value(RescaleOp, [xin], element_type(out_kind), input_zp=int(input_zp), output_zp=int(output_zp),
                multiplier=[m for m, _ in pairs], shift=[s for _, s in pairs], scale32=scale32,
                double_round=False, per_channel=per_channel)
    return reshape(g, y, shape)


def requant_i8(g: GraphBuilder, x: SSAValue, input_zp: int, scale: float | Sequence[float], out_zp: int,
               per_channel: bool = False, qlo: int | None = None, qhi: int | None = None) -> SSAValue:
    """RESCALE int8/int32 ``x`` (zero point ``input_zp``; must be 0 for int32) to int8 with zero point
    ``out_zp``, then CLAMP to the quantized bounds [qlo, qhi] when they are inside the int8 range. An
    int8 input with scale 1 and equal zero points is passed through."""
    from nnkiln.dialects.tosa.base import Kind, element_type
    from nnkiln.dialects.tosa.ops_activation import ClampOp
    from nnkiln.frontends.common.arith import kind_of_value

    same = (not per_channel and not isinstance(scale, (list, tuple, np.ndarray)) and abs(float(scale) - 1.0) < 1e-12
            and input_zp == out_zp and kind_of_value(x) is Kind.I8)
    y = x if same else rescale(g, x, Kind.I8, input_zp=input_zp, output_zp=out_zp, scale=scale,
                               per_channel=per_channel)
    lo = I8_RANGE[0] if qlo is None else max(I8_RANGE[0], min(I8_RANGE[1], int(qlo)))
    hi = I8_RANGE[1] if qhi is None else min(I8_RANGE[1], max(I8_RANGE[0], int(qhi)))
    if lo > I8_RANGE[0] or hi < I8_RANGE[1]:
        y = g.value(ClampOp, [y], element_type(Kind.I8), min_val=lo, max_val=hi)
    return y


def conv_i32_cl(g: GraphBuilder, xl: SSAValue, x_zp: int, weight: np.ndarray | SSAValue, w_zp: int,
                bias: np.ndarray, pad: Sequence[int], strides: Sequence[int], dilations: Sequence[int],
                group: int) -> SSAValue:
    """Integer convolution of channels-last ``xl`` [N, H, W, C] (int8, or int16 with int48 accumulation)
    by ``weight`` [M, C/group, KH, KW] (int8 numpy or IR value) with int32 ``bias`` [M]: the int32
    accumulator [N, OH, OW, M]. ``pad`` is TOSA's [top, bottom, left, right] (exact division already
    arranged by the caller). group 1 → CONV2D, group == C → DEPTHWISE_CONV2D, else per-group CONV2D + CONCAT."""
    from nnkiln.dialects.tosa.base import Kind, element_type
    from nnkiln.dialects.tosa.ops_data_layout import ConcatOp
    from nnkiln.dialects.tosa.ops_tensor import Conv2DOp, DepthwiseConv2DOp
    from nnkiln.frontends.common.arith import kind_of_value, shape_of
    from nnkiln.frontends.common.broadcast import reshape
    from nnkiln.frontends.common.layout import transpose, transpose_const
    from nnkiln.frontends.common.nn import slice_value

    c_in = shape_of(xl)[3]
    wshape = tuple(weight.shape) if isinstance(weight, np.ndarray) else shape_of(weight)
    m_out, kernel = wshape[0], list(wshape[2:])
    acc = Kind.I48 if kind_of_value(xl) is Kind.I16 else Kind.I32
    acc_t = element_type(acc)
    b = np.asarray(bias).astype(np.int64).reshape(-1)

    def cst(a: np.ndarray, kind: Kind) -> SSAValue:
        from xdsl.dialects.builtin import TensorType

        dt = {Kind.I8: np.int8, Kind.I32: np.int32, Kind.I48: np.int64}[kind]
        arr = np.ascontiguousarray(np.asarray(a).astype(dt))
        return g.const(arr, TensorType(element_type(kind), arr.shape))

    def w_as(perm: Sequence[int], shape: Sequence[int]) -> SSAValue:
        if isinstance(weight, np.ndarray):
            return cst(transpose_const(weight.reshape(shape), perm), Kind.I8)
        return transpose(g, reshape(g, weight, shape), perm)

    attrs = dict(pad=list(pad), stride=list(strides), dilation=list(dilations), input_zp=int(x_zp),
                 weight_zp=int(w_zp))
    w4 = (m_out, wshape[1], *kernel)
    if group == 1:
        y = g.value(Conv2DOp, [xl, w_as((0, 2, 3, 1), w4), cst(b, acc)], acc_t, **attrs)
    elif group == c_in:
        y = g.value(DepthwiseConv2DOp, [xl, w_as((2, 3, 0, 1), (c_in, m_out // c_in, *kernel)), cst(b, acc)],
                    acc_t, **attrs)
    else:
        cg, mg = c_in // group, m_out // group
        w = w_as((0, 2, 3, 1), w4)
        shp, wsh = shape_of(xl), shape_of(w)
        parts = []
        for gi in range(group):
            xg = slice_value(g, xl, [0, 0, 0, gi * cg], [shp[0], shp[1], shp[2], cg])
            wg = slice_value(g, w, [gi * mg, 0, 0, 0], [mg, *wsh[1:]])
            part = g.value(Conv2DOp, [xg, wg, cst(b[gi * mg:(gi + 1) * mg], acc)], acc_t, **attrs)
            # CONCAT has no int48 form: each int48 part becomes int32 first
            parts.append(part if acc is Kind.I32 else rescale(g, part, Kind.I32))
        return g.value(ConcatOp, [parts], element_type(Kind.I32), axis=3)
    if acc is not Kind.I32:
        y = rescale(g, y, Kind.I32)
    return y


def add_common_scale(g: GraphBuilder, a: SSAValue, a_zp: int, a_scale: float, b: SSAValue, b_zp: int,
                     b_scale: float) -> tuple[SSAValue, float]:
    """(int32 ``a + b`` at a common scale, that scale): both int8 operands RESCALEd to int32 with
    ``ADD_SHIFT`` extra fraction bits of ``2·max(a_scale, b_scale)``, ADD (ranks equalised)."""
    from nnkiln.dialects.tosa.base import Kind, element_type
    from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp
    from nnkiln.frontends.common.broadcast import equal_ranks

    max2 = 2.0 * max(a_scale, b_scale)
    a32 = rescale(g, a, Kind.I32, input_zp=a_zp, scale=a_scale / max2 * (1 << ADD_SHIFT))
    b32 = rescale(g, b, Kind.I32, input_zp=b_zp, scale=b_scale / max2 * (1 << ADD_SHIFT))
    a32, b32 = equal_ranks(g, a32, b32)
    return g.value(AddOp, [a32, b32], element_type(Kind.I32)), max2 / (1 << ADD_SHIFT)


def bias_i32(bias: np.ndarray, acc_scale: np.ndarray) -> np.ndarray | None:
    """A real bias (broadcast to ``acc_scale``'s length) as int32 units of the accumulator scale."""
    n = acc_scale.size
    b = np.asarray(bias, dtype=np.float64).reshape(-1)
    if b.size not in (1, n):
        return None
    r = np.rint(np.broadcast_to(b, (n,)) / np.broadcast_to(acc_scale, (n,)))
    if np.any(np.abs(r) >= (1 << 31)):
        return None
    return r.astype(np.int64)


def qparams_from_range(lo: np.ndarray, hi: np.ndarray, bits: int, tol: float = 1e-3
                       ) -> tuple[np.ndarray, np.ndarray] | None:
    """(scale, zero point) per element of ``linear_quantize(min=lo, max=hi, bits)`` seen as the signed code
    ``q = k - 2^(bits-1)`` of the grid ``lo + k·scale`` (k = 0..2^bits-1, scale = (hi-lo)/(2^bits-1)):
    ``real = (q - zp)·scale`` with ``zp = -2^(bits-1) - lo/scale``. None unless every zero point is within
    ``tol`` of an integer in the signed range (real 0 must be on the grid, as integer kernels need)."""
    lo64, hi64 = np.asarray(lo, np.float64).reshape(-1), np.asarray(hi, np.float64).reshape(-1)
    scale = (hi64 - lo64) / float((1 << bits) - 1)
    if np.any(scale <= 0) or not np.all(np.isfinite(scale)):
        return None
    half = 1 << (bits - 1)
    zf = -half - lo64 / scale
    zp = np.rint(zf)
    if np.any(np.abs(zf - zp) > tol) or np.any(zp < -half) or np.any(zp > half - 1):
        return None
    return scale, zp.astype(np.int64)


SOFTMAX_MIN_FRACTION_BITS = 12
"""``softmax_i8`` refuses axes so long that its exp values would keep fewer fraction bits than this."""


def softmax_fraction_bits(count: int) -> tuple[int, int] | None:
    """(F, G) of ``softmax_i8`` for ``count`` summed elements: exp values carry F fraction bits, the largest
    F <= 20 with ``count·2^F <= 2^30`` (no int32 sum overflows), and G guard bits below them (F + G <= 30,
    ``count·2^G <= 2^30``); None when F would fall below ``SOFTMAX_MIN_FRACTION_BITS``."""
    log_count = max(0, math.ceil(math.log2(max(count, 1))))
    f = min(20, 30 - log_count)
    return (f, min(30 - f, 30 - log_count)) if f >= SOFTMAX_MIN_FRACTION_BITS else None


def softmax_exp_table(s_in: float, bits: int) -> np.ndarray:
    """``T[k] = round(2^bits · exp(-k·s_in))`` for the 256 code differences k = 0..255 (int32)."""
    return np.floor(np.exp(-np.arange(256, dtype=np.float64) * s_in) * 2.0 ** bits + 0.5).astype(np.int32)


def softmax_i8(g: GraphBuilder, x: SSAValue, s_in: float, axes: Sequence[int], s_out: float,
               z_out: int) -> SSAValue:
    """Softmax over ``axes`` of the int8 codes ``x`` (scale ``s_in``; zero points cancel) in integer arithmetic,
    as int8 codes of scale ``s_out`` and zero point ``z_out``. The TOSA lowerings document leaves
    ``tfl.softmax`` without a lowering; this one uses only BI-profile operators. With (F, G) from
    ``softmax_fraction_bits``:

    1. ``k = max(x) - x`` over ``axes`` (REDUCE_MAX, SUB in int32; k in 0..255);
    2. ``t = T[k]``, ``T = softmax_exp_table(s_in, F + G)`` (GATHER from a 256-entry int32 table), and the
       exp value ``e = round(t / 2^G)`` with F fraction bits (the maximum has ``e = 2^F``);
    3. the sum with the guard bits kept: ``S = sum(floor(t / 2^G)) + round(sum(t mod 2^G) / 2^G)``
       (REDUCE_SUM of both parts; a plain sum of the rounded ``e`` would lose up to half a unit per element,
       which on long axes of tiny values adds up to whole output steps); ``e <= S`` always;
    4. normalisation by ``n = CLZ(S) - 1``: S and every e shifted left by n puts S in [2^30, 2^31);
    5. ``p15 = (e << n >> 1) / (S << n >> 16)`` (INT_DIV): the probability with 15 fraction bits (the divisor
       keeps 15 significant bits: relative error < 2^-14);
    6. RESCALE ``p15`` by ``2^-15 / s_out`` to int8 with ``z_out`` (round half up, saturating).

    Measured against float64 (``tests/unit/frontends/test_quant_softmax.py``): within 0.51 of an output step of
    the exact softmax, i.e. the correctly rounded code or its neighbour at a near-tie."""
    from nnkiln.dialects.tosa.base import Kind, element_type
    from nnkiln.dialects.tosa.ops_elementwise_binary import (
        AddOp,
        ArithmeticRightShiftOp,
        BitwiseAndOp,
        IntDivOp,
        LogicalLeftShiftOp,
        SubOp,
    )
    from nnkiln.dialects.tosa.ops_elementwise_unary import ClzOp
    from nnkiln.dialects.tosa.ops_reduction import ReduceMaxOp, ReduceSumOp
    from nnkiln.dialects.tosa.ops_scatter_gather import GatherOp
    from nnkiln.dialects.tosa.ops_type_conversion import CastOp
    from nnkiln.frontends.common.arith import shape_of
    from nnkiln.frontends.common.broadcast import reshape

    i32 = element_type(Kind.I32)
    shape = shape_of(x)
    axes = sorted({int(a) % len(shape) for a in axes})
    count = math.prod(shape[a] for a in axes)
    bits = softmax_fraction_bits(count)
    if bits is None:
        raise QuantError(f"an integer softmax over {count} elements (more than 2^18) is not supported")
    f, guard = bits
    one = (1,) * len(shape)

    def const(value: int) -> SSAValue:
        return g.const(np.full(one, value, np.int32))

    def shr(v: SSAValue, by: int, rounded: bool) -> SSAValue:
        return g.value(ArithmeticRightShiftOp, [v, const(by)], i32, round=rounded)

    def reduce(op_cls: type, v: SSAValue) -> SSAValue:
        for a in axes:
            v = g.value(op_cls, [v], i32 if op_cls is ReduceSumOp else v.type.element_type, axis=a)
        return v

    m = g.value(CastOp, [reduce(ReduceMaxOp, x)], i32)
    k = g.value(SubOp, [m, g.value(CastOp, [x], i32)], i32)
    total = math.prod(shape)
    table = g.const(softmax_exp_table(s_in, f + guard).reshape(1, 256, 1))
    t = reshape(g, g.value(GatherOp, [table, reshape(g, k, (1, total))], i32), shape)
    e = shr(t, guard, True) if guard else t
    s = reduce(ReduceSumOp, shr(t, guard, False) if guard else t)
    if guard:
        low = g.value(BitwiseAndOp, [t, const((1 << guard) - 1)], i32)
        s = g.value(AddOp, [s, shr(reduce(ReduceSumOp, low), guard, True)], i32)
    n = g.value(SubOp, [g.value(ClzOp, [s], i32), const(1)], i32)
    num = shr(g.value(LogicalLeftShiftOp, [e, n], i32), 1, False)
    den = shr(g.value(LogicalLeftShiftOp, [s, n], i32), 16, False)
    p15 = g.value(IntDivOp, [num, den], i32)
    return requant_i8(g, p15, 0, 2.0 ** -15 / s_out, z_out)
