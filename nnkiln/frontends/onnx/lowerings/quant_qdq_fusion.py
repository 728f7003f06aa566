"""QDQ fusion: a DequantizeLinear returns a ``DequantizedValue`` (a ``TensorValue`` that remembers the
integer tensor, scale and zero point, and emits its float path only if some lowering asks for its IR
value). Conv, MatMul, Gemm, Add, Relu, Clip, MaxPool, AveragePool, GlobalAveragePool, Concat and the
data-movement ops (Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Identity, Slice) have a fusion pattern:
when all float inputs of the node are DequantizeLinear results and the node's only consumers are
QuantizeLinear nodes with one constant per-tensor scale and zero point, the node is emitted in integer
arithmetic and the QuantizeLinear returns that integer tensor; otherwise the original float lowering
runs (and the DequantizeLinear float path is emitted on demand). ``node → Relu → QuantizeLinear`` fuses
the ReLU as a clamp at the quantized zero. A DequantizeLinear → QuantizeLinear pair is one RESCALE.
uint8 results of fused ops are kept as int8 (``LazyValue.signed_view``) between fused ops.

The fusion is registered as ``@fusion`` patterns (tried before the float lowerings); a pattern returns
None to decline, and the float lowering then runs. The importer's ``consumers`` / ``graph_outputs``
give the graph structure the patterns need. uint8 tensors through value-moving ops (QOperator models)
are shifted to int8, moved, and shifted back by a second pattern.
"""

from __future__ import annotations

import dataclasses
import math
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind
from nnkiln.frontends.common.arith import kind_of_value, shape_of
from nnkiln.frontends.common.quant import QuantError, add_common_scale, bias_i32
from nnkiln.frontends.onnx.importer import NodeContext, TensorValue
from nnkiln.frontends.onnx.lowerings import LOWERINGS, fusion
from nnkiln.frontends.onnx.lowerings._integers import rescale
from nnkiln.frontends.onnx.lowerings._quant_common import (
    F32,
    I8,
    I32,
    SIGNED,
    U8,
    DequantizedValue,
    QuantInfo,
    Target,
    act,
    as_target,
    const,
    dequantize_ir,
    emit,
    requant_signed,
)
from nnkiln.frontends.onnx.lowerings._quant_kernels import conv_i32, from_channels_last, matmul_i32, weight_i8

# ------------------------------------------------------------------------------------------------
# QDQ fusion (see the module docstring)


_TOP_LEVEL_OUTPUTS: weakref.WeakKeyDictionary[Any, frozenset[str]] = weakref.WeakKeyDictionary()
"""Per importer: the values produced by nodes of the top-level graph (``consumers`` covers that graph only)."""


def _top_level_outputs(imp: Any) -> frozenset[str]:
    names = _TOP_LEVEL_OUTPUTS.get(imp)
    if names is None:
        names = frozenset(o for n in imp.model.proto.graph.node for o in n.output if o)
        _TOP_LEVEL_OUTPUTS[imp] = names
    return names


