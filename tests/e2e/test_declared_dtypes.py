"""Outputs come back with the element type the model declares (issue 20, item 1 for ONNX outputs): an ArgMax
declared int64 is int64, a Cast to double is float64, through the reference interpreter and compiled, saved and
loaded; compared with onnxruntime as onnx's own runner does (dtype, shape, values)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as oh

import nnkiln
import nnkiln.reference

ort = pytest.importorskip("onnxruntime")


def _model(path: Path) -> None:
    nodes = [oh.make_node("ArgMax", ["x"], ["idx"], axis=1, keepdims=0),
             oh.make_node("Relu", ["x"], ["r"]),
             oh.make_node("Cast", ["r"], ["d"], to=TP.DOUBLE),
             oh.make_node("Shape", ["x"], ["s"])]
    g = oh.make_graph(nodes, "g", [oh.make_tensor_value_info("x", TP.FLOAT, [3, 5])],
                      [oh.make_tensor_value_info("idx", TP.INT64, [3]), oh.make_tensor_value_info("r", TP.FLOAT, [3, 5]),
                       oh.make_tensor_value_info("d", TP.DOUBLE, [3, 5]), oh.make_tensor_value_info("s", TP.INT64, [2])])
    onnx.save(oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)]), path)


def _same(got: dict, want: list, names: list[str]) -> None:
    for name, w in zip(names, want):
        g = got[name]
        assert g.dtype == w.dtype and g.shape == w.shape, (name, g.dtype, w.dtype, g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=0)


def test_outputs_have_the_declared_dtypes(tmp_path: Path) -> None:
    path = tmp_path / "m.onnx"
    _model(path)
    x = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
    names = ["idx", "r", "d", "s"]
    want = ort.InferenceSession(str(path)).run(names, {"x": x})
    with pytest.warns(Warning, match="float64"):
        module = nnkiln.load(str(path))
    _same(nnkiln.reference.run(module, {"x": x}), want, names)
    exe = nnkiln.compile(module, threads=1)
    _same(exe.run({"x": x}), want, names)
    exe.save(tmp_path / "m.kiln")
    _same(nnkiln.Executable.load(tmp_path / "m.kiln").run({"x": x}), want, names)


def test_an_integer_that_does_not_fit_the_declared_type_is_an_error() -> None:
    from nnkiln.errors import NnkilnError
    from nnkiln.kinds import to_declared

    assert to_declared(np.array([1, 255], np.int32), "uint8", "y").dtype == np.uint8
    with pytest.raises(NnkilnError, match="outside the uint8"):
        to_declared(np.array([1, 256], np.int32), "uint8", "y")
