"""TOSA 0.30 §2.5-§2.8 elementwise ops: type tables, ERROR_IFs, shape inference, round trips.

Expected values come from the spec's argument tables, "Supported Data Types" tables and ERROR_IF
pseudocode (tosa-0.30-specification.txt §2.5-§2.8, §3.2.4 apply_broadcast).
"""

from __future__ import annotations

import pytest
from xdsl.dialects import test as xdsl_test
from xdsl.dialects.builtin import BoolAttr, IntegerAttr, TensorType, bf16, f16, f32, i1, i8, i16, i32, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.utils.exceptions import VerifyException

from nnkiln.dialects.tosa import OPS
from nnkiln.dialects.tosa import ops_comparison as cmp
from nnkiln.dialects.tosa import ops_elementwise_binary as binary
from nnkiln.dialects.tosa import ops_elementwise_ternary as ternary
from nnkiln.dialects.tosa import ops_elementwise_unary as unary
from nnkiln.dialects.tosa.base import Kind, Profile
from nnkiln.ir.errors import ShapeError, VerifyError
from nnkiln.ir.text import parse_module, print_module

K = Kind
BI, MI = Profile.BI, Profile.MI

# ------------------------------------------------------------------------------------------------
# The op inventory

SPEC_NAMES = {
    # §2.5
    "ADD": binary.AddOp, "ARITHMETIC_RIGHT_SHIFT": binary.ArithmeticRightShiftOp,
    "BITWISE_AND": binary.BitwiseAndOp, "BITWISE_OR": binary.BitwiseOrOp, "BITWISE_XOR": binary.BitwiseXorOp,
    "INTDIV": binary.IntDivOp, "LOGICAL_AND": binary.LogicalAndOp, "LOGICAL_LEFT_SHIFT": binary.LogicalLeftShiftOp,
    "LOGICAL_RIGHT_SHIFT": binary.LogicalRightShiftOp, "LOGICAL_OR": binary.LogicalOrOp,
    "LOGICAL_XOR": binary.LogicalXorOp, "MAXIMUM": binary.MaximumOp, "MINIMUM": binary.MinimumOp,
    "MUL": binary.MulOp, "POW": binary.PowOp, "SUB": binary.SubOp, "TABLE": binary.TableOp,
    # §2.6
    "ABS": unary.AbsOp, "BITWISE_NOT": unary.BitwiseNotOp, "CEIL": unary.CeilOp, "CLZ": unary.ClzOp,
    "EXP": unary.ExpOp, "FLOOR": unary.FloorOp, "LOG": unary.LogOp, "LOGICAL_NOT": unary.LogicalNotOp,
    "NEGATE": unary.NegateOp, "RECIPROCAL": unary.ReciprocalOp, "RSQRT": unary.RsqrtOp,
    # §2.7, §2.8
    "SELECT": ternary.SelectOp,
    "EQUAL": cmp.EqualOp, "GREATER": cmp.GreaterOp, "GREATER_EQUAL": cmp.GreaterEqualOp,
}


def test_inventory_matches_spec_chapters() -> None:
    assert len(SPEC_NAMES) == 17 + 11 + 1 + 3
    for spec_name, cls in SPEC_NAMES.items():
        assert cls.name == "tosa." + spec_name.lower()
        assert cls in OPS, f"{cls.name} is not registered in the tosa dialect"
        assert "§2." in (cls.__doc__ or ""), f"{cls.__name__} docstring does not cite the spec"


def _modules_ops(mod) -> set[str]:
    return {o.name for o in vars(mod).values() if isinstance(o, type) and isinstance(getattr(o, "name", None), str)
            and o.name.startswith("tosa.")}


def test_each_module_defines_exactly_its_chapter() -> None:
    assert len(_modules_ops(binary)) == 17
    assert len(_modules_ops(unary)) == 11
    assert _modules_ops(ternary) == {"tosa.select"}
    assert _modules_ops(cmp) == {"tosa.equal", "tosa.greater", "tosa.greater_equal"}


# ------------------------------------------------------------------------------------------------
# Supported data types (transcribed by hand from the spec tables)

I32_FLOATS = {(BI, (K.I32,) * 3), (MI, (K.F16,) * 3), (MI, (K.BF16,) * 3), (MI, (K.F32,) * 3)}
INTS = {(BI, (K.I8,) * 3), (BI, (K.I16,) * 3), (BI, (K.I32,) * 3)}
BOOLS = {(BI, (K.BOOL,) * 3)}
FLOATS3 = {(MI, (K.F16,) * 3), (MI, (K.BF16,) * 3), (MI, (K.F32,) * 3)}
FLOATS2 = {(MI, (K.F16,) * 2), (MI, (K.BF16,) * 2), (MI, (K.F32,) * 2)}
CMP = {(BI, (K.I32, K.I32, K.BOOL)), (MI, (K.F16, K.F16, K.BOOL)), (MI, (K.BF16, K.BF16, K.BOOL)),
       (MI, (K.F32, K.F32, K.BOOL))}

