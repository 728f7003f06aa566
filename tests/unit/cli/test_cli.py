"""The command line: exit codes and one-line errors, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from nnkiln.cli.main import main

VALID = """
func.func @main(%a: tensor<2x3xi32>, %b: tensor<1x3xi32>) -> tensor<2x3xi32> {
  %0 = tosa.add %a, %b : (tensor<2x3xi32>, tensor<1x3xi32>) -> tensor<2x3xi32>
  func.return %0 : tensor<2x3xi32>
}
"""
INVALID = VALID.replace("tensor<1x3xi32>", "tensor<1x3xi16>")


def nnkiln(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "nnkiln.cli.main", *args], capture_output=True, text=True)


def test_verify_exit_codes(tmp_path: Path):
    good = tmp_path / "good.mlir"
    good.write_text(VALID)
    bad = tmp_path / "bad.mlir"
    bad.write_text(INVALID)
    junk = tmp_path / "junk.mlir"
    junk.write_text("func.func @main( {{{")

    r = nnkiln("verify", str(good))
    assert r.returncode == 0, r.stderr
    r = nnkiln("verify", str(bad))
    assert r.returncode == 1
    assert "tosa.add" in r.stderr and "supported data types" in r.stderr
    assert "Traceback" not in r.stderr
    r = nnkiln("verify", str(junk))
    assert r.returncode == 2 and "junk.mlir:1:" in r.stderr and "Traceback" not in r.stderr
    r = nnkiln("verify", str(tmp_path / "missing.mlir"))
    assert r.returncode == 2 and "cannot read" in r.stderr


def test_opt_round_trips_generic_and_custom_forms(tmp_path: Path):
    src = tmp_path / "g.mlir"
    src.write_text(VALID)
    custom = nnkiln("opt", str(src))
    assert custom.returncode == 0, custom.stderr
    generic = nnkiln("opt", "--generic", str(src))
    assert '"tosa.add"' in generic.stdout
    again = tmp_path / "again.mlir"
    again.write_text(generic.stdout)
    assert nnkiln("opt", str(again)).stdout == custom.stdout


def test_opt_unknown_pass_is_a_clear_error(tmp_path: Path):
    src = tmp_path / "g.mlir"
    src.write_text(VALID)
    r = nnkiln("opt", str(src), "-p", "nonsense")
    assert r.returncode == 2 and "unknown pass" in r.stderr


TINY = """
func.func @main(%x: tensor<2x3xf32>, %k: tensor<2x3xi8>) -> (tensor<2x3xf32>, tensor<2x3xi8>) {
  %y = tosa.abs %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %j = tosa.clamp %k {min_val = -5 : i64, max_val = 5 : i64} : (tensor<2x3xi8>) -> tensor<2x3xi8>
  func.return %y, %j : tensor<2x3xf32>, tensor<2x3xi8>
}
"""


def test_random_inputs_are_the_same_for_a_model_and_its_blob(tmp_path: Path):
    import numpy as np

    src, blob = tmp_path / "m.mlir", tmp_path / "m.kiln"
    src.write_text(TINY)
    assert nnkiln("compile", str(src), "-o", str(blob)).returncode == 0
    outs = []
    for f in (src, blob):
        r = nnkiln("run", str(f), "--random-inputs", "--seed", "3", "-o", str(tmp_path / f"{f.suffix[1:]}.npz"))
        assert r.returncode == 0, r.stderr
        outs.append(np.load(tmp_path / f"{f.suffix[1:]}.npz"))
    a, b = outs
    assert sorted(a.files) == sorted(b.files) and len(a.files) == 2
    for name in a.files:
        np.testing.assert_array_equal(a[name], b[name])
    # the float input is standard normal and the int8 one lies in [-128, 127]: the outputs show it
    f32 = next(a[n] for n in a.files if a[n].dtype == np.float32)
    i8 = next(a[n] for n in a.files if a[n].dtype == np.int8)
    assert (f32 >= 0).all() and f32.max() > 0 and i8.min() >= -5 and i8.max() <= 5


def test_random_inputs_refuse_absurd_sizes(tmp_path: Path):
    src, blob = tmp_path / "big.mlir", tmp_path / "big.kiln"
    src.write_text("func.func @main(%x: tensor<100000x100000x100000xf32>) -> tensor<100000x100000x100000xf32> {\n"
                   "  func.return %x : tensor<100000x100000x100000xf32>\n}\n")
    assert nnkiln("compile", str(src), "-o", str(blob)).returncode == 0
    r = nnkiln("run", str(src), "--random-inputs")
    assert r.returncode == 2 and "would take 8000000000000000 bytes while drawn" in r.stderr, r.stderr
    r = nnkiln("run", str(blob), "--random-inputs")  # the blob's input is over the tensor budget: refused at load
    assert r.returncode == 1 and "big.kiln" in r.stderr and "4000000000000000 bytes exceed the limit" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def _onnx_with_symbolic_batch(path: Path) -> None:
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])
    graph = helper.make_graph([helper.make_node("Softmax", ["x"], ["y"], axis=-1)], "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 10
    path.write_bytes(model.SerializeToString())


def test_run_compiles_a_model_and_binds_symbolic_dims_from_the_inputs(tmp_path: Path):
    import numpy as np

    model, x = tmp_path / "m.onnx", tmp_path / "x.npy"
    _onnx_with_symbolic_batch(model)
    data = np.array([[0.0, 1.0, 2.0], [3.0, 3.0, 3.0], [-1.0, 0.0, 1.0], [5.0, 0.0, 0.0]], np.float32)
    np.save(x, data)
    expected = np.exp(data - data.max(1, keepdims=True))
    expected /= expected.sum(1, keepdims=True)
    for extra in ([], ["--reference"]):
        out = tmp_path / f"out{len(extra)}.npz"
        r = nnkiln("run", str(model), "--input", f"x={x}", "-o", str(out), *extra)
        assert r.returncode == 0 and "warning" not in r.stderr, r.stderr
        np.testing.assert_allclose(np.load(out)["y"], expected, rtol=1e-6)
    # compiling without --shape binds the symbolic batch to 1 and says so; the blob then names the shape it wants
    blob = tmp_path / "m.kiln"
    r = nnkiln("compile", str(model), "-o", str(blob))
    assert r.returncode == 0 and "warning:" in r.stderr and "'batch'" in r.stderr and "compiled as 1" in r.stderr, r.stderr
    r = nnkiln("run", str(blob), "--input", f"x={x}")
    assert r.returncode == 2 and "[4, 3]" in r.stderr and "[1, 3]" in r.stderr and "Traceback" not in r.stderr, r.stderr
    r = nnkiln("run", str(blob), "--reference")
    assert r.returncode == 2 and "apply to models" in r.stderr, r.stderr


@pytest.mark.parametrize("argv,hint", [
    (["opt", "{mlir}", "-p", "cse,dcee"], "did you mean 'dce'?"),
    (["compile", "{mlir}", "-o", "{out}", "--target", "cpuu"], "did you mean 'cpu'?"),
    (["compile", "{mlir}", "-o", "{out}", "--pipeline", "defualt"], "did you mean 'default'?"),
    (["verify", "{bad}"], "Operation tosa.abss is not registered; did you mean 'tosa.abs'"),
])
def test_mistyped_names_get_the_nearest_ones(tmp_path, capsys, argv, hint) -> None:  # noqa: ANN001
    mlir = Path(__file__).parents[3] / "examples" / "tiny_cnn.mlir"
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
                   "  %y = tosa.abss %x : (tensor<2xf32>) -> tensor<2xf32>\n  func.return %y : tensor<2xf32>\n}\n")
    args = [a.format(mlir=mlir, out=tmp_path / "o.kiln", bad=bad) for a in argv]
    assert main(args) != 0
    assert hint in capsys.readouterr().err
