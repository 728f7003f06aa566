"""The command line: exit codes and one-line errors, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
