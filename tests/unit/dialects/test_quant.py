"""The quant dialect's uniform quantized types: construction, verification, MLIR syntax."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from xdsl.dialects.builtin import IntegerType, Signedness, TensorType, bf16, f16, f32, i32

from nnkiln.dialects.quant import (
    QUANT,
    UniformQuantizedPerAxisType,
    UniformQuantizedType,
    format_scale,
    is_quantized,
    storage_range,
)
from nnkiln.dialects.tosa.base import Kind, kind_of
from nnkiln.ir.elements import dtype_of
from nnkiln.ir.errors import InputError, VerifyError
from nnkiln.ir.text import parse_module, print_module

U8 = IntegerType(8, Signedness.UNSIGNED)


def _arg_types(text: str) -> list:
    module = parse_module(f"func.func @f({text}) {{\n  func.return\n}}")
    func = next(iter(module.body.block.ops))
    return [a.type.element_type for a in func.body.block.args]


def _parse_type(t: str):
    return _arg_types(f"%a: tensor<1x{t}>")[0]


# -- construction and fields -----------------------------------------------------------------------


def test_per_tensor_fields() -> None:
    t = UniformQuantizedType("i8", f32, 0.5, -3)
    assert t.storage_type == IntegerType(8)
    assert t.storage_type.signedness.data == Signedness.SIGNLESS
    assert t.expressed_type == f32
    assert t.scale == 0.5 and t.zero_point == -3
    assert (t.storage_type_min, t.storage_type_max) == (-128, 127)
    assert t.is_signed and not t.is_per_axis
    assert t.scales == (0.5,) and t.zero_points == (-3,)


def test_unsigned_storage_default_range() -> None:
    t = UniformQuantizedType("u8", f32, 2.0, 128)
    assert t.storage_type == U8
    assert (t.storage_type_min, t.storage_type_max) == (0, 255)
    assert not t.is_signed
    assert UniformQuantizedType(U8, f32, 2.0, 128) == t


def test_signed_integer_type_is_normalized_to_signless() -> None:
    t = UniformQuantizedType(IntegerType(8, Signedness.SIGNED), f32, 1.0)
    assert t.storage_type == IntegerType(8)


def test_int16_int32_storage() -> None:
    assert (UniformQuantizedType("i16", f32, 1.0).storage_type_min, UniformQuantizedType("i16", f32, 1.0).storage_type_max) == (-32768, 32767)
    t32 = UniformQuantizedType("i32", f32, 1.0)
    assert (t32.storage_type_min, t32.storage_type_max) == (-(2**31), 2**31 - 1)
    assert storage_range(IntegerType(16, Signedness.UNSIGNED)) == (0, 65535)


def test_per_axis_fields() -> None:
    t = UniformQuantizedPerAxisType("i8", f32, [0.1, 0.2], [2, 3], 1)
    assert t.scales == (0.1, 0.2) and t.zero_points == (2, 3)
    assert t.quantized_dimension == 1 and t.is_per_axis
    assert t.storage_type == IntegerType(8)
    zero = UniformQuantizedPerAxisType("u8", f16, [1.0, 2.0], None, 0)
    assert zero.zero_points == (0, 0)


def test_immutable() -> None:
    t = UniformQuantizedType("i8", f32, 0.5, -3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.scale_attr = None  # type: ignore[misc]
    with pytest.raises(AttributeError):
        t.scale = 1.0  # type: ignore[misc]


def test_equality_and_hash() -> None:
    a = UniformQuantizedType("i8", f32, 0.5, -3)
    b = UniformQuantizedType("i8", f32, 0.5, -3, -128, 127)
    assert a == b and hash(a) == hash(b)
    assert a != UniformQuantizedType("i8", f32, 0.5, -2)
    assert a != UniformQuantizedType("i8", f16, 0.5, -3)
    assert a != UniformQuantizedType("i8", f32, 0.5, -3, -127, 127)


def test_storage_type_seen_by_tosa_and_numpy() -> None:
    q8 = UniformQuantizedType("i8", f32, 0.5, -3)
    qu8 = UniformQuantizedType("u8", f32, 0.5, 3)
    q16 = UniformQuantizedPerAxisType("i16", bf16, [0.5], [0], 0)
    assert kind_of(TensorType(q8, [4])) is Kind.I8
    assert kind_of(qu8) is Kind.U8
    assert kind_of(q16) is Kind.I16
    assert dtype_of(q8) == np.dtype(np.int8)
    assert dtype_of(qu8) == np.dtype(np.uint8)
    assert is_quantized(q8) and is_quantized(q16) and not is_quantized(i32)


def test_dialect_name() -> None:
    assert QUANT.name == "quant"


# -- verification ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "rule"),
    [
        (("i8", f32, 0.0), "scale > 0 and finite"),
        (("i8", f32, -1.0), "scale > 0 and finite"),
        (("i8", f32, float("inf")), "scale > 0 and finite"),
        (("i8", f32, float("nan")), "scale > 0 and finite"),
        (("i8", f16, 65520.0), "scale within the expressed type's range"),
        (("i8", f32, 0.5, 128), "storage_type_min <= zero_point <= storage_type_max"),
        (("i8", f32, 0.5, -129), "storage_type_min <= zero_point <= storage_type_max"),
        (("u8", f32, 0.5, 256), "storage_type_min <= zero_point <= storage_type_max"),
        (("u8", f32, 0.5, -1), "storage_type_min <= zero_point <= storage_type_max"),
        (("i8", f32, 0.5, -128, -127, 127), "storage_type_min <= zero_point <= storage_type_max"),
        (("i8", f32, 0.5, 0, -129, 127), "storage_type_min <= storage_type_max within the storage type"),
        (("u8", f32, 0.5, 0, 0, 256), "storage_type_min <= storage_type_max within the storage type"),
        (("i8", f32, 0.5, 0, 10, 0), "storage_type_min <= storage_type_max within the storage type"),
        (("i64", f32, 0.5), "1 <= storage width <= 32"),
        (("i8", i32, 0.5), "expressed type is f16, bf16 or f32"),
    ],
)
def test_per_tensor_errors(args: tuple, rule: str) -> None:
    with pytest.raises(VerifyError) as err:
        UniformQuantizedType(*args)
    assert err.value.rule == rule


def test_scale_range_edges_are_accepted() -> None:
    # f16's largest finite value and its smallest subnormal are valid scales (MLIR's range).
    UniformQuantizedType("i8", f16, 65504.0)
    UniformQuantizedType("i8", f16, 2.0**-24)
    with pytest.raises(VerifyError):
        UniformQuantizedType("i8", f16, 2.0**-25)


def test_per_axis_errors() -> None:
    with pytest.raises(VerifyError, match="empty"):
        UniformQuantizedPerAxisType("i8", f32, [], [], 0)
    with pytest.raises(VerifyError, match="2 scales but 1 zero points"):
        UniformQuantizedPerAxisType("i8", f32, [0.1, 0.2], [0], 0)
    with pytest.raises(VerifyError, match="quantized_dimension = -1"):
        UniformQuantizedPerAxisType("i8", f32, [0.1], [0], -1)
    with pytest.raises(VerifyError, match=r"scale\[1\] = 0.0"):
        UniformQuantizedPerAxisType("i8", f32, [0.1, 0.0], [0, 0], 0)
    with pytest.raises(VerifyError, match=r"zero point\[0\] = 200"):
        UniformQuantizedPerAxisType("i8", f32, [0.1], [200], 0)


def test_per_axis_check_shape() -> None:
    t = UniformQuantizedPerAxisType("i8", f32, [0.1, 0.2, 0.3], None, 1)
    t.check_shape([4, 3])
    with pytest.raises(VerifyError, match="size 4 but there are 3 scales"):
        t.check_shape([3, 4])
    with pytest.raises(VerifyError, match="quantized_dimension = 1 but rank = 1"):
        t.check_shape([3])


# -- text -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "printed"),
    [
        ("!quant.uniform<i8:f32, 0.5:-3>", "!quant.uniform<i8:f32, 5.000000e-01:-3>"),
        ("!quant.uniform<i8<-127:127>:f32, 0.1>", "!quant.uniform<i8<-127:127>:f32, 1.000000e-01>"),
        ("!quant.uniform<u8:f32, 2.0:128>", "!quant.uniform<u8:f32, 2.000000e+00:128>"),
        ("!quant.uniform<i8<-128:127>:f32, 1.0:0>", "!quant.uniform<i8:f32, 1.000000e+00>"),
        ("!quant.uniform<i16:f16, 0.25>", "!quant.uniform<i16:f16, 2.500000e-01>"),
        ("!quant.uniform<i32:bf16, 4.0:-1>", "!quant.uniform<i32:bf16, 4.000000e+00:-1>"),
        ("!quant.uniform<i8:f32:1, {0.1:2, 0.2:3}>", "!quant.uniform<i8:f32:1, {1.000000e-01:2,2.000000e-01:3}>"),
        ("!quant.uniform<u8<0:254>:f32:0, {1.0:1,2.0}>", "!quant.uniform<u8<0:254>:f32:0, {1.000000e+00:1,2.000000e+00}>"),
    ],
)
def test_print_parse(text: str, printed: str) -> None:
    t = _parse_type(text)
    assert str(t) == printed
    assert _parse_type(printed) == t


def test_parsed_values() -> None:
    a, b, c, d = _arg_types(
        "%a: tensor<4x!quant.uniform<i8:f32, 0.5:-3>>, %b: tensor<2x!quant.uniform<i8<-127:127>:f32, 0.1>>, "
        "%c: tensor<3x!quant.uniform<u8:f32, 2.0:128>>, %d: tensor<2x2x!quant.uniform<i8:f32:1, {0.1:2, 0.2:3}>>"
    )
    assert a == UniformQuantizedType("i8", f32, 0.5, -3)
    assert b == UniformQuantizedType("i8", f32, 0.1, 0, -127, 127)
    assert c == UniformQuantizedType(U8, f32, 2.0, 128)
    assert isinstance(d, UniformQuantizedPerAxisType)
    assert d == UniformQuantizedPerAxisType("i8", f32, [0.1, 0.2], [2, 3], 1)


def test_format_scale() -> None:
    assert format_scale(0.5) == "5.000000e-01"
    assert format_scale(1.0) == "1.000000e+00"
    assert format_scale(2.0**-13) == "1.220703125e-04"  # 0.0001220703125 exactly
    assert float(format_scale(0.1 + 0.2)) == 0.1 + 0.2


def test_module_round_trip_stable() -> None:
    text = (
        "func.func @f(%a: tensor<4x!quant.uniform<i8:f32, 0.5:-3>>, "
        "%b: tensor<2x3x!quant.uniform<u8<0:254>:f32:1, {0.1:2, 0.2, 0.7:254}>>) {\n  func.return\n}"
    )
    once = print_module(parse_module(text))
    assert print_module(parse_module(once)) == once


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("!quant.uniform<i8:f32, 0.0>", "scale = 0.0"),
        ("!quant.uniform<i8:f32, 0.5:128>", "zero point = 128"),
        ("!quant.uniform<i8<-200:0>:f32, 0.5>", "storage range [-200, 0]"),
        ("!quant.uniform<i33:f32, 0.5>", "illegal storage type size: 33"),
        ("!quant.uniform<x8:f32, 0.5>", "expected a storage type iN or uN"),
        ("!quant.uniform<i8:i32, 0.5>", "expressed type is i32"),
        ("!quant.uniform<i8:f32:0, {0.5:300}>", "zero point[0] = 300"),
        ("!quant.uniform<i8:f32, 0.5", "'>'"),
    ],
)
def test_parse_errors(text: str, fragment: str) -> None:
    with pytest.raises(InputError) as err:
        _parse_type(text)
    assert fragment in str(err.value)
