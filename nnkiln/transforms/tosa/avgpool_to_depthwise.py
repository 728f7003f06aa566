"""``avgpool-to-depthwise``: float32 AVG_POOL2D without padding → DEPTHWISE_CONV2D with weights 1/(kh·kw).

What: ``AVG_POOL2D(x [N,IH,IW,C], kernel [kh,kw], stride, pad = 0)`` of float32 →
``DEPTHWISE_CONV2D(x, w [kh,kw,C,1] = 1/(kh·kw), zeros [C], stride, pad = 0, dilation 1)`` (new constants).

Why: the NCE has no averaging mode; it runs AVG_POOL2D as a depthwise convolution with constant weights. The
architecture's level-3 pass ``-convert-avg-pool-to-dw-conv`` "replaces suitable AvgPool operations with
GroupConvolution operation" (§6.1; AvgPool → DepthwiseConv among the generic opset adaptations, §3.3.1.1.1).

Which are "suitable" (exactness w.r.t. TOSA 0.30 §2.3.2): AVG_POOL2D divides each window's sum by the number of
*input* positions it covers, never counting padding. Without padding every window covers kh·kw inputs, so the
divisor is the constant kh·kw and a depthwise convolution with weights 1/(kh·kw) computes the same mean. With
padding the border windows have smaller divisors: a depthwise convolution with constant weights cannot express
that, so padded pools stay (an exact alternative is a depthwise sum with weights 1 followed by a MUL with the
constant [1,OH,OW,1] map of 1/count; that MUL broadcasts, which the NCE's same-shape elementwise engine does not
run, so it would move work to the SHAVEs instead of saving it; not done). Integer AVG_POOL2D stays: it rounds
``acc · reciprocal_scale(count)`` with its own rule (``apply_scale_32`` with a 1/count multiplier) and adds the
output zero point, which no DEPTHWISE_CONV2D (int32 output) followed by a TOSA RESCALE reproduces bit-exactly in
general. fp16/bf16 pools stay too (1/(kh·kw) rounded to fp16 is a relative error of up to 2^-11 on every term).

Numerics: ``Σ x·r`` with ``r = fl32(1/(kh·kw))`` instead of ``(Σ x)/(kh·kw)``: a few float32 rounding steps
(exact weights when kh·kw is a power of two); within the compiler's 1e-5 relative float tolerance.

Legal before: verified tosa IR. After: verified tosa IR; float32 AVG_POOL2Ds with padding remain.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern

from nnkiln.dialects.tosa.base import Kind
from nnkiln.dialects.tosa.ops_tensor import AvgPool2dOp, DepthwiseConv2DOp
from nnkiln.transforms.tosa._hw import const, elem, is_plain, shape


class AvgPoolAsDepthwise(RewritePattern):
    """Unpadded float32 AVG_POOL2D → DEPTHWISE_CONV2D with constant weights 1/(kh·kw) and zero bias."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, pool: AvgPool2dOp, rewriter: PatternRewriter, /) -> None:
        if any(pool.pad.get_values()) or not is_plain(pool.input, Kind.F32):
            return
        kh, kw = pool.kernel.get_values()
        c = shape(pool.input)[3]
        w = const(np.full((kh, kw, c, 1), 1.0 / (kh * kw), np.float32), elem(pool.input))
        b = const(np.zeros((c,), np.float32), elem(pool.input))
        dw = DepthwiseConv2DOp.make([pool.input, w.output, b.output], elem(pool.output), pad=(0, 0, 0, 0),
                                    stride=tuple(pool.stride.get_values()), dilation=(1, 1), input_zp=0, weight_zp=0)
        dw.location = pool.location  # the source node stays named (nnkiln report)
        rewriter.replace(pool, [w, b, dw])


@dataclass(frozen=True)
class AvgpoolToDepthwise(ModulePass):
    """Unpadded float32 avg_pool2d → depthwise_conv2d with weights 1/(kh*kw)."""

    name = "avgpool-to-depthwise"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(AvgPoolAsDepthwise(), apply_recursively=False).rewrite_module(op)
