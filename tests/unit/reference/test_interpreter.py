"""The reference interpreter driver: names, input checks, execution order, errors, control flow, files.

Expected values are hand computed from the spec pseudocode.
"""

from __future__ import annotations

import numpy as np
import pytest

from nnkiln.ir.errors import InputError, NotExecutableError, TosaUnpredictable, VerifyError
from nnkiln.ir.text import parse_module
from nnkiln.reference import input_names, load_inputs, output_names, register_custom, run, save_outputs
from nnkiln.reference.interpreter import entry_function

SMALL = """
func.func @main(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %0 = tosa.intdiv %x, %y : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %1 = tosa.clz %0 : (tensor<4xi32>) -> tensor<4xi32>
  %2 = tosa.add %0, %1 : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return %2 : tensor<4xi32>
}
"""


def test_small_graph_end_to_end():
    x = np.array([-7, 7, 0, 1], dtype=np.int32)
    y = np.array([2, -2, 5, 1], dtype=np.int32)
    out = run(parse_module(SMALL), {"x": x, "y": y})
    # intdiv: -3, -3, 0, 1; clz: 0, 0, 32, 31; sum: -3, -3, 32, 32
    assert list(out) == ["output0"]
    np.testing.assert_array_equal(out["output0"], [-3, -3, 32, 32])


def test_python_int_inputs_are_converted_to_the_storage_dtype():
    out = run(parse_module(SMALL), {"x": np.array([9, 9, 9, 9]), "y": np.array([3, 3, 3, 3])})
    assert out["output0"].dtype == np.int32
    np.testing.assert_array_equal(out["output0"], [3 + 30] * 4)  # 9/3 = 3, clz(3) = 30


NAMED = """
func.func @main(%0: tensor<2xf32> {nnkiln.name = "image"}, %scale: tensor<2xf32>, %2: tensor<2xf32>)
    -> (tensor<2xf32> {nnkiln.name = "prob"}, tensor<2xf32>) {
  %a = tosa.mul %0, %scale : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %b = tosa.sub %a, %2 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %a, %b : tensor<2xf32>, tensor<2xf32>
}
"""


def test_names_from_attributes_hints_and_positions():
    func = entry_function(parse_module(NAMED))
    assert input_names(func) == ["image", "scale", "arg2"]
    assert output_names(func) == ["prob", "output1"]
    f = np.float32
    out = run(parse_module(NAMED), {"image": np.array([1.5, 2.0], f), "scale": np.array([2.0, -1.0], f), "arg2": np.array([1.0, 1.0], f)})
    np.testing.assert_array_equal(out["prob"], [3.0, -2.0])
    np.testing.assert_array_equal(out["output1"], [2.0, -3.0])


def test_missing_and_extra_inputs_are_input_errors():
    m = parse_module(SMALL)
    x = np.zeros(4, np.int32)
    with pytest.raises(InputError, match="missing 'y'"):
        run(m, {"x": x})
    with pytest.raises(InputError, match="unknown 'z'"):
        run(m, {"x": x, "y": x, "z": x})
    with pytest.raises(InputError, match="unknown 'z', 3"):  # names of mixed types are still reported
        run(m, {"x": x, "y": x, "z": x, 3: x})


def test_shape_mismatch_is_an_input_error():
    with pytest.raises(InputError, match=r"input 'y' has shape \[3\].*\[4\]"):
        run(parse_module(SMALL), {"x": np.ones(4, np.int32), "y": np.ones(3, np.int32)})


def test_dtype_mismatch_is_an_input_error():
    with pytest.raises(InputError, match="expects integers"):
        run(parse_module(SMALL), {"x": np.ones(4, np.float32), "y": np.ones(4, np.int32)})
    with pytest.raises(InputError, match="outside the range"):
        run(parse_module(SMALL), {"x": np.full(4, 2**31, np.int64), "y": np.ones(4, np.int32)})
    with pytest.raises(InputError, match="expects floating point"):
        run(parse_module(NAMED), {"image": np.ones(2, np.int32), "scale": np.ones(2, np.float32), "arg2": np.ones(2, np.float32)})


def test_overflow_is_unpredictable():
    x = np.array([2**31 - 1, 0, 0, 0], dtype=np.int32)
    y = np.array([1, 1, 1, 1], dtype=np.int32)
    # intdiv gives INT32_MAX, clz(INT32_MAX) = 1: the add overflows
    with pytest.raises(TosaUnpredictable, match="tosa.add"):
        run(parse_module(SMALL), {"x": x, "y": y})


def test_verify_error_propagates_before_execution():
    bad = """
func.func @main(%x: tensor<4xi8>, %y: tensor<4xi8>) -> tensor<4xi8> {
  %0 = tosa.add %x, %y : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  func.return %0 : tensor<4xi8>
}
"""
    with pytest.raises(VerifyError):
        run(parse_module(bad), {"x": np.zeros(4, np.int8), "y": np.zeros(4, np.int8)})


