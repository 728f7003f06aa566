"""Lowering of the NNEF 1.0.5 standard additions (see ``document.V105_ADDITIONS``) and of the 1.0.5
``slice(stride)`` to ``tosa`` (shapes and argument rules: ``shapes_v105`` and ``shapes.slice_extents``).

* ``tile`` → TILE. ``pad`` → PAD (``constant``, with ``value``) or the §4.3 border extension of
  ``lowering_window.border_pad`` (``replicate``, ``reflect``, ``reflect-even``); negative amounts crop.
* ``gather(input, indices, axis)``: ``input`` viewed as ``[A, K, B]`` (K the gathered axis), the flattened
  indices tiled to ``[A, W]``, GATHER → ``[A, W, B]``, reshaped to ``x[:axis] + indices.shape + x[axis+1:]``.
  Decision: indices follow ONNX/numpy (``-K <= i < K``, negative ones count from the end; run-time ones are
  shifted with GREATER/ADD/SELECT); constant indices outside that range are an error; run-time indices
  outside it give TOSA GATHER's unpredictable result (the spec does not define them).
* ``cast<T>(input)``: scalar → integer truncates toward zero (as the Khronos interpreter does; unlike the
  language's compile-time ``integer()``, which floors: §3.3.3 "the closest smaller integer"), via FLOOR/CEIL
  + CAST; scalar/integer → logical is ``x != 0``; logical →
  integer/scalar is 1/0 (CAST through int32); integer → scalar is CAST.
* ``sin``, ``cos``, ``tan``, ``asin``, ``acos``, ``atan``, ``sinh``, ``cosh``, ``asinh``, ``acosh``,
  ``atanh``: TOSA 0.30 has no such operators and no finite composition of its operators computes them
  exactly, so each becomes ``tosa.custom`` (identifier ``nnef.<name>``, config ``nnef``) with a float32
  numpy reference kernel in :mod:`nnkiln.reference.custom_nnef` (constant inputs fold with numpy).
* ``any_reduce`` / ``all_reduce`` → REDUCE_ANY / REDUCE_ALL per axis.
* ``slice`` with ``stride``: SLICE of the covered rows (REVERSE first for negative strides), then every
  ``|stride|``-th row (``common.nn.strided_phase``).

The compounds ``softabs``, ``selu``, ``gelu`` (1.0.5 defines it as ``x·sigmoid(1.702·x)``), ``silu``,
``min_max_linear_quantize`` and ``zero_point_linear_quantize`` are expanded from their bodies in
``stdlib.nnef``; the quantization algorithms of graph.quant are handled in ``lowering_quant``.
"""

from __future__ import annotations

import json
import math

import numpy as np
from xdsl.dialects.builtin import TensorType

from nnkiln.dialects.tosa.base import Kind, element_type
from nnkiln.frontends.common.arith import etype, kind_of_value, shape_of
from nnkiln.frontends.common.broadcast import reshape
from nnkiln.frontends.nnef.ast import Prim
from nnkiln.frontends.nnef.expand import FlatOp
from nnkiln.frontends.nnef.lowering import KIND, NP_DTYPE, Lowerer, full_like, handles
from nnkiln.reference.custom_math import TRIG_FUNCTIONS, trig_f32

TRIG = tuple(TRIG_FUNCTIONS)


def _out(op: FlatOp):  # noqa: ANN202
    return list(op.outputs.values())[0]


@handles("tile")
def _tile(lw: Lowerer, op: FlatOp) -> None:
    from nnkiln.dialects.tosa.ops_data_layout import TileOp

    p = op.dtype or Prim.SCALAR
    x = lw.value(op.inputs["input"], p)
    reps = [int(r) for r in op.attribs["repeats"]]  # type: ignore[union-attr]
    if isinstance(x, np.ndarray):
        lw.out(op, np.tile(x, reps))
    elif all(r == 1 for r in reps):
        lw.out(op, x)
    else:
        lw.out(op, lw.g.value(TileOp, [x], etype(x), multiples=reps))


