"""The same input always gives the same blob bytes (issue 21, item 5): compiled twice in separate processes (with
different hash seeds, so no set or dict order can leak into the output) and in this process through the API."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import nnkiln
from nnkiln.compiler import compile_to_bytes

ROOT = Path(__file__).resolve().parents[2]
MODELS = [ROOT / "examples" / "tiny_cnn.mlir",
          ROOT / "tests" / "data" / "torch_onnx" / "misc.onnx"]


def _compile_in_a_process(model: Path, out: Path, hash_seed: str) -> bytes:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    r = subprocess.run([sys.executable, "-m", "nnkiln.cli.main", "compile", str(model), "-o", str(out)],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    return out.read_bytes()


@pytest.mark.parametrize("model", MODELS, ids=lambda p: p.name)
def test_same_model_same_bytes(model: Path, tmp_path: Path) -> None:
    a = _compile_in_a_process(model, tmp_path / "a.kiln", "1")
    b = _compile_in_a_process(model, tmp_path / "b.kiln", "2")
    assert a == b
    module = nnkiln.load(str(model))
    assert compile_to_bytes(module) == compile_to_bytes(module)
    exe = nnkiln.compile(module, threads=None)
    exe.save(tmp_path / "c.kiln")
    assert (tmp_path / "c.kiln").read_bytes() == compile_to_bytes(module)
    assert exe.stats["compile_seconds"] > 0  # still measured, just not written into the blob
