"""TOSA 0.30 §2.12 image operators: RESIZE, with its ``mode_t`` enumeration (BILINEAR, NEAREST)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import StrEnum
from fractions import Fraction
from typing import Any, ClassVar, Self

from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    Float32Type,
    IntegerType,
    TensorType,
    f32,
    i64,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, SpacedOpaqueSyntaxAttribute, SSAValue
from xdsl.irdl import irdl_attr_definition, irdl_op_definition, operand_def, prop_def, result_def, traits_def
from xdsl.traits import Pure

from nnkiln.dialects.tosa.base import (
    Kind,
    Profile,
    Shape,
    TosaOp,
    TypeMode,
    int_array_prop,
    int_prop,
    kind_of,
    modes,
    register_enum_attr,
    require,
    require_shape,
    shape_of,
)
from nnkiln.dialects.tosa.ops_reduction import require_int32, require_length

MAX_IMAGE_DIM = 16384
"""``ERROR_IF(max(OH,OW,IH,IW) >= 16384)`` (spec §2.12.1)."""


class ResizeMode(StrEnum):
    """``mode_t`` of RESIZE (spec §2.12.1, "Resize Modes")."""

    NEAREST = "NEAREST"
    BILINEAR = "BILINEAR"


@irdl_attr_definition
class ResizeModeAttr(EnumAttribute[ResizeMode], SpacedOpaqueSyntaxAttribute):
    """``#tosa<resize_mode BILINEAR>`` / ``#tosa<resize_mode NEAREST>``."""

    name = "tosa.resize_mode"


register_enum_attr(ResizeMode, ResizeModeAttr)

ResizeValue = int | float