@handles("pad")
def _pad(lw: Lowerer, op: FlatOp) -> None:
    from nnkiln.frontends.common.nn import pad_value
    from nnkiln.frontends.nnef.lowering_window import border_pad

    pairs = [(int(b), int(e)) for b, e in op.attribs["padding"]]  # type: ignore[union-attr]
    border = str(op.attribs.get("border", "constant"))
    value = float(op.attribs.get("value", 0.0))  # type: ignore[arg-type]
    x = lw.ssa(lw.value(op.inputs["input"]), Prim.SCALAR)
    if border == "constant":
        lw.out(op, pad_value(lw.g, x, pairs, value))
    else:
        lw.out(op, border_pad(lw, x, pairs, border, 0.0))


@handles("gather")
def _gather(lw: Lowerer, op: FlatOp) -> None:
    from nnkiln.dialects.tosa.ops_comparison import GreaterOp
    from nnkiln.dialects.tosa.ops_data_layout import TileOp
    from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp
    from nnkiln.dialects.tosa.ops_elementwise_ternary import SelectOp
    from nnkiln.dialects.tosa.ops_scatter_gather import GatherOp
    from nnkiln.dialects.tosa.ops_type_conversion import CastOp

    p = op.dtype or Prim.SCALAR
    axis = int(op.attribs.get("axis", 0))  # type: ignore[arg-type]
    x = lw.value(op.inputs["input"], p)
    idx = lw.value(op.inputs["indices"], Prim.INTEGER)
    xs = tuple(np.shape(x)) if isinstance(x, np.ndarray) else shape_of(x)
    k = xs[axis]
    ref = _out(op)
    if isinstance(idx, np.ndarray):
        i = np.asarray(idx).astype(np.int64)
        if i.size and (i.min() < -k or i.max() >= k):
            raise lw.error(f"gather indices {i.reshape(-1).tolist()} out of range for extent {k}")
        i = np.where(i < 0, i + k, i)
        if isinstance(x, np.ndarray):
            lw.out(op, np.take(x, i, axis=axis))
            return
        idx = i.astype(np.int32)
    a, b = math.prod(xs[:axis]), math.prod(xs[axis + 1:])
    w = math.prod(np.shape(idx)) if isinstance(idx, np.ndarray) else math.prod(shape_of(idx))
    g, i32, bool_t = lw.g, element_type(Kind.I32), element_type(Kind.BOOL)
    if isinstance(idx, np.ndarray):
        iv = g.const(np.ascontiguousarray(np.asarray(idx, np.int32).reshape(1, w)))
    else:
        iv = reshape(g, idx, (1, w))
        neg = g.value(GreaterOp, [g.const(np.zeros((1, 1), np.int32)), iv], bool_t)
        shifted = g.value(AddOp, [iv, g.const(np.full((1, 1), k, np.int32))], i32)
        iv = g.value(SelectOp, [neg, shifted, iv], i32)
    if a > 1:
        iv = g.value(TileOp, [iv], i32, multiples=[a, 1])
    xv = lw.ssa(x, p)
    was_bool = kind_of_value(xv) is Kind.BOOL
    if was_bool:
        xv = g.value(CastOp, [xv], i32)
    y = g.value(GatherOp, [reshape(g, xv, (a, k, b)), iv], etype(xv))
    if was_bool:
        y = g.value(CastOp, [y], bool_t)
    lw.out(op, reshape(g, y, ref.shape))


def _np_cast(x: np.ndarray, to: Prim) -> np.ndarray:
    if to is Prim.LOGICAL:
        return x != 0
    if to is Prim.INTEGER:
        return np.trunc(x).astype(np.int32) if x.dtype.kind == "f" else x.astype(np.int32)
    return x.astype(np.float32)


