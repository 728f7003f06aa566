"""Locations point back to the source model node, and verification errors name it."""

from __future__ import annotations

import pytest

from nnkiln.ir.diagnostics import describe_loc, source_loc
from nnkiln.ir.errors import VerifyError
from nnkiln.ir.text import parse_module
from nnkiln.ir.verify import verify_module


def test_describe_source_locations():
    assert describe_loc(source_loc("model.onnx", "conv1")) == "model.onnx: node 'conv1'"
    assert describe_loc(source_loc("g.nnef", line=12, column=3)) == "g.nnef:12:3"
    assert describe_loc(source_loc("", "n")) == "node 'n'"


def test_verify_error_names_the_source_node():
    text = """
    func.func @main(%a: tensor<2x3xi32>, %b: tensor<2x4xi32>) -> tensor<2x4xi32> {
      %0 = tosa.add %a, %b : (tensor<2x3xi32>, tensor<2x4xi32>) -> tensor<2x4xi32> loc("add_7"("model.onnx":0:0))
      func.return %0 : tensor<2x4xi32>
    }
    """
    with pytest.raises(VerifyError) as info:
        verify_module(parse_module(text))
    assert "from model.onnx: node 'add_7'" in info.value.describe()
    assert info.value.op_name == "tosa.add"
