"""ONNX Attention (opset 23; family ``composite``): scaled dot-product attention with grouped heads,
masks, soft-capping and past key/value caches, composed from MATMUL, softmax arithmetic and SELECT.
Split from ``composite`` (shared helpers there)."""

from __future__ import annotations

import math

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind
from nnkiln.frontends.common.broadcast import reshape
from nnkiln.frontends.common.graph import GraphBuilder
from nnkiln.frontends.common.layout import transpose
from nnkiln.frontends.common.nn import pad_value
from nnkiln.frontends.onnx.importer import NodeContext
from nnkiln.frontends.onnx.lowerings import lowering
from nnkiln.frontends.onnx.lowerings._composite_common import (
    FLOAT_KINDS,
    Result,
    add,
    bmm,
    cast,
    concat,
    const_k,
    equal,
    float_input,
    full,
    greater,
    greater_equal,
    logical_and,
    mul,
    np_dtype,
    output_used,
    reciprocal,
    rmax,
    rsum,
    select,
    shape_of,
    sub,
    unary,
    val,
)

# ------------------------------------------------------------------------------------------------
# Attention


def _heads_first(g: GraphBuilder, x: SSAValue, heads: int) -> SSAValue:
    """[B, S, H·D] → [B, H, S, D]."""
    b, s, hidden = shape_of(x)
    return transpose(g, reshape(g, x, (b, s, heads, hidden // heads)), (0, 2, 1, 3))


def _repeat_heads(g: GraphBuilder, x: SSAValue, rep: int) -> SSAValue:
    """Interleaved head repeat [B, Hk, S, D] → [B, Hk·rep, S, D] (h0, h0, h1, h1, ...) with TILE."""
    from nnkiln.dialects.tosa.ops_data_layout import TileOp

    if rep == 1:
        return x
    b, h, s, d = shape_of(x)
    t = g.value(TileOp, [reshape(g, x, (b, h, 1, s * d))], x.type.element_type,  # type: ignore[attr-defined]
                multiples=[1, 1, rep, 1])
    return reshape(g, t, (b, h * rep, s, d))


@lowering("Attention")
def Attention(ctx: NodeContext) -> Result:
    """Attention (opsets 23, 24, 25): ``softmax(softcap(Q·s · (K·s)ᵀ) + bias) · V`` with s = √scale
    (default scale 1/√head_size), per head; 3-D inputs [B, S, H·D] are split into heads
    (``q_num_heads``/``kv_num_heads``), grouped-query KV heads are repeated (TILE), ``past_key`` /
    ``past_value`` are CONCATenated before the new keys (outputs present_key/value).

    The bias: ``attn_mask`` (bool → 0/−inf, float added; padded with −inf/False to the key length),
    then the causal rule ``j <= i + offset`` (offset = past length, or ``nonpad_kv_seqlen[b] − Sq``
    with an external cache), the opset-25 sliding window, and the key-padding rule
    ``j < nonpad_kv_seqlen[b]``, combined as one Boolean ``allowed`` (EQUAL/GREATER_EQUAL against
    constant index differences; run-time lengths broadcast per batch) and applied with SELECT(allowed,
    mask, −inf) — the same values as the reference's additions of 0/−inf except when the float mask
    holds +inf or NaN at a disallowed position. Softmax as REDUCE_MAX, SUB, EXP, REDUCE_SUM,
    RECIPROCAL, MUL with the reference's guards (a row max of −inf uses 0, a zero sum uses 1), and
    rows whose bias is all −inf are zeroed. Computation is in fp32 (fp16/bf16 inputs are cast
    exactly; the probabilities are rounded to the input type before the second MATMUL as the
    reference does); ``softmax_precision`` is therefore met or exceeded (except DOUBLE). Output 3
    follows ``qk_matmul_output_mode`` per the spec: 0 raw QK, 1 after softcap, 2 with the bias,
    3 the probabilities."""
    from nnkiln.dialects.tosa.ops_activation import TanhOp
    from nnkiln.dialects.tosa.ops_elementwise_unary import ExpOp

    g = ctx.g
    qv, kv, vv = float_input(ctx, 0, "Q"), float_input(ctx, 1, "K"), float_input(ctx, 2, "V")
    kind = qv.kind
    rank = qv.rank
    if rank not in (3, 4) or kv.rank != rank or vv.rank != rank:
        raise ctx.error(f"Q, K, V ranks {qv.rank}, {kv.rank}, {vv.rank} must all be 3 or 4")
    is_causal = bool(ctx.attr("is_causal", 0))
    softcap = float(ctx.attr("softcap", 0.0))
    mode = int(ctx.attr("qk_matmul_output_mode", 0))
    scale_attr = ctx.attr("scale")
    ctx.attr("softmax_precision")
    left_w = int(ctx.attr("left_window_size", -1))
    right_w = int(ctx.attr("right_window_size", -1))
    q, k, v = val(ctx, qv), val(ctx, kv), val(ctx, vv)
    if rank == 3:
        hq, hk = ctx.attr("q_num_heads"), ctx.attr("kv_num_heads")
        if hq is None or hk is None:
            raise ctx.error("3-D inputs need q_num_heads and kv_num_heads")
        q, k, v = _heads_first(g, q, int(hq)), _heads_first(g, k, int(hk)), _heads_first(g, v, int(hk))
    has_past = ctx.has_input(4)
    if has_past != ctx.has_input(5):
        raise ctx.error("past_key and past_value must be given together")
    past_len = 0
    if has_past:
        past_len = ctx.input(4).shape[2]
        k = concat(g, [val(ctx, ctx.input(4)), k], 2)
        v = concat(g, [val(ctx, ctx.input(5)), v], 2)
    present_k, present_v = k, v
    b, hq_, sq, d = shape_of(q)
    hk_, skv = shape_of(k)[1], shape_of(k)[2]
    if hq_ % hk_:
        raise ctx.error(f"{hq_} query heads are not a multiple of {hk_} key/value heads")
    scale = float(scale_attr) if scale_attr is not None else 1.0 / math.sqrt(d)
    s = np.asarray(math.sqrt(scale)).astype(np_dtype(kind)).astype(np.float64)
    qf = mul(g, q, full(g, float(s), kind, 4))
    kf = mul(g, _repeat_heads(g, k, hq_ // hk_), full(g, float(s), kind, 4))
    vf = _repeat_heads(g, v, hq_ // hk_)
    qk = bmm(g, qf, transpose(g, kf, (0, 1, 3, 2)))  # [B, Hq, Sq, Skv]
    qk_raw = qk
    if softcap > 0:
        qk = mul(g, unary(g, TanhOp, mul(g, qk, full(g, 1.0 / softcap, kind, 4))), full(g, softcap, kind, 4))
    qk_capped = qk

    # --- the bias
    neg_inf = full(g, -np.inf, kind, 4)
    zero = full(g, 0.0, kind, 4)
    mask_term: SSAValue | None = None
    if ctx.has_input(3):
        mv = ctx.input(3)
        m = val(ctx, mv)
        pad = skv - mv.shape[-1]
        if pad < 0:
            raise ctx.error(f"attn_mask has {mv.shape[-1]} keys, more than {skv}")
        if mv.kind is Kind.BOOL:
            m = pad_value(g, m, [(0, 0)] * (mv.rank - 1) + [(0, pad)], False) if pad else m
            m = select(g, m, zero, neg_inf)
        elif mv.kind in FLOAT_KINDS:
            if mv.kind is not kind:
                raise ctx.error(f"a {mv.kind.value} attn_mask with {kind.value} inputs is not supported (TOSA 0.30 has no float-to-float CAST)")
            m = pad_value(g, m, [(0, 0)] * (mv.rank - 1) + [(0, pad)], -np.inf) if pad else m
        else:
            raise ctx.error(f"attn_mask of type {mv.kind.value} is not supported")
        mask_term = reshape(g, m, (1,) * (4 - len(shape_of(m))) + tuple(shape_of(m)))
    nonpad: SSAValue | None = None
    if ctx.has_input(6):
        if has_past:
            raise ctx.error("nonpad_kv_seqlen cannot be combined with past_key/past_value")
        npv = ctx.input(6)
        nonpad = reshape(g, cast(g, val(ctx, npv), Kind.I32), (b, 1, 1, 1))
    i_idx = np.arange(sq).reshape(sq, 1)
    j_idx = np.arange(skv).reshape(1, skv)
    static_allowed = np.ones((sq, skv), dtype=bool)
    dynamic: list[SSAValue] = []

    def iconst(a: np.ndarray) -> SSAValue:
        return const_k(g, a.reshape(1, 1, sq, skv), Kind.I32)

    if is_causal:
        if nonpad is not None:
            dynamic.append(greater_equal(g, nonpad, iconst(j_idx - i_idx + sq)))
        else:
            static_allowed &= j_idx <= i_idx + past_len
    if left_w >= 0 or right_w >= 0:
        if nonpad is not None:
            if left_w >= 0:
                dynamic.append(greater_equal(g, iconst(left_w - i_idx + j_idx + sq), nonpad))
            if right_w >= 0:
                dynamic.append(greater_equal(g, nonpad, iconst(j_idx - i_idx - right_w + sq)))
        else:
            diff = i_idx + past_len - j_idx
            if left_w >= 0:
                static_allowed &= diff <= left_w
            if right_w >= 0:
                static_allowed &= -diff <= right_w
    if nonpad is not None:
        dynamic.append(greater(g, nonpad, const_k(g, j_idx.reshape(1, 1, 1, skv), Kind.I32)))
    allowed: SSAValue | None = None
    if not static_allowed.all():
        allowed = const_k(g, static_allowed.reshape(1, 1, sq, skv), Kind.BOOL)
    for dyn in dynamic:
        allowed = dyn if allowed is None else logical_and(g, allowed, dyn)
    bias: SSAValue | None = mask_term
    if allowed is not None:
        bias = select(g, allowed, mask_term if mask_term is not None else zero, neg_inf)
    x = qk if bias is None else add(g, qk, bias)

    # --- softmax with the reference's guards
    mx = rmax(g, x, 3)
    mx = select(g, equal(g, mx, neg_inf), zero, mx)
    e = unary(g, ExpOp, sub(g, x, mx))
    sm = rsum(g, e, 3)
    sm = select(g, equal(g, sm, zero), full(g, 1.0, kind, 4), sm)
    p = mul(g, e, reciprocal(g, sm))
    if bias is not None:
        bmax = rmax(g, bias, 3)
        p = select(g, equal(g, bmax, neg_inf), zero, p)
    y = bmm(g, p, vf)  # [B, Hq, Sq, Dv]
    if rank == 3:
        y = reshape(g, transpose(g, y, (0, 2, 1, 3)), (b, sq, hq_ * shape_of(y)[3]))
    outs: Result = [y, present_k, present_v]
    if output_used(ctx, 3):
        chosen = {0: qk_raw, 1: qk_capped, 2: x, 3: p}.get(mode)
        if chosen is None:
            raise ctx.error(f"qk_matmul_output_mode {mode} is not supported")
        outs.append(chosen)
    return outs


# The recurrent lowerings (RNN, GRU, LSTM) register themselves on import.