EXPECTED_MODES = {
    "ADD": I32_FLOATS, "SUB": I32_FLOATS, "MAXIMUM": I32_FLOATS, "MINIMUM": I32_FLOATS,
    "ARITHMETIC_RIGHT_SHIFT": INTS, "BITWISE_AND": INTS, "BITWISE_OR": INTS, "BITWISE_XOR": INTS,
    "LOGICAL_LEFT_SHIFT": INTS, "LOGICAL_RIGHT_SHIFT": INTS,
    "INTDIV": {(BI, (K.I32,) * 3)},
    "LOGICAL_AND": BOOLS, "LOGICAL_OR": BOOLS, "LOGICAL_XOR": BOOLS,
    "MUL": {(BI, (K.I8, K.I8, K.I32)), (BI, (K.I16, K.I16, K.I32)), (BI, (K.I32, K.I32, K.I32))} | FLOATS3,
    "POW": FLOATS3,
    "TABLE": {(BI, (K.I8, K.I8, K.I8)), (BI, (K.I16, K.I16, K.I32))},
    "ABS": {(BI, (K.I32, K.I32))} | FLOATS2,
    "BITWISE_NOT": {(BI, (K.I8, K.I8)), (BI, (K.I16, K.I16)), (BI, (K.I32, K.I32))},
    "CEIL": FLOATS2, "EXP": FLOATS2, "FLOOR": FLOATS2, "LOG": FLOATS2, "RECIPROCAL": FLOATS2, "RSQRT": FLOATS2,
    "CLZ": {(BI, (K.I32, K.I32))},
    "LOGICAL_NOT": {(BI, (K.BOOL, K.BOOL))},
    "NEGATE": {(BI, (K.I8, K.I8)), (BI, (K.I16, K.I16)), (BI, (K.I32, K.I32))} | FLOATS2,
    # SELECT: MI rows read with cmp_t = bool_t (the spec's swapped-column defect, see SelectOp).
    "SELECT": {(BI, (K.BOOL,) * 4), (BI, (K.BOOL, K.I8, K.I8, K.I8)), (BI, (K.BOOL, K.I16, K.I16, K.I16)),
               (BI, (K.BOOL, K.I32, K.I32, K.I32)), (MI, (K.BOOL, K.F16, K.F16, K.F16)),
               (MI, (K.BOOL, K.BF16, K.BF16, K.BF16)), (MI, (K.BOOL, K.F32, K.F32, K.F32))},
    "EQUAL": CMP, "GREATER": CMP, "GREATER_EQUAL": CMP,
}


@pytest.mark.parametrize("spec_name", sorted(SPEC_NAMES))
def test_type_modes_match_spec_table(spec_name: str) -> None:
    cls = SPEC_NAMES[spec_name]
    got = {(m.profile, m.kinds) for m in cls.TYPE_MODES}
    assert got == EXPECTED_MODES[spec_name]
    assert len(cls.TYPE_MODES) == len(got), "duplicate rows"
    assert all(len(m.kinds) == len(cls.TYPE_SLOTS) for m in cls.TYPE_MODES)


def test_type_slots_use_spec_argument_names() -> None:
    assert binary.AddOp.TYPE_SLOTS == ("input1", "input2", "output")
    assert binary.TableOp.TYPE_SLOTS == ("input", "table", "output")
    assert unary.NegateOp.TYPE_SLOTS == ("input1", "output")
    assert ternary.SelectOp.TYPE_SLOTS == ("input1", "input2", "input3", "output")
    assert cmp.EqualOp.TYPE_SLOTS == ("input1", "input2", "output")


# ------------------------------------------------------------------------------------------------
# Shape inference


@pytest.mark.parametrize("cls", [c for c in SPEC_NAMES.values()
                                 if issubclass(c, binary._Binary) and c is not binary.PowOp])
def test_binary_broadcast(cls) -> None:
    assert cls.infer_shapes([(2, 1, 3), (1, 4, 3)]) == [(2, 4, 3)]
    assert cls.infer_shapes([(5,), (5,)]) == [(5,)]
    assert cls.infer_shapes([(), ()]) == [()]
    assert cls.infer_shapes([(1, 1), (1, 1)]) == [(1, 1)]
    with pytest.raises(ShapeError, match="cannot broadcast"):
        cls.infer_shapes([(2, 3), (3, 3)])
    with pytest.raises(ShapeError, match="ranks differ"):
        cls.infer_shapes([(2, 3), (3,)])


