"""Op-name categories of the TOSA 0.30 dialect that several passes and analyses reason about.

- ``ELEMENTWISE``: the layout-agnostic elementwise operators (spec §2.4-§2.7, CLAMP, SIGMOID, TANH of §2.3's
  activations, CAST and RESCALE of §2.12): each output element depends only on the input elements at the same
  index (after broadcasting), so the op commutes with transposes and works on any slice of its operands.
  TABLE (its table operand is not a layout tensor) and IDENTITY are not in it.
- ``REDUCTIONS``: REDUCE_ALL/ANY/MAX/MIN/PRODUCT/SUM (§2.8), each over one ``axis``.
- ``CONV2D_LIKE``: CONV2D and its special cases DEPTHWISE_CONV2D (one group per input channel) and FULLY_CONNECTED
  (a 1x1 convolution of a 1x1 image) (§2.3): a weighted sum of the input plus a per-output-channel ``bias``, the
  output channel being the last axis of the result. Passes that fold into the accumulator or the bias use it
  (``fold-bias-add``, ``fuse-post-ops``).
"""

from __future__ import annotations

ELEMENTWISE = frozenset({
    "tosa.add", "tosa.sub", "tosa.mul", "tosa.maximum", "tosa.minimum", "tosa.pow", "tosa.intdiv",
    "tosa.arithmetic_right_shift", "tosa.logical_left_shift", "tosa.logical_right_shift",
    "tosa.bitwise_and", "tosa.bitwise_or", "tosa.bitwise_xor", "tosa.logical_and", "tosa.logical_or",
    "tosa.logical_xor", "tosa.abs", "tosa.bitwise_not", "tosa.ceil", "tosa.clz", "tosa.exp", "tosa.floor",
    "tosa.log", "tosa.logical_not", "tosa.negate", "tosa.reciprocal", "tosa.rsqrt", "tosa.select",
    "tosa.clamp", "tosa.sigmoid", "tosa.tanh", "tosa.equal", "tosa.greater", "tosa.greater_equal",
    "tosa.cast", "tosa.rescale",
})
REDUCTIONS = frozenset({"tosa.reduce_all", "tosa.reduce_any", "tosa.reduce_max", "tosa.reduce_min",
                        "tosa.reduce_product", "tosa.reduce_sum"})

CONV2D_LIKE = frozenset({"tosa.conv2d", "tosa.depthwise_conv2d", "tosa.fully_connected"})

__all__ = ["CONV2D_LIKE", "ELEMENTWISE", "REDUCTIONS"]
