"""TOSA 0.30 §2.9 reduction, §2.10 data layout, §2.11 scatter/gather, §2.12 RESIZE: verifiers and
shape inference. Expected shapes and errors come from the spec's ERROR_IF rules and formulas,
computed by hand in the comments."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import DenseArrayBase, TensorType, f32, i8, i32, i64
from xdsl.dialects.test import TestOp as Producer

from nnkiln.dialects.tosa.base import Profile
from nnkiln.dialects.tosa.ops_data_layout import (
    ConcatOp,
    PadOp,
    ReshapeOp,
    ReverseOp,
    SliceOp,
    TileOp,
    TransposeOp,
)
from nnkiln.dialects.tosa.ops_image import ResizeMode, ResizeModeAttr, ResizeOp, idiv, resize_output_dim
from nnkiln.dialects.tosa.ops_reduction import (
    ReduceAllOp,
    ReduceAnyOp,
    ReduceMaxOp,
    ReduceMinOp,
    ReduceProductOp,
    ReduceSumOp,
)
from nnkiln.dialects.tosa.ops_scatter_gather import GatherOp, ScatterOp
from nnkiln.ir.errors import ShapeError, VerifyError
from nnkiln.ir.text import parse_module, print_module

REDUCTIONS = [ReduceAllOp, ReduceAnyOp, ReduceMaxOp, ReduceMinOp, ReduceProductOp, ReduceSumOp]


def _func(args: str, body: str) -> str:
    return f"func.func @main({args}) {{\n{body}\n  func.return\n}}\n"


def verify_text(args: str, body: str):
    module = parse_module(_func(args, body))
    module.verify()
    return module


def verify_error(args: str, body: str) -> VerifyError:
    module = parse_module(_func(args, body))
    with pytest.raises(VerifyError) as info:
        module.verify()
    return info.value


def roundtrip(args: str, body: str) -> str:
    text = print_module(verify_text(args, body))
    again = print_module(parse_module(text))
    assert again == text
    return text


# ----------------------------------------------------------------------------------------------
# §2.9 Reduction


@pytest.mark.parametrize("op", REDUCTIONS)
def test_reduction_keeps_rank_with_axis_one(op):
    assert op.infer_shapes([(2, 3, 4)], axis=0) == [(1, 3, 4)]
    assert op.infer_shapes([(2, 3, 4)], axis=2) == [(2, 3, 1)]
    assert op.infer_shapes([(7,)], axis=0) == [(1,)]


@pytest.mark.parametrize("op", REDUCTIONS)
@pytest.mark.parametrize("axis", [-1, 3])
def test_reduction_axis_range(op, axis):
    with pytest.raises(ShapeError) as info:
        op.infer_shapes([(2, 3, 4)], axis=axis)
    assert info.value.rule == "0 <= axis < rank(shape1)"


@pytest.mark.parametrize("shape", [(), (1, 2, 3, 4, 5)])
def test_reduction_rank_1_to_4(shape):
    with pytest.raises(ShapeError) as info:
        ReduceSumOp.infer_shapes([shape], axis=0)
    assert "rank(shape1)" in info.value.rule


def test_reduction_output_axis_must_be_one():
    err = verify_error("%a: tensor<2x3xi32>",
                       "%0 = tosa.reduce_sum %a {axis = 1 : i64} : (tensor<2x3xi32>) -> tensor<2x3xi32>")
    assert err.rule == "shape[axis] == 1"
    assert err.op_name == "tosa.reduce_sum"


def test_reduction_rank_is_kept():
    # [2,3] reduced on axis 1 is [2,1], not [2].
    err = verify_error("%a: tensor<2x3xf32>",
                       "%0 = tosa.reduce_max %a {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2xf32>")
    assert err.rule == "output shape"


@pytest.mark.parametrize(
    ("op", "elem", "ok"),
    [
        ("reduce_all", "i1", True), ("reduce_all", "i8", False),
        ("reduce_any", "i1", True), ("reduce_any", "f32", False),
        ("reduce_max", "i8", True), ("reduce_max", "i16", True), ("reduce_max", "bf16", True),
        ("reduce_max", "i1", False),
        ("reduce_min", "i32", True), ("reduce_min", "f16", True), ("reduce_min", "i48", False),
        ("reduce_product", "f32", True), ("reduce_product", "i32", False),
        ("reduce_sum", "i32", True), ("reduce_sum", "f16", True),
        ("reduce_sum", "i8", False), ("reduce_sum", "i16", False),
    ],
)
def test_reduction_type_tables(op, elem, ok):
    body = f"%0 = tosa.{op} %a {{axis = 0 : i64}} : (tensor<4x2x{elem}>) -> tensor<1x2x{elem}>"
    if ok:
        verify_text(f"%a: tensor<4x2x{elem}>", body)
    else:
        assert verify_error(f"%a: tensor<4x2x{elem}>", body).rule == "supported data types"


def test_reduction_input_output_same_type():
    err = verify_error("%a: tensor<4xi8>",
                       "%0 = tosa.reduce_max %a {axis = 0 : i64} : (tensor<4xi8>) -> tensor<1xi32>")
    assert err.rule == "supported data types"


def test_reduce_product_has_no_bi_mode():
    assert all(m.profile is Profile.MI for m in ReduceProductOp.TYPE_MODES)
    assert {m.kinds[0].value for m in ReduceSumOp.TYPE_MODES if m.profile is Profile.BI} == {"i32"}


# ----------------------------------------------------------------------------------------------
# §2.10.1 CONCAT


def test_concat_shape():
    assert ConcatOp.infer_shapes([(2, 3), (2, 5), (2, 1)], axis=1) == [(2, 9)]
    assert ConcatOp.infer_shapes([(4, 3)], axis=0) == [(4, 3)]


def test_concat_errors():
    with pytest.raises(ShapeError, match="axis = 2"):
        ConcatOp.infer_shapes([(2, 3), (2, 3)], axis=2)
    with pytest.raises(ShapeError) as info:
        ConcatOp.infer_shapes([(2, 3), (2, 3, 1)], axis=0)
    assert info.value.rule == "rank(input_shape) == rank(shapes1[0])"
    with pytest.raises(ShapeError) as info:
        ConcatOp.infer_shapes([(2, 3), (3, 3)], axis=1)
    assert info.value.rule == "input_shape[index] == shapes1[0][index] for index != axis"
    with pytest.raises(ShapeError):
        ConcatOp.infer_shapes([], axis=0)


def test_concat_output_axis_is_sum():
    err = verify_error("%a: tensor<2x3xi8>, %b: tensor<2x5xi8>",
                       "%0 = tosa.concat %a, %b {axis = 1 : i64} : (tensor<2x3xi8>, tensor<2x5xi8>) -> tensor<2x7xi8>")
    assert err.rule == "shape[axis] == sum(shapes1[k][axis] for all k)"


def test_concat_same_data_type():
    err = verify_error("%a: tensor<2x3xi8>, %b: tensor<2x5xi16>",
                       "%0 = tosa.concat %a, %b {axis = 1 : i64} : (tensor<2x3xi8>, tensor<2x5xi16>) -> tensor<2x8xi8>")
    assert err.rule == "all inputs have the same data type"


# ----------------------------------------------------------------------------------------------
# §2.10.2 PAD


def test_pad_shape_before_after_per_dim():
    # padding [[1, 2], [0, 3]] flattened: dim0 1 before 2 after (2 -> 5), dim1 0 + 3 (3 -> 6).
    assert PadOp.infer_shapes([(2, 3)], padding=(1, 2, 0, 3), pad_const=0) == [(5, 6)]
    assert PadOp.infer_shapes([()], padding=(), pad_const=0) == [()]


def test_pad_errors():
    with pytest.raises(ShapeError) as info:
        PadOp.infer_shapes([(2, 3)], padding=(1, 0, -1, 0), pad_const=0)
    assert info.value.rule == "padding >= 0"
    with pytest.raises(ShapeError) as info:
        PadOp.infer_shapes([(2, 3)], padding=(1, 1), pad_const=0)
    assert info.value.rule == "length(padding) == 2 * rank(input1)"


@pytest.mark.parametrize(
    ("elem", "const", "ok"),
    [
        ("i8", "-128 : i64", True), ("i8", "127 : i64", True), ("i8", "128 : i64", False),
        ("i8", "-129 : i64", False), ("i16", "-32768 : i64", True), ("i16", "40000 : i64", False),
        ("i32", "2147483647 : i64", True), ("i8", "0.0 : f32", False), ("i8", "true", False),
        ("i1", "true", True), ("i1", "false", True), ("i1", "1 : i64", False),
        ("f32", "-1.5 : f32", True), ("f16", "6.5e4 : f32", True), ("f16", "1.0e6 : f32", False),
        ("bf16", "1.0e30 : f32", True), ("f32", "0 : i64", False),
    ],
)
def test_pad_const_matches_element_type(elem, const, ok):
    body = f"%0 = tosa.pad %a {{padding = array<i64: 0, 1>, pad_const = {const}}} : (tensor<2x{elem}>) -> tensor<3x{elem}>"
    if ok:
        verify_text(f"%a: tensor<2x{elem}>", body)
    else:
        assert "pad_const" in verify_error(f"%a: tensor<2x{elem}>", body).rule


def test_pad_quantized_const_includes_zero_point():
    # A quantized int8 tensor: pad_const is the stored int8 value (the zero point), no separate zp.
    q = "!quant.uniform<i8:f32, 0.5:-3>"
    verify_text(f"%a: tensor<2x{q}>",
                f"%0 = tosa.pad %a {{padding = array<i64: 1, 1>, pad_const = -3 : i64}} : (tensor<2x{q}>) -> tensor<4x{q}>")


# ----------------------------------------------------------------------------------------------
# §2.10.3 RESHAPE


def test_reshape():
    assert ReshapeOp.infer_shapes([(2, 3, 4)], new_shape=(6, 4)) == [(6, 4)]
    assert ReshapeOp.infer_shapes([(1, 1)], new_shape=()) == [()]
    with pytest.raises(ShapeError) as info:
        ReshapeOp.infer_shapes([(2, 3)], new_shape=(5,))
    assert info.value.rule == "tensor_size(shape1) == tensor_size(shape)"
    with pytest.raises(ShapeError) as info:
        ReshapeOp.infer_shapes([(2, 3)], new_shape=(-1, 3))
    assert info.value.rule == "new_shape[i] >= 1"


def test_reshape_new_shape_is_result_shape():
    err = verify_error("%a: tensor<2x3xi8>",
                       "%0 = tosa.reshape %a {new_shape = array<i64: 3, 2>} : (tensor<2x3xi8>) -> tensor<6xi8>")
    assert err.rule == "output shape"


# ----------------------------------------------------------------------------------------------
# §2.10.4 REVERSE, §2.10.5 SLICE, §2.10.6 TILE, §2.10.7 TRANSPOSE


def test_reverse():
    assert ReverseOp.infer_shapes([(2, 3)], axis=1) == [(2, 3)]
    with pytest.raises(ShapeError):
        ReverseOp.infer_shapes([(2, 3)], axis=2)
    with pytest.raises(ShapeError):
        ReverseOp.infer_shapes([(1, 1, 1, 1, 2)], axis=0)
    with pytest.raises(ShapeError):
        ReverseOp.infer_shapes([()], axis=0)


def test_slice():
    assert SliceOp.infer_shapes([(5, 6)], start=(1, 0), size=(4, 6)) == [(4, 6)]
    cases = [
        ((5, 6), (1,), (4, 6), "length(start) == rank(input1)"),
        ((5, 6), (1, 0), (4,), "length(size) == rank(input1)"),
        ((5, 6), (-1, 0), (2, 2), "start[index] >= 0"),
        ((5, 6), (0, 0), (0, 2), "size[index] > 0"),
        ((5, 6), (2, 0), (4, 2), "start[index] + size[index] <= shape1[index]"),
        ((1, 1, 1, 1, 1), (0,) * 5, (1,) * 5, "1 <= rank(input1) <= 4"),
    ]
    for shape, start, size, rule in cases:
        with pytest.raises(ShapeError) as info:
            SliceOp.infer_shapes([shape], start=start, size=size)
        assert info.value.rule == rule


def test_slice_output_is_size():
    err = verify_error("%a: tensor<5x6xf32>",
                       "%0 = tosa.slice %a {start = array<i64: 1, 0>, size = array<i64: 4, 6>} : (tensor<5x6xf32>) -> tensor<4x5xf32>")
    assert err.rule == "output shape"


def test_tile():
    assert TileOp.infer_shapes([(2, 3)], multiples=(3, 1)) == [(6, 3)]
    with pytest.raises(ShapeError):
        TileOp.infer_shapes([(2, 3)], multiples=(3,))
    with pytest.raises(ShapeError):
        TileOp.infer_shapes([(2, 3)], multiples=(0, 1))
    err = verify_error("%a: tensor<2x3xi1>",
                       "%0 = tosa.tile %a {multiples = array<i64: 2, 2>} : (tensor<2x3xi1>) -> tensor<4x3xi1>")
    assert err.rule == "output shape"


def test_transpose():
    # output dim i = input dim perms[i]: [2,3,4] with perms [2,0,1] -> [4,2,3].
    assert TransposeOp.infer_shapes([(2, 3, 4)], perms=(2, 0, 1)) == [(4, 2, 3)]
    assert TransposeOp.infer_shapes([(1, 2, 3, 4, 5)], perms=(4, 3, 2, 1, 0)) == [(5, 4, 3, 2, 1)]
    for perms, rule in [((0, 0, 1), "perms values are not repeated"), ((0, 1, 3), "0 <= perms[i] < rank(shape1)"),
                        ((0, -1, 1), "0 <= perms[i] < rank(shape1)"), ((0, 1), "length(perms) == rank(input1)")]:
        with pytest.raises(ShapeError) as info:
            TransposeOp.infer_shapes([(2, 3, 4)], perms=perms)
        assert info.value.rule == rule
    with pytest.raises(ShapeError):
        TransposeOp.infer_shapes([()], perms=())


@pytest.mark.parametrize("op", ["concat", "pad", "reshape", "reverse", "slice", "tile", "transpose"])
@pytest.mark.parametrize(("elem", "ok"), [("i1", True), ("i8", True), ("i16", True), ("i32", True),
                                          ("f16", True), ("bf16", True), ("f32", True), ("i48", False),
                                          ("ui8", False)])
def test_data_layout_type_table(op, elem, ok):
    t = f"tensor<2x2x{elem}>"
    attrs = {
        "concat": "{axis = 0 : i64}", "reverse": "{axis = 0 : i64}", "reshape": "{new_shape = array<i64: 2, 2>}",
        "slice": "{start = array<i64: 0, 0>, size = array<i64: 2, 2>}", "tile": "{multiples = array<i64: 1, 1>}",
        "transpose": "{perms = array<i64: 1, 0>}", "pad": "{padding = array<i64: 0, 0, 0, 0>, pad_const = 0 : i64}",
    }[op]
    if op == "pad" and elem in ("f16", "bf16", "f32"):
        attrs = "{padding = array<i64: 0, 0, 0, 0>, pad_const = 0.0 : f32}"
    if op == "pad" and elem == "i1":
        attrs = "{padding = array<i64: 0, 0, 0, 0>, pad_const = false}"
    body = f"%0 = tosa.{op} %a {attrs} : ({t}) -> {t}"
    if ok:
        verify_text(f"%a: {t}", body)
    else:
        assert verify_error(f"%a: {t}", body).rule == "supported data types"


def test_data_layout_output_type_must_match():
    err = verify_error("%a: tensor<2xi8>",
                       "%0 = tosa.reverse %a {axis = 0 : i64} : (tensor<2xi8>) -> tensor<2xi16>")
    assert err.rule == "supported data types"


# ----------------------------------------------------------------------------------------------
# §2.11 GATHER / SCATTER


def test_gather_shapes():
    assert GatherOp.infer_shapes([(2, 5, 3), (2, 4)]) == [(2, 4, 3)]
    with pytest.raises(ShapeError, match="indices has N = 3"):
        GatherOp.infer_shapes([(2, 5, 3), (3, 4)])
    with pytest.raises(ShapeError):
        GatherOp.infer_shapes([(2, 5), (2, 4)])
    with pytest.raises(ShapeError):
        GatherOp.infer_shapes([(2, 5, 3), (2, 4, 1)])


def test_scatter_shapes():
    assert ScatterOp.infer_shapes([(2, 5, 3), (2, 4), (2, 4, 3)]) == [(2, 5, 3)]
    with pytest.raises(ShapeError) as info:
        ScatterOp.infer_shapes([(2, 5, 3), (2, 4), (2, 4, 2)])
    assert info.value.rule == "input is [N,W,C]"
    # W > K is legal at verification time: the repeated write is a run-time REQUIRE.
    assert ScatterOp.infer_shapes([(1, 2, 1), (1, 3), (1, 3, 1)]) == [(1, 2, 1)]


@pytest.mark.parametrize(("v", "idx", "ok"), [("i8", "i32", True), ("i16", "i32", True), ("i32", "i32", True),
                                               ("f16", "i32", True), ("bf16", "i32", True), ("f32", "i32", True),
                                               ("i8", "i16", False), ("i8", "i64", False), ("i1", "i32", False)])
def test_gather_scatter_types(v, idx, ok):
    args = f"%v: tensor<1x4x2x{v}>, %i: tensor<1x3x{idx}>, %u: tensor<1x3x2x{v}>"
    g = f"%0 = tosa.gather %v, %i : (tensor<1x4x2x{v}>, tensor<1x3x{idx}>) -> tensor<1x3x2x{v}>"
    s = f"%0 = tosa.scatter %v, %i, %u : (tensor<1x4x2x{v}>, tensor<1x3x{idx}>, tensor<1x3x2x{v}>) -> tensor<1x4x2x{v}>"
    for body in (g, s):
        if ok:
            verify_text(args, body)
        else:
            assert verify_error(args, body).rule == "supported data types"


# ----------------------------------------------------------------------------------------------
# §2.12 RESIZE


def _rz(ih=4, iw=4, *, stride=(1, 1), offset=(0, 0), border=(0, 0), shift=1, output_size=None):
    return ResizeOp.infer_shapes([(1, ih, iw, 3)], stride=stride, offset=offset, border=border, shift=shift,
                                 output_size=output_size, mode=ResizeMode.BILINEAR)


def test_idiv_truncates():
    assert idiv(7, 2) == 3 and idiv(-7, 2) == -3 and idiv(-1, 2) == 0


def test_resize_spec_examples():
    # §2.12.1 [OH-1, OW-1] = (1<<k)[IH-1, IW-1]: shift=k, stride=1. IH=4, k=2: OH = 3*4 + 1 = 13.
    assert _rz(4, 4, shift=2) == [(1, 13, 13, 3)]
    # [OH, OW] = (1<<k)[IH, IW]: shift=k+1, stride=2, offset=-(1<<k)+1, border=1<<(k-1).
    # k=1, IH=4: idiv(3*4 + 1, 2) + 1 + 1 = 6 + 2 = 8 = 2*4.
    assert _rz(4, 4, shift=2, stride=(2, 2), offset=(-1, -1), border=(1, 1)) == [(1, 8, 8, 3)]
    # k=2, IH=5, IW=3: H: idiv(4*8 + 3, 2) + 3 = 17 + 3 = 20; W: idiv(2*8 + 3, 2) + 3 = 9 + 3 = 12.
    assert _rz(5, 3, shift=3, stride=(2, 2), offset=(-3, -3), border=(2, 2)) == [(1, 20, 12, 3)]
    # Uniform sampling IH=5 -> OH=9 with shift=4: stride = (4*16)/8 = 8; OH = idiv(64, 8) + 1 = 9.
    assert _rz(5, 5, shift=4, stride=(8, 8)) == [(1, 9, 9, 3)]


def test_resize_idiv_truncates_negative_numerator():
    # IH=1, shift=1, offset_y=1, stride 2: idiv(0 - 1, 2) = 0 (toward zero, not floor -1) -> OH = 1.
    assert _rz(1, 4, shift=1, stride=(2, 1), offset=(1, 0)) == [(1, 1, 7, 3)]


def test_resize_output_size_must_match_formula():
    assert _rz(4, 4, shift=1, output_size=(7, 7)) == [(1, 7, 7, 3)]
    with pytest.raises(ShapeError, match=r"output_size = \[8, 7\] but the attributes give \[OH, OW\] = \[7, 7\]"):
        _rz(4, 4, shift=1, output_size=(8, 7))


@pytest.mark.parametrize(
    ("kwargs", "rule"),
    [
        (dict(shift=0), "1 <= shift <= 11 for an integer resize_t"),
        (dict(shift=12), "1 <= shift <= 11 for an integer resize_t"),
        (dict(stride=(0, 1)), "stride_x > 0 && stride_y > 0"),
        (dict(stride=(1, -2)), "stride_x > 0 && stride_y > 0"),
        (dict(shift=1, stride=(32, 1)), "stride_y < (16 << shift)"),
        (dict(shift=1, stride=(1, 32)), "stride_x < (16 << shift)"),
        (dict(shift=1, offset=(-32, 0)), "(-16 << shift) < offset_y < (16 << shift)"),
        (dict(shift=1, offset=(0, 32)), "(-16 << shift) < offset_x < (16 << shift)"),
        (dict(stride=(1, 1), offset=(0.0, 0.0)), "stride and offset have one resize_t"),
        (dict(border=(0,)), "length(border) == 2"),
    ],
)
def test_resize_integer_errors(kwargs, rule):
    with pytest.raises(ShapeError) as info:
        _rz(**kwargs)
    assert info.value.rule == rule


def test_resize_integer_limits_are_inclusive_where_spec_says():
    # stride = (16<<1) - 1 = 31 and offset = +-31 are allowed with shift 1.
    # IH=40: H: idiv(39*2 - 31, 31) + 1 = idiv(47, 31) + 1 = 2; W: idiv(78 + 31, 31) + 1 = 3 + 1 = 4.
    assert _rz(40, 40, shift=1, stride=(31, 31), offset=(31, -31)) == [(1, 2, 4, 3)]
    assert _rz(4, 4, shift=11) == [(1, 3 * 2048 + 1, 3 * 2048 + 1, 3)]


def test_resize_max_dim():
    # IH = 16384 is rejected even as an input dimension.
    with pytest.raises(ShapeError) as info:
        _rz(16384, 4, shift=1, stride=(4, 1))
    assert info.value.rule == "max(OH, OW, IH, IW) < 16384"
    # shift=11, stride 1: OH = 7*2048 + 1 = 14337 < 16384 fine; IH=9 gives 16385.
    assert _rz(8, 4, shift=11)[0][1] == 14337
    with pytest.raises(ShapeError):
        _rz(9, 4, shift=11)


def test_resize_output_at_least_one():
    # IH=1, shift 1, offset 31, stride 1: idiv(-31, 1) + 1 = -30.
    with pytest.raises(ShapeError) as info:
        _rz(1, 4, offset=(31, 0))
    assert info.value.rule == "OH >= 1 && OW >= 1"


def test_resize_float_mode():
    # (IH-1 - offset) / stride + 1: (3 - 0) / 0.5 + 1 = 7; W: (3 - 0.25)/0.75 = 3.67 -> 3, + 1 + border 1 = 5.
    assert _rz(4, 4, shift=0, stride=(0.5, 0.75), offset=(0.0, 0.25), border=(0, 1)) == [(1, 7, 5, 3)]
    with pytest.raises(ShapeError) as info:
        _rz(4, 4, shift=1, stride=(0.5, 0.5), offset=(0.0, 0.0))
    assert info.value.rule == "shift == 0 for a float resize_t"
    with pytest.raises(ShapeError) as info:
        _rz(4, 4, shift=0, stride=(4.5, 1.0), offset=(0.0, 0.0))
    assert info.value.rule == "stride_x <= IW && stride_y <= IH"
    # stride == IH is allowed (ERROR_IF is stride_y > IH): (3 - 0)/4 = 0.75 -> 0, OH = 1.
    assert _rz(4, 4, shift=0, stride=(4.0, 1.0), offset=(0.0, 0.0))[0][1] == 1
    with pytest.raises(ShapeError):
        _rz(4, 4, shift=0, stride=(0.0, 1.0), offset=(0.0, 0.0))


def test_resize_float_idiv_is_exact_on_fp32_values():
    # Decision: exact quotient of the fp32 values. fp32(0.1) = 0.100000001490116..., so 3 / it =
    # 29.9999995... which truncates to 29, OH = 30 (fp32 division would round to 30.0 first).
    import numpy as np

    s = float(np.float32(0.1))
    assert resize_output_dim(4, s, 0.0, 0, 0) == 30


RESIZE_ATTRS = ("{{output_size = array<i64: {oh}, {ow}>, stride = {stride}, offset = {offset}, "
                "border = array<i64: 0, 0>, shift = {shift} : i64, mode = #tosa<resize_mode {mode}>}}")


def _resize_body(elem_in, elem_out, mode, *, ints=True, shift=None, oh=7, ow=7):
    stride = "array<i64: 1, 1>" if ints else "array<f32: 0.5, 0.5>"
    offset = "array<i64: 0, 0>" if ints else "array<f32: 0.0, 0.0>"
    shift = (1 if ints else 0) if shift is None else shift
    attrs = RESIZE_ATTRS.format(oh=oh, ow=ow, stride=stride, offset=offset, shift=shift, mode=mode)
    return f"%0 = tosa.resize %a {attrs} : (tensor<1x4x4x2x{elem_in}>) -> tensor<1x{oh}x{ow}x2x{elem_out}>"


@pytest.mark.parametrize(
    ("elem_in", "elem_out", "mode", "ints", "ok"),
    [
        ("i8", "i32", "BILINEAR", True, True), ("i8", "i8", "NEAREST", True, True),
        ("i16", "i48", "BILINEAR", True, True), ("i16", "i16", "NEAREST", True, True),
        ("i8", "i32", "NEAREST", True, False), ("i8", "i8", "BILINEAR", True, False),
        ("i16", "i48", "NEAREST", True, False), ("i16", "i16", "BILINEAR", True, False),
        ("i8", "i16", "BILINEAR", True, False), ("i32", "i32", "NEAREST", True, False),
        ("f32", "f32", "BILINEAR", False, True), ("f16", "f16", "NEAREST", False, True),
        ("bf16", "bf16", "BILINEAR", False, True), ("f32", "f16", "BILINEAR", False, False),
        ("f32", "f32", "BILINEAR", True, False), ("i8", "i8", "NEAREST", False, False),
    ],
)
def test_resize_type_modes_and_resize_t(elem_in, elem_out, mode, ints, ok):
    args = f"%a: tensor<1x4x4x2x{elem_in}>"
    body = _resize_body(elem_in, elem_out, mode, ints=ints)
    if ok:
        verify_text(args, body)
    else:
        verify_error(args, body)


def test_resize_errors_name_rules():
    args = "%a: tensor<1x4x4x2xi8>"
    assert verify_error(args, _resize_body("i8", "i32", "NEAREST")).rule == "mode BILINEAR for signed 8, bilinear"
    assert verify_error(args, _resize_body("i8", "i32", "BILINEAR", ints=False)).rule == "stride is resize_t (int16)"
    fargs = "%a: tensor<1x4x4x2xf32>"
    assert verify_error(fargs, _resize_body("f32", "f32", "NEAREST", ints=True)).rule == "stride is resize_t (fp32)"
    err = verify_error(args, _resize_body("i8", "i32", "BILINEAR", oh=8))
    assert err.rule.startswith("output_size == [OH, OW]")
    err = verify_error(args, _resize_body("i8", "i32", "BILINEAR", shift=0, oh=4, ow=4))
    assert err.rule == "1 <= shift <= 11 for an integer resize_t"


def test_resize_input_rank_4():
    with pytest.raises(ShapeError) as info:
        ResizeOp.infer_shapes([(4, 4, 2)], stride=(1, 1), offset=(0, 0), border=(0, 0), shift=1, output_size=None)
    assert info.value.rule == "input is [N,IH,IW,C]"


def test_resize_make_and_roundtrip():
    arg = Producer(result_types=[TensorType(i8, (1, 4, 4, 2))]).results[0]
    op = ResizeOp.make([arg], i32, stride=(1, 1), offset=(0, 0), border=(0, 0), shift=1, mode=ResizeMode.BILINEAR)
    assert op.output.type == TensorType(i32, (1, 7, 7, 2))
    assert op.output_size == DenseArrayBase.from_list(i64, [7, 7])
    assert isinstance(op.mode, ResizeModeAttr) and op.mode.data is ResizeMode.BILINEAR
    farg = Producer(result_types=[TensorType(f32, (1, 4, 4, 2))]).results[0]
    fop = ResizeOp.make([farg], f32, stride=(1, 1), offset=(0, 0), border=(0, 0), shift=0, mode=ResizeMode.NEAREST)
    assert fop.stride == DenseArrayBase.from_list(f32, [1.0, 1.0])
    assert fop.output.type == TensorType(f32, (1, 4, 4, 2))
    fop.verify()
    assert fop.attr_values()["stride"] == (1.0, 1.0)


# ----------------------------------------------------------------------------------------------
# Text round trip, generic form, make()


def test_roundtrip_all_ops():
    args = ("%a: tensor<2x3xi8>, %b: tensor<2x5xi8>, %f: tensor<2x3xf32>, %p: tensor<2x3xi1>, "
            "%v: tensor<2x5x3xi16>, %i: tensor<2x4xi32>, %u: tensor<2x4x3xi16>, %r: tensor<1x4x4x2xi16>")
    body = "\n".join([
        "%0 = tosa.reduce_all %p {axis = 0 : i64} : (tensor<2x3xi1>) -> tensor<1x3xi1>",
        "%1 = tosa.reduce_any %p {axis = 1 : i64} : (tensor<2x3xi1>) -> tensor<2x1xi1>",
        "%2 = tosa.reduce_max %a {axis = 1 : i64} : (tensor<2x3xi8>) -> tensor<2x1xi8>",
        "%3 = tosa.reduce_min %f {axis = 0 : i64} : (tensor<2x3xf32>) -> tensor<1x3xf32>",
        "%4 = tosa.reduce_product %f {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x1xf32>",
        "%5 = tosa.reduce_sum %f {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x1xf32>",
        "%6 = tosa.concat %a, %b, %a {axis = 1 : i64} : (tensor<2x3xi8>, tensor<2x5xi8>, tensor<2x3xi8>) -> tensor<2x11xi8>",
        "%7 = tosa.pad %f {padding = array<i64: 1, 0, 0, 2>, pad_const = 2.500000e+00 : f32} : (tensor<2x3xf32>) -> tensor<3x5xf32>",
        "%8 = tosa.reshape %a {new_shape = array<i64: 3, 1, 2>} : (tensor<2x3xi8>) -> tensor<3x1x2xi8>",
        "%9 = tosa.reverse %p {axis = 1 : i64} : (tensor<2x3xi1>) -> tensor<2x3xi1>",
        "%10 = tosa.slice %a {start = array<i64: 1, 1>, size = array<i64: 1, 2>} : (tensor<2x3xi8>) -> tensor<1x2xi8>",
        "%11 = tosa.tile %a {multiples = array<i64: 2, 3>} : (tensor<2x3xi8>) -> tensor<4x9xi8>",
        "%12 = tosa.transpose %a {perms = array<i64: 1, 0>} : (tensor<2x3xi8>) -> tensor<3x2xi8>",
        "%13 = tosa.gather %v, %i : (tensor<2x5x3xi16>, tensor<2x4xi32>) -> tensor<2x4x3xi16>",
        "%14 = tosa.scatter %v, %i, %u : (tensor<2x5x3xi16>, tensor<2x4xi32>, tensor<2x4x3xi16>) -> tensor<2x5x3xi16>",
        "%15 = tosa.resize %r {output_size = array<i64: 7, 7>, stride = array<i64: 1, 1>, offset = array<i64: 0, 0>, "
        "border = array<i64: 0, 0>, shift = 1 : i64, mode = #tosa<resize_mode BILINEAR>} : (tensor<1x4x4x2xi16>) -> tensor<1x7x7x2xi48>",
    ])
    text = roundtrip(args, body)
    for line in body.splitlines():
        assert line.split("= ", 1)[1] in text


def test_generic_form_parses():
    verify_text("%a: tensor<2x3xi8>",
                '%0 = "tosa.pad"(%a) <{padding = array<i64: 0, 0, 1, 1>, pad_const = 0 : i64}> : (tensor<2x3xi8>) -> tensor<2x5xi8>')
    verify_text("%a: tensor<1x4x4x2xf32>",
                '%0 = "tosa.resize"(%a) <{output_size = array<i64: 7, 7>, stride = array<f32: 0.5, 0.5>, '
                'offset = array<f32: 0.0, 0.0>, border = array<i64: 0, 0>, shift = 0 : i64, '
                'mode = #tosa<resize_mode NEAREST>}> : (tensor<1x4x4x2xf32>) -> tensor<1x7x7x2xf32>')


def test_make_builds_inferred_shapes():
    a = Producer(result_types=[TensorType(i8, (2, 3))]).results[0]
    b = Producer(result_types=[TensorType(i8, (2, 5))]).results[0]
    assert ConcatOp.make([[a, b]], i8, axis=1).output.type == TensorType(i8, (2, 8))
    pad = PadOp.make([a], i8, padding=(0, 1, 2, 0), pad_const=-7)
    assert pad.output.type == TensorType(i8, (3, 5))
    pad.verify()
    assert ReduceMaxOp.make([a], i8, axis=0).output.type == TensorType(i8, (1, 3))
    assert TransposeOp.make([a], i8, perms=(1, 0)).output.type == TensorType(i8, (3, 2))
    idx = Producer(result_types=[TensorType(i32, (2, 4))]).results[0]
    vals = Producer(result_types=[TensorType(i8, (2, 6, 3))]).results[0]
    assert GatherOp.make([vals, idx], i8).output.type == TensorType(i8, (2, 4, 3))
