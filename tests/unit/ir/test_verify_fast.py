"""The fast verifier (nnkiln.ir.verify): same verdicts and messages as xDSL's own verifier, and its
memo of verified op signatures never hides a change a pass made."""

from __future__ import annotations

import gc
import io
import pathlib
from dataclasses import dataclass

import pytest
from xdsl.dialects.builtin import FloatAttr, TensorType, f32
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from nnkiln.ir import verify as V
from nnkiln.ir.errors import InputError, PassError, VerifyError
from nnkiln.ir.passes import PassManager
from nnkiln.ir.text import parse_module

ROOT = pathlib.Path(__file__).resolve().parents[3]

GRAPH = """
func.func @main(%a: tensor<2x3xf32>, %b: tensor<1x3xf32>) -> tensor<2x3xf32> {
  %0 = tosa.add %a, %b : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  %1 = tosa.clamp %0 {min_val = 0.0 : f32, max_val = 6.0 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = tosa.add %1, %b : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  func.return %2 : tensor<2x3xf32>
}
"""


def _ops(module, name):
    return [op for op in module.walk() if op.name == name]


@dataclass(frozen=True)
class Nothing(ModulePass):
    """Changes nothing: the IR is verified (and its signatures memoized) before the broken pass runs."""

    name = "nothing"

    def apply(self, ctx, op) -> None:
        pass


@dataclass(frozen=True)
class SwapInTypeObject(ModulePass):
    """Silently sets the first add's result type to the *same type object* as %b (tensor<1x3xf32>):
    a type object the verifier has seen in verified signatures, but not in this combination."""

    name = "swap-in-type-object"

    def apply(self, ctx, op) -> None:
        add = _ops(op, "tosa.add")[0]
        b = next(v for v in add.operands if tuple(v.type.get_shape()) == (1, 3))
        add.results[0]._type = b.type  # in place, as a buggy pass could


@dataclass(frozen=True)
class BadProperty(ModulePass):
    """Silently sets clamp's max_val below its min_val (CLAMP: ERROR_IF(max_val < min_val))."""

    name = "bad-property"

    def apply(self, ctx, op) -> None:
        clamp = _ops(op, "tosa.clamp")[0]
        clamp.properties["max_val"] = FloatAttr(-1.0, f32)


@dataclass(frozen=True)
class SwapOperands(ModulePass):
    """Swaps the first add's operands: a new combination of type objects the verifier has seen; it is
    still broadcast-valid ([1,3] + [2,3] -> [2,3]), so it must verify."""

    name = "swap-operands"

    def apply(self, ctx, op) -> None:
        add = _ops(op, "tosa.add")[0]
        a, b = add.operands
        add.operands = [b, a]


@dataclass(frozen=True)
class AddAfterReturn(ModulePass):
    """Moves a (locally valid, already verified) add behind func.return: the block no longer ends
    with its terminator. Signatures are unchanged; structural checks must still catch it."""

    name = "add-after-return"

    def apply(self, ctx, op) -> None:
        add = _ops(op, "tosa.add")[1]
        ret = _ops(op, "func.return")[0]
        add.detach()
        ret.parent.insert_op_after(add, ret)


@dataclass(frozen=True)
class WrongShapeNewValue(ModulePass):
    """A new result value with a wrong shape (through the rewriter)."""

    name = "wrong-shape"

    def apply(self, ctx, op) -> None:
        add = _ops(op, "tosa.add")[1]
        Rewriter.replace_value_with_new_type(add.results[0], TensorType(f32, [5, 5]))


def _run(*passes):
    PassManager([Nothing(), *passes], stream=io.StringIO()).run(parse_module(GRAPH))


def test_a_warm_memo_does_not_hide_a_type_object_swapped_in_place():
    with pytest.raises(PassError) as info:
        _run(Nothing(), SwapInTypeObject())
    message = str(info.value)
    assert "pass 'swap-in-type-object' left invalid IR" in message
    assert "'tosa.add'" in message and "output shape" in message


def test_a_changed_property_is_caught():
    with pytest.raises(PassError) as info:
        _run(BadProperty())
    message = str(info.value)
    assert "pass 'bad-property' left invalid IR" in message and "'tosa.clamp'" in message


def test_swapped_operands_verify_and_a_later_bad_result_type_is_caught():
    _run(SwapOperands())  # [1,3] + [2,3] broadcasts to [2,3]: valid
    with pytest.raises(PassError, match="pass 'swap-in-type-object' left invalid IR"):
        _run(SwapOperands(), SwapInTypeObject())


def test_structure_is_checked_even_when_every_signature_is_known():
    with pytest.raises(PassError) as info:
        _run(AddAfterReturn())
    assert "pass 'add-after-return' left invalid IR" in str(info.value)