def test_constants_and_outputs_are_writable_copies():
    text = """
func.func @main() -> (tensor<3xi32>, tensor<3xi32>, tensor<1x3xi32>) {
  %c = "tosa.const"() <{values = dense<[1, 2, 3]> : tensor<3xi32>}> : () -> tensor<3xi32>
  %r = tosa.reshape %c {new_shape = array<i64: 1, 3>} : (tensor<3xi32>) -> tensor<1x3xi32>
  func.return %c, %c, %r : tensor<3xi32>, tensor<3xi32>, tensor<1x3xi32>
}
"""
    out = run(parse_module(text), {})
    a, b, r = out["output0"], out["output1"], out["output2"]
    for arr in (a, b, r):
        assert arr.flags.writeable and arr.base is None
    a[0] = 100
    assert b[0] == 1 and r[0, 0] == 1
    # the module's constant is untouched: running again gives the same values
    np.testing.assert_array_equal(run(parse_module(text), {})["output0"], [1, 2, 3])


def test_identity_of_an_input_is_not_the_callers_array():
    text = """
func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {
  %0 = tosa.identity %x : (tensor<2xi32>) -> tensor<2xi32>
  func.return %0 : tensor<2xi32>
}
"""
    x = np.array([1, 2], dtype=np.int32)
    out = run(parse_module(text), {"x": x})["output0"]
    out[0] = 5
    assert x[0] == 1


def test_entry_function_choice():
    two = """
func.func @helper(%x: tensor<1xi32>) -> tensor<1xi32> {
  func.return %x : tensor<1xi32>
}
func.func @main(%x: tensor<1xi32>) -> tensor<1xi32> {
  %0 = tosa.negate %x : (tensor<1xi32>) -> tensor<1xi32>
  func.return %0 : tensor<1xi32>
}
"""
    np.testing.assert_array_equal(run(parse_module(two), {"x": np.array([4], np.int32)})["output0"], [-4])
    with pytest.raises(InputError, match="@main"):
        run(parse_module(two.replace("@main", "@other")), {"x": np.array([4], np.int32)})


CUSTOM = """
func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {
  %0 = "tosa.custom"(%x) <{identifier = "%s", config = "test", implementation_attrs = ""}> : (tensor<2xi32>) -> tensor<2xi32>
  func.return %0 : tensor<2xi32>
}
"""


def test_custom_without_kernel_is_not_executable():
    with pytest.raises(NotExecutableError, match="nnkiln_test_unregistered"):
        run(parse_module(CUSTOM.replace("%s", "nnkiln_test_unregistered")), {"x": np.zeros(2, np.int32)})


def test_custom_with_registered_kernel():
    register_custom("nnkiln_test_double", lambda call: [call.inputs[0] * 2])
    out = run(parse_module(CUSTOM.replace("%s", "nnkiln_test_double")), {"x": np.array([3, -4], np.int32)})
    np.testing.assert_array_equal(out["output0"], [6, -8])


def test_op_without_kernel_is_not_executable():
    from nnkiln.reference import interpreter

    interp = interpreter.Interpreter(kernels={})
    module = parse_module(SMALL)
    func = entry_function(module)
    with pytest.raises(NotExecutableError, match="tosa.intdiv"):
        interp.run_block(func.body.blocks[0], [np.ones(4, np.int32)] * 2, None)


def test_intermediates_are_freed_after_last_use():
    from nnkiln.reference import interpreter

    interp = interpreter.Interpreter()
    func = entry_function(parse_module(SMALL))
    schedule = interp._free_schedule(func.body.blocks[0])
    ops = list(func.body.blocks[0].ops)
    intdiv, clz, add = ops[0].results[0], ops[1].results[0], ops[2].results[0]
    # %0 is last used by the add (index 2), %1 too; the args by the intdiv; %2 by the return.
    assert set(schedule[0]) == set(func.body.blocks[0].args)
    assert set(schedule[2]) == {intdiv, clz}
    assert schedule[3] == [add]


COND_IF = """
func.func @main(%x: tensor<2xi32>, %c: tensor<i1>) -> tensor<2xi32> {
  %r = tosa.cond_if %x, %c : (tensor<2xi32>, tensor<i1>) -> tensor<2xi32> {
  ^bb0(%a: tensor<2xi32>):
    %n = tosa.negate %a : (tensor<2xi32>) -> tensor<2xi32>
    tosa.yield %n : tensor<2xi32>
  } else {
  ^bb0(%a: tensor<2xi32>):
    %d = tosa.add %a, %a : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
    tosa.yield %d : tensor<2xi32>
  }
  func.return %r : tensor<2xi32>
}
"""


def test_cond_if():
    m = parse_module(COND_IF)
    x = np.array([3, -5], np.int32)
    np.testing.assert_array_equal(run(m, {"x": x, "c": np.array(True)})["output0"], [-3, 5])
    np.testing.assert_array_equal(run(m, {"x": x, "c": np.array(False)})["output0"], [6, -10])


