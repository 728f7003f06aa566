"""Transformation attributes of the ``const`` dialect (architecture spec §5.2.1, §5.2.2).

Each transformation is an immutable xDSL attribute implementing the ``TransformAttr`` protocol
(the spec's ``TransformAttrInterface``, §5.2.1.1):

- ``infer_type(input) -> output`` (``inferOutputType``): the tensor type the transformation produces
  from ``input``, raising ``VerifyError`` (rule + values) when it does not apply to ``input``. It only
  looks at types, never at data, so a chain over a huge constant verifies in constant time.
- ``apply(data, input, output) -> ndarray`` (``transform``): the transformation on a numpy array
  holding the storage values of ``input`` (quantized element types: their integer storage values).
  Views are returned where numpy allows it (reshape, transpose, broadcast, subview).

Syntax (one attribute per transformation; lists in ``[...]``)::

    #const.reshape<[1, 16, 1, 1]>          reshape to a shape (same element count)
    #const.transpose<[0, 2, 3, 1]>         output dim i = input dim perm[i] (numpy.transpose)
    #const.convert_elem_type<f16>          element type conversion (rules below)
    #const.quant_cast<!quant.uniform<...>> reinterpret integer storage as a quantized type, or back
    #const.dequantize                      quantized -> expressed type: scale * (q - zero_point)
    #const.broadcast<axis = 1, size = 16>  broadcast a dimension of size 1 to ``size``
    #const.pad_with_zero<[0, 1], [2, 0]>   pads before / after per dimension
    #const.subview<[0, 2], [4, 4]>         offsets / sizes per dimension
    #const.rescale<5.000000e-01>           multiply by a scalar
    #const.add<1.500000e+00>               add a scalar

Decisions (the spec lists the attributes and their parameters only):

- ``transpose`` stands for the spec's ``Reorder``: tensors here carry no layout (``#NHWC`` affine map),
  so a reorder is a permutation of the logical dimensions.
- ``broadcast`` takes ``(axis, size)`` as the spec's ``BroadcastAttr(axis, value)``; the input
  dimension must be 1 (or already ``size``, then it is the identity).
- ``convert_elem_type`` (``ConvertElementTypeAttr``) between non-quantized integer/float types:
  float -> float rounds to nearest, ties to even (IEEE), overflow gives +-inf;
  int -> float goes through float64 (exact up to 2**53) and rounds to nearest-even once;
  float -> int rounds to nearest, ties to even (``rint``), saturates to the target's range, NaN -> 0;
  int -> int saturates to the target's range (``i4`` is ``[-8, 7]``, ``ui8`` ``[0, 255]``);
  any -> ``i1`` is ``value != 0``; ``i1`` -> any is 0/1.
- ``quant_cast<Q>`` with a quantized ``Q``: the input element type must be ``Q``'s storage type, or a
  quantized type with the same storage type (re-quantization metadata change, data unchanged).
  ``quant_cast<iN>``: the input must be quantized with storage type ``iN``. Data never changes.
- ``rescale`` / ``add``: float element types only; computed in float64 and rounded once to the
  element type. The scalar must be finite.
- ``pad_with_zero`` pads with the stored value that means real 0: 0, or the zero point of a
  quantized type (per axis: each channel's zero point); padding the quantized dimension of a
  per-axis type is rejected (the new channels would have no scale).
- Per-axis quantized content: ``transpose`` moves the quantized dimension, ``subview`` slices the
  scales, ``broadcast`` of the quantized dimension repeats its single scale, ``reshape`` keeps the
  quantized dimension if some output dimension has the same size and the same number of elements
  before it (else it is rejected).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatData,
    IntAttr,
    IntegerType,
    Signedness,
    TensorType,
)
from xdsl.ir import Attribute, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer

from nnkiln.ir.elements import dtype_of
from nnkiln.ir.errors import VerifyError

Shape = tuple[int, ...]

FLOAT_TYPES = (Float16Type, BFloat16Type, Float32Type, Float64Type)


# ----------------------------------------------------------------------------------------------
# Type helpers


def shape_of(t: TensorType) -> Shape:
    return tuple(int(d) for d in t.get_shape())


def fail(transform: str, rule: str, detail: str) -> None:
    raise VerifyError(f"#const.{transform}: {detail}", rule=rule)


def is_quantized(t: Attribute) -> bool:
    """A quantized element type: anything with an integer ``storage_type`` (``!quant.uniform``)."""
    return isinstance(getattr(t, "storage_type", None), IntegerType)


def is_per_axis(t: Attribute) -> bool:
    return is_quantized(t) and bool(getattr(t, "is_per_axis", False))


def is_float(t: Attribute) -> bool:
    return isinstance(t, FLOAT_TYPES)


def is_int(t: Attribute) -> bool:
    return isinstance(t, IntegerType)


def int_range(t: IntegerType) -> tuple[int, int]:
    """Two's-complement range of an integer type (``i1`` is ``[0, 1]``, a boolean)."""
    w = t.width.data
    if w == 1:
        return 0, 1
    if t.signedness.data == Signedness.UNSIGNED:
        return 0, (1 << w) - 1
    return -(1 << (w - 1)), (1 << (w - 1)) - 1


