"""More ONNX lowerings composed from several TOSA 0.30 ops (family ``composite_more``).

SwiGLU, TensorScatter, AffineGrid, STFT, CausalConvWithState, LinearAttention
(unrolled over the static sequence length) and RoiAlign (avg mode). The small IR helpers are the
``composite`` family's.

Run-time index selections use a one-hot mask (``EQUAL(index, iota)``), then a SELECT that replaces
every unselected element by a sentinel and a REDUCE over the one-hot axis: REDUCE_MAX with −inf
(floats) or the type's minimum (integers), REDUCE_ANY with false (Booleans). Exactly one element
survives per output, so the result is that element bit for bit (MAXIMUM keeps −0 against −inf and
propagates NaN, spec §2.5 apply_max) — unlike a one-hot MUL/REDUCE_SUM, which would turn −0 into +0
and spread NaN/inf from unselected elements. Out-of-range indices (an ONNX error) select nothing and
give the sentinel. (GatherElements with run-time indices is a GATHER in ``shape_gather``, which fails the
run on an out-of-range index.)
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind
from nnkiln.frontends.common.broadcast import reshape
from nnkiln.frontends.common.layout import transpose
from nnkiln.frontends.common.nn import slice_value
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
    greater_equal,
    kind_v,
    logical_and,
    maximum,
    minimum,
    mul,
    norm_axis,
    reduce_axis,
    rsum,
    scalar_const,
    select,
    shape_of,
    sub,
    unary,
    val,
)
from nnkiln.frontends.onnx.lowerings._shape_common import gather_flat, runtime_indices
from nnkiln.frontends.onnx.lowerings.composite_signal import _dft_matrix
from nnkiln.frontends.onnx.zero_size import empty_of_kind

_SENTINEL_INT = {Kind.I8: -(2**7), Kind.I16: -(2**15), Kind.I32: -(2**31)}


def _pick(ctx: NodeContext, mask: SSAValue, values: SSAValue, axis: int) -> SSAValue:
    """The element of ``values`` where the (broadcast) one-hot ``mask`` is true along ``axis``
    (kept as size 1): SELECT with a sentinel, then REDUCE_MAX / REDUCE_ANY (see the module doc)."""
    from nnkiln.dialects.tosa.ops_reduction import ReduceAnyOp, ReduceMaxOp

    g = ctx.g
    k = kind_v(values)
    if k is Kind.BOOL:
        picked = select(g, mask, values, const_k(g, np.zeros((1,) * len(shape_of(values)), bool), Kind.BOOL))
        return reduce_axis(g, ReduceAnyOp, picked, axis)
    if k in FLOAT_KINDS:
        fill: float | int = -np.inf
    elif k in _SENTINEL_INT:
        fill = _SENTINEL_INT[k]
    else:
        raise ctx.error(f"element type {k.value} is not supported (no exact one-hot selection in TOSA 0.30)")
    picked = select(g, mask, values, full(g, fill, k, len(shape_of(values))))
    return reduce_axis(g, ReduceMaxOp, picked, axis)


# ------------------------------------------------------------------------------------------------
# SwiGLU


@lowering("SwiGLU")
def SwiGLU(ctx: NodeContext) -> Result:
    """SwiGLU (opset 28): ``A · sigmoid(alpha · A) · B`` (Swish of the gate times the value) with
    SIGMOID and MUL in the input type; A and B have identical shapes (no broadcasting)."""
    from nnkiln.dialects.tosa.ops_activation import SigmoidOp

    av = float_input(ctx, 0)
    bv = float_input(ctx, 1)
    if av.shape != bv.shape or av.kind is not bv.kind:
        raise ctx.error(f"A {list(av.shape)} and B {list(bv.shape)} must have the same shape and type")
    alpha = float(ctx.attr("alpha", 1.0))
    g = ctx.g
    a = val(ctx, av)
    aa = a if alpha == 1.0 else mul(g, a, full(g, alpha, av.kind, av.rank))
    return [mul(g, mul(g, a, unary(g, SigmoidOp, aa)), val(ctx, bv))]


# ------------------------------------------------------------------------------------------------
# TensorScatter


@lowering("TensorScatter")
def TensorScatter(ctx: NodeContext) -> Result:
    """TensorScatter (opset 24): ``present[b, ..., (w[b] + s) (mod M), ...] = update[b, ..., s, ...]``.

    The cache is viewed as ``[B, M, P·R]`` (sequence axis second); the one-hot mask
    ``EQUAL(pos[b, s], iota(M))`` with ``pos = w[b] + s`` (``circular``: ``pos − INTDIV(pos, M)·M``,
    which is the modulo for the non-negative write indices ONNX requires) is ``[B, S, M, 1]``;
    each cache row takes its update row where some ``s`` matches (REDUCE_ANY) and keeps the past
    value elsewhere. Write indices default to 0 and may be constant or run-time; in ``linear``
    mode ``w + S <= M`` is the model's obligation (positions past M are not written)."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import IntDivOp
    from nnkiln.dialects.tosa.ops_reduction import ReduceAnyOp

    mode = ctx.attr("mode", "linear")
    if mode not in ("linear", "circular"):
        raise ctx.error(f"mode '{mode}' is not supported (linear or circular)")
    pv, uv = ctx.input(0), ctx.input(1)
    rank = pv.rank
    axis = int(ctx.attr("axis", -2))
    axis = norm_axis(ctx, axis, rank)
    if axis == 0:
        raise ctx.error("axis 0 (the batch dimension) is not allowed")
    if uv.rank != rank or uv.kind is not pv.kind or any(
        uv.shape[d] != pv.shape[d] for d in range(rank) if d != axis
    ) or uv.shape[axis] > pv.shape[axis]:
        raise ctx.error(f"update {list(uv.shape)} does not fit past_cache {list(pv.shape)} on axis {axis}")
    g = ctx.g
    b, m, s = pv.shape[0], pv.shape[axis], uv.shape[axis]
    p = math.prod(pv.shape[1:axis])
    r = math.prod(pv.shape[axis + 1:])
    if ctx.has_input(2):
        wv = ctx.input(2)
        if wv.is_const:
            w = const_k(g, np.asarray(wv.const).astype(np.int64).reshape(b, 1), Kind.I32)
        else:
            w = reshape(g, runtime_indices(ctx, 2), (b, 1))
    else:
        w = const_k(g, np.zeros((b, 1)), Kind.I32)
    pos = add(g, w, const_k(g, np.arange(s).reshape(1, s), Kind.I32))  # [B, S]
    if mode == "circular":
        q = g.value(IntDivOp, [pos, const_k(g, np.full((1, 1), m), Kind.I32)], pos.type.element_type)  # type: ignore[attr-defined]
        pos = sub(g, pos, mul(g, q, const_k(g, np.full((1, 1), m), Kind.I32)))
    mask = equal(g, reshape(g, pos, (b, s, 1, 1)), const_k(g, np.arange(m).reshape(1, 1, m, 1), Kind.I32))

    def seq_second(v: SSAValue, n: int) -> SSAValue:
        v = reshape(g, v, (b, p, n, r))
        if p > 1:
            v = transpose(g, v, [0, 2, 1, 3])
        return reshape(g, v, (b, n, p * r))

    upd = reshape(g, seq_second(val(ctx, uv), s), (b, s, 1, p * r))
    new = _pick(ctx, mask, upd, 1)  # [B, 1, M, P·R]
    hit = reduce_axis(g, ReduceAnyOp, mask, 1)  # [B, 1, M, 1]
    past = reshape(g, seq_second(val(ctx, pv), m), (b, 1, m, p * r))
    out = select(g, hit, new, past)
    out = reshape(g, out, (b, m, p, r))
    if p > 1:
        out = transpose(g, out, [0, 2, 1, 3])
    return [reshape(g, out, pv.shape)]


