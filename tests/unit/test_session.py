"""``nnkiln.InferenceSession`` against ``onnxruntime.InferenceSession`` on the same files: the same input and output
names, order, shapes and ``.type`` strings; ``run(None, feeds)`` and ``run([name], feeds)`` give the same arrays
(dtype and shape included)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as oh

import nnkiln
from nnkiln.errors import InputError

ort = pytest.importorskip("onnxruntime")
RNG = np.random.default_rng(3)


@pytest.fixture
def model(tmp_path: Path) -> Path:
    """A float input, an int64 input, a zero-size input; float, int64 (ArgMax), bool and uint8 outputs."""
    nodes = [oh.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), oh.make_node("Relu", ["c"], ["r"]),
             oh.make_node("ArgMax", ["r"], ["a"], axis=1, keepdims=0), oh.make_node("Add", ["a", "k"], ["ak"]),
             oh.make_node("Greater", ["r", "zero"], ["g"]), oh.make_node("Cast", ["g"], ["u"], to=TP.UINT8),
             oh.make_node("Concat", ["x", "e"], ["xe"], axis=0), oh.make_node("ReduceSum", ["xe"], ["s"], keepdims=0)]
    inits = [oh.make_tensor("w", TP.FLOAT, [4, 3, 3, 3], RNG.standard_normal(108).astype(np.float32).tolist()),
             oh.make_tensor("zero", TP.FLOAT, [], [0.0])]
    g = oh.make_graph(nodes, "session_test", [oh.make_tensor_value_info("x", TP.FLOAT, [1, 3, 8, 8]),
                                              oh.make_tensor_value_info("k", TP.INT64, [1, 8, 8]),
                                              oh.make_tensor_value_info("e", TP.FLOAT, [0, 3, 8, 8])],
                      [oh.make_tensor_value_info("r", TP.FLOAT, [1, 4, 8, 8]),
                       oh.make_tensor_value_info("ak", TP.INT64, [1, 8, 8]),
                       oh.make_tensor_value_info("u", TP.UINT8, [1, 4, 8, 8]),
                       oh.make_tensor_value_info("s", TP.FLOAT, [])], inits)
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)], producer_name="nnkiln-test", model_version=3)
    m.metadata_props.add(key="author", value="tests")
    path = tmp_path / "m.onnx"
    onnx.save(m, path)
    return path


def _feeds() -> dict[str, np.ndarray]:
    return {"x": RNG.standard_normal((1, 3, 8, 8)).astype(np.float32), "k": RNG.integers(-5, 5, (1, 8, 8)),
            "e": np.zeros((0, 3, 8, 8), np.float32)}


def _args(args: list) -> list[tuple]:
    return [(a.name, list(a.shape), a.type) for a in args]


@pytest.mark.parametrize("source", ["path", "bytes"])
def test_the_session_answers_as_onnxruntime_does(model: Path, source: str) -> None:
    want = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    got = nnkiln.InferenceSession(str(model) if source == "path" else model.read_bytes(),
                                  providers=["CPUExecutionProvider"], threads=1)
    assert _args(got.get_inputs()) == _args(want.get_inputs())
    assert _args(got.get_outputs()) == _args(want.get_outputs())
    meta, ort_meta = got.get_modelmeta(), want.get_modelmeta()
    assert (meta.producer_name, meta.graph_name, meta.version, meta.custom_metadata_map) == (
        ort_meta.producer_name, ort_meta.graph_name, ort_meta.version, ort_meta.custom_metadata_map)
    feeds = _feeds()
    for names in (None, ["u", "r"], ["s"]):
        for g, w in zip(got.run(names, feeds), want.run(names, feeds)):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_bad_names_are_clear_errors(model: Path) -> None:
    sess = nnkiln.InferenceSession(str(model), threads=1)
    with pytest.raises(InputError, match=r"invalid output name\(s\) \['nope'\]"):
        sess.run(["nope"], _feeds())
    with pytest.raises(InputError, match=r"missing input\(s\) \['k'\]"):
        sess.run(None, {"x": _feeds()["x"], "e": _feeds()["e"]})
    with pytest.raises(InputError, match=r"invalid input name\(s\) \['y'\]"):
        sess.run(None, {**_feeds(), "y": np.zeros(1)})


def test_other_formats_describe_the_executable(tmp_path: Path) -> None:
    """A tosa-level module: names, shapes and types from the compiled program."""
    text = """func.func @main(%x: tensor<2x3xf32> {nnkiln.name = "x"}) -> (tensor<2x3xf32> {nnkiln.name = "y"}) {
      %y = tosa.abs %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
      func.return %y : tensor<2x3xf32>
    }"""
    sess = nnkiln.InferenceSession(nnkiln.parse(text), threads=1)
    assert _args(sess.get_inputs()) == [("x", [2, 3], "tensor(float)")]
    assert _args(sess.get_outputs()) == [("y", [2, 3], "tensor(float)")]
    x = -np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(sess.run(None, {"x": x})[0], np.abs(x))


def test_symbolic_batch_compiles_per_fed_shape(tmp_path: Path) -> None:
    """A model with a symbolic batch: onnxruntime takes any batch; so does the session (one executable per shape)."""
    nodes = [oh.make_node("MatMul", ["x", "w"], ["m"]), oh.make_node("Softmax", ["m"], ["y"], axis=-1)]
    g = oh.make_graph(nodes, "g", [oh.make_tensor_value_info("x", TP.FLOAT, ["batch", 5])],
                      [oh.make_tensor_value_info("y", TP.FLOAT, ["batch", 4])],
                      [oh.make_tensor("w", TP.FLOAT, [5, 4], RNG.standard_normal(20).astype(np.float32).tolist())])
    path = tmp_path / "dyn.onnx"
    onnx.save(oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)]), path)
    want = ort.InferenceSession(str(path))
    with pytest.warns(nnkiln.NnkilnWarning, match="symbolic"):
        got = nnkiln.InferenceSession(str(path), threads=1)
    assert _args(got.get_inputs()) == _args(want.get_inputs()) == [("x", ["batch", 5], "tensor(float)")]
    for batch in (3, 1, 7, 3):
        x = RNG.standard_normal((batch, 5)).astype(np.float32)
        g_, w = got.run(None, {"x": x})[0], want.run(None, {"x": x})[0]
        assert g_.shape == w.shape == (batch, 4)
        np.testing.assert_allclose(g_, w, rtol=1e-5, atol=1e-6)
