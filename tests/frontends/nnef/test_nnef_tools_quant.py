"""Quantized models converted to NNEF by nnef-tools (Khronos) run as integer arithmetic and agree with the
integer models they came from within 1 LSB.

Pipeline per model: ``tflite_quant_builder.py`` (run by the .venv-nnef interpreter) writes an int8 TFLite
model with nnef-tools' own TFLite writer; the TFLite interpreter (``ai-edge-litert``, in .venv-litert) runs
it on int8 codes — that is the oracle; ``python -m nnef_tools.convert --input-format tflite`` converts it
to NNEF (graph.quant with ``zero_point_linear_quantize``, quantized-code ``.dat`` files, NNEF 1.0.5 item
types); nnkiln loads, compiles and runs the NNEF. Our graph interface is float (see lowering_quant), so
the input is fed as ``(q - zp)·s`` and the output mapped back to codes with ``round(y/s) + zp``, both exact.

Why TFLite and not ONNX: nnef-tools 1.0.11's ONNX reader has no QuantizeLinear/DequantizeLinear/QLinear*
conversions (it fails on QDQ models, ``test_onnx_qdq_is_not_converted_by_nnef_tools``), so it writes no
quantization for ONNX models; its TFLite reader is the path that produces quantized NNEF.

Requirements (skipped with the reason when missing): .venv-nnef with nnef-tools and ``flatbuffers``
(taken from .venv-litert if .venv-nnef lacks it), and .venv-litert with ``ai-edge-litert``.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[3]
PY_NNEF = ROOT / ".venv-nnef" / "bin" / "python"
PY_LITERT = ROOT / ".venv-litert" / "bin" / "python"
BUILDER = Path(__file__).with_name("tflite_quant_builder.py")


def _ok(py: Path, code: str, env: dict | None = None) -> bool:
    return py.exists() and subprocess.run([str(py), "-c", code], capture_output=True, env=env).returncode == 0


def _nnef_env(tmp: Path) -> dict | None:
    """Environment in which .venv-nnef can import nnef_tools and flatbuffers (None if impossible)."""
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    if not _ok(PY_NNEF, "import nnef_tools.convert", env):
        return None
    if _ok(PY_NNEF, "import flatbuffers", env):
        return env
    if not PY_LITERT.exists():
        return None
    found = subprocess.run([str(PY_LITERT), "-c", "import flatbuffers, os; print(os.path.dirname(flatbuffers.__file__))"],
                           capture_output=True, text=True)
    if found.returncode != 0:
        return None
    shim = tmp / "fbshim"
    shim.mkdir(exist_ok=True)
    link = shim / "flatbuffers"
    if not link.exists():
        link.symlink_to(found.stdout.strip())
    env["PYTHONPATH"] = str(shim)
    return env if _ok(PY_NNEF, "import flatbuffers", env) else None


HAVE_LITERT = _ok(PY_LITERT, "from ai_edge_litert.interpreter import Interpreter")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not _ok(PY_NNEF, "import nnef_tools.convert"), reason="no nnef-tools in .venv-nnef"),
    pytest.mark.skipif(not HAVE_LITERT, reason="no ai-edge-litert in .venv-litert (the TFLite oracle)"),
]

ORACLE = r"""
import sys, numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType
model, xin, out = sys.argv[1:4]
res = []
for r in (OpResolverType.AUTO, OpResolverType.BUILTIN_REF):
    it = Interpreter(model_path=model, experimental_op_resolver_type=r)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], np.load(xin))
    it.invoke()
    res.append(it.get_tensor(it.get_output_details()[0]["index"]))
np.save(out, np.stack(res))
"""


def _run(cmd: list[str], env: dict | None, cwd: Path) -> None:
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd, timeout=300)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]


def _convert(tmp_path: Path, seed: int, mode: str = "int8") -> tuple[Path, dict, np.ndarray, np.ndarray]:
    model, info, want, out = _built_and_converted(tmp_path, f"m{seed}", seed, mode, ORACLE, ".npy")
    return out, info, np.load(model.with_suffix(".npy")), want


def _built_and_converted(tmp_path: Path, name: str, seed: int, mode: str, oracle: str,
                         inputs: str) -> tuple[Path, dict, np.ndarray, Path]:
    """The TFLite model the builder writes for ``mode`` (with its info and inputs beside it), the TFLite
    interpreter's outputs on those inputs (``oracle``), and the folder nnef-tools converts it to."""
    env = _nnef_env(tmp_path)
    if env is None:
        pytest.skip("nnef-tools cannot import flatbuffers (needed by its TFLite reader/writer)")
    model = tmp_path / f"{name}.tflite"
    _run([str(PY_NNEF), str(BUILDER), str(model), str(seed), mode], env, tmp_path)
    info = json.loads(model.with_suffix(".json").read_text())
    want = tmp_path / f"want_{name}.npy"
    _run([str(PY_LITERT), "-c", oracle, str(model), str(model.with_suffix(inputs)), str(want)], None, tmp_path)
    folder = tmp_path / f"{name}_nnef"
    _run([str(PY_NNEF), "-m", "nnef_tools.convert", "--input-format", "tflite", "--output-format", "nnef",
          "--input-model", str(model), "--output-model", str(folder)], env, tmp_path)
    return model, info, np.load(want), folder


