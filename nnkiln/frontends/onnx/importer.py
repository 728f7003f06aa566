"""ONNX ModelProto → ``tosa``-level module.

The importer walks the graph in order. Each value is a ``TensorValue``: an IR value, a constant known
at import time, or both (constants become ``tosa.const`` only when an op needs them as a tensor, so
shape arithmetic such as Shape→Gather→Concat→Reshape folds away at import). Each node is lowered by the
function registered for its op type in ``nnkiln.frontends.onnx.lowerings`` (one small function per
ONNX op, named like the op, grouped by family).

Every node (subgraphs included) is checked against the registry: a model with unsupported ops gets
one ``FrontendError`` listing every unsupported op type with its count and node names. A top-level op
without a lowering whose inputs all turn out to be constants is evaluated at import with
``onnx.reference`` instead (constant folding with ONNX's own semantics), so it is not reported.

Inputs whose values the caller fixes (``constants=``) become import-time constants too: TOSA 0.30
shapes are static, so shape-deciding inputs (Reshape's shape, Reduce axes, ...) must be known.

Inputs with a zero-size dimension carry no data (TOSA has no zero-size tensors, spec §1.8.1): they
become import-time constants (empty arrays) and are not arguments of the imported function; zero-size values in
the graph and zero-size outputs are handled at import too (``nnkiln.frontends.onnx.zero_size``).

A node input that must be known at import (a shape, axes, a data-dependent output shape) and is not gets an error
naming the graph inputs it is computed from and how to bind them (``must_be_constant``).

Types: TOSA 0.30 has no 64-bit integers. ONNX ``int64`` tensors computed at run time (indices, ArgMax
results, shapes of dynamic values) are carried as ``i32``; constants keep their int64 values at import
and are narrowed when materialised, with an error if a value does not fit. ``uint8`` activations are
only legal in TOSA's RESCALE: quantized lowerings convert them, other uses are reported.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind, element_type, kind_of
from nnkiln.errors import warn
from nnkiln.frontends.common.graph import GraphBuilder
from nnkiln.frontends.onnx.reader import OnnxModel, read_model, tensor_to_numpy
from nnkiln.frontends.onnx.zero_size import (
    ZeroSizeError,
    empty_output_dtype,
    empty_results,
    has_zero_size_input,
    lower_zero_size,
)
from nnkiln.ir.errors import FrontendError, NnkilnError
from nnkiln.limits import LimitError, check_tensor
from nnkiln.reference.interpreter import EMPTY_OUTPUTS_ATTR, IGNORED_INPUTS_ATTR

# ONNX TensorProto element types → (numpy dtype of constants, TOSA kind of run-time values)
_ONNX_TYPES: dict[int, tuple[Any, Kind | None]] = {
    1: (np.float32, Kind.F32),
    2: (np.uint8, Kind.U8),
    3: (np.int8, Kind.I8),
    4: (np.uint16, Kind.U16),
    5: (np.int16, Kind.I16),
    6: (np.int32, Kind.I32),
    7: (np.int64, Kind.I32),
    9: (np.bool_, Kind.BOOL),
    10: (np.float16, Kind.F16),
    11: (np.float64, Kind.F32),  # TOSA 0.30 has no 64-bit float: computed in float32, with a warning
    16: (ml_dtypes.bfloat16, Kind.BF16),
}
FLOAT64 = 11




def kind_of_onnx_type(elem_type: int) -> Kind | None:
    """The TOSA kind that carries ONNX element type ``elem_type`` at run time, or None if there is none."""
    entry = _ONNX_TYPES.get(elem_type)
    return entry[1] if entry is not None else None


def numpy_dtype_of_onnx_type(elem_type: int) -> Any:
    """The numpy dtype of import-time constants of ONNX element type ``elem_type`` (None if unsupported)."""
    entry = _ONNX_TYPES.get(elem_type)
    return entry[0] if entry is not None else None


def onnx_kind(elem_type: int, where: str, file: str) -> Kind:
    entry = _ONNX_TYPES.get(elem_type)
    if entry is None or entry[1] is None:
        import onnx

        name = onnx.TensorProto.DataType.Name(elem_type) if elem_type in onnx.TensorProto.DataType.values() else str(elem_type)
        raise FrontendError(f"element type {name} has no TOSA 0.30 equivalent", file=file, node=where)
    return entry[1]


def kind_for_dtype(dtype: np.dtype) -> Kind:
    """The TOSA kind a numpy constant of ``dtype`` becomes (int64 → i32, float64 → f32)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return Kind.BOOL
    if dtype.kind == "f":
        return Kind.F16 if dtype == np.float16 else Kind.F32
    if dtype.name == "bfloat16":
        return Kind.BF16
    table = {"int8": Kind.I8, "int16": Kind.I16, "int32": Kind.I32, "int64": Kind.I32,
             "uint8": Kind.U8, "uint16": Kind.U16, "uint32": Kind.I32, "uint64": Kind.I32}
    if dtype.name in table:
        return table[dtype.name]
    raise FrontendError(f"a constant of element type {dtype} has no TOSA 0.30 equivalent")


