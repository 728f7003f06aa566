"""Approximate ONNX ops: Erf, and Gelu with approximate="none" (which is built on it).

TOSA 0.30 has no erf and no finite composition of its ops computes erf exactly. This family is a
deliberate, documented exception to the frontend's "exact only" rule, so that BERT-style models
(GELU = ``0.5·x·(1 + erf(x/√2))``) import. Every op here states its formula and its MEASURED error.

Erf (float32 only): ``erf(x) ≈ TANH(c·Q(c²))`` with ``c = CLAMP(x, −4, 4)`` and
``Q(y) = C0 + C1·y + … + C6·y⁶`` (Horner), 16 TOSA ops (CLAMP, MUL, 6×(MUL, ADD), MUL, TANH), each
rounding to float32 as the reference does. The coefficients are our own fit (this module's
``fit_coefficients``: iteratively reweighted least squares of ``atanh(erf(x))/x`` on [0, 4] in
float64, weighted by ``1 − erf²`` = d erf/d tanh-argument, 60 rounds). The form is odd (so
``erf(−x) = −erf(x)`` and ``erf(±0) = ±0`` exactly), bounded by 1 (TANH), has no cancellation near 0
(relative accuracy there), and saturates: every |x| ≥ 4 gives the value at 4, 1 − 2⁻²⁴ = 0.99999994
(erf(4) = 1 − 1.5e-8; the difference is within the bound below), so ±inf → ±0.99999994, NaN → NaN.

Measured error of the float32 evaluation against ``math.erf`` in float64 (every float32 in [0, 8] with
a step of 256 in the bit pattern, i.e. 4.26e6 values, plus 10^6 log-spaced values in [1e-30, 1e30];
odd symmetry covers the negatives; |x| > 8 clamps to the value at 4): **max absolute error 1.4e-7**
(at x ≈ 1.19); max relative error 6.6e-7 for normal floats (larger only for subnormal x, where the
float32 result itself has few significant bits). The exact-arithmetic error of the fit is 5.8e-8;
float32 rounding adds the rest. ``tests/frontends/onnx/test_approx_erf.py`` re-measures it.

float16 inputs (Erf and Gelu) are widened exactly to float32 (``elementwise_cast._f16_to_f32``: TOSA 0.30 has
no float CAST), computed as above, and rounded once to float16 (the ``math.cast`` custom op, round to nearest
even): the float16 rounding of erf except within 1.4e-7 of a float16 rounding boundary (then one unit off),
as onnxruntime, which also computes in float32.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind, element_type
from nnkiln.dialects.tosa.ops_activation import ClampOp, TanhOp
from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp, MulOp
from nnkiln.frontends.onnx.importer import NodeContext, TensorValue
from nnkiln.frontends.onnx.lowerings import lowering

COEFFICIENTS = (1.1283797055511915, 0.10276548061603001, -0.0001843815684436454, -0.00062572158479016,
                8.971340789361293e-05, -5.985834480096153e-06, 1.5896896278511097e-07)
"""C0..C6 of ``Q`` (from ``fit_coefficients()``)."""
CLAMP_AT = 4.0
MAX_ABS_ERROR = 1.4e-7
"""The measured maximum absolute error of ``erf_f32`` (see the module docstring)."""

Result = list[TensorValue | SSAValue | np.ndarray]


def fit_coefficients(rounds: int = 60) -> tuple[float, ...]:
    """Re-derive ``COEFFICIENTS`` (float64 reweighted least squares; takes ~1 s)."""
    import math

    x = np.linspace(1e-4, CLAMP_AT, 40000)
    e = np.array([math.erf(v) for v in x])
    u = np.arctanh(np.minimum(e, 1 - 1e-16))
    w = 1 - e**2
    wts = np.ones_like(x)
    coef = np.zeros(len(COEFFICIENTS))
    for _ in range(rounds):
        basis = np.stack([x ** (2 * k + 1) for k in range(len(COEFFICIENTS))], 1) * (w * wts)[:, None]
        coef = np.linalg.lstsq(basis, u * w * wts, rcond=None)[0]
        err = np.abs(np.tanh(x * np.polyval(coef[::-1], x * x)) - e)
        wts = wts * (err / err.max()) ** 0.3 + 1e-12
        wts /= wts.max()
    return tuple(float(c) for c in coef)


def erf_f32(x: np.ndarray) -> np.ndarray:
    """The approximation evaluated in float32 with exactly the TOSA op sequence of ``Erf``."""
    f = np.float32
    c = [f(v) for v in COEFFICIENTS]
    x = np.asarray(x, f)
    xc = np.minimum(np.maximum(x, f(-CLAMP_AT)), f(CLAMP_AT))
    y = xc * xc
    q = y * c[-1]
    for k in range(len(c) - 2, 0, -1):
        q = (q + c[k]) * y
    q = q + c[0]
    return np.tanh(xc * q).astype(f)


def erf_ir(ctx: NodeContext, x: SSAValue) -> SSAValue:
    """``TANH(c·Q(c²))``, ``c = CLAMP(x, −4, 4)`` on a float32 IR value (see the module docstring)."""
    rank = len(x.type.get_shape())  # type: ignore[attr-defined]
    et = element_type(Kind.F32)

    def k(v: float) -> SSAValue:
        return ctx.g.const(np.full((1,) * rank, v, np.float32))

    def mul(u: SSAValue, v: SSAValue) -> SSAValue:
        return ctx.g.value(MulOp, [u, v], et, shift=0)

    def add(u: SSAValue, v: SSAValue) -> SSAValue:
        return ctx.g.value(AddOp, [u, v], et)

    xc = ctx.g.value(ClampOp, [x], et, min_val=-CLAMP_AT, max_val=CLAMP_AT)
    y = mul(xc, xc)
    q = mul(y, k(COEFFICIENTS[-1]))
    for i in range(len(COEFFICIENTS) - 2, 0, -1):
        q = mul(add(q, k(COEFFICIENTS[i])), y)
    q = add(q, k(COEFFICIENTS[0]))
    return ctx.g.value(TanhOp, [mul(xc, q)], et)


@lowering("Erf")
def Erf(ctx: NodeContext) -> Result:
    """Erf: ``TANH(c·Q(c²))``, ``c = CLAMP(x, −4, 4)`` (max absolute error 1.4e-7 in float32; see the module docstring)."""
    tv = ctx.input(0)
    if tv.kind not in (Kind.F32, Kind.F16):
        raise ctx.error(f"Erf is supported for float32 and float16 only (got {tv.kind.value})")
    if tv.is_const:
        return [erf_f32(np.asarray(tv.const)).astype(np.asarray(tv.const).dtype)]
    if tv.kind is Kind.F16:
        return [_round_to_f16(ctx, erf_ir(ctx, _widen_f16(ctx, ctx.tensor(0))))]
    return [erf_ir(ctx, ctx.tensor(0))]


def _widen_f16(ctx: NodeContext, x: SSAValue) -> SSAValue:
    from nnkiln.frontends.onnx.lowerings.elementwise_cast import _f16_to_f32

    return _f16_to_f32(ctx, x)


def _round_to_f16(ctx: NodeContext, x: SSAValue) -> SSAValue:
    from nnkiln.frontends.onnx.lowerings.elementwise_cast import _float_cast

    return _float_cast(ctx, x, Kind.F32, Kind.F16)


def gelu_erf(ctx: NodeContext) -> Result:
    """Gelu with approximate="none": ``0.5·x·(1 + erf(x·(1/√2)))`` with the Erf approximation above
    (float32 only; absolute error of the erf term 1.4e-7, so of the result at most ~0.7e-7·|x| more than
    the float32 rounding of the exact formula)."""
    tv = ctx.input(0)
    if tv.kind not in (Kind.F32, Kind.F16):
        raise ctx.error(f'approximate="none" is not supported for {tv.kind.value} inputs: it needs erf, which is '
                        "approximated in float32 (float16 through it) only")
    if tv.is_const:
        x = np.asarray(tv.const, np.float32)
        y = (np.float32(0.5) * x * (np.float32(1) + erf_f32(x * np.float32(1 / np.sqrt(2))))).astype(np.float32)
        return [y.astype(np.asarray(tv.const).dtype)]
    x = ctx.tensor(0) if tv.kind is Kind.F32 else _widen_f16(ctx, ctx.tensor(0))
    rank = len(tv.shape)
    et = element_type(Kind.F32)

    def k(v: float) -> SSAValue:
        return ctx.g.const(np.full((1,) * rank, v, np.float32))

    e = erf_ir(ctx, ctx.g.value(MulOp, [x, k(float(np.float32(1 / np.sqrt(2))))], et, shift=0))
    half_x = ctx.g.value(MulOp, [x, k(0.5)], et, shift=0)
    y = ctx.g.value(MulOp, [half_x, ctx.g.value(AddOp, [e, k(1.0)], et)], et, shift=0)
    return [y if tv.kind is Kind.F32 else _round_to_f16(ctx, y)]


__all__: Sequence[str] = ("COEFFICIENTS", "Erf", "MAX_ABS_ERROR", "erf_f32", "erf_ir", "fit_coefficients", "gelu_erf")
