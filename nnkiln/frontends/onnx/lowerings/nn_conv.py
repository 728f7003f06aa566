"""ONNX Conv, ConvTranspose, MaxPool, AveragePool, LpPool, GlobalAveragePool, GlobalMaxPool, Gemm and
MatMul → TOSA 0.30 (part of the ``nn`` family, imported by ``nn``).

Layout: ONNX feature maps are N C D1..Dk; TOSA's CONV2D / CONV3D / DEPTHWISE_CONV2D /
TRANSPOSE_CONV2D / AVG_POOL2D / MAX_POOL2D are channels-last. Each lowering transposes the input to
N D1..Dk C, runs the op and transposes back (back-to-back pairs are removed by a later pass). 1-D
ops run as 2-D ops with H = 1 (RESHAPE [N,L,C] ↔ [N,1,L,C]).

Output sizes: ONNX divides with floor (or ceil with ``ceil_mode``); TOSA requires the division to
be exact (spec §2.3, ``idiv_check``). The end padding is therefore adjusted so that the last window
ends exactly at the padded edge: rows a floor division never reads are removed by trimming the end
padding and, when that is not enough, by a SLICE of the input; ceil mode adds end padding (which the
pools ignore — MAX_POOL2D never sees padding, AVG_POOL2D excludes it from the divisor).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind
from nnkiln.frontends.common import nn as _nn
from nnkiln.frontends.common.broadcast import reshape
from nnkiln.frontends.common.layout import channels_first_perm, channels_last_perm, transpose, transpose_const
from nnkiln.frontends.common.padding import auto_pad_pairs, onnx_pads_to_pairs
from nnkiln.frontends.onnx.importer import NodeContext, TensorValue
from nnkiln.frontends.onnx.lowerings import lowering
from nnkiln.frontends.onnx.lowerings._nn_common import (
    add,
    const_like,
    etype,
    mul,
    np_dtype,
    scalar,
    shape_of,
    sqrt,
    value_of,
)

Result = list[TensorValue | SSAValue | np.ndarray]
CONV_KINDS = (Kind.F32, Kind.F16)


# ------------------------------------------------------------------------------------------------
# geometry


window_geometry = _nn.window_geometry


def spatial_attrs(ctx: NodeContext, in_sizes: Sequence[int], kernel: Sequence[int]
                  ) -> tuple[list[int], list[int], list[tuple[int, int]]]:
    """(strides, dilations, (begin, end) pads) of a conv/pool node, ``auto_pad`` resolved."""
    k = len(in_sizes)
    strides = [int(s) for s in (ctx.attr("strides") or [1] * k)]
    dilations = [int(d) for d in (ctx.attr("dilations") or [1] * k)]
    if len(strides) != k or len(dilations) != k:
        raise ctx.error(f"strides {strides} / dilations {dilations} do not have {k} values")
    auto_pad = ctx.attr("auto_pad", "NOTSET") or "NOTSET"
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        pairs = auto_pad_pairs(auto_pad, in_sizes, kernel, strides, dilations)
    elif auto_pad == "VALID":
        pairs = [(0, 0)] * k
    elif auto_pad == "NOTSET":
        try:
            pairs = onnx_pads_to_pairs(ctx.attr("pads") or [], k)
        except ValueError as err:
            raise ctx.error(str(err)) from None
    else:
        raise ctx.error(f"auto_pad '{auto_pad}' is not supported")
    if any(b < 0 or e < 0 for b, e in pairs):
        raise ctx.error(f"negative pads {pairs} are not supported")
    return strides, dilations, pairs


def to_channels_last(ctx: NodeContext, x: SSAValue) -> SSAValue:
    """N C D1..Dk → N D1..Dk C (1-D: → N 1 L C); see ``frontends.common.nn``."""
    return _nn.to_channels_last(ctx.g, x)


def to_channels_first(ctx: NodeContext, y: SSAValue, spatial: int) -> SSAValue:
    return _nn.to_channels_first(ctx.g, y, spatial)


def slice_value(ctx: NodeContext, x: SSAValue, start: Sequence[int], size: Sequence[int]) -> SSAValue:
    return _nn.slice_value(ctx.g, x, start, size)


def pad_value(ctx: NodeContext, x: SSAValue, pairs: Sequence[tuple[int, int]], value: float = 0.0) -> SSAValue:
    return _nn.pad_value(ctx.g, x, pairs, value)


def trim_input(ctx: NodeContext, x: SSAValue, ends: Sequence[int]) -> tuple[SSAValue, list[int]]:
    return _nn.trim_input(ctx.g, x, ends)


def _conv_kind(ctx: NodeContext, v: TensorValue) -> None:
    if v.kind not in CONV_KINDS:
        raise ctx.error(f"{v.kind.value} tensors are not supported (TOSA 0.30 float convolutions, pools and "
                        f"matmuls are fp32 or fp16 in and out; integer forms are ConvInteger/QLinear*)")


def _weight(ctx: NodeContext, i: int, perm: Sequence[int], shape: Sequence[int] | None = None) -> SSAValue:
    """Weight input ``i`` permuted by ``perm`` and optionally reshaped (numpy for constants, else IR)."""
    v = ctx.input(i)
    if v.is_const:
        arr = np.asarray(v.const).astype(np_dtype(v.kind))
        if shape is not None:
            arr = arr.reshape(shape)
        return const_like(ctx.g, transpose_const(arr, perm), value_of(ctx, ctx.input(0)))
    w = value_of(ctx, v)
    if shape is not None:
        w = reshape(ctx.g, w, shape)
    return transpose(ctx.g, w, perm)


def _bias(ctx: NodeContext, i: int, channels: int, like: SSAValue) -> SSAValue:
    if ctx.has_input(i):
        b = ctx.input(i)
        if b.shape != (channels,):
            raise ctx.error(f"bias has shape {list(b.shape)}, expected [{channels}]")
        if b.is_const:
            return const_like(ctx.g, b.const, like)
        return value_of(ctx, b)
    return const_like(ctx.g, np.zeros(channels), like)


# ------------------------------------------------------------------------------------------------
# Conv


@lowering("Conv")
def Conv(ctx: NodeContext) -> Result:
    """Conv (opsets 1, 11, 22): 1-D as CONV2D with H = 1, 2-D as CONV2D, 3-D as CONV3D; ``group`` 1 is
    one convolution, ``group == C`` (channel multiplier M/C) is DEPTHWISE_CONV2D in 1-D/2-D, other group
    counts (and grouped 3-D) are per-group convolutions joined by CONCAT. The bias is optional (zeros).
    Weights M C/g K.. are transposed to OHWI (depthwise: HWCM) at import when constant, with TRANSPOSE
    otherwise."""

    xv, wv = ctx.input(0), ctx.input(1)
    _conv_kind(ctx, xv)
    k = xv.rank - 2
    if k not in (1, 2, 3) or wv.rank != xv.rank:
        raise ctx.error(f"a Conv with input rank {xv.rank} is not supported (1-D, 2-D and 3-D only)")
    kernel = list(wv.shape[2:])
    ks = ctx.attr("kernel_shape")
    if ks is not None and list(ks) != kernel:
        raise ctx.error(f"kernel_shape {ks} does not match the weight shape {list(wv.shape)}")
    in_sizes = list(xv.shape[2:])
    strides, dilations, pairs = spatial_attrs(ctx, in_sizes, kernel)
    group = int(ctx.attr("group", 1))
    c_in, m_out = xv.shape[1], wv.shape[0]
    if group < 1 or c_in % group or m_out % group or wv.shape[1] * group != c_in:
        raise ctx.error(f"group {group} does not fit input channels {c_in} and weight {list(wv.shape)}")
    x = value_of(ctx, xv)
    w = np.asarray(wv.const) if wv.is_const else value_of(ctx, wv)
    return [_nn.conv_nchw(ctx.g, x, w, _bias(ctx, 2, m_out, x), pairs, strides, dilations, group)]


# ------------------------------------------------------------------------------------------------
# ConvTranspose


_dilate_kernel = _nn.dilate_kernel


def _dilate_kernel_ir(ctx: NodeContext, w: SSAValue, dilations: Sequence[int]) -> SSAValue:
    return _nn.dilate_kernel_ir(ctx.g, w, dilations)


@lowering("ConvTranspose")
def ConvTranspose(ctx: NodeContext) -> Result:
    """ConvTranspose (opsets 1, 11, 22) as TRANSPOSE_CONV2D (1-D with H = 1; 3-D is not supported:
    TOSA 0.30 has no 3-D transposed convolution).

    ONNX places ``x[iy]·w[ky]`` at ``oy = iy·s + ky·d − pad_begin`` and the output size is
    ``s·(in−1) + output_padding + (K−1)·d + 1 − pad_begin − pad_end`` (or ``output_shape``, whose
    padding split follows ``auto_pad``: SAME_UPPER puts the odd unit at the end, otherwise at the
    begin). TRANSPOSE_CONV2D computes ``oy = iy·stride − out_pad_top + ky`` over ``(in−1)·s + K``
    rows minus ``out_pad_top + out_pad_bottom``: out_pad_top = pad_begin, out_pad_bottom = pad_end −
    output_padding. Where those are negative (rows that only receive the bias), the op runs with
    zero crop and zero bias, the result is PADded with zeros and the bias is ADDed.

    Decision: dilations > 1 use a constant kernel with d−1 zero taps inserted between taps (exact for
    finite inputs; an inf/NaN input also poisons the zero taps' positions). Groups run as per-group
    TRANSPOSE_CONV2Ds joined by CONCAT.
    """
    xv, wv = ctx.input(0), ctx.input(1)
    _conv_kind(ctx, xv)
    k = xv.rank - 2
    if k not in (1, 2) or wv.rank != xv.rank:
        raise ctx.error(f"a ConvTranspose with {k} spatial axes is not supported (1-D and 2-D only)")
    in_sizes = list(xv.shape[2:])
    kernel = list(wv.shape[2:])
    strides = [int(s) for s in (ctx.attr("strides") or [1] * k)]
    dilations = [int(d) for d in (ctx.attr("dilations") or [1] * k)]
    out_padding = [int(p) for p in (ctx.attr("output_padding") or [0] * k)][:k]
    group = int(ctx.attr("group", 1))
    c_in = xv.shape[1]
    if group < 1 or c_in % group or wv.shape[0] != c_in:
        raise ctx.error(f"group {group} does not fit input channels {c_in} and weight {list(wv.shape)}")
    m_out = wv.shape[1] * group
    auto_pad = ctx.attr("auto_pad", "NOTSET") or "NOTSET"
    pads = ctx.attr("pads")
    out_shape = ctx.attr("output_shape")
    if out_shape is not None:
        out_shape = [int(s) for s in out_shape][-k:]
    effs = [(kk - 1) * d + 1 for kk, d in zip(kernel, dilations)]
    fulls = [s * (i - 1) + op + e for s, i, op, e in zip(strides, in_sizes, out_padding, effs)]
    if pads is None and (out_shape is not None or auto_pad in ("SAME_UPPER", "SAME_LOWER")):
        if out_shape is None:
            out_shape = [i * s for i, s in zip(in_sizes, strides)]
        pairs = []
        for full, o in zip(fulls, out_shape):
            total = full - o
            if auto_pad == "SAME_UPPER":
                pairs.append((total // 2, total - total // 2))
            else:
                pairs.append((total - total // 2, total // 2))
    else:
        pairs = onnx_pads_to_pairs(pads or [], k)
        if out_shape is None:
            out_shape = [f - b - e for f, (b, e) in zip(fulls, pairs)]
    if any(o < 1 for o in out_shape):
        raise ctx.error(f"output size {out_shape} is not positive")
    x = value_of(ctx, xv)
    w = np.asarray(wv.const) if wv.is_const else value_of(ctx, wv)
    return [_nn.transpose_conv_nchw(ctx.g, x, w, _bias(ctx, 2, m_out, x), strides, dilations,
                                    [b for b, _ in pairs], out_shape, group)]


# ------------------------------------------------------------------------------------------------
# pools


def _pool_setup(ctx: NodeContext, what: str
                ) -> tuple[TensorValue, list[int], list[int], list[int], list[tuple[int, int]], bool]:
    xv = ctx.input(0)
    _conv_kind(ctx, xv) if xv.kind is not Kind.I8 else None
    k = xv.rank - 2
    if k not in (1, 2, 3):
        raise ctx.error(f"a {what} with input rank {xv.rank} is not supported (1-D, 2-D and 3-D only)")
    kernel = [int(v) for v in ctx.attr("kernel_shape") or []]
    if len(kernel) != k:
        raise ctx.error(f"kernel_shape {kernel} must have {k} values")
    strides, dilations, pairs = spatial_attrs(ctx, list(xv.shape[2:]), kernel)
    ceil_mode = bool(ctx.attr("ceil_mode", 0))
    return xv, kernel, strides, dilations, pairs, ceil_mode


def _axis_pool(ctx: NodeContext, is_max: bool, x: SSAValue, axis: int, kernel: int, stride: int,
               dilation: int, out: int) -> SSAValue:
    return _nn.axis_pool(ctx.g, is_max, x, axis, kernel, stride, dilation, out)


_pool_fill = _nn.pool_fill


def _separable_pool(ctx: NodeContext, is_max: bool, xv: TensorValue, kernel: Sequence[int],
                    strides: Sequence[int], dilations: Sequence[int], pairs: Sequence[tuple[int, int]],
                    ceil_mode: bool, count_include_pad: bool | None) -> SSAValue:
    """A pool with dilations: explicit PAD (−inf for max, 0 for sums) to exactly the span of the
    windows, then one ``_axis_pool`` per spatial axis (a box window factors into per-axis maxima /
    sums). Averages divide the sum by a constant count computed at import: the taps inside the input
    (``count_include_pad = 0``) or inside the explicitly padded input (``= 1``); ``None`` returns the
    plain sums (LpPool)."""
    in_sizes = list(xv.shape[2:])
    geo = [window_geometry(s, kk, st, d, b, e, ceil_mode) for s, kk, st, d, (b, e) in
           zip(in_sizes, kernel, strides, dilations, pairs)]
    if any(o < 1 for o, _ in geo):
        raise ctx.error(f"the kernel {list(kernel)} is larger than the padded input {in_sizes}")
    x = transpose(ctx.g, value_of(ctx, xv), channels_last_perm(xv.rank))
    k = len(kernel)
    fill = _pool_fill(x) if is_max else 0.0
    x = pad_value(ctx, x, [(0, 0)] + [(b, max(e, 0)) for (b, _), (_, e) in zip(pairs, geo)] + [(0, 0)], fill)
    for i in range(k):
        x = _axis_pool(ctx, is_max, x, 1 + i, kernel[i], strides[i], dilations[i], geo[i][0])
    if not is_max and count_include_pad is not None:
        count = np.ones((1,), dtype=np.float64)
        for i in range(k):
            out, (b, e) = geo[i][0], pairs[i]
            lo, hi = (-b, in_sizes[i] + e) if count_include_pad else (0, in_sizes[i])
            taps = np.arange(out)[:, None] * strides[i] - b + np.arange(kernel[i])[None, :] * dilations[i]
            c_i = ((taps >= lo) & (taps < hi)).sum(axis=1).astype(np.float64)
            count = np.multiply.outer(count, c_i)
        count = count.reshape((1, *[o for o, _ in geo], 1))
        x = mul(ctx.g, x, const_like(ctx.g, 1.0 / count, x))
    return transpose(ctx.g, x, channels_first_perm(xv.rank))


def _pool2d(ctx: NodeContext, op: type, x: SSAValue, kernel: Sequence[int], strides: Sequence[int],
            begins: Sequence[int], ends: Sequence[int]) -> SSAValue:
    return _nn.pool2d(ctx.g, op, x, kernel, strides, begins, ends)


def _pool_nd(ctx: NodeContext, op: type, x: SSAValue, kernel: Sequence[int], strides: Sequence[int],
             begins: Sequence[int], ends: Sequence[int]) -> SSAValue:
    return _nn.pool_nd(ctx.g, op, x, kernel, strides, begins, ends)


def _pool_common(ctx: NodeContext, op: type, count_include_pad: bool = False) -> SSAValue:
    xv, kernel, strides, dilations, pairs, ceil_mode = _pool_setup(ctx, ctx.op_type)
    if any(d != 1 for d in dilations):
        from nnkiln.dialects.tosa.ops_tensor import MaxPool2dOp

        is_max = op is MaxPool2dOp
        return _separable_pool(ctx, is_max, xv, kernel, strides, dilations, pairs, ceil_mode,
                               None if is_max else count_include_pad)
    in_sizes = list(xv.shape[2:])
    geo = [window_geometry(s, kk, st, 1, b, e, ceil_mode) for s, kk, st, (b, e) in
           zip(in_sizes, kernel, strides, pairs)]
    if any(o < 1 for o, _ in geo):
        raise ctx.error(f"the kernel {kernel} is larger than the padded input {in_sizes}")
    x = to_channels_last(ctx, value_of(ctx, xv))
    begins = [b for b, _ in pairs]
    ends = [e for _, e in geo]
    if count_include_pad:
        # explicit zero padding counts in the divisor; the ceil-mode extension beyond it does not
        explicit = [(b, min(e, max(need, 0))) for (b, e), need in zip(pairs, ends)]
        spatial_pairs = [(0, 0)] * (len(shape_of(x)) - 2 - len(kernel)) + explicit
        x = pad_value(ctx, x, [(0, 0)] + spatial_pairs + [(0, 0)])
        ends = [need - ex for need, (_, ex) in zip(ends, explicit)]
        begins = [0] * len(begins)
    x, ends = trim_input(ctx, x, ends)
    y = _pool_nd(ctx, op, x, kernel, strides, begins, ends)
    return to_channels_first(ctx, y, len(kernel))


@lowering("MaxPool")
def MaxPool(ctx: NodeContext) -> Result:
    """MaxPool (opsets 1, 8, 10, 11, 12, 22) as MAX_POOL2D (padding never wins, as in ONNX where pads
    are −inf); ``ceil_mode``, ``auto_pad`` and dilations supported; int8 and float inputs. The Indices output
    (``storage_order`` 0 or 1) is ``_pool_indices.maxpool_indices``."""
    from nnkiln.dialects.tosa.ops_tensor import MaxPool2dOp
    from nnkiln.frontends.onnx.lowerings._pool_indices import maxpool_indices

    storage_order = int(ctx.attr("storage_order", 0))
    if storage_order not in (0, 1):
        raise ctx.error(f"storage_order {storage_order} is not supported (0 or 1)")
    y = _pool_common(ctx, MaxPool2dOp)
    if len(ctx.node.output) < 2 or not ctx.node.output[1]:
        return [y]
    xv, kernel, strides, dilations, pairs, ceil_mode = _pool_setup(ctx, "MaxPool")
    return [y, maxpool_indices(ctx, value_of(ctx, xv), kernel, strides, dilations, pairs, ceil_mode,
                               storage_order)]


@lowering("AveragePool")
def AveragePool(ctx: NodeContext) -> Result:
    """AveragePool (opsets 1, 7, 10, 11, 19, 22) as AVG_POOL2D.

    ``count_include_pad = 0``: ONNX divides by the number of input elements in the window, which is
    AVG_POOL2D's divisor (padding excluded). ``count_include_pad = 1``: the explicit pads are a PAD
    with zeros first (so they count), then the pool runs without them; the ceil-mode extension past
    the explicit pads is not counted by ONNX either, and AVG_POOL2D excludes it as padding.
    Dilations > 1 are not supported."""
    from nnkiln.dialects.tosa.ops_tensor import AvgPool2dOp

    if ctx.input(0).kind is Kind.I8:
        raise ctx.error("int8 AveragePool is not supported (ONNX rounds differently than AVG_POOL2D)")
    include = bool(ctx.attr("count_include_pad", 0))
    return [_pool_common(ctx, AvgPool2dOp, include)]


@lowering("LpPool")
def LpPool(ctx: NodeContext) -> Result:
    """LpPool (opsets 1, 2, 11, 18, 22): ``(Σ |x|^p)^(1/p)`` over each window. The window sums come from
    ``_separable_pool`` over the explicitly zero-padded ``|x|^p`` (dilations and ceil_mode included). p = 1:
    the sum of |x|; p = 2: sqrt (RECIPROCAL(RSQRT(·))) of the sum of x²; p >= 3: ``|x|^p`` as a chain of p - 1
    MULs (float32 products, as ``x·x·…``) and the root as POW(sum, 1/p) (float32 POW: within a few ulps, not
    bit-exact; checked against onnxruntime)."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import PowOp
    from nnkiln.dialects.tosa.ops_elementwise_unary import AbsOp

    p = int(ctx.attr("p", 2))
    if p < 1:
        raise ctx.error(f"p = {p} is not supported (the norm needs p >= 1)")
    xv, kernel, strides, dilations, pairs, ceil_mode = _pool_setup(ctx, "LpPool")
    x = value_of(ctx, xv)
    if p == 2:
        powered = mul(ctx.g, x, x)
    else:
        ax = ctx.g.value(AbsOp, [x], etype(x))
        powered = ax
        for _ in range(p - 1):
            powered = mul(ctx.g, powered, ax)
    y = _separable_pool(ctx, False, TensorValue.of(powered), kernel, strides, dilations, pairs, ceil_mode, None)
    if p == 1:
        return [y]
    if p == 2:
        return [sqrt(ctx.g, y)]
    from nnkiln.frontends.common.arith import scalar_like

    shape = shape_of(y)
    flat = reshape(ctx.g, y, (math.prod(shape),)) if len(shape) > 4 else y  # POW takes ranks 1..4
    root = ctx.g.value(PowOp, [flat, scalar_like(ctx.g, 1.0 / p, flat)], etype(flat))
    return [reshape(ctx.g, root, shape) if len(shape) > 4 else root]


def _global(ctx: NodeContext, op: type) -> SSAValue:
    xv = ctx.input(0)
    if xv.rank < 3:
        raise ctx.error(f"input rank {xv.rank} < 3")
    _conv_kind(ctx, xv) if xv.kind is not Kind.I8 else None
    n, c = xv.shape[:2]
    s = math.prod(xv.shape[2:])
    x = reshape(ctx.g, value_of(ctx, xv), (n, c, s))
    y = ctx.g.value(op, [x], etype(x), axis=2)
    return y


@lowering("GlobalAveragePool")
def GlobalAveragePool(ctx: NodeContext) -> Result:
    """GlobalAveragePool: REDUCE_SUM over the flattened spatial axes of [N, C, S] times 1/S, reshaped
    to [N, C, 1, ..., 1] (no layout change needed)."""
    from nnkiln.dialects.tosa.ops_reduction import ReduceSumOp

    xv = ctx.input(0)
    if xv.kind not in CONV_KINDS:
        _conv_kind(ctx, xv)
    y = _global(ctx, ReduceSumOp)
    s = math.prod(xv.shape[2:])
    if s != 1:
        y = mul(ctx.g, y, scalar(ctx.g, 1.0 / s, y))
    return [reshape(ctx.g, y, (*xv.shape[:2], *([1] * (xv.rank - 2))))]


@lowering("GlobalMaxPool")
def GlobalMaxPool(ctx: NodeContext) -> Result:
    """GlobalMaxPool: REDUCE_MAX over the flattened spatial axes of [N, C, S]."""
    from nnkiln.dialects.tosa.ops_reduction import ReduceMaxOp

    xv = ctx.input(0)
    y = _global(ctx, ReduceMaxOp)
    return [reshape(ctx.g, y, (*xv.shape[:2], *([1] * (xv.rank - 2))))]


# ------------------------------------------------------------------------------------------------
# Gemm, MatMul


@lowering("Gemm")
def Gemm(ctx: NodeContext) -> Result:
    """Gemm: ``alpha · A' · B' + beta · C`` (A' = Aᵀ if transA, B' likewise).

    Constant B: FULLY_CONNECTED with weight ``alpha · B'ᵀ`` ([N, K], folded at import) and bias
    ``beta · C`` when C broadcasts along rows (shape [], [1], [N], [1, N]); other C are ADDed after a
    zero-bias FULLY_CONNECTED. Dynamic B: MATMUL on [1, M, K] × [1, K, N], then MUL by alpha and ADD
    of beta · C. fp32/fp16 only."""
    from nnkiln.dialects.tosa.ops_tensor import FullyConnectedOp, MatMulOp

    av, bv = ctx.input(0), ctx.input(1)
    _conv_kind(ctx, av)
    alpha = float(ctx.attr("alpha", 1.0))
    beta = float(ctx.attr("beta", 1.0))
    trans_a = bool(ctx.attr("transA", 0))
    trans_b = bool(ctx.attr("transB", 0))
    ctx.attr("broadcast")
    if av.rank != 2 or bv.rank != 2:
        raise ctx.error(f"A and B must be matrices, got shapes {list(av.shape)} and {list(bv.shape)}")
    a = value_of(ctx, av)
    if trans_a:
        a = transpose(ctx.g, a, (1, 0))
    m, kdim = shape_of(a)
    n = bv.shape[0] if trans_b else bv.shape[1]
    cv = ctx.input(2) if ctx.has_input(2) else None
    c_const = None if cv is None else (np.asarray(cv.const, dtype=np.float64) * beta if cv.is_const else None)
    row_bias = c_const is not None and (c_const.ndim == 0 or c_const.shape[-1:] in ((1,), (n,))) and \
        math.prod(c_const.shape[:-1]) == 1
    if bv.is_const:
        w = np.asarray(bv.const, dtype=np.float64)
        w = (w if trans_b else w.T) * alpha
        if row_bias:
            bias = np.broadcast_to(np.asarray(c_const).reshape(-1), (n,))
        else:
            bias = np.zeros(n)
        y = ctx.g.value(FullyConnectedOp, [a, const_like(ctx.g, w, a), const_like(ctx.g, bias, a)], etype(a),
                        input_zp=0, weight_zp=0)
    else:
        b = value_of(ctx, bv)
        if trans_b:
            b = transpose(ctx.g, b, (1, 0))
        y = ctx.g.value(MatMulOp, [reshape(ctx.g, a, (1, m, kdim)), reshape(ctx.g, b, (1, kdim, n))], etype(a),
                        A_zp=0, B_zp=0)
        y = reshape(ctx.g, y, (m, n))
        if alpha != 1.0:
            y = mul(ctx.g, y, scalar(ctx.g, alpha, y))
        row_bias = False
    if cv is not None and not (bv.is_const and row_bias) and beta != 0.0:
        if c_const is not None:
            y = add(ctx.g, y, const_like(ctx.g, c_const, y))
        else:
            c = value_of(ctx, cv)
            if beta != 1.0:
                c = mul(ctx.g, c, scalar(ctx.g, beta, c))
            y = add(ctx.g, y, c)
    return [y]


@lowering("MatMul")
def MatMul(ctx: NodeContext) -> Result:
    """MatMul (numpy matmul semantics) as MATMUL on rank-3 operands.

    1-D operands get a 1 prepended (A) / appended (B) that is removed from the result. Batch
    dimensions broadcast: when B has no batch (or all 1s), A's batch folds into its rows ([1, b·M, K]);
    equal batches flatten to [b, M, K] × [b, K, N]; otherwise the operand with the smaller batch is
    TILEd (folded with numpy for constants) to the broadcast batch first. fp32/fp16 only."""
    from nnkiln.dialects.tosa.ops_data_layout import TileOp
    from nnkiln.dialects.tosa.ops_tensor import MatMulOp

    av, bv = ctx.input(0), ctx.input(1)
    _conv_kind(ctx, av)
    if av.rank == 0 or bv.rank == 0:
        raise ctx.error("MatMul operands must have rank >= 1")
    a_shape = (1, *av.shape) if av.rank == 1 else av.shape
    b_shape = (*bv.shape, 1) if bv.rank == 1 else bv.shape
    m, k = a_shape[-2:]
    k2, n = b_shape[-2:]
    if k != k2:
        raise ctx.error(f"inner dimensions differ: {list(av.shape)} x {list(bv.shape)}")
    try:
        batch = tuple(int(d) for d in np.broadcast_shapes(a_shape[:-2], b_shape[:-2]))
    except ValueError:
        raise ctx.error(f"batch dimensions do not broadcast: {list(av.shape)} x {list(bv.shape)}") from None
    nb = math.prod(batch)
    out_shape = list(batch)
    if av.rank > 1:
        out_shape.append(m)
    if bv.rank > 1:
        out_shape.append(n)
    if av.is_const and bv.is_const:
        return [np.matmul(av.const, bv.const)]
    a = reshape(ctx.g, value_of(ctx, av), a_shape)
    b = reshape(ctx.g, value_of(ctx, bv), b_shape)
    a_b, b_b = math.prod(a_shape[:-2]), math.prod(b_shape[:-2])

    def expand(v: SSAValue, vt: TensorValue, shp: tuple[int, ...]) -> SSAValue:
        full = (*batch, *shp[-2:])
        lead = (1,) * (len(full) - len(shp)) + tuple(shp)
        if vt.is_const:
            arr = np.broadcast_to(np.asarray(vt.const).reshape(lead), full)
            return const_like(ctx.g, np.ascontiguousarray(arr).reshape(nb, *shp[-2:]), v)
        if len(full) > 4:
            raise ctx.error(f"broadcasting batch dimensions of rank {len(batch)} is not supported (TOSA 0.30 TILE "
                            f"takes rank <= 4)")
        t = reshape(ctx.g, v, lead)
        t = ctx.g.value(TileOp, [t], etype(t), multiples=[f // s for f, s in zip(full, lead)])
        return reshape(ctx.g, t, (nb, *shp[-2:]))

    if b_b == 1:
        a3 = reshape(ctx.g, a, (1, a_b * m, k))
        b3 = reshape(ctx.g, b, (1, k, n))
        if a_b != nb:
            a3 = reshape(ctx.g, expand(a, av, a_shape), (1, nb * m, k))
    elif a_shape[:-2] == b_shape[:-2] or (a_b == nb and b_b == nb):
        a3 = reshape(ctx.g, a, (nb, m, k))
        b3 = reshape(ctx.g, b, (nb, k, n))
    else:
        a3 = reshape(ctx.g, a, (nb, m, k)) if a_b == nb else expand(a, av, a_shape)
        b3 = reshape(ctx.g, b, (nb, k, n)) if b_b == nb else expand(b, bv, b_shape)
    y = ctx.g.value(MatMulOp, [a3, b3], etype(a3), A_zp=0, B_zp=0)
    return [reshape(ctx.g, y, out_shape)]