def test_a_new_value_with_a_wrong_shape_is_caught():
    with pytest.raises(PassError, match="pass 'wrong-shape' left invalid IR.*output shape"):
        _run(WrongShapeNewValue())


def test_the_memo_holds_no_strong_references():
    module = parse_module(GRAPH)
    V.verify_module(module)
    assert V._SIGNATURES
    refs = [r for entry in V._SIGNATURES.values() for r in entry]
    del module
    gc.collect()
    # the ops' types and attributes of the dropped module may only live on if something else holds them
    assert any(r() is None for r in refs) or not refs


def _chunks(path: pathlib.Path) -> list[str]:
    return [c for c in path.read_text().split("// -----") if "func.func" in c or "builtin.module" in c]


def _verdict(text: str, fast: bool) -> str:
    try:
        module = parse_module(text)
    except InputError as err:
        return f"parse: {err}"
    try:
        V.verify_module(module, fast=fast)
    except VerifyError as err:
        return f"error: {err.describe()}"
    return "ok"


INVALID_FILES = sorted((ROOT / "tests" / "filecheck" / "dialects").glob("*/*.mlir"))


@pytest.mark.parametrize("path", INVALID_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fast_verifier_agrees_with_xdsl_on_every_dialect_test_case(path):
    """Every chunk of the dialect filecheck files (valid and invalid ones): the fast verifier, cold and
    with a warm memo, gives exactly the verdict and message of xDSL's own per-op verification."""
    chunks = _chunks(path)
    assert chunks
    for text in chunks:
        expected = _verdict(text, fast=False)
        V.clear_verify_memo()
        assert _verdict(text, fast=True) == expected, text
        assert _verdict(text, fast=True) == expected, text  # memo warm from the run before


GRAPH_IF = """
func.func @main(%c: tensor<i1>) -> tensor<3xf32> {
  %r = tosa.cond_if %c : (tensor<i1>) -> tensor<3xf32> {
    %k = tosa.const {values = dense<1.0> : tensor<3xf32>} : tensor<3xf32>
    tosa.yield %k : tensor<3xf32>
  } else {
    %k = tosa.const {values = dense<2.0> : tensor<3xf32>} : tensor<3xf32>
    tosa.yield %k : tensor<3xf32>
  }
  func.return %r : tensor<3xf32>
}
"""


@dataclass(frozen=True)
class LongerThenBranch(ModulePass):
    """Makes the then-branch yield a tensor<4xf32>: every op keeps a valid signature (the cond_if's own
    operands, results and region shapes are unchanged); only the cond_if's check of its regions sees it."""

    name = "longer-then-branch"

    def apply(self, ctx, op) -> None:
        import numpy as np

        from nnkiln.dialects.tosa.ops_data_nodes import ConstOp

        old = _ops(op, "tosa.const")[0]
        new = ConstOp.from_numpy(np.ones(4, dtype=np.float32))
        old.parent.insert_op_before(new, old)
        old.results[0].replace_all_uses_with(new.results[0])
        old.detach()
        old.erase()


def test_an_op_with_regions_still_checks_its_regions_with_a_warm_memo():
    module = parse_module(GRAPH_IF)
    with pytest.raises(PassError) as info:
        PassManager([Nothing(), LongerThenBranch()], stream=io.StringIO()).run(module)
    message = str(info.value)
    assert "pass 'longer-then-branch' left invalid IR" in message and "'tosa.cond_if'" in message


@dataclass(frozen=True)
class RebuildAllTypes(ModulePass):
    """Gives every value a new (equal) type object: every op's signature changes and is verified again."""

    name = "rebuild-all-types"

    def apply(self, ctx, op) -> None:
        for inner in op.walk():
            for v in inner.results:
                if isinstance(v.type, TensorType):
                    v._type = TensorType(v.type.element_type, v.type.get_shape())


@dataclass(frozen=True)
class NewEqualTypeWrongPlace(ModulePass):
    """Sets the first add's result type to a *new* tensor<1x3xf32>: equal by value to types in verified
    signatures, but not in this combination."""

    name = "new-equal-type-wrong-place"

    def apply(self, ctx, op) -> None:
        add = _ops(op, "tosa.add")[0]
        add.results[0]._type = TensorType(f32, [1, 3])


def test_rebuilt_types_verify_and_a_new_equal_type_in_the_wrong_place_is_caught():
    _run(RebuildAllTypes(), RebuildAllTypes())
    with pytest.raises(PassError) as info:
        _run(RebuildAllTypes(), NewEqualTypeWrongPlace())
    message = str(info.value)  # the add itself (verified before the clamp that reads it) is reported
    assert "pass 'new-equal-type-wrong-place' left invalid IR" in message
    assert "'tosa.add'" in message and "output shape" in message
