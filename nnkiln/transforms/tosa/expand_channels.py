"""``expand-channels``: pad the channels of CONV2D / DEPTHWISE_CONV2D up to a multiple of ``alignment`` (16).

What:
- CONV2D ``x [N,H,W,IC]``, ``w [OC,KH,KW,IC]``, ``b [OC]`` with ``IC`` or ``OC`` not a multiple of ``alignment``
  (``IC'``, ``OC'``: rounded up): the activation is padded to ``IC'`` channels with ``tosa.pad`` whose value is
  ``input_zp`` (0 / 0.0 for float); the weights get ``IC' - IC`` extra input channels and ``OC' - OC`` extra
  filters filled with ``weight_zp``, the bias ``OC' - OC`` zeros; a ``tosa.slice`` takes the first ``OC`` output
  channels back. Only the unaligned side is expanded.
- DEPTHWISE_CONV2D ``x [N,H,W,C]``, ``w [KH,KW,C,M]``, ``b [C·M]`` with ``C`` unaligned: ``x`` padded to ``C'``
  channels with ``input_zp``, the weights to ``[KH,KW,C',M]`` with ``weight_zp``, the bias to ``C'·M`` with zeros;
  output channel ``c·M + m`` keeps its index, so the slice takes the first ``C·M``. (``C'·M`` is aligned too.)
Constant weights and biases become new ``tosa.const``s; others are padded with ``tosa.pad`` (same values).
Types handled: int8 activations with int8 weights (int32 accumulators) and the float modes; int16x8 and int8x4
convolutions are left alone.

Why: the NCE's MAC array is 16x16 (``MPE_mode = VECTOR16``, see ``nnkiln.targets.cost``): it reads and writes
channels in groups of 16, so a DPU task needs input and output channel counts divisible by 16. The
architecture's level-3 pass ``-expand-activation-channels`` "expands channels number to number divisible by 16
in case they doesn't satisfy hardware requirements" (§6.1).

Rule (when to expand): always, whatever the growth. The cost is real: a first layer with 3 input channels reads
16/3 = 5.3x the input bytes, and a 1-channel depthwise reads 16x. We still expand because the alternative is not
a cheaper NCE task but a SHAVE kernel (8 fp16 MACs per cycle against the NCE's 256 per DPU, ``targets.cost``),
which loses far more than the padding costs; this is what production NPU compilers do (VPUX expands every DPU
operation; its one exception, a channel-major input mode for the 3-channel first layer, is a hardware feature
the ``npu`` device model does not have). Layers whose channels are already aligned are unchanged, so the
pass is a no-op on them and cheap to run unconditionally.

Numerics: exact. An added input channel holds ``input_zp`` everywhere, so ``(x - input_zp) · (w - weight_zp)``
is 0 for it (float: ``0.0 · 0.0``), and an added filter's output channel is sliced away (its weights equal
``weight_zp``, so it accumulates 0 and cannot overflow). Integer results are bit-identical, with the same
accumulator REQUIREs on the same partial sums; float sums gain exact +0.0 terms only.

Legal before: verified tosa IR. After: verified tosa IR in which every rewritten convolution has aligned
channels, between a PAD and a SLICE. A chain of convolutions gets a SLICE then a PAD between two layers;
removing such pairs needs the padded channels' values (0 only for float convolutions without activation), left
to a later pass.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
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
from nnkiln.dialects.tosa.ops_tensor import Conv2DOp, DepthwiseConv2DOp
from nnkiln.transforms.tosa._hw import const, const_array, kind, pad, shape, slice_

_FLOAT = (Kind.F32, Kind.F16, Kind.BF16)


def _round_up(n: int, alignment: int) -> int:
    return -(-n // alignment) * alignment


def _supported(op: Conv2DOp | DepthwiseConv2DOp) -> bool:
    kinds = (kind(op.input), kind(op.weight), kind(op.bias), kind(op.output))
    return kinds == (Kind.I8, Kind.I8, Kind.I32, Kind.I32) or kinds[0] in _FLOAT


def _padded(v: SSAValue, padding: list[int], value: int | float, new: list[Operation]) -> SSAValue:
    """``v`` padded by ``padding`` (before_0, after_0, ...) with ``value``: a new constant if ``v`` is one, else a
    ``tosa.pad``; the op made is appended to ``new``. ``v`` itself when there is nothing to pad."""
    if not any(padding):
        return v
    arr = const_array(v)
    if arr is None:
        op: Operation = pad(v, padding, value)
    else:
        widths = list(zip(padding[0::2], padding[1::2]))
        op = const(np.pad(arr, widths, constant_values=value), v.type.element_type)  # type: ignore[attr-defined]
    new.append(op)
    return op.results[0]


def _rebuild(op: Conv2DOp | DepthwiseConv2DOp, x: SSAValue, w: SSAValue, b: SSAValue, channels: int,
             rewriter: PatternRewriter, new: list[Operation]) -> None:
    """Replace ``op`` by its copy on the padded operands followed by a slice of its first ``channels``."""
    n, oh, ow, _ = shape(op.output)
    out_type = TensorType(op.output.type.element_type, (n, oh, ow, shape(b)[0]))  # type: ignore[attr-defined]
    conv = type(op).create(operands=[x, w, b], result_types=[out_type], properties=dict(op.properties),
                           attributes=dict(op.attributes))
    conv.location = op.location  # the source node stays named (nnkiln report)
    out = slice_(conv.output, (0, 0, 0, 0), (n, oh, ow, channels))
    rewriter.replace(op, [*new, conv, out])


@dataclass(frozen=True)
class ExpandConv2D(RewritePattern):
    """CONV2D with IC or OC unaligned → PAD · CONV2D on IC'/OC' channels · SLICE."""

    alignment: int

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Conv2DOp, rewriter: PatternRewriter, /) -> None:
        oc, _, _, ic = shape(op.weight)
        ic2, oc2 = _round_up(ic, self.alignment), _round_up(oc, self.alignment)
        if (ic2, oc2) == (ic, oc) or not _supported(op):
            return
        izp, wzp = op.input_zp.value.data, op.weight_zp.value.data
        new: list[Operation] = []
        x = _padded(op.input, [0, 0, 0, 0, 0, 0, 0, ic2 - ic], izp, new)
        w = _padded(op.weight, [0, oc2 - oc, 0, 0, 0, 0, 0, ic2 - ic], wzp, new)
        b = _padded(op.bias, [0, oc2 - oc], 0, new)
        _rebuild(op, x, w, b, oc, rewriter, new)


@dataclass(frozen=True)
class ExpandDepthwise(RewritePattern):
    """DEPTHWISE_CONV2D with C unaligned → PAD · DEPTHWISE_CONV2D on C' channels · SLICE."""

    alignment: int

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DepthwiseConv2DOp, rewriter: PatternRewriter, /) -> None:
        _, _, c, m = shape(op.weight)
        c2 = _round_up(c, self.alignment)
        if c2 == c or not _supported(op):
            return
        izp, wzp = op.input_zp.value.data, op.weight_zp.value.data
        new: list[Operation] = []
        x = _padded(op.input, [0, 0, 0, 0, 0, 0, 0, c2 - c], izp, new)
        w = _padded(op.weight, [0, 0, 0, 0, 0, c2 - c, 0, 0], wzp, new)
        b = _padded(op.bias, [0, (c2 - c) * m], 0, new)
        _rebuild(op, x, w, b, c * m, rewriter, new)


@dataclass(frozen=True)
class ExpandChannels(ModulePass):
    """Pad conv2d / depthwise_conv2d channels to a multiple of ``alignment`` (pad input, slice output)."""

    name = "expand-channels"

    alignment: int = 16

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.alignment < 1:
            raise ValueError(f"expand-channels: alignment must be >= 1, not {self.alignment}")
        patterns = GreedyRewritePatternApplier([ExpandConv2D(self.alignment), ExpandDepthwise(self.alignment)],
                                               dce_enabled=False)
        PatternRewriteWalker(patterns, apply_recursively=False).rewrite_module(op)
