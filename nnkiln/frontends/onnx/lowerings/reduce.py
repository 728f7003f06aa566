"""Reduction lowerings: ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare, ArgMax, ArgMin.

- ``axes`` is an attribute before opset 13 (ReduceSum) / 18 (the others) and an optional constant
  input afterwards; an empty/absent ``axes`` reduces every axis unless ``noop_with_empty_axes``.
- Several axes become a chain of single-axis TOSA reductions (each keeps the rank with size 1);
  ``keepdims = 0`` ends with one RESHAPE. Inputs of rank > 4 are viewed as ``[pre, d, post]``
  around each reduced axis (TOSA reductions take rank 1..4).
- Types: REDUCE_SUM takes int32 and floats; REDUCE_MAX/MIN int8/16/32 and floats, Boolean max/min
  are REDUCE_ANY/REDUCE_ALL; REDUCE_PRODUCT floats only. Other combinations are not supported.
- Float rounding (documented decisions): ReduceMean is ``sum * (1/n)`` with ``1/n`` rounded to the
  element type, so it can differ from ``sum / n`` by an ulp; ReduceL2 is ``sqrt`` computed as
  ``RECIPROCAL(RSQRT(sum of squares))`` (exact at 0: 1/inf = 0; about 2 ulp otherwise);
  ReduceLogSumExp is the stable ``m + log(sum(exp(x - m)))`` with ``m`` the maximum (chained sums
  also add in a different order than a flat sum).
- ArgMax → ARGMAX (int8/int16/floats); ArgMin → ARGMAX of NEGATE (floats, exact) or of BITWISE_NOT
  (integers: ``~x = -x - 1`` reverses the order exactly, no overflow); ``select_last_index`` →
  REVERSE, ARGMAX, then ``(d - 1) - index``. Results are int32 (ONNX int64 at run time).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind, element_type, kind_of
from nnkiln.dialects.tosa.ops_data_layout import ReverseOp
from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp, MulOp, SubOp
from nnkiln.dialects.tosa.ops_elementwise_unary import (
    AbsOp,
    BitwiseNotOp,
    ExpOp,
    LogOp,
    NegateOp,
    ReciprocalOp,
    RsqrtOp,
)
from nnkiln.dialects.tosa.ops_reduction import (
    ReduceAllOp,
    ReduceAnyOp,
    ReduceMaxOp,
    ReduceMinOp,
    ReduceProductOp,
    ReduceSumOp,
)
from nnkiln.dialects.tosa.ops_tensor import ArgMaxOp
from nnkiln.frontends.common.arith import etype, shape_of
from nnkiln.frontends.common.broadcast import reshape
from nnkiln.frontends.onnx.importer import NodeContext, TensorValue
from nnkiln.frontends.onnx.lowerings import lowering

Result = TensorValue | SSAValue | np.ndarray


def _const_like(ctx: NodeContext, v: SSAValue, value: float) -> SSAValue:
    kind = kind_of(v.type)
    assert kind is not None
    dtype = {Kind.F32: np.float32, Kind.F16: np.float16, Kind.I32: np.int32}.get(kind)
    if dtype is None:
        raise ctx.error(f"{kind.value} is not supported here")
    arr = np.full((1,) * len(shape_of(v)), value, dtype=dtype)
    return ctx.importer.materialize(TensorValue.constant(arr))


def _reduce_axis(ctx: NodeContext, op: type, v: SSAValue, axis: int) -> SSAValue:
    shape = shape_of(v)
    if len(shape) <= 4:
        return ctx.g.value(op, [v], etype(v), axis=axis)
    pre, d, post = math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1:])
    r = ctx.g.value(op, [reshape(ctx.g, v, (pre, d, post))], etype(v), axis=1)
    out = list(shape)
    out[axis] = 1
    return reshape(ctx.g, r, out)


def _axes(ctx: NodeContext, attr_until: int) -> tuple[list[int], bool]:
    """(normalised sorted axes, noop): axes from the attribute or the constant input 1."""
    rank = ctx.input(0).rank
    if ctx.opset < attr_until:
        raw = ctx.attr("axes")
        axes = None if raw is None else [int(a) for a in raw]
    else:
        axes = [int(a) for a in np.asarray(ctx.const(1, "axes")).reshape(-1)] if ctx.has_input(1) else None
    noop = bool(ctx.attr("noop_with_empty_axes", 0))
    if not axes:
        return ([], True) if noop else (list(range(rank)), False)
    norm = []
    for a in axes:
        if not -rank <= a < rank:
            raise ctx.error(f"axis {a} is out of range for rank {rank}")
        norm.append(a + rank if a < 0 else a)
    return sorted(set(norm)), False


def _chain(ctx: NodeContext, op: type, v: SSAValue, axes: Sequence[int]) -> SSAValue:
    for a in axes:
        if shape_of(v)[a] != 1:  # reducing a size-1 axis is the identity
            v = _reduce_axis(ctx, op, v, a)
    return v


def _finish(ctx: NodeContext, v: SSAValue, axes: Sequence[int]) -> SSAValue:
    keepdims = bool(ctx.attr("keepdims", 1))
    if keepdims:
        return v
    out = [d for i, d in enumerate(shape_of(v)) if i not in set(axes)]
    return reshape(ctx.g, v, out)


def _require_kinds(ctx: NodeContext, kinds: Sequence[Kind]) -> Kind:
    k = ctx.input(0).kind
    if k not in kinds:
        raise ctx.error(f"{k.value} input is not supported (TOSA supports {', '.join(x.value for x in kinds)} here)")
    return k


def _np_reduce(ctx: NodeContext, fn: Callable[[np.ndarray, tuple[int, ...]], np.ndarray], axes: Sequence[int]) -> np.ndarray:
    arr = np.asarray(ctx.input(0).const)
    keep = bool(ctx.attr("keepdims", 1))
    out = fn(arr, tuple(axes))
    if keep:
        return np.asarray(out).reshape([1 if i in axes else d for i, d in enumerate(arr.shape)]).astype(arr.dtype)
    return np.asarray(out).astype(arr.dtype)


_FLOATS = (Kind.F32, Kind.F16, Kind.BF16)
_SUM_KINDS = (Kind.I32, *_FLOATS)
_MAXMIN_KINDS = (Kind.I8, Kind.I16, Kind.I32, *_FLOATS, Kind.BOOL)

_NP = {
    "ReduceSum": lambda a, ax: np.sum(a, axis=ax),
    "ReduceMean": lambda a, ax: np.mean(a, axis=ax),
    "ReduceMax": lambda a, ax: np.max(a, axis=ax),
    "ReduceMin": lambda a, ax: np.min(a, axis=ax),
    "ReduceProd": lambda a, ax: np.prod(a, axis=ax),
    "ReduceL1": lambda a, ax: np.sum(np.abs(a), axis=ax),
    "ReduceL2": lambda a, ax: np.sqrt(np.sum(np.square(a), axis=ax)),
    "ReduceLogSum": lambda a, ax: np.log(np.sum(a, axis=ax)),
    "ReduceLogSumExp": lambda a, ax: np.log(np.sum(np.exp(a), axis=ax)),
    "ReduceSumSquare": lambda a, ax: np.sum(np.square(a), axis=ax),
}


def _reduce(ctx: NodeContext, name: str, attr_until: int) -> list[Result]:
    data = ctx.input(0)
    axes, noop = _axes(ctx, attr_until)
    if any(data.shape[a] == 0 for a in axes) or 0 in data.shape:
        raise ctx.error(f"input {list(data.shape)} has a zero-size dimension: zero-size tensors are not supported "
                        "in TOSA 0.30")
    if data.is_const:
        if noop:
            return [np.asarray(data.const)]
        return [_np_reduce(ctx, _NP[name], axes)]
    if data.rank == 0:
        axes = []
        noop = True
    x = ctx.tensor(0)
    if name in ("ReduceMax", "ReduceMin"):
        k = _require_kinds(ctx, _MAXMIN_KINDS)
        if noop:
            return [x]
        if k is Kind.BOOL:
            op = ReduceAnyOp if name == "ReduceMax" else ReduceAllOp
        else:
            op = ReduceMaxOp if name == "ReduceMax" else ReduceMinOp
        return [_finish(ctx, _chain(ctx, op, x, axes), axes)]
    if name == "ReduceSum":
        _require_kinds(ctx, _SUM_KINDS)
        if noop:
            return [x]
        return [_finish(ctx, _chain(ctx, ReduceSumOp, x, axes), axes)]
    if name == "ReduceProd":
        _require_kinds(ctx, _FLOATS)
        if noop:
            return [x]
        return [_finish(ctx, _chain(ctx, ReduceProductOp, x, axes), axes)]
    if name == "ReduceMean":
        _require_kinds(ctx, _FLOATS)
        if noop:
            return [x]
        n = math.prod(data.shape[a] for a in axes)
        s = _chain(ctx, ReduceSumOp, x, axes)
        return [_finish(ctx, ctx.g.value(MulOp, [s, _const_like(ctx, s, 1.0 / n)], etype(s)), axes)]
    if name in ("ReduceL1", "ReduceSumSquare", "ReduceL2"):
        k = _require_kinds(ctx, _SUM_KINDS if name != "ReduceL2" else _FLOATS)
        if name == "ReduceL1":
            y = ctx.g.value(AbsOp, [x], etype(x))
        else:
            y = ctx.g.value(MulOp, [x, x], etype(x))
        del k
        if not noop:
            y = _chain(ctx, ReduceSumOp, y, axes)
        if name == "ReduceL2":
            y = ctx.g.value(ReciprocalOp, [ctx.g.value(RsqrtOp, [y], etype(y))], etype(y))
        return [_finish(ctx, y, axes) if not noop else y]
    if name == "ReduceLogSum":
        _require_kinds(ctx, _FLOATS)
        y = x if noop else _chain(ctx, ReduceSumOp, x, axes)
        y = ctx.g.value(LogOp, [y], etype(y))
        return [y if noop else _finish(ctx, y, axes)]
    if name == "ReduceLogSumExp":
        _require_kinds(ctx, _FLOATS)
        if noop:
            return [ctx.g.value(LogOp, [ctx.g.value(ExpOp, [x], etype(x))], etype(x))]
        m = _chain(ctx, ReduceMaxOp, x, axes)
        e = ctx.g.value(ExpOp, [ctx.g.value(SubOp, [x, m], etype(x))], etype(x))
        s = _chain(ctx, ReduceSumOp, e, axes)
        y = ctx.g.value(AddOp, [ctx.g.value(LogOp, [s], etype(s)), m], etype(s))
        return [_finish(ctx, y, axes)]
    raise ctx.error(f"{name} is not supported")


def _make(name: str, attr_until: int) -> None:
    def lower(ctx: NodeContext) -> list[Result]:
        return _reduce(ctx, name, attr_until)

    lower.__name__ = name
    lower.__qualname__ = name
    lower.__doc__ = f"{name}: see the module docstring (axes attribute before opset {attr_until})."
    lowering(name)(lower)


for _name in _NP:
    _make(_name, 13 if _name == "ReduceSum" else 18)


# ------------------------------------------------------------------------------------------------
# ArgMax / ArgMin


def _arg(ctx: NodeContext, is_min: bool) -> list[Result]:
    data = ctx.input(0)
    rank = data.rank
    axis = int(ctx.attr("axis", 0))
    if not -rank <= axis < rank:
        raise ctx.error(f"axis {axis} is out of range for rank {rank}")
    axis = axis + rank if axis < 0 else axis
    keepdims = bool(ctx.attr("keepdims", 1))
    last = bool(ctx.attr("select_last_index", 0))
    d = data.shape[axis]
    kept = [1 if i == axis else s for i, s in enumerate(data.shape)]
    dropped = [s for i, s in enumerate(data.shape) if i != axis]
    if data.is_const:
        arr = np.asarray(data.const)
        src = np.flip(arr, axis) if last else arr
        idx = np.argmin(src, axis=axis) if is_min else np.argmax(src, axis=axis)
        if last:
            idx = d - 1 - idx
        idx = idx.astype(np.int64)
        return [idx.reshape(kept) if keepdims else idx]
    k = data.kind
    if k not in (Kind.I8, Kind.I16, Kind.I32, *_FLOATS):
        raise ctx.error(f"{k.value} input is not supported")
    if d == 0 or 0 in data.shape:
        raise ctx.error("zero-size input is not supported")
    x = ctx.tensor(0)
    if rank > 4:  # view as [pre, d, post] (ARGMAX takes rank <= 4)
        x = reshape(ctx.g, x, (math.prod(data.shape[:axis]), d, math.prod(data.shape[axis + 1:])))
        axis = 1
        dropped_view = [shape_of(x)[0], shape_of(x)[2]]
    else:
        dropped_view = dropped
    if k is Kind.I32:
        raise ctx.error("int32 input is not supported (TOSA ARGMAX takes int8, int16 and floats)")
    if is_min:
        x = ctx.g.value(NegateOp if k in _FLOATS else BitwiseNotOp, [x], etype(x))
    if last:
        x = ctx.g.value(ReverseOp, [x], etype(x), axis=axis) if d > 1 else x
    i32 = element_type(Kind.I32)
    r = ctx.g.value(ArgMaxOp, [x], i32, axis=axis)
    if last:
        c = ctx.importer.materialize(TensorValue.constant(np.full((1,) * max(1, len(dropped_view)), d - 1, np.int32)))
        if not dropped_view:
            r = reshape(ctx.g, r, (1,))
        r = ctx.g.value(SubOp, [c, r], i32)
    return [reshape(ctx.g, r, kept if keepdims else dropped)]


@lowering("ArgMax")
def ArgMax(ctx: NodeContext) -> list[Result]:
    """ArgMax → ARGMAX (spec §2.3.1); see the module docstring."""
    return _arg(ctx, False)


@lowering("ArgMin")
def ArgMin(ctx: NodeContext) -> list[Result]:
    """ArgMin → ARGMAX of NEGATE (floats) or BITWISE_NOT (integers); see the module docstring."""
    return _arg(ctx, True)
