"""TOSA 0.30 §2.6 elementwise unary operators (11 ops: ABS ... RSQRT).

Every op maps ``input1`` to ``output`` "of same type, size as the input tensor" (argument tables):
the output shape equals the input shape, and the type tables have a single ``in_out_t`` column, so
input and output element kinds are equal.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import I64, IntegerAttr, TensorType, i64
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, result_def, traits_def
from xdsl.traits import Pure

from nnkiln.dialects.tosa.base import (
    Kind,
    Shape,
    TosaOp,
    TypeMode,
    check_int_range,
    require,
    require_shape,
    same_type_modes,
)

_FLOATS = same_type_modes(Kind.F16, Kind.BF16, Kind.F32, slots=2)
_SIGNED_INTS = same_type_modes(Kind.I8, Kind.I16, Kind.I32, slots=2)


class _Unary(TosaOp):
    """input1 → output of the same shape (and, by the type tables, the same element kind)."""

    TYPE_SLOTS: ClassVar[tuple[str, ...]] = ("input1", "output")
    input1 = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        require_shape(len(shapes) == 1, "one input", f"got {len(shapes)} operand shapes")
        return [tuple(shapes[0])]


@irdl_op_definition
class AbsOp(_Unary):
    """ABS (spec §2.6.1): absolute value; floats map -0 to +0.

    Types: BI int32; MI "floating-point float_t", i.e. every float format of the profile
    (fp16, bf16, fp32, spec §3.4). ABS(minimum<int32>) is a REQUIRE (``apply_sub``) on the data.
    """

    name = "tosa.abs"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = same_type_modes(Kind.I32, Kind.F16, Kind.BF16, Kind.F32)


@irdl_op_definition
class BitwiseNotOp(_Unary):
    """BITWISE_NOT (spec §2.6.2): ``~input1``. Types: BI int8, int16, int32."""

    name = "tosa.bitwise_not"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = _SIGNED_INTS


@irdl_op_definition
class CeilOp(_Unary):
    """CEIL (spec §2.6.3): ``apply_ceil``. Types: MI float_t (fp16, bf16, fp32)."""

    name = "tosa.ceil"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = _FLOATS


@irdl_op_definition
class ClzOp(_Unary):
    """CLZ (spec §2.6.4): count leading zeros (32 for 0, 0 for negatives). Types: BI int32."""

    name = "tosa.clz"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = same_type_modes(Kind.I32)


@irdl_op_definition
class ExpOp(_Unary):
    """EXP (spec §2.6.5): e to the x. Types: MI fp16, bf16, fp32."""

    name = "tosa.exp"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = _FLOATS


@irdl_op_definition
class FloorOp(_Unary):
    """FLOOR (spec §2.6.6): ``apply_floor``. Types: MI fp16, bf16, fp32."""

    name = "tosa.floor"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = _FLOATS


@irdl_op_definition
class LogOp(_Unary):
    """LOG (spec §2.6.7): natural logarithm. Types: MI fp16, bf16, fp32."""

    name = "tosa.log"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = _FLOATS


@irdl_op_definition
class LogicalNotOp(_Unary):
    """LOGICAL_NOT (spec §2.6.8): ``!input1``. Types: bool."""

    name = "tosa.logical_not"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = same_type_modes(Kind.BOOL)


@irdl_op_definition
class NegateOp(_Unary):
    """NEGATE (spec §2.6.9): ``clip(0 - (input1 - input1_zp) + output_zp)`` in acc_t (int32 for ints).

    Attributes ``input1_zp``, ``output_zp`` (type in_out_t): ERROR_IF(in_out_t != int8_t &&
    input1_zp != 0) and the same for ``output_zp``; for int8 each must fit int8 ([-128, 127]).
    Decision: both are optional with default 0 (valid for every type); given values are kept.
    Types: BI int8, int16, int32; MI fp16, bf16, fp32.
    """

    name = "tosa.negate"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = same_type_modes(
        Kind.I8, Kind.I16, Kind.I32, Kind.F16, Kind.BF16, Kind.F32
    )
    input1_zp = opt_prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, i64))
    output_zp = opt_prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, i64))

    def check(self, input1_zp: int = 0, output_zp: int = 0, **attrs: Any) -> None:
        kind = self.slot_kinds()[0]
        for name, zp in (("input1_zp", input1_zp), ("output_zp", output_zp)):
            if kind is Kind.I8:
                check_int_range(name, zp, Kind.I8)
            else:
                require(zp == 0, f"ERROR_IF(in_out_t != int8_t && {name} != 0)",
                        f"{name} = {zp} with in_out_t = {kind.value if kind else '?'}; zero points are for int8 only")


@irdl_op_definition
class ReciprocalOp(_Unary):
    """RECIPROCAL (spec §2.6.10): ``1.0 / input1``. Types: MI fp16, bf16, fp32 (integers use TABLE)."""

    name = "tosa.reciprocal"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = _FLOATS


@irdl_op_definition
class RsqrtOp(_Unary):
    """RSQRT (spec §2.6.11): ``1.0 / sqrt(input1)``, NaN for negatives. Types: MI fp16, bf16, fp32."""

    name = "tosa.rsqrt"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = _FLOATS
