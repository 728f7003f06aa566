"""Uniform quantized element types of MLIR's ``quant`` dialect.

Two types share the mnemonic ``!quant.uniform`` (as in MLIR):

- ``UniformQuantizedType`` (per tensor): ``!quant.uniform<i8:f32, 5.000000e-01:-3>`` —
  ``real = scale * (stored - zero_point)``;
- ``UniformQuantizedPerAxisType``: ``!quant.uniform<i8:f32:1, {1.000000e-01:2,2.000000e-01:3}>`` —
  one (scale, zero point) pair per index of dimension ``quantized_dimension``.

Grammar (MLIR's)::

    uniform      ::= `!quant.uniform` `<` storage-spec `:` expressed-type
                     ( `,` scale-zero | `:` axis `,` `{` scale-zero (`,` scale-zero)* `}` ) `>`
    storage-spec ::= (`i` | `u`) width (`<` min `:` max `>`)?
    scale-zero   ::= float (`:` integer)?          (a missing zero point is 0)

Storage: ``iN`` is signed (held as a *signless* ``IntegerType``, as MLIR does), ``uN`` is
unsigned (``IntegerType(N, Signedness.UNSIGNED)``); 1 <= N <= 32 (MLIR's limit). The storage range
``<min:max>`` defaults to the full range of the storage type and is printed only when it differs.

Decisions:

- Printing follows MLIR's ``printQuantParams``: scales in C ``%e`` form (``5.000000e-01``), the zero
  point only when non-zero, per-axis pairs separated by ``,`` without a space. MLIR's 6-digit ``%e``
  loses precision; here, when 6 digits do not give back the same double, more digits are printed
  (the shortest ``%.Ne`` that round-trips), so print → parse is exact. MLIR parses both forms.
- Verification (at construction, so a bad type never exists; the parser reports it as a parse error
  at the type): the scale is finite, > 0 and within the expressed type's range (MLIR's
  ``[smallest subnormal, largest finite]``); ``storage_type_min <= storage_type_max``, both inside the
  storage type's range; the zero point lies in ``[storage_type_min, storage_type_max]`` (stricter
  than MLIR, which does not check zero points); per axis: at least one pair, as many zero points as
  scales, ``quantized_dimension >= 0``. Expressed types: ``f16``, ``bf16``, ``f32``.
- The types are immutable xDSL attributes (frozen dataclasses); equality compares every parameter
  (``i8`` equals ``i8<-128:127>`` because the default range is stored explicitly).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    Float16Type,
    Float32Type,
    FloatData,
    IntAttr,
    IntegerType,
    Signedness,
)
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer

from nnkiln.ir.errors import VerifyError

MAX_STORAGE_BITS = 32
"""MLIR's ``QuantizedType::MaxStorageBits``."""

ExpressedType = Float16Type | BFloat16Type | Float32Type

# [smallest positive subnormal, largest finite] of each expressed type (MLIR's min/max scale).
_SCALE_RANGE: dict[type, tuple[float, float]] = {
    Float16Type: (2.0**-24, 65504.0),
    BFloat16Type: (2.0**-133, float.fromhex("0x1.fe00000000000p+127")),
    Float32Type: (2.0**-149, float.fromhex("0x1.fffffe0000000p+127")),
}

_STORAGE_RE = re.compile(r"([iu])([0-9]+)")


# ----------------------------------------------------------------------------------------------
# Helpers


def storage_range(storage_type: IntegerType) -> tuple[int, int]:
    """The full range of a storage type: ``[-2^(N-1), 2^(N-1)-1]`` for ``iN``, ``[0, 2^N-1]`` for ``uN``."""
    width = storage_type.width.data
    if storage_type.signedness.data == Signedness.UNSIGNED:
        return 0, (1 << width) - 1
    return -(1 << (width - 1)), (1 << (width - 1)) - 1


def is_signed_storage(storage_type: IntegerType) -> bool:
    """``iN`` (signless integer type) is signed storage; ``uN`` is unsigned."""
    return storage_type.signedness.data != Signedness.UNSIGNED


def storage_type_from_name(name: str) -> IntegerType:
    """``"i8"`` → signless ``i8`` (signed storage), ``"u8"`` → ``ui8``; ``"ui8"``/``"si8"`` are accepted too."""
    m = re.fullmatch(r"(u|i|ui|si)([0-9]+)", name)
    if m is None:
        raise VerifyError(f"storage type '{name}' is not iN or uN", rule="quant storage type")
    width = int(m.group(2))
    if m.group(1) in ("u", "ui"):
        return IntegerType(width, Signedness.UNSIGNED)
    return IntegerType(width)


