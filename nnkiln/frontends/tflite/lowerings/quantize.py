"""QUANTIZE / DEQUANTIZE (document legalize_tflite: ``tfl.quantize``, ``tfl.dequantize``).

* int8 → int8 QUANTIZE (requantize): TFLite's ``Requantize`` = ``MultiplyByQuantizedMultiplier(x - zp_in, m, e)
  + zp_out`` with ``real = s_in / s_out``: one double-rounding RESCALE (exact; tfl.quantize is TODO in the document).
* float → int8: ``TfLiteRound(x / s) + zp`` clamped, as TFLite's ``AffineQuantize``, with the division as MUL
  by 1/s (TOSA 0.30 has no float division) and the rounding half away from zero built from
  ABS/FLOOR/SELECT. Deviation: x·(1/s) can differ from x/s by one ulp, so a value within an ulp of a tie can
  round the other way (one step).
* int8 → float DEQUANTIZE: ``(x - zp)·s`` (CAST, SUB, MUL; exact as TFLite computes it in float32).
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind, element_type
from nnkiln.frontends.common.arith import scalar_like
from nnkiln.frontends.tflite.importer import OpContext, kind_of_tensor
from nnkiln.frontends.tflite.lowerings._common import rescale_tfl
from nnkiln.frontends.tflite.lowerings._registry import lowering


@lowering("QUANTIZE")
def quantize(ctx: OpContext) -> list[SSAValue]:
    """``tfl.quantize`` (module docstring)."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp, MulOp
    from nnkiln.dialects.tosa.ops_type_conversion import CastOp

    qo = ctx.quant(ctx.tout())
    out_kind = kind_of_tensor(ctx.tout(), ctx.g.file)
    x = ctx.value(0)
    if ctx.is_quantized():
        qi = ctx.quant(ctx.tin(0))
        return [rescale_tfl(ctx.g, x, out_kind, float(qi.scale[0]) / float(qo.scale[0]),
                            input_zp=int(qi.zero_point[0]), output_zp=int(qo.zero_point[0]))]
    if not qo.per_tensor:
        raise ctx.error("per-channel float → int QUANTIZE is not supported")
    from nnkiln.dialects.tosa.ops_activation import ClampOp
    from nnkiln.dialects.tosa.ops_comparison import GreaterOp
    from nnkiln.dialects.tosa.ops_elementwise_ternary import SelectOp
    from nnkiln.dialects.tosa.ops_elementwise_unary import AbsOp, FloorOp, NegateOp

    g = ctx.g
    et = element_type(Kind.F32)
    y = g.value(MulOp, [x, scalar_like(g, float(np.float32(1.0) / qo.scale[0]), x)], et, shift=0)
    # TfLiteRound: half away from zero (CAST alone would round half to even)
    r = g.value(FloorOp, [g.value(AddOp, [g.value(AbsOp, [y], et), scalar_like(g, 0.5, y)], et)], et)
    neg = g.value(GreaterOp, [scalar_like(g, 0.0, y), y], element_type(Kind.BOOL))
    r = g.value(SelectOp, [neg, g.value(NegateOp, [r], et), r], et)
    r = g.value(AddOp, [r, scalar_like(g, float(qo.zero_point[0]), x)], et)
    lo, hi = {Kind.I8: (-128.0, 127.0), Kind.I16: (-32768.0, 32767.0), Kind.U8: (0.0, 255.0)}.get(
        out_kind, (-2.0**31, 2.0**31 - 128))
    r = g.value(ClampOp, [r], et, min_val=lo, max_val=hi)
    return [g.value(CastOp, [r], element_type(out_kind))]


@lowering("DEQUANTIZE")
def dequantize(ctx: OpContext) -> list[SSAValue]:
    """``tfl.dequantize`` (module docstring); a float16 constant input is widened to float32."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import MulOp, SubOp
    from nnkiln.dialects.tosa.ops_type_conversion import CastOp

    t = ctx.tin(0)
    if t.dtype == np.float16:
        return [ctx.g.value(CastOp, [ctx.value(0)], element_type(Kind.F32))]
    q = ctx.quant(t)
    x = ctx.value(0)
    et = element_type(Kind.F32)
    f = ctx.g.value(CastOp, [x], et)
    if q.per_tensor:
        f = ctx.g.value(SubOp, [f, scalar_like(ctx.g, float(q.zero_point[0]), f)], et)
        return [ctx.g.value(MulOp, [f, scalar_like(ctx.g, float(q.scale[0]), f)], et, shift=0)]
    shape = [1] * len(t.shape)
    shape[q.quantized_dimension] = -1
    zp = ctx.g.const(q.zero_point.astype(np.float32).reshape(shape))
    sc = ctx.g.const(q.scale.astype(np.float32).reshape(shape))
    return [ctx.g.value(MulOp, [ctx.g.value(SubOp, [f, zp], et), sc], et, shift=0)]
