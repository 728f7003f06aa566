"""ONNX models whose nnef-tools conversion uses the NNEF 1.0.5 additions (pad with border modes, tile from
Tile/Expand, gather with a negative index in an integer ``.dat``, slice with strides and INT_MAX ends, cast,
sin) import and run like the ONNX model under onnxruntime."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[3]
PY = ROOT / ".venv-nnef" / "bin" / "python"


def _has_nnef_tools() -> bool:
    return PY.exists() and subprocess.run([str(PY), "-c", "import nnef_tools.convert"], capture_output=True).returncode == 0


pytestmark = [pytest.mark.slow, pytest.mark.skipif(not _has_nnef_tools(), reason="no nnef-tools in .venv-nnef")]


def _model(path: Path, with_sin: bool) -> None:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    def i64(name: str, v: list[int]):  # noqa: ANN202
        return numpy_helper.from_array(np.array(v, np.int64), name)

    nodes = [
        helper.make_node("Pad", ["x", "pads"], ["p"], mode="reflect"),
        helper.make_node("Tile", ["p", "reps"], ["t"]),
        helper.make_node("Gather", ["t", "gi"], ["g"], axis=3),
        helper.make_node("Slice", ["g", "st", "en", "ax", "sp"], ["s"]),
        helper.make_node("Sin" if with_sin else "Neg", ["s"], ["sn"]),
        helper.make_node("Cast", ["s"], ["ci"], to=TensorProto.INT32),
        helper.make_node("Cast", ["ci"], ["cf"], to=TensorProto.FLOAT),
        helper.make_node("Add", ["sn", "cf"], ["a"]),
        helper.make_node("Expand", ["a", "es"], ["e"]),
        helper.make_node("Pad", ["e", "pads2", "pv"], ["y"], mode="edge"),
    ]
    init = [i64("pads", [0, 0, 1, 2, 0, 0, 2, 1]), i64("reps", [1, 2, 1, 1]), i64("gi", [0, 3, -1, 2]),
            i64("st", [5, 0]), i64("en", [-100, 2 ** 31 - 1]), i64("ax", [2, 3]), i64("sp", [-2, 3]),
            i64("es", [2, 1, 1, 1]), i64("pads2", [0, 0, 0, 1, 0, 0, 1, 0]),
            numpy_helper.from_array(np.array(0.0, np.float32), "pv")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 6, 5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 6, 4, 3])], init)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, str(path))


@pytest.mark.parametrize("with_sin", [False, True])
def test_v105_ops_from_onnx_match_onnxruntime(tmp_path: Path, with_sin: bool) -> None:
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    import nnkiln

    onnx_path = tmp_path / "m.onnx"
    _model(onnx_path, with_sin)
    out = tmp_path / "m_nnef"
    r = subprocess.run([str(PY), "-m", "nnef_tools.convert", "--input-format", "onnx", "--output-format", "nnef",
                        "--input-model", str(onnx_path), "--output-model", str(out)],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300,
                       env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert r.returncode == 0, r.stderr[-2000:]
    text = (out / "graph.nnef").read_text()
    for op in ("pad(", "tile(", "gather(", "stride = [-2, 3]", "cast<integer>("):
        assert op in text
    x = (np.random.default_rng(0).normal(size=(1, 3, 6, 5)) * 2).astype(np.float32)
    want = ort.InferenceSession(str(onnx_path)).run(None, {"x": x})[0]
    module = nnkiln.load(str(out))
    (name,) = nnkiln.reference.input_names(nnkiln.reference.entry_function(module))
    got = next(iter(nnkiln.reference.run(module, {name: x}).values()))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    if not with_sin:  # sin is a tosa.custom op (reference kernel only)
        got_blob = next(iter(nnkiln.compile(module).run({name: x}).values()))
        np.testing.assert_allclose(got_blob, want, rtol=1e-5, atol=1e-6)
