"""TFLite model (``reader.TfliteModel``) → ``tosa``-level module.

The importer lowers the main subgraph (signature ``serving_default`` if present, else subgraph 0) operator by
operator in the file's order (TFLite stores operators topologically sorted). Each tensor index maps to an IR
value; constant tensors (those with buffer data) stay numpy arrays until an op needs them as a tensor, so
lowerings can read weights, shapes, axes and paddings at import. Each operator is lowered by the function
registered under its builtin name in ``nnkiln.frontends.tflite.lowerings`` (one module per op family).
Control-flow operators (WHILE, IF) lower the subgraphs they reference into their regions
(``lower_subgraph``: a fresh tensor table per subgraph, the region's arguments bound to its inputs; a subgraph
that references itself, directly or not, is an error).

Before anything is built, every operator of every subgraph is checked against that registry: unsupported
operators are reported in one ``FrontendError`` with each name, its count and its operator indices.

Layout: TFLite is NHWC like TOSA, so no transposes are inserted. Types: int8/int16/int32/bool/float tensors
keep their types at the graph boundary (int8 inputs and outputs stay int8); int64 constants are narrowed to
int32 (TOSA 0.30 has no 64-bit integers), with an error if a value does not fit. Graph input and output names
are the tensor names TFLite reports (``get_input_details()[i]["name"]``), in its order.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind, element_type
from nnkiln.errors import FrontendError
from nnkiln.frontends.common.graph import GraphBuilder
from nnkiln.frontends.tflite.reader import Operator, Quantization, Subgraph, Tensor, TfliteModel

_KINDS: dict[Any, Kind] = {
    np.float32: Kind.F32, np.float16: Kind.F16, np.int32: Kind.I32, np.int8: Kind.I8, np.int16: Kind.I16,
    np.bool_: Kind.BOOL, np.int64: Kind.I32, np.uint8: Kind.U8,
}


def kind_of_tensor(t: Tensor, file: str) -> Kind:
    """The TOSA kind of a TFLite tensor's run-time values (an error naming it if there is none)."""
    dt = t.dtype
    if dt is None or dt not in _KINDS:
        raise FrontendError(f"tensor {t.index} '{t.name}': element type {t.type_name} has no TOSA 0.30 "
                            "equivalent", file=file)
    return _KINDS[dt]


def tensor_type(t: Tensor, file: str) -> TensorType:
    return TensorType(element_type(kind_of_tensor(t, file)), list(t.shape))


@dataclass
class OpContext:
    """What a lowering sees of one TFLite operator."""

    op: Operator
    sg: Subgraph
    g: GraphBuilder
    importer: TfliteImporter

    @property
    def options(self) -> dict[str, Any]:
        return self.op.options

    def opt(self, name: str, default: Any = None) -> Any:
        return self.op.options.get(name, default)

    def error(self, message: str) -> FrontendError:
        return self.g.error(f"{self.op.name}: {message}")

    def has_input(self, i: int) -> bool:
        return i < len(self.op.inputs) and self.op.inputs[i] >= 0

    def tin(self, i: int) -> Tensor:
        """The tensor record of input ``i``."""
        if not self.has_input(i):
            raise self.error(f"input {i} is required")
        return self.sg.tensors[self.op.inputs[i]]

    def tout(self, i: int = 0) -> Tensor:
        return self.sg.tensors[self.op.outputs[i]]

    def is_const(self, i: int) -> bool:
        return self.has_input(i) and self.op.inputs[i] not in self.importer.values and self.tin(i).data is not None

    def const(self, i: int, what: str = "") -> np.ndarray:
        """Input ``i`` as an import-time constant (an error if it is computed at run time)."""
        t = self.tin(i)
        if t.data is None or self.op.inputs[i] in self.importer.values:
            raise self.error(f"input {i}{f' ({what})' if what else ''} must be a constant tensor")
        return t.data

    def value(self, i: int) -> SSAValue:
        """Input ``i`` as an IR value (a constant becomes ``tosa.const``)."""
        return self.importer.value_of(self.op.inputs[i] if self.has_input(i) else -1, self)

    def quant(self, t: Tensor) -> Quantization:
        if t.quant is None:
            raise self.error(f"tensor '{t.name}' is {t.type_name} but has no quantization parameters")
        return t.quant

    def is_quantized(self) -> bool:
        """Whether the op computes on int8/int16 quantized activations (its first input's type)."""
        return self.tin(0).dtype in (np.int8, np.int16, np.uint8)

    def out_type(self, i: int = 0) -> Any:
        return element_type(kind_of_tensor(self.tout(i), self.g.file))