def idiv(a: int, b: int) -> int:
    """The spec's ``idiv`` (§3 helpers): integer division truncating toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def resize_output_dim(in_dim: int, stride: ResizeValue, offset: ResizeValue, border: int, shift: int) -> int:
    """``idiv((I - 1) * (1 << shift) - offset, stride) + 1 + border`` (spec §2.12.1), ``stride > 0``.

    Integer modes use exact integer ``idiv``. Float modes (``resize_t`` = fp32, ``shift`` = 0): the
    spec applies ``idiv`` to fp32 values without defining it; decision: the exact quotient of the
    attribute's fp32 values, truncated toward zero (no intermediate rounding, so the result does not
    depend on the host's float arithmetic). Frontends use this function with ``border = 0`` to choose
    the ``border`` that produces the size they want.
    """
    if isinstance(stride, float) or isinstance(offset, float):
        num = Fraction(in_dim - 1) * (1 << shift) - Fraction(offset)
        return math.trunc(num / Fraction(stride)) + 1 + border
    return idiv((in_dim - 1) * (1 << shift) - int(offset), int(stride)) + 1 + border


def _values(v: Any) -> tuple[ResizeValue, ...]:
    """A resize_t list attribute as Python values (ints for an i64 array, floats for an f32 array)."""
    if isinstance(v, DenseArrayBase):
        conv = int if isinstance(v.elt_type, IntegerType) else float
        return tuple(conv(x) for x in v.get_values())
    return tuple(v)


@irdl_op_definition
class ResizeOp(TosaOp):
    """RESIZE (spec §2.12.1): resize ``input [N,IH,IW,C]`` in H and W to ``output [N,OH,OW,C]``.

    Attributes (decisions on representation):
    - ``output_size``, ``border``: ``array<i64: y, x>`` (int32 ranges checked); ``shift``: i64 (int32).
    - ``stride``, ``offset`` have type ``resize_t``: int16 for the integer modes, fp32 for the float
      modes. Integer modes: ``array<i64: y, x>`` (the int16 range is checked and is implied by the
      ERROR_IF ranges below); float modes: ``array<f32: y, x>``. The wrong form for the input's element
      kind is an error. ``infer_shapes`` tells the modes apart by the Python value types: float values
      mean resize_t = fp32.
    - ``mode``: ``#tosa<resize_mode BILINEAR>`` or ``#tosa<resize_mode NEAREST>`` (``ResizeMode``).

    ERROR_IF (all modes): ``stride_x <= 0 || stride_y <= 0``; ``max(OH, OW, IH, IW) >= 16384``.
    Float modes: ``shift != 0``; ``stride_x > IW || stride_y > IH``. Integer modes: ``shift`` outside
    ``[1, 11]``; ``stride >= (16 << shift)``; ``offset <= (-16 << shift) || offset >= (16 << shift)``.
    Decision: OH/OW must also be >= 1 (spec §1.8.1).

    Output size (spec defect, inventory §1.3 #13): the spec derives ``OH = idiv((IH-1)*(1<<shift) -
    offset_y, stride_y) + 1 + border_y`` (likewise OW) and never relates it to ``output_size``.
    Decision: ``output_size`` is the source of truth for the result type and must equal the derived
    ``[OH, OW]`` (ERROR_IF otherwise; see ``resize_output_dim`` for the float-mode arithmetic).

    Types (the table's mode names include the interpolation mode): i8 BILINEAR → i32 and i16
    BILINEAR → i48 (the result has ``2 * shift`` fractional bits and needs a RESCALE), i8/i16 NEAREST
    → same type (BI); fp16/bf16/fp32 → same type with either mode (MI). An integer row used with the
    other ``mode`` (e.g. i8 → i32 with NEAREST) is an error.
    """

    name = "tosa.resize"
    TYPE_SLOTS: ClassVar[tuple[str, ...]] = ("input", "output")
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = modes(
        Profile.BI,
        ("signed 8, bilinear", (Kind.I8, Kind.I32)),
        ("signed 8, nearest", (Kind.I8, Kind.I8)),
        ("signed 16, bilinear", (Kind.I16, Kind.I48)),
        ("signed 16, nearest", (Kind.I16, Kind.I16)),
    ) + modes(
        Profile.MI,
        ("fp16", (Kind.F16, Kind.F16)),
        ("bf16", (Kind.BF16, Kind.BF16)),
        ("fp32", (Kind.F32, Kind.F32)),
    )
    _MODE_OF_ROW: ClassVar[dict[str, ResizeMode]] = {
        "signed 8, bilinear": ResizeMode.BILINEAR,
        "signed 8, nearest": ResizeMode.NEAREST,
        "signed 16, bilinear": ResizeMode.BILINEAR,
        "signed 16, nearest": ResizeMode.NEAREST,
    }

    input = operand_def(TensorType)
    output = result_def(TensorType)
    output_size = int_array_prop()
    stride = prop_def(DenseArrayBase[I64] | DenseArrayBase[Float32Type])
    offset = prop_def(DenseArrayBase[I64] | DenseArrayBase[Float32Type])
    border = int_array_prop()
    shift = int_prop()
    mode = prop_def(ResizeModeAttr)
    traits = traits_def(Pure())

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        shape = tuple(shapes[0])
        require_shape(len(shape) == 4, "input is [N,IH,IW,C]", f"input has shape {list(shape)}")
        n, ih, iw, c = shape
        stride, offset = _values(attrs["stride"]), _values(attrs["offset"])
        border = tuple(int(v) for v in attrs["border"])
        shift = int(attrs["shift"])
        output_size = attrs.get("output_size")
        for name, vals in (("stride", stride), ("offset", offset), ("border", border)):
            require_length(name, vals, 2, "2")
        require_int32("border", border)
        require_int32("shift", shift)
        is_float = [isinstance(v, float) for v in stride + offset]
        require_shape(all(is_float) or not any(is_float), "stride and offset have one resize_t",
                      f"stride = {list(stride)} and offset = {list(offset)} mix integer and float values")
        float_mode = all(is_float)
        stride_y, stride_x = stride
        offset_y, offset_x = offset
        require_shape(stride_x > 0 and stride_y > 0, "stride_x > 0 && stride_y > 0",
                      f"stride = [{stride_y}, {stride_x}]")
        if float_mode:
            require_shape(shift == 0, "shift == 0 for a float resize_t", f"shift = {shift}")
            require_shape(stride_x <= iw and stride_y <= ih, "stride_x <= IW && stride_y <= IH",
                          f"stride = [{stride_y}, {stride_x}] but [IH, IW] = [{ih}, {iw}]")
        else:
            require_shape(1 <= shift <= 11, "1 <= shift <= 11 for an integer resize_t", f"shift = {shift}")
            limit = 16 << shift
            for axis, s in (("y", stride_y), ("x", stride_x)):
                require_shape(s < limit, f"stride_{axis} < (16 << shift)",
                              f"stride_{axis} = {s} but 16 << {shift} = {limit}")
            for axis, o in (("y", offset_y), ("x", offset_x)):
                require_shape(-limit < o < limit, f"(-16 << shift) < offset_{axis} < (16 << shift)",
                              f"offset_{axis} = {o} but 16 << {shift} = {limit}")
        oh = resize_output_dim(ih, stride_y, offset_y, border[0], shift)
        ow = resize_output_dim(iw, stride_x, offset_x, border[1], shift)
        if output_size is not None:
            size = tuple(int(v) for v in output_size)
            require_length("output_size", size, 2, "2")
            require_shape(size == (oh, ow),
                          "output_size == [OH, OW] with OH = idiv((IH-1)*(1<<shift) - offset_y, stride_y) + 1 "
                          "+ border_y (likewise OW)",
                          f"output_size = {list(size)} but the attributes give [OH, OW] = [{oh}, {ow}]")
        require_shape(oh >= 1 and ow >= 1, "OH >= 1 && OW >= 1", f"[OH, OW] = [{oh}, {ow}]")
        big = max(oh, ow, ih, iw)
        require_shape(big < MAX_IMAGE_DIM, "max(OH, OW, IH, IW) < 16384",
                      f"[OH, OW, IH, IW] = [{oh}, {ow}, {ih}, {iw}]")
        return [(n, oh, ow, c)]

    def check(self, **attrs: Any) -> None:
        kind = kind_of(self.input.type)
        assert kind is not None  # the type-mode lookup ran first
        want = Float32Type if kind.is_float else IntegerType
        resize_t = "fp32" if kind.is_float else "int16"
        for name in ("stride", "offset"):
            attr = self.properties[name]
            assert isinstance(attr, DenseArrayBase)
            form = "array<f32: y, x>" if kind.is_float else "array<i64: y, x>"
            require(isinstance(attr.elt_type, want), f"{name} is resize_t ({resize_t})",
                    f"{name} = {attr} must be {form} for {kind.value} input")
            if not kind.is_float:
                bad = [v for v in attrs[name] if not -(1 << 15) <= v < (1 << 15)]
                require(not bad, f"{name} fits int16", f"{name} has values outside int16: {bad}")
        row = self.type_mode().name
        needed = self._MODE_OF_ROW.get(row)
        mode = attrs["mode"]
        require(needed is None or mode == needed, f"mode {needed.value if needed else ''} for {row}",
                f"mode = {getattr(mode, 'value', mode)} but {row} needs {needed.value if needed else ''}")

    @classmethod
    def make(
        cls,
        operands: Sequence[SSAValue | Sequence[SSAValue]],
        result_element_types: Attribute | Sequence[Attribute],
        **attrs: Any,
    ) -> Self:
        """Like ``TosaOp.make``; ``stride``/``offset`` take the resize_t of the input's element kind
        (Python ints or floats are converted), and a missing ``output_size`` is derived."""
        first = operands[0]
        assert isinstance(first, SSAValue)
        kind = kind_of(first.type)
        is_float = kind is not None and kind.is_float
        conv = float if is_float else int
        for name in ("stride", "offset"):
            vals = _values(attrs[name])
            attrs[name] = DenseArrayBase.from_list(f32 if is_float else i64, [conv(v) for v in vals])
        if attrs.get("output_size") is None:
            out = cls.infer_shapes([shape_of(first)], **{k: v for k, v in attrs.items() if k != "output_size"})
            attrs["output_size"] = (out[0][1], out[0][2])
        return super().make(operands, result_element_types, **attrs)