def _with_element(t: TensorType, element: Attribute, shape: Sequence[int] | None = None) -> TensorType:
    return TensorType(element, list(shape_of(t) if shape is None else shape))


def _per_axis_like(q: Any, axis: int, scales: Sequence[float], zero_points: Sequence[int]) -> Attribute:
    """A per-axis quantized type like ``q`` with another axis and (scale, zero point) list."""
    return type(q)(q.storage_type, q.expressed_type, list(scales), list(zero_points), axis,
                   q.storage_type_min, q.storage_type_max)


def _check_element_shape(name: str, element: Attribute, shape: Shape) -> None:
    check = getattr(element, "check_shape", None)
    if check is not None:
        try:
            check(shape)
        except VerifyError as err:
            fail(name, err.rule or "quantized type fits the shape", str(err.args[0]))


# ----------------------------------------------------------------------------------------------
# Syntax helpers


def _parse_int_list(parser: AttrParser) -> list[int]:
    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False))


def _print_int_list(printer: Printer, values: Sequence[int]) -> None:
    printer.print_string("[" + ", ".join(str(v) for v in values) + "]")


def _ints(attr: ArrayAttr[IntAttr]) -> Shape:
    return tuple(int(a.data) for a in attr.data)


def _int_array(values: Sequence[int]) -> ArrayAttr[IntAttr]:
    return ArrayAttr([IntAttr(int(v)) for v in values])


def format_float(value: float) -> str:
    """A float literal that parses back to the same double (MLIR needs a ``.`` in it)."""
    text = f"{value:.6e}"
    if float(text) != value:
        text = repr(float(value))
        if "e" in text and "." not in text:
            mantissa, exponent = text.split("e")
            text = f"{mantissa}.0e{exponent}"
        elif "." not in text and "e" not in text:
            text += ".0"
    return text


# ----------------------------------------------------------------------------------------------
# The interface


class TransformAttr(ParametrizedAttribute, ABC):
    """A lazy constant transformation (spec §5.2.1.1 ``TransformAttrInterface``)."""

    name: ClassVar[str]

    @property
    def mnemonic(self) -> str:
        return self.name.split(".", 1)[1]

    @abstractmethod
    def infer_type(self, input: TensorType) -> TensorType:
        """The output type for ``input`` (``inferOutputType``); ``VerifyError`` if not applicable."""

    @abstractmethod
    def apply(self, data: np.ndarray, input: TensorType, output: TensorType) -> np.ndarray:
        """Transform ``data`` (storage values of ``input``) into storage values of ``output``."""


# ----------------------------------------------------------------------------------------------
# Shape transformations


class _OneIntListSyntax:
    """``<[a...]>``: construction, ``values`` and syntax of transformations with one integer-list parameter."""

    def __init__(self, values: Sequence[int]):
        super().__init__(_int_array(values))  # type: ignore[call-arg]

    @property
    def values(self) -> Shape:
        return _ints(self.parameters[0])  # type: ignore[attr-defined]

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return (_int_array(_parse_int_list(parser)),)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            _print_int_list(printer, self.values)


