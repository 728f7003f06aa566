"""Constants and shape queries: values known at import time (Constant, Shape, Size, ConstantOfShape, Identity)."""

from __future__ import annotations

import numpy as np

from nnkiln.frontends.onnx.importer import NodeContext, TensorValue
from nnkiln.frontends.onnx.lowerings import lowering


@lowering("Constant")
def Constant(ctx: NodeContext) -> list[TensorValue]:
    for key in ("value", "value_float", "value_floats", "value_int", "value_ints"):
        if key in ctx.attrs:
            v = ctx.attr(key)
            if key == "value":
                return [TensorValue.constant(v)]
            dtype = np.float32 if "float" in key else np.int64
            return [TensorValue.constant(np.array(v, dtype=dtype))]
    raise ctx.error("only tensor, float and int constants are supported (not sparse or string)")


@lowering("Shape")
def Shape(ctx: NodeContext) -> list[np.ndarray]:
    shape = np.array(ctx.input(0).shape, dtype=np.int64)
    rank = len(shape)
    start = ctx.attr("start", 0)
    end = ctx.attr("end", rank)
    start = max(0, min(rank, start + rank if start < 0 else start))
    end = max(0, min(rank, end + rank if end < 0 else end))
    return [shape[start:end]]


@lowering("Size")
def Size(ctx: NodeContext) -> list[np.ndarray]:
    return [np.array(int(np.prod(ctx.input(0).shape, dtype=np.int64)), dtype=np.int64)]


@lowering("ConstantOfShape")
def ConstantOfShape(ctx: NodeContext) -> list[np.ndarray]:
    shape = [int(d) for d in ctx.const(0, "shape")]
    value = ctx.attr("value")
    fill = np.asarray(value).reshape(-1)[:1] if value is not None else np.zeros(1, np.float32)
    if any(d < 0 for d in shape) or int(np.prod(shape, dtype=np.float64)) > (1 << 28):
        raise ctx.error(f"shape {shape} is invalid or too large for an import-time constant")
    return [np.full(shape, fill[0], dtype=fill.dtype)]


@lowering("Identity")
def Identity(ctx: NodeContext) -> list[TensorValue]:
    return [ctx.input(0)]
