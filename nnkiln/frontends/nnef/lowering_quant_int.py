"""Integer (int8 + RESCALE) lowering of quantized NNEF patterns; see ``lowering_quant`` for the contract.

State lives on the Lowerer: ``lw.qstate[name]`` is an ``IntTensor`` (int8 codes with scale / zero point),
and ``lw.vals`` is replaced by a ``LazyVals`` mapping whose deferred entries emit the float dequantization
only when a float consumer (or a graph output) reads them.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind, element_type
from nnkiln.frontends.common import quant as cq
from nnkiln.frontends.common.arith import kind_of_value, shape_of
from nnkiln.frontends.nnef.expand import FlatOp, TensorRef

I8 = element_type(Kind.I8)
I32 = element_type(Kind.I32)
F32 = element_type(Kind.F32)


@dataclasses.dataclass
class IntTensor(cq.AffineParams):
    """``real = (q - zp)·scale``: ``q`` an int8 IR value (activations, per-tensor) or int64 numpy codes
    (variables; ``scale``/``zp`` per element of dimension 0 when per-channel)."""

    q: SSAValue | np.ndarray
    scale: np.ndarray
    zp: np.ndarray


class _Deferred:
    def __init__(self, fn: Callable[[], SSAValue]) -> None:
        self.fn = fn


class LazyVals(dict):  # type: ignore[type-arg]
    """A value map whose ``_Deferred`` entries are emitted on first read."""

    def __getitem__(self, k: str) -> Any:
        v = dict.__getitem__(self, k)
        if isinstance(v, _Deferred):
            v = v.fn()
            dict.__setitem__(self, k, v)
        return v

    def get(self, k: str, default: Any = None) -> Any:
        return self[k] if k in self else default


def _setup(lw) -> None:  # noqa: ANN001
    if not isinstance(lw.vals, LazyVals):
        lw.vals = LazyVals(lw.vals)


# ------------------------------------------------------------------------------------------------
# quantization parameters


def _linear8(lw, name: str) -> tuple[np.ndarray, np.ndarray] | None:  # noqa: ANN001
    """(lo, hi) of an 8-bit linear_quantize entry for ``name``."""
    q = lw.quant.get(name)
    if q is None or q.algorithm != "linear_quantize" or int(q.args["bits"]) != 8:
        return None
    return (np.asarray(q.args["min"], np.float64).reshape(-1), np.asarray(q.args["max"], np.float64).reshape(-1))


def _grid8(lw, name: str):  # noqa: ANN001, ANN202
    """(scale, zp8, qmin8, qmax8) of an 8-bit NNEF 1.0.5 entry (``quant_v105``) for ``name``, or None."""
    from nnkiln.frontends.nnef.quant_v105 import ALGORITHMS, grid

    q = lw.quant.get(name)
    if q is None or q.algorithm not in ALGORITHMS or int(q.args["bits"]) != 8:
        return None
    gr = grid(q.algorithm, q.args)
    return None if gr is None else gr.int8()


def _act_params(lw, name: str) -> tuple[float, int] | None:  # noqa: ANN001
    """Per-tensor (scale, zp) of an activation quantized to 8 bits, or None."""
    g8 = _grid8(lw, name)
    if g8 is not None:
        # symmetric signed activations (codes -127..127) are left to the float path
        if g8[0].size != 1 or g8[1].size != 1 or g8[2] != -128 or g8[3] != 127:
            return None
        return float(g8[0][0]), int(g8[1][0])
    r = _linear8(lw, name)
    if r is None or r[0].size != 1 or r[1].size != 1:
        return None
    p = cq.qparams_from_range(r[0], r[1], 8)
    if p is None:
        return None
    return float(p[0][0]), int(p[1][0])


def _const(lw, arr: np.ndarray, et) -> SSAValue:  # noqa: ANN001
    a = np.ascontiguousarray(arr)
    return lw.g.const(a, TensorType(et, a.shape))


def _dequantize(lw, t: IntTensor) -> SSAValue:  # noqa: ANN001
    from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp, MulOp
    from nnkiln.dialects.tosa.ops_type_conversion import CastOp

    g = lw.g
    rank = len(shape_of(t.q))
    f = g.value(CastOp, [t.q], F32)
    if t.z:
        f = g.value(AddOp, [f, _const(lw, np.full((1,) * rank, -t.z, np.float32), F32)], F32)
    return g.value(MulOp, [f, _const(lw, np.full((1,) * rank, t.s, np.float32), F32)], F32, shift=0)


def _quantize(lw, v: SSAValue, s: float, z: int) -> SSAValue:  # noqa: ANN001
    """A float value on the quantization grid as its int8 code (see lowering_quant's docstring)."""
    from nnkiln.dialects.tosa.ops_activation import ClampOp
    from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp, MaximumOp, MinimumOp, MulOp
    from nnkiln.dialects.tosa.ops_type_conversion import CastOp

    g = lw.g
    rank = len(shape_of(v))
    one = (1,) * rank
    y = g.value(MulOp, [v, _const(lw, np.full(one, 1.0 / s, np.float32), F32)], F32, shift=0)
    y = g.value(ClampOp, [y], F32, min_val=-1024.0, max_val=1024.0)
    q = g.value(CastOp, [y], I32)
    if z:
        q = g.value(AddOp, [q, _const(lw, np.full(one, z, np.int32), I32)], I32)
    q = g.value(MaximumOp, [q, _const(lw, np.full(one, -128, np.int32), I32)], I32)
    q = g.value(MinimumOp, [q, _const(lw, np.full(one, 127, np.int32), I32)], I32)
    return g.value(CastOp, [q], I8)


def _get(lw, v: object) -> IntTensor | None:  # noqa: ANN001
    """The integer form of an op argument, converting a quantized float run-time value if needed."""
    if not isinstance(v, TensorRef):
        return None
    t = lw.qstate.get(v.name)
    if t is not None:
        return t
    p = _act_params(lw, v.name)
    if p is None or v.name not in lw.vals:
        return None
    x = lw.vals[v.name]
    if not isinstance(x, SSAValue) or kind_of_value(x) is not Kind.F32:
        return None
    t = IntTensor(_quantize(lw, x, p[0], p[1]), np.array([p[0]]), np.array([p[1]]))
    lw.qstate[v.name] = t
    return t


def _publish(lw, ref: TensorRef, t: IntTensor) -> None:  # noqa: ANN001
    """Record the integer result and a deferred float value for float consumers / graph outputs."""
    lw.qstate[ref.name] = t
    dict.__setitem__(lw.vals, ref.name, _Deferred(lambda: _dequantize(lw, t)))


def _out(op: FlatOp) -> TensorRef:
    return list(op.outputs.values())[0]  # type: ignore[return-value]


def _finish(lw, op: FlatOp, acc: SSAValue, in_zp: int, scale: float | list[float], per_channel: bool,  # noqa: ANN001
            out: tuple[float, int], qlo: int | None = None, qhi: int | None = None) -> None:
    y = cq.requant_i8(lw.g, acc, in_zp, scale, out[1], per_channel=per_channel, qlo=qlo, qhi=qhi)
    _publish(lw, _out(op), IntTensor(y, np.array([out[0]]), np.array([out[1]])))


# ------------------------------------------------------------------------------------------------
# patterns


def _variable(lw, op: FlatOp) -> bool:  # noqa: ANN001
    from nnkiln.frontends.nnef.tensor_file import ItemType

    ref = _out(op)
    label = str(op.attribs["label"])
    raw = lw.raw.get(label)
    rng = _linear8(lw, ref.name)
    g8 = _grid8(lw, ref.name)
    if g8 is not None:
        from nnkiln.frontends.nnef.quant_v105 import grid
        from nnkiln.frontends.nnef.tensor_file import CODE_TYPES

        q = lw.quant[ref.name]
        gr = grid(q.algorithm, q.args)
        scale, zp8, lo8, _ = g8
        shape = tuple(ref.shape)
        if (scale.size > 1 and scale.size != shape[0]) or (zp8.size > 1 and zp8.size != shape[0]):
            return False
        if raw is not None and raw.item_type in CODE_TYPES and raw.bits == 8:
            codes = np.asarray(raw.values, np.int64).reshape(shape)
        else:
            arr = lw.arrays.get(label)
            if arr is None:
                return False
            from nnkiln.frontends.nnef.quant_v105 import encode

            codes = encode(np.asarray(arr, np.float64).reshape(shape), gr)  # type: ignore[arg-type]
        from nnkiln.frontends.nnef.quant_v105 import decode

        lw.out(op, decode(codes, gr).astype(np.float32).reshape(shape))  # type: ignore[arg-type]
        q8 = codes + (lo8 - gr.qmin)  # type: ignore[union-attr]
        n = max(scale.size, zp8.size)
        lw.qstate[ref.name] = IntTensor(q8, np.broadcast_to(scale, (n,)).copy(), np.broadcast_to(zp8, (n,)).copy())
        return True
    if rng is not None:
        arr = lw.arrays.get(label)
        if arr is None:
            return False
        w = np.asarray(arr, np.float64)
        lo, hi = rng
        shape0 = (-1,) + (1,) * (w.ndim - 1)
        lo_b, hi_b = lo.reshape(shape0) if lo.size > 1 else lo[0], hi.reshape(shape0) if hi.size > 1 else hi[0]
        if (lo.size > 1 and lo.size != w.shape[0]) or (hi.size > 1 and hi.size != w.shape[0]):
            return False
        scale = (hi_b - lo_b) / 255.0
        k = np.floor((np.clip(w, lo_b, hi_b) - lo_b) / scale + 0.5)
        real = (lo_b + k * scale).astype(np.float32)
        n = max(lo.size, hi.size)
        lo_n, hi_n = np.broadcast_to(lo, (n,)), np.broadcast_to(hi, (n,))
    elif raw is not None and raw.item_type is ItemType.LINEAR_QUANTIZED and raw.bits == 8:
        k = np.asarray(raw.values, np.int64)
        real = np.asarray(lw.arrays[label], np.float32) if label in lw.arrays else raw.dequantize().astype(np.float32)
        lo_n, hi_n = np.array([raw.min], np.float64), np.array([raw.max], np.float64)
    else:
        return False
    p = cq.qparams_from_range(lo_n, hi_n, 8)
    lw.out(op, real.reshape(ref.shape))
    if p is not None:
        lw.qstate[ref.name] = IntTensor((np.asarray(k).astype(np.int64) - 128).reshape(ref.shape), p[0], p[1])
    return True


def _weight_i8(w: IntTensor) -> tuple[np.ndarray, int] | None:
    """Codes as int8 with one zero point (per-channel zero points folded in when they fit)."""
    q = np.asarray(w.q)
    if w.zp.size == 1:
        return q.astype(np.int8), w.z
    shifted = q - w.zp.reshape((-1,) + (1,) * (q.ndim - 1))
    if shifted.min(initial=0) < -128 or shifted.max(initial=0) > 127:
        return None
    return shifted.astype(np.int8), 0


def _real_bias(lw, v: object) -> np.ndarray | None:  # noqa: ANN001
    b = lw.value(v)
    return np.asarray(b, np.float64) if isinstance(b, np.ndarray) else None


def _int_operands(lw, op: FlatOp, x_ref: TensorRef, w: IntTensor,  # noqa: ANN001
                  n: int) -> tuple[IntTensor, tuple[np.ndarray, int], np.ndarray, np.ndarray] | None:
    """A conv's / linear's integer operands: the int8 input, the int8 weights with their zero point, the
    accumulator scale per output channel (``s_x·s_w``) and the bias in its units as int32; None when one
    of them has no integer form (no constant bias, per-channel scales not along the ``n`` outputs, weight
    codes outside int8, a bias beyond int32)."""
    bias = _real_bias(lw, op.inputs["bias"])
    if bias is None or w.scale.size not in (1, n):
        return None
    wi = _weight_i8(w)
    x = _get(lw, x_ref) if wi is not None else None
    if x is None or wi is None:
        return None
    acc_scale = x.s * np.broadcast_to(w.scale, (n,)).astype(np.float64)
    b = cq.bias_i32(bias, acc_scale)
    return None if b is None else (x, wi, acc_scale, b)


def _requant_scale(w: IntTensor, acc_scale: np.ndarray, out: tuple[float, int]) -> tuple[float | list[float], bool]:
    """The RESCALE from the accumulator to the output: its scale(s) and whether it is per channel."""
    per_channel = w.scale.size > 1
    scale = acc_scale / out[0]
    return (list(scale) if per_channel else float(scale[0])), per_channel


def _conv(lw, op: FlatOp) -> bool:  # noqa: ANN001
    from nnkiln.frontends.common import nn as cnn
    from nnkiln.frontends.nnef.lowering_window import geometry

    out = _act_params(lw, _out(op).name)
    w = lw.qstate.get(op.inputs["filter"].name) if isinstance(op.inputs["filter"], TensorRef) else None
    if out is None or w is None or isinstance(w.q, SSAValue):
        return False
    x_ref = op.inputs["input"]
    if not isinstance(x_ref, TensorRef) or len(x_ref.shape) != 4:
        return False
    border = str(op.attribs.get("border", "constant"))
    wq = np.asarray(w.q)
    xs = tuple(x_ref.shape)
    groups = int(op.attribs.get("groups", 1)) or xs[1]  # type: ignore[arg-type]
    pairs, stride, dilation = geometry(op, xs, wq.shape[2:], 2, False, _out(op).shape)
    if border not in ("constant", "ignore") or any(p < 0 for pr in pairs for p in pr):
        return False
    operands = _int_operands(lw, op, x_ref, w, wq.shape[0])
    if operands is None:
        return False
    x, wi, acc_scale, b = operands
    geo = [cnn.window_geometry(s, kk, st, d, bb, e, False) for s, kk, st, d, (bb, e) in
           zip(xs[2:], wq.shape[2:], stride, dilation, pairs)]
    if any(o < 1 for o, _ in geo):
        return False
    xl = cnn.to_channels_last(lw.g, x.q)
    xl, ends = cnn.trim_input(lw.g, xl, [e for _, e in geo])
    pad = [p for (bb, _), e in zip(pairs, ends) for p in (bb, e)]
    try:
        acc = cq.conv_i32_cl(lw.g, xl, x.z, wi[0], wi[1], b, pad, stride, dilation, groups)
        scale, per_channel = _requant_scale(w, acc_scale, out)
        y = cq.requant_i8(lw.g, acc, 0, scale, out[1], per_channel=per_channel)
    except cq.QuantError as err:
        raise lw.error(str(err)) from None
    y = cnn.to_channels_first(lw.g, y, 2)
    _publish(lw, _out(op), IntTensor(y, np.array([out[0]]), np.array([out[1]])))
    return True


def _linear(lw, op: FlatOp) -> bool:  # noqa: ANN001
    from nnkiln.dialects.tosa.ops_tensor import FullyConnectedOp

    out = _act_params(lw, _out(op).name)
    fref = op.inputs["filter"]
    w = lw.qstate.get(fref.name) if isinstance(fref, TensorRef) else None
    x_ref = op.inputs["input"]
    if out is None or w is None or isinstance(w.q, SSAValue) or not isinstance(x_ref, TensorRef):
        return False
    wq = np.asarray(w.q)
    if len(x_ref.shape) != 2 or wq.ndim != 2:
        return False
    operands = _int_operands(lw, op, x_ref, w, wq.shape[0])
    if operands is None:
        return False
    x, wi, acc_scale, b = operands
    acc = lw.g.value(FullyConnectedOp, [x.q, _const(lw, wi[0], I8), _const(lw, b.astype(np.int32), I32)], I32,
                     input_zp=x.z, weight_zp=wi[1])
    scale, per_channel = _requant_scale(w, acc_scale, out)
    try:
        _finish(lw, op, acc, 0, scale, per_channel, out)
    except cq.QuantError as err:
        raise lw.error(str(err)) from None
    return True


def _matmul(lw, op: FlatOp) -> bool:  # noqa: ANN001
    """matmul of two quantized run-time tensors (quantized attention; TFLite BATCH_MATMUL): int8 MATMUL with
    both zero points → int32 → RESCALE by ``s_A·s_B / s_C`` to the output's int8 code (as TFLite)."""
    from nnkiln.frontends.nnef.lowering import _matmul as matmul

    out = _act_params(lw, _out(op).name)
    a, b = _int_input(lw, op.inputs["A"]), _int_input(lw, op.inputs["B"])
    if out is None or a is None or b is None:
        return False
    ta, tb = bool(op.attribs.get("transposeA")), bool(op.attribs.get("transposeB"))
    acc = matmul(lw, a.q, b.q, ta, tb, _out(op).shape, I32, a.z, b.z)  # type: ignore[arg-type]
    try:
        _finish(lw, op, acc, 0, a.s * b.s / out[0], False, out)
    except cq.QuantError as err:
        raise lw.error(str(err)) from None
    return True


def _mul(lw, op: FlatOp) -> bool:  # noqa: ANN001
    """mul of two quantized run-time tensors (TFLite int8 MUL): ``(a − z_a)·(b − z_b)`` in int32 (RESCALE by 1
    removes each zero point; MUL with shift 0) → RESCALE by ``s_a·s_b / s_c`` to the output's int8 code."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import MulOp
    from nnkiln.frontends.common.broadcast import equal_ranks

    out = _act_params(lw, _out(op).name)
    a, b = _int_input(lw, op.inputs["x"]), _int_input(lw, op.inputs["y"])
    if out is None or a is None or b is None:
        return False
    try:
        wide = [cq.rescale(lw.g, t.q, Kind.I32, input_zp=t.z, output_zp=0, scale=1.0) for t in (a, b)]  # type: ignore[arg-type]
        prod = lw.g.value(MulOp, equal_ranks(lw.g, *wide), I32, shift=0)
        _finish(lw, op, prod, 0, a.s * b.s / out[0], False, out)
    except cq.QuantError as err:
        raise lw.error(str(err)) from None
    return True


_TABLE_FNS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
    "tanh": np.tanh,
}


def table_codes(fn: str, s_in: float, z_in: int, s_out: float, z_out: int) -> np.ndarray:
    """The int8 TABLE of ``fn`` (``sigmoid`` / ``tanh``) between two per-tensor quantizations (also used by the
    writer to recognise such tables)."""
    codes = np.arange(-128, 128, dtype=np.float64)
    y = _TABLE_FNS[fn]((codes - z_in) * s_in)
    return np.clip(np.floor(y / s_out + 0.5) + z_out, -128, 127).astype(np.int8)


def _table(lw, op: FlatOp) -> bool:  # noqa: ANN001
    """sigmoid / tanh of a quantized run-time tensor with a quantized result: int8 TABLE of the 256 codes,
    ``q_out = clamp(round(f((q - z_in)·s_in) / s_out) + z_out)`` computed in float64 (TFLite's int8 LOGISTIC and
    TANH kernels are such look-up tables, built in float: at most 1 LSB apart at rounding ties)."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import TableOp

    out = _act_params(lw, _out(op).name)
    x = _int_input(lw, op.inputs["x"])
    if out is None or x is None:
        return False
    table = table_codes(op.name, x.s, x.z, out[0], out[1])
    q = lw.g.value(TableOp, [x.q, _const(lw, table, I8)], I8)
    _publish(lw, _out(op), IntTensor(q, np.array([out[0]]), np.array([out[1]])))
    return True


def _softmax(lw, op: FlatOp) -> bool:  # noqa: ANN001
    """softmax of a quantized run-time tensor with a quantized result: ``common.quant.softmax_i8`` (exp table,
    integer normalisation and division, RESCALE); axes too long for its int32 sum stay float."""
    out = _act_params(lw, _out(op).name)
    x = _int_input(lw, op.inputs["x"])
    axes = [int(a) for a in op.attribs["axes"]]  # type: ignore[union-attr]
    if out is None or x is None or not axes:
        return False
    shape = shape_of(x.q)
    if cq.softmax_fraction_bits(math.prod(shape[a] for a in axes)) is None:
        return False
    q = cq.softmax_i8(lw.g, x.q, x.s, axes, out[0], out[1])
    _publish(lw, _out(op), IntTensor(q, np.array([out[0]]), np.array([out[1]])))
    return True


def _out_or_in(lw, op: FlatOp, x: IntTensor) -> tuple[float, int] | None:  # noqa: ANN001
    name = _out(op).name
    if name in lw.quant:
        return _act_params(lw, name)
    return x.s, x.z


def _relu_clamp(lw, op: FlatOp) -> bool:  # noqa: ANN001
    x_ref = op.inputs["x"]
    lo = hi = None
    if op.name == "clamp":
        a, b = lw.value(op.inputs["a"]), lw.value(op.inputs["b"])
        if not all(isinstance(v, np.ndarray) and v.size >= 1 and np.all(v == v.flat[0]) for v in (a, b)):
            return False
        lo, hi = float(a.flat[0]), float(b.flat[0])  # type: ignore[union-attr]
    else:
        lo = 0.0
    x = lw.qstate.get(x_ref.name) if isinstance(x_ref, TensorRef) else None
    if x is None and (not isinstance(x_ref, TensorRef) or _act_params(lw, x_ref.name) is None):
        return False
    x = x or _get(lw, x_ref)
    if x is None or not x.per_tensor or isinstance(x.q, np.ndarray):
        return False
    out = _out_or_in(lw, op, x)
    if out is None:
        return False
    s, z = out
    qlo = None if lo is None else z + int(math.ceil(lo / s - 1e-9))
    qhi = None if hi is None else z + int(math.floor(hi / s + 1e-9))
    _finish(lw, op, x.q, x.z, x.s / s, False, out, qlo, qhi)
    return True


def _int_input(lw, ref: object) -> IntTensor | None:  # noqa: ANN001
    """The integer form of an activation argument only if it already is one (or is a quantized float)."""
    if not isinstance(ref, TensorRef):
        return None
    t = lw.qstate.get(ref.name)
    if t is None and _act_params(lw, ref.name) is None:
        return None
    t = t or _get(lw, ref)
    if t is None or isinstance(t.q, np.ndarray) or not t.per_tensor:
        return None
    return t


def _unsigned(lw, name: str) -> bool:  # noqa: ANN001
    """True if ``name``'s codes come from an unsigned 1.0.5 grid (held as int8 ``q - 128``)."""
    q = lw.quant.get(name)
    return q is not None and q.algorithm in ("zero_point_linear_quantize", "min_max_linear_quantize") and \
        not bool(q.args.get("signed"))


def _pool(lw, op: FlatOp) -> bool:  # noqa: ANN001
    from nnkiln.dialects.tosa.ops_tensor import AvgPool2dOp, MaxPool2dOp
    from nnkiln.frontends.common import nn as cnn
    from nnkiln.frontends.nnef.lowering_window import geometry

    x_ref = op.inputs["input"]
    if not isinstance(x_ref, TensorRef) or len(x_ref.shape) != 4:
        return False
    size = [int(s) for s in op.attribs["size"]]  # type: ignore[union-attr]
    pairs, stride, dilation = geometry(op, x_ref.shape, size, 0, False, _out(op).shape)
    border = str(op.attribs.get("border", "constant"))
    if not (size[0] == size[1] == 1 and stride[0] == stride[1] == 1 and pairs[0] == pairs[1] == (0, 0)
            and all(d == 1 for d in dilation)):
        return False
    sp = pairs[2:]
    if any(p < 0 for pr in sp for p in pr) or (border != "ignore" and any(p for pr in sp for p in pr)):
        return False
    geo = [cnn.window_geometry(s, k, st, 1, b, e, False) for s, k, st, (b, e) in zip(x_ref.shape[2:], size[2:], stride[2:], sp)]
    if [o for o, _ in geo] != list(_out(op).shape[2:]) or not all(b < k and max(e, 0) < k for (b, _), (_, e), k in
                                                                  zip(sp, geo, size[2:])):
        return False
    x = _int_input(lw, x_ref)
    if x is None:
        return False
    out = _out_or_in(lw, op, x)
    if out is None:
        return False
    xc = cnn.to_channels_last(lw.g, x.q)
    xc, ends = cnn.trim_input(lw.g, xc, [e for _, e in geo])
    if op.name == "avg_pool" and _unsigned(lw, x_ref.name):
        # the mean of unsigned codes q = q8 + 128 (>= 0): its halves round up, as in TFLite's uint8 kernels
        y = cnn.pool2d(lw.g, AvgPool2dOp, xc, size[2:], stride[2:], [b for b, _ in sp], ends, input_zp=-128,
                       output_zp=-128)
    else:
        y = cnn.pool_nd(lw.g, MaxPool2dOp if op.name == "max_pool" else AvgPool2dOp, xc, size[2:], stride[2:],
                        [b for b, _ in sp], ends)
    y = cnn.to_channels_first(lw.g, y, 2)
    _finish(lw, op, y, x.z, x.s / out[0], False, out)
    return True


def _add(lw, op: FlatOp) -> bool:  # noqa: ANN001
    out = _act_params(lw, _out(op).name)
    xr, yr = op.inputs["x"], op.inputs["y"]
    if out is None or not isinstance(xr, TensorRef) or not isinstance(yr, TensorRef) or len(xr.shape) != len(yr.shape):
        return False
    a, b = _int_input(lw, xr), _int_input(lw, yr)
    if a is None or b is None:
        return False
    s, s_scale = cq.add_common_scale(lw.g, a.q, a.z, a.s, b.q, b.z, b.s)
    _finish(lw, op, s, 0, s_scale / out[0], False, out)
    return True


def _concat(lw, op: FlatOp) -> bool:  # noqa: ANN001
    from nnkiln.dialects.tosa.ops_data_layout import ConcatOp

    out = _act_params(lw, _out(op).name)
    refs = list(op.inputs["values"])  # type: ignore[arg-type]
    if out is None:
        return False
    parts = [_int_input(lw, r) for r in refs]
    if any(p is None for p in parts):
        return False
    vals = [cq.requant_i8(lw.g, p.q, p.z, p.s / out[0], out[1]) for p in parts]  # type: ignore[union-attr]
    y = vals[0] if len(vals) == 1 else lw.g.value(ConcatOp, [vals], I8, axis=int(op.attribs["axis"]))  # type: ignore[arg-type]
    _publish(lw, _out(op), IntTensor(y, np.array([out[0]]), np.array([out[1]])))
    return True


_MOVE_ARG = {"reshape": "input", "squeeze": "input", "unsqueeze": "input", "transpose": "input", "copy": "x",
             # NNEF 1.0.5 data movement (pad: the constant fill becomes its code, see _movement)
             "tile": "input", "slice": "input", "gather": "input", "pad": "input"}
_CONST_MOVES = ("reshape", "squeeze", "unsqueeze", "transpose", "copy")


def _movement(lw, op: FlatOp) -> bool:  # noqa: ANN001
    from nnkiln.frontends.nnef.lowering import HANDLERS

    x_ref = op.inputs[_MOVE_ARG[op.name]]
    if isinstance(x_ref, TensorRef) and isinstance(getattr(lw.qstate.get(x_ref.name), "q", None), np.ndarray):
        return op.name in _CONST_MOVES and _movement_const(lw, op, x_ref)
    x = _int_input(lw, x_ref)
    if x is None:
        return False
    out = _out_or_in(lw, op, x)
    if out is None:
        return False
    if op.name == "pad" and str(op.attribs.get("border", "constant")) == "constant":
        code = float(op.attribs.get("value", 0.0)) / x.s + x.z  # type: ignore[arg-type]
        if abs(code - round(code)) > 1e-3 or not -128 <= round(code) <= 127:
            return False  # the fill value is not on the input's grid: float path
        op = dataclasses.replace(op, attribs={**op.attribs, "value": float(round(code))})
    name = x_ref.name  # type: ignore[union-attr]
    saved = dict.__getitem__(lw.vals, name)
    dict.__setitem__(lw.vals, name, x.q)
    try:
        HANDLERS[op.name](lw, op)
    finally:
        dict.__setitem__(lw.vals, name, saved)
    y = dict.__getitem__(lw.vals, _out(op).name)
    if not isinstance(y, SSAValue) or kind_of_value(y) is not Kind.I8:
        raise lw.error(f"internal: integer '{op.name}' produced {y!r}")
    _finish(lw, op, y, x.z, x.s / out[0], False, out)
    return True


def _movement_const(lw, op: FlatOp, x_ref: TensorRef) -> bool:  # noqa: ANN001
    """Data movement of integer *constant* codes (e.g. nnef-tools' ``transpose`` of a quantized filter):
    the op is applied to the codes with numpy; the result keeps the input's quantization (per channel
    only when dimension 0 stays dimension 0), and its own graph.quant entry, if any, must describe the
    same grid (otherwise the result is float)."""
    from nnkiln.frontends.nnef.lowering import HANDLERS

    x = lw.qstate[x_ref.name]
    ref = _out(op)
    if not x.per_tensor and not (op.name == "copy" or (op.name == "transpose" and
                                                       [int(a) for a in op.attribs["axes"]][:1] == [0])):  # type: ignore[union-attr]
        return False
    if ref.name in lw.quant:
        g8 = _grid8(lw, ref.name)
        if g8 is None or not (np.allclose(np.broadcast_to(g8[0], x.scale.shape), x.scale, rtol=1e-6)
                              and np.array_equal(np.broadcast_to(g8[1], x.zp.shape), x.zp)):
            return False
    name = x_ref.name
    saved = dict.__getitem__(lw.vals, name)
    dict.__setitem__(lw.vals, name, np.asarray(x.q, np.float64))
    try:
        HANDLERS[op.name](lw, op)
        codes = np.asarray(dict.__getitem__(lw.vals, ref.name))
        dict.__setitem__(lw.vals, name, saved)
        HANDLERS[op.name](lw, op)  # the real values, for float consumers
    finally:
        dict.__setitem__(lw.vals, name, saved)
    lw.qstate[ref.name] = IntTensor(np.rint(codes).astype(np.int64), x.scale, x.zp)
    return True


PATTERNS: dict[str, Callable[[Any, FlatOp], bool]] = {
    "variable": _variable, "conv": _conv, "linear": _linear, "matmul": _matmul, "mul": _mul, "relu": _relu_clamp,
    "sigmoid": _table, "tanh": _table, "softmax": _softmax,
    "clamp": _relu_clamp,
    "max_pool": _pool, "avg_pool": _pool, "add": _add, "concat": _concat,
    **{k: _movement for k in _MOVE_ARG},
}


def try_integer(lw, op: FlatOp) -> bool:  # noqa: ANN001
    if not lw.quant and not lw.raw:
        return False
    fn = PATTERNS.get(op.name)
    if fn is None:
        return False
    _setup(lw)
    return fn(lw, op)
