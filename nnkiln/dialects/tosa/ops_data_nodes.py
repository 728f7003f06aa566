"""TOSA 0.30 §2.14 data nodes: CONST and IDENTITY."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def, traits_def
from xdsl.traits import ConstantLike, Pure

from nnkiln.dialects.tosa.base import (
    Kind,
    Profile,
    Shape,
    TosaOp,
    TypeMode,
    require,
    same_type_modes,
)
from nnkiln.ir.elements import from_numpy
from nnkiln.ir.elements import storage_type as storage_of

_SPEC_KINDS = (Kind.BOOL, Kind.I8, Kind.I16, Kind.I32, Kind.F16, Kind.BF16, Kind.F32)


@irdl_op_definition
class ConstOp(TosaOp):
    """CONST (spec §2.14.1): ``output`` holds the constant ``values``.

    ``values`` is a dense elements attribute (numpy-backed, see ``nnkiln.ir.elements``); printed
    ``%0 = tosa.const {values = dense<[1, 2]> : tensor<2xi32>} : tensor<2xi32>`` (the generic
    form ``"tosa.const"() <{values = ...}> : () -> tensor<2xi32>`` parses too).

    Decisions:
    - ``values``' type must equal the output type. Exception: when the output element type is a
      quantized type (``!quant.uniform<i8:f32, ...>``), a dense attribute cannot carry it, so
      ``values`` holds the *storage* type (``tensor<4xi8>`` for ``tensor<4x!quant.uniform<i8:...>>``)
      and must have the output's shape (as MLIR's TOSA does). A per-axis quantized output needs
      ``quantized_dimension < rank`` and one (scale, zero point) per index of that dimension.
    - Supported types: the spec's table (BI bool, int8, int16, int32; MI fp16, bf16, fp32) plus
      BI int4 and int48. Weights and biases are operands produced by CONST in this representation
      (spec §1.1 makes them attributes in BI/MI), and CONV2D-family "signed 8x4" weights are int4 and
      "signed 16x8" biases are int48, so CONST must produce those too.
    """

    name = "tosa.const"
    TYPE_SLOTS: ClassVar[tuple[str, ...]] = ("output",)
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = same_type_modes(*_SPEC_KINDS, slots=1) + (
        TypeMode("signed 4 (weights)", Profile.BI, (Kind.I4,)),
        TypeMode("signed 48 (bias)", Profile.BI, (Kind.I48,)),
    )

    values = prop_def(DenseIntOrFPElementsAttr)
    output = result_def(TensorType)
    traits = traits_def(Pure(), ConstantLike())
    assembly_format = "attr-dict `:` type($output)"

    def check(self, **attrs: Any) -> None:
        vtype = self.values.type
        otype = self.output.type
        if isinstance(otype, TensorType) and storage_of(otype.element_type) != otype.element_type:
            expected: Attribute = TensorType(storage_of(otype.element_type), otype.get_shape())
            rule = "type(values) == output type with the quantized element type's storage type"
        else:
            expected = otype
            rule = "type(values) == type(output)"
        require(vtype == expected, rule, f"values has type {vtype} but the output is {otype}")
        check_shape = getattr(otype.element_type, "check_shape", None)  # per-axis quantized output
        if callable(check_shape):
            check_shape(otype.get_shape())

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        values = attrs["values"]
        return [tuple(int(d) for d in values.type.get_shape())]

    @classmethod
    def from_numpy(cls, array: np.ndarray, element_type: Attribute | None = None) -> ConstOp:
        """A CONST of ``array`` (converted to ``element_type``'s storage dtype if given; a quantized
        ``element_type`` makes a quantized output whose ``values`` hold the storage type)."""
        if element_type is None:
            values = from_numpy(np.asarray(array))
            out_type = values.type
        else:
            storage = storage_of(element_type)
            values = from_numpy(np.asarray(array), TensorType(storage, np.shape(array)))
            out_type = TensorType(element_type, np.shape(array))
        return cls.create(result_types=[out_type], properties={"values": values})


@irdl_op_definition
class IdentityOp(TosaOp):
    """IDENTITY (spec §2.14.2): ``output`` = ``input1`` (same shape and type, ``in_out_t``).

    The output element type must equal the input's exactly (quantization parameters included).
    """

    name = "tosa.identity"
    TYPE_SLOTS: ClassVar[tuple[str, ...]] = ("input1", "output")
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = same_type_modes(*_SPEC_KINDS, slots=2)

    input1 = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())

    def check(self, **attrs: Any) -> None:
        a = self.input1.type.element_type  # type: ignore[union-attr]
        b = self.output.type.element_type  # type: ignore[union-attr]
        require(a == b, "type(output) == type(input1)", f"input1 element type {a} but output element type {b}")

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        return [tuple(shapes[0])]