def test_pow_rank_one_to_four() -> None:
    assert binary.PowOp.infer_shapes([(1, 2, 1, 4), (3, 1, 5, 1)]) == [(3, 2, 5, 4)]
    assert binary.PowOp.infer_shapes([(7,), (1,)]) == [(7,)]
    for shape in [(), (1, 1, 1, 1, 1)]:
        with pytest.raises(ShapeError) as err:
            binary.PowOp.infer_shapes([shape, shape])
        assert err.value.rule == "1 <= rank(input1) <= 4"


@pytest.mark.parametrize("cls", [c for c in SPEC_NAMES.values() if issubclass(c, unary._Unary)])
def test_unary_shape_is_input_shape(cls) -> None:
    assert cls.infer_shapes([(2, 3, 4)]) == [(2, 3, 4)]
    assert cls.infer_shapes([()]) == [()]


def test_select_broadcasts_all_three() -> None:
    assert ternary.SelectOp.infer_shapes([(2, 1, 1), (1, 3, 1), (1, 1, 4)]) == [(2, 3, 4)]
    with pytest.raises(ShapeError, match="cannot broadcast"):
        ternary.SelectOp.infer_shapes([(2, 1), (1, 3), (1, 4)])
    with pytest.raises(ShapeError, match="ranks differ"):
        ternary.SelectOp.infer_shapes([(3,), (1, 3), (1, 3)])


def test_table_shape_rules() -> None:
    assert binary.TableOp.infer_shapes([(2, 3), (256,)]) == [(2, 3)]
    assert binary.TableOp.infer_shapes([(4,), (513,)]) == [(4,)]
    with pytest.raises(ShapeError, match="not rank 1"):
        binary.TableOp.infer_shapes([(4,), (2, 256)])
    with pytest.raises(ShapeError, match="257 entries"):
        binary.TableOp.infer_shapes([(4,), (257,)])


# ------------------------------------------------------------------------------------------------
# Building ops with make() and verifying them


def _arg(shape: tuple[int, ...], elem: Attribute) -> SSAValue:
    return xdsl_test.TestOp.create(result_types=[TensorType(elem, shape)]).results[0]


def _shape(op) -> tuple[int, ...]:
    return tuple(op.output.type.get_shape())


def test_make_binary_infers_broadcast_shape_and_verifies() -> None:
    op = binary.AddOp.make([_arg((2, 1), f32), _arg((1, 3), f32)], f32)
    assert _shape(op) == (2, 3)
    op.verify()


def test_make_mul_int8_to_int32() -> None:
    op = binary.MulOp.make([_arg((4,), i8), _arg((1,), i8)], i32)
    assert _shape(op) == (4,)
    op.verify()
    op = binary.MulOp.make([_arg((4,), i32), _arg((4,), i32)], i32, shift=63)
    assert op.properties["shift"] == IntegerAttr(63, i64)
    op.verify()


def test_make_comparison_outputs_bool() -> None:
    for cls in (cmp.EqualOp, cmp.GreaterOp, cmp.GreaterEqualOp):
        op = cls.make([_arg((3, 1), i32), _arg((1, 2), i32)], i1)
        assert _shape(op) == (3, 2)
        op.verify()


def test_make_select_and_table_and_negate() -> None:
    op = ternary.SelectOp.make([_arg((2, 1), i1), _arg((1, 3), bf16), _arg((2, 3), bf16)], bf16)
    assert _shape(op) == (2, 3)
    op.verify()
    op = binary.TableOp.make([_arg((5,), i16), _arg((513,), i16)], i32)
    assert _shape(op) == (5,)
    op.verify()
    op = unary.NegateOp.make([_arg((5,), i8)], i8, input1_zp=-128, output_zp=127)
    op.verify()
    op = binary.ArithmeticRightShiftOp.make([_arg((5,), i16), _arg((5,), i16)], i16, round=True)
    assert op.properties["round"] == BoolAttr.from_bool(True)
    op.verify()


def _verify_error(op) -> VerifyError:
    with pytest.raises(VerifyError) as err:
        op.verify()
    return err.value


# -- MUL -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("elem,out", [(i8, i32), (i16, i32), (f16, f16), (bf16, bf16), (f32, f32)])
def test_mul_shift_only_for_int32(elem, out) -> None:
    binary.MulOp.make([_arg((2,), elem), _arg((2,), elem)], out, shift=0).verify()
    err = _verify_error(binary.MulOp.make([_arg((2,), elem), _arg((2,), elem)], out, shift=1))
    assert err.rule == "ERROR_IF(in_t != int32_t && shift > 0)"
    assert err.op_name == "tosa.mul"


