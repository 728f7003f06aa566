"""TOSA 0.30 §2.3 tensor operators: shape inference, ERROR_IFs, type tables, make(), round trips.

Expected values are worked out by hand from the spec's formulas (tosa-0.30-specification.txt §2.3,
§3.4 idiv_check / power_of_two) and its "Supported Data Types" tables.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from xdsl.dialects.builtin import IntegerType, TensorType, bf16, f16, f32, i8, i16, i32
from xdsl.ir import Attribute, Block, SSAValue

from nnkiln.dialects.tosa import OPS
from nnkiln.dialects.tosa import ops_tensor as T
from nnkiln.dialects.tosa.base import Kind, Profile
from nnkiln.dialects.tosa.conv_shapes import idiv_check, power_of_two
from nnkiln.ir.errors import ShapeError, VerifyError
from nnkiln.ir.text import parse_module, print_module, split_input_file
from nnkiln.ir.verify import verify_module

i4 = IntegerType(4)
i48 = IntegerType(48)
BI, MI = Profile.BI, Profile.MI
K = Kind

FILECHECK_DIR = Path(__file__).resolve().parents[3] / "filecheck" / "dialects" / "tosa"


def values(*types: tuple[Attribute, tuple[int, ...]]) -> list[SSAValue]:
    """Block arguments of the given (element type, shape) tensor types."""
    block = Block(arg_types=[TensorType(e, s) for e, s in types])
    return list(block.args)


def conv_attrs(pad=(0, 0, 0, 0), stride=(1, 1), dilation=(1, 1), input_zp=0, weight_zp=0) -> dict[str, Any]:
    return dict(pad=pad, stride=stride, dilation=dilation, input_zp=input_zp, weight_zp=weight_zp)


def raises_rule(fn, rule: str, exc: type[Exception] = VerifyError) -> VerifyError:
    with pytest.raises(exc) as info:
        fn()
    assert info.value.rule == rule, info.value.describe()
    return info.value


# ------------------------------------------------------------------------------------------------
# Inventory


def test_all_eleven_ops_are_registered() -> None:
    names = {
        "tosa.argmax": T.ArgMaxOp, "tosa.avg_pool2d": T.AvgPool2dOp, "tosa.conv2d": T.Conv2DOp,
        "tosa.conv3d": T.Conv3DOp, "tosa.depthwise_conv2d": T.DepthwiseConv2DOp, "tosa.fft2d": T.FFT2dOp,
        "tosa.fully_connected": T.FullyConnectedOp, "tosa.matmul": T.MatMulOp,
        "tosa.max_pool2d": T.MaxPool2dOp, "tosa.rfft2d": T.RFFT2dOp,
        "tosa.transpose_conv2d": T.TransposeConv2DOp,
    }
    for name, cls in names.items():
        assert cls.name == name
        assert cls in OPS
        assert "§2.3." in (cls.__doc__ or "")


# ------------------------------------------------------------------------------------------------
# Generic helpers (spec §3.4)


def test_power_of_two() -> None:
    assert [v for v in range(0, 70) if power_of_two(v)] == [1, 2, 4, 8, 16, 32, 64]
    assert not power_of_two(-4)


def test_idiv_check_is_exact_division() -> None:
    assert idiv_check(12, 4, "r", "a", "b") == 3
    assert idiv_check(-6, 3, "r", "a", "b") == -2
    with pytest.raises(ShapeError) as info:
        idiv_check(7, 2, "rule text", "x", "s")
    assert info.value.rule == "rule text"
    assert "x = 7 is not a multiple of s = 2" in str(info.value)
    # C's -7 % 2 == -1 is non-zero too: still an error
    with pytest.raises(ShapeError):
        idiv_check(-7, 2, "r", "a", "b")


# ------------------------------------------------------------------------------------------------
# ARGMAX (§2.3.1)


def test_argmax_infer_removes_axis() -> None:
    assert T.ArgMaxOp.infer_shapes([(2, 3, 4)], axis=0) == [(3, 4)]
    assert T.ArgMaxOp.infer_shapes([(2, 3, 4)], axis=1) == [(2, 4)]
    assert T.ArgMaxOp.infer_shapes([(2, 3, 4)], axis=2) == [(2, 3)]
    assert T.ArgMaxOp.infer_shapes([(7,)], axis=0) == [()]
    assert T.ArgMaxOp.infer_shapes([(1, 2, 3, 4)], axis=3) == [(1, 2, 3)]


@pytest.mark.parametrize("shape, axis, rule", [
    ((2, 3), 2, "0 <= axis < rank(shape1)"),
    ((2, 3), -1, "0 <= axis < rank(shape1)"),
    ((), 0, "0 <= axis < rank(shape1)"),
    ((1, 1, 1, 1, 2), 0, "rank(shape1) <= 4"),
])
def test_argmax_infer_errors(shape, axis, rule) -> None:
    raises_rule(lambda: T.ArgMaxOp.infer_shapes([shape], axis=axis), rule, ShapeError)


def test_argmax_make_and_types() -> None:
    (x,) = values((bf16, (3, 5)))
    op = T.ArgMaxOp.make([x], i32, axis=1)
    op.verify()
    assert op.output.type == TensorType(i32, (3,))
    assert op.type_mode().name == "bf16" and op.type_mode().profile is MI
    (y,) = values((i16, (3, 5)))
    assert T.ArgMaxOp.make([y], i32, axis=0).type_mode().profile is BI
    (z,) = values((i32, (3, 5)))
    err = raises_rule(lambda: T.ArgMaxOp.make([z], i32, axis=0).verify(), "supported data types")
    assert err.op_name == "tosa.argmax"


# ------------------------------------------------------------------------------------------------
# AVG_POOL2D (§2.3.2), MAX_POOL2D (§2.3.9)


def pool(kernel=(2, 2), stride=(2, 2), pad=(0, 0, 0, 0), **kw) -> dict[str, Any]:
    return dict(kernel=kernel, stride=stride, pad=pad, **kw)


@pytest.mark.parametrize("cls", [T.AvgPool2dOp, T.MaxPool2dOp])
def test_pool_infer(cls) -> None:
    # (7 + 1 + 1 - 3) / 2 + 1 = 4
    assert cls.infer_shapes([(1, 7, 7, 8)], **pool((3, 3), (2, 2), (1, 1, 1, 1))) == [(1, 4, 4, 8)]
    # H: (6 + 0 + 1 - 3) / 2 + 1 = 3; W: (4 + 0 + 0 - 2) / 1 + 1 = 3
    assert cls.infer_shapes([(2, 6, 4, 3)], **pool((3, 2), (2, 1), (0, 1, 0, 0))) == [(2, 3, 3, 3)]
    # global pooling
    assert cls.infer_shapes([(1, 5, 5, 1)], **pool((5, 5), (1, 1))) == [(1, 1, 1, 1)]


@pytest.mark.parametrize("cls", [T.AvgPool2dOp, T.MaxPool2dOp])
@pytest.mark.parametrize("shape, attrs, rule", [
    ((1, 4, 4, 1), pool((0, 2)), "kernel_y, kernel_x >= 1"),
    ((1, 4, 4, 1), pool(stride=(2, 0)), "stride_y, stride_x >= 1"),
    ((1, 4, 4, 1), pool(pad=(0, -1, 0, 0)), "pad_top, pad_bottom, pad_left, pad_right >= 0"),
    ((1, 4, 4, 1), pool((2, 2), (1, 1), (2, 0, 0, 0)), "pad_top, pad_bottom < kernel_y"),
    ((1, 4, 4, 1), pool((2, 2), (1, 1), (0, 2, 0, 0)), "pad_top, pad_bottom < kernel_y"),
    ((1, 4, 4, 1), pool((3, 3), (1, 1), (0, 0, 0, 3)), "pad_left, pad_right < kernel_x"),
    # (8 - 3) = 5 is not a multiple of 2
    ((1, 8, 8, 1), pool((3, 3), (2, 2)), "OH == idiv_check(IH + pad_top + pad_bottom - kernel_y, stride_y) + 1"),
    ((1, 9, 8, 1), pool((3, 3), (2, 2)), "OW == idiv_check(IW + pad_left + pad_right - kernel_x, stride_x) + 1"),
    # kernel larger than the input: OH = (2 - 3) / 1 + 1 = 0
    ((1, 2, 2, 1), pool((3, 1), (1, 1)), "OH == idiv_check(IH + pad_top + pad_bottom - kernel_y, stride_y) + 1"),
    ((4, 4, 1), pool(), "input has shape [N,IH,IW,C]"),
    ((1, 4, 4, 1), pool(kernel=(2, 2, 2)), "kernel has 2 elements"),
    ((1, 4, 4, 1), pool(pad=(0, 0)), "pad has 4 elements"),
])
def test_pool_infer_errors(cls, shape, attrs, rule) -> None:
    raises_rule(lambda: cls.infer_shapes([shape], **attrs), rule, ShapeError)


def test_pool_pad_check_comes_before_division() -> None:
    # pad_top = 3 >= kernel_y = 2; the division (4 + 3 - 2) / 1 would be exact: the pad rule fires
    raises_rule(lambda: T.MaxPool2dOp.infer_shapes([(1, 4, 4, 1)], **pool((2, 2), (1, 1), (3, 0, 0, 0))),
                "pad_top, pad_bottom < kernel_y", ShapeError)


def test_avg_pool_zero_points() -> None:
    (x8,) = values((i8, (1, 4, 4, 1)))
    op = T.AvgPool2dOp.make([x8], i8, **pool(input_zp=-128, output_zp=127))
    op.verify()
    assert op.output.type == TensorType(i8, (1, 2, 2, 1))
    raises_rule(lambda: T.AvgPool2dOp.make([x8], i8, **pool(input_zp=128, output_zp=0)).verify(), "input_zp fits i8")
    (x16,) = values((i16, (1, 4, 4, 1)))
    raises_rule(lambda: T.AvgPool2dOp.make([x16], i16, **pool(input_zp=0, output_zp=1)).verify(),
                "output_zp == 0 when in_out_t != int8_t")
    (xf,) = values((f32, (1, 4, 4, 1)))
    err = raises_rule(lambda: T.AvgPool2dOp.make([xf], f32, **pool(input_zp=3, output_zp=0)).verify(),
                      "input_zp == 0 when in_out_t != int8_t")
    assert err.op_name == "tosa.avg_pool2d"
    assert "input_zp = 3 but in_out_t is fp32_t" in err.describe()


def test_pool_type_tables() -> None:
    (h,) = values((f16, (1, 4, 4, 1)))
    # two fp16 rows with the same tensor types: the first is reported
    assert T.AvgPool2dOp.make([h], f16, **pool(input_zp=0, output_zp=0)).type_mode().name == "fp16 with fp16 accumulate"
    assert [m.kinds for m in T.AvgPool2dOp.TYPE_MODES] == [
        (K.I8, K.I8), (K.I16, K.I16), (K.F16, K.F16), (K.F16, K.F16), (K.BF16, K.BF16), (K.F32, K.F32)]
    assert [m.kinds for m in T.MaxPool2dOp.TYPE_MODES] == [
        (K.I8, K.I8), (K.I16, K.I16), (K.F16, K.F16), (K.BF16, K.BF16), (K.F32, K.F32)]
    (x32,) = values((i32, (1, 4, 4, 1)))
    raises_rule(lambda: T.MaxPool2dOp.make([x32], i32, **pool()).verify(), "supported data types")
    (x8,) = values((i8, (1, 4, 4, 1)))
    raises_rule(lambda: T.AvgPool2dOp.make([x8], i32, **pool(input_zp=0, output_zp=0)).verify(), "supported data types")


def test_max_pool_make() -> None:
    (x,) = values((bf16, (1, 4, 6, 1)))
    op = T.MaxPool2dOp.make([x], bf16, kernel=(2, 3), stride=(2, 3), pad=(0, 0, 0, 0))
    op.verify()
    # OH = (4 - 2) / 2 + 1 = 2, OW = (6 - 3) / 3 + 1 = 2
    assert op.output.type == TensorType(bf16, (1, 2, 2, 1))


# ------------------------------------------------------------------------------------------------
# CONV2D (§2.3.3), CONV3D (§2.3.4), DEPTHWISE_CONV2D (§2.3.5)


def test_conv2d_infer() -> None:
    infer = T.Conv2DOp.infer_shapes
    # (8 - 1 - 2) / 1 + 1 = 6
    assert infer([(1, 8, 8, 4), (16, 3, 3, 4), (16,)], **conv_attrs()) == [(1, 6, 6, 16)]
    # (9 - 1 + 2 - 2) / 2 + 1 = 5
    assert infer([(2, 9, 9, 4), (8, 3, 3, 4), (8,)], **conv_attrs((1, 1, 1, 1), (2, 2))) == [(2, 5, 5, 8)]
    # dilation 2: (10 - 1 - 2 * 2) / 1 + 1 = 6; W with stride 5: (10 - 1 - 4) / 5 + 1 = 2
    assert infer([(1, 10, 10, 2), (4, 3, 3, 2), (4,)], **conv_attrs(stride=(1, 5), dilation=(2, 2))) == [(1, 6, 2, 4)]
    # asymmetric padding: H (5 - 1 + 0 + 1 - 1) + 1 = 5, W (5 - 1 + 2 + 0 - 1) + 1 = 6
    assert infer([(1, 5, 5, 3), (6, 2, 2, 3), (6,)], **conv_attrs((0, 1, 2, 0))) == [(1, 5, 6, 6)]


CONV2D_H = "OH == idiv_check(IH - 1 + pad_top + pad_bottom - (KH - 1) * dilation_y, stride_y) + 1"
CONV2D_W = "OW == idiv_check(IW - 1 + pad_left + pad_right - (KW - 1) * dilation_x, stride_x) + 1"


@pytest.mark.parametrize("shapes, attrs, rule", [
    ([(1, 4, 4, 1), (1, 1, 1, 1), (1,)], conv_attrs(pad=(0, 0, -1, 0)), "pad_top, pad_bottom, pad_left, pad_right >= 0"),
    ([(1, 4, 4, 1), (1, 1, 1, 1), (1,)], conv_attrs(stride=(1, 0)), "stride_y, stride_x >= 1"),
    ([(1, 4, 4, 1), (1, 1, 1, 1), (1,)], conv_attrs(dilation=(0, 1)), "dilation_y, dilation_x >= 1"),
    # (8 - 1 - 2) = 5 is odd
    ([(1, 8, 8, 1), (1, 3, 3, 1), (1,)], conv_attrs(stride=(2, 1)), CONV2D_H),
    ([(1, 7, 8, 1), (1, 3, 3, 1), (1,)], conv_attrs(stride=(2, 2)), CONV2D_W),
    # dilated kernel spans 7 > 4: OW = (4 - 1 - 6) + 1 = -2
    ([(1, 4, 4, 1), (1, 3, 3, 1), (1,)], conv_attrs(dilation=(1, 3)), CONV2D_W),
    ([(1, 4, 4, 2), (1, 1, 1, 3), (1,)], conv_attrs(), "weight IC == input IC"),
    ([(1, 4, 4, 1), (4, 1, 1, 1), (1,)], conv_attrs(), "bias has shape [OC]"),
    ([(1, 4, 4, 1), (4, 1, 1, 1), (4, 1)], conv_attrs(), "bias has shape [OC]"),
    ([(4, 4, 1), (1, 1, 1, 1), (1,)], conv_attrs(), "input has shape [N,IH,IW,IC]"),
    ([(1, 4, 4, 1), (1, 1, 1), (1,)], conv_attrs(), "weight has shape [OC,KH,KW,IC]"),
    ([(1, 4, 4, 1), (1, 1, 1, 1), (1,)], conv_attrs(pad=(0, 0, 0)), "pad has 4 elements"),
    ([(1, 4, 4, 1), (1, 1, 1, 1), (1,)], conv_attrs(stride=(1,)), "stride has 2 elements"),
    ([(1, 4, 4, 1), (1, 1, 1, 1), (1,)], conv_attrs(stride=(1, 1 << 31)), "stride values fit int32_t"),
    ([(-1, 4, 4, 1), (1, 1, 1, 1), (1,)], conv_attrs(), "tensor dimensions >= 1"),
])
def test_conv2d_infer_errors(shapes, attrs, rule) -> None:
    raises_rule(lambda: T.Conv2DOp.infer_shapes(shapes, **attrs), rule, ShapeError)


def test_conv2d_error_names_the_values() -> None:
    with pytest.raises(ShapeError) as info:
        T.Conv2DOp.infer_shapes([(1, 8, 8, 1), (1, 3, 3, 1), (1,)], **conv_attrs(stride=(2, 1)))
    assert "= 5 is not a multiple of stride_y = 2" in str(info.value)
    assert "IH = 8" in str(info.value) and "KH = 3" in str(info.value)


def test_conv2d_missing_attribute() -> None:
    raises_rule(lambda: T.Conv2DOp.infer_shapes([(1, 4, 4, 1), (1, 1, 1, 1), (1,)], pad=(0, 0, 0, 0), stride=(1, 1)),
                "attribute dilation is present", ShapeError)


CONV_MODES = [
    ("signed 8x8", BI, i8, i8, i32),
    ("signed 8x4", BI, i8, i4, i32),
    ("signed 16x8", BI, i16, i8, i48),
    ("fp16 with fp16 accumulate", MI, f16, f16, f16),
    ("fp16 with fp32 accumulate", MI, f16, f16, f32),
    ("bf16 with fp32 accumulate", MI, bf16, bf16, f32),
    ("fp32", MI, f32, f32, f32),
]


@pytest.mark.parametrize("name, profile, in_t, weight_t, out_t", CONV_MODES)
def test_conv2d_make_every_type_mode(name, profile, in_t, weight_t, out_t) -> None:
    x, w, b = values((in_t, (1, 5, 5, 2)), (weight_t, (3, 3, 3, 2)), (out_t, (3,)))
    op = T.Conv2DOp.make([x, w, b], out_t, **conv_attrs((1, 1, 1, 1), (2, 2)))
    op.verify()
    # (5 - 1 + 2 - 2) / 2 + 1 = 3
    assert op.output.type == TensorType(out_t, (1, 3, 3, 3))
    mode = op.type_mode()
    assert (mode.name, mode.profile) == (name, profile)


def test_conv_type_table_is_the_spec_table() -> None:
    assert [(m.name, m.profile, m.kinds) for m in T.CONV_TYPE_MODES] == [
        ("signed 8x8", BI, (K.I8, K.I8, K.I32, K.I32)),
        ("signed 8x4", BI, (K.I8, K.I4, K.I32, K.I32)),
        ("signed 16x8", BI, (K.I16, K.I8, K.I48, K.I48)),
        ("fp16 with fp16 accumulate", MI, (K.F16, K.F16, K.F16, K.F16)),
        ("fp16 with fp32 accumulate", MI, (K.F16, K.F16, K.F32, K.F32)),
        ("bf16 with fp32 accumulate", MI, (K.BF16, K.BF16, K.F32, K.F32)),
        ("fp32", MI, (K.F32, K.F32, K.F32, K.F32)),
    ]
    for cls in (T.Conv2DOp, T.Conv3DOp, T.DepthwiseConv2DOp, T.FullyConnectedOp, T.TransposeConv2DOp):
        assert cls.TYPE_MODES == T.CONV_TYPE_MODES
        assert cls.TYPE_SLOTS == ("input", "weight", "bias", "output")


@pytest.mark.parametrize("in_t, weight_t, bias_t, out_t", [
    (i16, i8, i32, i32),      # 16x8 accumulates in int48
    (i8, i8, i48, i48),       # 8x8 accumulates in int32
    (i8, i16, i32, i32),
    (bf16, bf16, bf16, bf16),  # bf16 accumulates in fp32
    (f32, f16, f32, f32),
    (i8, i8, i32, f32),
])
def test_conv2d_bad_type_combinations(in_t, weight_t, bias_t, out_t) -> None:
    x, w, b = values((in_t, (1, 4, 4, 1)), (weight_t, (1, 1, 1, 1)), (bias_t, (1,)))
    op = T.Conv2DOp.make([x, w, b], out_t, **conv_attrs())
    err = raises_rule(op.verify, "supported data types")
    assert err.op_name == "tosa.conv2d"


@pytest.mark.parametrize("in_t, weight_t, out_t, attrs, rule", [
    (i8, i8, i32, dict(input_zp=-128, weight_zp=127), None),
    (i8, i8, i32, dict(input_zp=-129, weight_zp=0), "input_zp fits i8"),
    (i8, i8, i32, dict(input_zp=0, weight_zp=128), "weight_zp fits i8"),
    (i8, i4, i32, dict(input_zp=5, weight_zp=0), None),
    (i8, i4, i32, dict(input_zp=0, weight_zp=1), "weight_zp == 0 when weight_t != int8_t"),
    (i16, i8, i48, dict(input_zp=1, weight_zp=0), "input_zp == 0 when in_t != int8_t"),
    (i16, i8, i48, dict(input_zp=0, weight_zp=-3), None),
    (f32, f32, f32, dict(input_zp=1, weight_zp=0), "input_zp == 0 when in_t != int8_t"),
    (f16, f16, f16, dict(input_zp=0, weight_zp=1), "weight_zp == 0 when weight_t != int8_t"),
])
def test_conv_zero_points(in_t, weight_t, out_t, attrs, rule) -> None:
    for cls, shapes, extra in (
        (T.Conv2DOp, ((1, 4, 4, 1), (1, 1, 1, 1), (1,)), conv_attrs()),
        (T.FullyConnectedOp, ((2, 3), (4, 3), (4,)), {}),
        (T.DepthwiseConv2DOp, ((1, 4, 4, 1), (1, 1, 1, 2), (2,)), conv_attrs()),
        (T.TransposeConv2DOp, ((1, 4, 4, 1), (1, 1, 1, 1), (1,)),
         dict(out_pad=(0, 0, 0, 0), stride=(1, 1), out_shape=(1, 4, 4, 1))),
    ):
        x, w, b = values((in_t, shapes[0]), (weight_t, shapes[1]), (out_t, shapes[2]))
        op = cls.make([x, w, b], out_t, **{**extra, **attrs})
        if rule is None:
            op.verify()
        else:
            err = raises_rule(op.verify, rule)
            assert err.op_name == cls.name


def test_conv3d_infer() -> None:
    infer = T.Conv3DOp.infer_shapes
    zero6 = (0,) * 6
    # OD = (4 - 1 - 1) + 1 = 3, OH = OW = (8 - 1 - 2) + 1 = 6
    assert infer([(1, 4, 8, 8, 2), (4, 2, 3, 3, 2), (4,)], pad=zero6, stride=(1, 1, 1), dilation=(1, 1, 1),
                 input_zp=0, weight_zp=0) == [(1, 3, 6, 6, 4)]
    # (5 - 1 + 2 - 2) / 2 + 1 = 3 on every axis; D with dilation 2 and no pad: (5 - 1 - 4) / 1 + 1 = 1
    assert infer([(2, 5, 5, 5, 1), (3, 3, 3, 3, 1), (3,)], pad=(1, 1, 1, 1, 1, 1), stride=(2, 2, 2),
                 dilation=(1, 1, 1), input_zp=0, weight_zp=0) == [(2, 3, 3, 3, 3)]
    assert infer([(1, 5, 5, 5, 1), (1, 3, 1, 1, 1), (1,)], pad=zero6, stride=(1, 1, 1),
                 dilation=(2, 1, 1), input_zp=0, weight_zp=0) == [(1, 1, 5, 5, 1)]


@pytest.mark.parametrize("shapes, attrs, rule", [
    ([(1, 5, 4, 4, 1), (1, 2, 1, 1, 1), (1,)], dict(stride=(2, 1, 1)),
     "OD == idiv_check(ID - 1 + pad_d0 + pad_d1 - (KD - 1) * dilation_d, stride_d) + 1"),
    ([(1, 2, 5, 4, 1), (1, 1, 2, 1, 1), (1,)], dict(stride=(1, 2, 1)),
     "OH == idiv_check(IH - 1 + pad_top + pad_bottom - (KH - 1) * dilation_y, stride_y) + 1"),
    ([(1, 2, 4, 4, 1), (1, 1, 1, 1, 1), (1,)], dict(pad=(0, -1, 0, 0, 0, 0)),
     "pad_d0, pad_d1, pad_top, pad_bottom, pad_left, pad_right >= 0"),
    ([(1, 2, 4, 4, 1), (1, 1, 1, 1, 1), (1,)], dict(stride=(0, 1, 1)), "stride_d, stride_y, stride_x >= 1"),
    ([(1, 2, 4, 4, 1), (1, 1, 1, 1, 1), (1,)], dict(dilation=(1, 1, 0)), "dilation_d, dilation_y, dilation_x >= 1"),
    ([(1, 2, 4, 4, 1), (1, 1, 1, 1, 1), (1,)], dict(pad=(0, 0, 0, 0)), "pad has 6 elements"),
    ([(1, 2, 4, 4, 1), (1, 1, 1, 1), (1,)], {}, "weight has shape [OC,KD,KH,KW,IC]"),
    ([(1, 2, 4, 4, 1), (1, 1, 1, 1, 2), (1,)], {}, "weight IC == input IC"),
])
def test_conv3d_infer_errors(shapes, attrs, rule) -> None:
    base = dict(pad=(0,) * 6, stride=(1, 1, 1), dilation=(1, 1, 1), input_zp=0, weight_zp=0)
    raises_rule(lambda: T.Conv3DOp.infer_shapes(shapes, **{**base, **attrs}), rule, ShapeError)


def test_conv3d_weight_layout_is_oc_kd_kh_kw_ic() -> None:
    # Decision (inventory §1.3 no. 9): the argument table's [OC,KD,KH,KW,IC], not DOHWI. A weight
    # [KD=1, OC=4, KH=1, KW=1, IC=2] read as DOHWI would give OC = 4; we read OC = 1, KD = 4.
    out = T.Conv3DOp.infer_shapes([(1, 4, 3, 3, 2), (1, 4, 1, 1, 2), (1,)], pad=(0,) * 6, stride=(1, 1, 1),
                                  dilation=(1, 1, 1), input_zp=0, weight_zp=0)
    assert out == [(1, 1, 3, 3, 1)]
    assert "DOHWI" in (T.Conv3DOp.__doc__ or "")


def test_conv3d_make_int16() -> None:
    x, w, b = values((i16, (1, 3, 3, 3, 1)), (i8, (2, 1, 1, 1, 1)), (i48, (2,)))
    op = T.Conv3DOp.make([x, w, b], i48, pad=(0,) * 6, stride=(1, 1, 1), dilation=(1, 1, 1), input_zp=0, weight_zp=0)
    op.verify()
    assert op.output.type == TensorType(i48, (1, 3, 3, 3, 2))


def test_depthwise_infer() -> None:
    infer = T.DepthwiseConv2DOp.infer_shapes
    # C * M = 4 * 2 = 8; (8 - 1 + 2 - 2) + 1 = 8
    assert infer([(1, 8, 8, 4), (3, 3, 4, 2), (8,)], **conv_attrs((1, 1, 1, 1))) == [(1, 8, 8, 8)]
    # (9 - 1 - 2) / 2 + 1 = 4
    assert infer([(2, 9, 9, 3), (3, 3, 3, 1), (3,)], **conv_attrs(stride=(2, 2))) == [(2, 4, 4, 3)]


@pytest.mark.parametrize("shapes, attrs, rule", [
    ([(1, 4, 4, 2), (1, 1, 2, 3), (2,)], conv_attrs(), "bias has shape [C*M]"),
    ([(1, 4, 4, 2), (1, 1, 3, 1), (3,)], conv_attrs(), "weight C == input C"),
    ([(1, 4, 5, 1), (1, 2, 1, 1), (1,)], conv_attrs(stride=(1, 2)), CONV2D_W),
    ([(1, 4, 4, 1), (1, 1, 1, 1), (1,)], conv_attrs(dilation=(1, -1)), "dilation_y, dilation_x >= 1"),
])
def test_depthwise_infer_errors(shapes, attrs, rule) -> None:
    raises_rule(lambda: T.DepthwiseConv2DOp.infer_shapes(shapes, **attrs), rule, ShapeError)


def test_depthwise_make() -> None:
    x, w, b = values((i8, (1, 5, 5, 2)), (i4, (2, 2, 2, 3)), (i32, (6,)))
    op = T.DepthwiseConv2DOp.make([x, w, b], i32, **conv_attrs(dilation=(2, 2), input_zp=-7))
    op.verify()
    # (5 - 1 - 1 * 2) + 1 = 3
    assert op.output.type == TensorType(i32, (1, 3, 3, 6))
    assert op.type_mode().name == "signed 8x4"


# ------------------------------------------------------------------------------------------------
# FULLY_CONNECTED (§2.3.7), MATMUL (§2.3.8)


def test_fully_connected() -> None:
    assert T.FullyConnectedOp.infer_shapes([(4, 16), (8, 16), (8,)], input_zp=0, weight_zp=0) == [(4, 8)]
    raises_rule(lambda: T.FullyConnectedOp.infer_shapes([(4, 16), (8, 15), (8,)]), "weight IC == input IC", ShapeError)
    raises_rule(lambda: T.FullyConnectedOp.infer_shapes([(4, 16), (8, 16), (1,)]), "bias has shape [OC]", ShapeError)
    raises_rule(lambda: T.FullyConnectedOp.infer_shapes([(1, 4, 16), (8, 16), (8,)]), "input has shape [N,IC]", ShapeError)
    x, w, b = values((i16, (2, 3)), (i8, (5, 3)), (i48, (5,)))
    op = T.FullyConnectedOp.make([x, w, b], i48, input_zp=0, weight_zp=0)
    op.verify()
    assert op.output.type == TensorType(i48, (2, 5))


def test_matmul_infer() -> None:
    assert T.MatMulOp.infer_shapes([(2, 3, 4), (2, 4, 5)], A_zp=0, B_zp=0) == [(2, 3, 5)]
    raises_rule(lambda: T.MatMulOp.infer_shapes([(2, 3, 4), (2, 5, 5)]),
                "B has shape [N,C,W] with N, C of A [N,H,C]", ShapeError)
    raises_rule(lambda: T.MatMulOp.infer_shapes([(2, 3, 4), (1, 4, 5)]),
                "B has shape [N,C,W] with N, C of A [N,H,C]", ShapeError)
    raises_rule(lambda: T.MatMulOp.infer_shapes([(3, 4), (4, 5)]), "A has shape [N,H,C]", ShapeError)


@pytest.mark.parametrize("in_t, out_t, name", [
    (i8, i32, "signed 8x8"), (i16, i48, "signed 16x16"), (f16, f16, "fp16 with fp16 accumulate"),
    (f16, f32, "fp16 with fp32 accumulate"), (bf16, f32, "bf16 with fp32 accumulate"), (f32, f32, "fp32"),
])
def test_matmul_type_modes(in_t, out_t, name) -> None:
    a, b = values((in_t, (1, 2, 3)), (in_t, (1, 3, 4)))
    op = T.MatMulOp.make([a, b], out_t, A_zp=0, B_zp=0)
    op.verify()
    assert op.output.type == TensorType(out_t, (1, 2, 4))
    assert op.type_mode().name == name


def test_matmul_errors() -> None:
    a, b = values((i16, (1, 2, 3)), (i16, (1, 3, 4)))
    raises_rule(T.MatMulOp.make([a, b], i32, A_zp=0, B_zp=0).verify, "supported data types")
    raises_rule(T.MatMulOp.make([a, b], i48, A_zp=0, B_zp=1).verify, "B_zp == 0 when in_t != int8_t")
    a8, b16 = values((i8, (1, 2, 3)), (i16, (1, 3, 4)))
    raises_rule(T.MatMulOp.make([a8, b16], i48, A_zp=0, B_zp=0).verify, "supported data types")
    a8, b8 = values((i8, (1, 2, 3)), (i8, (1, 3, 4)))
    T.MatMulOp.make([a8, b8], i32, A_zp=-128, B_zp=127).verify()
    err = raises_rule(T.MatMulOp.make([a8, b8], i32, A_zp=-129, B_zp=0).verify, "A_zp fits i8")
    assert err.op_name == "tosa.matmul"


# ------------------------------------------------------------------------------------------------
# FFT2D (§2.3.6), RFFT2D (§2.3.10)


def test_fft2d() -> None:
    assert T.FFT2dOp.infer_shapes([(2, 8, 4), (2, 8, 4)], inverse=False) == [(2, 8, 4), (2, 8, 4)]
    assert T.FFT2dOp.infer_shapes([(1, 1, 1), (1, 1, 1)], inverse=True) == [(1, 1, 1), (1, 1, 1)]
    raises_rule(lambda: T.FFT2dOp.infer_shapes([(1, 6, 8), (1, 6, 8)], inverse=False), "power_of_two(H)", ShapeError)
    raises_rule(lambda: T.FFT2dOp.infer_shapes([(1, 8, 12), (1, 8, 12)], inverse=False), "power_of_two(W)", ShapeError)
    raises_rule(lambda: T.FFT2dOp.infer_shapes([(1, 8, 8), (1, 8, 4)], inverse=False),
                "input_imag has the shape of input_real", ShapeError)
    raises_rule(lambda: T.FFT2dOp.infer_shapes([(8, 8), (8, 8)], inverse=False), "input_real has shape [N,H,W]", ShapeError)
    re_, im = values((f32, (2, 4, 16)), (f32, (2, 4, 16)))
    op = T.FFT2dOp.make([re_, im], f32, inverse=True)
    op.verify()
    assert [r.type for r in op.results] == [TensorType(f32, (2, 4, 16))] * 2
    assert op.type_mode().profile is MI
    h1, h2 = values((f16, (2, 4, 16)), (f16, (2, 4, 16)))
    raises_rule(T.FFT2dOp.make([h1, h2], f16, inverse=False).verify, "supported data types")


def test_rfft2d() -> None:
    # [N, H/2 + 1, W/2 + 1]: both axes halved
    assert T.RFFT2dOp.infer_shapes([(1, 8, 16)]) == [(1, 5, 9), (1, 5, 9)]
    assert T.RFFT2dOp.infer_shapes([(3, 1, 2)]) == [(3, 1, 2), (3, 1, 2)]
    raises_rule(lambda: T.RFFT2dOp.infer_shapes([(1, 12, 8)]), "power_of_two(H)", ShapeError)
    raises_rule(lambda: T.RFFT2dOp.infer_shapes([(1, 8, 7)]), "power_of_two(W)", ShapeError)
    (x,) = values((f32, (2, 4, 4)))
    op = T.RFFT2dOp.make([x], f32)
    op.verify()
    assert [r.type for r in op.results] == [TensorType(f32, (2, 3, 3))] * 2
    # the [N,H,W] output of the spec's pseudocode is rejected
    bad = T.RFFT2dOp.create(operands=[x], result_types=[TensorType(f32, (2, 4, 4))] * 2)
    raises_rule(bad.verify, "output shape")
    (b,) = values((bf16, (2, 4, 4)))
    raises_rule(T.RFFT2dOp.make([b], bf16).verify, "supported data types")


# ------------------------------------------------------------------------------------------------
# TRANSPOSE_CONV2D (§2.3.11)


def tconv(out_shape, out_pad=(0, 0, 0, 0), stride=(1, 1)) -> dict[str, Any]:
    return dict(out_pad=out_pad, stride=stride, out_shape=out_shape, input_zp=0, weight_zp=0)


def test_transpose_conv2d_infer() -> None:
    infer = T.TransposeConv2DOp.infer_shapes
    # (4 - 1) * 2 + 3 = 9
    assert infer([(1, 4, 4, 2), (3, 3, 3, 2), (3,)], **tconv((1, 9, 9, 3), stride=(2, 2))) == [(1, 9, 9, 3)]
    # out_pad crops: (4 - 1) * 2 - 1 - 0 + 3 = 8; W: (4 - 1) * 2 - 0 - 2 + 3 = 7
    assert infer([(1, 4, 4, 2), (3, 3, 3, 2), (3,)], **tconv((1, 8, 7, 3), (1, 0, 0, 2), (2, 2))) == [(1, 8, 7, 3)]
    # H: (3 - 1) * 1 + 2 = 4, W: (5 - 1) * 3 + 2 = 14
    assert infer([(2, 3, 5, 1), (1, 2, 2, 1), (1,)], **tconv((2, 4, 14, 1), stride=(1, 3))) == [(2, 4, 14, 1)]


@pytest.mark.parametrize("shapes, attrs, rule", [
    ([(1, 4, 4, 1), (1, 3, 3, 1), (1,)], tconv((1, 7, 6, 1), (0, -1, 0, 0)), "out_pad_top, out_pad_bottom >= 0"),
    ([(1, 4, 4, 1), (1, 3, 3, 1), (1,)], tconv((1, 6, 7, 1), (0, 0, 0, -1)), "out_pad_left, out_pad_right >= 0"),
    ([(1, 4, 4, 1), (1, 3, 3, 1), (1,)], tconv((1, 3, 6, 1), stride=(0, 1)), "stride_y, stride_x >= 1"),
    ([(1, 4, 4, 1), (1, 3, 3, 1), (1,)], tconv((1, 8, 9, 1), stride=(2, 2)),
     "OH == (IH - 1) * stride_y - out_pad_top - out_pad_bottom + KH"),
    ([(1, 4, 4, 1), (1, 3, 3, 1), (1,)], tconv((1, 6, 6, 1), (0, 0, 1, 0)),
     "OW == (IW - 1) * stride_x - out_pad_left - out_pad_right + KW"),
    # the crop removes everything: OH = (1 - 1) * 1 - 1 - 1 + 1 = -1
    ([(1, 1, 4, 1), (1, 1, 1, 1), (1,)], tconv((1, 1, 4, 1), (1, 1, 0, 0)),
     "OH == (IH - 1) * stride_y - out_pad_top - out_pad_bottom + KH"),
    ([(1, 4, 4, 1), (1, 3, 3, 1), (1,)], tconv((2, 6, 6, 1)), "out_shape[0] == N"),
    ([(1, 4, 4, 1), (1, 3, 3, 1), (1,)], tconv((1, 6, 6, 2)), "out_shape[3] == OC"),
    ([(1, 4, 4, 1), (1, 3, 3, 1), (1,)], tconv((1, 6, 6)), "out_shape has 4 elements"),
    ([(1, 4, 4, 1), (1, 3, 3, 2), (1,)], tconv((1, 6, 6, 1)), "weight IC == input IC"),
])
def test_transpose_conv2d_infer_errors(shapes, attrs, rule) -> None:
    raises_rule(lambda: T.TransposeConv2DOp.infer_shapes(shapes, **attrs), rule, ShapeError)


def test_transpose_conv2d_make_and_result_check() -> None:
    x, w, b = values((bf16, (1, 2, 2, 1)), (bf16, (2, 2, 2, 1)), (f32, (2,)))
    op = T.TransposeConv2DOp.make([x, w, b], f32, **tconv((1, 5, 5, 2), stride=(3, 3)))
    op.verify()
    assert op.output.type == TensorType(f32, (1, 5, 5, 2))
    # out_shape is the source of truth: a result type that disagrees with it is an error
    bad = T.TransposeConv2DOp.create(operands=[x, w, b], result_types=[TensorType(f32, (1, 5, 5, 3))],
                                     properties=op.properties.copy())
    raises_rule(bad.verify, "output shape")


# ------------------------------------------------------------------------------------------------
# Text form: the lit files' contents also pass through the Python API


def test_round_trip_file_verifies_and_is_stable() -> None:
    text = (FILECHECK_DIR / "ops.mlir").read_text()
    module = parse_module(text)
    module.verify()
    printed = print_module(module)
    again = parse_module(printed)
    again.verify()
    assert print_module(again) == printed
    generic = parse_module(print_module(module, generic=True))
    generic.verify()
    assert print_module(generic) == printed


def test_invalid_file_chunks_fail_with_their_rules() -> None:
    text = (FILECHECK_DIR / "ops_invalid.mlir").read_text()
    pattern = re.compile(r"//\s*expected-error\s*\{\{(.*?)\}\}")
    chunks = [(line, chunk) for line, chunk in split_input_file(text) if pattern.search(chunk)]
    assert len(chunks) >= 60
    ops_hit: set[str] = set()
    for line, chunk in chunks:
        expected = pattern.search(chunk).group(1)  # type: ignore[union-attr]
        module = parse_module(chunk)
        with pytest.raises(VerifyError) as info:
            verify_module(module)
        assert expected in info.value.describe(), f"chunk at line {line}"
        ops_hit.add(info.value.op_name)
    assert {c.name for c in (T.ArgMaxOp, T.AvgPool2dOp, T.Conv2DOp, T.Conv3DOp, T.DepthwiseConv2DOp, T.FFT2dOp,
                             T.FullyConnectedOp, T.MatMulOp, T.MaxPool2dOp, T.RFFT2dOp,
                             T.TransposeConv2DOp)} <= ops_hit


def test_generic_form_parses() -> None:
    module = parse_module(
        'func.func @f(%x: tensor<1x6x6x3xi8>) -> tensor<1x3x3x3xi8> {\n'
        '  %0 = "tosa.max_pool2d"(%x) <{kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, '
        'pad = array<i64: 0, 0, 0, 0>}> : (tensor<1x6x6x3xi8>) -> tensor<1x3x3x3xi8>\n'
        '  func.return %0 : tensor<1x3x3x3xi8>\n}\n')
    module.verify()
    assert "tosa.max_pool2d %x {kernel = array<i64: 2, 2>" in print_module(module)


def test_quantized_element_types_count_as_their_storage_type() -> None:
    q = "!quant.uniform<i8:f32, 0.5:-3>"
    module = parse_module(
        f"func.func @f(%x: tensor<1x4x4x1x{q}>, %w: tensor<2x1x1x1xi8>, %b: tensor<2xi32>) -> tensor<1x4x4x2xi32> {{\n"
        f"  %0 = tosa.conv2d %x, %w, %b {{pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, "
        f"dilation = array<i64: 1, 1>, input_zp = -3 : i64, weight_zp = 0 : i64}} : "
        f"(tensor<1x4x4x1x{q}>, tensor<2x1x1x1xi8>, tensor<2xi32>) -> tensor<1x4x4x2xi32>\n"
        f"  %1 = tosa.max_pool2d %x {{kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, "
        f"pad = array<i64: 0, 0, 0, 0>}} : (tensor<1x4x4x1x{q}>) -> tensor<1x2x2x1x{q}>\n"
        f"  func.return %0 : tensor<1x4x4x2xi32>\n}}\n")
    module.verify()
