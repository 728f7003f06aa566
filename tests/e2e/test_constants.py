"""Graph inputs whose values TOSA's static shapes need at import, bound with ``nnkiln.load(..., constants=)`` or
``--const`` (issue 20, item 2): the error without them names the input and says how; with them, the results equal
onnxruntime's fed the same values (dtype and shape included), through the reference interpreter, compiled and on
the command line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as oh

import nnkiln
import nnkiln.reference
from nnkiln.errors import FrontendError, InputError

ort = pytest.importorskip("onnxruntime")
X = np.arange(12, dtype=np.float32).reshape(3, 4)


def _model(path: Path) -> None:
    """y = reduce_sum(reshape(x, shape), axes) with ``shape`` and ``axes`` graph inputs."""
    nodes = [oh.make_node("Reshape", ["x", "shape"], ["r"]), oh.make_node("ReduceSum", ["r", "axes"], ["y"], keepdims=1)]
    g = oh.make_graph(nodes, "g", [oh.make_tensor_value_info("x", TP.FLOAT, [3, 4]),
                                   oh.make_tensor_value_info("shape", TP.INT64, [2]),
                                   oh.make_tensor_value_info("axes", TP.INT64, [1])],
                      [oh.make_tensor_value_info("y", TP.FLOAT, None)])
    onnx.save(oh.make_model(g, opset_imports=[oh.make_opsetid("", 18)]), path)


def test_unbound_input_is_named_with_the_way_to_bind_it(tmp_path: Path) -> None:
    _model(tmp_path / "m.onnx")
    with pytest.raises(FrontendError, match=r"graph input 'shape': bind its value with nnkiln.load\(path, "
                                            r"constants=\{'shape': array\}\) or --const shape="):
        nnkiln.load(str(tmp_path / "m.onnx"))


@pytest.mark.parametrize("shape,axes", [([2, 6], [1]), ([6, -1], [0]), ([4, 3], [-1])])
def test_bound_inputs_match_onnxruntime(tmp_path: Path, shape: list[int], axes: list[int]) -> None:
    _model(tmp_path / "m.onnx")
    consts = {"shape": np.array(shape, np.int64), "axes": np.array(axes, np.int64)}
    want = ort.InferenceSession(str(tmp_path / "m.onnx")).run(None, {"x": X, **consts})[0]
    module = nnkiln.load(str(tmp_path / "m.onnx"), constants=consts)
    for got in (nnkiln.reference.run(module, {"x": X})["y"], nnkiln.compile(module, threads=1).run({"x": X})["y"]):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-6)
    exe = nnkiln.compile(module, threads=1)
    assert [io.name for io in exe.blob.inputs] == ["x"]  # bound inputs are no longer inputs


def test_command_line_const(tmp_path: Path) -> None:
    _model(tmp_path / "m.onnx")
    np.save(tmp_path / "x.npy", X)
    np.save(tmp_path / "axes.npy", np.array([1], np.int64))
    out = tmp_path / "y.npy"
    cmd = [sys.executable, "-m", "nnkiln.cli.main", "run", str(tmp_path / "m.onnx"), "--input", f"x={tmp_path}/x.npy",
           "--const", "shape=2,6", "--const", f"axes={tmp_path}/axes.npy", "-o", str(out)]
    subprocess.run(cmd, check=True, capture_output=True)
    want = ort.InferenceSession(str(tmp_path / "m.onnx")).run(
        None, {"x": X, "shape": np.array([2, 6]), "axes": np.array([1])})[0]
    np.testing.assert_allclose(np.load(out), want, rtol=1e-6)
    bad = subprocess.run([*cmd[:7], "--const", "shape=2,x"], capture_output=True, text=True)
    assert bad.returncode != 0 and "--const 'shape=2,x'" in bad.stderr and "Traceback" not in bad.stderr


def test_constants_for_a_model_that_is_not_onnx(tmp_path: Path) -> None:
    path = tmp_path / "m.mlir"
    path.write_text('func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n  func.return %x : tensor<2xf32>\n}\n')
    with pytest.raises(InputError, match="constants= binds inputs of ONNX models"):
        nnkiln.load(str(path), constants={"x": np.zeros(2, np.float32)})


def _derived_model(path: Path) -> None:
    """y = reshape(x, concat(n + 1, [-1])): the shape is computed from the graph input ``n``."""
    nodes = [oh.make_node("Add", ["n", "one"], ["n1"]), oh.make_node("Concat", ["n1", "minus1"], ["shape"], axis=0),
             oh.make_node("Reshape", ["x", "shape"], ["y"])]
    inits = [oh.make_tensor("one", TP.INT64, [1], [1]), oh.make_tensor("minus1", TP.INT64, [1], [-1])]
    g = oh.make_graph(nodes, "g", [oh.make_tensor_value_info("x", TP.FLOAT, [3, 4]),
                                   oh.make_tensor_value_info("n", TP.INT64, [1])],
                      [oh.make_tensor_value_info("y", TP.FLOAT, None)], inits)
    onnx.save(oh.make_model(g, opset_imports=[oh.make_opsetid("", 18)]), path)


def test_a_shape_computed_from_an_input_names_that_input(tmp_path: Path) -> None:
    path = tmp_path / "m.onnx"
    _derived_model(path)
    with pytest.raises(FrontendError, match=r"input 1 \(shape\) must be a constant.*computed from graph input\(s\) "
                                            r"'n': bind its value with nnkiln.load\(path, constants=\{'n': array\}\)") as e:
        nnkiln.load(str(path))
    assert e.value.value_name == "n"  # type: ignore[attr-defined]
    n = np.array([1], np.int64)
    want = ort.InferenceSession(str(path)).run(None, {"x": X, "n": n})[0]
    module = nnkiln.load(str(path), constants={"n": n})
    for got in (nnkiln.reference.run(module, {"x": X})["y"], nnkiln.compile(module, threads=1).run({"x": X})["y"]):
        assert got.dtype == want.dtype and got.shape == want.shape == (2, 6)
        np.testing.assert_array_equal(got, want)


def test_a_data_dependent_shape_names_the_input_that_decides_it(tmp_path: Path) -> None:
    """Compress's output shape depends on the condition's values: bound, the data stays a run-time input."""
    path = tmp_path / "m.onnx"
    g = oh.make_graph([oh.make_node("Compress", ["x", "keep"], ["y"], axis=1)], "g",
                      [oh.make_tensor_value_info("x", TP.FLOAT, [3, 4]), oh.make_tensor_value_info("keep", TP.BOOL, [4])],
                      [oh.make_tensor_value_info("y", TP.FLOAT, None)])
    onnx.save(oh.make_model(g, opset_imports=[oh.make_opsetid("", 18)]), path)
    with pytest.raises(FrontendError, match=r"input 1 \(condition\) must be a constant.*output shape depends on its "
                                            r"values.*graph input 'keep'"):
        nnkiln.load(str(path))
    keep = np.array([True, False, True, True])
    want = ort.InferenceSession(str(path)).run(None, {"x": X, "keep": keep})[0]
    module = nnkiln.load(str(path), constants={"keep": keep})
    got = nnkiln.compile(module, threads=1).run({"x": X})["y"]
    assert got.dtype == want.dtype and got.shape == want.shape == (3, 3)
    np.testing.assert_array_equal(got, want)