# ------------------------------------------------------------------------------------------------
# AffineGrid


def _grid_axis(n: int, align_corners: bool) -> np.ndarray:
    """Positions in [−1, 1] of ``n`` samples: pixel centres (``align_corners=0``) or corners
    (``=1``; a single sample is at 0, as in PyTorch — ONNX's reference divides by zero there)."""
    if align_corners:
        return np.zeros(1) if n == 1 else -1.0 + 2.0 * np.arange(n) / (n - 1)
    return (2.0 * np.arange(n) + 1.0) / n - 1.0


@lowering("AffineGrid")
def AffineGrid(ctx: NodeContext) -> Result:
    """AffineGrid (opset 20): ``grid[n, (d,) h, w] = theta[n] @ (x_w, y_h, (z_d,) 1)`` as one MATMUL of
    the constant homogeneous base grid ``[N, (D·)H·W, 3|4]`` (float64 positions rounded once) by
    TRANSPOSEd theta. ``size`` must be a constant (it fixes the output shape)."""
    tv = float_input(ctx, 0, "theta")
    size = [int(v) for v in np.asarray(ctx.const(1, "size")).reshape(-1)]
    align = bool(int(ctx.attr("align_corners", 0)))
    if len(size) not in (4, 5):
        raise ctx.error(f"size {size} must have 4 (2-D) or 5 (3-D) elements")
    n, spatial = size[0], size[2:]
    nd = len(spatial)
    if tv.shape != (n, nd, nd + 1):
        raise ctx.error(f"theta {list(tv.shape)} must be [{n}, {nd}, {nd + 1}] for size {size}")
    if any(d <= 0 for d in size):
        raise ctx.error(f"size {size} has a zero-size dimension: not supported in TOSA 0.30")
    axes = [_grid_axis(d, align) for d in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")  # (z,) y, x over the spatial dims
    coords = [mesh[i].reshape(-1) for i in reversed(range(nd))]  # x, y, (z)
    base = np.stack([*coords, np.ones_like(coords[0])], axis=1)  # [S, nd + 1]
    g = ctx.g
    tt = transpose(g, val(ctx, tv), [0, 2, 1])  # [N, nd + 1, nd]
    bk = np.broadcast_to(base, (n, *base.shape))
    y = bmm(g, const_k(g, bk, tv.kind), tt)  # [N, S, nd]
    return [reshape(g, y, (n, *spatial, nd))]


# ------------------------------------------------------------------------------------------------
# STFT


@lowering("STFT")
def STFT(ctx: NodeContext) -> Result:
    """STFT (opset 17): frames ``x[b, f·step + t]`` (a GATHER with constant positions) times the
    window, then one MATMUL with a constant DFT matrix (``composite``'s DFT, float64 rounded once).
    A constant window is folded into the matrix; a run-time one is a MUL. Accuracy as for DFT:
    fp32 accumulation gives errors of a few ulp of Σ|x·window|. ``frame_step`` and
    ``frame_length`` must be constants; ``onesided`` (default 1) keeps ``L//2 + 1`` frequencies and
    needs a real signal. Output ``[B, frames, n_freq, 2]``."""
    xv = float_input(ctx, 0, "signal")
    if xv.rank != 3 or xv.shape[2] not in (1, 2):
        raise ctx.error(f"signal {list(xv.shape)} must be [batch, length, 1 | 2]")
    bsz, length, comp = xv.shape
    step = int(scalar_const(ctx, 1, "frame_step"))
    win = ctx.input(2) if ctx.has_input(2) else None
    if ctx.has_input(3):
        n = int(scalar_const(ctx, 3, "frame_length"))
    elif win is not None:
        n = win.shape[0]
    else:
        n = length
    if win is not None and (win.rank != 1 or win.shape[0] != n):
        raise ctx.error(f"window {list(win.shape)} must be [{n}] (frame_length)")
    onesided = bool(int(ctx.attr("onesided", 1)))
    if onesided and comp == 2:
        raise ctx.error("onesided STFT of a complex signal is not supported (ONNX requires a real signal)")
    if step <= 0 or not 0 < n <= length:
        raise ctx.error(f"frame_step {step} / frame_length {n} do not fit a signal of length {length}")
    frames = (length - n) // step + 1
    w, n_out, _ = _dft_matrix(n, n, comp, False, onesided)  # [n·comp, n_out·2]
    g = ctx.g
    pos = (np.arange(bsz)[:, None, None, None] * length + np.arange(frames)[None, :, None, None] * step
           + np.arange(n)[None, None, :, None]) * comp + np.arange(comp)[None, None, None, :]
    x = val(ctx, xv)
    if frames * n == length and step == n:
        fr = x
    else:
        fr = gather_flat(ctx, x, pos)  # [B, F, n, comp]
    if win is not None and win.is_const:
        wc = np.asarray(win.const).astype(np.float64)
        w = w * np.repeat(wc, comp)[:, None]
    elif win is not None:
        wt = cast(g, val(ctx, win), xv.kind)
        fr = mul(g, reshape(g, fr, (bsz, frames, n, comp)), reshape(g, wt, (1, 1, n, 1)))
    y = bmm(g, reshape(g, fr, (1, bsz * frames, n * comp)), const_k(g, w.reshape(1, *w.shape), xv.kind))
    return [reshape(g, y, (bsz, frames, n_out, 2))]


# ------------------------------------------------------------------------------------------------
# CausalConvWithState


@lowering("CausalConvWithState")
def CausalConvWithState(ctx: NodeContext) -> Result:
    """CausalConvWithState (opset 27): ``padded = concat(past_state or zeros, input)`` along the
    length; ``output = depthwise_conv1d(padded, weight) + bias`` (valid, stride 1) as one
    DEPTHWISE_CONV2D on the NHWC view ``[B, 1, L + k − 1, C]`` with weight ``[1, k, C, 1]`` (floats
    accumulate in fp32 and round once, spec §2.3.5); ``activation`` silu/swish multiplies by
    SIGMOID. ``present_state`` is the last ``k − 1`` positions of ``padded`` (a SLICE); with
    ``k = 1`` it is empty, which TOSA 0.30 cannot hold, so that output is then not supported."""
    from nnkiln.dialects.tosa.ops_activation import SigmoidOp
    from nnkiln.dialects.tosa.ops_tensor import DepthwiseConv2DOp

    xv = float_input(ctx, 0)
    wv = ctx.input(1)
    act = ctx.attr("activation", "none")
    if act not in ("none", "silu", "swish"):
        raise ctx.error(f"activation '{act}' is not supported (none, silu or swish)")
    if xv.rank != 3 or wv.rank != 3 or wv.shape[0] != xv.shape[1] or wv.shape[1] != 1 or wv.kind is not xv.kind:
        raise ctx.error(f"input {list(xv.shape)} / weight {list(wv.shape)} must be [B, C, L] / [C, 1, k]")
    bsz, ch, length = xv.shape
    k = wv.shape[2]
    g = ctx.g
    kind = xv.kind
    x = val(ctx, xv)
    if k > 1:
        if ctx.has_input(3):
            sv = ctx.input(3)
            if sv.shape != (bsz, ch, k - 1) or sv.kind is not kind:
                raise ctx.error(f"past_state {list(sv.shape)} must be [{bsz}, {ch}, {k - 1}]")
            state = val(ctx, sv)
        else:
            state = const_k(g, np.zeros((bsz, ch, k - 1)), kind)
        padded = concat(g, [state, x], 2)
    else:
        padded = x
    total = length + k - 1
    xin = reshape(g, transpose(g, padded, [0, 2, 1]), (bsz, 1, total, ch))
    w = reshape(g, transpose(g, val(ctx, wv), [1, 2, 0]), (1, k, ch, 1))
    bias = val(ctx, ctx.input(2)) if ctx.has_input(2) else const_k(g, np.zeros(ch), kind)
    if shape_of(bias) != (ch,):
        raise ctx.error(f"bias {list(shape_of(bias))} must be [{ch}]")
    y = g.value(DepthwiseConv2DOp, [xin, w, bias], xin.type.element_type,  # type: ignore[attr-defined]
                pad=[0, 0, 0, 0], stride=[1, 1], dilation=[1, 1], input_zp=0, weight_zp=0)
    y = transpose(g, reshape(g, y, (bsz, length, ch)), [0, 2, 1])
    if act in ("silu", "swish"):
        y = mul(g, y, unary(g, SigmoidOp, y))
    results: Result = [y]
    if len(ctx.node.output) > 1 and ctx.node.output[1]:
        if k == 1:  # [B, C, 0]: no data, known at import (a zero-size graph output or a value Concat drops)
            results.append(empty_of_kind((bsz, ch, 0), kind))
            return results
        results.append(slice_value(g, padded, [0, 0, total - (k - 1)], [bsz, ch, k - 1]))
    return results


# ------------------------------------------------------------------------------------------------
# LinearAttention


@lowering("LinearAttention")
def LinearAttention(ctx: NodeContext) -> Result:
    """LinearAttention (opset 27): the recurrence over the (static) sequence length T is unrolled,
    one step per token, on the state ``S [B·H_kv, d_k, d_v]``:
    gating ``S ← exp(g_t)·S`` (EXP, MUL; ``decay`` per key dimension or per head);
    delta ``v_t ← β_t·(v_t − k_tᵀS)`` (MATMUL); write ``S ← S + k_t ⊗ v_t`` (a broadcast MUL, exact);
    read ``o_t = scale·q_tᵀS`` (MATMUL of the ``G = H_q/H_kv`` query heads sharing a KV head).
    ``scale`` 0 means ``1/sqrt(d_k)``. fp32 only (fp16/bf16: the state must stay fp32 between steps and
    TOSA 0.30 cannot cast the results back); the state's type must be the input's. Inexact only by
    fp32 rounding of the sums (ONNX's reference also computes in fp32)."""
    from nnkiln.dialects.tosa.ops_elementwise_unary import ExpOp

    rule = ctx.attr("update_rule", "gated_delta")
    if rule not in ("linear", "gated", "delta", "gated_delta"):
        raise ctx.error(f"update_rule '{rule}' is not supported")
    gating = rule in ("gated", "gated_delta")
    delta = rule in ("delta", "gated_delta")
    hq = int(ctx.attr("q_num_heads", 0))
    hkv = int(ctx.attr("kv_num_heads", 0))
    ctx.attr("chunk_size", 64)
    qv, kv, vv = float_input(ctx, 0, "query"), ctx.input(1), ctx.input(2)
    kind = qv.kind
    if kind is not Kind.F32:
        raise ctx.error(f"{kind.value} LinearAttention is not supported: the recurrence must carry its state in "
                        "fp32 (as ONNX defines it) and TOSA 0.30 has no fp32 → fp16/bf16 CAST for the results; an "
                        "fp16 state drifts beyond the tolerance over the steps")
    if hq <= 0 or hkv <= 0 or hq % hkv:
        raise ctx.error(f"q_num_heads {hq} must be a positive multiple of kv_num_heads {hkv}")
    if qv.rank != 3 or kv.rank != 3 or vv.rank != 3 or kv.kind is not kind or vv.kind is not kind:
        raise ctx.error("query, key and value must be rank-3 [B, T, H·D] tensors of one type")
    bsz, t_len, qd = qv.shape
    if qd % hq or vv.shape[2] % hkv or kv.shape[:2] != (bsz, t_len) or vv.shape[:2] != (bsz, t_len):
        raise ctx.error(f"query {list(qv.shape)} / key {list(kv.shape)} / value {list(vv.shape)} do not fit the heads")
    dk, dv, grp = qd // hq, vv.shape[2] // hkv, hq // hkv
    if kv.shape[2] != hkv * dk:
        raise ctx.error(f"key {list(kv.shape)} must be [B, T, {hkv * dk}]")
    if gating != ctx.has_input(4) or delta != ctx.has_input(5):
        raise ctx.error(f"update_rule '{rule}' requires decay={gating} and beta={delta} inputs")
    scale = float(ctx.attr("scale", 0.0)) or 1.0 / math.sqrt(dk)
    g = ctx.g
    nb = bsz * hkv

    def heads(v: SSAValue, h: int, d: int) -> SSAValue:
        """[B, T, h·d] → [B·h, T, d]"""
        y = reshape(g, v, (bsz, t_len, h, d))
        if t_len > 1 and h > 1:
            y = transpose(g, y, [0, 2, 1, 3])
        return reshape(g, y, (bsz * h, t_len, d))

    q = heads(val(ctx, qv), hkv, grp * dk)  # [nb, T, G·dk]
    k = heads(val(ctx, kv), hkv, dk)
    v = heads(val(ctx, vv), hkv, dv)
    dec = None
    if gating:
        dvv = ctx.input(4)
        if dvv.kind is not kind or dvv.rank != 3 or dvv.shape[:2] != (bsz, t_len) or dvv.shape[2] not in (hkv, hkv * dk):
            raise ctx.error(f"decay {list(dvv.shape)} must be [B, T, {hkv}] or [B, T, {hkv * dk}]")
        per_dim = dvv.shape[2] == hkv * dk and not (dk == 1)
        dec = unary(g, ExpOp, heads(val(ctx, dvv), hkv, dk if per_dim else 1))  # [nb, T, dk | 1]
    beta = None
    if delta:
        bv = ctx.input(5)
        if bv.kind is not kind or bv.rank != 3 or bv.shape[:2] != (bsz, t_len) or bv.shape[2] not in (hkv, 1):
            raise ctx.error(f"beta {list(bv.shape)} must be [B, T, {hkv}] or [B, T, 1]")
        bval = val(ctx, bv)
        if bv.shape[2] == 1 and hkv > 1:
            from nnkiln.dialects.tosa.ops_data_layout import TileOp

            bval = g.value(TileOp, [bval], bval.type.element_type, multiples=[1, 1, hkv])  # type: ignore[attr-defined]
        beta = heads(bval, hkv, 1)  # [nb, T, 1]
    if ctx.has_input(3):
        sv = ctx.input(3)
        if sv.shape != (bsz, hkv, dk, dv) or sv.kind is not kind:
            raise ctx.error(f"past_state {list(sv.shape)} must be [{bsz}, {hkv}, {dk}, {dv}] of the input type")
        state = reshape(g, val(ctx, sv), (nb, dk, dv))
    else:
        state = const_k(g, np.zeros((nb, dk, dv)), kind)

    def step(x: SSAValue, t: int) -> SSAValue:
        s = shape_of(x)
        return slice_value(g, x, [0, t, 0], [s[0], 1, s[2]])

    outs = []
    for t in range(t_len):
        k_t, v_t = step(k, t), step(v, t)  # [nb, 1, dk], [nb, 1, dv]
        if dec is not None:
            d_t = step(dec, t)
            state = mul(g, state, reshape(g, d_t, (nb, shape_of(d_t)[2], 1)))
        if beta is not None:
            v_t = mul(g, step(beta, t), sub(g, v_t, bmm(g, k_t, state)))
        state = add(g, state, mul(g, reshape(g, k_t, (nb, dk, 1)), v_t))
        o_t = bmm(g, reshape(g, step(q, t), (nb, grp, dk)), state)  # [nb, G, dv]
        outs.append(mul(g, o_t, full(g, scale, kind, 3)))
    o = concat(g, outs, 1) if len(outs) > 1 else outs[0]  # [nb, T·G, dv]
    o = reshape(g, o, (bsz, hkv, t_len, grp * dv))
    if t_len > 1 and hkv > 1:
        o = transpose(g, o, [0, 2, 1, 3])
    results: Result = [reshape(g, o, (bsz, t_len, hq * dv))]
    if len(ctx.node.output) > 1 and ctx.node.output[1]:
        results.append(reshape(g, state, (bsz, hkv, dk, dv)))
    return results


# ------------------------------------------------------------------------------------------------
# RoiAlign


def _roi_axis_weights(ctx: NodeContext, start: SSAValue, extent: SSAValue, pooled: int, grid: int,
                      size: int, kind: Kind) -> SSAValue:
    """``A [R, pooled, size]``: the mean over the ``grid`` samples of each bin of the bilinear
    weights of the pixels along one axis. Sample ``y = start + bin·(p + (i + 0.5)/grid)`` with
    ``bin = extent/pooled``; samples outside ``[−1, size]`` weigh 0; others are clamped to
    ``[0, size − 1]`` and weigh ``max(0, 1 − |y − h|)`` on pixel ``h`` (the two-pixel linear
    interpolation of ONNX's RoiAlign, written as a tent)."""
    from nnkiln.dialects.tosa.ops_elementwise_unary import AbsOp

    g = ctx.g
    r = shape_of(start)[0]
    coef = (np.arange(pooled)[:, None] + (np.arange(grid)[None, :] + 0.5) / grid).reshape(1, pooled * grid)
    bin_size = mul(g, extent, full(g, 1.0 / pooled, kind, 2))
    y = add(g, start, mul(g, bin_size, const_k(g, coef, kind)))  # [R, P·grid]
    valid = logical_and(g, greater_equal(g, y, full(g, -1.0, kind, 2)), greater_equal(g, full(g, float(size), kind, 2), y))
    yc = minimum(g, maximum(g, y, full(g, 0.0, kind, 2)), full(g, float(size - 1), kind, 2))
    dist = unary(g, AbsOp, sub(g, reshape(g, yc, (r, pooled * grid, 1)), const_k(g, np.arange(size).reshape(1, 1, size), kind)))
    w = maximum(g, sub(g, full(g, 1.0, kind, 3), dist), full(g, 0.0, kind, 3))
    w = select(g, reshape(g, valid, (r, pooled * grid, 1)), w, full(g, 0.0, kind, 3))
    w = rsum(g, reshape(g, w, (r, pooled, grid, size)), 2)
    return mul(g, reshape(g, w, (r, pooled, size)), full(g, 1.0 / grid, kind, 3))


@lowering("RoiAlign")
def RoiAlign(ctx: NodeContext) -> Result:
    """RoiAlign (opsets 10, 16), ``mode = avg`` with ``sampling_ratio > 0``: bilinear sampling averaged
    over each bin is separable, ``Y[r, c] = A_y[r] · X[b_r, c] · A_xᵀ[r]`` with the per-ROI weight
    matrices of ``_roi_axis_weights`` computed at run time from ``rois`` (so ROIs and batch indices
    may be run-time values): two MATMULs. The batch image of each ROI is picked with a one-hot
    SELECT/REDUCE_MAX over the batch. Inexact only by float rounding (weights sum in a different
    order than the reference's four-corner sum; a non-finite pixel also reaches the outputs whose
    weight for it is 0). ``output_half_pixel`` (opset 10's only transform) forces ROI sizes >= 1.
    Not supported: ``max`` (a per-corner weighted maximum, not separable) and ``sampling_ratio 0``
    (the sample count would depend on the ROI sizes at run time)."""
    xv = float_input(ctx, 0, "X")
    rv = ctx.input(1)
    mode = ctx.attr("mode", "avg")
    if mode != "avg":
        raise ctx.error(f"mode '{mode}' is not supported (only avg is a separable composition)")
    ctm = ctx.attr("coordinate_transformation_mode", "half_pixel" if ctx.opset >= 16 else "output_half_pixel")
    if ctm not in ("half_pixel", "output_half_pixel"):
        raise ctx.error(f"coordinate_transformation_mode '{ctm}' is not supported")
    half = ctm == "half_pixel"
    ph, pw = int(ctx.attr("output_height", 1)), int(ctx.attr("output_width", 1))
    ratio = int(ctx.attr("sampling_ratio", 0))
    scale = float(ctx.attr("spatial_scale", 1.0))
    if ratio <= 0:
        raise ctx.error("sampling_ratio 0 (adaptive) is not supported: the sample count would depend on run-time ROI sizes")
    if xv.rank != 4 or rv.rank != 2 or rv.shape[1] != 4 or rv.kind is not xv.kind:
        raise ctx.error(f"X {list(xv.shape)} / rois {list(rv.shape)} must be [N, C, H, W] / [R, 4] of one type")
    n, c, h, w = xv.shape
    r = rv.shape[0]
    kind = xv.kind
    g = ctx.g
    rois = mul(g, val(ctx, rv), full(g, scale, kind, 2))
    if half:
        rois = sub(g, rois, full(g, 0.5, kind, 2))

    def col(i: int) -> SSAValue:
        return slice_value(g, rois, [0, i], [r, 1])

    x0, y0, x1, y1 = col(0), col(1), col(2), col(3)
    rw, rh = sub(g, x1, x0), sub(g, y1, y0)
    if not half:
        rw, rh = maximum(g, rw, full(g, 1.0, kind, 2)), maximum(g, rh, full(g, 1.0, kind, 2))
    ay = _roi_axis_weights(ctx, y0, rh, ph, ratio, h, kind)  # [R, PH, H]
    ax = _roi_axis_weights(ctx, x0, rw, pw, ratio, w, kind)  # [R, PW, W]
    # the image of each ROI: [R, H, C·W]
    img = reshape(g, transpose(g, val(ctx, xv), [0, 2, 1, 3]), (1, n, h * c * w))
    bi = ctx.input(2)
    if bi.is_const:
        bidx = const_k(g, np.asarray(bi.const).astype(np.int64).reshape(r, 1, 1), Kind.I32)
    else:
        bidx = reshape(g, runtime_indices(ctx, 2), (r, 1, 1))
    mask = equal(g, bidx, const_k(g, np.arange(n).reshape(1, n, 1), Kind.I32))
    img = reshape(g, _pick(ctx, mask, img, 1), (r, h, c * w))
    t1 = bmm(g, ay, img)  # [R, PH, C·W]
    t1 = transpose(g, reshape(g, t1, (r, ph, c, w)), [0, 2, 1, 3])  # [R, C, PH, W]
    axt = transpose(g, ax, [0, 2, 1])  # [R, W, PW]
    y = bmm(g, reshape(g, t1, (r, c * ph, w)), axt)  # [R, C·PH, PW]
    return [reshape(g, y, (r, c, ph, pw))]


# ------------------------------------------------------------------------------------------------
# DeformConv


@lowering("DeformConv")
def DeformConv(ctx: NodeContext) -> Result:
    """DeformConv (opsets 19, 22), 2-D: each kernel tap samples ``X`` bilinearly (zero outside, as
    GridSample with ``align_corners=1``) at ``(oh·stride − pad + i·dilation + Δy, …)`` with run-time
    offsets ``Δ``. Bilinear sampling is written with tent weights ``max(0, 1 − |p − h|)`` (exactly the
    two-pixel interpolation, zero padding included): one MATMUL applies the x-weights
    ``[N·G_o, W, S]`` to the image, a MUL/REDUCE_SUM the y-weights (S = samples of an offset group);
    the optional ``mask`` multiplies the samples, and the (grouped) convolution of the sampled
    columns is a MATMUL with the weight plus the bias. Costs O(S·H·W) per channel, so only meant for
    small maps. Inexact only by float rounding (a non-finite pixel also reaches samples whose weight
    for it is 0)."""
    xv = float_input(ctx, 0, "X")
    wv, ov = ctx.input(1), ctx.input(2)
    if xv.rank != 4:
        raise ctx.error(f"X {list(xv.shape)}: only 2-D DeformConv ([N, C, H, W]) is supported")
    n, c, h, w = xv.shape
    kind = xv.kind
    kshape = [int(v) for v in ctx.attr("kernel_shape", list(wv.shape[2:]))]
    pads = [int(v) for v in ctx.attr("pads", [0, 0, 0, 0])]
    strides = [int(v) for v in ctx.attr("strides", [1, 1])]
    dil = [int(v) for v in ctx.attr("dilations", [1, 1])]
    group = int(ctx.attr("group", 1))
    og = int(ctx.attr("offset_group", 1))
    kh, kw = kshape
    oc = wv.shape[0]
    kk = kh * kw
    if wv.rank != 4 or tuple(wv.shape[2:]) != (kh, kw) or wv.shape[1] * group != c or oc % group or c % og \
            or wv.kind is not kind or ov.kind is not kind:
        raise ctx.error(f"X {list(xv.shape)} / W {list(wv.shape)} / group {group} / offset_group {og} do not fit")
    oh = (h + pads[0] + pads[2] - ((kh - 1) * dil[0] + 1)) // strides[0] + 1
    ow = (w + pads[1] + pads[3] - ((kw - 1) * dil[1] + 1)) // strides[1] + 1
    if ov.shape != (n, og * kk * 2, oh, ow):
        raise ctx.error(f"offset {list(ov.shape)} must be [{n}, {og * kk * 2}, {oh}, {ow}]")
    g = ctx.g
    p = oh * ow
    s = kk * p
    nb = n * og
    off = reshape(g, val(ctx, ov), (n * og * kk, 2, p, 1))
    dy = reshape(g, slice_value(g, off, [0, 0, 0, 0], [n * og * kk, 1, p, 1]), (nb, s))
    dx = reshape(g, slice_value(g, off, [0, 1, 0, 0], [n * og * kk, 1, p, 1]), (nb, s))
    i_idx, j_idx = np.divmod(np.arange(kk), kw)
    o_h, o_w = np.divmod(np.arange(p), ow)
    by = (-pads[0] + strides[0] * o_h[None, :] + dil[0] * i_idx[:, None]).reshape(1, s)
    bx = (-pads[1] + strides[1] * o_w[None, :] + dil[1] * j_idx[:, None]).reshape(1, s)
    py = add(g, dy, const_k(g, by, kind))
    px = add(g, dx, const_k(g, bx, kind))

    def tent(pos: SSAValue, size: int, shape: tuple[int, ...], iota_shape: tuple[int, ...]) -> SSAValue:
        from nnkiln.dialects.tosa.ops_elementwise_unary import AbsOp

        d = unary(g, AbsOp, sub(g, reshape(g, pos, shape), const_k(g, np.arange(size).reshape(iota_shape), kind)))
        return maximum(g, sub(g, full(g, 1.0, kind, len(shape)), d), full(g, 0.0, kind, len(shape)))

    wx = tent(px, w, (nb, 1, s), (1, w, 1))  # [nb, W, S]
    wy = tent(py, h, (nb, 1, 1, s), (1, 1, h, 1))  # [nb, 1, H, S]
    cg = c // og
    t1 = bmm(g, reshape(g, val(ctx, xv), (nb, cg * h, w)), wx)  # [nb, Cg·H, S]
    v = rsum(g, mul(g, reshape(g, t1, (nb, cg, h, s)), wy), 2)  # [nb, Cg, 1, S]
    if ctx.has_input(4):
        mv = ctx.input(4)
        if mv.shape != (n, og * kk, oh, ow) or mv.kind is not kind:
            raise ctx.error(f"mask {list(mv.shape)} must be [{n}, {og * kk}, {oh}, {ow}]")
        v = mul(g, v, reshape(g, val(ctx, mv), (nb, 1, 1, s)))
    cpg, ocpg = c // group, oc // group
    cols = reshape(g, v, (n * group, cpg * kk, p))
    wt = reshape(g, val(ctx, wv), (1, group, ocpg, cpg * kk))
    if n > 1:
        from nnkiln.dialects.tosa.ops_data_layout import TileOp

        wt = g.value(TileOp, [wt], wt.type.element_type, multiples=[n, 1, 1, 1])  # type: ignore[attr-defined]
    y = bmm(g, reshape(g, wt, (n * group, ocpg, cpg * kk)), cols)  # [N·group, OCpg, P]
    y = reshape(g, y, (n, oc, oh, ow))
    if ctx.has_input(3):
        y = add(g, y, reshape(g, val(ctx, ctx.input(3)), (1, oc, 1, 1)))
    return [y]