@pytest.mark.parametrize("shift", [0, 1, 31, 32, 63])
def test_mul_int32_shift_in_uint6_range(shift: int) -> None:
    binary.MulOp.make([_arg((2,), i32), _arg((2,), i32)], i32, shift=shift).verify()


@pytest.mark.parametrize("shift", [-1, 64, 1000])
def test_mul_shift_outside_uint6(shift: int) -> None:
    err = _verify_error(binary.MulOp.make([_arg((2,), i32), _arg((2,), i32)], i32, shift=shift))
    assert err.rule == "shift fits uint6"
    assert f"shift = {shift}" in str(err)


def test_mul_default_shift_is_zero() -> None:
    op = binary.MulOp.make([_arg((2,), i8), _arg((2,), i8)], i32)
    op.verify()
    assert op.shift is None or op.shift == IntegerAttr(0, i64)


@pytest.mark.parametrize("elem,out", [(i8, i8), (i16, i16), (i8, i16), (i32, i8), (f32, i32)])
def test_mul_bad_output_type(elem, out) -> None:
    err = _verify_error(binary.MulOp.make([_arg((2,), elem), _arg((2,), elem)], out))
    assert err.rule == "supported data types"


# -- NEGATE --------------------------------------------------------------------------------------


@pytest.mark.parametrize("zp", [-128, -1, 0, 1, 127])
def test_negate_int8_zero_points_in_range(zp: int) -> None:
    unary.NegateOp.make([_arg((2,), i8)], i8, input1_zp=zp, output_zp=-zp if zp != -128 else 0).verify()


@pytest.mark.parametrize("name,zp", [("input1_zp", 128), ("input1_zp", -129), ("output_zp", 128), ("output_zp", -300)])
def test_negate_int8_zero_point_outside_int8(name: str, zp: int) -> None:
    err = _verify_error(unary.NegateOp.make([_arg((2,), i8)], i8, **{name: zp}))
    assert err.rule == f"{name} fits i8"


@pytest.mark.parametrize("elem", [i16, i32, f16, bf16, f32])
@pytest.mark.parametrize("name", ["input1_zp", "output_zp"])
def test_negate_zero_points_only_for_int8(elem, name: str) -> None:
    unary.NegateOp.make([_arg((2,), elem)], elem, **{name: 0}).verify()
    err = _verify_error(unary.NegateOp.make([_arg((2,), elem)], elem, **{name: 1}))
    assert err.rule == f"ERROR_IF(in_out_t != int8_t && {name} != 0)"


# -- TABLE ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("elem,size,out", [(i8, 256, i8), (i16, 513, i32)])
def test_table_sizes(elem, size: int, out) -> None:
    binary.TableOp.make([_arg((3, 3), elem), _arg((size,), elem)], out).verify()


@pytest.mark.parametrize("elem,size,out", [(i8, 513, i8), (i16, 256, i32), (i8, 255, i8), (i16, 512, i32)])
def test_table_wrong_length_is_a_verify_error(elem, size: int, out) -> None:
    op = binary.TableOp.create(operands=[_arg((3,), elem), _arg((size,), elem)], result_types=[TensorType(out, (3,))])
    err = _verify_error(op)
    assert err.rule == "table shape == [TABLE_SIZE]"
    assert isinstance(err, ShapeError)


def test_table_int16_output_must_be_int32() -> None:
    op = binary.TableOp.create(operands=[_arg((3,), i16), _arg((513,), i16)], result_types=[TensorType(i16, (3,))])
    assert _verify_error(op).rule == "supported data types"


def test_table_table_type_must_match_input() -> None:
    op = binary.TableOp.create(operands=[_arg((3,), i8), _arg((256,), i16)], result_types=[TensorType(i8, (3,))])
    assert _verify_error(op).rule == "supported data types"


# -- SELECT --------------------------------------------------------------------------------------


@pytest.mark.parametrize("elem", [i1, i8, i16, i32, f16, bf16, f32])
def test_select_bool_selector_every_value_type(elem) -> None:
    ternary.SelectOp.make([_arg((2,), i1), _arg((2,), elem), _arg((2,), elem)], elem).verify()


@pytest.mark.parametrize("elem", [f16, bf16, f32])
def test_select_float_selector_rejected(elem) -> None:
    """The literal reading of the swapped MI columns (cmp_t = fp*) is not accepted."""
    op = ternary.SelectOp.make([_arg((2,), elem), _arg((2,), elem), _arg((2,), elem)], elem)
    assert _verify_error(op).rule == "supported data types"


