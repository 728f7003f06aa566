"""``nnkiln.InferenceSession``: onnxruntime's session interface over an nnkiln executable.

What a user's onnxruntime code touches works unchanged: ``get_inputs()`` / ``get_outputs()`` (``NodeArg`` objects with
``.name``, ``.shape`` and ``.type`` spelled as onnxruntime spells them: ``tensor(float)``, ``tensor(int64)``, a
symbolic dimension as its name), ``run(output_names or None, input_feed) -> list`` in the order asked,
``get_modelmeta()``, ``get_providers()``. Any format ``nnkiln.load`` takes (or a module, or ONNX bytes) is compiled
once, at construction, for ``target``.

Inputs and outputs are the model's own: for an ONNX model, every graph input that is not an initializer (a zero-size
one included: the executable accepts and ignores it) except those bound with ``constants=``, with the element type
and shape the model declares; outputs come back with the declared element type (``nnkiln.kinds.to_declared``).
``providers``, ``provider_options`` and ``sess_options`` are accepted for compatibility; of the options only
``intra_op_num_threads`` (> 0) is used, as ``threads``.

Symbolic dimensions (an ONNX file's ``batch``): TOSA 0.30 shapes are static, so the session compiles one executable
per set of input shapes it is fed (bound with ``shapes=`` at import), keeping the last ``MAX_COMPILED`` of them; the
first is compiled at construction with ``shapes`` (an unbound dimension as 1, with a warning).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nnkiln.errors import InputError

_ORT_TYPES = {"float32": "float", "float64": "double", "float16": "float16", "bfloat16": "bfloat16", "int8": "int8",
              "int16": "int16", "int32": "int32", "int64": "int64", "uint8": "uint8", "uint16": "uint16",
              "uint32": "uint32", "uint64": "uint64", "bool": "bool"}
"""numpy element type name → onnxruntime's spelling inside ``tensor(...)``."""


@dataclass(frozen=True)
class NodeArg:
    """An input or output as onnxruntime describes it: name, shape (ints, or names of symbolic dimensions, or None),
    type (``tensor(float)``)."""

    name: str
    shape: list[int | str | None]
    type: str


@dataclass(frozen=True)
class ModelMetadata:
    """onnxruntime's ``ModelMetadata`` fields (empty for formats that carry none)."""

    producer_name: str = ""
    graph_name: str = ""
    domain: str = ""
    description: str = ""
    graph_description: str = ""
    version: int = 0
    custom_metadata_map: dict[str, str] = field(default_factory=dict)


def _ort_type(dtype: str) -> str:
    return f"tensor({_ORT_TYPES.get(dtype, dtype)})"


def numpy_dtype_of_ort_type(ort_type: str) -> np.dtype | None:
    """The numpy dtype onnxruntime means by ``tensor(float)`` etc. (None if unknown or not a tensor)."""
    for name, spelled in _ORT_TYPES.items():
        if ort_type == f"tensor({spelled})":
            return np.dtype(name) if name != "bfloat16" else None
    return None


def _onnx_args(values: Sequence[Any], skip: set[str]) -> list[NodeArg]:
    """NodeArgs of ONNX ValueInfoProtos, as onnxruntime reports them."""
    from onnx import helper

    out = []
    for vi in values:
        if vi.name in skip:
            continue
        tt = vi.type.tensor_type
        try:
            dtype = np.dtype(helper.tensor_dtype_to_np_dtype(tt.elem_type)).name
        except (KeyError, TypeError, ValueError):
            dtype = "undefined"
        shape: list[int | str | None] = []
        if tt.HasField("shape"):
            for d in tt.shape.dim:
                shape.append(int(d.dim_value) if d.HasField("dim_value") else (d.dim_param or None))
        out.append(NodeArg(vi.name, shape, _ort_type(dtype)))
    return out


MAX_COMPILED = 8
"""How many executables (one per set of fed shapes of a model with symbolic dimensions) a session keeps."""


