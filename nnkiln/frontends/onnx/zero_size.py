"""Zero-size values in ONNX graphs. TOSA 0.30 has no zero-size tensors (spec §1.8.1), so they live only at import.

A zero-size value carries no data: its value is known from its shape and element type alone. The importer keeps
such values as import-time constants (empty arrays) and never materialises them as TOSA tensors:
- a node whose inputs are all known folds with ONNX's own semantics (``onnx.reference``): a reduction over an empty
  axis gives its identity, a non-empty result that then feeds the program;
- Concat drops its zero-size inputs;
- a node whose outputs are all zero-size by ONNX's shape inference (from the run-time inputs' shapes and the known
  inputs' values) gets empty outputs, without reading any run-time data;
- a lowering that meets a zero-size result raises ``ZeroSizeError``, and the same inference decides;
- anything else is an error naming the node (a run-time computation would need a zero-size tensor).
A zero-size graph output is returned empty at its place with its declared type (module attribute
``nnkiln.empty_outputs``, see ``nnkiln.reference.interpreter.EMPTY_OUTPUTS_ATTR``).

Invariant: no decision here reads a run-time value; shapes that depend on one are left to the lowering, which asks
for the value (``constants=``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import ml_dtypes
import numpy as np

from nnkiln.dialects.tosa.base import Kind
from nnkiln.errors import FrontendError

if TYPE_CHECKING:
    from nnkiln.frontends.onnx.importer import NodeContext


class ZeroSizeError(FrontendError):
    """A lowering met a result with a zero-size dimension, which TOSA 0.30 cannot hold. The importer catches it:
    when every output of the node is zero-size, their values are known (empty) without running it."""


def empty_of_kind(shape: Sequence[int], kind: Kind) -> np.ndarray:
    """A zero-size import-time value of ``kind`` (its data does not exist; only shape and dtype matter)."""
    dtypes = {Kind.BOOL: np.bool_, Kind.I8: np.int8, Kind.I16: np.int16, Kind.I32: np.int32, Kind.U8: np.uint8,
              Kind.U16: np.uint16, Kind.F16: np.float16, Kind.BF16: ml_dtypes.bfloat16}
    return np.zeros(tuple(shape), dtype=dtypes.get(kind, np.float32))


def has_zero_size_input(ctx: NodeContext) -> bool:
    return any(v is not None and v.const is not None and v.const.size == 0 for v in ctx.inputs)


def lower_zero_size(ctx: NodeContext, lower: Callable[[NodeContext], Sequence[Any]]) -> Sequence[Any]:
    """A node with a zero-size input (see the module docstring); ``lower`` is the node's ordinary lowering."""
    from nnkiln.frontends.onnx.importer import evaluate_with_onnx_reference

    if all(v is None or v.const is not None for v in ctx.inputs):
        folded = evaluate_with_onnx_reference(ctx.node, ctx.importer.model.proto, ctx.inputs)  # type: ignore[attr-defined]
        if folded is not None:
            return folded
    if ctx.op_type == "Concat":
        kept = [v for v in ctx.inputs if v is not None and not (v.const is not None and v.const.size == 0)]
        if len(kept) == 1:
            return [kept[0]]
        if kept:
            ctx.inputs = kept  # type: ignore[assignment]
            return lower(ctx)
    empty = inferred_empty_outputs(ctx)
    return empty if empty is not None else lower(ctx)


def empty_results(ctx: NodeContext, err: ZeroSizeError) -> list[np.ndarray]:
    """A lowering met a zero-size result: when ONNX's shape inference says every output of the node is zero-size,
    their values are known (empty); otherwise the error stands."""
    empty = inferred_empty_outputs(ctx)
    if empty is None:
        raise err
    return empty


def inferred_empty_outputs(ctx: NodeContext) -> list[np.ndarray] | None:
    """The node's outputs as empty arrays when ONNX's shape inference, from the run-time inputs' shapes and the known
    inputs' values, gives every output a static shape with a zero-size dimension; else None."""
    import onnx
    from onnx import helper, numpy_helper

    from nnkiln.frontends.onnx.importer import numpy_dtype_of_onnx_type

    node = ctx.node
    inputs, inits = [], []
    for name, v in zip(node.input, ctx.inputs):
        if not name or v is None:
            continue
        if v.const is not None:
            inits.append(numpy_helper.from_array(np.asarray(v.const), name))
        else:
            inputs.append(helper.make_tensor_value_info(name, _onnx_elem_type(ctx, name, v.kind), list(v.shape)))
    outs = [helper.make_empty_tensor_value_info(o) for o in node.output if o]
    model = helper.make_model(helper.make_graph([node], "zero-size", inputs, outs, inits),
                              opset_imports=list(ctx.importer.model.proto.opset_import))  # type: ignore[attr-defined]
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False, data_prop=True)
    except Exception:  # inference cannot say: the lowering decides
        return None
    known = {vi.name: vi.type.tensor_type for vi in [*inferred.graph.value_info, *inferred.graph.output]}
    results = []
    for o in node.output:
        t = known.get(o)
        if not o or t is None or not t.HasField("shape") or not t.elem_type:
            return None
        dims = t.shape.dim
        if not all(d.HasField("dim_value") for d in dims) or all(d.dim_value != 0 for d in dims):
            return None
        dtype = numpy_dtype_of_onnx_type(t.elem_type)
        if dtype is None:
            return None
        results.append(np.zeros([d.dim_value for d in dims], dtype=dtype))
    return results


_KIND_TYPES = {Kind.F32: 1, Kind.U8: 2, Kind.I8: 3, Kind.U16: 4, Kind.I16: 5, Kind.I32: 6, Kind.BOOL: 9, Kind.F16: 10,
               Kind.BF16: 16}


def _onnx_elem_type(ctx: NodeContext, name: str, kind: Kind) -> int:
    """The ONNX element type of run-time value ``name``: the graph's declaration when there is one, else the kind's
    (int32 for i32, where the graph may say int64: output shapes do not depend on it)."""
    imp = ctx.importer
    if imp.elem_types is None:
        g = imp.model.proto.graph  # type: ignore[attr-defined]
        imp.elem_types = {vi.name: vi.type.tensor_type.elem_type for vi in [*g.input, *g.value_info, *g.output]
                          if vi.type.HasField("tensor_type")}
    return imp.elem_types.get(name) or _KIND_TYPES.get(kind, 1)


def empty_output_dtype(vi: Any, value: np.ndarray, file: str) -> str:
    """The numpy name of the element type zero-size graph output ``vi`` has: the declared one, else the value's."""
    from onnx import helper

    from nnkiln.kinds import DECLARED_DTYPES

    elem = vi.type.tensor_type.elem_type if vi.type.HasField("tensor_type") else 0
    try:
        name = np.dtype(helper.tensor_dtype_to_np_dtype(elem)).name if elem else value.dtype.name
    except (KeyError, TypeError, ValueError):
        name = value.dtype.name
    if name not in DECLARED_DTYPES:
        raise FrontendError(f"graph output '{vi.name}' is a zero-size {name} tensor: not supported", file=file)
    return name
