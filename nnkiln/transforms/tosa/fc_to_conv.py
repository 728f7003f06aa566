"""``fc-to-conv``: FULLY_CONNECTED and MATMUL with a constant right operand → a 1x1 CONV2D between reshapes.

What:
- ``FULLY_CONNECTED(x [N,IC], w [OC,IC], b [OC])`` → ``RESHAPE(CONV2D(RESHAPE(x, [1,N,1,IC]),
  w' [OC,1,1,IC], b), [N,OC])`` (``w'`` a new constant when ``w`` is one, else a RESHAPE) with stride 1, no padding, the same zero points and element types
  (float32/fp16/bf16 and int8x8 → int32, int8x4, int16x8 → int48: FULLY_CONNECTED and CONV2D share the
  conv-family type table, spec §2.3.3/§2.3.7).
- ``MATMUL(a [1,M,K], B [1,K,N])`` with ``B`` a ``tosa.const`` → ``RESHAPE(CONV2D(RESHAPE(a, [1,M,1,K]),
  Bᵀ [N,1,1,K], zeros [N]), [1,M,N])``; ``A_zp``/``B_zp`` become ``input_zp``/``weight_zp``. Only the MATMUL
  modes that have a CONV2D row with the same types: int8x8 → int32 and the float ones (int16x16 → int48 has
  none: CONV2D's 16-bit mode takes int8 weights). The weight transpose is done at compile time (a new
  ``tosa.const``; the old one is left to ``dce``).

Mapping choice: the batch goes to the *height* ([1,N,1,IC]), not to the batch axis ([N,1,1,IC]). The NCE
runs one batch item per invocation and streams the weights per invocation; with N rows of one image the
weights are loaded once and every row reuses them (the NCE's workloads are split over H), which is what a
fully-connected layer with N > 1 needs (the weights are the large operand). The values are the same either
way: every output element is the same dot product.

Why: the NCE has no fully-connected or matrix-product mode; the architecture lists FullyConnected → Conv2D
among the generic opset adaptations for the VPU (§3.3.1.1.1) and as the level-3 pass ``-convert-fc-to-conv``
("replaces all FullyConnected operations with Convolution operation. It inserts extra Reshape operations",
§6.1).

Numerics: integer results are bit-identical (the same exact sum; the same int32/int48 accumulator REQUIREs on
the same partial sums). Float results are the same dot products, possibly summed in another order by the
reference's BLAS (within the compiler's 1e-5 relative float tolerance).

Legal before: verified tosa IR. After: verified tosa IR without FULLY_CONNECTED, and without MATMULs of the
kinds above (MATMULs of two activations, batch > 1 or int16 stay).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern

from nnkiln.dialects.tosa.base import Kind
from nnkiln.dialects.tosa.ops_tensor import Conv2DOp, FullyConnectedOp, MatMulOp
from nnkiln.transforms.tosa._hw import const, const_array, elem, kind, reshape, shape

_UNIT = {"pad": (0, 0, 0, 0), "stride": (1, 1), "dilation": (1, 1)}

_MATMUL_AS_CONV = {  # (A, B, output) kinds of MATMUL that CONV2D computes with (input, weight, bias, output)
    (Kind.I8, Kind.I8, Kind.I32),
    (Kind.F16, Kind.F16, Kind.F16),
    (Kind.F16, Kind.F16, Kind.F32),
    (Kind.BF16, Kind.BF16, Kind.F32),
    (Kind.F32, Kind.F32, Kind.F32),
}


class FullyConnectedToConv(RewritePattern):
    """FULLY_CONNECTED [N,IC] x [OC,IC] → RESHAPE · 1x1 CONV2D on [1,N,1,IC] · RESHAPE."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, fc: FullyConnectedOp, rewriter: PatternRewriter, /) -> None:
        n, ic = shape(fc.input)
        oc = shape(fc.weight)[0]
        x = reshape(fc.input, (1, n, 1, ic))
        w_arr = const_array(fc.weight)
        w = reshape(fc.weight, (oc, 1, 1, ic)) if w_arr is None else const(w_arr.reshape(oc, 1, 1, ic), elem(fc.weight))
        conv = Conv2DOp.make([x.output, w.output, fc.bias], elem(fc.output), input_zp=fc.input_zp.value.data,
                             weight_zp=fc.weight_zp.value.data, **_UNIT)
        conv.location = fc.location  # the source node stays named (nnkiln report)
        out = reshape(conv.output, (n, oc))
        rewriter.replace(fc, [x, w, conv, out])


class ConstMatMulToConv(RewritePattern):
    """MATMUL [1,M,K] x const [1,K,N] → RESHAPE · 1x1 CONV2D with weights Bᵀ [N,1,1,K] · RESHAPE."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, mm: MatMulOp, rewriter: PatternRewriter, /) -> None:
        b = const_array(mm.B)
        if b is None or shape(mm.A)[0] != 1 or (kind(mm.A), kind(mm.B), kind(mm.output)) not in _MATMUL_AS_CONV:
            return
        _, m, k = shape(mm.A)
        n = b.shape[2]
        x = reshape(mm.A, (1, m, 1, k))
        w = const(b[0].T.reshape(n, 1, 1, k), elem(mm.B))
        bias = const(np.zeros((n,), np.int32 if kind(mm.output) is Kind.I32 else np.float32), elem(mm.output))
        conv = Conv2DOp.make([x.output, w.output, bias.output], elem(mm.output), input_zp=mm.A_zp.value.data,
                             weight_zp=mm.B_zp.value.data, **_UNIT)
        conv.location = mm.location  # the source node stays named (nnkiln report)
        out = reshape(conv.output, (1, m, n))
        rewriter.replace(mm, [x, w, bias, conv, out])


@dataclass(frozen=True)
class FcToConv(ModulePass):
    """FULLY_CONNECTED and constant-weight MATMUL (batch 1) → 1x1 CONV2D between reshapes."""

    name = "fc-to-conv"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FullyConnectedToConv(), apply_recursively=False).rewrite_module(op)
        PatternRewriteWalker(ConstMatMulToConv(), apply_recursively=False).rewrite_module(op)
