"""TOSA 0.30 §2.13-§2.16: CAST, RESCALE, CONST, IDENTITY, CUSTOM, COND_IF, WHILE_LOOP.

Expected type modes are transcribed from the spec's "Supported Data Types" tables; expected
ERROR_IF outcomes come from the pseudocode (with the documented decisions on RESCALE's zero points).
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType, f32, i1, i8, i32
from xdsl.ir import Block, Region

from nnkiln.dialects.quant import UniformQuantizedType
from nnkiln.dialects.tosa import OPS
from nnkiln.dialects.tosa.base import Kind, Profile
from nnkiln.dialects.tosa.ops_control_flow import CondIfOp, WhileLoopOp, YieldOp
from nnkiln.dialects.tosa.ops_custom import CustomOp
from nnkiln.dialects.tosa.ops_data_nodes import ConstOp, IdentityOp
from nnkiln.dialects.tosa.ops_type_conversion import CastOp, RescaleOp
from nnkiln.ir.elements import from_numpy, to_numpy
from nnkiln.ir.errors import ShapeError, VerifyError
from nnkiln.ir.text import parse_module, print_module

MLIR_TYPE = {"bool": "i1", "i4": "i4", "i8": "i8", "i16": "i16", "i32": "i32", "i48": "i48", "u8": "ui8",
             "u16": "ui16", "f16": "f16", "bf16": "bf16", "f32": "f32"}


def _module(args: str, body: str) -> str:
    return f"func.func @f({args}) {{\n{body}\n  func.return\n}}\n"


def _verify(args: str, body: str):
    module = parse_module(_module(args, body))
    module.verify()
    return module


def _error(args: str, body: str) -> VerifyError:
    module = parse_module(_module(args, body))
    with pytest.raises(VerifyError) as err:
        module.verify()
    return err.value


def _cast(src: str, dst: str, shape: str = "2x3") -> tuple[str, str]:
    a, b = MLIR_TYPE[src], MLIR_TYPE[dst]
    return f"%a: tensor<{shape}x{a}>", f"  %0 = tosa.cast %a : (tensor<{shape}x{a}>) -> tensor<{shape}x{b}>"


def test_ops_registered() -> None:
    names = {op.name for op in OPS}
    for n in ("tosa.cast", "tosa.rescale", "tosa.const", "tosa.identity", "tosa.custom", "tosa.cond_if",
              "tosa.while_loop", "tosa.yield"):
        assert n in names


# -- CAST ---------------------------------------------------------------------------------------

# The spec's table (§2.13.1), row by row: (profile, in_t, out_t).
CAST_TABLE = [
    ("BI", "bool", "i8"), ("BI", "bool", "i16"), ("BI", "bool", "i32"),
    ("BI", "i8", "bool"), ("BI", "i8", "i16"), ("BI", "i8", "i32"),
    ("MI", "i8", "f16"), ("MI", "i8", "bf16"), ("MI", "i8", "f32"),
    ("BI", "i16", "bool"), ("BI", "i16", "i8"), ("BI", "i16", "i32"),
    ("MI", "i16", "f16"), ("MI", "i16", "bf16"), ("MI", "i16", "f32"),
    ("BI", "i32", "bool"), ("BI", "i32", "i8"), ("BI", "i32", "i16"),
    ("MI", "i32", "f16"), ("MI", "i32", "bf16"), ("MI", "i32", "f32"),
    ("MI", "f16", "i8"), ("MI", "f16", "i16"), ("MI", "f16", "i32"),
    ("MI", "bf16", "i8"), ("MI", "bf16", "i16"), ("MI", "bf16", "i32"),
    ("MI", "f32", "i8"), ("MI", "f32", "i16"), ("MI", "f32", "i32"),
]


def test_cast_mode_table_matches_spec() -> None:
    assert len(CAST_TABLE) == 30
    got = {(m.profile.value, m.kinds[0].value, m.kinds[1].value) for m in CastOp.TYPE_MODES}
    assert got == set(CAST_TABLE)
    assert len(CastOp.TYPE_MODES) == 30


@pytest.mark.parametrize(("profile", "src", "dst"), CAST_TABLE)
def test_cast_modes_verify(profile: str, src: str, dst: str) -> None:
    _verify(*_cast(src, dst))


@pytest.mark.parametrize(
    ("src", "dst"),
    [("f32", "f16"), ("f16", "f32"), ("bf16", "f32"), ("f32", "bool"), ("bool", "f32"), ("i8", "i8"),
     ("i32", "i32"), ("f32", "f32"), ("i8", "u8"), ("u8", "i8"), ("i48", "i32"), ("i32", "i48"), ("i4", "i8")],
)
def test_cast_not_a_mode(src: str, dst: str) -> None:
    err = _error(*_cast(src, dst))
    assert err.rule == "supported data types"
    assert err.op_name == "tosa.cast"


def test_cast_shape() -> None:
    assert CastOp.infer_shapes([(2, 3, 4)]) == [(2, 3, 4)]
    assert CastOp.infer_shapes([()]) == [()]
    err = _error("%a: tensor<2x3xi8>", "  %0 = tosa.cast %a : (tensor<2x3xi8>) -> tensor<2x4xi32>")
    assert isinstance(err, ShapeError)


def test_cast_quantized_input_counts_as_storage() -> None:
    _verify("%a: tensor<4x!quant.uniform<i8:f32, 0.5:-3>>",
            "  %0 = tosa.cast %a : (tensor<4x!quant.uniform<i8:f32, 0.5:-3>>) -> tensor<4xf32>")


# -- RESCALE ------------------------------------------------------------------------------------

RESCALE_TABLE = [
    ("i8", "i8"), ("i8", "i16"), ("i8", "i32"), ("i8", "u8"),
    ("i16", "i8"), ("i16", "i16"), ("i16", "i32"), ("i16", "u8"), ("i16", "u16"),
    ("i32", "i8"), ("i32", "i16"), ("i32", "i32"),
    ("i48", "i8"), ("i48", "i16"), ("i48", "i32"),
    ("u8", "i8"), ("u8", "i16"),
    ("u16", "i16"),
]


def _rescale(src: str = "i32", dst: str = "i8", shape: str = "4", *, input_zp: int = 0, output_zp: int = 0,
             multiplier: str = "1073741824", shift: str = "30", scale32: bool = True, double_round: bool = False,
             per_channel: bool = False) -> tuple[str, str]:
    a, b = MLIR_TYPE.get(src, src), MLIR_TYPE.get(dst, dst)
    flag = lambda v: "true" if v else "false"  # noqa: E731
    attrs = (f"input_zp = {input_zp} : i64, output_zp = {output_zp} : i64, multiplier = array<i64: {multiplier}>, "
             f"shift = array<i64: {shift}>, scale32 = {flag(scale32)}, double_round = {flag(double_round)}, "
             f"per_channel = {flag(per_channel)}")
    return (f"%a: tensor<{shape}x{a}>",
            f"  %0 = tosa.rescale %a {{{attrs}}} : (tensor<{shape}x{a}>) -> tensor<{shape}x{b}>")


def test_rescale_mode_table_matches_spec() -> None:
    assert len(RESCALE_TABLE) == 18
    got = {(m.kinds[0].value, m.kinds[1].value) for m in RescaleOp.TYPE_MODES}
    assert got == set(RESCALE_TABLE)
    assert all(m.profile is Profile.BI for m in RescaleOp.TYPE_MODES)


@pytest.mark.parametrize(("src", "dst"), RESCALE_TABLE)
def test_rescale_modes_verify(src: str, dst: str) -> None:
    # scale16 works for every mode (scale32 is barred for int48).
    _verify(*_rescale(src, dst, multiplier="16384", shift="14", scale32=False))


@pytest.mark.parametrize(("src", "dst"), [("u8", "i32"), ("u8", "u8"), ("i8", "u16"), ("u16", "i8"), ("i32", "u8"),
                                          ("i48", "u8"), ("f32", "i8"), ("i8", "f32"), ("bool", "i8"), ("i32", "i48")])
def test_rescale_not_a_mode(src: str, dst: str) -> None:
    assert _error(*_rescale(src, dst, multiplier="16384", shift="14", scale32=False)).rule == "supported data types"


# (in_t, out_t, input_zp, output_zp, valid?) — from the pseudocode's zero-point ERROR_IFs with the
# decisions: int8/uint8 zp anywhere in the type's range; uint16 zp 0 or 32768; others 0.
ZP_CASES = [
    ("i8", "i8", -128, 127, True),
    ("i8", "i8", 128, 0, False),
    ("i8", "i8", 0, -129, False),
    ("u8", "i8", 255, 0, True),
    ("u8", "i16", 0, 0, True),
    ("u8", "i8", -1, 0, False),
    ("u8", "i8", 256, 0, False),
    ("i8", "u8", 0, 255, True),
    ("i8", "u8", 0, 256, False),
    ("u16", "i16", 32768, 0, True),
    ("u16", "i16", 0, 0, True),
    ("u16", "i16", 1, 0, False),
    ("u16", "i16", 32767, 0, False),
    ("i16", "u16", 0, 32768, True),
    ("i16", "u16", 0, 100, False),
    ("i16", "i8", 1, 0, False),
    ("i16", "i8", 0, 5, True),
    ("i32", "i32", 0, 1, False),
    ("i32", "i16", -1, 0, False),
    ("i48", "i32", 7, 0, False),
    ("i8", "i32", 3, 0, True),
    ("i8", "i16", 0, 3, False),
]


@pytest.mark.parametrize(("src", "dst", "izp", "ozp", "ok"), ZP_CASES)
def test_rescale_zero_points(src: str, dst: str, izp: int, ozp: int, ok: bool) -> None:
    case = _rescale(src, dst, input_zp=izp, output_zp=ozp, multiplier="16384", shift="14", scale32=False)
    if ok:
        _verify(*case)
    else:
        err = _error(*case)
        assert "zp" in err.rule and err.op_name == "tosa.rescale"


def test_rescale_uint16_rule_text() -> None:
    err = _error(*_rescale("u16", "i16", input_zp=5, multiplier="16384", shift="14", scale32=False))
    assert err.rule == "ERROR_IF(in_t == uint16_t && input_zp != 0 && input_zp != 32768)"
    assert "input_zp = 5" in str(err)


def test_rescale_scale32_int48() -> None:
    err = _error(*_rescale("i48", "i32", scale32=True))
    assert err.rule == "ERROR_IF(scale32 && in_t == int48_t)"
    _verify(*_rescale("i48", "i32", multiplier="16384", shift="14", scale32=False))


def test_rescale_double_round_needs_scale32() -> None:
    err = _error(*_rescale(multiplier="16384", shift="14", scale32=False, double_round=True))
    assert err.rule == "ERROR_IF(!scale32 && double_round)"
    _verify(*_rescale(scale32=True, double_round=True))


@pytest.mark.parametrize(
    ("multiplier", "scale32", "ok"),
    [
        ("32767", False, True),
        ("32768", False, False),
        ("0", False, True),
        ("2147483647", True, True),
        ("2147483648", True, False),
        ("32768", True, True),
        ("-1", True, False),
        ("-1", False, False),
    ],
)
def test_rescale_multiplier_range(multiplier: str, scale32: bool, ok: bool) -> None:
    case = _rescale(multiplier=multiplier, shift="20", scale32=scale32)
    if ok:
        _verify(*case)
    else:
        assert "multiplier" in _error(*case).rule


@pytest.mark.parametrize(("shift", "ok"), [("2", True), ("62", True), ("1", False), ("63", False), ("0", False),
                                          ("-3", False)])
def test_rescale_shift_range(shift: str, ok: bool) -> None:
    case = _rescale(shift=shift)
    if ok:
        _verify(*case)
    else:
        assert _error(*case).rule == "REQUIRE(2 <= shift && shift <= 62)"


def test_rescale_per_channel_lengths() -> None:
    _verify(*_rescale(shape="2x3", multiplier="1, 2, 3", shift="30, 31, 32", per_channel=True))
    err = _error(*_rescale(shape="2x3", multiplier="1, 2", shift="30, 31", per_channel=True))
    assert isinstance(err, ShapeError) and err.rule == "length(multiplier) == NC"
    assert "NC = shape[rank-1] (per_channel) = 3" in str(err)
    err = _error(*_rescale(shape="2x3", multiplier="1, 2, 3", shift="30", per_channel=True))
    assert err.rule == "length(shift) == NC"
    # per-tensor: NC = 1, even when the last dimension is 3
    err = _error(*_rescale(shape="2x3", multiplier="1, 2, 3", shift="30, 30, 30", per_channel=False))
    assert err.rule == "length(multiplier) == NC"
    assert "NC = 1 (per-tensor) = 1" in str(err)


def test_rescale_rank_limits() -> None:
    assert RescaleOp.infer_shapes([(5,)], multiplier=(1,), shift=(2,), per_channel=False) == [(5,)]
    assert RescaleOp.infer_shapes([(1, 2, 3, 4)], multiplier=(1,) * 4, shift=(2,) * 4, per_channel=True) == [(1, 2, 3, 4)]
    with pytest.raises(ShapeError, match=r"rank\(input\) = 0"):
        RescaleOp.infer_shapes([()], multiplier=(1,), shift=(2,), per_channel=False)
    with pytest.raises(ShapeError, match=r"rank\(input\) = 5"):
        RescaleOp.infer_shapes([(1, 1, 1, 1, 1)], multiplier=(1,), shift=(2,), per_channel=False)


def test_rescale_output_shape() -> None:
    args, body = _rescale()
    body = body.replace("-> tensor<4xi8>", "-> tensor<5xi8>")
    assert isinstance(_error(args, body), ShapeError)


def test_rescale_make() -> None:
    module = parse_module(_module("%a: tensor<2x3xi32>", ""))
    arg = next(iter(module.body.block.ops)).body.block.args[0]
    op = RescaleOp.make([arg], i8, input_zp=0, output_zp=-5, multiplier=[1 << 30] * 3, shift=[30] * 3,
                        scale32=True, double_round=False, per_channel=True)
    assert op.output.type == TensorType(i8, [2, 3])
    assert op.attr_values()["multiplier"] == (1 << 30,) * 3
    op.verify()


# -- CONST / IDENTITY -----------------------------------------------------------------------------


def test_const_from_numpy() -> None:
    arr = np.arange(6, dtype=np.int32).reshape(2, 3)
    op = ConstOp.from_numpy(arr)
    op.verify()
    assert op.output.type == TensorType(i32, [2, 3])
    assert np.array_equal(to_numpy(op.values), arr)
    assert ConstOp.infer_shapes([], values=op.values) == [(2, 3)]


def test_const_quantized_output_holds_storage_values() -> None:
    q = UniformQuantizedType("i8", f32, 0.5, -3)
    op = ConstOp.from_numpy(np.array([5, -3, 0], dtype=np.int8), q)
    op.verify()
    assert op.output.type == TensorType(q, [3])
    assert op.values.type == TensorType(i8, [3])
    assert list(to_numpy(op.values)) == [5, -3, 0]


def test_const_type_must_equal_output() -> None:
    values = from_numpy(np.array([1, 2], dtype=np.int32))
    op = ConstOp.create(result_types=[TensorType(i32, [1, 2])], properties={"values": values})
    with pytest.raises(VerifyError) as err:
        op.verify()
    assert err.value.rule == "type(values) == type(output)"


@pytest.mark.parametrize(("mlir", "ok"), [("i1", True), ("i8", True), ("i16", True), ("i32", True), ("f16", True),
                                          ("bf16", True), ("f32", True), ("i4", True), ("i48", True),
                                          ("ui8", False), ("ui16", False), ("i64", False), ("f64", False)])
def test_const_types(mlir: str, ok: bool) -> None:
    value = "true" if mlir == "i1" else ("1.0" if mlir.startswith(("f", "bf")) else "1")
    body = f"  %0 = tosa.const {{values = dense<{value}> : tensor<2x{mlir}>}} : tensor<2x{mlir}>"
    if ok:
        _verify("", body)
    else:
        assert _error("", body).rule == "supported data types"


def test_const_mode_table() -> None:
    kinds = {m.kinds[0] for m in ConstOp.TYPE_MODES}
    assert kinds == {Kind.BOOL, Kind.I8, Kind.I16, Kind.I32, Kind.F16, Kind.BF16, Kind.F32, Kind.I4, Kind.I48}
    profiles = {m.kinds[0]: m.profile for m in ConstOp.TYPE_MODES}
    assert profiles[Kind.F16] is Profile.MI and profiles[Kind.I32] is Profile.BI


@pytest.mark.parametrize("mlir", ["i1", "i8", "i16", "i32", "f16", "bf16", "f32"])
def test_identity_types(mlir: str) -> None:
    _verify(f"%a: tensor<3x{mlir}>", f"  %0 = tosa.identity %a : (tensor<3x{mlir}>) -> tensor<3x{mlir}>")


def test_identity_errors() -> None:
    assert _error("%a: tensor<3xi8>", "  %0 = tosa.identity %a : (tensor<3xi8>) -> tensor<3xi32>").rule == "supported data types"
    assert _error("%a: tensor<3xi48>", "  %0 = tosa.identity %a : (tensor<3xi48>) -> tensor<3xi48>").rule == "supported data types"
    assert isinstance(_error("%a: tensor<3xi8>", "  %0 = tosa.identity %a : (tensor<3xi8>) -> tensor<1x3xi8>"), ShapeError)
    q1 = "!quant.uniform<i8:f32, 0.5:-3>"
    q2 = "!quant.uniform<i8:f32, 0.25:-3>"
    err = _error(f"%a: tensor<3x{q1}>", f"  %0 = tosa.identity %a : (tensor<3x{q1}>) -> tensor<3x{q2}>")
    assert err.rule == "type(output) == type(input1)"
    _verify(f"%a: tensor<3x{q1}>", f"  %0 = tosa.identity %a : (tensor<3x{q1}>) -> tensor<3x{q1}>")


def test_identity_make() -> None:
    module = parse_module(_module("%a: tensor<2x2xf32>", ""))
    arg = next(iter(module.body.block.ops)).body.block.args[0]
    op = IdentityOp.make([arg], f32)
    assert op.output.type == TensorType(f32, [2, 2])


# -- CUSTOM ---------------------------------------------------------------------------------------


def test_custom_results_as_given() -> None:
    module = _verify(
        "%a: tensor<8xf32>, %b: tensor<i32>",
        '  %0:2 = tosa.custom %a, %b {identifier = "topk", config = "acme", implementation_attrs = "k=2"} '
        ": (tensor<8xf32>, tensor<i32>) -> (tensor<2xf32>, tensor<2xi32>)",
    )
    op = next(o for o in module.walk() if isinstance(o, CustomOp))
    assert op.attr_values() == {"identifier": "topk", "config": "acme", "implementation_attrs": "k=2"}
    assert len(op.input_list) == 2 and len(op.output_list) == 2


def test_custom_make_and_errors() -> None:
    module = parse_module(_module("%a: tensor<8xf32>", ""))
    arg = next(iter(module.body.block.ops)).body.block.args[0]
    op = CustomOp.make([arg], [TensorType(f32, [3, 3])], "my.op", "vendor", "blob")
    op.verify()
    assert op.output_list[0].type == TensorType(f32, [3, 3])
    with pytest.raises(NotImplementedError):
        CustomOp.infer_shapes([(8,)])
    bad = CustomOp.make([arg], [], "")
    with pytest.raises(VerifyError, match="empty identifier"):
        bad.verify()


# -- COND_IF / WHILE_LOOP -------------------------------------------------------------------------


def _graph(arg_types: list, make_body) -> Region:
    block = Block(arg_types=arg_types)
    outs = make_body(block)
    block.add_op(YieldOp.create(operands=list(outs)))
    return Region(block)


def test_cond_if_operand_order_and_make() -> None:
    t2 = TensorType(i32, [2])
    cond_t = TensorType(i1, [])
    module = parse_module(_module("%x: tensor<2xi32>, %c: tensor<i1>", ""))
    x, c = next(iter(module.body.block.ops)).body.block.args
    then_g = _graph([t2], lambda b: [b.args[0]])
    else_g = _graph([t2], lambda b: [b.args[0]])
    op = CondIfOp.make([x], c, then_g, else_g)
    assert op.condition is c and list(op.input_list) == [x]
    assert list(op.operands) == [x, c]  # condition last (spec order)
    assert [r.type for r in op.output_list] == [t2]
    assert op.condition.type == cond_t
    op.verify()


def test_cond_if_errors_name_rules() -> None:
    err = _error(
        "%x: tensor<2xi32>, %c: tensor<i1>",
        "  %0 = tosa.cond_if %x, %c : (tensor<2xi32>, tensor<i1>) -> tensor<2xi32> {\n"
        "  ^bb0(%a: tensor<2xi32>):\n    tosa.yield %a : tensor<2xi32>\n"
        "  } else {\n  ^bb0(%a: tensor<2xf32>):\n"
        "    %z = tosa.const {values = dense<0> : tensor<2xi32>} : tensor<2xi32>\n    tosa.yield %z : tensor<2xi32>\n  }",
    )
    assert err.rule == "ERROR_IF(tensor_list_shape(input_list) != tosa_input_shape(else_graph))"
    assert err.op_name == "tosa.cond_if"
    err = _error(
        "%x: tensor<2xi32>, %c: tensor<i1>",
        "  %0 = tosa.cond_if %x, %c : (tensor<2xi32>, tensor<i1>) -> tensor<2xi32> {\n"
        "  ^bb0(%a: tensor<2xi32>):\n    %z = tosa.const {values = dense<0> : tensor<3xi32>} : tensor<3xi32>\n"
        "    tosa.yield %z : tensor<3xi32>\n"
        "  } else {\n  ^bb0(%a: tensor<2xi32>):\n    tosa.yield %a : tensor<2xi32>\n  }",
    )
    assert err.rule == "ERROR_IF(tensor_list_shape(output_list) != tosa_output_shape(then_graph))"
    err = _error(
        "%x: tensor<2xi32>, %c: tensor<2xi1>",
        "  %0 = tosa.cond_if %x, %c : (tensor<2xi32>, tensor<2xi1>) -> tensor<2xi32> {\n"
        "  ^bb0(%a: tensor<2xi32>):\n    tosa.yield %a : tensor<2xi32>\n"
        "  } else {\n  ^bb0(%a: tensor<2xi32>):\n    tosa.yield %a : tensor<2xi32>\n  }",
    )
    assert err.rule == "condition is a rank-0 bool_t tensor"


def _while_text(cond_yield: str = "%p : tensor<i1>", body_arg: str = "tensor<i32>", result: str = "tensor<i32>") -> str:
    return (
        f"  %0 = tosa.while_loop %n : (tensor<i32>) -> {result} {{\n"
        "  ^bb0(%i: tensor<i32>):\n"
        "    %k = tosa.const {values = dense<3> : tensor<i32>} : tensor<i32>\n"
        "    %p = tosa.greater %k, %i : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
        f"    tosa.yield {cond_yield}\n"
        "  } do {\n"
        f"  ^bb0(%j: {body_arg}):\n"
        "    %one = tosa.const {values = dense<1> : tensor<i32>} : tensor<i32>\n"
        "    %s = tosa.add %one, %one : (tensor<i32>, tensor<i32>) -> tensor<i32>\n"
        "    tosa.yield %s : tensor<i32>\n"
        "  }"
    )


def test_while_loop_valid_and_round_trip() -> None:
    module = _verify("%n: tensor<i32>", _while_text())
    once = print_module(module)
    twice = print_module(parse_module(once))
    assert once == twice
    generic = print_module(module, generic=True)
    assert print_module(parse_module(generic)) == once


def test_while_loop_errors() -> None:
    assert _error("%n: tensor<i32>", _while_text(result="tensor<1xi32>")).rule == (
        "ERROR_IF(tensor_list_shape(input_list) != tensor_list_shape(output_list))")
    assert _error("%n: tensor<i32>", _while_text(body_arg="tensor<2xi32>")).rule == (
        "ERROR_IF(tensor_list_shape(input_list) != tosa_input_shape(body_graph))")
    assert _error("%n: tensor<i32>", _while_text(cond_yield="%k : tensor<i32>")).rule == (
        "ERROR_IF(tosa_output_shape(cond_graph) != tosa_list_shape([bool_t]))")
    assert _error("%n: tensor<i32>", _while_text(cond_yield="%p, %p : tensor<i1>, tensor<i1>")).rule == (
        "ERROR_IF(tosa_output_shape(cond_graph) != tosa_list_shape([bool_t]))")


def test_while_loop_make() -> None:
    ti = TensorType(i32, [])
    module = parse_module(_module("%n: tensor<i32>", ""))
    n = next(iter(module.body.block.ops)).body.block.args[0]
    cond_block = Block(arg_types=[ti])
    k = ConstOp.from_numpy(np.array(True))
    cond_block.add_op(k)
    cond_block.add_op(YieldOp.create(operands=[k.output]))
    body = _graph([ti], lambda b: [b.args[0]])
    op = WhileLoopOp.make([n], Region(cond_block), body)
    assert [r.type for r in op.output_list] == [ti]
    op.verify()
    assert WhileLoopOp.infer_shapes([(2, 3), ()]) == [(2, 3), ()]



def test_const_per_axis_output_matches_quantized_dimension() -> None:
    q = "!quant.uniform<i8:f32:0, {0.5, 0.25}>"
    _verify("", f"  %0 = tosa.const {{values = dense<1> : tensor<2x3xi8>}} : tensor<2x3x{q}>")
    err = _error("", f"  %0 = tosa.const {{values = dense<1> : tensor<3x2xi8>}} : tensor<3x2x{q}>")
    assert err.rule == "one scale per index of the quantized dimension"
    assert "dimension 0 has size 3 but there are 2 scales" in str(err)