@irdl_attr_definition
class ReshapeAttr(_OneIntListSyntax, TransformAttr):
    """``#const.reshape<[d0, d1, ...]>`` (spec §5.2.2.10 ReshapeAttr): same elements, new shape."""

    name = "const.reshape"
    shape: ArrayAttr[IntAttr]

    def infer_type(self, input: TensorType) -> TensorType:
        old, new = shape_of(input), self.values
        if any(d < 0 for d in new):
            fail("reshape", "shape dims >= 0", f"shape {list(new)} has a negative dimension")
        if math.prod(new) != math.prod(old):
            fail("reshape", "product(shape) == product(input shape)",
                 f"shape {list(new)} has {math.prod(new)} elements but the input {list(old)} has {math.prod(old)}")
        element = input.element_type
        if is_per_axis(element):
            axis = element.quantized_dimension  # type: ignore[attr-defined]
            before = math.prod(old[:axis])
            match = [j for j in range(len(new)) if new[j] == old[axis] and math.prod(new[:j]) == before]
            if not match:
                fail("reshape", "reshape keeps the quantized dimension of a per-axis type",
                     f"no dimension of {list(new)} corresponds to quantized dimension {axis} of {list(old)}")
            element = _per_axis_like(element, match[0], element.scales, element.zero_points)  # type: ignore[attr-defined]
        return _with_element(input, element, new)

    def apply(self, data: np.ndarray, input: TensorType, output: TensorType) -> np.ndarray:
        return data.reshape(shape_of(output))


@irdl_attr_definition
class TransposeAttr(_OneIntListSyntax, TransformAttr):
    """``#const.transpose<[p0, p1, ...]>`` (spec §5.2.2.8 ReorderAttr on layout-free tensors).

    Output dimension ``i`` is input dimension ``perm[i]`` (``numpy.transpose`` / TOSA TRANSPOSE)."""

    name = "const.transpose"
    perm: ArrayAttr[IntAttr]

    def infer_type(self, input: TensorType) -> TensorType:
        old, perm = shape_of(input), self.values
        if sorted(perm) != list(range(len(old))):
            fail("transpose", "perm is a permutation of [0, rank)",
                 f"perm {list(perm)} is not a permutation of the {len(old)} input dimensions")
        element = input.element_type
        if is_per_axis(element):
            axis = perm.index(element.quantized_dimension)  # type: ignore[attr-defined]
            element = _per_axis_like(element, axis, element.scales, element.zero_points)  # type: ignore[attr-defined]
        return _with_element(input, element, [old[p] for p in perm])

    def apply(self, data: np.ndarray, input: TensorType, output: TensorType) -> np.ndarray:
        return np.transpose(data, self.values)


@irdl_attr_definition
class BroadcastAttr(TransformAttr):
    """``#const.broadcast<axis = A, size = N>`` (spec §5.2.2.2 BroadcastAttr(axis, value)).

    Dimension ``A`` (of size 1, or already ``N``) becomes ``N``."""

    name = "const.broadcast"
    axis: IntAttr
    size: IntAttr

    def __init__(self, axis: int, size: int):
        super().__init__(IntAttr(int(axis)), IntAttr(int(size)))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            parser.parse_keyword("axis")
            parser.parse_punctuation("=")
            axis = parser.parse_integer(allow_boolean=False)
            parser.parse_punctuation(",")
            parser.parse_keyword("size")
            parser.parse_punctuation("=")
            size = parser.parse_integer(allow_boolean=False)
        return (IntAttr(axis), IntAttr(size))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<axis = {self.axis.data}, size = {self.size.data}>")

    def infer_type(self, input: TensorType) -> TensorType:
        old, axis, size = shape_of(input), self.axis.data, self.size.data
        if not 0 <= axis < len(old):
            fail("broadcast", "0 <= axis < rank", f"axis = {axis} but the input has rank {len(old)}")
        if size < 1:
            fail("broadcast", "size >= 1", f"size = {size}")
        if old[axis] not in (1, size):
            fail("broadcast", "input dimension at axis is 1 or size",
                 f"dimension {axis} of {list(old)} is {old[axis]}, cannot broadcast to {size}")
        new = list(old)
        new[axis] = size
        element = input.element_type
        if is_per_axis(element) and element.quantized_dimension == axis and old[axis] != size:  # type: ignore[attr-defined]
            element = _per_axis_like(element, axis, element.scales * size, element.zero_points * size)  # type: ignore[attr-defined]
        return _with_element(input, element, new)

    def apply(self, data: np.ndarray, input: TensorType, output: TensorType) -> np.ndarray:
        return np.broadcast_to(data, shape_of(output))


def _check_per_dim(name: str, rank: int, **lists: Shape) -> None:
    for what, values in lists.items():
        if len(values) != rank:
            fail(name, f"len({what}) == rank", f"{what} {list(values)} has {len(values)} entries but the input has rank {rank}")