class TfliteImporter:
    """Lowers one subgraph of a ``TfliteModel`` (see the module docstring)."""

    def __init__(self, model: TfliteModel, subgraph: int = 0):
        self.model = model
        self.file = model.path
        self.sg = model.subgraphs[subgraph]
        self.values: dict[int, SSAValue] = {}
        self.g: GraphBuilder | None = None
        self.active: frozenset[int] = frozenset({subgraph})  # subgraphs being lowered (no recursion)

    def value_of(self, index: int, ctx: OpContext | None = None) -> SSAValue:
        if index in self.values:
            return self.values[index]
        t = self.sg.tensors[index] if 0 <= index < len(self.sg.tensors) else None
        if t is None or t.data is None:
            where = f"tensor {index}" + (f" '{t.name}'" if t else "")
            raise (ctx.error if ctx else self._error)(f"{where} is used before it is computed")
        assert self.g is not None
        data = t.data
        if data.dtype == np.int64:
            if data.size and (data.min() < -(2**31) or data.max() >= 2**31):
                raise (ctx.error if ctx else self._error)(f"int64 constant '{t.name}' does not fit int32")
            data = data.astype(np.int32)
        kind = kind_of_tensor(t, self.file)
        v = self.g.const(np.ascontiguousarray(data), TensorType(element_type(kind), list(data.shape)))
        self.values[index] = v
        return v

    def _error(self, message: str) -> FrontendError:
        return FrontendError(message, file=self.file)

    def check_supported(self) -> None:
        from nnkiln.frontends.tflite.lowerings import LOWERINGS

        rows: dict[str, list[str]] = defaultdict(list)
        for si, sg in enumerate(self.model.subgraphs):
            for op in sg.operators:
                if op.name not in LOWERINGS:
                    rows[op.name].append(str(op.index) if si == 0 else f"{si}:{op.index}")
        if rows:
            lines = [f"  {name}: {len(idx)} time(s), operator(s) {', '.join(idx)}" for name, idx in sorted(rows.items())]
            raise FrontendError(f"{len(rows)} unsupported TFLite operator type(s) in the model:\n" + "\n".join(lines),
                                file=self.file)

    def _lower_operators(self) -> None:
        from nnkiln.frontends.tflite.lowerings import LOWERINGS

        sg = self.sg
        assert self.g is not None
        for op in sg.operators:
            self.g.at_node(f"{op.name}#{op.index}" + (f" ({sg.tensors[op.outputs[0]].name})" if op.outputs else ""))
            ctx = OpContext(op, sg, self.g, self)
            try:
                results = LOWERINGS[op.name](ctx)
            except (ValueError, ZeroDivisionError, OverflowError, IndexError, KeyError) as err:
                # a malformed operator (zero stride, zero scale, missing input ...) in a corrupt or hostile file
                raise ctx.error(f"invalid operator ({type(err).__name__}: {err})") from None
            if len(results) != len(op.outputs):
                raise ctx.error(f"lowering produced {len(results)} results for {len(op.outputs)} outputs")
            for idx, r in zip(op.outputs, results):
                expect = tuple(sg.tensors[idx].shape)
                got = tuple(int(d) for d in r.type.get_shape())  # type: ignore[attr-defined]
                if got != expect:
                    raise ctx.error(f"output '{sg.tensors[idx].name}' has shape {list(got)}, the model says "
                                    f"{list(expect)}")
                self.values[idx] = r

    def lower_subgraph(self, index: int, args: list[SSAValue], ctx: OpContext) -> list[SSAValue]:
        """Lower subgraph ``index`` (WHILE/IF bodies) into ``self.g``'s current block, its inputs bound to
        ``args``; its output values. TFLite subgraphs see only their inputs, so nothing is captured."""
        if not 0 <= index < len(self.model.subgraphs):
            raise ctx.error(f"subgraph {index} does not exist")
        if index in self.active:
            raise ctx.error(f"subgraph {index} calls itself (recursion is not supported)")
        sub = TfliteImporter(self.model, index)
        sub.g = self.g
        sub.active = self.active | {index}
        sg = sub.sg
        if len(sg.inputs) != len(args):
            raise ctx.error(f"subgraph {index} has {len(sg.inputs)} inputs, the operator passes {len(args)}")
        for i, a in zip(sg.inputs, args):
            want = tensor_type(sg.tensors[i], self.file)
            if want != a.type:
                raise ctx.error(f"subgraph {index} input '{sg.tensors[i].name}' is {want}, the operator passes "
                                f"{a.type}")
            sub.values[i] = a
        sub._lower_operators()
        return [sub.value_of(i) for i in sg.outputs]

    def run(self) -> ModuleOp:
        self.check_supported()
        sg = self.sg
        inputs = [(sg.tensors[i].name, tensor_type(sg.tensors[i], self.file)) for i in sg.inputs]
        self.g = GraphBuilder(self.file, inputs)
        for i, arg in zip(sg.inputs, self.g.block.args):
            self.values[i] = arg
        self._lower_operators()
        outputs = [(sg.tensors[i].name, self.value_of(i)) for i in sg.outputs]
        # int64 outputs (ARG_MAX's default, shapes) are computed in int32 and declared int64 at the boundary
        declared = ["int64" if sg.tensors[i].dtype == np.int64 else None for i in sg.outputs]
        return self.g.finish(outputs, declared=declared)


def import_model(model: TfliteModel) -> ModuleOp:
    """The ``tosa``-level module of the model's main subgraph (``serving_default`` signature if any, else 0)."""
    index = 0
    for s in model.signatures:
        if s.key == "serving_default":
            index = s.subgraph
    return TfliteImporter(model, index).run()


def load_tflite(path: str) -> ModuleOp:
    """``nnkiln.load``'s TFLite path: read, import and verify (errors name the file)."""
    from nnkiln.frontends import verify_naming_file
    from nnkiln.frontends.tflite.reader import read_model
    from nnkiln.ir.verify import verify_module

    module = import_model(read_model(path))
    verify_naming_file(module, path, verify_module)
    return module
