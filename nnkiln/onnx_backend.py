"""An ``onnx.backend.base.Backend`` over nnkiln: import with the ONNX frontend, run with the reference
interpreter (or compiled). Used by ONNX's backend test suite (``onnx.backend.test``) and by our own suite runner.
It sits above the frontends and the compiler (it uses both), so it is a top-level module, not part of a frontend.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def _bind_shapes(model: Any, inputs: Sequence[np.ndarray]) -> dict[str, list[int]]:
    init = {t.name for t in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in init]
    return {n: list(np.shape(x)) for n, x in zip(names, inputs)}


def import_model_proto(model: Any, inputs: Sequence[np.ndarray] | None = None,
                       constants: dict[str, np.ndarray] | None = None):  # noqa: ANN201
    """Import an in-memory ModelProto (shapes bound from ``inputs`` if given; ``constants`` fix input values)."""
    from nnkiln.frontends.onnx.contrib_microsoft import expand_microsoft_quant_ops
    from nnkiln.frontends.onnx.importer import OnnxImporter
    from nnkiln.frontends.onnx.reader import OnnxModel, check_graph_structure
    from nnkiln.ir.verify import verify_module

    opset = max((int(i.version) for i in model.opset_import if i.domain in ("", "ai.onnx")), default=1)
    check_graph_structure(model.graph, "<model>")
    model = expand_microsoft_quant_ops(model, "<model>", opset)
    shapes = _bind_shapes(model, inputs) if inputs is not None else None
    if shapes and constants:
        shapes = {k: v for k, v in shapes.items() if k not in constants}
    module = OnnxImporter(OnnxModel(model, "<model>", opset), shapes, constants).run()
    verify_module(module)
    return module


def run_model(model: Any, inputs: Sequence[np.ndarray], specialize: bool = True,
              compiled: bool = False) -> list[np.ndarray]:
    """Import and run (with the reference interpreter, or ``compiled`` with ``nnkiln.compile`` for the cpu
    target); outputs in the graph's output order.

    With ``specialize``, a model that cannot be imported because a graph input must be known at import
    (a shape, axes or scale input: TOSA 0.30 shapes and quantization parameters are static) is
    imported again with that input fixed to the given value, like a JIT that specialises on it.
    """
    from nnkiln.ir.errors import FrontendError
    from nnkiln.reference import entry_function, input_names, run

    init = {t.name for t in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in init]
    given = {n: np.asarray(x) for n, x in zip(names, inputs)}
    fixed: dict[str, np.ndarray] = {}
    while True:
        try:
            module = import_model_proto(model, inputs, fixed or None)
            break
        except FrontendError as err:
            name = getattr(err, "value_name", None)
            if not specialize or name not in given or name in fixed:
                raise
            fixed[name] = given[name]  # a graph input that must be known at import: fix its value
    wanted = set(input_names(entry_function(module)))  # zero-size inputs were folded at import
    feeds = {n: np.asarray(x) for n, x in zip(names, inputs) if n in wanted}
    if compiled:
        from nnkiln.compiler import compile as compile_module

        outs = compile_module(module).run(feeds)
    else:
        outs = run(module, feeds)
    return [outs[o.name] for o in model.graph.output]


try:
    import onnx.backend.base as _base

    class NnkilnRep(_base.BackendRep):
        def __init__(self, model: Any):
            self.model = model

        def run(self, inputs: Any, **kwargs: Any) -> tuple[np.ndarray, ...]:
            if isinstance(inputs, np.ndarray):
                inputs = [inputs]
            elif isinstance(inputs, dict):
                inputs = list(inputs.values())
            return tuple(run_model(self.model, list(inputs)))

    class NnkilnBackend(_base.Backend):
        @classmethod
        def prepare(cls, model: Any, device: str = "CPU", **kwargs: Any) -> NnkilnRep:
            return NnkilnRep(model)

        @classmethod
        def supports_device(cls, device: str) -> bool:
            return device == "CPU"

except ImportError:  # onnx without the backend module
    pass