class InferenceSession:
    """Compile a model and run it with onnxruntime's ``InferenceSession`` interface (see the module docstring)."""

    def __init__(self, path_or_module: Any, sess_options: Any = None, providers: Sequence[Any] | None = None,
                 provider_options: Sequence[Any] | None = None, *, threads: int | None = None, target: str = "cpu",
                 shapes: Mapping[str, Sequence[int]] | None = None, constants: Mapping[str, Any] | None = None):
        from nnkiln.compiler import compile as compile_module
        from nnkiln.frontends import load

        if isinstance(sess_options, (list, tuple)) and providers is None:  # InferenceSession(path, providers)
            sess_options, providers = None, sess_options
        threads = threads or getattr(sess_options, "intra_op_num_threads", 0) or None
        self._providers = [f"nnkiln:{target}"]
        self._onnx = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        constants = dict(constants or {})
        if isinstance(path_or_module, (bytes, bytearray)):  # a serialized ONNX model, as onnxruntime accepts
            self._tmp = tempfile.TemporaryDirectory(prefix="nnkiln-session-")
            path = os.path.join(self._tmp.name, "model.onnx")
            with open(path, "wb") as f:
                f.write(path_or_module)
            path_or_module = path
        self._path: str | None = None
        self._compile_args = {"target": target, "threads": threads}
        self._constants = constants
        if isinstance(path_or_module, (str, os.PathLike)):
            self._path = os.fspath(path_or_module)
            module = load(self._path, shapes, constants or None)
            if self._path.endswith(".onnx") or self._tmp is not None:
                import onnx

                self._onnx = onnx.load(self._path, load_external_data=False)
        else:
            module = path_or_module
        self._exe = compile_module(module, **self._compile_args)
        self._compiled: dict[tuple, Any] = {}
        if self._onnx is not None:
            graph = self._onnx.graph
            skip = {t.name for t in graph.initializer} | set(constants)
            self._inputs = _onnx_args(graph.input, skip)
            self._outputs = _onnx_args(graph.output, set())
            self._symbolic = [i.name for i in self._inputs if any(not isinstance(d, int) for d in i.shape)]
            fixed = {io.name: tuple(int(d) for d in io.shape) for io in self._exe.blob.inputs}
            self._compiled[tuple(fixed.get(n, ()) for n in self._symbolic)] = self._exe
        else:
            self._inputs = [NodeArg(n, list(s), _ort_type(d.name)) for n, s, d in self._exe.inputs]
            self._outputs = [NodeArg(n, list(s), _ort_type(d.name)) for n, s, d in self._exe.outputs]
            self._symbolic = []

    # -- onnxruntime's interface ------------------------------------------------------------------------

    def get_inputs(self) -> list[NodeArg]:
        return list(self._inputs)

    def get_outputs(self) -> list[NodeArg]:
        return list(self._outputs)

    def get_providers(self) -> list[str]:
        return list(self._providers)

    def get_modelmeta(self) -> ModelMetadata:
        m = self._onnx
        if m is None:
            return ModelMetadata()
        return ModelMetadata(m.producer_name, m.graph.name, m.domain, m.doc_string, m.graph.doc_string,
                             int(m.model_version), {p.key: p.value for p in m.metadata_props})

    def run(self, output_names: Sequence[str] | None, input_feed: Mapping[str, Any],
            run_options: Any = None) -> list[np.ndarray]:
        """The outputs named (all, in the model's order, when None) for ``input_feed`` (input name → array)."""
        known = [o.name for o in self._outputs]
        wanted = list(known if not output_names else output_names)
        unknown = [n for n in wanted if n not in known]
        if unknown:
            raise InputError(f"invalid output name(s) {unknown}; the model's outputs: {known}")
        expected = {i.name for i in self._inputs}
        extra = sorted(set(input_feed) - expected, key=str)
        if extra:
            raise InputError(f"invalid input name(s) {extra}; the model's inputs: {sorted(expected)}")
        missing = sorted(expected - set(input_feed))
        if missing:
            raise InputError(f"missing input(s) {missing}")
        feed = {k: np.asarray(v) for k, v in input_feed.items()}
        outs = self._executable_for(feed).run(feed)
        return [outs[n] for n in wanted]

    def _executable_for(self, feed: Mapping[str, np.ndarray]) -> Any:
        """The executable compiled for the fed shapes of the symbolic inputs (compiled now if new)."""
        if not self._symbolic:
            return self._exe
        key = tuple(tuple(feed[n].shape) for n in self._symbolic)
        exe = self._compiled.pop(key, None)
        if exe is None:
            from nnkiln.compiler import compile as compile_module
            from nnkiln.frontends import load

            assert self._path is not None
            module = load(self._path, {n: list(feed[n].shape) for n in self._symbolic}, self._constants or None)
            exe = compile_module(module, **self._compile_args)
            if len(self._compiled) >= MAX_COMPILED:
                self._compiled.pop(next(iter(self._compiled)))
        self._compiled[key] = exe  # most recently used last
        return exe

    @property
    def executable(self) -> Any:
        """The compiled ``nnkiln.Executable`` behind the session."""
        return self._exe


__all__ = ["InferenceSession", "ModelMetadata", "NodeArg"]
