"""QUANTIZE / DEQUANTIZE (``legalize_tfl``: ``tfl.quantize``, ``tfl.dequantize``).

* int8 → int8 QUANTIZE (requantize): TFLite's ``Requantize`` = ``MultiplyByQuantizedMultiplier(x - zp_in, m, e)
  + zp_out`` with ``real = s_in / s_out``: one double-rounding RESCALE (exact; the document's RESCALE).
* float → int8: ``round(x / s) + zp`` as MUL by 1/s, CAST (round half to even) after adding zp, as the document.
  Deviation from TFLite (``TfLiteRound(x / s)``, half away from zero, true division): a value at a tie or within
  an ulp of one can differ by one step.
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
    et = element_type(Kind.F32)
    y = ctx.g.value(MulOp, [x, scalar_like(ctx.g, float(np.float32(1.0) / qo.scale[0]), x)], et, shift=0)
    y = ctx.g.value(AddOp, [y, scalar_like(ctx.g, float(qo.zero_point[0]), x)], et)
    return [ctx.g.value(CastOp, [y], element_type(out_kind))]


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
