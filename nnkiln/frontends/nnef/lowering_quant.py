"""Quantization (spec §5.2, §5.3, §7) in the NNEF lowering.

Implemented (float semantics, §7 "pseudo-quantization"):

* quantized ``.dat`` variables (linear / logarithmic codes) are decoded to their real values (§5.2 formulas)
  by the loader and become f32 constants;
* every ``graph.quant`` entry ``"t": linear_quantize(min, max, bits)`` or ``logarithmic_quantize(max, bits)``
  behaves as if the operation were applied right after ``t`` is computed (§7.1): the lowering emits the
  compound's body (clamp, round = floor(x + 0.5), rescale) in f32 after the tensor (inputs, variables and
  activations alike). Per-channel ``min``/``max`` arrays broadcast along dimension 1 (the channel axis).
* other algorithms named in graph.quant (none are standard in 1.0.3) raise an NnefError naming the tensor.

Not implemented: the integer path (int8 tensors + RESCALE as in the TFLite lowerings). ``try_integer``
is the hook for it and currently always declines, so quantized NNEF runs as float arithmetic on the
quantization grid.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.frontends.nnef.expand import FlatOp, TensorRef


def try_integer(lw, op: FlatOp) -> bool:  # noqa: ANN001
    """Hook for integer lowering of quantized patterns; declines (float pseudo-quantization is used)."""
    return False


def _channel_array(v: object, rank: int) -> np.ndarray:
    a = np.asarray(v, dtype=np.float32)
    if a.ndim == 0 or a.size == 1:
        return a.reshape((1,) * rank)
    return a.reshape((1, a.size) + (1,) * (rank - 2))


def apply(lw, ref: TensorRef) -> None:  # noqa: ANN001
    """Pseudo-quantize tensor ``ref`` in place if graph.quant names it (§7.1)."""
    from nnkiln.dialects.tosa import ops_elementwise_binary as bi
    from nnkiln.dialects.tosa import ops_elementwise_unary as un
    from nnkiln.frontends.common.arith import etype

    q = lw.quant.get(ref.name)
    if q is None or ref.dtype.value != "scalar":
        return
    x = lw.ssa(lw.vals[ref.name])
    g, et = lw.g, etype(x)
    rank = len(ref.shape)
    bits = int(q.args["bits"])
    r = float(2 ** bits - 1)

    def c(a: np.ndarray) -> SSAValue:
        return g.const(np.ascontiguousarray(a.astype(np.float32)))

    def floor_half(v: SSAValue) -> SSAValue:
        return g.value(un.FloorOp, [g.value(bi.AddOp, [v, c(np.full((1,) * rank, 0.5))], et)], et)

    if q.algorithm == "linear_quantize":
        lo, hi = _channel_array(q.args["min"], rank), _channel_array(q.args["max"], rank)
        z = g.value(bi.MaximumOp, [g.value(bi.MinimumOp, [x, c(hi)], et), c(lo)], et)
        scale = (hi - lo) / r
        t = g.value(bi.MulOp, [g.value(bi.SubOp, [z, c(lo)], et), c(1.0 / scale)], et, shift=0)
        y = g.value(bi.AddOp, [g.value(bi.MulOp, [floor_half(t), c(scale)], et, shift=0), c(lo)], et)
    elif q.algorithm == "logarithmic_quantize":
        hi = _channel_array(q.args["max"], rank)
        m = np.ceil(np.log2(hi))
        ln2 = np.float32(np.log(2.0))
        lg = g.value(bi.MulOp, [g.value(un.LogOp, [g.value(un.AbsOp, [x], et)], et), c(np.full((1,) * rank, 1 / ln2))],
                     et, shift=0)
        qv = floor_half(g.value(bi.MaximumOp, [g.value(bi.MinimumOp, [lg, c(m)], et), c(m - r)], et))
        p2 = g.value(bi.PowOp, [c(np.full((1,) * rank, 2.0)), qv], et)
        from nnkiln.frontends.nnef.lowering import FlatOp as _F, HANDLERS

        tmp = TensorRef("$q", ref.dtype, ref.shape)
        lw.vals["$q"] = x
        HANDLERS["sign"](lw, _F("sign", None, {"x": tmp}, {}, {"y": tmp}, 0))
        y = g.value(bi.MulOp, [lw.vals["$q"], p2], et, shift=0)
    else:
        raise lw.error(f"graph.quant algorithm '{q.algorithm}' for tensor '{ref.name}' is not supported")
    lw.vals[ref.name] = y


def to_real_output(lw, ref: TensorRef, v):  # noqa: ANN001, ANN201
    return v