class _TwoIntListsSyntax:
    """``<[a...], [b...]>``: the syntax of transformations with two integer-list parameters."""

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            first = _parse_int_list(parser)
            parser.parse_punctuation(",")
            second = _parse_int_list(parser)
        return (_int_array(first), _int_array(second))

    def print_parameters(self, printer: Printer) -> None:
        first, second = self.parameters  # type: ignore[attr-defined]
        with printer.in_angle_brackets():
            _print_int_list(printer, _ints(first))
            printer.print_string(", ")
            _print_int_list(printer, _ints(second))


@irdl_attr_definition
class PadWithZeroAttr(_TwoIntListsSyntax, TransformAttr):
    """``#const.pad_with_zero<[before...], [after...]>`` (spec §5.2.2.6 PadWithZeroAttr).

    Pads with the stored value of real zero: 0, or the zero point of a quantized element type."""

    name = "const.pad_with_zero"
    pad_before: ArrayAttr[IntAttr]
    pad_after: ArrayAttr[IntAttr]

    def __init__(self, pad_before: Sequence[int], pad_after: Sequence[int]):
        super().__init__(_int_array(pad_before), _int_array(pad_after))

    @property
    def before(self) -> Shape:
        return _ints(self.pad_before)

    @property
    def after(self) -> Shape:
        return _ints(self.pad_after)

    def infer_type(self, input: TensorType) -> TensorType:
        old = shape_of(input)
        _check_per_dim("pad_with_zero", len(old), pad_before=self.before, pad_after=self.after)
        if any(p < 0 for p in self.before + self.after):
            fail("pad_with_zero", "pads >= 0", f"pads before {list(self.before)} / after {list(self.after)} are negative")
        element = input.element_type
        if is_per_axis(element):
            axis = element.quantized_dimension  # type: ignore[attr-defined]
            if self.before[axis] or self.after[axis]:
                fail("pad_with_zero", "no padding of the quantized dimension of a per-axis type",
                     f"cannot pad quantized dimension {axis} of a per-axis type (pads {self.before[axis]}, {self.after[axis]})")
        return _with_element(input, element, [d + b + a for d, b, a in zip(old, self.before, self.after)])

    def apply(self, data: np.ndarray, input: TensorType, output: TensorType) -> np.ndarray:
        element = input.element_type
        out = np.zeros(shape_of(output), dtype=data.dtype)
        if is_per_axis(element):
            axis = element.quantized_dimension  # type: ignore[attr-defined]
            zps = np.asarray(element.zero_points, dtype=data.dtype)  # type: ignore[attr-defined]
            bshape = [1] * out.ndim
            bshape[axis] = zps.size
            out[...] = zps.reshape(bshape)
        elif is_quantized(element):
            out[...] = element.zero_point  # type: ignore[attr-defined]
        inner = tuple(slice(b, b + d) for b, d in zip(self.before, data.shape))
        out[inner] = data
        return out


@irdl_attr_definition
class SubViewAttr(_TwoIntListsSyntax, TransformAttr):
    """``#const.subview<[offsets...], [sizes...]>`` (spec §5.2.2.11 SubViewAttr(offset, shape))."""

    name = "const.subview"
    offsets: ArrayAttr[IntAttr]
    sizes: ArrayAttr[IntAttr]

    def __init__(self, offsets: Sequence[int], sizes: Sequence[int]):
        super().__init__(_int_array(offsets), _int_array(sizes))

    @property
    def offset_values(self) -> Shape:
        return _ints(self.offsets)

    @property
    def size_values(self) -> Shape:
        return _ints(self.sizes)

    def infer_type(self, input: TensorType) -> TensorType:
        old, offs, sizes = shape_of(input), self.offset_values, self.size_values
        _check_per_dim("subview", len(old), offsets=offs, sizes=sizes)
        for i, (d, o, s) in enumerate(zip(old, offs, sizes)):
            if o < 0 or s < 0 or o + s > d:
                fail("subview", "0 <= offset, 0 <= size, offset + size <= dim",
                     f"dimension {i}: offset {o} + size {s} does not fit in {d}")
        element = input.element_type
        if is_per_axis(element):
            axis = element.quantized_dimension  # type: ignore[attr-defined]
            lo, hi = offs[axis], offs[axis] + sizes[axis]
            element = _per_axis_like(element, axis, element.scales[lo:hi], element.zero_points[lo:hi])  # type: ignore[attr-defined]
        return _with_element(input, element, sizes)

    def apply(self, data: np.ndarray, input: TensorType, output: TensorType) -> np.ndarray:
        return data[tuple(slice(o, o + s) for o, s in zip(self.offset_values, self.size_values))]


