"""The blob is what runs: for real models, the tasks ``nnkiln inspect --json`` lists are exactly the kernel
invocations of a run (``stats["kernel_calls"]``), fused kernels included, and the results are torch's.

The oracle for the values is torch's own output saved beside each model (``tests/data/torch_onnx``); the task list
comes from the command line a user (or an independent plan checker) would use.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import nnkiln

DATA = Path(__file__).parents[1] / "data" / "torch_onnx"


def _inspect(path: Path) -> dict:
    done = subprocess.run([sys.executable, "-m", "nnkiln.cli.main", "inspect", str(path), "--json"],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


@pytest.mark.parametrize("queues", [1, 2])
@pytest.mark.parametrize("name", ["gptblock", "effnetish", "vitish", "unetish"])
def test_inspected_tasks_are_the_kernel_calls(name: str, queues: int, tmp_path: Path) -> None:
    x, want = np.load(DATA / f"{name}_x.npy"), np.load(DATA / f"{name}_y.npy")
    exe = nnkiln.compile(str(DATA / f"{name}.onnx"), threads=2, queues=queues)
    blob = tmp_path / "m.kiln"
    exe.save(blob)
    described = _inspect(blob)
    loaded = nnkiln.Executable.load(blob)
    got = loaded.run({"x": x})["y"]
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * max(1.0, float(np.abs(want).max())))
    assert loaded.stats["kernel_calls"] == len(described["tasks"]) == len(loaded.blob.tasks)
    kernels = Counter(t["kernel"] for t in described["tasks"])
    if name == "gptblock" and queues == 1:  # layer norms, softmax, GELU: row programs, no transposes before GEMMs
        assert kernels["fused.row_program"] >= 3, kernels
    if name == "effnetish" and queues == 1:  # the NCHW input's transpose folded into the stem convolution
        stem = [t for t in described["tasks"] if t.get("operand_perms")]
        assert [t["kernel"] for t in stem] == ["tosa.conv2d"] and stem[0]["operand_perms"][0] == [0, 2, 3, 1]
        assert "tosa.transpose" not in kernels