def _q_target(ctx: NodeContext) -> Target | None:
    """The per-tensor quantization all consumers of the node's first output apply, if every consumer is
    a QuantizeLinear with constant parameters (and the output is no graph output)."""
    imp = ctx.importer
    outs = [o for o in ctx.node.output if o]
    if not outs or outs[0] != ctx.node.output[0]:
        return None
    graph_outputs = imp.graph_outputs
    name = outs[0]
    if any(o in graph_outputs for o in outs):
        return None
    if any(imp.consumers(o) for o in outs[1:]):
        return None
    users = imp.consumers(name)
    relu = False
    if len(users) == 1 and users[0].op_type == "Relu" and ctx.op_type != "Relu" and users[0].output[0] not in graph_outputs:
        users = imp.consumers(users[0].output[0])  # node → Relu → QuantizeLinear: fuse the ReLU as a clamp
        relu = True
    if not users or any(u.op_type != "QuantizeLinear" or u.domain not in ("", "ai.onnx") for u in users):
        return None
    if name not in _top_level_outputs(imp):  # a sub-graph node (its values are not in ``consumers``)
        return None
    target: Target | None = None
    for u in users:
        if len(u.input) < 2:
            return None
        sv = imp.values.get(u.input[1])
        if sv is None or not sv.is_const or np.asarray(sv.const).size != 1:
            return None
        if any(a.name == "block_size" and a.i > 0 for a in u.attribute):
            return None
        scale = float(np.asarray(sv.const, dtype=np.float32).reshape(-1)[0])
        if not (scale > 0 and math.isfinite(scale)):
            return None
        if len(u.input) > 2 and u.input[2]:
            zv = imp.values.get(u.input[2])
            if zv is None or not zv.is_const or np.asarray(zv.const).size != 1:
                return None
            dt = np.dtype(np.asarray(zv.const).dtype).name
            kind = {"int8": I8, "uint8": U8}.get(dt)
            zp = int(np.asarray(zv.const).reshape(-1)[0])
        else:
            od = next((a.i for a in u.attribute if a.name == "output_dtype"), 0)
            kind = {0: U8, 2: U8, 3: I8}.get(od)
            zp = 0
        if kind is None:
            return None
        t = Target(scale, zp, kind, relu)
        if target is not None and target != t:
            return None
        target = t
    return target


def _fused(ctx: NodeContext, q: TensorValue, t: Target, float_kind: Kind = F32) -> DequantizedValue:
    """The float output of a fused node: known as the integer tensor ``q`` (in ``t``'s type)."""
    info = QuantInfo(q, np.array([t.scale]), np.array([t.zp]), 0)

    def emit() -> SSAValue:
        sv = getattr(q, "signed_view", None)
        if sv is not None:
            return dequantize_ir(ctx, sv[0], np.array([t.scale]), np.array([t.zp - sv[1]]), 0, float_kind)
        return dequantize_ir(ctx, ctx.importer.materialize(q), np.array([t.scale]), np.array([t.zp]), 0, float_kind)

    dv = DequantizedValue(tuple(q.shape), float_kind, info, emit)
    dv.fused = (q, t.scale, t.zp, t.kind)  # type: ignore[attr-defined]
    return dv


def _bias_i32(ctx: NodeContext, tv: TensorValue | None, scale: np.ndarray, n: int) -> np.ndarray | None:
    """A constant bias as int32 in units of ``scale`` (the accumulator scale), or None if not constant."""
    if tv is None:
        return np.zeros(n, np.int64)
    if not tv.is_const:
        return None
    if isinstance(tv, DequantizedValue) and tv.info.q.is_const and np.all(tv.info.zp == 0):
        s = tv.info.scale
        if s.size in (1, n) and np.allclose(np.broadcast_to(s, (n,)), np.broadcast_to(scale, (n,)), rtol=1e-6, atol=0):
            return np.broadcast_to(np.asarray(tv.info.q.const).astype(np.int64).reshape(-1), (n,)).copy()
    return bias_i32(np.asarray(tv.const), np.broadcast_to(scale, (n,)).astype(np.float64))