def _normalize_storage(storage_type: IntegerType | str) -> IntegerType:
    if isinstance(storage_type, str):
        return storage_type_from_name(storage_type)
    if isinstance(storage_type, IntegerType) and storage_type.signedness.data == Signedness.SIGNED:
        return IntegerType(storage_type.width.data)
    return storage_type


def format_scale(scale: float) -> str:
    """MLIR's ``%e`` form (``5.000000e-01``), with more digits only if 6 would not round-trip."""
    for digits in range(6, 18):
        text = f"{scale:.{digits}e}"
        if float(text) == scale:
            return text
    return repr(scale)


def _fail(rule: str, detail: str) -> None:
    raise VerifyError(detail, op_name="!quant.uniform", rule=rule)


def _verify_common(storage: Attribute, expressed: Attribute, lo: int, hi: int) -> None:
    if not isinstance(storage, IntegerType) or storage.signedness.data == Signedness.SIGNED:
        _fail("storage type is iN or uN", f"storage type {storage} is not a signless or unsigned integer type")
    assert isinstance(storage, IntegerType)
    width = storage.width.data
    if not 1 <= width <= MAX_STORAGE_BITS:
        _fail(f"1 <= storage width <= {MAX_STORAGE_BITS}", f"storage type width is {width}")
    if not isinstance(expressed, ExpressedType):
        _fail("expressed type is f16, bf16 or f32", f"expressed type is {expressed}")
    smin, smax = storage_range(storage)
    if not (smin <= lo <= hi <= smax):
        _fail("storage_type_min <= storage_type_max within the storage type",
              f"storage range [{lo}, {hi}] is not an ordered sub-range of [{smin}, {smax}] ({_storage_name(storage)})")


def _verify_pair(expressed: Attribute, scale: float, zero_point: int, lo: int, hi: int, where: str = "") -> None:
    tiny, huge = _SCALE_RANGE[type(expressed)]
    if not (math.isfinite(scale) and scale > 0):
        _fail("scale > 0 and finite", f"scale{where} = {scale!r}")
    if not tiny <= scale <= huge:
        _fail("scale within the expressed type's range",
              f"scale{where} = {scale!r} is outside [{tiny!r}, {huge!r}] of {expressed}")
    if not lo <= zero_point <= hi:
        _fail("storage_type_min <= zero_point <= storage_type_max",
              f"zero point{where} = {zero_point} is outside the storage range [{lo}, {hi}]")


def _storage_name(storage: IntegerType) -> str:
    return ("i" if is_signed_storage(storage) else "u") + str(storage.width.data)


# ----------------------------------------------------------------------------------------------
# Shared behaviour