# ----------------------------------------------------------------------------------------------
# Element type transformations


def _parse_type_param(parser: AttrParser) -> Sequence[Attribute]:
    with parser.in_angle_brackets():
        return (parser.parse_type(),)


@irdl_attr_definition
class ConvertElemTypeAttr(TransformAttr):
    """``#const.convert_elem_type<T>`` (spec §5.2.2.4 ConvertElementTypeAttr); rounding rules in the
    module docstring (nearest-even, saturating float -> int and int -> int, NaN -> 0)."""

    name = "const.convert_elem_type"
    elem_type: Attribute

    def __init__(self, elem_type: Attribute):
        super().__init__(elem_type)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        return _parse_type_param(parser)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_attribute(self.elem_type)

    def infer_type(self, input: TensorType) -> TensorType:
        src, dst = input.element_type, self.elem_type
        for what, t in (("input", src), ("target", dst)):
            if is_quantized(t) or not (is_int(t) or is_float(t)):
                fail("convert_elem_type", "integer or float element types",
                     f"the {what} element type {t} is not a plain integer or float type (quantized: use quant_cast or dequantize)")
        if is_int(dst):
            try:
                dtype_of(dst)
            except Exception:
                fail("convert_elem_type", "target has a numpy storage type", f"no storage for {dst}")
        return _with_element(input, dst)

    def apply(self, data: np.ndarray, input: TensorType, output: TensorType) -> np.ndarray:
        return convert_values(data, input.element_type, output.element_type)


