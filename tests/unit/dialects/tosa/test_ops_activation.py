"""TOSA 0.30 §2.4 activation functions: CLAMP, SIGMOID, TANH (type tables, CLAMP's ERROR_IF and
attribute rules, shape inference, make(), text form). Expected values come from the spec text."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, TensorType, bf16, f16, f32, i1, i8, i16, i32, i64
from xdsl.ir import Attribute, Block, SSAValue

from nnkiln.dialects.tosa import OPS
from nnkiln.dialects.tosa import ops_activation as A
from nnkiln.dialects.tosa.base import Kind, Profile
from nnkiln.ir.errors import ShapeError, VerifyError
from nnkiln.ir.text import parse_module, print_module

BI, MI = Profile.BI, Profile.MI


def value(elem: Attribute, shape: tuple[int, ...]) -> SSAValue:
    return Block(arg_types=[TensorType(elem, shape)]).args[0]


def raises_rule(fn, rule: str, exc: type[Exception] = VerifyError) -> VerifyError:
    with pytest.raises(exc) as info:
        fn()
    assert info.value.rule == rule, info.value.describe()
    return info.value


def test_registered_with_spec_sections() -> None:
    for cls, name, section in ((A.ClampOp, "tosa.clamp", "§2.4.1"), (A.SigmoidOp, "tosa.sigmoid", "§2.4.2"),
                               (A.TanhOp, "tosa.tanh", "§2.4.3")):
        assert cls.name == name and cls in OPS
        assert section in (cls.__doc__ or "")


@pytest.mark.parametrize("cls", [A.ClampOp, A.SigmoidOp, A.TanhOp])
def test_infer_shapes_is_identity(cls) -> None:
    assert cls.infer_shapes([(2, 3, 4)], min_val=0, max_val=1) == [(2, 3, 4)]
    assert cls.infer_shapes([()]) == [()]
    raises_rule(lambda: cls.infer_shapes([(0, 3)]), "tensor dimensions >= 1", ShapeError)


def test_type_tables() -> None:
    assert [(m.name, m.profile, m.kinds) for m in A.ClampOp.TYPE_MODES] == [
        ("signed 8", BI, (Kind.I8, Kind.I8)), ("signed 16", BI, (Kind.I16, Kind.I16)),
        ("fp16", MI, (Kind.F16, Kind.F16)), ("bf16", MI, (Kind.BF16, Kind.BF16)), ("fp32", MI, (Kind.F32, Kind.F32))]
    for cls in (A.SigmoidOp, A.TanhOp):
        # float only: integer sigmoid/tanh is a TABLE
        assert [(m.profile, m.kinds) for m in cls.TYPE_MODES] == [
            (MI, (Kind.F16, Kind.F16)), (MI, (Kind.BF16, Kind.BF16)), (MI, (Kind.F32, Kind.F32))]


@pytest.mark.parametrize("cls", [A.SigmoidOp, A.TanhOp])
@pytest.mark.parametrize("elem", [f16, bf16, f32])
def test_sigmoid_tanh_make(cls, elem) -> None:
    op = cls.make([value(elem, (2, 5))], elem)
    op.verify()
    assert op.output.type == TensorType(elem, (2, 5))


@pytest.mark.parametrize("cls", [A.SigmoidOp, A.TanhOp])
@pytest.mark.parametrize("in_t, out_t", [(i8, i8), (i16, i16), (i32, i32), (f32, f16)])
def test_sigmoid_tanh_bad_types(cls, in_t, out_t) -> None:
    op = cls.make([value(in_t, (3,))], out_t)
    err = raises_rule(op.verify, "supported data types")
    assert err.op_name == cls.name


def test_sigmoid_shape_mismatch() -> None:
    x = value(f32, (4,))
    op = A.SigmoidOp.create(operands=[x], result_types=[TensorType(f32, (1, 4))])
    raises_rule(op.verify, "output shape")


# ------------------------------------------------------------------------------------------------
# CLAMP


def test_clamp_int_make() -> None:
    op = A.ClampOp.make([value(i8, (2, 3))], i8, min_val=-128, max_val=127)
    op.verify()
    assert op.min_val == IntegerAttr(-128, i64)
    assert op.type_mode().name == "signed 8"
    # min_val == max_val is allowed (the ERROR_IF is max_val < min_val)
    A.ClampOp.make([value(i16, (4,))], i16, min_val=7, max_val=7).verify()


def test_clamp_float_make_converts_int_bounds() -> None:
    op = A.ClampOp.make([value(f16, (4,))], f16, min_val=0, max_val=6)
    op.verify()
    assert isinstance(op.min_val, FloatAttr) and op.min_val.value.data == 0.0
    assert isinstance(op.max_val, FloatAttr) and op.max_val.value.data == 6.0
    # bounds beyond the fp16 range are allowed (they act as +-inf)
    A.ClampOp.make([value(f16, (4,))], f16, min_val=-3.4e38, max_val=3.4e38).verify()
    A.ClampOp.make([value(bf16, (4,))], bf16, min_val=float("-inf"), max_val=float("inf")).verify()


@pytest.mark.parametrize("elem, lo, hi, rule", [
    (i8, 5, 4, "min_val <= max_val"),
    (f32, 1.0, -1.0, "min_val <= max_val"),
    (i8, -129, 0, "min_val fits i8"),
    (i8, 0, 128, "max_val fits i8"),
    (i16, -32769, 0, "min_val fits i16"),
    (i16, 0, 40000, "max_val fits i16"),
    (f32, float("nan"), 1.0, "min_val and max_val are not NaN"),
    (bf16, 0.0, float("nan"), "min_val and max_val are not NaN"),
])
def test_clamp_value_errors(elem, lo, hi, rule) -> None:
    op = A.ClampOp.make([value(elem, (4,))], elem, min_val=lo, max_val=hi)
    err = raises_rule(op.verify, rule)
    assert err.op_name == "tosa.clamp"


def test_clamp_error_message_names_values() -> None:
    op = A.ClampOp.make([value(i8, (4,))], i8, min_val=5, max_val=4)
    with pytest.raises(VerifyError) as info:
        op.verify()
    assert info.value.describe() == "'tosa.clamp' [min_val <= max_val] min_val = 5 > max_val = 4"


def test_clamp_attribute_kind_must_match_tensor() -> None:
    x8 = value(i8, (4,))
    op = A.ClampOp.create(operands=[x8], result_types=[x8.type],
                          properties={"min_val": FloatAttr(0.0, f32), "max_val": IntegerAttr(6, i64)})
    raises_rule(op.verify, "min_val is an integer attribute for an integer in_out_t")
    op = A.ClampOp.create(operands=[x8], result_types=[x8.type],
                          properties={"min_val": IntegerAttr(0, i1), "max_val": IntegerAttr(1, i64)})
    raises_rule(op.verify, "min_val is an integer attribute for an integer in_out_t")
    xf = value(f32, (4,))
    op = A.ClampOp.create(operands=[xf], result_types=[xf.type],
                          properties={"min_val": FloatAttr(0.0, f32), "max_val": IntegerAttr(6, i64)})
    raises_rule(op.verify, "max_val is a float attribute for a float in_out_t")
    # an int bound stays an int for integer tensors (make converts only for float tensors)
    op = A.ClampOp.make([x8], i8, min_val=0.5, max_val=6)
    raises_rule(op.verify, "min_val is an integer attribute for an integer in_out_t")


def test_clamp_bad_types() -> None:
    raises_rule(A.ClampOp.make([value(i32, (4,))], i32, min_val=0, max_val=6).verify, "supported data types")
    raises_rule(A.ClampOp.make([value(f32, (4,))], f16, min_val=0.0, max_val=6.0).verify, "supported data types")


def test_clamp_text_round_trip() -> None:
    text = (
        "func.func @f(%a: tensor<2x3xi16>, %b: tensor<4xf32>) -> tensor<2x3xi16> {\n"
        "  %0 = tosa.clamp %a {min_val = -5 : i64, max_val = 5 : i64} : (tensor<2x3xi16>) -> tensor<2x3xi16>\n"
        '  %1 = "tosa.clamp"(%b) <{min_val = 0.0 : f32, max_val = 6.0 : f32}> : (tensor<4xf32>) -> tensor<4xf32>\n'
        "  %2 = tosa.sigmoid %b : (tensor<4xf32>) -> tensor<4xf32>\n"
        "  %3 = tosa.tanh %b : (tensor<4xf32>) -> tensor<4xf32>\n"
        "  func.return %0 : tensor<2x3xi16>\n}\n"
    )
    module = parse_module(text)
    module.verify()
    printed = print_module(module)
    assert "tosa.clamp %a {min_val = -5 : i64, max_val = 5 : i64}" in printed
    assert "tosa.clamp %b {min_val = 0.000000e+00 : f32, max_val = 6.000000e+00 : f32}" in printed
    again = parse_module(printed)
    again.verify()
    assert print_module(again) == printed