class _UniformBase(ParametrizedAttribute, TypeAttribute):
    """What both uniform types share: storage and expressed types, storage range, printing."""

    name: ClassVar[str] = "quant.uniform"

    if TYPE_CHECKING:
        storage_type: IntegerType
        expressed_type: Attribute
        storage_min_attr: IntAttr
        storage_max_attr: IntAttr

    @property
    def storage_type_min(self) -> int:
        return self.storage_min_attr.data

    @property
    def storage_type_max(self) -> int:
        return self.storage_max_attr.data

    @property
    def is_signed(self) -> bool:
        return is_signed_storage(self.storage_type)

    @property
    def storage_width(self) -> int:
        return self.storage_type.width.data

    @property
    def has_default_storage_range(self) -> bool:
        return (self.storage_type_min, self.storage_type_max) == storage_range(self.storage_type)

    def _print_storage_and_expressed(self, printer: Printer) -> None:
        printer.print_string(_storage_name(self.storage_type))
        if not self.has_default_storage_range:
            printer.print_string(f"<{self.storage_type_min}:{self.storage_type_max}>")
        printer.print_string(":")
        printer.print_attribute(self.expressed_type)

    @staticmethod
    def _print_pair(printer: Printer, scale: float, zero_point: int) -> None:
        printer.print_string(format_scale(scale))
        if zero_point != 0:
            printer.print_string(f":{zero_point}")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        """Parse either form; the parameter list's length tells ``new`` which class to build."""
        start = parser.pos
        with parser.in_angle_brackets():
            pos = parser.pos
            ident = parser.parse_identifier(" for the storage type (iN or uN)")
            m = _STORAGE_RE.fullmatch(ident)
            if m is None:
                parser.raise_error(f"expected a storage type iN or uN, got '{ident}'", pos, parser.pos)
            width = int(m.group(2))
            if not 1 <= width <= MAX_STORAGE_BITS:
                parser.raise_error(f"illegal storage type size: {width} (1..{MAX_STORAGE_BITS})", pos, parser.pos)
            signed = m.group(1) == "i"
            storage = IntegerType(width) if signed else IntegerType(width, Signedness.UNSIGNED)
            lo, hi = storage_range(storage)
            if parser.parse_optional_punctuation("<") is not None:
                lo = parser.parse_integer(allow_boolean=False)
                parser.parse_punctuation(":")
                hi = parser.parse_integer(allow_boolean=False)
                parser.parse_punctuation(">")
            parser.parse_punctuation(":")
            expressed = parser.parse_type()
            axis: int | None = None
            if parser.parse_optional_punctuation(":") is not None:
                axis = parser.parse_integer(allow_boolean=False)
            parser.parse_punctuation(",")
            if axis is None:
                scale, zp = cls._parse_pair(parser)
                params: list[Attribute] = [storage, expressed, FloatData(scale), IntAttr(zp), IntAttr(lo), IntAttr(hi)]
            else:
                pairs = parser.parse_comma_separated_list(parser.Delimiter.BRACES, lambda: cls._parse_pair(parser))
                params = [
                    storage,
                    expressed,
                    ArrayAttr([FloatData(s) for s, _ in pairs]),
                    ArrayAttr([IntAttr(z) for _, z in pairs]),
                    IntAttr(axis),
                    IntAttr(lo),
                    IntAttr(hi),
                ]
        try:
            (UniformQuantizedType if len(params) == 6 else UniformQuantizedPerAxisType).new(params)
        except VerifyError as err:
            parser.raise_error(f"invalid !quant.uniform type: [{err.rule}] {err.args[0]}", start, parser.pos)
        return params

    @staticmethod
    def _parse_pair(parser: AttrParser) -> tuple[float, int]:
        scale = float(parser.parse_number(context_msg=" for a scale"))
        zp = 0
        if parser.parse_optional_punctuation(":") is not None:
            zp = parser.parse_integer(allow_boolean=False)
        return scale, zp


# ----------------------------------------------------------------------------------------------
# The two types


@irdl_attr_definition
class UniformQuantizedType(_UniformBase):
    """Per-tensor uniform quantization: ``!quant.uniform<i8:f32, 5.000000e-01:-3>``.

    ``UniformQuantizedType(storage_type, expressed_type, scale, zero_point=0, storage_type_min=None,
    storage_type_max=None)``; ``storage_type`` is an ``IntegerType`` (signless = signed, ``ui`` =
    unsigned) or a name ``"i8"``/``"u8"``; min/max default to the storage type's full range.
    """

    name: ClassVar[str] = "quant.uniform"

    storage_type: IntegerType
    expressed_type: Attribute
    scale_attr: FloatData
    zero_point_attr: IntAttr
    storage_min_attr: IntAttr
    storage_max_attr: IntAttr

    def __init__(
        self,
        storage_type: IntegerType | str,
        expressed_type: Attribute,
        scale: float,
        zero_point: int = 0,
        storage_type_min: int | None = None,
        storage_type_max: int | None = None,
    ) -> None:
        storage = _normalize_storage(storage_type)
        lo, hi = storage_range(storage) if isinstance(storage, IntegerType) else (0, 0)
        lo = lo if storage_type_min is None else int(storage_type_min)
        hi = hi if storage_type_max is None else int(storage_type_max)
        super().__init__(storage, expressed_type, FloatData(float(scale)), IntAttr(int(zero_point)), IntAttr(lo), IntAttr(hi))

    @classmethod
    def new(cls, params: Sequence[Attribute]):  # type: ignore[override]
        # The parser calls ``new`` on the registered class; a per-axis parameter list builds the
        # per-axis type (both share the mnemonic ``quant.uniform``).
        if cls is UniformQuantizedType and len(params) == 7:
            return UniformQuantizedPerAxisType.new(params)
        return super().new(params)

    @property
    def scale(self) -> float:
        return self.scale_attr.data

    @property
    def zero_point(self) -> int:
        return self.zero_point_attr.data

    @property
    def scales(self) -> tuple[float, ...]:
        return (self.scale,)

    @property
    def zero_points(self) -> tuple[int, ...]:
        return (self.zero_point,)

    @property
    def is_per_axis(self) -> bool:
        return False

    def verify(self) -> None:
        _verify_common(self.storage_type, self.expressed_type, self.storage_type_min, self.storage_type_max)
        _verify_pair(self.expressed_type, self.scale, self.zero_point, self.storage_type_min, self.storage_type_max)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        self._print_storage_and_expressed(printer)
        printer.print_string(", ")
        self._print_pair(printer, self.scale, self.zero_point)
        printer.print_string(">")

    def __repr__(self) -> str:
        return f"UniformQuantizedType({self})"