_LEGACY_BROADCAST_OPS = frozenset(
    {"Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Xor", "Equal", "Greater", "Less"}
)
"""Binary ops whose opset 1-6 forms had ``broadcast``/``axis`` attributes."""


@dataclass
class TensorValue:
    """A value of the ONNX graph: its shape and TOSA kind, an IR value and/or an import-time constant."""

    shape: tuple[int, ...]
    kind: Kind
    ssa: SSAValue | None = None
    const: np.ndarray | None = None
    wide: SSAValue | None = None
    """An unsigned value TOSA 0.30 cannot hold in its own type (rank 0: RESCALE takes ranks 1..4, RESHAPE has no
    unsigned types) computed in int32 instead, exactly, with the ONNX shape: a graph output takes it (declared as
    the model's type, converted exactly at the boundary) and quantization parameters read it (they widen to int32
    anyway). ``ssa`` is then None, or a [1] form the quantization ops also accept (DynamicQuantizeLinear)."""

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def is_const(self) -> bool:
        return self.const is not None

    @staticmethod
    def of(ssa: SSAValue) -> TensorValue:
        t = ssa.type
        assert isinstance(t, TensorType)
        k = kind_of(t)
        assert k is not None
        return TensorValue(tuple(t.get_shape()), k, ssa=ssa)

    @staticmethod
    def constant(array: np.ndarray) -> TensorValue:
        a = np.asarray(array)
        return TensorValue(tuple(a.shape), kind_for_dtype(a.dtype), const=a)


@dataclass
class NodeContext:
    """What a lowering sees of one ONNX node."""

    node: Any  # onnx.NodeProto
    inputs: list[TensorValue | None]
    attrs: dict[str, Any]
    opset: int
    g: GraphBuilder
    importer: OnnxImporter
    used_attrs: set[str] = field(default_factory=set)

    @property
    def name(self) -> str:
        return self.node.name or f"{self.node.op_type}#{self.importer.node_index}"

    @property
    def op_type(self) -> str:
        return self.node.op_type

    def error(self, message: str) -> FrontendError:
        return FrontendError(f"{self.op_type}: {message}", file=self.g.file, node=self.name)

    def attr(self, name: str, default: Any = None) -> Any:
        self.used_attrs.add(name)
        return self.attrs.get(name, default)

    def has_input(self, i: int) -> bool:
        return i < len(self.inputs) and self.inputs[i] is not None

    def input(self, i: int) -> TensorValue:
        if not self.has_input(i):
            raise self.error(f"input {i} is required")
        v = self.inputs[i]
        assert v is not None
        return v

    def tensor(self, i: int) -> SSAValue:
        """Input ``i`` as an IR value (materialising a constant)."""
        return self.importer.materialize(self.input(i))

    def const(self, i: int, what: str = "") -> np.ndarray:
        """Input ``i`` as an import-time constant, or an error saying it must be constant."""
        v = self.input(i)
        if v.const is None:
            label = f" ({what})" if what else ""
            raise self.importer.must_be_constant(self, self.node.input[i], f"input {i}{label}")
        return v.const

    def optional_const(self, i: int, what: str = "") -> np.ndarray | None:
        return self.const(i, what) if self.has_input(i) else None


Lowering = Any  # Callable[[NodeContext], Sequence[TensorValue | SSAValue | np.ndarray]]