# -- comparisons and other type errors -----------------------------------------------------------


@pytest.mark.parametrize("cls", [cmp.EqualOp, cmp.GreaterOp, cmp.GreaterEqualOp])
@pytest.mark.parametrize("elem", [i1, i8, i16])
def test_comparisons_reject_narrow_and_bool(cls, elem) -> None:
    op = cls.make([_arg((2,), elem), _arg((2,), elem)], i1)
    assert _verify_error(op).rule == "supported data types"


@pytest.mark.parametrize("cls", [cmp.EqualOp, cmp.GreaterOp, cmp.GreaterEqualOp])
def test_comparison_output_must_be_bool(cls) -> None:
    op = cls.make([_arg((2,), f32), _arg((2,), f32)], f32)
    assert _verify_error(op).rule == "supported data types"


def test_output_shape_must_be_broadcast_shape() -> None:
    """apply_broadcast would accept [1] x [1] -> [5]; the argument table requires the broadcast shape."""
    op = binary.AddOp.create(operands=[_arg((1,), i32), _arg((1,), i32)], result_types=[TensorType(i32, (5,))])
    assert _verify_error(op).rule == "output shape"


def test_unary_output_same_shape() -> None:
    op = unary.ExpOp.create(operands=[_arg((2, 3), f32)], result_types=[TensorType(f32, (3, 2))])
    assert _verify_error(op).rule == "output shape"


def test_arithmetic_right_shift_round_is_required() -> None:
    op = binary.ArithmeticRightShiftOp.create(operands=[_arg((2,), i8), _arg((2,), i8)],
                                              result_types=[TensorType(i8, (2,))])
    with pytest.raises(VerifyException, match="round"):
        op.verify()


# ------------------------------------------------------------------------------------------------
# Text round trip (custom and generic forms)

ROUND_TRIP = """func.func @main(%a: tensor<2x1xi8>, %b: tensor<1x3xi8>, %p: tensor<2x3xi1>, %f: tensor<2x3xf32>,
                  %t: tensor<256xi8>) -> tensor<2x3xi1> {
  %0 = tosa.mul %a, %b : (tensor<2x1xi8>, tensor<1x3xi8>) -> tensor<2x3xi32>
  %1 = tosa.mul %0, %0 {shift = 5 : i64} : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  %2 = tosa.arithmetic_right_shift %a, %b {round = true} : (tensor<2x1xi8>, tensor<1x3xi8>) -> tensor<2x3xi8>
  %3 = tosa.table %2, %t : (tensor<2x3xi8>, tensor<256xi8>) -> tensor<2x3xi8>
  %4 = tosa.negate %3 {input1_zp = 4 : i64, output_zp = -4 : i64} : (tensor<2x3xi8>) -> tensor<2x3xi8>
  %5 = tosa.select %p, %f, %f : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %6 = tosa.greater_equal %5, %f : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %7 = tosa.logical_not %6 : (tensor<2x3xi1>) -> tensor<2x3xi1>
  func.return %7 : tensor<2x3xi1>
}
"""


def test_round_trip_is_stable() -> None:
    m = parse_module(ROUND_TRIP)
    m.verify()
    text = print_module(m)
    assert "tosa.mul %0, %0 {shift = 5 : i64}" in text
    assert "{round = true}" in text
    assert "{input1_zp = 4 : i64, output_zp = -4 : i64}" in text
    m2 = parse_module(text)
    m2.verify()
    assert print_module(m2) == text
    generic = print_module(m, generic=True)
    assert '"tosa.negate"' in generic
    m3 = parse_module(generic)
    m3.verify()
    assert print_module(m3) == text


def test_parsed_attribute_values() -> None:
    m = parse_module(ROUND_TRIP)
    ops = {op.name: op for op in m.walk() if op.name.startswith("tosa.")}
    assert ops["tosa.arithmetic_right_shift"].attr_values() == {"round": True}
    assert ops["tosa.negate"].attr_values() == {"input1_zp": 4, "output_zp": -4}


def test_verify_error_from_text_names_op_and_rule() -> None:
    text = """func.func @main(%a: tensor<3xi16>) -> tensor<3xi32> {
  %0 = tosa.mul %a, %a {shift = 3 : i64} : (tensor<3xi16>, tensor<3xi16>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}
"""
    with pytest.raises(VerifyError) as err:
        parse_module(text).verify()
    assert err.value.op_name == "tosa.mul"
    assert "shift = 3" in err.value.describe()
