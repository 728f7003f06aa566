"""``tosa-to-buf`` compiles control-flow region programs by a nested pass pipeline whose passes its creator gives:
the named pipelines give their own pipeline for their target (one queue), a textual pipeline likewise, and a
``tosa-to-buf`` given none refuses control flow. The pass options round-trip through the textual syntax."""

from __future__ import annotations

import numpy as np
import pytest

from nnkiln.blob.format import CONTROL_FLOW_KERNELS
from nnkiln.blob.reader import decode
from nnkiln.compiler import compile_to_blob
from nnkiln.conversion.tosa_to_buf import TosaToBuf
from nnkiln.errors import PassError
from nnkiln.ir.text import parse_module
from nnkiln.pipelines import describe, pipeline
from nnkiln.pipelines.text import parse_pass_pipeline
from nnkiln.targets import get_target

# The then-region slices its input (contiguous: a view with the views option, a kernel without).
SLICING_IF = """func.func @main(%x: tensor<3x2xf32>, %c: tensor<i1>) -> tensor<2x2xf32> {
  %r = tosa.cond_if %x, %c : (tensor<3x2xf32>, tensor<i1>) -> tensor<2x2xf32> {
  ^bb0(%a : tensor<3x2xf32>):
    %s = tosa.slice %a {start = array<i64: 1, 0>, size = array<i64: 2, 2>} : (tensor<3x2xf32>) -> tensor<2x2xf32>
    %e = tosa.exp %s : (tensor<2x2xf32>) -> tensor<2x2xf32>
    tosa.yield %e : tensor<2x2xf32>
  } else {
  ^bb0(%a : tensor<3x2xf32>):
    %s = tosa.slice %a {start = array<i64: 0, 0>, size = array<i64: 2, 2>} : (tensor<3x2xf32>) -> tensor<2x2xf32>
    tosa.yield %s : tensor<2x2xf32>
  }
  func.return %r : tensor<2x2xf32>
}"""


def _programs(raw: bytes) -> list:
    """The decoded region programs of the blob's control-flow tasks."""
    blob = decode(raw)
    consts = np.frombuffer(blob.constants, np.uint8)
    out = []
    for task in blob.tasks:
        if task.kernel in CONTROL_FLOW_KERNELS:
            for i in task.ins[:2]:
                b = blob.buffers[i]
                out.append(decode(consts[b.offset:b.offset + b.size].tobytes()))
    return out


@pytest.mark.parametrize("name, views", [("default", True), ("reference", False)])
def test_region_programs_are_compiled_by_the_enclosing_pipeline(name: str, views: bool) -> None:
    _, raw = compile_to_blob(parse_module(SLICING_IF), "cpu", name)
    then, other = _programs(raw)
    for prog in (then, other):
        assert prog.metadata["pipeline"] == name and prog.metadata["target"] == "cpu"
    # the then-program's slice: a view of the input, no task (default), or a SLICE kernel (reference)
    assert ("tosa.slice" in [t.kernel for t in then.tasks]) is not views


def test_region_passes_come_from_the_creator_with_the_pass_options() -> None:
    calls = []

    def region_passes(name: str, target: str) -> list:
        calls.append((name, target))
        return pipeline("reference", get_target(target), queues=1)

    module = parse_module(SLICING_IF)
    TosaToBuf(target="cpu", region_pipeline="mine", region_passes=region_passes).apply(None, module)  # type: ignore[arg-type]
    assert calls == [("mine", "cpu"), ("mine", "cpu")]  # fresh passes for each of the two regions
    consts = [op for op in module.walk() if op.name == "buf.const"]
    assert len(consts) == 2


def test_tosa_to_buf_without_region_passes_refuses_control_flow() -> None:
    with pytest.raises(PassError, match="no passes for the programs of control-flow regions"):
        TosaToBuf().apply(None, parse_module(SLICING_IF))  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["default", "reference"])
def test_described_pipelines_parse_back_into_the_same_passes(name: str) -> None:
    target = get_target("cpu", 2)
    with open("/dev/null", "w") as sink:
        text = describe(name, target, stream=sink)
    parsed = parse_pass_pipeline(",".join(text.splitlines()))
    assert parsed == pipeline(name, target)
    bufferize = next(p for p in parsed if isinstance(p, TosaToBuf))
    assert bufferize.region_passes is not None and bufferize.views is (name == "default")
    assert bufferize.region_pipeline == name