def round_float64(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """float64 values rounded once (nearest, ties to even) to the float ``dtype``.

    numpy converts float64 to f32/f16 directly; ml_dtypes converts float64 to bfloat16 through f32,
    which can round twice, so for bfloat16 the f32 step rounds to odd (truncate, then set the last
    bit when inexact), which makes the following f32 -> bf16 rounding exact."""
    dtype = np.dtype(dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        if dtype != np.dtype(ml_dtypes.bfloat16):
            return x.astype(dtype)
        x = np.asarray(x, dtype=np.float64)
        y = x.astype(np.float32)
        inexact = (y.astype(np.float64) != x) & ~np.isnan(x)
        if np.any(inexact):
            too_big = inexact & (np.abs(y.astype(np.float64)) > np.abs(x))
            y = np.where(too_big, np.nextafter(y, np.float32(0)), y)
            bits = y.view(np.uint32) | inexact.astype(np.uint32)
            y = bits.view(np.float32)
        return y.astype(dtype)


def convert_values(data: np.ndarray, src: Attribute, dst: Attribute) -> np.ndarray:
    """Storage values of element type ``src`` converted to ``dst`` (rules: module docstring)."""
    dt = dtype_of(dst)
    with np.errstate(over="ignore", invalid="ignore"):
        if isinstance(dst, IntegerType) and dst.width.data == 1:
            return np.asarray(data != 0)
        if is_float(dst):
            if is_int(src) or data.dtype == np.float64:
                return round_float64(data.astype(np.float64), dt)
            return data.astype(dt)
        assert isinstance(dst, IntegerType)
        lo, hi = int_range(dst)
        if is_float(src):
            x = np.rint(data.astype(np.float64))
            x = np.where(np.isnan(x), 0.0, x)
            hi_mask, lo_mask = x >= float(hi), x <= float(lo)
            mid = np.where(hi_mask | lo_mask, 0.0, x).astype(dt)
            return np.where(hi_mask, dt.type(hi), np.where(lo_mask, dt.type(lo), mid)).astype(dt)
        assert isinstance(src, IntegerType)
        if src.width.data == 1:
            return data.astype(dt)
        slo, shi = int_range(src)
        sdt = data.dtype
        clipped = np.clip(data, np.array(max(lo, slo), dtype=sdt), np.array(min(hi, shi), dtype=sdt))
        return clipped.astype(dt)


@irdl_attr_definition
class QuantCastAttr(TransformAttr):
    """``#const.quant_cast<Q>`` (spec §5.2.2.7 QuantCastAttr): reinterpret integer storage as the
    quantized type ``Q`` (or, with an integer ``Q``, a quantized type as its storage). Data unchanged."""

    name = "const.quant_cast"
    elem_type: Attribute

    def __init__(self, elem_type: Attribute):
        super().__init__(elem_type)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        return _parse_type_param(parser)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_attribute(self.elem_type)

    def infer_type(self, input: TensorType) -> TensorType:
        src, dst = input.element_type, self.elem_type
        if is_quantized(dst):
            storage = dst.storage_type  # type: ignore[attr-defined]
            src_storage = src.storage_type if is_quantized(src) else src  # type: ignore[attr-defined]
            if src_storage != storage:
                fail("quant_cast", "input storage type == storage type of the quantized type",
                     f"input element type {src} does not have the storage type {storage} of {dst}")
            _check_element_shape("quant_cast", dst, shape_of(input))
        elif is_int(dst):
            if not is_quantized(src) or src.storage_type != dst:  # type: ignore[attr-defined]
                fail("quant_cast", "input is a quantized type with this storage type",
                     f"input element type {src} is not a quantized type stored as {dst}")
        else:
            fail("quant_cast", "target is a quantized or integer type", f"target {dst} is neither")
        return _with_element(input, dst)

    def apply(self, data: np.ndarray, input: TensorType, output: TensorType) -> np.ndarray:
        return data


@irdl_attr_definition
class DequantizeAttr(TransformAttr):
    """``#const.dequantize`` (spec §5.2.2.5 DequantizeAttr): quantized -> its expressed type,
    ``real = scale * (stored - zero_point)`` computed in float64 and rounded once to the expressed type."""

    name = "const.dequantize"

    def __init__(self) -> None:
        super().__init__()

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        return ()

    def print_parameters(self, printer: Printer) -> None:
        pass

    def infer_type(self, input: TensorType) -> TensorType:
        src = input.element_type
        if not is_quantized(src):
            fail("dequantize", "input is quantized", f"input element type {src} is not quantized")
        return _with_element(input, src.expressed_type)  # type: ignore[attr-defined]

    def apply(self, data: np.ndarray, input: TensorType, output: TensorType) -> np.ndarray:
        q: Any = input.element_type
        scales = np.asarray(q.scales, dtype=np.float64)
        zps = np.asarray(q.zero_points, dtype=np.float64)
        if q.is_per_axis:
            bshape = [1] * data.ndim
            bshape[q.quantized_dimension] = scales.size
            scales, zps = scales.reshape(bshape), zps.reshape(bshape)
        real = scales * (data.astype(np.float64) - zps)
        return round_float64(real, dtype_of(output.element_type))


class _ScalarTransform(TransformAttr):
    """Shared part of ``rescale`` and ``add``: a finite float64 scalar, float element types."""

    value: FloatData

    def __init__(self, value: float):
        super().__init__(FloatData(float(value)))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return (FloatData(float(parser.parse_number())),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{format_float(self.value.data)}>")

    def infer_type(self, input: TensorType) -> TensorType:
        if not math.isfinite(self.value.data):
            fail(self.mnemonic, "the scalar is finite", f"value {self.value.data} is not finite")
        if not is_float(input.element_type):
            fail(self.mnemonic, "float element type", f"input element type {input.element_type} is not a float type")
        return input


@irdl_attr_definition
class RescaleAttr(_ScalarTransform):
    """``#const.rescale<s>`` (spec §5.2.2.9 RescaleAttr): ``x * s`` in float64, rounded to the element type."""

    name = "const.rescale"
    value: FloatData

    def apply(self, data: np.ndarray, input: TensorType, output: TensorType) -> np.ndarray:
        return round_float64(data.astype(np.float64) * self.value.data, data.dtype)


@irdl_attr_definition
class AddAttr(_ScalarTransform):
    """``#const.add<b>`` (spec §5.2.2.1 AddAttr(bias)): ``x + b`` in float64, rounded to the element type."""

    name = "const.add"
    value: FloatData

    def apply(self, data: np.ndarray, input: TensorType, output: TensorType) -> np.ndarray:
        return round_float64(data.astype(np.float64) + self.value.data, data.dtype)


TRANSFORMS: tuple[type[TransformAttr], ...] = (
    ReshapeAttr,
    TransposeAttr,
    BroadcastAttr,
    PadWithZeroAttr,
    SubViewAttr,
    ConvertElemTypeAttr,
    QuantCastAttr,
    DequantizeAttr,
    RescaleAttr,
    AddAttr,
)

__all__ = [
    "TransformAttr",
    "TRANSFORMS",
    "convert_values",
    "round_float64",
    "format_float",
    "int_range",
    "is_quantized",
    "shape_of",
    *(t.__name__ for t in TRANSFORMS),
]