@handles("cast")
def _cast(lw: Lowerer, op: FlatOp) -> None:
    from nnkiln.dialects.tosa.ops_comparison import EqualOp
    from nnkiln.dialects.tosa.ops_elementwise_unary import LogicalNotOp
    from nnkiln.dialects.tosa.ops_type_conversion import CastOp
    from nnkiln.frontends.common.arith import trunc_toward_zero

    to = op.dtype or Prim.SCALAR
    src = op.inputs["input"]
    x = lw.value(src, getattr(src, "dtype", None) or Prim.SCALAR)
    if isinstance(x, np.ndarray):
        lw.out(op, _np_cast(np.asarray(x), to))
        return
    g = lw.g
    kind = kind_of_value(x)
    target = KIND[to]
    if kind is target:
        lw.out(op, x)
    elif target is Kind.BOOL:
        eq = g.value(EqualOp, [x, full_like(lw, 0, x)], element_type(Kind.BOOL))
        lw.out(op, g.value(LogicalNotOp, [eq], element_type(Kind.BOOL)))
    elif kind is Kind.BOOL:
        y = g.value(CastOp, [x], element_type(Kind.I32))
        lw.out(op, y if target is Kind.I32 else g.value(CastOp, [y], element_type(target)))
    elif target is Kind.I32:
        lw.out(op, g.value(CastOp, [trunc_toward_zero(g, x)], element_type(Kind.I32)))
    else:
        lw.out(op, g.value(CastOp, [x], element_type(target)))


@handles(*TRIG)
def _trig(lw: Lowerer, op: FlatOp) -> None:
    from nnkiln.dialects.tosa.ops_custom import CustomOp
    from nnkiln.ir.diagnostics import source_loc
    from nnkiln.reference import custom_nnef as custom_ops

    x = lw.value(op.inputs["x"])
    if isinstance(x, np.ndarray):
        lw.out(op, trig_f32(op.name, x))
        return
    custom_ops.register()
    rt = TensorType(element_type(Kind.F32), list(shape_of(x)))
    c = CustomOp.make([x], [rt], identifier=f"nnef.{op.name}", config="nnef", implementation_attrs=json.dumps({}))
    c.location = source_loc(lw.file, op.name, op.line)
    lw.g.builder.insert(c)
    lw.out(op, c.results[0])


@handles("any_reduce", "all_reduce")
def _logical_reduce(lw: Lowerer, op: FlatOp) -> None:
    from nnkiln.dialects.tosa.ops_reduction import ReduceAllOp, ReduceAnyOp

    x = lw.value(op.inputs["input"], Prim.LOGICAL)
    axes = sorted({int(a) for a in op.attribs["axes"]})  # type: ignore[union-attr]
    if isinstance(x, np.ndarray):
        fn = np.any if op.name == "any_reduce" else np.all
        lw.out(op, fn(x.astype(bool), axis=tuple(axes), keepdims=True) if axes else x.astype(bool))
        return
    cls = ReduceAnyOp if op.name == "any_reduce" else ReduceAllOp
    for a in axes:
        x = lw.g.value(cls, [x], etype(x), axis=a)
    lw.out(op, x)


@handles("slice")
def _slice(lw: Lowerer, op: FlatOp) -> None:
    """slice (§4.5.9, 1.0.5 ``stride``): see ``shapes.slice_extents`` for the bounds."""
    from nnkiln.dialects.tosa.ops_data_layout import ReverseOp
    from nnkiln.frontends.common.nn import slice_value, strided_phase
    from nnkiln.frontends.nnef.shapes import slice_extents

    p = op.dtype or Prim.SCALAR
    x = lw.value(op.inputs["input"], p)
    shape = tuple(np.shape(x)) if isinstance(x, np.ndarray) else shape_of(x)
    first, step, out = slice_extents(shape, op.attribs)  # type: ignore[arg-type]
    if isinstance(x, np.ndarray):
        for ax, (f, s, n) in enumerate(zip(first, step, out)):
            x = np.take(x, f + np.arange(n) * s, axis=ax)
        lw.out(op, x)
        return
    g = lw.g
    for ax, (f, s, n) in enumerate(zip(first, step, out)):
        if s < 0:
            x = g.value(ReverseOp, [x], etype(x), axis=ax)
            f, s = shape[ax] - 1 - f, -s
        if s == 1:
            if (f, n) != (0, shape_of(x)[ax]):
                st = [0] * len(shape)
                st[ax] = f
                sz = list(shape_of(x))
                sz[ax] = n
                x = slice_value(g, x, st, sz)
        else:
            x = strided_phase(g, x, ax, n, s, f)
    lw.out(op, x)


__all__ = ["NP_DTYPE", "TRIG"]
