"""TOSA 0.30 §2.9 reduction operators: REDUCE_ALL, REDUCE_ANY, REDUCE_MAX, REDUCE_MIN,
REDUCE_PRODUCT, REDUCE_SUM.

Shared rules (every §2.9.x): ``input`` has rank 1 to 4 (argument table), ``axis`` is an int32 in
``[0, rank(shape1) - 1]`` (``ERROR_IF(axis < 0 || axis >= rank(shape1))``) and the output keeps the
rank with ``shape[axis] == 1`` (``ERROR_IF(shape[axis] != 1)``); the other output dimensions equal the
input's (the pseudocode reads ``output`` at ``out_index`` = the input index with ``axis`` set to 0).
Input and output have the same element type (``in_out_t``).

The module also holds small shape/attribute checks that the data-layout, scatter/gather and image
modules share (rank ranges, axis ranges, int32 attribute ranges).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.irdl import irdl_op_definition, operand_def, result_def, traits_def
from xdsl.traits import Pure

from nnkiln.dialects.tosa.base import (
    Kind,
    Shape,
    TosaOp,
    TypeMode,
    int_prop,
    require_shape,
    same_type_modes,
    shape_of,
)

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1


# ----------------------------------------------------------------------------------------------
# Shared helpers (used by ops_data_layout, ops_scatter_gather, ops_image)


def require_rank(shape: Shape, lo: int, hi: int | None, what: str) -> None:
    """ERROR_IF the rank of ``shape`` is outside ``[lo, hi]`` (``hi=None``: no upper limit)."""
    rank = len(shape)
    ok = rank >= lo and (hi is None or rank <= hi)
    bound = f"{lo} <= rank({what}) <= {hi}" if hi is not None else f"rank({what}) >= {lo}"
    require_shape(ok, bound, f"rank({what}) = {rank} (shape {list(shape)})")


def require_axis(axis: int, rank: int, what: str = "shape1") -> None:
    """``ERROR_IF(axis < 0 || axis >= rank(...))``."""
    require_shape(0 <= axis < rank, f"0 <= axis < rank({what})", f"axis = {axis} but rank({what}) = {rank}")


def require_int32(name: str, values: int | Sequence[int]) -> None:
    """The attribute (or every element of it) fits the spec's ``int32_t``."""
    vals = [values] if isinstance(values, int) else list(values)
    bad = [v for v in vals if not INT32_MIN <= v <= INT32_MAX]
    require_shape(not bad, f"{name} fits int32", f"{name} has values outside int32: {bad}")


def require_length(name: str, values: Sequence[Any], length: int, of: str) -> None:
    """A list attribute has the length the argument table gives (e.g. ``[rank(input1)]``)."""
    require_shape(len(values) == length, f"length({name}) == {of}",
                  f"length({name}) = {len(values)} but {of} = {length}")


# ----------------------------------------------------------------------------------------------
# The reductions


class _Reduce(TosaOp):
    """input (rank 1..4) reduced along ``axis`` → output with the same rank and ``shape[axis] == 1``."""

    TYPE_SLOTS: ClassVar[tuple[str, ...]] = ("input", "output")
    input = operand_def(TensorType)
    output = result_def(TensorType)
    axis = int_prop()
    traits = traits_def(Pure())

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        shape1 = tuple(shapes[0])
        axis = int(attrs["axis"])
        require_rank(shape1, 1, 4, "shape1")
        require_axis(axis, len(shape1))
        out = list(shape1)
        out[axis] = 1
        return [tuple(out)]

    def verify_shapes(self, attrs: Mapping[str, Any]) -> None:
        # Name the spec's own rule ERROR_IF(shape[axis] != 1) before the generic comparison.
        shape = shape_of(self.output)
        axis = int(attrs["axis"])
        expected = type(self).infer_shapes([shape_of(self.input)], **attrs)[0]
        if len(shape) == len(expected) and 0 <= axis < len(shape):
            require_shape(shape[axis] == 1, "shape[axis] == 1",
                          f"output shape {list(shape)} has shape[{axis}] = {shape[axis]}")
        super().verify_shapes(attrs)


_INT_AND_FLOAT = same_type_modes(Kind.I8, Kind.I16, Kind.I32, Kind.F16, Kind.BF16, Kind.F32)
_FLOATS = same_type_modes(Kind.F16, Kind.BF16, Kind.F32)


@irdl_op_definition
class ReduceAllOp(_Reduce):
    """REDUCE_ALL (spec §2.9.1): logical AND along ``axis`` (initial value true). Boolean only."""

    name = "tosa.reduce_all"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = same_type_modes(Kind.BOOL)


@irdl_op_definition
class ReduceAnyOp(_Reduce):
    """REDUCE_ANY (spec §2.9.2): logical OR along ``axis`` (initial value false). Boolean only."""

    name = "tosa.reduce_any"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = same_type_modes(Kind.BOOL)


@irdl_op_definition
class ReduceMaxOp(_Reduce):
    """REDUCE_MAX (spec §2.9.3): ``apply_max`` along ``axis`` from ``minimum<in_out_t>``.

    Types: BI int8/int16/int32; MI fp16/bf16/fp32.
    """

    name = "tosa.reduce_max"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = _INT_AND_FLOAT


@irdl_op_definition
class ReduceMinOp(_Reduce):
    """REDUCE_MIN (spec §2.9.4): ``apply_min`` along ``axis`` from ``maximum<in_out_t>``.

    Types: BI int8/int16/int32; MI fp16/bf16/fp32.
    """

    name = "tosa.reduce_min"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = _INT_AND_FLOAT


@irdl_op_definition
class ReduceProductOp(_Reduce):
    """REDUCE_PRODUCT (spec §2.9.5): product along ``axis`` from 1.0. MI floats only (no BI mode)."""

    name = "tosa.reduce_product"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = _FLOATS


@irdl_op_definition
class ReduceSumOp(_Reduce):
    """REDUCE_SUM (spec §2.9.6): ``apply_add`` along ``axis`` from 0.

    Types: BI int32 only (int8/int16 must be RESCALEd first); MI fp16/bf16/fp32. Integer overflow of
    a partial sum is a REQUIRE (run time, unpredictable), not a verifier error.
    """

    name = "tosa.reduce_sum"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = same_type_modes(Kind.I32, Kind.F16, Kind.BF16, Kind.F32)
