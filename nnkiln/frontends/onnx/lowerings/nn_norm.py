"""ONNX normalisations and softmax-like ops → TOSA 0.30 (part of the ``nn`` family, imported by ``nn``):
BatchNormalization, InstanceNormalization, LayerNormalization, GroupNormalization, RMSNormalization,
MeanVarianceNormalization, LRN, Softmax, LogSoftmax, Hardmax.

Means are REDUCE_SUM times 1/count; variances are the mean of squared deviations; 1/sqrt is RSQRT.
Reductions run on at most rank 4 (``reduce_keepdims`` merges adjacent dimensions). Softmax subtracts
the maximum (REDUCE_MAX) before EXP so large inputs do not overflow.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.frontends.common.broadcast import reshape
from nnkiln.frontends.onnx.importer import NodeContext, TensorValue
from nnkiln.frontends.onnx.lowerings import lowering
from nnkiln.frontends.onnx.lowerings._nn_common import (
    add,
    const_like,
    etype,
    mean_keepdims,
    mul,
    norm_axis,
    require_float,
    scalar,
    single_output,
    sqrt,
    sub,
    unary,
    value_of,
)

Result = list[TensorValue | SSAValue | np.ndarray]


def _rsqrt(ctx: NodeContext, v: SSAValue) -> SSAValue:
    from nnkiln.dialects.tosa.ops_elementwise_unary import RsqrtOp

    return unary(ctx.g, RsqrtOp, v)


def _moments(ctx: NodeContext, x: SSAValue, axes: list[int]) -> tuple[SSAValue, SSAValue, SSAValue]:
    """(mean, x − mean, population variance) over ``axes`` (keepdims)."""
    mean = mean_keepdims(ctx, x, axes)
    d = sub(ctx.g, x, mean)
    return mean, d, mean_keepdims(ctx, mul(ctx.g, d, d), axes)


def _normalize(ctx: NodeContext, x: SSAValue, axes: list[int], eps: float) -> tuple[SSAValue, SSAValue, SSAValue]:
    """(x − mean)·rsqrt(var + eps) over ``axes`` (keepdims), with the mean and rsqrt(var + eps)."""
    mean, d, var = _moments(ctx, x, axes)
    rstd = _rsqrt(ctx, add(ctx.g, var, scalar(ctx.g, eps, var)))
    return mul(ctx.g, d, rstd), mean, rstd


def _param(ctx: NodeContext, i: int, shape: tuple[int, ...], like: SSAValue) -> SSAValue:
    """Input ``i`` reshaped to ``shape`` (numpy for constants)."""
    v = ctx.input(i)
    if v.is_const:
        return const_like(ctx.g, np.asarray(v.const).reshape(shape), like)
    return reshape(ctx.g, value_of(ctx, v), shape)


# ------------------------------------------------------------------------------------------------
# BatchNormalization, InstanceNormalization


@lowering("BatchNormalization")
def BatchNormalization(ctx: NodeContext) -> Result:
    """BatchNormalization in inference form: ``y = x·s + t`` with ``s = scale / sqrt(var + eps)`` and
    ``t = B − mean·s`` per channel (axis 1). With constant statistics s and t are folded at import
    (float64, then rounded to the input type) and the node is one MUL and one ADD. ``training_mode = 1``
    (opset 14+) is ``_batchnorm_training``; opset 6-13's saved statistics outputs are not supported; opset 7's
    ``spatial = 0`` is supported when the parameters are per channel ([C])."""
    xv = ctx.input(0)
    require_float(ctx, xv)
    ctx.attr("momentum")
    training = bool(int(ctx.attr("training_mode", 0)))
    if not training:
        single_output(ctx, "training statistics")
    eps = float(ctx.attr("epsilon", 1e-5))
    spatial = int(ctx.attr("spatial", 1))
    if xv.rank < 2:
        raise ctx.error(f"input rank {xv.rank} < 2")
    c = xv.shape[1]
    params = [ctx.input(i) for i in range(1, 5)]
    if any(p.shape != (c,) for p in params):
        what = "spatial = 0 with per-element parameters" if not spatial else "parameter shapes"
        raise ctx.error(f"{what} {[list(p.shape) for p in params]} are not supported (expected [{c}])")
    bshape = (1, c) + (1,) * (xv.rank - 2)
    x = value_of(ctx, xv)
    if training:
        return _batchnorm_training(ctx, x, bshape, eps)
    if all(p.is_const for p in params):
        scale, bias, mean, var = (np.asarray(p.const, dtype=np.float64) for p in params)
        s = scale / np.sqrt(var + eps)
        t = bias - mean * s
        y = mul(ctx.g, x, const_like(ctx.g, s.reshape(bshape), x))
        return [add(ctx.g, y, const_like(ctx.g, t.reshape(bshape), x))]
    scale, bias, mean, var = (_param(ctx, i, bshape, x) for i in range(1, 5))
    s = mul(ctx.g, scale, _rsqrt(ctx, add(ctx.g, var, scalar(ctx.g, eps, var))))
    return [add(ctx.g, mul(ctx.g, sub(ctx.g, x, mean), s), bias)]


def _batchnorm_training(ctx: NodeContext, x: SSAValue, bshape: tuple[int, ...], eps: float) -> Result:
    """BatchNormalization with ``training_mode = 1`` (opset 14+), as ``onnx.reference`` computes it: the batch
    mean and population variance per channel (over every axis but 1) normalise x,
    ``y = scale·(x − mean)/sqrt(var + eps) + B``; ``running_mean = input_mean·momentum + mean·(1 − momentum)``
    and ``running_var`` likewise from the batch's population variance (opset 15 spec)."""
    if any(ctx.input(i).kind is not ctx.input(0).kind for i in (3, 4)):
        raise ctx.error("training_mode = 1 with input_mean / input_var of another type than X is not supported "
                        "(the running statistics are computed in X's type)")
    momentum = float(ctx.attr("momentum", 0.9))
    axes = [0, *range(2, len(bshape))]
    mean, d, var = _moments(ctx, x, axes)
    rstd = _rsqrt(ctx, add(ctx.g, var, scalar(ctx.g, eps, var)))
    scale, bias, input_mean, input_var = (_param(ctx, i, bshape, x) for i in range(1, 5))
    y = add(ctx.g, mul(ctx.g, mul(ctx.g, d, rstd), scale), bias)
    keep, take = scalar(ctx.g, momentum, mean), scalar(ctx.g, 1.0 - momentum, mean)
    running = [add(ctx.g, mul(ctx.g, prev, keep), mul(ctx.g, cur, take))
               for prev, cur in ((input_mean, mean), (input_var, var))]
    return [y, *(reshape(ctx.g, r, (bshape[1],)) for r in running)]