class OnnxImporter:
    """Lowers one ONNX model (see the module docstring)."""

    def __init__(
        self,
        model: OnnxModel,
        shapes: Mapping[str, Sequence[int]] | None = None,
        constants: Mapping[str, np.ndarray] | None = None,
    ):
        self.model = model
        self.file = model.path
        self.shapes = {k: tuple(int(d) for d in v) for k, v in (shapes or {}).items()}
        self.constants = {k: np.asarray(v) for k, v in (constants or {}).items()}
        self.graph_inputs: set[str] = set()
        self.ignored_inputs: list[tuple[str, str, tuple[int, ...]]] = []
        self.values: dict[str, TensorValue | None] = {}
        self.node_index = 0
        self.g: GraphBuilder | None = None
        self._consumers: dict[str, list[Any]] | None = None
        self._producers: dict[str, Any] | None = None
        self.elem_types: dict[str, int] | None = None
        self._unsupported: dict[str, list[Any]] = {}
        self._unavailable: set[str] = set()
        self._folded: set[int] = set()
        self._blocked = False

    # -- driver -----------------------------------------------------------------------------------

    def run(self) -> ModuleOp:
        from nnkiln.frontends.onnx.lowerings import LOWERINGS

        graph = self.model.proto.graph  # type: ignore[attr-defined]
        self._unsupported = self._find_unsupported(graph, LOWERINGS)
        init_names = {t.name for t in graph.initializer}
        graph_inputs = {i.name for i in graph.input if i.name not in init_names}
        self.graph_inputs = graph_inputs
        unknown = (set(self.shapes) | set(self.constants)) - graph_inputs
        if unknown:
            raise FrontendError(f"shapes or constants given for unknown inputs {sorted(unknown)}", file=self.file)
        inputs = []
        for vi in graph.input:
            if vi.name in init_names:
                continue
            if vi.name in self.constants:
                # Specialised: the caller fixed this input's value (e.g. a shape or axes input).
                self.values[vi.name] = TensorValue.constant(self.constants[vi.name])
                continue
            empty = self._empty_input(vi)
            if empty is not None:
                # A zero-size tensor carries no data: its value is known from its type alone. It stays a declared
                # input that programs accept and ignore (IGNORED_INPUTS_ATTR).
                self.values[vi.name] = TensorValue.constant(empty)
                self.ignored_inputs.append((vi.name, empty.dtype.name, tuple(empty.shape)))
            else:
                inputs.append((vi.name, self._input_type(vi)))
        self.g = GraphBuilder(self.file, inputs)
        for (name, _), arg in zip(inputs, self.g.block.args):
            self.values[name] = TensorValue.of(arg)
        for t in graph.initializer:
            try:
                self.values[t.name] = TensorValue.constant(tensor_to_numpy(t, self.file, inline=self.model.inline))
            except FrontendError as err:
                if not err.file:
                    err.file, err.node = self.file, t.name
                raise
        self.lower_nodes(graph.node, LOWERINGS)
        if self._blocked:
            raise self._unsupported_error()
        self._warn_float64(graph)
        outputs, declared, empty = [], [], []
        for index, out in enumerate(graph.output):
            v = self.values.get(out.name)
            if v is None:
                raise FrontendError(f"graph output '{out.name}' is not produced", file=self.file)
            if v.const is not None and v.const.size == 0:
                empty.append((out.name, empty_output_dtype(out, v.const, self.file), v.const.shape, index))
                continue
            outputs.append((out.name, self._output_value(v)))
            declared.append(self._declared_dtype(out, outputs[-1][1]))
        module = self.g.finish(outputs, declared=declared)
        if empty:
            module.attributes[EMPTY_OUTPUTS_ATTR] = ArrayAttr([DictionaryAttr({
                "name": StringAttr(n), "dtype": StringAttr(d), "shape": DenseArrayBase.from_list(i64, list(s)),
                "index": IntegerAttr(i, i64)}) for n, d, s, i in empty])
        if self.ignored_inputs:
            module.attributes[IGNORED_INPUTS_ATTR] = ArrayAttr([DictionaryAttr({
                "name": StringAttr(n), "dtype": StringAttr(d), "shape": DenseArrayBase.from_list(i64, list(s))})
                for n, d, s in self.ignored_inputs])
        return module

    def _output_value(self, v: TensorValue) -> SSAValue:
        """The IR value of graph output ``v``: its int32 form (``TensorValue.wide``) when TOSA 0.30 cannot hold its
        unsigned type, a rank-0 / rank > 4 unsigned constant likewise as an int32 constant (``_declared_dtype`` then
        declares the model's type), else ``materialize``."""
        if v.wide is not None:
            return v.wide
        arr = v.const
        if arr is not None and arr.dtype in (np.uint8, np.uint16) and not 1 <= arr.ndim <= 4:
            assert self.g is not None
            return self.g.const(arr.astype(np.int32), TensorType(element_type(Kind.I32), arr.shape))
        return self.materialize(v)

    def _declared_dtype(self, vi: Any, value: Any) -> str | None:
        """The numpy name of the element type graph output ``vi`` declares, when the TOSA value computing it has
        another one of the same family (int64 computed in int32, float64 in float32), else None."""
        from onnx import helper

        from nnkiln.dialects.tosa.base import kind_of
        from nnkiln.kinds import DECLARED_DTYPES

        elem = vi.type.tensor_type.elem_type if vi.type.HasField("tensor_type") else 0
        if not elem:
            return None
        try:
            declared = np.dtype(helper.tensor_dtype_to_np_dtype(elem)).name
        except (KeyError, TypeError, ValueError):
            return None
        kind = kind_of(value.type)
        computed = {"bool": "bool", "i8": "int8", "i16": "int16", "i32": "int32", "u8": "uint8", "u16": "uint16",
                    "f16": "float16", "f32": "float32"}.get(kind.value if kind is not None else "")
        if declared not in DECLARED_DTYPES or computed is None or declared == computed:
            return None
        # the same family only: a model declaring another (a bool mask as float) is malformed, and onnxruntime
        # refuses it; the computed type stays
        same = np.dtype(declared).kind in "iu" and np.dtype(computed).kind in "iu" or (declared, computed) == (
            "float64", "float32")
        return declared if same else None

    def _warn_float64(self, graph: Any) -> None:
        """One warning naming the float64 inputs, outputs and casts, which run in float32."""
        where = [f"input '{vi.name}'" for vi in graph.input if vi.type.tensor_type.elem_type == FLOAT64
                 and vi.name in self.values and not self.values[vi.name].is_const]
        where += [f"output '{vi.name}'" for vi in graph.output if vi.type.tensor_type.elem_type == FLOAT64]
        where += [f"Cast node '{n.name or n.output[0]}'" for n in graph.node if n.op_type == "Cast"
                  and any(a.name == "to" and a.i == FLOAT64 for a in n.attribute)]
        if where:
            more = f" and {len(where) - 5} more" if len(where) > 5 else ""
            warn(f"{self.file}: float64 tensors are computed in float32 (TOSA 0.30 has no 64-bit float): "
                 f"{', '.join(where[:5])}{more}")

    def lower_nodes(self, nodes: Sequence[Any], lowerings: Mapping[str, Lowering]) -> None:
        assert self.g is not None
        for node in nodes:
            self.node_index += 1
            if node.op_type not in lowerings or node.domain not in ("", "ai.onnx") or any(
                n in self._unavailable for n in node.input
            ):
                self._fold_or_block(node)
                continue
            self._check_attribute_types(node)
            ctx = NodeContext(
                node=node,
                inputs=[self.values.get(n) if n else None for n in node.input],
                attrs={a.name: self._attr_value(a, node) for a in node.attribute},
                opset=self.model.opset,
                g=self.g,
                importer=self,
            )
            self.g.at_node(ctx.name)
            if ctx.opset < 7:
                self._legacy_broadcast(ctx)
            try:
                lower = lambda c: self._lower(c, lowerings)  # noqa: E731
                results = lower_zero_size(ctx, lower) if has_zero_size_input(ctx) else lower(ctx)
            except ZeroSizeError as err:
                results = empty_results(ctx, err)
            except LimitError as err:  # a size over the limits, found inside a lowering: name the file and node
                raise ctx.error(str(err)) from None
            except FrontendError as err:
                if not err.file:  # raised below the importer (a helper without the file): say where
                    err.file, err.node = self.file, ctx.name
                raise
            except (NnkilnError, RecursionError, MemoryError):
                raise
            except Exception as err:  # a lowering bug or an input it did not anticipate: name the node
                raise ctx.error(f"cannot be lowered (internal error: {type(err).__name__}: {err})") from err
            outs = [o for o in node.output]
            if len(results) < len([o for o in outs if o]):
                raise ctx.error(f"lowering produced {len(results)} outputs, the node has {len(outs)}")
            for name, res in zip(outs, results):
                if name:
                    self.values[name] = self._as_value(res)

    def _lower(self, ctx: NodeContext, lowerings: Mapping[str, Lowering]) -> Sequence[Any]:
        from nnkiln.frontends.onnx.lowerings import FUSIONS

        for pattern in FUSIONS.get(ctx.op_type, ()):
            results = pattern(ctx)
            if results is not None:
                return results
        return lowerings[ctx.op_type](ctx)

    # -- graph structure (for patterns that look beyond one node) ------------------------------------

    def consumers(self, name: str) -> list[Any]:
        """The nodes of the top-level graph that read value ``name`` (sub-graph reads count as the
        node holding the sub-graph)."""
        if self._consumers is None:
            self._consumers = {}
            for node in self.model.proto.graph.node:  # type: ignore[attr-defined]
                names = [n for n in node.input if n]
                for a in node.attribute:
                    for sub in list(a.graphs) + ([a.g] if a.HasField("g") else []):
                        names.extend(free_names(sub))
                for n in dict.fromkeys(names):
                    self._consumers.setdefault(n, []).append(node)
        return self._consumers.get(name, [])

    def dynamic_sources(self, name: str) -> list[str]:
        """The graph inputs (not bound by ``constants=``) that value ``name`` is computed from, in graph order:
        the producers are walked back from ``name``, stopping at values known at import."""
        if self._producers is None:
            self._producers = {}

            def visit(graph: Any) -> None:  # sub-graphs too: a branch's value may be what must be constant
                for node in graph.node:
                    self._producers.update((o, node) for o in node.output if o)  # type: ignore[union-attr]
                    for a in node.attribute:
                        for sub in list(a.graphs) + ([a.g] if a.HasField("g") else []):
                            visit(sub)

            visit(self.model.proto.graph)  # type: ignore[attr-defined]
        found: set[str] = set()
        seen: set[str] = set()
        stack = [name]
        while stack:
            n = stack.pop()
            if not n or n in seen:
                continue
            seen.add(n)
            v = self.values.get(n)
            if v is not None and v.const is not None:
                continue
            if n in self.graph_inputs:
                found.add(n)
            elif n in self._producers:
                node = self._producers[n]
                stack.extend(node.input)
                for a in node.attribute:  # outer values a sub-graph reads
                    for sub in list(a.graphs) + ([a.g] if a.HasField("g") else []):
                        stack.extend(free_names(sub))
        order = [vi.name for vi in self.model.proto.graph.input]  # type: ignore[attr-defined]
        return [n for n in order if n in found]

    def must_be_constant(self, ctx: NodeContext, value: str, what: str, why: str = "") -> FrontendError:
        """The error for a node input that must be known at import: it names the graph inputs the value comes
        from and how to bind them (``constants=`` / ``--const``). ``err.value_name`` is the first such input
        (callers such as a test harness can bind it and load again)."""
        sources = [value] if value in self.graph_inputs else self.dynamic_sources(value)
        if sources:
            via = "it is the graph input" if sources == [value] else "it is computed from graph input(s)"
            names = ", ".join(f"'{n}'" for n in sources)
            binds = ", ".join(f"'{n}': array" for n in sources)
            how = (f"; {via} {names}: bind {'its value' if len(sources) == 1 else 'their values'} with "
                   f"nnkiln.load(path, constants={{{binds}}}) or --const {sources[0]}=1,2,3 (or =values.npy)")
        else:
            how = ""
        err = ctx.error(f"{what} must be a constant (initializer or computable at import): {why or 'dynamic values are not supported'}{how}")
        err.value_name = sources[0] if sources else value  # type: ignore[attr-defined]
        err.input_names = sources  # type: ignore[attr-defined]
        return err

    @property
    def graph_outputs(self) -> set[str]:
        return {o.name for o in self.model.proto.graph.output}  # type: ignore[attr-defined]

    def _legacy_broadcast(self, ctx: NodeContext) -> None:
        """Opsets 1-6: ``broadcast=1`` aligns input B to input A at ``axis`` (default: the trailing dims),
        and PRelu's 1-D slope of size C applies along axis 1. Rewrite B so numpy broadcasting (opset 7+)
        gives the same result; the lowerings then see only modern semantics."""
        if len(ctx.inputs) < 2 or ctx.inputs[0] is None or ctx.inputs[1] is None:
            return
        a, b = ctx.inputs[0], ctx.inputs[1]
        if ctx.op_type == "PRelu":
            if b.rank == 1 and a.rank >= 2 and b.shape[0] == a.shape[1] and b.shape[0] > 1:
                axis = 1
            else:
                return
        elif ctx.op_type in _LEGACY_BROADCAST_OPS and ctx.attrs.get("broadcast", 0) == 1:
            ctx.used_attrs.add("broadcast")
            axis = int(ctx.attrs.get("axis", a.rank - b.rank))
            axis = axis + a.rank if axis < 0 else axis
        else:
            return
        shape = (1,) * axis + tuple(b.shape) + (1,) * (a.rank - axis - b.rank)
        if len(shape) != a.rank or any(bd not in (1, ad) for ad, bd in zip(a.shape, shape)):
            raise ctx.error(f"legacy broadcast of {list(b.shape)} to {list(a.shape)} at axis {axis} is invalid")
        if b.const is not None:
            ctx.inputs[1] = TensorValue.constant(np.asarray(b.const).reshape(shape))
        else:
            from nnkiln.frontends.common.broadcast import reshape

            ctx.inputs[1] = TensorValue.of(reshape(ctx.g, self.materialize(b), shape))

    # -- values -----------------------------------------------------------------------------------

    def _as_value(self, res: TensorValue | SSAValue | np.ndarray | None) -> TensorValue | None:
        if res is None or isinstance(res, TensorValue):
            return res
        if isinstance(res, SSAValue):
            return TensorValue.of(res)
        return TensorValue.constant(np.asarray(res))

    def materialize(self, v: TensorValue) -> SSAValue:
        """The IR value of ``v``, emitting a ``tosa.const`` for an import-time constant."""
        assert self.g is not None
        if v.ssa is not None:
            return v.ssa
        if v.wide is not None:
            raise self.g.error(f"a rank-{len(v.shape)} {v.kind.value} run-time value is not supported here (TOSA 0.30 "
                               "has no such tensor: it is computed in int32, which only graph outputs and quantization "
                               "parameters read)")
        assert v.const is not None
        arr = v.const
        if arr.size == 0:
            raise ZeroSizeError(f"a zero-size value {list(arr.shape)} is used as a tensor: zero-size tensors are not "
                                "supported in TOSA 0.30 (every dimension must be >= 1)", file=self.file,
                                node=self.g.node)
        if arr.dtype == np.int64 or arr.dtype == np.uint32 or arr.dtype == np.uint64:
            if arr.size and (arr.min() < -(1 << 31) or arr.max() >= (1 << 31)):
                raise self.g.error("an int64 constant does not fit the int32 that TOSA 0.30 computes in")
            arr = arr.astype(np.int32)
        elif arr.dtype == np.float64:
            arr = arr.astype(np.float32)
        elif arr.dtype in (np.uint8, np.uint16):
            v.ssa = self._unsigned_const(arr)
            return v.ssa
        ttype = TensorType(element_type(kind_for_dtype(arr.dtype)), arr.shape)
        v.ssa = self.g.const(arr, ttype)
        return v.ssa

    def _unsigned_const(self, arr: np.ndarray) -> SSAValue:
        """TOSA 0.30 has no unsigned CONST: the values minus 2^(bits-1) as a signed constant, then a
        RESCALE with that output zero point (exact; uint8/uint16 zero points are RESCALE's to give)."""
        from nnkiln.dialects.tosa.ops_type_conversion import RescaleOp

        assert self.g is not None
        signed, off = (np.int8, 128) if arr.dtype == np.uint8 else (np.int16, 32768)
        if arr.ndim == 0 or arr.ndim > 4:
            raise self.g.error(f"a rank-{arr.ndim} {arr.dtype} constant is not supported (TOSA 0.30 makes unsigned "
                               "tensors only with RESCALE, of rank 1 to 4)")
        s = self.g.const((arr.astype(np.int32) - off).astype(signed))
        return self.g.value(RescaleOp, [s], element_type(kind_for_dtype(arr.dtype)), input_zp=0, output_zp=off,
                            multiplier=[1 << 30], shift=[30], scale32=True, double_round=False, per_channel=False)

    # -- inputs, attributes -------------------------------------------------------------------------

    def _empty_input(self, vi: Any) -> np.ndarray | None:
        """The value of an input with a zero-size dimension (TOSA has none: spec §1.8.1), else None."""
        t = vi.type
        if not t.HasField("tensor_type") or not t.tensor_type.HasField("shape"):
            return None
        shape = self.shapes.get(vi.name)
        if shape is None:
            dims = t.tensor_type.shape.dim
            if not dims or not all(d.HasField("dim_value") for d in dims):
                return None
            shape = tuple(int(d.dim_value) for d in dims)
        if 0 not in shape or any(d < 0 for d in shape):  # a negative dimension is _input_type's to report
            return None
        dtype = numpy_dtype_of_onnx_type(t.tensor_type.elem_type)
        if dtype is None:
            return None
        return np.zeros(shape, dtype=dtype)

    def _input_type(self, vi: Any) -> TensorType:
        where = f"input '{vi.name}'"
        t = vi.type
        if not t.HasField("tensor_type"):
            raise FrontendError(f"{where} is not a tensor (sequences, maps and optionals are not supported)", file=self.file)
        tt = t.tensor_type
        kind = onnx_kind(tt.elem_type, where, self.file)
        if vi.name in self.shapes:
            shape = self.shapes[vi.name]
            if tt.HasField("shape") and len(tt.shape.dim) != len(shape):
                raise FrontendError(f"{where} has rank {len(tt.shape.dim)} but shapes= gives {list(shape)}", file=self.file)
            if tt.HasField("shape"):  # only symbolic dimensions may be bound: a static one is part of the model
                fixed = [(i, int(d.dim_value), int(v)) for i, (d, v) in enumerate(zip(tt.shape.dim, shape))
                         if d.HasField("dim_value") and d.dim_value > 0 and int(d.dim_value) != int(v)]
                if fixed:
                    what = ", ".join(f"dimension {i} is {m} (shapes= gives {v})" for i, m, v in fixed)
                    raise FrontendError(f"{where}: {what}; only symbolic dimensions can be bound", file=self.file)
        else:
            if not tt.HasField("shape"):
                raise FrontendError(f"{where} has no shape; bind it with shapes={{'{vi.name}': [...]}}", file=self.file)
            shape, symbolic = [], []
            for i, d in enumerate(tt.shape.dim):
                if d.HasField("dim_value") and d.dim_value > 0:
                    shape.append(int(d.dim_value))
                else:  # like TFLite's converter: an unbound dimension becomes 1, and the user is told
                    shape.append(1)
                    symbolic.append(f"{i} ('{d.dim_param}')" if d.dim_param else str(i))
            if symbolic:
                warn(f"{self.file}: {where} has symbolic dimension(s) {', '.join(symbolic)}: compiled as 1 "
                     f"(bind them with shapes={{'{vi.name}': [...]}} or --shape {vi.name}=...)")
        if any(d <= 0 for d in shape):
            raise FrontendError(f"{where}: dimensions must be positive, got {list(shape)}", file=self.file)
        try:
            check_tensor(shape, np.dtype(numpy_dtype_of_onnx_type(tt.elem_type) or np.float32).itemsize, where)
        except LimitError as err:  # the model file declares it: a frontend error (exit 1) naming the file
            raise FrontendError(str(err), file=self.file) from None
        return TensorType(element_type(kind), list(shape))

    def _check_attribute_types(self, node: Any) -> None:
        """Each attribute has the type the operator's schema (at the model's opset) declares."""
        import onnx

        try:
            schema = onnx.defs.get_schema(node.op_type, self.model.opset, node.domain or "")
        except Exception:  # no schema (unknown op or domain): the lowering decides
            return
        for a in node.attribute:
            spec = schema.attributes.get(a.name)
            if spec is None:
                raise FrontendError(f"{node.op_type} has no attribute '{a.name}' (opset {self.model.opset})",
                                    file=self.file, node=node.name or node.op_type)
            if a.type != spec.type and a.type != onnx.AttributeProto.UNDEFINED:
                got = onnx.AttributeProto.AttributeType.Name(a.type)
                want = onnx.AttributeProto.AttributeType.Name(spec.type)
                raise FrontendError(f"attribute '{a.name}' of {node.op_type} must be {want}, got {got}",
                                    file=self.file, node=node.name or node.op_type)

    def _attr_value(self, a: Any, node: Any) -> Any:
        import onnx

        T = onnx.AttributeProto
        try:
            if a.type == T.FLOAT:
                return float(a.f)
            if a.type == T.INT:
                return int(a.i)
            if a.type == T.STRING:
                return a.s.decode("utf-8", errors="replace")
            if a.type == T.FLOATS:
                return [float(x) for x in a.floats]
            if a.type == T.INTS:
                return [int(x) for x in a.ints]
            if a.type == T.STRINGS:
                return [s.decode("utf-8", errors="replace") for s in a.strings]
            if a.type == T.TENSOR:
                return tensor_to_numpy(a.t, self.file, node.name, self.model.inline)
            if a.type == T.GRAPH:
                return a.g
            if a.type == T.GRAPHS:
                return list(a.graphs)
        except FrontendError:
            raise
        raise FrontendError(f"attribute '{a.name}' has an unsupported or missing type ({a.type})", file=self.file, node=node.name or node.op_type)

    # -- support check ----------------------------------------------------------------------------

    def _find_unsupported(self, graph: Any, lowerings: Mapping[str, Lowering]) -> dict[str, list[Any]]:
        """Every node (sub-graphs included) without a lowering, by op type.

        An unsupported op inside a sub-graph is reported at once; a top-level one may still be folded
        at import if all its inputs turn out to be constants (``_fold_or_block``), so its report waits
        until the whole graph has been walked.
        """
        found: dict[str, list[Any]] = defaultdict(list)
        nested: dict[str, list[Any]] = defaultdict(list)

        def visit(g: Any, top: bool) -> None:
            for node in g.node:
                key = node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}"
                if node.domain not in ("", "ai.onnx") or node.op_type not in lowerings:
                    (found if top else nested)[key].append(node)
                for a in node.attribute:
                    if a.HasField("g"):
                        visit(a.g, False)
                    for sub in a.graphs:
                        visit(sub, False)

        visit(graph, True)
        static = self._static_constants(graph)
        foldable = all(all(n == "" or n in static for n in node.input) for nodes in found.values() for node in nodes)
        if nested or not foldable:
            for key, nodes in found.items():
                nested[key].extend(nodes)
            self._unsupported = nested
            raise self._unsupported_error()
        return found

    def _static_constants(self, graph: Any) -> set[str]:
        """Values certainly known at import: initializers, fixed inputs, and outputs of nodes that read
        only such values (Shape and Size only need static shapes)."""
        known = {t.name for t in graph.initializer} | set(self.constants)
        for node in graph.node:
            if node.op_type in ("Shape", "Size") or all(n == "" or n in known for n in node.input):
                if not node.op_type.startswith("Random") and node.op_type != "Bernoulli":
                    known.update(o for o in node.output if o)
        return known

    def _unsupported_error(self) -> FrontendError:
        rows = {k: [n for n in v if id(n) not in self._folded] for k, v in self._unsupported.items()}
        rows = {k: v for k, v in rows.items() if v}
        lines = []
        for key, nodes in sorted(rows.items()):
            names = [n.name or "<unnamed>" for n in nodes[:5]]
            more = ", ..." if len(nodes) > 5 else ""
            lines.append(f"  {key} x{len(nodes)} (nodes: {', '.join(names)}{more})")
        return FrontendError(
            f"{len(rows)} unsupported operator type(s) in the model:\n" + "\n".join(lines), file=self.file
        )

    def _fold_or_block(self, node: Any) -> None:
        """An op without a lowering (or fed by one): evaluate it at import with onnx's reference
        implementation if all its inputs are constants (ONNX semantics, like any constant folding);
        otherwise its outputs are unavailable and the model is reported as unsupported at the end."""
        outs = [o for o in node.output if o]
        inputs = [self.values.get(n) if n else None for n in node.input]
        constant = all(n == "" or (v is not None and v.const is not None) for n, v in zip(node.input, inputs))
        deterministic = not node.op_type.startswith("Random") and node.op_type not in ("Bernoulli",)
        if constant and deterministic and not any(n in self._unavailable for n in node.input):
            folded = evaluate_with_onnx_reference(node, self.model.proto, inputs)
            if folded is not None:
                for name, arr in zip(outs, folded):
                    self.values[name] = TensorValue.constant(arr)
                self._folded.add(id(node))
                return
        self._unavailable.update(outs)
        if any(node is n for nodes in self._unsupported.values() for n in nodes):
            self._blocked = True  # reported after the walk; a supported op fed by it is reported through it

