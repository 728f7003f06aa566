"""``fuse-low-precision``: fold a RESCALE that only widens (scale exactly 1) into the RESCALE that reads it.

What: ``RESCALE₂(RESCALE₁(x))`` where RESCALE₁ has every multiplier equal to ``1 << shift`` (scale exactly 1, per
tensor or per channel), never clips (its output type holds every ``x - input_zp₁ + output_zp₁`` of the input
type's range) and never fails its REQUIREs on that range → ``RESCALE(x)`` with RESCALE₂'s multiplier, shift,
rounding, channel mode and output zero point and ``input_zp = input_zp₁ - output_zp₁ + input_zp₂``, if that
RESCALE is a valid TOSA 0.30 op (its type mode exists, e.g. int8 → int32 → int8 becomes int8 → int8, and the zero
point is legal for the input type). RESCALE₁ stays for its other users (``dce`` removes it when it has none).

Why (and what the frontend already does): the architecture's low-precision pipeline (§6.1
``-fuse-quantized-ops``: "detects pattern quant.dcast -> op -> quant.qcast and converts it into single quantized
Op"; ``-merge-fake-quant``, ``-dequantize-const``) works on quantize/dequantize pairs. nnkiln does that fusion in
the ONNX importer (``frontends/onnx/lowerings/quant_qdq_fusion.py``): Conv, MatMul/Gemm, Add, Relu/Clip, pools,
Concat and the data-movement ops between DequantizeLinear and QuantizeLinear are emitted as integer ops, and a
DequantizeLinear → QuantizeLinear pair is one RESCALE; so at the tosa level no dequantize → float op →
quantize chains are left to fuse. What the integer lowerings do leave are widening RESCALEs (int8 → int32 with
scale 1, to subtract a zero point before an integer ADD or to re-read an int8 value at int32) that feed another
RESCALE; folding them saves one SHAVE pass over the tensor and the int32 intermediate (4x the int8 bytes).

Exactness (the only folds done): RESCALE₁ with scale 1 computes ``apply_scale(v, 1 << s, s) = v`` exactly for
``v = x - input_zp₁`` (``(v·2^s + 2^(s-1)) >> s = v``; the double-round ±2^30 moves for ``s > 31`` are below
2^(s-1) and give ``v`` too), so with no clipping RESCALE₂ reads ``v + output_zp₁ - input_zp₂ = x - input_zp``
with the new ``input_zp``: the same value, hence the same result and the same REQUIREs of RESCALE₂. RESCALE₁'s
own REQUIRE (``-(1 << (s - 2)) <= v < 1 << (s - 2)`` for 32-bit scales) is checked on the whole input range, so no
run-time failure is removed either. General two-scale chains are not folded: ``round(round(v·a)·b)`` differs from
``round(v·a·b)`` (double rounding), so a product multiplier is not bit-exact. A float chain (CAST to float, a
float op, CAST back) is not made integer here either: TOSA's integer ops round differently from float ones, and
that fusion belongs to the frontend, which sees the quantization parameters.

Legal before: verified tosa IR. After: verified tosa IR with fewer RESCALEs (the dead ones are left to ``dce``).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern
from xdsl.utils.exceptions import VerifyException

from nnkiln.dialects.tosa.base import to_attr
from nnkiln.dialects.tosa.ops_type_conversion import RescaleOp
from nnkiln.ir.errors import VerifyError
from nnkiln.transforms.tosa._hw import kind


def _is_exact_widening(r: RescaleOp) -> bool:
    """RESCALE ``r`` returns ``x - input_zp + output_zp`` exactly for every ``x`` of its input type."""
    k_in, k_out = kind(r.input), kind(r.output)
    if k_in is None or k_out is None or not k_in.is_int or not k_out.is_int:
        return False
    a = r.attr_values()
    count = len(a["shift"]) if a["per_channel"] else 1
    multipliers, shifts = a["multiplier"][:count], a["shift"][:count]
    if any(m != 1 << s for m, s in zip(multipliers, shifts)):
        return False
    lo, hi = k_in.int_range
    izp, ozp = a["input_zp"], a["output_zp"]
    out_lo, out_hi = k_out.int_range
    if lo - izp + ozp < out_lo or hi - izp + ozp > out_hi:
        return False  # the output would clip
    if a["scale32"]:  # apply_scale_32: -(1 << (shift - 2)) <= value < 1 << (shift - 2)
        return all(-(1 << (s - 2)) <= lo - izp and hi - izp < 1 << (s - 2) for s in shifts)
    return True


class FoldWideningRescale(RewritePattern):
    """RESCALE(RESCALE₁(x)) with RESCALE₁ an exact widening (scale 1, no clipping) → one RESCALE of ``x``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: RescaleOp, rewriter: PatternRewriter, /) -> None:
        first = op.input.owner
        if not isinstance(first, RescaleOp) or not _is_exact_widening(first):
            return
        izp = first.attr_values()["input_zp"] - first.attr_values()["output_zp"] + op.attr_values()["input_zp"]
        props = {**op.properties, "input_zp": to_attr(izp)}
        new = RescaleOp.create(operands=[first.input], result_types=[op.output.type], properties=props,
                               attributes=dict(op.attributes))
        new.location = op.location  # the source node stays named (nnkiln report)
        try:
            new.verify()
        except (VerifyError, VerifyException):
            return  # no such RESCALE mode (e.g. int8 → int48) or an illegal zero point: keep the chain
        rewriter.replace(op, [new])


@dataclass(frozen=True)
class FuseLowPrecision(ModulePass):
    """Fold exact widening RESCALEs (scale 1, no clipping) into the RESCALE that reads them."""

    name = "fuse-low-precision"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FoldWideningRescale(), apply_recursively=False).rewrite_module(op)
