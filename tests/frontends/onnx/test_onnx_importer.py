"""The ONNX importer's contract: every unsupported op reported at once, constant folding of ops
without a lowering, shape binding, and hostile files ending in one clear error (CLI exit code 1)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import nnkiln
from nnkiln.errors import FrontendError


def _model(nodes, inputs, outputs, inits=(), opset=17) -> onnx.ModelProto:  # noqa: ANN001
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def _save(tmp_path: Path, m: onnx.ModelProto, name: str = "m.onnx") -> str:
    path = tmp_path / name
    path.write_bytes(m.SerializeToString())
    return str(path)


X = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
Y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)


def test_every_unsupported_op_is_listed_with_counts_and_names(tmp_path: Path):
    nodes = [
        helper.make_node("ImageDecoder", ["x"], ["a"], name="s1"),
        helper.make_node("ImageDecoder", ["a"], ["b"], name="s2"),
        helper.make_node("NonMaxSuppression", ["b", "b"], ["c"], name="ch"),
        helper.make_node("Relu", ["c"], ["y"], name="r"),
    ]
    with pytest.raises(FrontendError) as info:
        nnkiln.load(_save(tmp_path, _model(nodes, [X], [Y])))
    text = str(info.value)
    assert "2 unsupported operator type(s)" in text
    assert "ImageDecoder x2 (nodes: s1, s2)" in text and "NonMaxSuppression x1 (nodes: ch)" in text


def test_an_op_without_lowering_on_constants_is_folded_with_onnx_semantics(tmp_path: Path):
    m = np.array([[[2.0, 1.0], [0.5, 3.0]]], np.float32)  # Det has no lowering; on a constant it folds
    c = numpy_helper.from_array(m, "c")
    nodes = [helper.make_node("Det", ["c"], ["cc"], name="det"), helper.make_node("Add", ["x", "cc"], ["y"])]
    module = nnkiln.load(_save(tmp_path, _model(nodes, [X], [Y], [c])))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = nnkiln.reference.run(module, {"x": x})["y"]
    np.testing.assert_allclose(got, x + np.float32(5.5), rtol=1e-6)
    assert not any(op.name == "tosa.custom" for op in module.walk())


def test_symbolic_dimensions_default_to_one_with_a_warning(tmp_path: Path):
    xs = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])
    path = _save(tmp_path, _model([helper.make_node("Relu", ["x"], ["y"])], [xs], [Y]))
    with pytest.warns(nnkiln.NnkilnWarning, match=r"symbolic dimension\(s\) 0 \('batch'\): compiled as 1.*--shape x="):
        module = nnkiln.load(path)
    assert nnkiln.reference.run(module, {"x": np.ones((1, 3), np.float32)})["y"].shape == (1, 3)
    module = nnkiln.load(path, shapes={"x": [4, 3]})
    assert nnkiln.reference.run(module, {"x": np.ones((4, 3), np.float32)})["y"].shape == (4, 3)


def _hostile(tmp_path: Path) -> dict[str, bytes]:
    good = _model([helper.make_node("Relu", ["x"], ["y"])], [X], [Y]).SerializeToString()
    missing_init = _model([helper.make_node("Add", ["x", "w"], ["y"])], [X], [Y])
    cycle = _model([helper.make_node("Relu", ["b"], ["a"]), helper.make_node("Relu", ["a"], ["b"]),
                    helper.make_node("Relu", ["x"], ["y"])], [X], [Y])
    bad_attr = _model([helper.make_node("Transpose", ["x"], ["y"], perm=1.5)], [X], [Y])
    huge = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1 << 20, 1 << 20, 1 << 20])
    absurd = _model([helper.make_node("Relu", ["x"], ["y"])], [huge], [Y])
    lying = numpy_helper.from_array(np.zeros(4, np.float32), "w")
    lying.dims[:] = [1000]
    lying_model = _model([helper.make_node("Add", ["x", "w"], ["y"])], [X], [Y], [lying])
    return {
        "truncated.onnx": good[: len(good) // 2],
        "garbage.onnx": b"\x08\x07" + bytes(range(256)) * 4,
        "empty.onnx": b"",
        "missing_initializer.onnx": missing_init.SerializeToString(),
        "cycle.onnx": cycle.SerializeToString(),
        "bad_attribute_type.onnx": bad_attr.SerializeToString(),
        "absurd_shape.onnx": absurd.SerializeToString(),
        "lying_tensor.onnx": lying_model.SerializeToString(),
    }


@pytest.mark.parametrize("name", sorted(_hostile(Path("."))))
def test_hostile_files_give_one_clear_error_and_exit_code_1(tmp_path: Path, name: str):
    path = tmp_path / name
    path.write_bytes(_hostile(tmp_path)[name])
    r = subprocess.run([sys.executable, "-m", "nnkiln.cli.main", "import", str(path), "-o", str(tmp_path / "o.mlir")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert r.stderr.startswith("error: ") and name in r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr


def test_float64_runs_in_float32_with_one_warning(tmp_path: Path):
    xd = helper.make_tensor_value_info("x", TensorProto.DOUBLE, [2, 3])
    yd = helper.make_tensor_value_info("y", TensorProto.DOUBLE, [2, 3])
    nodes = [helper.make_node("Cast", ["x"], ["xf"], to=TensorProto.FLOAT),
             helper.make_node("Sqrt", ["xf"], ["r"]),
             helper.make_node("Cast", ["r"], ["y"], to=TensorProto.DOUBLE)]
    path = _save(tmp_path, _model(nodes, [xd], [yd]))
    with pytest.warns(nnkiln.NnkilnWarning, match="float64 tensors are computed in float32.*input 'x', output 'y', "
                      "Cast node") as record:
        module = nnkiln.load(path)
    assert len(record) == 1
    x = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 1e-3]])
    got = nnkiln.reference.run(module, {"x": x})["y"]
    assert got.dtype == np.float64  # the declared type at the boundary, computed in float32 inside
    np.testing.assert_allclose(got, np.sqrt(x), rtol=1e-6)  # float32 precision (1 ulp: SQRT is RSQRT·x)