def _element(t) -> str:  # noqa: ANN001
    return str(t.element_type) if hasattr(t, "element_type") else str(t)


@pytest.mark.parametrize("mode, seed", [("int8", 1), ("int8", 2), ("int8", 6), ("uint8", 1), ("uint8", 4),
                                        ("uint8", 10)])
def test_tflite_quantized_model_via_nnef_tools_within_one_lsb(tmp_path: Path, mode: str, seed: int) -> None:
    """Oracles: the default TFLite interpreter (XNNPACK kernels): at most 1 LSB. TFLite's reference kernels
    (BUILTIN_REF; they round twice in their fixed-point multiply, XNNPACK once, as our RESCALE) may differ
    from XNNPACK themselves, by up to 2 LSB on uint8 seed 10: we allow max(1, |XNNPACK - REF|) there."""
    import nnkiln
    from nnkiln.frontends.nnef.loader import load_nnef

    folder, info, x, want = _convert(tmp_path, seed, mode)
    quant = (folder / "graph.quant").read_text()
    assert "zero_point_linear_quantize" in quant  # what nnef-tools writes for TFLite tensors

    module = load_nnef(str(folder))
    ops = list(module.walk())
    names = Counter(op.name for op in ops)
    # integer IR: every MAC op takes int8 and accumulates in int32; RESCALE requantizes
    for op in ops:
        if op.name in ("tosa.conv2d", "tosa.depthwise_conv2d", "tosa.fully_connected"):
            assert [_element(o.type) for o in op.operands] == ["i8", "i8", "i32"], op.name
            assert _element(op.results[0].type) == "i32", op.name
        if op.name in ("tosa.max_pool2d", "tosa.avg_pool2d"):
            assert _element(op.operands[0].type) == "i8", op.name
    assert names["tosa.conv2d"] == 1 and names["tosa.depthwise_conv2d"] == 1 and names["tosa.fully_connected"] == 1
    assert names["tosa.rescale"] >= 5
    assert not any(op.name in ("tosa.conv2d", "tosa.fully_connected") and _element(op.results[0].type) == "f32"
                   for op in ops)

    xr = (x.astype(np.float32) - np.float32(info["x_zp"])) * np.float32(info["x_scale"])
    (in_name,) = nnkiln.reference.input_names(nnkiln.reference.entry_function(module))
    got_ref = next(iter(nnkiln.reference.run(module, {in_name: xr}).values()))
    got_blob = next(iter(nnkiln.compile(module).run({in_name: xr}).values()))
    for got in (got_ref, got_blob):
        codes = np.floor(np.asarray(got, np.float64) / np.float32(info["y_scale"]) + 0.5) + info["y_zp"]
        xnn, ref = (w.astype(np.float64) for w in want)
        assert np.abs(codes - xnn).max() <= 1, (codes, xnn)
        assert np.abs(codes - ref).max() <= max(1, np.abs(xnn - ref).max()), (codes, ref, xnn)


ORACLE_AB = r"""
import sys, numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType
model, xin, out = sys.argv[1:4]
data = np.load(xin)
res = []
for r in (OpResolverType.AUTO, OpResolverType.BUILTIN_REF):
    it = Interpreter(model_path=model, experimental_op_resolver_type=r)
    it.allocate_tensors()
    for d in it.get_input_details():
        it.set_tensor(d["index"], data[d["name"]])
    it.invoke()
    res.append(it.get_tensor(it.get_output_details()[0]["index"]))
np.save(out, np.stack(res))
"""


@pytest.mark.parametrize("kind, seed", [("matmul", 1), ("matmul", 2), ("matmul", 3), ("mul", 1), ("mul", 2),
                                        ("sigmoid", 1), ("tanh", 1), ("softmax", 1), ("softmax", 2)])
