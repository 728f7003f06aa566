"""The ``const`` dialect (architecture spec §5.2): transformations, lazy reading, verification.

Expected values are computed by hand or by an independent numpy expression of the documented rule,
never by calling the transformation under test.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects.builtin import IntegerType, ModuleOp, Signedness, TensorType, bf16, f16, f32, i1, i8, i32

from nnkiln.dialects.const import (
    AddAttr,
    BroadcastAttr,
    ContentAttr,
    ConvertElemTypeAttr,
    DeclareOp,
    PadWithZeroAttr,
    QuantCastAttr,
    RescaleAttr,
    ReshapeAttr,
    SubViewAttr,
    TransposeAttr,
    append_transformation,
    materialize,
    read_content,
)
from nnkiln.ir.elements import from_numpy, to_numpy
from nnkiln.ir.errors import VerifyError
from nnkiln.ir.text import parse_module, print_module

try:
    from nnkiln.dialects.quant import UniformQuantizedPerAxisType, UniformQuantizedType
except ImportError:  # pragma: no cover - the quant dialect is written by another helper
    UniformQuantizedType = UniformQuantizedPerAxisType = None  # type: ignore[assignment,misc]

needs_quant = pytest.mark.skipif(UniformQuantizedType is None, reason="nnkiln.dialects.quant is not available")

ui8 = IntegerType(8, Signedness.UNSIGNED)
i4 = IntegerType(4)


def content(array: np.ndarray, element=None) -> ContentAttr:
    if element is None:
        return ContentAttr.from_numpy(array)
    return ContentAttr(from_numpy(array, TensorType(element, list(array.shape))))


def ttype(element, *shape: int) -> TensorType:
    return TensorType(element, list(shape))


# ----------------------------------------------------------------------------------------------
# Shape transformations


def test_reshape() -> None:
    c = content(np.arange(24, dtype=np.int32)).reshape([4, 6])
    assert c.final_type() == ttype(i32, 4, 6)
    out = c.read()
    for i in range(4):
        for j in range(6):
            assert out[i, j] == 6 * i + j


def test_reshape_to_scalar_and_back() -> None:
    c = content(np.array([7.0], dtype=np.float32)).reshape([]).reshape([1, 1])
    assert c.final_type() == ttype(f32, 1, 1)
    assert c.read().tolist() == [[7.0]]


def test_transpose() -> None:
    # base[i, j, k] = 12 i + 4 j + k; output dim n is input dim perm[n] -> out[k, i, j] = base[i, j, k]
    c = content(np.arange(24, dtype=np.int32)).reshape([2, 3, 4]).transpose([2, 0, 1])
    assert c.final_type() == ttype(i32, 4, 2, 3)
    out = c.read()
    for i in range(2):
        for j in range(3):
            for k in range(4):
                assert out[k, i, j] == 12 * i + 4 * j + k


def test_broadcast() -> None:
    c = content(np.array([[1], [2]], dtype=np.int8)).broadcast(1, 3)
    assert c.final_type() == ttype(i8, 2, 3)
    assert c.read().tolist() == [[1, 1, 1], [2, 2, 2]]


def test_broadcast_same_size_is_identity() -> None:
    c = content(np.array([1, 2], dtype=np.int8)).broadcast(0, 2)
    assert c.read().tolist() == [1, 2]


def test_pad_with_zero() -> None:
    c = content(np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)).pad_with_zero([1, 0], [0, 2])
    assert c.final_type() == ttype(f32, 3, 4)
    assert c.read().tolist() == [[0, 0, 0, 0], [1, 2, 0, 0], [3, 4, 0, 0]]


def test_subview() -> None:
    c = content(np.arange(12, dtype=np.int32)).reshape([3, 4]).subview([1, 1], [2, 2])
    assert c.final_type() == ttype(i32, 2, 2)
    assert c.read().tolist() == [[5, 6], [9, 10]]


# ----------------------------------------------------------------------------------------------
# Element type conversion (rules in nnkiln.dialects.const.transforms' docstring)


def test_convert_f32_to_f16_rounds_to_nearest_even() -> None:
    ulp = 2.0**-10  # f16 spacing in [1, 2)
    values = [1.0, 1.0 + ulp / 2, 1.0 + 3 * ulp / 2, 65504.0, 70000.0, -70000.0, 0.1]
    out = content(np.array(values, dtype=np.float32)).convert_elem_type(f16).read()
    assert out.dtype == np.float16
    # 1 + ulp/2 is a tie -> even mantissa (1.0); 1 + 3ulp/2 is a tie -> 1 + 2ulp (even)
    expected = [1.0, 1.0, 1.0 + 2 * ulp, 65504.0, math.inf, -math.inf]
    assert [float(v) for v in out[:6]] == expected
    # 0.1 in f16: the nearest of 1638/16384 and 1639/16384 is 1638/16384 (0.0999755859375)
    assert float(out[6]) == 1638 / 16384


def test_convert_f32_to_bf16() -> None:
    # bf16 has 8 significant bits: 1 + 2**-8 is a tie between 1 and 1 + 2**-7 -> 1 (even)
    out = content(np.array([1 + 2.0**-8, 1 + 3 * 2.0**-8, 3.0], dtype=np.float32)).convert_elem_type(bf16).read()
    assert out.dtype == np.dtype(ml_dtypes.bfloat16)
    assert [float(v) for v in out] == [1.0, 1 + 2 * 2.0**-7, 3.0]


def test_convert_float_to_int_rounds_half_even_and_saturates() -> None:
    values = [2.5, 3.5, -2.5, -0.4, 0.6, 200.0, -200.0, math.nan, math.inf, -math.inf]
    out = content(np.array(values, dtype=np.float32)).convert_elem_type(i8).read()
    assert out.dtype == np.int8
    assert out.tolist() == [2, 4, -2, 0, 1, 127, -128, 0, 127, -128]


def test_convert_float_to_unsigned_and_i32() -> None:
    out = content(np.array([-3.0, 255.5, 254.5, 1e10], dtype=np.float32)).convert_elem_type(ui8).read()
    assert out.dtype == np.uint8
    assert out.tolist() == [0, 255, 254, 255]
    big = content(np.array([3e9, -3e9, 1.5], dtype=np.float64)).convert_elem_type(i32).read()
    assert big.tolist() == [2**31 - 1, -(2**31), 2]


def test_convert_int_to_int_saturates() -> None:
    out = content(np.array([300, -300, 5, -1], dtype=np.int32)).convert_elem_type(i8).read()
    assert out.tolist() == [127, -128, 5, -1]
    out = content(np.array([300, -300, 5, -1], dtype=np.int32)).convert_elem_type(ui8).read()
    assert out.tolist() == [255, 0, 5, 0]
    out = content(np.array([9, -9, 3], dtype=np.int32)).convert_elem_type(i4).read()
    assert out.tolist() == [7, -8, 3]
    out = content(np.array([200, 100], dtype=np.uint8), ui8).convert_elem_type(i8).read()
    assert out.tolist() == [127, 100]


def test_convert_int_to_float_rounds_to_nearest_even() -> None:
    # f16 spacing in [2048, 4096) is 2: 2049 ties to 2048 (even), 2051 ties to 2052 (even)
    out = content(np.array([2049, 2051, -7, 70000], dtype=np.int32)).convert_elem_type(f16).read()
    assert [float(v) for v in out] == [2048.0, 2052.0, -7.0, math.inf]
    # f32 spacing in [2**24, 2**25) is 2
    out = content(np.array([2**24 + 1, 2**24 + 3], dtype=np.int32)).convert_elem_type(f32).read()
    assert [float(v) for v in out] == [2.0**24, 2.0**24 + 4]


def test_convert_to_bf16_rounds_once() -> None:
    # bf16 spacing in [2**24, 2**25) is 2**17; 2**24 + 2**16 + 1 is above the midpoint -> rounds up
    out = content(np.array([2**24 + 2**16 + 1, 2**24 + 2**16], dtype=np.int32)).convert_elem_type(bf16).read()
    assert [float(v) for v in out] == [2.0**24 + 2**17, 2.0**24]  # the second is a tie -> even
    # float64 1 + 2**-8 + 2**-30 is just above the tie between 1 and 1 + 2**-7
    out = content(np.array([1 + 2.0**-8 + 2.0**-30, -(1 + 2.0**-8 + 2.0**-30), 1e39], dtype=np.float64)).convert_elem_type(bf16).read()
    assert [float(v) for v in out] == [1 + 2.0**-7, -(1 + 2.0**-7), math.inf]
    # rescale on bf16: 1.5 * (1 + 2**-7 + 2**-20) = 1.5 + 1.5 * 2**-7 + ..., spacing 2**-7 -> 1.5 + 2 * 2**-7
    out = content(np.array([1.5], dtype=ml_dtypes.bfloat16), bf16).rescale(1 + 2.0**-7 + 2.0**-20).read()
    assert float(out[0]) == 1.5 + 2 * 2.0**-7


def test_convert_bool() -> None:
    out = content(np.array([0.0, 2.0, -0.5], dtype=np.float32)).convert_elem_type(i1).read()
    assert out.dtype == np.bool_ and out.tolist() == [False, True, True]
    out = content(np.array([True, False]), i1).convert_elem_type(f32).read()
    assert out.tolist() == [1.0, 0.0]
    out = content(np.array([True, False]), i1).convert_elem_type(i8).read()
    assert out.tolist() == [1, 0]


# ----------------------------------------------------------------------------------------------
# Arithmetic


def test_rescale_in_float64_rounded_once() -> None:
    out = content(np.array([2.0, -3.0], dtype=np.float32)).rescale(0.5).read()
    assert out.dtype == np.float32 and out.tolist() == [1.0, -1.5]
    # f16: 3 * 0.1 = 0.30000000000000004 in float64, then to f16: nearest multiple of 2**-12 is 1229/4096
    out = content(np.array([3.0], dtype=np.float16)).rescale(0.1).read()
    assert out.dtype == np.float16 and float(out[0]) == 1229 / 4096


def test_add() -> None:
    out = content(np.array([1.0, -2.0], dtype=np.float32)).add(0.5).read()
    assert out.tolist() == [1.5, -1.5]
    chain = content(np.array([1.0, 2.0], dtype=np.float32)).rescale(2.0).add(-1.0)
    assert chain.read().tolist() == [1.0, 3.0]  # applied in list order: x * 2 - 1


@pytest.mark.parametrize("transform", [RescaleAttr(2.0), AddAttr(1.0)])
def test_arith_rejects_integers(transform) -> None:
    with pytest.raises(VerifyError, match="not a float type"):
        content(np.array([1, 2], dtype=np.int8)).transform(transform)


def test_arith_rejects_non_finite() -> None:
    with pytest.raises(VerifyError, match="value inf is not finite"):
        content(np.array([1.0], dtype=np.float32)).rescale(math.inf)


# ----------------------------------------------------------------------------------------------
# Type inference errors


@pytest.mark.parametrize(
    ("transform", "rule"),
    [
        (ReshapeAttr([4, 2]), "product(shape) == product(input shape)"),
        (ReshapeAttr([-2, -3]), "shape dims >= 0"),
        (TransposeAttr([1, 1]), "perm is a permutation of [0, rank)"),
        (TransposeAttr([0]), "perm is a permutation of [0, rank)"),
        (BroadcastAttr(2, 4), "0 <= axis < rank"),
        (BroadcastAttr(1, 5), "input dimension at axis is 1 or size"),
        (PadWithZeroAttr([0], [0]), "len(pad_before) == rank"),
        (PadWithZeroAttr([0, -1], [0, 0]), "pads >= 0"),
        (SubViewAttr([0, 1], [2, 3]), "0 <= offset, 0 <= size, offset + size <= dim"),
        (SubViewAttr([0, 0, 0], [1, 1, 1]), "len(offsets) == rank"),
        (QuantCastAttr(f32), "target is a quantized or integer type"),
        (QuantCastAttr(i8), "input is a quantized type with this storage type"),
        (ConvertElemTypeAttr(TensorType(f32, [2])), "integer or float element types"),
    ],
)
def test_type_inference_errors(transform, rule: str) -> None:
    base = content(np.zeros((2, 3), dtype=np.float32))
    with pytest.raises(VerifyError) as info:
        base.transform(transform)
    assert info.value.rule == rule
    assert "transformation 0 on tensor<2x3xf32>" in str(info.value)


def test_type_chain() -> None:
    c = content(np.zeros(6, dtype=np.float32)).reshape([2, 3]).transpose([1, 0]).convert_elem_type(f16)
    assert c.types() == [ttype(f32, 6), ttype(f32, 2, 3), ttype(f32, 3, 2), ttype(f16, 3, 2)]


def test_transformations_are_immutable_values() -> None:
    c = content(np.zeros(6, dtype=np.float32))
    r = c.reshape([2, 3])
    assert c.transforms == () and r.transforms == (ReshapeAttr([2, 3]),)
    assert ReshapeAttr([2, 3]) == ReshapeAttr([2, 3]) and hash(ReshapeAttr([2, 3])) == hash(ReshapeAttr([2, 3]))
    with pytest.raises(Exception):
        r.transformations = c.transformations  # type: ignore[misc]


# ----------------------------------------------------------------------------------------------
# Quantized content


@needs_quant
def test_quant_cast_reinterprets_and_back() -> None:
    q = UniformQuantizedType(ui8, f32, 0.5, 128)
    c = content(np.array([0, 128, 255], dtype=np.uint8), ui8).quant_cast(q)
    assert c.final_type() == ttype(q, 3)
    assert c.read().dtype == np.uint8 and c.read().tolist() == [0, 128, 255]
    back = c.quant_cast(ui8)
    assert back.final_type() == ttype(ui8, 3) and back.read().tolist() == [0, 128, 255]
    with pytest.raises(VerifyError, match="does not have the storage type"):
        content(np.array([1], dtype=np.int8)).quant_cast(q)
    with pytest.raises(VerifyError, match="not a quantized type stored as i8"):
        c.quant_cast(i8)


@needs_quant
def test_quant_cast_between_quantized_types_with_same_storage() -> None:
    q1 = UniformQuantizedType(i8, f32, 0.5, 0)
    q2 = UniformQuantizedType(i8, f32, 0.25, 3)
    c = content(np.array([1, -1], dtype=np.int8)).quant_cast(q1).quant_cast(q2)
    assert c.final_type() == ttype(q2, 2) and c.read().tolist() == [1, -1]


@needs_quant
def test_dequantize_per_tensor() -> None:
    q = UniformQuantizedType(i8, f32, 0.5, -3)
    out = content(np.array([-3, 0, 5], dtype=np.int8)).quant_cast(q).dequantize().read()
    assert out.dtype == np.float32 and out.tolist() == [0.0, 1.5, 4.0]  # 0.5 * (q + 3)


@needs_quant
def test_dequantize_per_axis_after_transpose() -> None:
    q = UniformQuantizedPerAxisType(i8, f32, [0.5, 0.25], [1, -2], 0)
    c = content(np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int8)).quant_cast(q).transpose([1, 0])
    moved = c.final_type().element_type
    assert moved.quantized_dimension == 1 and moved.scales == (0.5, 0.25)
    # row 0: 0.5 * (q - 1); row 1: 0.25 * (q + 2); then transposed
    assert c.dequantize().read().tolist() == [[0.0, 1.5], [0.5, 1.75], [1.0, 2.0]]


@needs_quant
def test_pad_quantized_uses_zero_point() -> None:
    q = UniformQuantizedType(ui8, f32, 0.5, 128)
    out = content(np.array([7, 9], dtype=np.uint8), ui8).quant_cast(q).pad_with_zero([1], [2]).read()
    assert out.tolist() == [128, 7, 9, 128, 128]
    qa = UniformQuantizedPerAxisType(i8, f32, [0.5, 0.25], [1, -2], 0)
    out = content(np.array([[1], [2]], dtype=np.int8)).quant_cast(qa).pad_with_zero([0, 1], [0, 1]).read()
    assert out.tolist() == [[1, 1, 1], [-2, 2, -2]]
    with pytest.raises(VerifyError, match="cannot pad quantized dimension 0"):
        content(np.array([[1], [2]], dtype=np.int8)).quant_cast(qa).pad_with_zero([1, 0], [0, 0])


@needs_quant
def test_per_axis_subview_reshape_broadcast() -> None:
    qa = UniformQuantizedPerAxisType(i8, f32, [1.0, 2.0, 3.0], [0, 0, 0], 0)
    c = content(np.zeros((3, 2), dtype=np.int8)).quant_cast(qa)
    sub = c.subview([1, 0], [2, 2]).final_type().element_type
    assert sub.scales == (2.0, 3.0) and sub.quantized_dimension == 0
    r = c.reshape([1, 3, 2, 1]).final_type().element_type
    assert r.quantized_dimension == 1 and r.scales == (1.0, 2.0, 3.0)
    with pytest.raises(VerifyError, match="quantized dimension"):
        c.reshape([6])
    one = UniformQuantizedPerAxisType(i8, f32, [0.5], [1], 1)
    b = content(np.zeros((2, 1), dtype=np.int8)).quant_cast(one).broadcast(1, 3).final_type().element_type
    assert b.scales == (0.5, 0.5, 0.5) and b.zero_points == (1, 1, 1)


@needs_quant
def test_per_axis_quant_cast_checks_shape() -> None:
    qa = UniformQuantizedPerAxisType(i8, f32, [1.0, 2.0], [0, 0], 0)
    with pytest.raises(VerifyError, match="scale"):
        content(np.zeros((3, 2), dtype=np.int8)).quant_cast(qa)


# ----------------------------------------------------------------------------------------------
# The op


def test_declare_infers_and_verifies_type() -> None:
    c = content(np.arange(6, dtype=np.float32)).reshape([2, 3])
    op = DeclareOp(c)
    assert op.output.type == ttype(f32, 2, 3)
    ModuleOp([op]).verify()
    bad = DeclareOp(c, ttype(f32, 3, 2))
    with pytest.raises(VerifyError) as info:
        ModuleOp([bad]).verify()
    assert info.value.op_name == "const.declare"
    assert info.value.rule == "result type == content final type"
    assert "tensor<3x2xf32>" in str(info.value) and "tensor<2x3xf32>" in str(info.value)


def test_declare_reports_bad_chain() -> None:
    c = ContentAttr(from_numpy(np.zeros(6, dtype=np.float32)), [ReshapeAttr([5])])  # unchecked constructor
    with pytest.raises(VerifyError, match="has 5 elements"):
        ModuleOp([DeclareOp(c, ttype(f32, 5))]).verify()


def test_fold_returns_lazy_content() -> None:
    c = content(np.arange(4, dtype=np.float32)).reshape([2, 2])
    op = DeclareOp(c)
    assert op.fold() == (c,)
    assert op.read().tolist() == [[0.0, 1.0], [2.0, 3.0]]


def test_append_transformation() -> None:
    op = DeclareOp(content(np.arange(6, dtype=np.int32)))
    new = append_transformation(op, ReshapeAttr([2, 3]), TransposeAttr([1, 0]))
    assert op.content.transforms == ()  # the original is unchanged
    assert op.output.type == ttype(i32, 6)
    assert new.output.type == ttype(i32, 3, 2)
    assert new.content.base is op.content.base  # same data, not copied
    assert new.read().tolist() == [[0, 3], [1, 4], [2, 5]]
    with pytest.raises(VerifyError):
        append_transformation(op, ReshapeAttr([4]))


def test_materialize() -> None:
    op = DeclareOp(content(np.arange(6, dtype=np.int32)).reshape([2, 3]).transpose([1, 0]))
    m = materialize(op)
    assert m.content.transforms == () and m.output.type == op.output.type
    assert to_numpy(m.content.base).tolist() == [[0, 3], [1, 4], [2, 5]]


@needs_quant
def test_materialize_quantized_keeps_quant_cast() -> None:
    q = UniformQuantizedType(i8, f32, 0.5, 0)
    op = DeclareOp(content(np.array([1, 2, 3, 4], dtype=np.int8)).quant_cast(q).reshape([2, 2]))
    m = materialize(op)
    assert m.content.transforms == (QuantCastAttr(q),) and m.output.type == ttype(q, 2, 2)
    assert m.read().tolist() == [[1, 2], [3, 4]]


def test_read_is_read_only() -> None:
    out = content(np.arange(4, dtype=np.float32)).add(1.0).read()
    with pytest.raises(ValueError):
        out[0] = 5.0


# ----------------------------------------------------------------------------------------------
# Text round trip


def _round_trip(module: ModuleOp) -> tuple[str, ModuleOp]:
    text = print_module(module)
    again = parse_module(text)
    again.verify()
    assert print_module(again) == text
    return text, again


def test_round_trip_small() -> None:
    text = """
    func.func @main() -> tensor<3x2xf16> {
      %0 = const.declare tensor<3x2xf16> = #const.content<dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>, [#const.transpose<[1, 0]>, #const.convert_elem_type<f16>]>
      func.return %0 : tensor<3x2xf16>
    }
    """
    module = parse_module(text)
    module.verify()
    printed, again = _round_trip(module)
    assert "#const.transpose<[1, 0]>, #const.convert_elem_type<f16>" in printed
    (op,) = [o for o in again.walk() if isinstance(o, DeclareOp)]
    assert op.read().tolist() == [[1, 4], [2, 5], [3, 6]]


def test_round_trip_large_base_is_exact() -> None:
    data = np.linspace(-1, 1, 1000, dtype=np.float32)
    op = DeclareOp(content(data).reshape([10, 100]).subview([2, 5], [3, 7]).rescale(0.1))
    text, again = _round_trip(ModuleOp([op]))
    assert "dense_resource<blob0>" in text  # large nested bases print as resource blobs too
    (op2,) = [o for o in again.walk() if isinstance(o, DeclareOp)]
    assert op2.content == op.content
    assert to_numpy(op2.content.base).tobytes() == data.tobytes()


def test_generic_form_parses() -> None:
    text = '%0 = "const.declare"() <{content = #const.content<dense<[1, 2]> : tensor<2xi8>, [#const.reshape<[2, 1]>]>}> : () -> tensor<2x1xi8>'
    module = parse_module(text)
    module.verify()
    (op,) = [o for o in module.walk() if isinstance(o, DeclareOp)]
    assert op.read().tolist() == [[1], [2]]


# ----------------------------------------------------------------------------------------------
# Laziness


def test_large_chain_is_lazy(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    for cls in (ReshapeAttr, TransposeAttr):
        original = cls.apply

        def counting(self, data, input, output, _original=original, _name=cls.name):
            calls.append(_name)
            return _original(self, data, input, output)

        monkeypatch.setattr(cls, "apply", counting)

    n = 5000
    base = np.arange(n * n, dtype=np.float32)  # 25M elements
    attr = ContentAttr.from_numpy(base).reshape([n, n]).transpose([1, 0])
    op = DeclareOp(attr)
    module = ModuleOp([op])
    module.verify()
    assert op.output.type == ttype(f32, n, n)
    assert op.fold() == (attr,)
    assert calls == []  # building, verifying and folding applied nothing

    out = read_content(op.content)
    assert calls == ["const.reshape", "const.transpose"]  # reading applies them, in order
    assert out.shape == (n, n)
    stored = to_numpy(op.content.base)
    assert np.shares_memory(out, stored)  # views of the stored bytes: no transformed copy
    for i, j in [(0, 0), (1, 0), (0, 1), (4999, 3), (17, 4321), (4999, 4999)]:
        assert out[i, j] == base[j * n + i]  # out[i, j] = reshaped[j, i]
    assert op.content.transforms == (ReshapeAttr([n, n]), TransposeAttr([1, 0]))  # IR unchanged
