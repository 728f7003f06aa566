"""TOSA 0.30 §2.15 custom operators: CUSTOM."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from xdsl.dialects.builtin import StringAttr, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, prop_def, traits_def, var_operand_def, var_result_def

from nnkiln.dialects.tosa.base import Shape, TosaOp, require


@irdl_op_definition
class CustomOp(TosaOp):
    """CUSTOM (spec §2.15.1): an implementation-defined operator, not portable.

    The spec lists "Num input operands", "Num output operands", "Operator code (untyped data)" and
    an "Affine transform description for each tensor". Representation (names chosen here, as in
    later MLIR TOSA):

    - ``input_list`` (variadic operands) and ``output_list`` (variadic results): their counts are
      the spec's numbers of input and output operands;
    - ``identifier`` (string): the name of the custom operator (its "operator code");
    - ``config`` (string): the domain / configuration the operator belongs to (e.g. a vendor);
    - ``implementation_attrs`` (string): the untyped operator data, opaque to the compiler.

    The affine transform descriptions are not represented (no 0.30 format is defined for them).
    There are no type modes and no shape inference: the result types are whatever the producer
    states, so ``make`` takes full result types and ``infer_shapes`` is not available. Only the
    operands/results being tensors and ``identifier`` being non-empty are checked.
    """

    name = "tosa.custom"

    input_list = var_operand_def(TensorType)
    output_list = var_result_def(TensorType)
    identifier = prop_def(StringAttr)
    config = prop_def(StringAttr)
    implementation_attrs = prop_def(StringAttr)
    traits = traits_def()

    def check(self, **attrs: Any) -> None:
        require(bool(attrs["identifier"]), "identifier is not empty", "the custom operator has an empty identifier")

    def verify_shapes(self, attrs: Mapping[str, Any]) -> None:
        """No shape rules: the results are as given."""

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        raise NotImplementedError("tosa.custom has no shape inference: its result types are given by the producer")

    @classmethod
    def make(  # type: ignore[override]
        cls,
        operands: Sequence[SSAValue],
        result_types: Sequence[Attribute],
        identifier: str,
        config: str = "",
        implementation_attrs: str = "",
    ) -> CustomOp:
        """Build a CUSTOM with explicit result tensor types."""
        return cls.create(
            operands=list(operands),
            result_types=list(result_types),
            properties={
                "identifier": StringAttr(identifier),
                "config": StringAttr(config),
                "implementation_attrs": StringAttr(implementation_attrs),
            },
        )
