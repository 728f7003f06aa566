"""ONNX loss lowerings (family ``composite``): NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss,
with the target selected by a one-hot mask (exact: one element per row survives the reduction), weights,
ignore_index and the three reductions. Split from ``composite`` (shared helpers there)."""

from __future__ import annotations

import math

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind
from nnkiln.frontends.common.broadcast import reshape
from nnkiln.frontends.onnx.importer import NodeContext
from nnkiln.frontends.onnx.lowerings import lowering
from nnkiln.frontends.onnx.lowerings._composite_common import (
    Result,
    cast,
    const_k,
    equal,
    float_input,
    full,
    logical_not,
    mul,
    negate,
    output_used,
    reciprocal,
    reduce_all,
    rmax,
    rsum,
    select,
    sub,
    unary,
    val,
)

# ------------------------------------------------------------------------------------------------
# NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss


def _nll(ctx: NodeContext, logp: SSAValue, xshape: tuple[int, ...], kind: Kind) -> SSAValue:
    """The loss of NegativeLogLikelihoodLoss for ``logp`` [N, C, D...] (inputs 1: target, 2: weight).

    ``picked[n, d] = Σ_c SELECT(target[n, d] == c, logp[n, c, d], 0)`` (exact: one term per row);
    the weight of each target is picked the same way; ignored targets get loss 0 and weight 0.
    ``mean`` divides Σ loss by Σ weight (by the count of non-ignored targets without weights) via
    RECIPROCAL and MUL (within 1 ulp of a division)."""
    g = ctx.g
    tv = ctx.input(1)
    n, c = xshape[0], xshape[1]
    dsz = math.prod(xshape[2:])
    if tuple(tv.shape) != (n, *xshape[2:]):
        raise ctx.error(f"target shape {list(tv.shape)} does not match input {list(xshape)}")
    reduction = str(ctx.attr("reduction", "mean"))
    ignore = ctx.attr("ignore_index")
    x3 = reshape(g, logp, (n, c, dsz))
    t = reshape(g, cast(g, val(ctx, tv), Kind.I32), (n, 1, dsz))
    iota = const_k(g, np.arange(c).reshape(1, c, 1), Kind.I32)
    hot = equal(g, t, iota)
    zero = full(g, 0.0, kind, 3)
    picked = rsum(g, select(g, hot, x3, zero), 1)
    loss = negate(g, picked)
    keep = None
    if ignore is not None:
        keep = logical_not(g, equal(g, t, const_k(g, np.full((1, 1, 1), int(ignore)), Kind.I32)))
    weight = None
    if ctx.has_input(2):
        wv = ctx.input(2)
        w = reshape(g, val(ctx, wv), (1, c, 1))
        weight = rsum(g, select(g, hot, w, zero), 1)
        if keep is not None:
            weight = select(g, keep, weight, zero)
        loss = mul(g, weight, loss)
    elif keep is not None:
        weight = select(g, keep, full(g, 1.0, kind, 3), zero)
        loss = select(g, keep, loss, zero)
    if reduction == "none":
        return reshape(g, loss, tv.shape)
    total = reduce_all(g, _sum_op(), loss)
    if reduction == "sum":
        return total
    if reduction != "mean":
        raise ctx.error(f"reduction '{reduction}' is not supported")
    if weight is None:
        return reshape(g, mul(g, total, const_k(g, np.asarray(1.0 / (n * dsz)), kind)), ())
    return reshape(g, mul(g, total, reciprocal(g, reduce_all(g, _sum_op(), weight))), ())


def _sum_op() -> type:
    from nnkiln.dialects.tosa.ops_reduction import ReduceSumOp

    return ReduceSumOp


@lowering("NegativeLogLikelihoodLoss")
def NegativeLogLikelihoodLoss(ctx: NodeContext) -> Result:
    """NegativeLogLikelihoodLoss (opsets 12, 13, 22): see ``_nll``. Float inputs; targets int32/int64.
    Decision: without weights, ``ignore_index = -1`` excludes those targets from the mean as the
    spec says (onnx's reference averages over all targets in that one case)."""
    xv = float_input(ctx, 0)
    if xv.rank < 2:
        raise ctx.error("input must have rank >= 2")
    return [_nll(ctx, val(ctx, xv), xv.shape, xv.kind)]


@lowering("SoftmaxCrossEntropyLoss")
def SoftmaxCrossEntropyLoss(ctx: NodeContext) -> Result:
    """SoftmaxCrossEntropyLoss (opsets 12, 13): log-softmax over axis 1 — ``(x − max) − log Σ
    exp(x − max)`` (REDUCE_MAX, SUB, EXP, REDUCE_SUM, LOG) — then NegativeLogLikelihoodLoss. The
    optional second output is the log-probabilities."""
    from nnkiln.dialects.tosa.ops_elementwise_unary import ExpOp, LogOp

    xv = float_input(ctx, 0)
    if xv.rank < 2:
        raise ctx.error("input must have rank >= 2")
    g = ctx.g
    n, c = xv.shape[:2]
    x = reshape(g, val(ctx, xv), (n, c, math.prod(xv.shape[2:])))
    d = sub(g, x, rmax(g, x, 1))
    logp = sub(g, d, unary(g, LogOp, rsum(g, unary(g, ExpOp, d), 1)))
    loss = _nll(ctx, logp, xv.shape, xv.kind)
    outs: Result = [loss]
    if output_used(ctx, 1):
        outs.append(reshape(g, logp, xv.shape))
    return outs
