"""TOSA 0.30 §2.5 elementwise binary operators (17 ops: ADD ... TABLE).

Shared rules (spec §2.5, §1.8.4 and the broadcast helper §3.2.4):

- ``input2`` has the same rank as ``input1``; where a dimension differs between an input and the
  output, the input's dimension must be 1 (``apply_broadcast``'s ERROR_IFs).
- The output has "broadcast shape" (argument tables). Decision: the output shape must equal the
  broadcast of the input shapes (``shapes.broadcast_shapes``). ``apply_broadcast`` alone would also
  accept an output dimension larger than every input's dimension 1 (inputs ``[1]``, ``[1]``,
  output ``[5]``); we reject that, since the argument tables require the broadcast shape and the
  argument-table requirements are ERROR_IFs (spec §2.2, ``tosa_execute_graph``).
- Data-dependent conditions written as REQUIRE in the pseudocode (shift amounts in range,
  INTDIV by zero, int32 overflow) make the result *unpredictable*, not an error: they are not
  checked by the verifiers (the reference runtime checks them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import I64, IntegerAttr, TensorType, i64
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, result_def, traits_def
from xdsl.traits import Pure

from nnkiln.dialects.tosa.base import (
    Kind,
    Profile,
    Shape,
    TosaOp,
    TypeMode,
    bool_prop,
    modes,
    require,
    require_shape,
    same_type_modes,
    shape_of,
)
from nnkiln.dialects.tosa.shapes import broadcast_shapes

BI, MI = Profile.BI, Profile.MI

#: "Any: signed 32; MI: fp16, bf16, fp32" — ADD, SUB, MAXIMUM, MINIMUM.
_I32_AND_FLOATS = same_type_modes(Kind.I32, Kind.F16, Kind.BF16, Kind.F32, slots=3)
#: "Any: signed 8, signed 16, signed 32" — the bitwise and shift ops.
_SIGNED_INTS = same_type_modes(Kind.I8, Kind.I16, Kind.I32, slots=3)
#: "Any: Bool" — the logical ops.
_BOOL = same_type_modes(Kind.BOOL, slots=3)


class _Binary(TosaOp):
    """input1, input2 → output of the broadcast shape (spec §1.8.4: equal ranks, size-1 dims broadcast).

    Subclasses whose type table has one ``in_out_t`` list each kind three times (input1, input2,
    output); MUL and the comparisons (§2.8) have distinct in/out kinds.
    """

    TYPE_SLOTS: ClassVar[tuple[str, ...]] = ("input1", "input2", "output")
    input1 = operand_def(TensorType)
    input2 = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        require_shape(len(shapes) == 2, "two inputs", f"got {len(shapes)} operand shapes")
        return [broadcast_shapes(shapes[0], shapes[1])]


@irdl_op_definition
class AddOp(_Binary):
    """ADD (spec §2.5.1): elementwise addition with broadcast.

    Types: BI int32; MI fp16, bf16, fp32. int32 overflow is a REQUIRE (unpredictable result).
    """

    name = "tosa.add"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = _I32_AND_FLOATS


@irdl_op_definition
class ArithmeticRightShiftOp(_Binary):
    """ARITHMETIC_RIGHT_SHIFT (spec §2.5.2): ``input1 >> input2`` (sign-propagating).

    Attribute ``round`` (bool_t, required: the spec gives no default): when true, the result is
    incremented if the last bit shifted out is 1 (round half up).
    Types: BI int8, int16, int32. Shift amounts outside [0, width-1] are a REQUIRE on the data,
    so they are not a verify error.
    """

    name = "tosa.arithmetic_right_shift"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = _SIGNED_INTS
    round = bool_prop()


@irdl_op_definition
class BitwiseAndOp(_Binary):
    """BITWISE_AND (spec §2.5.3): ``input1 & input2``. Types: BI int8, int16, int32."""

    name = "tosa.bitwise_and"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = _SIGNED_INTS


@irdl_op_definition
class BitwiseOrOp(_Binary):
    """BITWISE_OR (spec §2.5.4): ``input1 | input2``. Types: BI int8, int16, int32."""

    name = "tosa.bitwise_or"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = _SIGNED_INTS


@irdl_op_definition
class BitwiseXorOp(_Binary):
    """BITWISE_XOR (spec §2.5.5): ``input1 ^ input2``. Types: BI int8, int16, int32."""

    name = "tosa.bitwise_xor"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = _SIGNED_INTS


@irdl_op_definition
class IntDivOp(_Binary):
    """INTDIV (spec §2.5.6): integer division truncated toward zero.

    Types: BI int32 only. Division by zero and ``minimum<int32> / -1`` are REQUIREs on the data.
    """

    name = "tosa.intdiv"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = same_type_modes(Kind.I32, slots=3)


@irdl_op_definition
class LogicalAndOp(_Binary):
    """LOGICAL_AND (spec §2.5.7): ``input1 && input2``. Types: bool."""

    name = "tosa.logical_and"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = _BOOL


@irdl_op_definition
class LogicalLeftShiftOp(_Binary):
    """LOGICAL_LEFT_SHIFT (spec §2.5.8): ``input1 << input2``, truncated to the type width.

    Types: BI int8, int16, int32. The shift amount must be in [0, 31] for every type (a REQUIRE on
    the data, not a verify error).
    """

    name = "tosa.logical_left_shift"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = _SIGNED_INTS


@irdl_op_definition
class LogicalRightShiftOp(_Binary):
    """LOGICAL_RIGHT_SHIFT (spec §2.5.9): ``(unsigned)input1 >> input2``, reinterpreted as signed.

    Types: BI int8, int16, int32. Shift amount in [0, 31] is a REQUIRE on the data.
    """

    name = "tosa.logical_right_shift"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = _SIGNED_INTS


@irdl_op_definition
class LogicalOrOp(_Binary):
    """LOGICAL_OR (spec §2.5.10): ``input1 || input2``. Types: bool."""

    name = "tosa.logical_or"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = _BOOL


@irdl_op_definition
class LogicalXorOp(_Binary):
    """LOGICAL_XOR (spec §2.5.11): ``input1 != input2``. Types: bool."""

    name = "tosa.logical_xor"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = _BOOL


@irdl_op_definition
class MaximumOp(_Binary):
    """MAXIMUM (spec §2.5.12): ``apply_max`` (NaN propagates). Types: BI int32; MI fp16, bf16, fp32."""

    name = "tosa.maximum"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = _I32_AND_FLOATS


@irdl_op_definition
class MinimumOp(_Binary):
    """MINIMUM (spec §2.5.13): ``apply_min`` (NaN propagates). Types: BI int32; MI fp16, bf16, fp32."""

    name = "tosa.minimum"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = _I32_AND_FLOATS


@irdl_op_definition
class MulOp(_Binary):
    """MUL (spec §2.5.14): elementwise product, with an optional rounding right shift for int32.

    Attribute ``shift`` (uint6_t; an attribute in BI/MI): ERROR_IF it is outside [0, 63] (the
    range of uint6_t, spec §2.2 argument requirements) and ERROR_IF(in_t != int32_t && shift > 0).
    Decision: ``shift`` is optional with default 0 (the value that is valid for every type);
    an explicitly given ``shift`` is kept and printed.
    Types: BI int8×int8→int32, int16×int16→int32, int32×int32→int32; MI fp16, bf16, fp32.
    Integer products that are not shifted keep the low 32 bits (no REQUIRE); the shifted int32
    result must fit int32 (a REQUIRE on the data).
    """

    name = "tosa.mul"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = modes(
        BI,
        ("signed 8", (Kind.I8, Kind.I8, Kind.I32)),
        ("signed 16", (Kind.I16, Kind.I16, Kind.I32)),
        ("signed 32", (Kind.I32, Kind.I32, Kind.I32)),
    ) + modes(
        MI,
        ("fp16", (Kind.F16, Kind.F16, Kind.F16)),
        ("bf16", (Kind.BF16, Kind.BF16, Kind.BF16)),
        ("fp32", (Kind.F32, Kind.F32, Kind.F32)),
    )
    shift = opt_prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, i64))

    def check(self, shift: int = 0, **attrs: Any) -> None:
        require(0 <= shift <= 63, "shift fits uint6", f"shift = {shift} is outside [0, 63]")
        in_kind = self.slot_kinds()[0]
        require(not (in_kind is not Kind.I32 and shift > 0), "ERROR_IF(in_t != int32_t && shift > 0)",
                f"shift = {shift} with in_t = {in_kind.value if in_kind else '?'}; only int32 may shift")


@irdl_op_definition
class PowOp(_Binary):
    """POW (spec §2.5.15): ``input1`` raised to the power ``input2``.

    Types: MI fp16, bf16, fp32. The argument table says input1 has "from 1 to 4 dims"; since
    argument requirements are ERROR_IFs (spec §2.2), a rank outside [1, 4] is a verify error.
    """

    name = "tosa.pow"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = same_type_modes(Kind.F16, Kind.BF16, Kind.F32, slots=3)

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        rank = len(shapes[0])
        require_shape(1 <= rank <= 4, "1 <= rank(input1) <= 4", f"input1 has rank {rank}")
        return super().infer_shapes(shapes, **attrs)


@irdl_op_definition
class SubOp(_Binary):
    """SUB (spec §2.5.16): ``apply_sub(input1, input2)``.

    Types: BI int32; MI fp16, bf16, fp32. int32 overflow is a REQUIRE (unpredictable result).
    """

    name = "tosa.sub"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = _I32_AND_FLOATS


#: TABLE_SIZE per input kind (spec §2.5.17 type table).
TABLE_SIZE: dict[Kind, int] = {Kind.I8: 256, Kind.I16: 513}


@irdl_op_definition
class TableOp(TosaOp):
    """TABLE (spec §2.5.17): table lookup; int8 → ``table[v + 128]``, int16 → ``apply_lookup`` (§1.9.4).

    Operands ``input`` and ``table`` (the table is an operand, usually a ``tosa.const``, as in
    MLIR; an attribute in BI/MI, an input in MT); result ``output`` with the input's shape.
    Types: BI int8 input, int8 table of 256 entries → int8; BI int16 input, int16 table of 513
    entries → int32 (a 16.7 fixed-point value).

    Decision on the table length: the pseudocode writes ``REQUIRE(length(table) == TABLE_SIZE)``,
    but the argument table gives the table the shape ``[TABLE_SIZE]`` and argument requirements are
    ERROR_IFs (spec §2.2); in BI/MI the table is a compile-time attribute, so its length is always
    known statically (from the operand's tensor type). A table that is not rank 1 with exactly
    TABLE_SIZE entries for the input type is therefore a verify error. ``infer_shapes`` (which
    sees shapes only) checks rank 1 and a length of 256 or 513; ``check`` matches the length
    against the input type. The int16 slope REQUIRE of ``apply_lookup`` is data-dependent and not
    checked here.
    """

    name = "tosa.table"
    TYPE_SLOTS: ClassVar[tuple[str, ...]] = ("input", "table", "output")
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = modes(
        BI,
        ("signed 8", (Kind.I8, Kind.I8, Kind.I8)),
        ("signed 16", (Kind.I16, Kind.I16, Kind.I32)),
    )
    input = operand_def(TensorType)
    table = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        require_shape(len(shapes) == 2, "input and table", f"got {len(shapes)} operand shapes")
        table = tuple(shapes[1])
        require_shape(len(table) == 1, "table shape == [TABLE_SIZE]", f"table has shape {list(table)}, not rank 1")
        require_shape(table[0] in TABLE_SIZE.values(), "table shape == [TABLE_SIZE]",
                      f"table has {table[0]} entries; TABLE_SIZE is 256 (int8) or 513 (int16)")
        return [tuple(shapes[0])]

    def check(self, **attrs: Any) -> None:
        kind = self.slot_kinds()[0]
        size = TABLE_SIZE.get(kind) if kind else None
        table = shape_of(self.table)
        if size is not None and len(table) == 1:
            require_shape(table[0] == size, "table shape == [TABLE_SIZE]",
                          f"table has {table[0]} entries but TABLE_SIZE = {size} for {kind.value} input")