@lowering("InstanceNormalization")
def InstanceNormalization(ctx: NodeContext) -> Result:
    """InstanceNormalization: per (n, c) normalisation over the spatial axes of [N, C, S] then
    ``scale[c]·x̂ + B[c]``."""
    xv = ctx.input(0)
    require_float(ctx, xv)
    eps = float(ctx.attr("epsilon", 1e-5))
    if xv.rank < 3:
        raise ctx.error(f"input rank {xv.rank} < 3")
    n, c = xv.shape[:2]
    x = reshape(ctx.g, value_of(ctx, xv), (n, c, math.prod(xv.shape[2:])))
    y, _, _ = _normalize(ctx, x, [2], eps)
    y = add(ctx.g, mul(ctx.g, y, _param(ctx, 1, (1, c, 1), y)), _param(ctx, 2, (1, c, 1), y))
    return [reshape(ctx.g, y, xv.shape)]


# ------------------------------------------------------------------------------------------------
# LayerNormalization, GroupNormalization, RMSNormalization, MeanVarianceNormalization


@lowering("LayerNormalization")
def LayerNormalization(ctx: NodeContext) -> Result:
    """LayerNormalization (opset 17): normalise over axes [axis, rank) (as [prefix, suffix]), then
    ``·Scale + B`` (numpy broadcasting). The optional Mean and InvStdDev outputs have the input's rank
    with 1s at the normalised axes. ``stash_type`` is honoured for fp32 inputs (the computation is
    fp32); other input types compute in their own type."""
    xv = ctx.input(0)
    require_float(ctx, xv)
    ctx.attr("stash_type")
    eps = float(ctx.attr("epsilon", 1e-5))
    axis = norm_axis(ctx, int(ctx.attr("axis", -1)), xv.rank)
    pre, post = math.prod(xv.shape[:axis]), math.prod(xv.shape[axis:])
    x = reshape(ctx.g, value_of(ctx, xv), (pre, post))
    y, mean, rstd = _normalize(ctx, x, [1], eps)
    y = reshape(ctx.g, y, xv.shape)
    y = mul(ctx.g, y, value_of(ctx, ctx.input(1)))
    if ctx.has_input(2):
        y = add(ctx.g, y, value_of(ctx, ctx.input(2)))
    stat_shape = (*xv.shape[:axis], *([1] * (xv.rank - axis)))
    return [y, reshape(ctx.g, mean, stat_shape), reshape(ctx.g, rstd, stat_shape)]