def evaluate_with_onnx_reference(node: Any, model: Any, inputs: Sequence[TensorValue | None]) -> list[np.ndarray] | None:
    """Outputs of one node on constant inputs, by ``onnx.reference`` (None if it cannot evaluate it)."""
    import warnings

    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    try:
        feeds = {n: np.asarray(v.const) for n, v in zip(node.input, inputs) if n and v is not None}
        vis = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape) for n, a in feeds.items()]
        outs = [helper.make_tensor_value_info(o, 0, None) for o in node.output if o]
        graph = helper.make_graph([node], "fold", vis, outs)
        m = helper.make_model(graph, opset_imports=list(model.opset_import), ir_version=model.ir_version or 8)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results = ReferenceEvaluator(m).run(None, feeds)
    except Exception:  # the reference cannot evaluate it: leave it unsupported
        return None
    if not all(isinstance(r, np.ndarray) or np.isscalar(r) for r in results):
        return None
    return [np.asarray(r) for r in results]


def free_names(graph: Any) -> list[str]:
    """Names a (sub-)graph and its nested sub-graphs read but do not define, in first-use order
    (graph outputs that are outer values included)."""
    defined = {i.name for i in graph.input} | {t.name for t in graph.initializer}
    defined |= {t.values.name for t in graph.sparse_initializer}
    out: list[str] = []

    def use(name: str) -> None:
        if name and name not in defined and name not in out:
            out.append(name)

    for node in graph.node:
        for name in node.input:
            use(name)
        for a in node.attribute:
            for sub in list(a.graphs) + ([a.g] if a.HasField("g") else []):
                for name in free_names(sub):
                    use(name)
        defined.update(o for o in node.output if o)
    for o in graph.output:
        use(o.name)
    return out


def load_onnx(
    path: str,
    shapes: Mapping[str, Sequence[int]] | None = None,
    constants: Mapping[str, np.ndarray] | None = None,
) -> ModuleOp:
    """Import an ONNX file as a verified ``tosa``-level module.

    ``shapes`` binds symbolic input dimensions; ``constants`` fixes the values of inputs (such as
    shape or axes inputs that TOSA's static shapes need at import); those are then not function inputs.
    """
    from nnkiln.ir.verify import verify_module

    module = OnnxImporter(read_model(path), shapes, constants).run()
    verify_module(module)
    return module
