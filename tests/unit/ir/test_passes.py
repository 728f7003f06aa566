"""The pass manager verifies after each pass and names the pass that broke the IR."""

from __future__ import annotations

import io
from dataclasses import dataclass

import pytest
from xdsl.dialects.builtin import TensorType, i32
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from nnkiln.ir.errors import InputError, PassError
from nnkiln.ir.passes import PassManager
from nnkiln.ir.text import parse_module
from nnkiln.pipelines.text import parse_pass_pipeline

GRAPH = """
func.func @main(%a: tensor<2x3xi32>, %b: tensor<1x3xi32>) -> tensor<2x3xi32> {
  %0 = tosa.add %a, %b : (tensor<2x3xi32>, tensor<1x3xi32>) -> tensor<2x3xi32>
  %1 = tosa.add %a, %b : (tensor<2x3xi32>, tensor<1x3xi32>) -> tensor<2x3xi32>
  %2 = tosa.add %0, %b : (tensor<2x3xi32>, tensor<1x3xi32>) -> tensor<2x3xi32>
  func.return %2 : tensor<2x3xi32>
}
"""


@dataclass(frozen=True)
class BreakShapes(ModulePass):
    """A deliberately buggy pass: gives every tosa.add a wrong result shape."""

    name = "break-shapes"

    def apply(self, ctx, op) -> None:
        for inner in op.walk():
            if inner.name == "tosa.add":
                Rewriter.replace_value_with_new_type(inner.results[0], TensorType(i32, [5, 5]))


def test_invalid_ir_after_a_pass_is_an_internal_error_naming_it():
    with pytest.raises(PassError) as info:
        PassManager([BreakShapes()], stream=io.StringIO()).run(parse_module(GRAPH))
    message = str(info.value)
    assert "pass 'break-shapes' left invalid IR" in message
    assert "'tosa.add'" in message and "output shape" in message


def test_verification_can_be_turned_off():
    PassManager([BreakShapes()], verify_each=False, stream=io.StringIO()).run(parse_module(GRAPH))


def test_cse_and_dce_remove_the_duplicate_and_dead_adds():
    module = parse_module(GRAPH)
    PassManager(parse_pass_pipeline("cse,dce"), stream=io.StringIO()).run(module)
    adds = [op for op in module.walk() if op.name == "tosa.add"]
    assert len(adds) == 2


def test_print_ir_after_and_timing():
    out = io.StringIO()
    PassManager(parse_pass_pipeline("cse,dce"), print_ir_after=frozenset({"dce"}), timing=True, stream=out).run(
        parse_module(GRAPH)
    )
    text = out.getvalue()
    assert "IR Dump After dce" in text and "IR Dump After cse" not in text
    assert "Pass execution timing report" in text and "cse" in text


def test_unknown_pass_lists_the_available_ones():
    with pytest.raises(InputError, match="unknown pass.*available: .*canonicalize"):
        parse_pass_pipeline("cse,frobnicate")
