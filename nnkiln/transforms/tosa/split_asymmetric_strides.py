"""``split-asymmetric-strides``: CONV2D / DEPTHWISE_CONV2D / AVG_POOL2D / MAX_POOL2D with stride (sy, sx), sy ≠ sx →
the same op with the symmetric stride (g, g), g = gcd(sy, sx), followed by an exact subsampling of the output.

What: an op with a single output row (OH = 1) takes ``sx`` as its stride along H too, and one with a single output
column takes ``sy`` along W: the stride of a one-output axis is never used, and the shape rule still holds (its
numerator ``IH - 1 + pads - (KH - 1)·dilation`` is 0). That is every 1-D convolution and pooling, which the ONNX
importer gives as a CONV2D / MAX_POOL2D on [N,1,W,C] with stride (1, s), so for them the rewrite is free.
Otherwise, with ``fy = sy / g`` and ``fx = sx / g`` (one of them is 1), output row ``oy`` of the original op is row
``oy · fy`` of the op run with stride g (the window of output ``p`` at stride g starts at input row
``p·g - pad_top``; at ``p = oy·fy`` that is ``oy·sy - pad_top``, the original window, for any kernel, dilation,
padding and pool divisor), and likewise for columns. TOSA 0.30's SLICE has no step, so the subsampling of an
axis of length ``L = (O - 1)·f + 1`` to its ``O`` rows ``0, f, 2f, ...`` is: PAD the axis at its end by ``f - 1``
(to ``O·f``; the pad value is never read), RESHAPE so that the axis becomes ``[O, f]`` next to merged outer and
inner dimensions (rank 3: ``[N·O, f, W·C]`` for rows, ``[N·H·O, f, C]`` for columns), SLICE index 0 of the
``f`` axis, RESHAPE back to rank 4. The stride-g op is valid: TOSA requires ``IH - 1 + pads - (KH - 1)·dilation``
(pools: ``IH + pads - KH``) to be a multiple of ``sy``, hence of ``g``.

Why: the NCE takes one stride for both spatial axes: the architecture's level-3 pass ``-handle-asymmetric-strides``
"splits operations so that they are able to be infered with symmetric strides on dpu because of hardware
limitation" (§6.1); that is the device rule this pass implements (the stride register is one value).

Cost and alternative (the choice made): the op computes ``fy`` (or ``fx``) times as many outputs as needed on
the subsampled axis (e.g. a stride (2, 1) pooling computes twice its outputs) and the subsampling is data
movement (PAD/RESHAPE/SLICE: DMA, no arithmetic). The other exact rewrite, one op per output row on a SLICE of
the input rows its window reads, wastes no MACs but makes O_h tasks with their weight loads and per-task
overhead (``targets.cost``: 500 cycles per NCE task) and a CONCAT; for the small factors seen in practice
(2 or 3) the symmetric-stride form is the cheaper one. A possible refinement, not done: when the subsampled axis
has kernel 1 and no padding (e.g. a 1x1 convolution with stride (2, 1)), subsample the input instead of the
output and compute no extra outputs.

Numerics: exact (integer and float): every kept output is computed from the same window in the same way. One
caveat: the extra, dropped outputs of an integer convolution are accumulated too, so an int32 accumulator
overflow (a REQUIRE failure, spec §1.9) in a window the original op skips would now be reported; that needs
partial sums near 2^31, which valid int8 graphs do not reach. Ops with int48 results (int16x8 convolutions: PAD
has no int48 mode) or quantized element types are left alone.

Legal before: verified tosa IR. After: verified tosa IR in which no CONV2D, DEPTHWISE_CONV2D, AVG_POOL2D or
MAX_POOL2D has unequal strides.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

from nnkiln.dialects.tosa.base import Kind, to_attr
from nnkiln.transforms.tosa._hw import CONV_STRIDED, is_plain, pad, reshape, shape, slice_, ttype

_PADDABLE = (Kind.I8, Kind.I16, Kind.I32, Kind.F16, Kind.BF16, Kind.F32)


def subsample(v: SSAValue, axis: int, factor: int, count: int, new: list[Operation]) -> SSAValue:
    """Indices ``0, factor, ..., (count - 1)·factor`` of ``axis`` (1 or 2) of the rank-4 ``v``; ops go to ``new``."""
    dims = list(shape(v))
    if factor == 1:
        return v
    padding = [0] * 8
    padding[2 * axis + 1] = count * factor - dims[axis]
    padded = pad(v, padding, 0)
    outer, inner = math.prod(dims[:axis]) * count, math.prod(dims[axis + 1:])
    grouped = reshape(padded.output, (outer, factor, inner))
    first = slice_(grouped.output, (0, 0, 0), (outer, 1, inner))
    dims[axis] = count
    back = reshape(first.output, dims)
    new += [padded, grouped, first, back]
    return back.output


def _with_stride(op: Operation, stride: int, result_type: TensorType) -> Operation:
    """``op`` with stride (stride, stride) and ``result_type``."""
    props = {**op.properties, "stride": to_attr((stride, stride))}
    new = type(op).create(operands=list(op.operands), result_types=[result_type], properties=props,
                          attributes=dict(op.attributes))
    new.location = op.location  # the source node stays named (nnkiln report)
    return new


class SymmetricStride(RewritePattern):
    """A windowed NCE op with stride (sy, sx), sy ≠ sx → the op with stride (g, g) and a subsampled output."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if op.name not in CONV_STRIDED:
            return
        sy, sx = op.stride.get_values()  # type: ignore[attr-defined]
        if sy == sx or not is_plain(op.results[0], *_PADDABLE):
            return
        n, oh, ow, c = shape(op.results[0])
        if oh == 1 or ow == 1:  # the stride of a one-output axis is never used: take the other one
            s = sx if oh == 1 else sy
            rewriter.replace(op, [_with_stride(op, s, ttype(op.results[0]))])
            return
        g = math.gcd(sy, sx)
        fy, fx = sy // g, sx // g
        wide = TensorType(ttype(op.results[0]).element_type, (n, (oh - 1) * fy + 1, (ow - 1) * fx + 1, c))
        new: list[Operation] = [_with_stride(op, g, wide)]
        rows = subsample(new[0].results[0], 1, fy, oh, new)
        cols = subsample(rows, 2, fx, ow, new)
        rewriter.replace(op, new, [cols])


@dataclass(frozen=True)
class SplitAsymmetricStrides(ModulePass):
    """conv2d / depthwise_conv2d / avg_pool2d / max_pool2d with unequal strides → symmetric stride + subsampling."""

    name = "split-asymmetric-strides"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(SymmetricStride(), apply_recursively=False).rewrite_module(op)