WHILE = """
func.func @main(%i: tensor<i32>, %acc: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
  %r:2 = tosa.while_loop %i, %acc : (tensor<i32>, tensor<i32>) -> (tensor<i32>, tensor<i32>) {
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %ten = "tosa.const"() <{values = dense<10> : tensor<i32>}> : () -> tensor<i32>
    %c = tosa.greater %ten, %a : (tensor<i32>, tensor<i32>) -> tensor<i1>
    tosa.yield %c : tensor<i1>
  } do {
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %one = "tosa.const"() <{values = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %a2 = tosa.add %a, %one : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %b2 = tosa.add %b, %a : (tensor<i32>, tensor<i32>) -> tensor<i32>
    tosa.yield %a2, %b2 : tensor<i32>, tensor<i32>
  }
  func.return %r#0, %r#1 : tensor<i32>, tensor<i32>
}
"""


def test_while_loop_sums_0_to_9():
    out = run(parse_module(WHILE), {"i": np.array(0, np.int32), "acc": np.array(0, np.int32)})
    assert int(out["output0"]) == 10 and int(out["output1"]) == 45  # 0 + 1 + ... + 9


def test_while_loop_condition_false_at_start_returns_inputs():
    out = run(parse_module(WHILE), {"i": np.array(12, np.int32), "acc": np.array(7, np.int32)})
    assert int(out["output0"]) == 12 and int(out["output1"]) == 7


def test_unpredictable_inside_a_loop_body_propagates():
    with pytest.raises(TosaUnpredictable):
        run(parse_module(WHILE), {"i": np.array(0, np.int32), "acc": np.array(2**31 - 40, np.int32)})


# ---------------------------------------------------------------------------------------------- files


def test_load_inputs_npy_and_npz(tmp_path):
    np.save(tmp_path / "a.npy", np.array([1, 2], np.int32))
    np.savez(tmp_path / "b.npz", x=np.array([1.5], np.float32), y=np.array([True]))
    got = load_inputs([f"a={tmp_path / 'a.npy'}", str(tmp_path / "b.npz")])
    assert sorted(got) == ["a", "x", "y"]
    np.testing.assert_array_equal(got["a"], [1, 2])
    with pytest.raises(InputError, match="no array 'z'"):
        load_inputs([f"z={tmp_path / 'b.npz'}"])
    got = load_inputs([f"x={tmp_path / 'b.npz'}"])
    assert list(got) == ["x"]


def test_load_inputs_errors(tmp_path):
    np.save(tmp_path / "a.npy", np.array([1], np.int32))
    with pytest.raises(InputError, match="no such file"):
        load_inputs([f"a={tmp_path / 'missing.npy'}"])
    with pytest.raises(InputError, match="needs a name"):
        load_inputs([str(tmp_path / "a.npy")])
    with pytest.raises(InputError, match="given twice"):
        load_inputs([f"a={tmp_path / 'a.npy'}", f"a={tmp_path / 'a.npy'}"])
    (tmp_path / "junk.npy").write_bytes(b"not numpy")
    with pytest.raises(InputError, match="junk.npy"):
        load_inputs([f"j={tmp_path / 'junk.npy'}"])


def test_save_outputs(tmp_path):
    outs = {"prob": np.array([0.5], np.float32), "idx": np.array([3], np.int32)}
    save_outputs(outs, str(tmp_path / "o.npz"))
    with np.load(tmp_path / "o.npz") as data:
        assert sorted(data.keys()) == ["idx", "prob"]
        np.testing.assert_array_equal(data["idx"], [3])
    save_outputs({"prob": outs["prob"]}, str(tmp_path / "one.npy"))
    np.testing.assert_array_equal(np.load(tmp_path / "one.npy"), [0.5])
    with pytest.raises(InputError, match="one array"):
        save_outputs(outs, str(tmp_path / "two.npy"))


def test_const_declare_is_read_with_its_transformations():
    text = """
func.func @main(%x: tensor<2x2xi32>) -> tensor<2x2xi32> {
  %w = const.declare tensor<2x2xi32> = #const.content<dense<[1, 2, 3, 4]> : tensor<4xi32>, [#const.reshape<[2, 2]>]>
  %0 = tosa.add %x, %w : (tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<2x2xi32>
  func.return %0 : tensor<2x2xi32>
}
"""
    out = run(parse_module(text), {"x": np.full((2, 2), 10, np.int32)})
    np.testing.assert_array_equal(out["output0"], [[11, 12], [13, 14]])


def test_an_op_whose_result_cannot_fit_in_memory_is_refused_before_it_runs():
    # a valid graph: PAD to 2^20 x 2^20 x 2^20 float32 elements (4 EiB)
    m = parse_module("""
func.func @main(%x: tensor<1x1x1xf32>) -> tensor<1048576x1048576x1048576xf32> {
  %y = tosa.pad %x {padding = array<i64: 0, 1048575, 0, 1048575, 0, 1048575>, pad_const = 0.0 : f32} : (tensor<1x1x1xf32>) -> tensor<1048576x1048576x1048576xf32>
  func.return %y : tensor<1048576x1048576x1048576xf32>
}""")
    with pytest.raises(NotExecutableError, match="'tosa.pad' would need about .* bytes for its results; the machine has"):
        run(m, {"x": np.ones((1, 1, 1), np.float32)})
