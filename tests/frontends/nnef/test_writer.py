"""write_nnef round trips: NNEF → ours → NNEF → ours and ONNX → ours → NNEF → ours give identical results."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))

from nnef_op_cases import CASES  # noqa: E402
from test_lowering import KHRONOS_PY, make_container, random_inputs, run_ours  # noqa: E402

from nnkiln.frontends.nnef import load_nnef  # noqa: E402
from nnkiln.frontends.nnef.writer import translate_main, write_nnef  # noqa: E402

NOT_EXPORTED: set[str] = set()


def _same(a: list[np.ndarray], b: list[np.ndarray]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("name", sorted(set(CASES) - NOT_EXPORTED))
def test_nnef_round_trip(name: str, tmp_path) -> None:  # noqa: ANN001
    src, dst = str(tmp_path / "a"), str(tmp_path / "b")
    make_container(src, CASES[name])
    inputs = random_inputs(src)
    write_nnef(load_nnef(src), dst)
    _same(run_ours(src, inputs), run_ours(dst, inputs))
    if os.path.exists(KHRONOS_PY):  # the written document is valid NNEF for the Khronos parser too
        import subprocess

        proc = subprocess.run([KHRONOS_PY, "-c", "import nnef, sys; nnef.load_graph(sys.argv[1])", dst],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]


def _onnx_models():  # noqa: ANN202
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "b")
    fc = numpy_helper.from_array(rng.standard_normal((16, 5)).astype(np.float32), "fc")
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("MatMul", ["f", "fc"], ["m"]),
             helper.make_node("Softmax", ["m"], ["y"], axis=1)]
    g1 = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                           [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])], [w, b, fc])
    dw = numpy_helper.from_array(rng.standard_normal((3, 1, 3, 3)).astype(np.float32), "dw")
    nodes2 = [helper.make_node("Conv", ["x", "dw"], ["d"], group=3, pads=[1, 1, 1, 1]),
              helper.make_node("AveragePool", ["d"], ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
              helper.make_node("Sigmoid", ["a"], ["s"]),
              helper.make_node("Mul", ["s", "x"], ["y"])]
    g2 = helper.make_graph(nodes2, "dw", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                           [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 8, 8])], [dw])
    out = []
    for g in (g1, g2):
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 10
        out.append(m)
    return out


@pytest.mark.parametrize("index", [0, 1])
def test_onnx_to_nnef_round_trip(index: int, tmp_path) -> None:  # noqa: ANN001
    pytest.importorskip("onnx")
    import onnx

    import nnkiln.reference as ref
    from nnkiln.frontends.onnx import load_onnx

    model = _onnx_models()[index]
    path = str(tmp_path / "m.onnx")
    onnx.save(model, path)
    x = np.random.default_rng(5).standard_normal((1, 3, 8, 8)).astype(np.float32)
    a = list(ref.run(load_onnx(path), {"x": x}).values())
    assert translate_main(["--to", "nnef", path, "-o", str(tmp_path / "n")]) == 0
    b = run_ours(str(tmp_path / "n"), [x])
    _same(a, b)
    try:
        import onnxruntime as ort
    except ImportError:
        return
    want = ort.InferenceSession(path).run(None, {"x": x})[0]
    np.testing.assert_allclose(b[0], want, rtol=1e-4, atol=1e-6)


def test_integer_add_of_a_graph_input_is_refused_with_a_frontend_error(tmp_path) -> None:  # noqa: ANN001
    """The int8 add-chain matcher looked at the producer of every operand, and a graph input has none."""
    from nnkiln import FrontendError
    from nnkiln.ir.text import parse_module

    module = parse_module("""
func.func @main(%a: tensor<4xf32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %q = tosa.cast %a : (tensor<4xf32>) -> tensor<4xi8>
  %r = tosa.rescale %q {input_zp = 0 : i64, output_zp = 0 : i64, multiplier = array<i64: 16384>, shift = array<i64: 14>, scale32 = false, double_round = false, per_channel = false} : (tensor<4xi8>) -> tensor<4xi32>
  %c = tosa.add %r, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return %c : tensor<4xi32>
}""")
    with pytest.raises(FrontendError, match="cannot export"):
        write_nnef(module, str(tmp_path / "out"))