@lowering("GroupNormalization")
def GroupNormalization(ctx: NodeContext) -> Result:
    """GroupNormalization (opsets 18, 21): normalise [N, G, C/G·S], then scale and shift — per group
    when scale/bias have G values (opset 18), per channel when they have C values (opset 21)."""
    xv = ctx.input(0)
    require_float(ctx, xv)
    ctx.attr("stash_type")
    eps = float(ctx.attr("epsilon", 1e-5))
    groups = int(ctx.attr("num_groups", 0))
    if xv.rank < 3:
        raise ctx.error(f"input rank {xv.rank} < 3")
    n, c = xv.shape[:2]
    if groups < 1 or c % groups:
        raise ctx.error(f"num_groups {groups} does not divide C = {c}")
    s = math.prod(xv.shape[2:])
    x = reshape(ctx.g, value_of(ctx, xv), (n, groups, (c // groups) * s))
    y, _, _ = _normalize(ctx, x, [2], eps)
    pshape = ctx.input(1).shape
    if pshape == (c,):
        y = reshape(ctx.g, y, (n, c, s))
        y = add(ctx.g, mul(ctx.g, y, _param(ctx, 1, (1, c, 1), y)), _param(ctx, 2, (1, c, 1), y))
    elif pshape == (groups,):
        y = add(ctx.g, mul(ctx.g, y, _param(ctx, 1, (1, groups, 1), y)), _param(ctx, 2, (1, groups, 1), y))
    else:
        raise ctx.error(f"scale shape {list(pshape)} is neither [C] nor [num_groups]")
    return [reshape(ctx.g, y, xv.shape)]


@lowering("RMSNormalization")
def RMSNormalization(ctx: NodeContext) -> Result:
    """RMSNormalization (opset 23): ``x · rsqrt(mean(x², axes [axis, rank)) + eps) · scale``."""
    xv = ctx.input(0)
    require_float(ctx, xv)
    ctx.attr("stash_type")
    eps = float(ctx.attr("epsilon", 1e-5))
    axis = norm_axis(ctx, int(ctx.attr("axis", -1)), xv.rank)
    pre, post = math.prod(xv.shape[:axis]), math.prod(xv.shape[axis:])
    x = reshape(ctx.g, value_of(ctx, xv), (pre, post))
    ms = mean_keepdims(ctx, mul(ctx.g, x, x), [1])
    y = mul(ctx.g, x, _rsqrt(ctx, add(ctx.g, ms, scalar(ctx.g, eps, ms))))
    y = reshape(ctx.g, y, xv.shape)
    return [mul(ctx.g, y, value_of(ctx, ctx.input(1)))]


@lowering("MeanVarianceNormalization")
def MeanVarianceNormalization(ctx: NodeContext) -> Result:
    """MeanVarianceNormalization: ``(x − mean) / (sqrt(var) + 1e-9)`` over ``axes`` (default [0, 2, 3]),
    the division as MUL by RECIPROCAL; var is the mean of squared deviations (ONNX's function body
    writes E[x²] − E[x]², equal up to rounding)."""
    from nnkiln.dialects.tosa.ops_elementwise_unary import ReciprocalOp

    xv = ctx.input(0)
    require_float(ctx, xv)
    axes = [norm_axis(ctx, int(a), xv.rank) for a in (ctx.attr("axes") or [0, 2, 3])]
    x = value_of(ctx, xv)
    mean = mean_keepdims(ctx, x, axes)
    d = sub(ctx.g, x, mean)
    var = mean_keepdims(ctx, mul(ctx.g, d, d), axes)
    den = add(ctx.g, sqrt(ctx.g, var), scalar(ctx.g, 1e-9, var))
    return [mul(ctx.g, d, unary(ctx.g, ReciprocalOp, den))]


# ------------------------------------------------------------------------------------------------
# LRN


@lowering("LRN")
def LRN(ctx: NodeContext) -> Result:
    """LRN: ``y = x · (bias + alpha/size · Σ x²)^(−beta)`` with the sum over channels
    [c − ⌊(size−1)/2⌋, c + ⌈(size−1)/2⌉]. On [N, C, S, 1] (read as NHWC with H = C): x² is PADded
    with zeros along C and AVG_POOL2D with kernel [size, 1] and no padding gives Σ/size exactly; the
    power is POW."""
    from nnkiln.dialects.tosa.ops_data_layout import PadOp
    from nnkiln.dialects.tosa.ops_elementwise_binary import PowOp
    from nnkiln.dialects.tosa.ops_tensor import AvgPool2dOp

    xv = ctx.input(0)
    if xv.kind.value not in ("f32", "f16"):
        require_float(ctx, xv)
        raise ctx.error(f"{xv.kind.value} LRN is not supported (AVG_POOL2D is fp32/fp16)")
    size = int(ctx.attr("size"))
    alpha = float(ctx.attr("alpha", 1e-4))
    beta = float(ctx.attr("beta", 0.75))
    bias = float(ctx.attr("bias", 1.0))
    if xv.rank < 3:
        raise ctx.error(f"input rank {xv.rank} < 3")
    n, c = xv.shape[:2]
    s = math.prod(xv.shape[2:])
    x = reshape(ctx.g, value_of(ctx, xv), (n, c, s, 1))
    sq = mul(ctx.g, x, x)
    lo, hi = (size - 1) // 2, size - 1 - (size - 1) // 2
    sq = ctx.g.value(PadOp, [sq], etype(sq), padding=[0, 0, lo, hi, 0, 0, 0, 0], pad_const=0.0)
    avg = ctx.g.value(AvgPool2dOp, [sq], etype(sq), kernel=[size, 1], stride=[1, 1], pad=[0, 0, 0, 0],
                      input_zp=0, output_zp=0)
    base = add(ctx.g, mul(ctx.g, avg, scalar(ctx.g, alpha, avg)), scalar(ctx.g, bias, avg))
    y = mul(ctx.g, x, ctx.g.value(PowOp, [base, scalar(ctx.g, -beta, base)], etype(base)))
    return [reshape(ctx.g, y, xv.shape)]


# ------------------------------------------------------------------------------------------------
# Softmax, LogSoftmax, Hardmax


def _softmax_view(ctx: NodeContext, v: TensorValue) -> tuple[SSAValue, tuple[int, int, int]]:
    """The input as [pre, n, post] with the softmax axis in the middle.

    Opset < 13: the input is coerced to 2-D at ``axis`` (default 1) and the op runs over the whole
    second factor: [prod(d[:axis]), prod(d[axis:]), 1]. Opset >= 13: over the single ``axis``
    (default −1): [prod(d[:axis]), d[axis], prod(d[axis+1:])]."""
    rank = v.rank
    if ctx.opset < 13:
        axis = int(ctx.attr("axis", 1))
        axis = axis + rank if axis < 0 else axis
        if not 0 <= axis <= rank:
            raise ctx.error(f"axis {ctx.attr('axis')} is out of range for rank {rank}")
        view = (math.prod(v.shape[:axis]), math.prod(v.shape[axis:]), 1)
    else:
        axis = norm_axis(ctx, int(ctx.attr("axis", -1)), rank)
        view = (math.prod(v.shape[:axis]), v.shape[axis], math.prod(v.shape[axis + 1:]))
    return reshape(ctx.g, value_of(ctx, v), view), view


def _softmax(ctx: NodeContext, log: bool) -> Result:
    from nnkiln.dialects.tosa.ops_elementwise_unary import ExpOp, LogOp, ReciprocalOp
    from nnkiln.dialects.tosa.ops_reduction import ReduceMaxOp, ReduceSumOp

    v = ctx.input(0)
    require_float(ctx, v)
    x, _ = _softmax_view(ctx, v)
    m = ctx.g.value(ReduceMaxOp, [x], etype(x), axis=1)
    d = sub(ctx.g, x, m)
    e = unary(ctx.g, ExpOp, d)
    s = ctx.g.value(ReduceSumOp, [e], etype(e), axis=1)
    if log:
        y = sub(ctx.g, d, unary(ctx.g, LogOp, s))
    else:
        y = mul(ctx.g, e, unary(ctx.g, ReciprocalOp, s))
    return [reshape(ctx.g, y, v.shape)]


@lowering("Softmax")
def Softmax(ctx: NodeContext) -> Result:
    """Softmax: ``exp(x − max) · 1/Σ exp(x − max)`` (REDUCE_MAX, SUB, EXP, REDUCE_SUM, RECIPROCAL,
    MUL); opset < 13 uses the coerce-to-2-D axis semantics, opset >= 13 a single axis."""
    return _softmax(ctx, log=False)


@lowering("LogSoftmax")
def LogSoftmax(ctx: NodeContext) -> Result:
    """LogSoftmax: ``(x − max) − log Σ exp(x − max)``; axis semantics as Softmax."""
    return _softmax(ctx, log=True)


@lowering("Hardmax")
def Hardmax(ctx: NodeContext) -> Result:
    """Hardmax: 1 at the first maximal element along the axis, 0 elsewhere. ARGMAX (which keeps the
    first maximal index) on [pre, n, post], EQUAL against an index constant [1, n, 1], SELECT of
    1 / 0. Axis semantics as Softmax (coerced 2-D before opset 13)."""
    from xdsl.dialects.builtin import IntegerType, TensorType, i1

    from nnkiln.dialects.tosa.ops_comparison import EqualOp
    from nnkiln.dialects.tosa.ops_elementwise_ternary import SelectOp
    from nnkiln.dialects.tosa.ops_tensor import ArgMaxOp

    v = ctx.input(0)
    require_float(ctx, v)
    x, (pre, n, post) = _softmax_view(ctx, v)
    i32 = IntegerType(32)
    idx = ctx.g.value(ArgMaxOp, [x], i32, axis=1)
    idx = reshape(ctx.g, idx, (pre, 1, post))
    iota = ctx.g.const(np.arange(n, dtype=np.int32).reshape(1, n, 1), TensorType(i32, [1, n, 1]))
    hit = ctx.g.value(EqualOp, [idx, iota], i1)
    one, zero = scalar(ctx.g, 1.0, x), scalar(ctx.g, 0.0, x)
    y = ctx.g.value(SelectOp, [hit, one, zero], etype(x))
    return [reshape(ctx.g, y, v.shape)]