def test_quantized_matmul_mul_activations_run_as_integers(tmp_path: Path, kind: str, seed: int) -> None:
    """TFLite BATCH_MATMUL (quantized attention) / MUL of two int8 activations → nnef-tools → int8 MATMUL with
    both zero points / int32 MUL of the zero-point-free values, + RESCALE; LOGISTIC / TANH → an int8 TABLE;
    SOFTMAX (over 50 elements, nnef-tools moves the axis to 1 with transposes) → ``softmax_i8`` (GATHER of an
    int32 exp table, INT_DIV, no float op between the graph's input and output conversions).
    The codes agree with the TFLite interpreter within 1 LSB and survive NNEF → ours → NNEF bit for bit."""
    import nnkiln
    from nnkiln.frontends.nnef.loader import load_nnef

    model, info, want_codes, folder = _built_and_converted(tmp_path, f"{kind}{seed}", seed, kind, ORACLE_AB, ".npz")
    module = load_nnef(str(folder))
    if kind == "matmul":
        mms = [op for op in module.walk() if op.name == "tosa.matmul"]
        assert len(mms) == 1 and [_element(o.type) for o in mms[0].operands] == ["i8", "i8"]
        assert _element(mms[0].results[0].type) == "i32"
        assert (mms[0].A_zp.value.data, mms[0].B_zp.value.data) == (info["a_zp"], info["b_zp"])
    elif kind == "mul":
        # the product is one int32 MUL (the other MULs are the float quantize / dequantize of the graph's I/O)
        muls = [op for op in module.walk() if op.name == "tosa.mul" and _element(op.results[0].type) != "f32"]
        assert len(muls) == 1 and [_element(o.type) for o in muls[0].operands] == ["i32", "i32"]
    elif kind == "softmax":
        names = [op.name for op in module.walk()]
        assert names.count("tosa.gather") == 1 and names.count("tosa.intdiv") == 1 and "tosa.exp" not in names
        assert "tosa.reciprocal" not in names
    else:
        tables = [op for op in module.walk() if op.name == "tosa.table"]
        assert len(tables) == 1 and _element(tables[0].operands[0].type) == "i8"
    data = np.load(model.with_suffix(".npz"))
    real = [(data[k].astype(np.float32) - np.float32(info[f"{k}_zp"])) * np.float32(info[f"{k}_scale"])
            for k in sorted(data.files)]
    feeds = dict(zip(nnkiln.reference.input_names(nnkiln.reference.entry_function(module)), real))
    xnn, ref = (w.astype(np.float64) for w in want_codes)
    for got in (next(iter(nnkiln.reference.run(module, feeds).values())),
                next(iter(nnkiln.compile(module).run(feeds).values()))):
        codes = np.floor(np.asarray(got, np.float64) / np.float32(info["y_scale"]) + 0.5) + info["y_zp"]
        assert np.abs(codes - xnn).max() <= 1, (codes, xnn)
        assert np.abs(codes - ref).max() <= max(1, np.abs(xnn - ref).max()), (codes, ref)
    # NNEF -> ours -> NNEF: the writer solves the scales so that the reader rebuilds the same integer op
    from nnkiln.frontends.nnef.writer import write_nnef

    write_nnef(module, str(tmp_path / "again"))
    again = load_nnef(str(tmp_path / "again"))
    name, operand = {"matmul": ("tosa.matmul", "i8"), "mul": ("tosa.mul", "i32"),
                     "softmax": ("tosa.gather", "i32")}.get(kind, ("tosa.table", "i8"))
    ints = [op for op in again.walk() if op.name == name and _element(op.results[0].type) != "f32"]
    assert len(ints) == 1 and _element(ints[0].operands[0].type) == operand
    first = next(iter(nnkiln.reference.run(module, feeds).values()))
    second = next(iter(nnkiln.reference.run(again, dict(zip(nnkiln.reference.input_names(
        nnkiln.reference.entry_function(again)), real))).values()))
    np.testing.assert_array_equal(second, first)


def test_onnx_qdq_is_not_converted_by_nnef_tools(tmp_path: Path) -> None:
    """Documents why the integer oracle is TFLite: nnef-tools rejects ONNX QDQ operators."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])]
    init = [numpy_helper.from_array(np.array(0.1, np.float32), "s"), numpy_helper.from_array(np.array(3, np.int8), "z")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], init)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, str(tmp_path / "qdq.onnx"))
    r = subprocess.run([str(PY_NNEF), "-m", "nnef_tools.convert", "--input-format", "onnx", "--output-format", "nnef",
                        "--input-model", str(tmp_path / "qdq.onnx"), "--output-model", str(tmp_path / "out")],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300,
                       env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert r.returncode != 0 or not (tmp_path / "out" / "graph.quant").exists()
    assert "QuantizeLinear" in r.stdout + r.stderr
