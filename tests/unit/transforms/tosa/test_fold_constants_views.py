"""fold-constants hands kernels read-only views of the constants (no copy of the weights); a kernel
that writes into its inputs gets private copies and the constants keep their values."""

from __future__ import annotations

import io

import numpy as np
import pytest

from nnkiln.ir.elements import to_numpy
from nnkiln.ir.passes import PassManager
from nnkiln.ir.text import parse_module
from nnkiln.reference import registry
from nnkiln.transforms.tosa.fold_constants import FoldConstants

GRAPH = """
func.func @main() -> (tensor<3x2xi32>, tensor<2x3xi32>) {
  %c = tosa.const {values = dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>} : tensor<2x3xi32>
  %r = tosa.reshape %c {new_shape = array<i64: 3, 2>} : (tensor<2x3xi32>) -> tensor<3x2xi32>
  func.return %r, %c : tensor<3x2xi32>, tensor<2x3xi32>
}
"""


def _consts(module):
    return [to_numpy(op.values).tolist() for op in module.walk() if op.name == "tosa.const"]


def test_a_reshape_of_a_constant_folds_sharing_its_bytes():
    module = parse_module(GRAPH)
    PassManager([FoldConstants()], stream=io.StringIO()).run(module)
    consts = [op for op in module.walk() if op.name == "tosa.const"]
    values = sorted(to_numpy(op.values).tolist() for op in consts)
    assert values == [[[1, 2], [3, 4], [5, 6]], [[1, 2, 3], [4, 5, 6]]]
    assert consts[0].values.data.data is consts[1].values.data.data  # one bytes object, no copy
    assert not [op for op in module.walk() if op.name == "tosa.reshape"]


def test_a_kernel_writing_into_its_input_gets_a_copy(monkeypatch: pytest.MonkeyPatch):
    registry.load_kernels()
    original = registry.KERNELS["tosa.reshape"]

    def scribbling_reshape(call):  # noqa: ANN001, ANN202
        x = call.inputs[0]
        x += 100  # raises ValueError on a read-only view
        return [np.asarray(x).reshape(call.out_shapes[0])]

    monkeypatch.setitem(registry.KERNELS, "tosa.reshape", scribbling_reshape)
    module = parse_module(GRAPH)
    PassManager([FoldConstants()], stream=io.StringIO()).run(module)
    assert sorted(_consts(module)) == [[[1, 2, 3], [4, 5, 6]], [[101, 102], [103, 104], [105, 106]]]
    assert original is not scribbling_reshape
