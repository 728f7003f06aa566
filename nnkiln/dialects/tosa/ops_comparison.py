"""TOSA 0.30 §2.8 comparison operators (EQUAL, GREATER, GREATER_EQUAL).

Shared rules: ``input1`` and ``input2`` have equal rank and broadcast like §2.5 (the output has
the broadcast shape); in_t is int32 (BI) or fp16, bf16, fp32 (MI), the same for both inputs; out_t
is bool_t (``i1``). A NaN operand compares false (a run-time matter, not verified).
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.irdl import irdl_op_definition

from nnkiln.dialects.tosa.base import Kind, Profile, TypeMode, modes
from nnkiln.dialects.tosa.ops_elementwise_binary import _Binary

#: in_t, in_t → bool_t (every comparison has the same table).
_COMPARISON_MODES: tuple[TypeMode, ...] = modes(
    Profile.BI, ("signed 32", (Kind.I32, Kind.I32, Kind.BOOL))
) + modes(
    Profile.MI,
    ("fp16", (Kind.F16, Kind.F16, Kind.BOOL)),
    ("bf16", (Kind.BF16, Kind.BF16, Kind.BOOL)),
    ("fp32", (Kind.F32, Kind.F32, Kind.BOOL)),
)


class _Comparison(_Binary):
    """input1, input2 (same in_t) → bool output of the broadcast shape."""

    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = _COMPARISON_MODES


@irdl_op_definition
class EqualOp(_Comparison):
    """EQUAL (spec §2.8.1): ``input1 == input2`` (false if either is NaN). Types: int32 | fp16, bf16, fp32 → bool."""

    name = "tosa.equal"


@irdl_op_definition
class GreaterOp(_Comparison):
    """GREATER (spec §2.8.2): ``input1 > input2`` (false if either is NaN). Types: int32 | fp16, bf16, fp32 → bool."""

    name = "tosa.greater"


@irdl_op_definition
class GreaterEqualOp(_Comparison):
    """GREATER_EQUAL (spec §2.8.3): ``input1 >= input2`` (false if either is NaN). Types: int32 | fp16, bf16, fp32 → bool."""

    name = "tosa.greater_equal"
