"""TOSA 0.30 §2.10 data-layout operators: CONCAT, PAD, RESHAPE, REVERSE, SLICE, TILE, TRANSPOSE.

All seven move data without conversion; their "Supported Data Types" tables are identical: BI
(profile "Any") Boolean, int8, int16, int32 and MI fp16, bf16, fp32, input and output of the same
type. Every list attribute is an ``int32_t`` list in the spec and an ``array<i64: ...>`` here (range
checked). Spec §1.8.1 requires every tensor dimension to be >= 1, which the shape rules below rely on
(RESHAPE's ``new_shape``, TILE's ``multiples``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, TensorType, i1
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def, traits_def, var_operand_def
from xdsl.pattern_rewriter import RewritePattern
from xdsl.traits import HasCanonicalizationPatternsTrait, Pure

from nnkiln.dialects.tosa.base import (
    Kind,
    Shape,
    TosaOp,
    TypeMode,
    int_array_prop,
    int_prop,
    kind_of,
    require,
    require_shape,
    same_type_modes,
    shape_of,
)
from nnkiln.dialects.tosa.ops_reduction import require_axis, require_int32, require_length, require_rank

LAYOUT_MODES: tuple[TypeMode, ...] = same_type_modes(
    Kind.BOOL, Kind.I8, Kind.I16, Kind.I32, Kind.F16, Kind.BF16, Kind.F32
)
"""The shared §2.10 table: Boolean/int8/int16/int32 (BI, "Any") and fp16/bf16/fp32 (MI)."""


class PadCanonicalization(HasCanonicalizationPatternsTrait):
    """PAD with all-zero padding → its input (``nnkiln.dialects.tosa.canonicalization``)."""

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        from nnkiln.dialects.tosa.canonicalization import PAD_PATTERNS

        return PAD_PATTERNS


class ReshapeCanonicalization(HasCanonicalizationPatternsTrait):
    """RESHAPE of RESHAPE → one RESHAPE; RESHAPE to the input's type → the input
    (``nnkiln.dialects.tosa.canonicalization``)."""

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        from nnkiln.dialects.tosa.canonicalization import RESHAPE_PATTERNS

        return RESHAPE_PATTERNS


class SliceCanonicalization(HasCanonicalizationPatternsTrait):
    """SLICE of the full extent → its input (``nnkiln.dialects.tosa.canonicalization``)."""

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        from nnkiln.dialects.tosa.canonicalization import SLICE_PATTERNS

        return SLICE_PATTERNS


class TileCanonicalization(HasCanonicalizationPatternsTrait):
    """TILE with all multiples 1 → its input (``nnkiln.dialects.tosa.canonicalization``)."""

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        from nnkiln.dialects.tosa.canonicalization import TILE_PATTERNS

        return TILE_PATTERNS


class TransposeCanonicalization(HasCanonicalizationPatternsTrait):
    """TRANSPOSE of TRANSPOSE → one TRANSPOSE or none; identity TRANSPOSE → its input
    (``nnkiln.dialects.tosa.canonicalization``)."""

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        from nnkiln.dialects.tosa.canonicalization import TRANSPOSE_PATTERNS

        return TRANSPOSE_PATTERNS


class _Layout(TosaOp):
    """``input1`` → ``output`` of the same element type."""

    TYPE_SLOTS: ClassVar[tuple[str, ...]] = ("input1", "output")
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = LAYOUT_MODES
    input1 = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())


@irdl_op_definition
class ConcatOp(TosaOp):
    """CONCAT (spec §2.10.1): concatenate the list ``input1`` along ``axis``.

    ERROR_IF: ``axis`` outside ``[0, rank(shapes1[0]) - 1]``; an input of another rank; an input
    dimension other than ``axis`` that differs from ``shapes1[0]``; ``shape[axis]`` not the sum of the
    inputs' ``axis`` dimensions. All inputs must have the same data type (argument table).
    Decision: the list must hold at least one tensor (the rules index ``shapes1[0]``); there is no
    rank limit other than rank >= 1, which the axis range implies.
    """

    name = "tosa.concat"
    TYPE_SLOTS: ClassVar[tuple[str, ...]] = ("input1", "output")
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = LAYOUT_MODES
    input1 = var_operand_def(TensorType)
    output = result_def(TensorType)
    axis = int_prop()
    traits = traits_def(Pure())

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        require_shape(len(shapes) >= 1, "length(input1) >= 1", "CONCAT needs at least one input tensor")
        axis = int(attrs["axis"])
        first = tuple(shapes[0])
        require_axis(axis, len(first), "shapes1[0]")
        for k, s in enumerate(shapes):
            require_shape(len(s) == len(first), "rank(input_shape) == rank(shapes1[0])",
                          f"input {k} has rank {len(s)} but input 0 has rank {len(first)}")
            for i, (d, d0) in enumerate(zip(s, first)):
                require_shape(i == axis or d == d0, "input_shape[index] == shapes1[0][index] for index != axis",
                              f"input {k} has dimension {i} = {d} but input 0 has {d0} (axis = {axis})")
        out = list(first)
        out[axis] = sum(int(s[axis]) for s in shapes)
        return [tuple(out)]

    def verify_shapes(self, attrs: Mapping[str, Any]) -> None:
        expected = type(self).infer_shapes([shape_of(v) for v in self.input1], **attrs)[0]
        shape = shape_of(self.output)
        axis = int(attrs["axis"])
        if len(shape) == len(expected):
            require_shape(shape[axis] == expected[axis], "shape[axis] == sum(shapes1[k][axis] for all k)",
                          f"shape[{axis}] = {shape[axis]} but the inputs sum to {expected[axis]}")
        super().verify_shapes(attrs)

    def check(self, **attrs: Any) -> None:
        kinds = [kind_of(v.type) for v in self.input1]
        require(all(k == kinds[0] for k in kinds), "all inputs have the same data type",
                f"input element kinds differ: {[k.value if k else '?' for k in kinds]}")


@irdl_op_definition
class PadOp(_Layout):
    """PAD (spec §2.10.2): pad ``input1`` with ``pad_const`` by ``padding`` elements per border.

    Attribute forms (decisions):
    - ``padding`` is the spec's ``int32_t[rank(input1), 2]`` flattened row-major into
      ``array<i64: before_0, after_0, before_1, after_1, ...>`` (``2 * rank`` values; empty for rank 0).
      ERROR_IF any value < 0. Output ``shape[i] = shape1[i] + before_i + after_i``.
    - ``pad_const`` has the type ``in_out_t`` and, per §2.10.2, already includes the zero point (no
      separate zp attribute). Its attribute kind must match the tensor: ``true``/``false`` (i1) for
      Boolean, an integer attribute whose value fits int8/int16/int32 for integer tensors, a float
      attribute (any float width; the value must be representable as fp16 / bf16 without
      overflowing) for float tensors. It is required (no default: 0 vs 0.0 vs false is type-dependent).
    - Spec defect (inventory §1.3 #6): the pseudocode's bounds test ``index[i] >= length(shape[i])``
      compares the wrong variables; the intended test is ``index1[i] >= shape1[i]`` (an output
      position past the input's end is padding). Reference semantics follow the intended test; it has
      no effect on verification.
    """

    name = "tosa.pad"
    traits = traits_def(PadCanonicalization())
    padding = int_array_prop()
    pad_const = prop_def(IntegerAttr | FloatAttr)

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        shape1 = tuple(shapes[0])
        padding = tuple(int(p) for p in attrs["padding"])
        require_length("padding", padding, 2 * len(shape1), "2 * rank(input1)")
        require_int32("padding", padding)
        neg = [p for p in padding if p < 0]
        require_shape(not neg, "padding >= 0", f"padding {list(padding)} has negative values {neg}")
        return [tuple(d + padding[2 * i] + padding[2 * i + 1] for i, d in enumerate(shape1))]

    def check(self, **attrs: Any) -> None:
        kind = kind_of(self.input1.type)
        attr = self.pad_const
        if kind is None:
            return
        if kind is Kind.BOOL:
            require(isinstance(attr, IntegerAttr) and attr.type == i1, "pad_const is in_out_t (bool_t)",
                    f"pad_const = {attr} must be true or false for a Boolean tensor")
        elif kind.is_int:
            require(isinstance(attr, IntegerAttr) and attr.type != i1, f"pad_const is in_out_t ({kind.value})",
                    f"pad_const = {attr} must be an integer attribute for a {kind.value} tensor")
            assert isinstance(attr, IntegerAttr)
            lo, hi = kind.int_range
            value = int(attr.value.data)
            require(lo <= value <= hi, f"pad_const fits {kind.value}",
                    f"pad_const = {value} is outside [{lo}, {hi}]")
        else:
            require(isinstance(attr, FloatAttr), f"pad_const is in_out_t ({kind.value})",
                    f"pad_const = {attr} must be a float attribute for a {kind.value} tensor")
            assert isinstance(attr, FloatAttr)
            value = float(attr.value.data)
            require(not math.isfinite(value) or math.isfinite(_as_float_kind(value, kind)),
                    f"pad_const fits {kind.value}", f"pad_const = {value} overflows {kind.value}")


def _as_float_kind(value: float, kind: Kind) -> float:
    if kind is Kind.F16:
        with np.errstate(over="ignore"):
            return float(np.float16(value))
    if kind is Kind.BF16:
        with np.errstate(over="ignore"):
            return float(np.array(value, dtype=np.float32).astype(ml_dtypes.bfloat16))
    with np.errstate(over="ignore"):
        return float(np.float32(value))


@irdl_op_definition
class ReshapeOp(_Layout):
    """RESHAPE (spec §2.10.3): the same elements in row-major order with shape ``new_shape``.

    Any rank (including 0, ``new_shape = array<i64>``). ERROR_IF ``tensor_size(shape1) !=
    tensor_size(shape)``. ``new_shape`` is the output shape (``[rank(shape)]``): it must equal the result
    type's shape. Decision: every ``new_shape`` value must be >= 1 (spec §1.8.1); 0.30 has no ``-1``
    "infer this dimension" convention, so ``-1`` is an error.
    """

    name = "tosa.reshape"
    traits = traits_def(ReshapeCanonicalization())
    new_shape = int_array_prop()

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        shape1 = tuple(shapes[0])
        new_shape = tuple(int(d) for d in attrs["new_shape"])
        require_int32("new_shape", new_shape)
        bad = [d for d in new_shape if d < 1]
        require_shape(not bad, "new_shape[i] >= 1",
                      f"new_shape {list(new_shape)} has dimensions < 1 {bad} (no -1 inference in TOSA 0.30)")
        size1, size = math.prod(shape1), math.prod(new_shape)
        require_shape(size1 == size, "tensor_size(shape1) == tensor_size(shape)",
                      f"input {list(shape1)} has {size1} elements but new_shape {list(new_shape)} has {size}")
        return [new_shape]


@irdl_op_definition
class ReverseOp(TosaOp):
    """REVERSE (spec §2.10.4): reverse ``input`` along ``axis``; output has the input's shape.

    Rank 1 to 4 (argument table); ERROR_IF ``axis`` outside ``[0, rank(shape) - 1]``.
    """

    name = "tosa.reverse"
    TYPE_SLOTS: ClassVar[tuple[str, ...]] = ("input", "output")
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = LAYOUT_MODES
    input = operand_def(TensorType)
    output = result_def(TensorType)
    axis = int_prop()
    traits = traits_def(Pure())

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        shape = tuple(shapes[0])
        require_rank(shape, 1, 4, "shape")
        require_axis(int(attrs["axis"]), len(shape), "shape")
        return [shape]


@irdl_op_definition
class SliceOp(_Layout):
    """SLICE (spec §2.10.5): the box of ``input1`` from ``start`` with extent ``size``.

    Rank 1 to 4 (argument table). ERROR_IF: ``length(start)`` or ``length(size)`` != rank(input1);
    ``start[i] < 0``; ``size[i] <= 0``; ``start[i] + size[i] > shape1[i]``; ``shape[i] != size[i]``
    (the output shape is ``size``).
    """

    name = "tosa.slice"
    traits = traits_def(SliceCanonicalization())
    start = int_array_prop()
    size = int_array_prop()

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        shape1 = tuple(shapes[0])
        start = tuple(int(v) for v in attrs["start"])
        size = tuple(int(v) for v in attrs["size"])
        require_rank(shape1, 1, 4, "input1")
        require_length("start", start, len(shape1), "rank(input1)")
        require_length("size", size, len(shape1), "rank(input1)")
        require_int32("start", start)
        require_int32("size", size)
        for i, (b, n, d) in enumerate(zip(start, size, shape1)):
            require_shape(b >= 0, "start[index] >= 0", f"start[{i}] = {b}")
            require_shape(n > 0, "size[index] > 0", f"size[{i}] = {n}")
            require_shape(b + n <= d, "start[index] + size[index] <= shape1[index]",
                          f"start[{i}] + size[{i}] = {b} + {n} = {b + n} > shape1[{i}] = {d}")
        return [size]


@irdl_op_definition
class TileOp(_Layout):
    """TILE (spec §2.10.6): replicate ``input1`` ``multiples[i]`` times along each dimension.

    Rank 1 to 4 (argument table); ``length(multiples) == rank(shape1)``; ERROR_IF
    ``shape1[i] * multiples[i] != shape[i]``. Decision: ``multiples[i] >= 1`` (an output dimension
    must be >= 1, spec §1.8.1).
    """

    name = "tosa.tile"
    traits = traits_def(TileCanonicalization())
    multiples = int_array_prop()

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        shape1 = tuple(shapes[0])
        multiples = tuple(int(m) for m in attrs["multiples"])
        require_rank(shape1, 1, 4, "shape1")
        require_length("multiples", multiples, len(shape1), "rank(shape1)")
        require_int32("multiples", multiples)
        bad = [m for m in multiples if m < 1]
        require_shape(not bad, "multiples[i] >= 1", f"multiples {list(multiples)} has values < 1 {bad}")
        return [tuple(d * m for d, m in zip(shape1, multiples))]


@irdl_op_definition
class TransposeOp(_Layout):
    """TRANSPOSE (spec §2.10.7): output dimension ``i`` is input dimension ``perms[i]``.

    Rank >= 1 (argument table: "minimum rank of one"); ``length(perms) == rank(input1)``; ERROR_IF a
    ``perms`` value is < 0, >= rank(shape1) or repeated; ERROR_IF ``shape1[perms[i]] != shape[i]``.
    """

    name = "tosa.transpose"
    traits = traits_def(TransposeCanonicalization())
    perms = int_array_prop()

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        shape1 = tuple(shapes[0])
        perms = tuple(int(p) for p in attrs["perms"])
        require_rank(shape1, 1, None, "input1")
        require_length("perms", perms, len(shape1), "rank(input1)")
        used: set[int] = set()
        for p in perms:
            require_shape(0 <= p < len(shape1), "0 <= perms[i] < rank(shape1)",
                          f"perms {list(perms)} has {p} but rank(shape1) = {len(shape1)}")
            require_shape(p not in used, "perms values are not repeated", f"perms {list(perms)} repeats {p}")
            used.add(p)
        return [tuple(shape1[p] for p in perms)]
