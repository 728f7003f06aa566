"""``scale-shift-to-depthwise``: float32 per-channel ``x·s (+ b)`` → a 1x1 DEPTHWISE_CONV2D with weights s, bias b.

What: ``MUL(x, s)`` (shift 0) with ``x`` of rank 4 [N,H,W,C] and ``s`` a ``tosa.const`` of shape [1,1,1,C] or
[1,1,1,1] (it varies only along the channel axis), optionally followed by ``ADD(·, b)`` with ``b`` such a
constant too, where the MUL's result is used only by that ADD → ``DEPTHWISE_CONV2D(x, s [1,1,C,1], b [C]
(or zeros), stride 1, no padding)``. Either operand order of the MUL and the ADD is accepted; the result type
equals ``x``'s (no broadcasting of ``x``).

Not rewritten: ``x`` produced by CONV2D, DEPTHWISE_CONV2D or FULLY_CONNECTED with that MUL as its only user:
``fold-bias-add`` folds the scale and shift into that producer's weights and bias for free (run it first); a
convolution result with several users cannot be folded, so its scale-shift is converted here.

Why: a scale-shift (a folded BatchNormalization, a normalisation's affine part, a per-channel gain) is an
elementwise op with broadcasting, which the NCE's elementwise engine (same-shaped ADD/MUL only) cannot run;
as a depthwise 1x1 convolution it runs on the NCE with the post-ops of the following layer. The architecture's
level-3 pass ``-convert-scale-shift-depthwise`` "Convert Scale-Shift operation to Depthwise convolution" (§6.1).

Numerics: ``fl(fl(x·s) + b)`` becomes the depthwise convolution's ``x·s + b`` (one product and one addition
per output, rounded by the reference once or twice in float32): within the compiler's 1e-5 relative float
tolerance. Integer MUL/ADD are never touched (an int32 MUL has a shift and wraps differently from an int32
accumulator of int8 operands).

Legal before: verified tosa IR (channels last, e.g. after ``propagate-transposes``). After: verified tosa IR.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from nnkiln.dialects.tosa.base import Kind
from nnkiln.dialects.tosa.categories import CONV2D_LIKE
from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp, MulOp
from nnkiln.dialects.tosa.ops_tensor import DepthwiseConv2DOp
from nnkiln.transforms.tosa._hw import const, const_array, elem, is_plain, shape


def _channel_vector(v: SSAValue, c: int) -> np.ndarray | None:
    """The constant ``v`` as a float32 [c] vector if it has shape [1,1,1,c] or [1,1,1,1], else None."""
    arr = const_array(v)
    if arr is None or arr.shape not in ((1, 1, 1, c), (1, 1, 1, 1)) or arr.dtype != np.float32:
        return None
    return np.broadcast_to(arr.reshape(-1), (c,)).astype(np.float32)


def _split(op: MulOp | AddOp, c: int) -> tuple[SSAValue, np.ndarray] | None:
    """(the activation operand, the per-channel constant) of a binary op, either order."""
    for k in (0, 1):
        vec = _channel_vector(op.operands[1 - k], c)
        if vec is not None and shape(op.operands[k]) == shape(op.output):
            return op.operands[k], vec
    return None


def _folded_by_fold_bias_add(x: SSAValue) -> bool:
    return isinstance(x.owner, Operation) and x.owner.name in CONV2D_LIKE and x.has_one_use()


def _scale(mul: MulOp) -> tuple[SSAValue, np.ndarray] | None:
    """(x, s) of a float32 rank-4 ``MUL(x, s)`` with a per-channel constant ``s`` that this pass converts."""
    if mul.shift.value.data or not is_plain(mul.output, Kind.F32) or len(shape(mul.output)) != 4:
        return None
    scaled = _split(mul, shape(mul.output)[3])
    return None if scaled is None or _folded_by_fold_bias_add(scaled[0]) else scaled


def _shift(add: AddOp) -> tuple[MulOp, np.ndarray] | None:
    """(the MUL, b) of an ``ADD(MUL(x, s), b)`` converted as one depthwise convolution."""
    if not is_plain(add.output, Kind.F32) or len(shape(add.output)) != 4:
        return None
    shifted = _split(add, shape(add.output)[3])
    if shifted is None:
        return None
    mul = shifted[0].owner
    if not isinstance(mul, MulOp) or not mul.output.has_one_use() or mul.output.type != add.output.type:
        return None
    return (mul, shifted[1]) if _scale(mul) is not None else None


def _depthwise(x: SSAValue, s: np.ndarray, b: np.ndarray) -> list[Operation]:
    c = s.shape[0]
    w_op, b_op = const(s.reshape(1, 1, c, 1), elem(x)), const(b, elem(x))
    dw = DepthwiseConv2DOp.make([x, w_op.output, b_op.output], elem(x), pad=(0, 0, 0, 0), stride=(1, 1),
                                dilation=(1, 1), input_zp=0, weight_zp=0)
    return [w_op, b_op, dw]


class MulAsDepthwise(RewritePattern):
    """MUL(x, s) with a per-channel constant on a float32 [N,H,W,C] and no ADD to take along →
    DEPTHWISE_CONV2D 1x1 with weights s and zero bias."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, mul: MulOp, rewriter: PatternRewriter, /) -> None:
        scaled = _scale(mul)
        if scaled is None:
            return
        user = next(iter(mul.output.uses)).operation if mul.output.has_one_use() else None
        if isinstance(user, AddOp) and _shift(user) is not None:
            return  # MulAddAsDepthwise takes both when it visits the ADD
        x, s = scaled
        rewriter.replace(mul, _depthwise(x, s, np.zeros_like(s)))


class MulAddAsDepthwise(RewritePattern):
    """ADD(MUL(x, s), b) with per-channel constants, the MUL used only there → DEPTHWISE_CONV2D 1x1 (s, b)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, add: AddOp, rewriter: PatternRewriter, /) -> None:
        shifted = _shift(add)
        if shifted is None:
            return
        mul, b = shifted
        x, s = _scale(mul)  # type: ignore[misc]
        rewriter.replace(add, _depthwise(x, s, b))
        rewriter.erase(mul)


@dataclass(frozen=True)
class ScaleShiftToDepthwise(ModulePass):
    """Per-channel float32 mul (+ add) not foldable into a convolution → 1x1 depthwise_conv2d."""

    name = "scale-shift-to-depthwise"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = GreedyRewritePatternApplier([MulAsDepthwise(), MulAddAsDepthwise()], dce_enabled=False)
        PatternRewriteWalker(patterns, apply_recursively=False).rewrite_module(op)
