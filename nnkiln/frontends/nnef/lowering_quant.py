"""Quantization (spec §5.2, §5.3, §7) in the NNEF lowering: an integer path and float pseudo-quantization.

Integer path (``try_integer``; RESCALE-based, TOSA 0.30 §2.13.2). A tensor ``t`` is *integer* when
``graph.quant`` gives it ``linear_quantize(min, max, bits = 8)`` with real 0 on the grid: it is then held as
the int8 code ``q = k - 128`` of the grid ``min + k·scale`` (k = 0..255, ``scale = (max-min)/255``), i.e.
``real = (q - zp)·scale`` with ``zp = -128 - min/scale`` (``common.quant.qparams_from_range``; the zero
point must be an integer within 1e-3 and in [-128, 127], otherwise the tensor stays float). Patterns
lowered in integer arithmetic (all per-tensor activations, 2-D spatial NCHW):

* ``variable`` with an 8-bit linear quantization — from graph.quant (float .dat quantized at import with
  ``k = floor((clamp(w) - min)/scale + 0.5)``, §7.1's round) or a linear-quantized 8-bit ``.dat`` (codes
  used as they are) — becomes int8 codes; per-channel ``min``/``max`` arrays of a *variable* apply along
  dimension 0 (the output channels of NNEF filters [O, I, ..] and linear filters [O, I]); for activations
  they apply along dimension 1 (the float pseudo-quantization) and activations quantized per channel are
  not integer. Float consumers receive the real values ``min + k·scale`` as constants.
* ``conv`` (groups 1 / depth-wise / grouped, border ``constant`` or ``ignore`` with non-negative padding,
  2-D): int8 CONV2D / DEPTHWISE_CONV2D with ``input_zp``/``weight_zp`` (per-channel weight zero points are
  folded into the weights when ``w - zp`` fits int8), int32 accumulator with the bias quantized to int32 at
  ``s_in·s_w[c]`` (``rint``), RESCALE (per-channel when the filter is) to the output's int8 quantization.
* ``linear`` with a rank-2 input: FULLY_CONNECTED int8 → int32 → RESCALE.
* ``matmul`` of two quantized run-time tensors: int8 MATMUL with both zero points → int32 → RESCALE; ``mul``
  of two: ``(a − z_a)·(b − z_b)`` in int32 → RESCALE (TFLite's BATCH_MATMUL / MUL).
* ``sigmoid`` / ``tanh``: an int8 TABLE of the 256 input codes, built in float64 (``table_codes``).
* ``softmax`` (kept whole by the expander): ``common.quant.softmax_i8`` — a 256-entry int32 exp table
  indexed by ``max − x`` (GATHER), REDUCE_SUM, CLZ normalisation, INT_DIV, RESCALE to the output's code.
* ``relu`` / ``clamp`` (constant uniform bounds): RESCALE to the output's quantization (the input's when the
  output has none) and CLAMP at the quantized bounds (``zp`` for relu).
* ``max_pool`` / ``avg_pool`` over the spatial axes (border ``ignore``, or no padding): MAX_POOL2D /
  AVG_POOL2D on int8 (avg: zero points 0 on the raw codes; the divisor excludes padding, so the mean of
  ``q`` is the mean of ``q - zp`` plus ``zp``), then RESCALE if the output quantization differs. TOSA's
  rounding of the mean (``reciprocal_scale``'s multiplier is slightly above 1/count) takes halves away
  from zero, as TFLite's int8 kernels; codes of an *unsigned* 1.0.5 grid (held as ``q - 128``) are
  averaged in the unsigned domain (``input_zp = output_zp = -128``), so halves round up as in TFLite's
  uint8 kernels.
* ``add`` of equal-rank operands: the TOSA ``tfl.add`` lowering (``common.quant.add_common_scale``: both
  operands to int32 at ``2·max(s_a, s_b)/2^20``, ADD, RESCALE).
* ``concat``: each input RESCALEd to the output's quantization, CONCAT in int8.
* ``reshape``/``squeeze``/``unsqueeze``/``transpose``/``copy`` and NNEF 1.0.5's ``tile``/``slice``/
  ``gather``/``pad``: pure data movement on the int8 codes (the output keeps the input's quantization, or
  is RESCALEd to its own); a constant ``pad`` fills with the code of its value (``zp + value/scale``, which
  must be on the grid, else the pad is float). Quantized *constants* (e.g. nnef-tools' ``transpose`` of a
  quantized filter) move as numpy codes (reshape/squeeze/unsqueeze/copy, and transpose keeping dimension 0
  first when quantized per channel).

Interface decision: graph inputs and outputs stay **float** (the NNEF ``external`` is ``scalar``). A quantized
graph input is pseudo-quantized (§7.1) and converted to int8 by its first integer consumer (MUL by 1/scale,
CAST to int32 — the value is on the grid, so the rounding mode is irrelevant —, ADD zp, MAXIMUM/MINIMUM,
CAST to int8); an integer tensor needed by a float consumer or as a graph output is dequantized
(``(q - zp)·scale`` in f32) lazily, only if something reads its float value. Rounding: RESCALE rounds half
up once (``compute_scale_32``), §7.1's ``round`` is also half up; results can still differ from the float
pseudo-quantization by 1 LSB where the float product lands within rounding error of a half.

Everything else falls back to float pseudo-quantization (§7 semantics): ``deconv``, ``matmul`` with a constant
operand, ``linear`` of rank > 2, a softmax over more than 2^18 elements, pools with other borders /
non-spatial windows, ``add`` with NNEF (trailing) broadcasting across ranks, per-channel activations, bit widths other than 8, ranges whose zero is off the grid, and all
``logarithmic_quantize`` tensors — TOSA 0.30 has no exact integer form of a power-of-two code book (it would
need a TABLE per consumer and float accumulation), so logarithmic quantization is float pseudo-quantization
only. NNEF 1.0.5's ``zero_point_linear_quantize`` (what nnef-tools writes) and ``min_max_linear_quantize``
(see ``quant_v105``) take part in both paths: an 8-bit entry whose codes fit int8 (signed as they are,
unsigned shifted by -128) makes the tensor integer exactly like an 8-bit ``linear_quantize``; its float
pseudo-quantization is the fragment body (``clamp(round(x/scale) + zp, lo, r)``, then ``(q - zp)·scale``).
A ``.dat`` of 1.0.5 quantized codes is decoded with its entry (``quant_v105.real_values``) and, at 8 bits,
its codes are the integer weights; 32-bit codes (biases) are used as reals and requantized to the
accumulator scale (``rint``), which gives back the stored int32 codes when ``scale = s_in·s_w``.
Other graph.quant algorithms are rejected by the graph.quant parser with "unknown quantization
algorithm '<name>'".

Float pseudo-quantization (``apply``): every ``graph.quant`` entry behaves as if the operation were applied
right after ``t`` is computed (§7.1): the compound's body (clamp, round = floor(x + 0.5), rescale) in f32.
Per-channel ``min``/``max`` arrays broadcast along dimension 1 (the channel axis) for activations.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.frontends.nnef import lowering_quant_int as _int
from nnkiln.frontends.nnef.expand import FlatOp, TensorRef


def try_integer(lw, op: FlatOp) -> bool:  # noqa: ANN001
    """Lower ``op`` in integer arithmetic if it matches a pattern of the module docstring."""
    return _int.try_integer(lw, op)


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
    for k, v in q.args.items():
        n = np.size(v) if isinstance(v, list) else 1
        if n > 1 and not (len(ref.shape) > 1 and ref.shape[1] == n) and not isinstance(lw.vals[ref.name], np.ndarray):
            raise lw.error(f"§5.3: per-channel '{k}' of '{ref.name}' has {n} items, which does not match "
                           f"dimension 1 (the channels) of its shape {list(ref.shape)}")
    if isinstance(lw.vals[ref.name], np.ndarray) and q.algorithm in ("zero_point_linear_quantize",
                                                                       "min_max_linear_quantize"):
        from nnkiln.frontends.nnef.quant_v105 import decode, encode, grid

        gr = grid(q.algorithm, q.args, tol=float("inf"))
        if gr is not None:  # constants and variables fold (per channel along quant_v105.variable_axis)
            v = np.asarray(lw.vals[ref.name], np.float64)
            lw.vals[ref.name] = decode(encode(v, gr), gr).astype(np.float32)
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

    if q.algorithm == "min_max_linear_quantize":
        r = float(2 ** bits - 1 - int(bool(q.args["signed"]) and bool(q.args["symmetric"])))
    if q.algorithm == "zero_point_linear_quantize":
        from nnkiln.frontends.nnef.quant_v105 import grid

        gr = grid(q.algorithm, q.args)
        if gr is None:  # graph.quant's parser checks every parameter (quant_v105.check_args); kept as a guard
            raise lw.error(f"graph.quant: the {q.algorithm} parameters of tensor '{ref.name}' do not describe a "
                           f"code grid (scale must be finite and positive, zero_point an integer code)")
        sc, zp = _channel_array(gr.scale, rank), _channel_array(gr.zp, rank)
        t = floor_half(g.value(bi.MulOp, [x, c(1.0 / sc)], et, shift=0))
        t = g.value(bi.AddOp, [t, c(zp)], et)
        t = g.value(bi.MaximumOp, [g.value(bi.MinimumOp, [t, c(np.full((1,) * rank, float(gr.qmax)))], et),
                                   c(np.full((1,) * rank, float(gr.qmin)))], et)
        y = g.value(bi.MulOp, [g.value(bi.SubOp, [t, c(zp)], et), c(sc)], et, shift=0)
    elif q.algorithm in ("linear_quantize", "min_max_linear_quantize"):
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
        from nnkiln.frontends.nnef.lowering import HANDLERS
        from nnkiln.frontends.nnef.lowering import FlatOp as _F

        tmp = TensorRef("$q", ref.dtype, ref.shape)
        lw.vals["$q"] = x
        HANDLERS["sign"](lw, _F("sign", None, {"x": tmp}, {}, {"y": tmp}, 0))
        y = g.value(bi.MulOp, [lw.vals["$q"], p2], et, shift=0)
    else:
        raise lw.error(f"graph.quant algorithm '{q.algorithm}' for tensor '{ref.name}' is not supported")
    lw.vals[ref.name] = y


def to_real_output(lw, ref: TensorRef, v):  # noqa: ANN001, ANN201
    return v
