"""Integer conversions shared by the elementwise and quantization lowerings (private helpers).

- ``rescale``: one RESCALE (spec §2.13.2) by a real scale, with (multiplier, shift) from
  ``compute_scale_32`` (``compute_scale_16`` for int48 inputs) and single rounding; scale 1 is the exact
  identity ``clip(in - input_zp + output_zp)`` (multiplier 2^30, shift 30). RESCALE takes ranks 1..4, so
  other ranks are reshaped around it (signed kinds only: RESHAPE has no unsigned types).
- ``widen_i32``: any 8/16-bit integer (or Boolean) run-time value as int32, exactly (CAST for int8/int16/
  bool; an identity RESCALE to int16 for uint8; ``uint16 - 32768`` via RESCALE with ``input_zp = 32768``
  plus 32768 in int32 for uint16).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind, element_type
from nnkiln.frontends.common.arith import kind_of_value, shape_of
from nnkiln.frontends.common.quant import QuantError
from nnkiln.frontends.common.quant import rescale as _common_rescale
from nnkiln.frontends.onnx.importer import NodeContext

_UNSIGNED = (Kind.U8, Kind.U16)


def rescale(ctx: NodeContext, x: SSAValue, out_kind: Kind, *, input_zp: int = 0, output_zp: int = 0,
            scale: float | Sequence[float] = 1.0, per_channel: bool = False) -> SSAValue:
    """RESCALE of ``x`` by a real ``scale`` (a list along the last axis if ``per_channel``); see the module
    docstring (the builder is ``frontends.common.quant.rescale``)."""
    try:
        return _common_rescale(ctx.g, x, out_kind, input_zp=input_zp, output_zp=output_zp, scale=scale,
                               per_channel=per_channel)
    except QuantError as err:
        raise ctx.error(str(err)) from None


def widen_i32(ctx: NodeContext, v: SSAValue) -> SSAValue:
    """A run-time integer (or Boolean) value as int32, exactly (see the module docstring)."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp
    from nnkiln.dialects.tosa.ops_type_conversion import CastOp

    i32 = element_type(Kind.I32)
    k = kind_of_value(v)
    if k is Kind.I32:
        return v
    if k in (Kind.I8, Kind.I16, Kind.BOOL):
        return ctx.g.value(CastOp, [v], i32)
    if k is Kind.U8:
        return ctx.g.value(CastOp, [rescale(ctx, v, Kind.I16)], i32)
    if k is Kind.U16:
        shifted = ctx.g.value(CastOp, [rescale(ctx, v, Kind.I16, input_zp=32768)], i32)
        offset = ctx.g.const(np.full((1,) * len(shape_of(v)), 32768, np.int32))
        return ctx.g.value(AddOp, [shifted, offset], i32)
    raise ctx.error(f"{k.value} values cannot be widened to int32; not supported")