def _weight_info(tv: TensorValue | None, axis: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(int weights, scales, zero points) of a constant DequantizeLinear weight, per-tensor or along ``axis``."""
    if not isinstance(tv, DequantizedValue) or not tv.info.q.is_const:
        return None
    arr = np.asarray(tv.info.q.const)
    if arr.dtype.name not in ("int8", "uint8"):
        return None
    info = tv.info
    if not info.per_tensor and info.axis != axis % arr.ndim:
        return None
    return arr, info.scale, info.zp


def _fuse_conv(ctx: NodeContext, t: Target) -> TensorValue | None:
    x = act(ctx, ctx.inputs[0])
    wi = _weight_info(ctx.inputs[1] if len(ctx.inputs) > 1 else None, 0)
    if x is None or wi is None or ctx.inputs[0].rank not in (3, 4):  # type: ignore[union-attr]
        return None
    xq, xz, xs = x
    w, ws, wz = wi
    m = w.shape[0]
    wq, wzz = weight_i8(ctx, TensorValue.constant(w), wz if wz.size > 1 else wz.reshape(1), "weight")
    acc_scale = xs * np.broadcast_to(ws, (m,)).astype(np.float64)
    bias = _bias_i32(ctx, ctx.inputs[2] if ctx.has_input(2) else None, acc_scale, m)
    if bias is None:
        return None
    acc, k = conv_i32(ctx, xq, xz, wq, wzz, bias)
    signed, off = SIGNED[t.kind]
    scale = acc_scale / t.scale
    y = requant_signed(ctx, acc, 0, list(scale) if ws.size > 1 else float(scale[0]), t, per_channel=ws.size > 1)
    return as_target(ctx, from_channels_last(ctx, y, k), t)


def _fuse_matmul(ctx: NodeContext, t: Target) -> TensorValue | None:
    a = act(ctx, ctx.inputs[0])
    bv = ctx.inputs[1]
    if a is None or bv is None or ctx.inputs[0].rank < 2 or bv.rank < 2:  # type: ignore[union-attr]
        return None
    aq, az, as_ = a
    b_act = act(ctx, bv) if not bv.is_const else None
    if b_act is not None:
        bq, bz, bs = b_act
        acc = matmul_i32(ctx, aq, az, TensorValue.of(bq), bz)
        return as_target(ctx, requant_signed(ctx, acc, 0, as_ * bs / t.scale, t), t)
    wi = _weight_info(bv, bv.rank - 1)
    if wi is None:
        return None
    w, ws, wz = wi
    n = w.shape[-1]
    if wz.size > 1:
        shifted = w.astype(np.int64) - wz.reshape(-1)
        if shifted.min(initial=0) < -128 or shifted.max(initial=0) > 127:
            return None
        wtv, wzz = TensorValue.constant(shifted.astype(np.int8)), 0
    else:
        wtv, wzz = weight_i8(ctx, TensorValue.constant(w), wz.reshape(1), "B")
    acc = matmul_i32(ctx, aq, az, wtv, wzz)
    scale = as_ * np.broadcast_to(ws, (n,)).astype(np.float64) / t.scale
    pc = ws.size > 1
    return as_target(ctx, requant_signed(ctx, acc, 0, list(scale) if pc else float(scale[0]), t, per_channel=pc), t)


def _fuse_gemm(ctx: NodeContext, t: Target) -> TensorValue | None:
    from nnkiln.dialects.tosa.ops_tensor import FullyConnectedOp

    if float(ctx.attr("alpha", 1.0)) != 1.0 or float(ctx.attr("beta", 1.0)) != 1.0 or ctx.attr("transA", 0):
        return None
    trans_b = bool(ctx.attr("transB", 0))
    a = act(ctx, ctx.inputs[0])
    wi = _weight_info(ctx.inputs[1], 0 if trans_b else 1)
    if a is None or wi is None or ctx.inputs[0].rank != 2:  # type: ignore[union-attr]
        return None
    aq, az, as_ = a
    w, ws, wz = wi
    w = w if trans_b else w.T  # [N, K]
    n = w.shape[0]
    wtv, wzz = weight_i8(ctx, TensorValue.constant(np.ascontiguousarray(w)), wz.reshape(-1), "B")
    acc_scale = as_ * np.broadcast_to(ws, (n,)).astype(np.float64)
    cv = ctx.inputs[2] if ctx.has_input(2) else None
    if cv is not None and cv.rank == 2 and cv.shape[0] != 1:
        return None
    bias = _bias_i32(ctx, cv, acc_scale, n)
    if bias is None:
        return None
    acc = emit(ctx, FullyConnectedOp, [aq, const(ctx, np.asarray(wtv.const), I8), const(ctx, bias, I32)], I32,
                input_zp=int(az), weight_zp=int(wzz))
    scale = acc_scale / t.scale
    pc = ws.size > 1
    return as_target(ctx, requant_signed(ctx, acc, 0, list(scale) if pc else float(scale[0]), t, per_channel=pc), t)


def _fuse_add(ctx: NodeContext, t: Target) -> TensorValue | None:
    """ADD as in the TOSA lowerings of tfl.add (``frontends.common.quant.add_common_scale``): both operands
    RESCALEd to int32 at a common scale (``2·max(scale_a, scale_b)`` with 20 extra fraction bits), ADD,
    RESCALE to the output."""
    ops = [act(ctx, ctx.inputs[i]) for i in range(2)]
    if any(o is None for o in ops):
        return None
    (aq, az, as_), (bq, bz, bs) = ops  # type: ignore[misc]
    try:
        np.broadcast_shapes(shape_of(aq), shape_of(bq))
    except ValueError:
        return None
    try:
        s, s_scale = add_common_scale(ctx.g, aq, az, as_, bq, bz, bs)
    except QuantError as err:
        raise ctx.error(str(err)) from None
    return as_target(ctx, requant_signed(ctx, s, 0, s_scale / t.scale, t), t)


def _fuse_relu(ctx: NodeContext, t: Target) -> TensorValue | None:
    x = act(ctx, ctx.inputs[0])
    if x is None:
        return None
    xq, xz, xs = x
    return as_target(ctx, requant_signed(ctx, xq, xz, xs / t.scale, t, lo=0.0), t)


def _fuse_clip(ctx: NodeContext, t: Target) -> TensorValue | None:
    x = act(ctx, ctx.inputs[0])
    if x is None:
        return None
    lo, hi = ctx.attr("min"), ctx.attr("max")
    for i, name in ((1, "lo"), (2, "hi")):
        if ctx.has_input(i):
            v = ctx.inputs[i]
            if not v.is_const:  # type: ignore[union-attr]
                return None
            val = float(np.asarray(v.const).reshape(-1)[0])  # type: ignore[union-attr]
            lo, hi = (val, hi) if name == "lo" else (lo, val)
    xq, xz, xs = x
    return as_target(ctx, requant_signed(ctx, xq, xz, xs / t.scale, t, lo=lo, hi=hi), t)


def _with_input(ctx: NodeContext, value: SSAValue, idx: int = 0) -> NodeContext:
    inputs = list(ctx.inputs)
    inputs[idx] = TensorValue.of(value)
    return dataclasses.replace(ctx, inputs=inputs, used_attrs=set())


def _single(results: Sequence[Any], ctx: NodeContext) -> SSAValue | None:
    r = results[0]
    if isinstance(r, TensorValue):
        return ctx.importer.materialize(r)
    return r if isinstance(r, SSAValue) else None


def _fuse_movement(ctx: NodeContext, t: Target) -> TensorValue | None:
    """Ops that only move or select values (and MaxPool, which commutes with monotone requantization):
    run the float lowering on the int8 tensor, then requantize to the output."""
    x = act(ctx, ctx.inputs[0])
    if x is None or any(isinstance(v, DequantizedValue) and not v.is_const for v in ctx.inputs[1:]):
        return None
    xq, xz, xs = x
    y = _single(LOWERINGS[ctx.op_type](_with_input(ctx, xq)), ctx)
    if y is None or kind_of_value(y) is not I8:
        return None
    return as_target(ctx, requant_signed(ctx, y, xz, xs / t.scale, t), t)


def _fuse_avgpool(ctx: NodeContext, t: Target) -> TensorValue | None:
    """GlobalAveragePool: the int32 sum of ``x - zp`` over the spatial axes (a depthwise convolution of ones), then
    one RESCALE by ``s_x / (count · s_y)``: a single rounding, as the float QDQ graph's mean then quantize (an int8 mean first
    would round to the input's scale, off by up to half an input step: 4 output steps for a mean whose scale is
    8x finer; found on a torch model quantized with ``quantize_static``). AveragePool: AVG_POOL2D on the raw int8
    values (zero points 0; the divisor excludes padding, so the mean of ``x`` is the mean of ``x - zp`` plus
    ``zp``), then requantize (two roundings; per-position divisors make a single one costlier)."""
    from nnkiln.dialects.tosa.ops_tensor import AvgPool2dOp

    x = act(ctx, ctx.inputs[0])
    if x is None:
        return None
    xq, xz, xs = x
    shape = shape_of(xq)
    if len(shape) not in (3, 4):
        return None
    if ctx.op_type == "GlobalAveragePool":
        return _global_mean(ctx, xq, xz, xs, t)
    else:
        if ctx.attr("count_include_pad", 0) and any(ctx.attr("pads") or []):
            return None
        try:
            from nnkiln.frontends.onnx.lowerings.nn_conv import _pool_common
        except ImportError:
            return None
        y = _pool_common(_with_input(ctx, xq), AvgPool2dOp)
    return as_target(ctx, requant_signed(ctx, y, xz, xs / t.scale, t), t)


def _global_mean(ctx: NodeContext, xq: SSAValue, xz: int, xs: float, t: Target) -> TensorValue | None:
    """The quantized GlobalAveragePool of int8 ``xq`` [N, C, H(, W)] (see ``_fuse_avgpool``): a DEPTHWISE_CONV2D
    of ones over the whole extent with ``input_zp`` (the int32 sum of ``x - zp``), then one RESCALE; the form of
    a quantized convolution, which the NNEF writer also rebuilds."""
    from nnkiln.frontends.common.quant import conv_i32_cl
    from nnkiln.frontends.onnx.lowerings.nn_conv import to_channels_first, to_channels_last

    shape = shape_of(xq)
    c, spatial = shape[1], list(shape[2:])
    count = int(np.prod(spatial))
    if count >= 1 << 23:  # |sum| < 2^31 for int8 codes
        return None
    xl = to_channels_last(ctx, xq)
    kernel = list(shape_of(xl)[1:3])
    ones = np.ones((c, 1, *kernel), np.int8)
    try:
        y = conv_i32_cl(ctx.g, xl, xz, ones, 0, np.zeros(c, np.int64), [0, 0, 0, 0], [1, 1], [1, 1], c)
    except QuantError:
        return None
    y = requant_signed(ctx, y, 0, xs / (count * t.scale), t)
    return as_target(ctx, to_channels_first(ctx, y, len(spatial)), t)


def _fuse_concat(ctx: NodeContext, t: Target) -> TensorValue | None:
    from nnkiln.dialects.tosa.ops_data_layout import ConcatOp

    parts = [act(ctx, v) for v in ctx.inputs]
    if not parts or any(p is None for p in parts):
        return None
    rank = len(shape_of(parts[0][0]))  # type: ignore[index]
    axis = int(ctx.attr("axis", 0))
    axis = axis + rank if axis < 0 else axis
    signed, _ = SIGNED[t.kind]
    vals = [requant_signed(ctx, q, z, s / t.scale, t) for q, z, s in parts]  # type: ignore[misc]
    return as_target(ctx, emit(ctx, ConcatOp, [vals], signed, axis=axis), t)


_U8_MOVEMENT = ("MaxPool", "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze", "Slice", "Concat",
                "GlobalMaxPool", "Identity", "Gather", "Split", "Pad", "Expand", "Tile", "DepthToSpace",
                "SpaceToDepth", "Resize")


def _u8_via_i8(ctx: NodeContext) -> Sequence[Any] | None:
    """uint8 tensors through value-moving ops (QOperator models): shift to int8, run, shift back (Resize: mode
    nearest only, other modes compute new values; Pad: its constant value shifted too)."""
    if not ctx.inputs or ctx.inputs[0] is None or (ctx.op_type == "Pad" and ctx.opset < 11):
        return None
    if ctx.op_type == "Resize" and ctx.attr("mode", "nearest") != "nearest":
        return None
    idxs = [0] if ctx.op_type != "Concat" else list(range(len(ctx.inputs)))
    tvs = [ctx.inputs[i] for i in idxs]
    if not all(tv is not None and tv.kind is U8 and tv.wide is None for tv in tvs):
        return None  # (a value computed in int32, ``TensorValue.wide``: the plain lowering decides)
    if all(tv is None or tv.is_const for tv in ctx.inputs):
        return None  # all constant: folded by the plain lowering
    inputs = list(ctx.inputs)
    for i in idxs:
        tv = inputs[i]
        if tv.is_const:  # type: ignore[union-attr]  (e.g. a quantized embedding table under a Gather)
            inputs[i] = TensorValue.constant((np.asarray(tv.const).astype(np.int16) - 128).astype(np.int8))  # type: ignore[union-attr]
        else:
            inputs[i] = TensorValue.of(rescale(ctx, ctx.importer.materialize(tv), I8, input_zp=128))  # type: ignore[arg-type]
    if ctx.op_type == "Pad":  # the constant value moves with the data (absent: 0)
        cv = inputs[2] if len(inputs) > 2 else None
        if cv is not None and not cv.is_const:
            return None
        value = int(np.asarray(cv.const).reshape(-1)[0]) if cv is not None and np.asarray(cv.const).size else 0
        inputs += [None] * (3 - len(inputs))
        inputs[2] = TensorValue.constant(np.array([value - 128], np.int8))
    res = LOWERINGS[ctx.op_type](dataclasses.replace(ctx, inputs=inputs, used_attrs=set()))
    out = []
    for r in res:
        v = ctx.importer.materialize(r) if isinstance(r, TensorValue) else r
        if isinstance(v, SSAValue) and kind_of_value(v) is I8:
            v = rescale(ctx, v, U8, output_zp=128)
        out.append(v)
    return out


# ------------------------------------------------------------------------------------------------
# registration: QDQ fusion first, then the uint8 data-movement path


_FUSE: dict[str, Callable[[NodeContext, Target], TensorValue | None]] = {
    "Conv": _fuse_conv,
    "MatMul": _fuse_matmul,
    "Gemm": _fuse_gemm,
    "Add": _fuse_add,
    "Relu": _fuse_relu,
    "Clip": _fuse_clip,
    "Concat": _fuse_concat,
    "AveragePool": _fuse_avgpool,
    "GlobalAveragePool": _fuse_avgpool,
    **{op: _fuse_movement for op in ("MaxPool", "GlobalMaxPool", "Reshape", "Flatten", "Transpose", "Squeeze",
                                     "Unsqueeze", "Identity", "Slice")},
}


@fusion(*_FUSE)
def qdq_fusion(ctx: NodeContext) -> Sequence[Any] | None:
    """The node in integer arithmetic when its float inputs are DequantizeLinear results and its only
    consumers are QuantizeLinear nodes (see the module docstring); None otherwise."""
    t = _q_target(ctx)
    if t is None:
        return None
    y = _FUSE[ctx.op_type](ctx, t)
    if y is None:
        return None
    return [_fused(ctx, y, t)] + [None] * (len(ctx.node.output) - 1)


@fusion(*_U8_MOVEMENT)
def uint8_movement(ctx: NodeContext) -> Sequence[Any] | None:
    """uint8 run-time inputs of value-moving ops: moved as int8 (see ``_u8_via_i8``); None otherwise."""
    return _u8_via_i8(ctx)