@irdl_attr_definition
class UniformQuantizedPerAxisType(_UniformBase):
    """Per-axis uniform quantization: ``!quant.uniform<i8:f32:1, {1.000000e-01:2,2.000000e-01:3}>``.

    ``UniformQuantizedPerAxisType(storage_type, expressed_type, scales, zero_points,
    quantized_dimension, storage_type_min=None, storage_type_max=None)``; ``zero_points=None`` means
    all zero. Not registered separately: the dialect's ``quant.uniform`` entry is
    ``UniformQuantizedType``, whose ``new`` builds this class from a per-axis parameter list.
    """

    name: ClassVar[str] = "quant.uniform"

    storage_type: IntegerType
    expressed_type: Attribute
    scales_attr: ArrayAttr[FloatData]
    zero_points_attr: ArrayAttr[IntAttr]
    quantized_dimension_attr: IntAttr
    storage_min_attr: IntAttr
    storage_max_attr: IntAttr

    def __init__(
        self,
        storage_type: IntegerType | str,
        expressed_type: Attribute,
        scales: Sequence[float],
        zero_points: Sequence[int] | None,
        quantized_dimension: int,
        storage_type_min: int | None = None,
        storage_type_max: int | None = None,
    ) -> None:
        storage = _normalize_storage(storage_type)
        lo, hi = storage_range(storage) if isinstance(storage, IntegerType) else (0, 0)
        lo = lo if storage_type_min is None else int(storage_type_min)
        hi = hi if storage_type_max is None else int(storage_type_max)
        zps = [0] * len(scales) if zero_points is None else list(zero_points)
        super().__init__(
            storage,
            expressed_type,
            ArrayAttr([FloatData(float(s)) for s in scales]),
            ArrayAttr([IntAttr(int(z)) for z in zps]),
            IntAttr(int(quantized_dimension)),
            IntAttr(lo),
            IntAttr(hi),
        )

    @property
    def scales(self) -> tuple[float, ...]:
        return tuple(s.data for s in self.scales_attr.data)

    @property
    def zero_points(self) -> tuple[int, ...]:
        return tuple(z.data for z in self.zero_points_attr.data)

    @property
    def quantized_dimension(self) -> int:
        return self.quantized_dimension_attr.data

    @property
    def is_per_axis(self) -> bool:
        return True

    def verify(self) -> None:
        _verify_common(self.storage_type, self.expressed_type, self.storage_type_min, self.storage_type_max)
        scales, zps = self.scales, self.zero_points
        if not scales:
            _fail("per-axis type has at least one scale", "the scale list is empty")
        if len(scales) != len(zps):
            _fail("as many zero points as scales", f"{len(scales)} scales but {len(zps)} zero points")
        if self.quantized_dimension < 0:
            _fail("quantized_dimension >= 0", f"quantized_dimension = {self.quantized_dimension}")
        for i, (s, z) in enumerate(zip(scales, zps)):
            _verify_pair(self.expressed_type, s, z, self.storage_type_min, self.storage_type_max, f"[{i}]")

    def check_shape(self, shape: Sequence[int]) -> None:
        """A tensor of this element type has ``quantized_dimension < rank`` and as many pairs as
        the size of that dimension (MLIR's tensor-level check)."""
        if self.quantized_dimension >= len(shape):
            _fail("quantized_dimension < rank", f"quantized_dimension = {self.quantized_dimension} but rank = {len(shape)}")
        size = shape[self.quantized_dimension]
        if size >= 0 and size != len(self.scales):
            _fail("one scale per index of the quantized dimension",
                  f"dimension {self.quantized_dimension} has size {size} but there are {len(self.scales)} scales")

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        self._print_storage_and_expressed(printer)
        printer.print_string(f":{self.quantized_dimension}, {{")
        for i, (s, z) in enumerate(zip(self.scales, self.zero_points)):
            if i:
                printer.print_string(",")
            self._print_pair(printer, s, z)
        printer.print_string("}>")

    def __repr__(self) -> str:
        return f"UniformQuantizedPerAxisType({self})"


QuantizedType = (UniformQuantizedType, UniformQuantizedPerAxisType)
"""For ``isinstance(t, QuantizedType)``: either uniform quantized type."""


def is_quantized(t: Attribute) -> bool:
    """Whether ``t`` is a (per-tensor or per-axis) uniform quantized element type."""
    return isinstance(t, QuantizedType)
