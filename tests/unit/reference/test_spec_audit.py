"""Independent audit of the TOSA 0.30 reference interpreter (spec §1.9, §2.x, §3.3).

Every case is a small MLIR graph run through the PUBLIC API (``parse_module`` + ``nnkiln.reference.run``).
Expected values are worked out by hand from the spec pseudocode; the arithmetic is in the comments.
Nothing here was obtained by running the kernels.

Where the spec leaves a choice open (CAST ties / NaN, uint16 zero points) the test checks the decision
documented in the kernel / op docstring and says so.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from nnkiln.ir.errors import TosaUnpredictable, VerifyError
from nnkiln.ir.text import parse_module
from nnkiln.reference import run

I32_MIN, I32_MAX = -(1 << 31), (1 << 31) - 1


# ----------------------------------------------------------------------------------------------
# helpers


def _graph(op: str, ins: Sequence[str], outs: Sequence[str], attrs: str = "") -> str:
    names = [f"%a{i}" for i in range(len(ins))]
    sig = ", ".join(f"{n}: {t}" for n, t in zip(names, ins))
    res = ", ".join(outs)
    lhs = "%r" if len(outs) == 1 else f"%r:{len(outs)}"
    rets = "%r" if len(outs) == 1 else ", ".join(f"%r#{i}" for i in range(len(outs)))
    attr = f" {{{attrs}}}" if attrs else ""
    ftype_res = res if len(outs) == 1 else f"({res})"
    return (
        f"func.func @main({sig}) -> ({res}) {{\n"
        f"  {lhs} = {op} {', '.join(names)}{attr} : ({', '.join(ins)}) -> {ftype_res}\n"
        f"  func.return {rets} : {res}\n"
        "}\n"
    )


def run_op(op: str, ins: Sequence[tuple[str, object]], out: str | Sequence[str], attrs: str = ""):
    """Run one op; ``ins`` is a list of (tensor type, value). Returns the output (or a list of them)."""
    outs = [out] if isinstance(out, str) else list(out)
    text = _graph(op, [t for t, _ in ins], outs, attrs)
    result = run(parse_module(text), {f"a{i}": np.asarray(v) for i, (_, v) in enumerate(ins)})
    values = [result[f"output{i}"] for i in range(len(outs))]
    return values[0] if isinstance(out, str) else values


def L(a) -> list:  # noqa: N802 - short name for readability of expected values
    return np.asarray(a).tolist()


def rescale_attrs(mult, shift, *, scale32=True, double_round=False, per_channel=False, izp=0, ozp=0) -> str:
    m = ", ".join(str(v) for v in mult)
    s = ", ".join(str(v) for v in shift)
    return (f"multiplier = array<i64: {m}>, shift = array<i64: {s}>, scale32 = {str(scale32).lower()}, "
            f"double_round = {str(double_round).lower()}, per_channel = {str(per_channel).lower()}, "
            f"input_zp = {izp} : i64, output_zp = {ozp} : i64")


def rescale(x, in_t: str, out_t: str, mult, shift, **kw):
    shape = "x".join(str(d) for d in np.asarray(x).shape)
    return run_op("tosa.rescale", [(f"tensor<{shape}x{in_t}>", x)], f"tensor<{shape}x{out_t}>",
                  rescale_attrs(mult, shift, **kw))


# ----------------------------------------------------------------------------------------------
# RESCALE / apply_scale_32 / apply_scale_16 (spec §1.9.2, §2.13.2)


def test_rescale_shift31_round_half_up() -> None:
    # multiplier 2^30, shift 31 => scale 0.5; round = 2^30:
    # (v * 2^30 + 2^30) >> 31 = floor((v + 1) / 2)
    # 1 -> 1, -1 -> 0, 3 -> 2, -3 -> -1, 5 -> 3, -5 -> -2   (ties toward +inf)
    x = np.array([1, -1, 3, -3, 5, -5], np.int32)
    assert L(rescale(x, "i32", "i32", [1 << 30], [31])) == [1, 0, 2, -1, 3, -2]
    # double_round only acts when shift > 31: same results at shift 31
    assert L(rescale(x, "i32", "i32", [1 << 30], [31], double_round=True)) == [1, 0, 2, -1, 3, -2]


def test_rescale_shift32_with_and_without_double_round() -> None:
    # multiplier 2^30, shift 32 => scale 0.25; round = 2^31:
    # (v * 2^30 + 2^31) >> 32 = floor((v + 2) / 4)
    # 2 -> 1, -2 -> 0, 6 -> 2, -6 -> -1, 1 -> 0, -1 -> 0, 3 -> 1
    x = np.array([2, -2, 6, -6, 1, -1, 3], np.int32)
    assert L(rescale(x, "i32", "i32", [1 << 30], [32])) == [1, 0, 2, -1, 0, 0, 1]
    # double_round: round += 2^30 if v >= 0 else -2^30  => floor((v + 2 +- 1) / 4)
    # 2 -> floor(5/4)=1, -2 -> floor(-1/4)=-1, 6 -> floor(9/4)=2, -6 -> floor(-5/4)=-2,
    # 1 -> floor(4/4)=1, -1 -> floor(0/4)=0, 3 -> floor(6/4)=1
    assert L(rescale(x, "i32", "i32", [1 << 30], [32], double_round=True)) == [1, -1, 2, -2, 1, 0, 1]


def test_rescale_shift62_extremes() -> None:
    m = (1 << 31) - 1
    # shift 62, round 2^61, bound 2^60 (every int32 passes)
    # v = 2^31-1: (2^31-1)^2 + 2^61 = 2^62 + 2^61 - 2^32 + 1 -> >> 62 = 1
    # v = -2^31:  -2^62 + 2^31 + 2^61 = -2^61 + 2^31        -> floor = -1
    # v = 2^30:   2^61 - 2^30 + 2^61 = 2^62 - 2^30          -> 0
    x = np.array([I32_MAX, I32_MIN, 1 << 30], np.int32)
    assert L(rescale(x, "i32", "i32", [m], [62])) == [1, -1, 0]
    # double_round: 2^30 gets +2^30 -> 2^62 -> 1; -2^31 gets -2^30: -2^61 + 2^31 - 2^30 -> -1
    assert L(rescale(x, "i32", "i32", [m], [62], double_round=True)) == [1, -1, 1]


def test_rescale_value_bound_require() -> None:
    # shift 10 => REQUIRE(-(1 << 8) <= value < (1 << 8)); multiplier 2^10 = unity
    # 255 -> (255 * 1024 + 512) >> 10 = 255; -256 -> -256
    x = np.array([255, -256], np.int16)
    assert L(rescale(x, "i16", "i16", [1 << 10], [10])) == [255, -256]
    for bad in (256, -257):
        with pytest.raises(TosaUnpredictable):
            rescale(np.array([bad], np.int16), "i16", "i16", [1 << 10], [10])
    # input_zp moves value out of range: int8 in = 127, zp = -128 -> value 255 ok at shift 10;
    # at shift 9 the bound is 2^7 = 128 -> 255 is outside
    assert L(rescale(np.array([127], np.int8), "i8", "i32", [1 << 10], [10], izp=-128)) == [255]
    with pytest.raises(TosaUnpredictable):
        rescale(np.array([127], np.int8), "i8", "i32", [1 << 9], [9], izp=-128)


@pytest.mark.parametrize("mult,shift", [([1 << 30], [1]), ([-5], [30]), ([1 << 30], [63])])
def test_rescale_scale32_parameter_requires(mult, shift) -> None:
    # REQUIRE(multiplier >= 0), REQUIRE(2 <= shift <= 62): unpredictable (an error is also allowed)
    with pytest.raises((TosaUnpredictable, VerifyError)):
        rescale(np.array([1], np.int32), "i32", "i32", mult, shift)


def test_rescale_scale16_int48() -> None:
    # multiplier 2^14, shift 15 = 0.5: (v * 2^14 + 2^14) >> 15 = floor((v + 1) / 2)
    x = np.array([1, -1, 3, -3], np.int64)
    assert L(rescale(x, "i48", "i32", [1 << 14], [15], scale32=False)) == [1, 0, 2, -1]
    # v = 2^40, m = 2^14, s = 30: (2^54 + 2^29) >> 30 = 2^24
    # v = -2^47, m = 1, s = 16: (-2^47 + 2^15) >> 16 = floor(-2^31 + 1/2) = -2^31 (fits int32)
    big = np.array([1 << 40], np.int64)
    assert L(rescale(big, "i48", "i32", [1 << 14], [30], scale32=False)) == [1 << 24]
    assert L(rescale(np.array([-(1 << 47)]), "i48", "i32", [1], [16], scale32=False)) == [I32_MIN]
    # saturation to int16: 2^24 + 0 -> clip to 32767
    assert L(rescale(big, "i48", "i16", [1 << 14], [30], scale32=False)) == [32767]
    # v = 2^47 - 1, m = 1, s = 16: (2^47 - 1 + 2^15) >> 16 = 2^31 -> REQUIRE(result fits int32) fails
    with pytest.raises(TosaUnpredictable):
        rescale(np.array([(1 << 47) - 1]), "i48", "i32", [1], [16], scale32=False)


def test_rescale_type_rule_errors() -> None:
    # ERROR_IF(scale32 && in_t == int48_t); ERROR_IF(!scale32 && double_round)
    with pytest.raises(VerifyError):
        rescale(np.array([1]), "i48", "i32", [1 << 30], [30], scale32=True)
    with pytest.raises(VerifyError):
        rescale(np.array([1], np.int16), "i16", "i32", [1 << 14], [14], scale32=False, double_round=True)
    # zero point on int32 input / output
    with pytest.raises(VerifyError):
        rescale(np.array([1], np.int32), "i32", "i32", [1 << 30], [30], izp=1)
    with pytest.raises(VerifyError):
        rescale(np.array([1], np.int32), "i32", "i32", [1 << 30], [30], ozp=1)


def test_rescale_per_channel_with_zero_points() -> None:
    # int8 [2,3], input_zp = -3, output_zp = 5; channel scales: 1 (2^30,30), 0.5 (2^29,30), 0.75 (3*2^29,31)
    # value = in + 3: [[0, 4, 10], [13, -125, 130]]
    # ch0: (v*2^30 + 2^29) >> 30 = v:                 0, 13
    # ch1: (v*2^29 + 2^29) >> 30 = floor((v+1)/2):     4 -> 2, -125 -> -62
    # ch2: (3v*2^29 + 2^30) >> 31 = floor((3v+2)/4):   10 -> 8, 130 -> 98
    # + 5: [[5, 7, 13], [18, -57, 103]]
    x = np.array([[-3, 1, 7], [10, -128, 127]], np.int8)
    out = rescale(x, "i8", "i8", [1 << 30, 1 << 29, 3 << 29], [30, 30, 31], per_channel=True, izp=-3, ozp=5)
    assert out.dtype == np.int8
    assert L(out) == [[5, 7, 13], [18, -57, 103]]
    # per_channel = false uses multiplier[0]/shift[0] for every element: unity + zps
    # in + 3 + 5: [[5, 9, 15], [18, -120, 135 -> clip 127]]
    out = rescale(x, "i8", "i8", [1 << 30], [30], izp=-3, ozp=5)
    assert L(out) == [[5, 9, 15], [18, -120, 127]]


def test_rescale_uint8_in_and_out() -> None:
    # uint8 -> int8, input_zp = 128, unity: [0, 128, 255, 200] -> [-128, 0, 127, 72]
    out = rescale(np.array([0, 128, 255, 200], np.uint8), "ui8", "i8", [1 << 30], [30], izp=128)
    assert out.dtype == np.int8 and L(out) == [-128, 0, 127, 72]
    # int8 -> uint8, output_zp = 128, unity: [-128, 0, 127] -> [0, 128, 255]
    out = rescale(np.array([-128, 0, 127], np.int8), "i8", "ui8", [1 << 30], [30], ozp=128)
    assert out.dtype == np.uint8 and L(out) == [0, 128, 255]
    # scale 2 (2^30, 29): -128 -> -256 + 128 = -128 -> clip 0; 100 -> 328 -> 255; -10 -> 108
    out = rescale(np.array([-128, 100, -10], np.int8), "i8", "ui8", [1 << 30], [29], ozp=128)
    assert L(out) == [0, 255, 108]


def test_rescale_uint16() -> None:
    # The spec's ERROR_IF(out_t == uint16_t && (output_zp != 0 || output_zp != 32768)) is always
    # true as written; the evident intent is "zero point 0 or 32768".
    # int16 -> uint16, output_zp = 32768, unity (2^14, 14) scale16: v + 32768
    out = rescale(np.array([-32768, 0, 32767], np.int16), "i16", "ui16", [1 << 14], [14], scale32=False, ozp=32768)
    assert out.dtype == np.uint16 and L(out) == [0, 32768, 65535]
    # uint16 -> int16, input_zp = 32768
    out = rescale(np.array([0, 65535, 32768], np.uint16), "ui16", "i16", [1 << 14], [14], scale32=False, izp=32768)
    assert L(out) == [-32768, 32767, 0]
    # zero point 0 is also allowed: 65535 -> clip to 32767
    out = rescale(np.array([65535, 5], np.uint16), "ui16", "i16", [1 << 14], [14], scale32=False)
    assert L(out) == [32767, 5]
    with pytest.raises(VerifyError):
        rescale(np.array([1], np.int16), "i16", "ui16", [1 << 14], [14], scale32=False, ozp=5)


# ----------------------------------------------------------------------------------------------
# MUL (spec §2.5.14)


def _mul(a, b, t_in: str, t_out: str, shift: int = 0):
    n = len(a)
    return run_op("tosa.mul", [(f"tensor<{n}x{t_in}>", a), (f"tensor<{n}x{t_in}>", b)], f"tensor<{n}x{t_out}>",
                  f"shift = {shift} : i64")


def test_mul_int32_shift_rounding() -> None:
    # shift 1: (p + 1) >> 1 = floor((p + 1) / 2); p = 3, -3, 5, -5, 1, -1 -> 2, -1, 3, -2, 1, 0
    a = np.array([3, -3, 5, -5, 1, -1], np.int32)
    assert L(_mul(a, np.ones(6, np.int32), "i32", "i32", 1)) == [2, -1, 3, -2, 1, 0]
    # shift 31: (3 * 2^30 + 2^30) >> 31 = 2; (-3 * 2^30 + 2^30) >> 31 = -1
    # (2^31-1)*(2^31-1) = 2^62 - 2^32 + 1; + 2^30 -> >> 31 = 2^31 - 2 (+ floor((1 + 2^30)/2^31)=0)
    a = np.array([3, -3, I32_MAX], np.int32)
    b = np.array([1 << 30, 1 << 30, I32_MAX], np.int32)
    assert L(_mul(a, b, "i32", "i32", 31)) == [2, -1, (1 << 31) - 2]
    # REQUIRE(product fits int32) with shift > 0: 65536 * 65536 = 2^32, >> 1 = 2^31 -> unpredictable
    with pytest.raises(TosaUnpredictable):
        _mul(np.array([65536], np.int32), np.array([65536], np.int32), "i32", "i32", 1)


def test_mul_int32_no_shift_keeps_low_bits() -> None:
    # "low 32-bits of result for int32_t": 65536^2 = 2^32 -> 0; 65537^2 = 2^32 + 2^17 + 1 -> 131073
    a = np.array([65536, 65537, -65537], np.int32)
    assert L(_mul(a, np.array([65536, 65537, 65537], np.int32), "i32", "i32")) == [0, 131073, -131073]


def test_mul_narrow_to_int32() -> None:
    # int8: 127*127 = 16129, -128*-128 = 16384, -128*127 = -16256
    out = _mul(np.array([127, -128, -128], np.int8), np.array([127, -128, 127], np.int8), "i8", "i32")
    assert out.dtype == np.int32 and L(out) == [16129, 16384, -16256]
    # int16: -32768^2 = 2^30, 32767 * -32768 = -1073709056
    out = _mul(np.array([-32768, 32767], np.int16), np.array([-32768, -32768], np.int16), "i16", "i32")
    assert L(out) == [1 << 30, -1073709056]
    # ERROR_IF(in_t != int32_t && shift > 0)
    with pytest.raises(VerifyError):
        _mul(np.array([1], np.int8), np.array([1], np.int8), "i8", "i32", 1)


# ----------------------------------------------------------------------------------------------
# TABLE (spec §2.5.17, apply_lookup §1.9.5)


def test_table_int8() -> None:
    # result = table[value + 128]; table[j] = 127 - j (j = 0..255 -> 127..-128)
    table = (127 - np.arange(256)).astype(np.int8)
    x = np.array([-128, -1, 0, 127, 5], np.int8)
    out = run_op("tosa.table", [("tensor<5xi8>", x), ("tensor<256xi8>", table)], "tensor<5xi8>")
    # -128 -> table[0] = 127; -1 -> table[127] = 0; 0 -> table[128] = -1; 127 -> table[255] = -128;
    # 5 -> table[133] = -6
    assert L(out) == [127, 0, -1, -128, -6]


def test_table_int16_interpolation() -> None:
    # table[i] = (37 i mod 200) - 100, 513 entries
    table = ((np.arange(513) * 37) % 200 - 100).astype(np.int16)
    # t[0] = -100, t[254] = 98, t[255] = -65, t[256] = -28, t[257] = 9, t[511] = 7, t[512] = 44
    # index = (v + 32768) >> 7, fraction = v & 0x7f, result = t[i] * 128 + (t[i+1] - t[i]) * fraction
    # v = 0:      i=256 f=0:   -28*128                       = -3584
    # v = 64:     i=256 f=64:  -3584 + 37*64                 = -1216
    # v = 127:    i=256 f=127: -3584 + 37*127                = 1115
    # v = -32768: i=0   f=0:   -100*128                      = -12800
    # v = 32767:  i=511 f=127: 7*128 + 37*127                = 5595
    # v = -1:     i=255 f=127: -65*128 + 37*127              = -3621
    # v = -129:   i=254 f=127: 98*128 + (-163)*127           = -8157
    x = np.array([0, 64, 127, -32768, 32767, -1, -129], np.int16)
    out = run_op("tosa.table", [("tensor<7xi16>", x), ("tensor<513xi16>", table)], "tensor<7xi32>")
    assert out.dtype == np.int32
    assert L(out) == [-3584, -1216, 1115, -12800, 5595, -3621, -8157]


# ----------------------------------------------------------------------------------------------
# AVG_POOL2D (spec §2.3.2, reciprocal_scale §1.9.2)


def _avg_pool(x, t: str, kernel, stride, pad, out_shape, izp=0, ozp=0):
    shape = "x".join(map(str, x.shape))
    oshape = "x".join(map(str, out_shape))
    attrs = (f"kernel = array<i64: {kernel[0]}, {kernel[1]}>, stride = array<i64: {stride[0]}, {stride[1]}>, "
             f"pad = array<i64: {', '.join(map(str, pad))}>, input_zp = {izp} : i64, output_zp = {ozp} : i64")
    return run_op("tosa.avg_pool2d", [(f"tensor<{shape}x{t}>", x)], f"tensor<{oshape}x{t}>", attrs)


def test_avg_pool_int8_zero_points_at_borders() -> None:
    # 3x3 input, kernel 3x3, stride 1, pad 1 on every side -> 3x3 output; input_zp = 1, output_zp = -1
    # value = in - 1: [[2, 4, 0], [-1, 6, -5], [1, 1, 8]]; padding is skipped (count = valid taps)
    # reciprocal_scale: 4 -> (2^30+1, 32); 6 -> (1431655766, 33); 9 -> (1908874355, 34)
    # (0,0) 2+4-1+6 = 11 /4: (11*(2^30+1) + 2^31) >> 32 = floor(13/4 + eps) = 3   -> 2
    # (0,1) 2+4+0-1+6-5 = 6 /6: (6*1431655766 + 2^32) >> 33 = floor(1.4999) = 1   -> 0
    # (0,2) 4+0+6-5 = 5 /4: floor(7/4 + eps) = 1                                    -> 0
    # (1,0) 2+4-1+6+1+1 = 13 /6: (13*1431655766 + 2^32) >> 33 = floor(2.667) = 2    -> 1
    # (1,1) 16 /9: (16*1908874355 + 2^33) >> 34 = floor(2.278) = 2                  -> 1
    # (1,2) 4+0+6-5+1+8 = 14 /6: (14*1431655766 + 2^32) >> 33 = floor(2.833) = 2    -> 1
    # (2,0) -1+6+1+1 = 7 /4: floor(9/4 + eps) = 2                                   -> 1
    # (2,1) -1+6-5+1+1+8 = 10 /6: (10*1431655766 + 2^32) >> 33 = floor(2.1667) = 2  -> 1
    # (2,2) 6-5+1+8 = 10 /4: floor(12/4 + eps) = 3                                  -> 2
    x = np.array([[3, 5, 1], [0, 7, -4], [2, 2, 9]], np.int8).reshape(1, 3, 3, 1)
    out = _avg_pool(x, "i8", (3, 3), (1, 1), (1, 1, 1, 1), (1, 3, 3, 1), izp=1, ozp=-1)
    assert L(out.reshape(3, 3)) == [[2, 0, 0], [1, 1, 1], [1, 1, 2]]


def test_avg_pool_int8_ties_over_two() -> None:
    # count 2: reciprocal_scale(2) = ((2^30+1) << 1) / 2 = 2^30 + 1, shift 31
    # (acc*(2^30+1) + 2^30) >> 31 = floor(acc/2 + 1/2 + acc/2^31): ties go away from zero
    # pairs: (1,0) acc 1 -> 1; (-1,0) acc -1 -> floor(-2^-31) = -1; (2,1) acc 3 -> 2; (-2,-1) acc -3 -> -2
    x = np.array([1, 0, -1, 0, 2, 1, -2, -1], np.int8).reshape(1, 1, 8, 1)
    out = _avg_pool(x, "i8", (1, 2), (1, 2), (0, 0, 0, 0), (1, 1, 4, 1))
    assert L(out.reshape(-1)) == [1, -1, 2, -2]


def test_avg_pool_int8_over_three() -> None:
    # count 3: k = 32 - clz(2) = 2, multiplier = (2^32 + 4) / 3 = 1431655766, shift 32
    # (acc*1431655766 + 2^31) >> 32:
    #   1 -> 0 (0.83), 2 -> 1 (1.17), -2 -> -1 (-0.17), -1 -> 0 (0.17), 5 -> 2 (2.17), -5 -> -2 (-1.17)
    ch0 = [1, 0, 0, 1, 1, 0, -1, -1, 0]      # acc 1, 2, -2
    ch1 = [-1, 0, 0, 2, 2, 1, -2, -2, -1]    # acc -1, 5, -5
    x = np.array([ch0, ch1], np.int8).T.reshape(1, 1, 9, 2)
    out = _avg_pool(x, "i8", (1, 3), (1, 3), (0, 0, 0, 0), (1, 1, 3, 2))
    assert L(out.reshape(3, 2).T) == [[0, 1, -1], [0, 2, -2]]


def test_avg_pool_int16_saturating_zero_points_forbidden() -> None:
    with pytest.raises(VerifyError):
        _avg_pool(np.zeros((1, 2, 2, 1), np.int16), "i16", (2, 2), (1, 1), (0, 0, 0, 0), (1, 1, 1, 1), izp=1)


def test_avg_pool_float_with_padding() -> None:
    # [[1,2],[3,4]], kernel 2x2, stride 1, pad 1 -> 3x3; divisor = valid elements only
    # row 0: 1/1, (1+2)/2, 2/1; row 1: (1+3)/2, 10/4, (2+4)/2; row 2: 3, (3+4)/2, 4
    x = np.array([[1, 2], [3, 4]], np.float32).reshape(1, 2, 2, 1)
    out = _avg_pool(x, "f32", (2, 2), (1, 1), (1, 1, 1, 1), (1, 3, 3, 1))
    assert L(out.reshape(3, 3)) == [[1.0, 1.5, 2.0], [2.0, 2.5, 3.0], [3.0, 3.5, 4.0]]


# ----------------------------------------------------------------------------------------------
# Elementwise integer ops


def _bin(op: str, a, b, t: str, attrs: str = "", t_out: str | None = None):
    n = len(a)
    return run_op(op, [(f"tensor<{n}x{t}>", a), (f"tensor<{n}x{t}>", b)], f"tensor<{n}x{t_out or t}>", attrs)


def test_intdiv_truncates_toward_zero() -> None:
    a = np.array([-7, 7, -7, 7, -1, I32_MIN, I32_MAX], np.int32)
    b = np.array([2, 2, -2, -2, 3, 2, -1], np.int32)
    assert L(_bin("tosa.intdiv", a, b, "i32")) == [-3, 3, 3, -3, 0, -(1 << 30), -I32_MAX]
    with pytest.raises(TosaUnpredictable):  # REQUIRE(value2 != 0)
        _bin("tosa.intdiv", np.array([1], np.int32), np.array([0], np.int32), "i32")
    with pytest.raises(TosaUnpredictable):  # min / -1 = 2^31 > maximum
        _bin("tosa.intdiv", np.array([I32_MIN], np.int32), np.array([-1], np.int32), "i32")


def test_arithmetic_right_shift_round_on_negatives() -> None:
    a = np.array([-5, -6, -7, -8, 5, 7, -128, 127, -1], np.int8)
    b = np.array([1, 2, 2, 2, 1, 1, 7, 7, 3], np.int8)
    # no round: floor shifts
    assert L(_bin("tosa.arithmetic_right_shift", a, b, "i8", "round = false")) == [-3, -2, -2, -2, 2, 3, -1, 0, -1]
    # round: + ((v1 >> (v2-1)) & 1)
    # -5: -3 + (-5 & 1 = 1) = -2;  -6: -2 + (-3 & 1 = 1) = -1;  -7: -2 + (-4 & 1 = 0) = -2
    # -8: -2 + 0 = -2;  5: 2 + 1 = 3;  7: 3 + 1 = 4;  -128: -1 + (-2 & 1 = 0) = -1
    # 127: 0 + (1 & 1) = 1;  -1: -1 + (-1 & 1 = 1) = 0
    assert L(_bin("tosa.arithmetic_right_shift", a, b, "i8", "round = true")) == [-2, -1, -2, -2, 3, 4, -1, 1, 0]
    # int32 shift 31: -2^31 -> -1, round: (-2^31 >> 30) = -2, &1 = 0 -> -1; 2^31-1 -> 0 + 1 = 1
    a32 = np.array([I32_MIN, I32_MAX], np.int32)
    b32 = np.array([31, 31], np.int32)
    assert L(_bin("tosa.arithmetic_right_shift", a32, b32, "i32", "round = true")) == [-1, 1]
    # REQUIRE(0 <= value2 <= 7) for int8
    with pytest.raises(TosaUnpredictable):
        _bin("tosa.arithmetic_right_shift", np.array([1], np.int8), np.array([8], np.int8), "i8", "round = false")


def test_logical_right_shift_negative_narrow() -> None:
    # int8: (uint8)v >> s: -128 = 0x80 >> 1 = 64; -1 = 0xFF >> 4 = 15; >> 7 = 1; 64 >> 1 = 32;
    # -2 >> 0 = 0xFE = -2; -1 >> 9 = 0 (REQUIRE allows 0..31 for every type)
    a = np.array([-128, -1, -1, 64, -2, -1], np.int8)
    b = np.array([1, 4, 7, 1, 0, 9], np.int8)
    assert L(_bin("tosa.logical_right_shift", a, b, "i8")) == [64, 15, 1, 32, -2, 0]
    # int16: -32768 >> 1 = 16384; -1 >> 15 = 1; -1 >> 8 = 255
    a = np.array([-32768, -1, -1], np.int16)
    assert L(_bin("tosa.logical_right_shift", a, np.array([1, 15, 8], np.int16), "i16")) == [16384, 1, 255]
    # int32: -1 >> 31 = 1; -2^31 >> 4 = 2^27
    a = np.array([-1, I32_MIN], np.int32)
    assert L(_bin("tosa.logical_right_shift", a, np.array([31, 4], np.int32), "i32")) == [1, 1 << 27]


def test_clz() -> None:
    x = np.array([0, 1, -1, I32_MAX, 65536, 255, I32_MIN], np.int32)
    out = run_op("tosa.clz", [("tensor<7xi32>", x)], "tensor<7xi32>")
    assert L(out) == [32, 31, 0, 1, 15, 24, 0]


# ----------------------------------------------------------------------------------------------
# CAST (spec §2.13.1)


def _cast(x, t_in: str, t_out: str):
    n = len(x)
    return run_op("tosa.cast", [(f"tensor<{n}x{t_in}>", x)], f"tensor<{n}x{t_out}>")


def test_cast_float_to_int_ties_saturation_nan() -> None:
    # round_to_nearest_int: ties are not specified; documented decision = half to even
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, -1.5, 0.49999997], np.float32)
    assert L(_cast(x, "f32", "i32")) == [0, 2, 2, 0, -2, -2, 0]
    # saturation: apply_clip to [-128, 127]; NaN -> 0 (documented decision)
    x = np.array([127.4, 127.5, 300.0, -128.6, -1e10, np.inf, -np.inf, np.nan], np.float32)
    assert L(_cast(x, "f32", "i8")) == [127, 127, 127, -128, -128, 127, -128, 0]
    assert L(_cast(np.array([65504, -65504], np.float16), "f16", "i16")) == [32767, -32768]
    assert L(_cast(np.array([3e9, -3e9], np.float32), "f32", "i32")) == [I32_MAX, I32_MIN]


def test_cast_bool_conversions() -> None:
    # out = in != 0 (256 is true: no truncation first)
    assert L(_cast(np.array([0, 5, -1, 256], np.int32), "i32", "i1")) == [False, True, True, True]
    assert L(_cast(np.array([0, -128], np.int8), "i8", "i1")) == [False, True]
    out = _cast(np.array([True, False]), "i1", "i32")
    assert out.dtype == np.int32 and L(out) == [1, 0]


def test_cast_int_truncate_and_sign_extend() -> None:
    # int32 -> int8 keeps the low 8 bits: 300 = 0x12C -> 0x2C = 44; -129 = 0x..FF7F -> 127;
    # 128 -> -128; 255 -> -1; 65543 = 0x10007 -> 7
    assert L(_cast(np.array([300, -129, 128, 255, 65543], np.int32), "i32", "i8")) == [44, 127, -128, -1, 7]
    # int32 -> int16: 70000 -> 4464; -32769 -> 32767
    assert L(_cast(np.array([70000, -32769], np.int32), "i32", "i16")) == [4464, 32767]
    # int16 -> int8: 200 -> -56; int8 -> int32 sign extends
    assert L(_cast(np.array([200], np.int16), "i16", "i8")) == [-56]
    assert L(_cast(np.array([-1, -128], np.int8), "i8", "i32")) == [-1, -128]


# ----------------------------------------------------------------------------------------------
# RESIZE (spec §2.12.1)


def _resize(x, t_in: str, t_out: str, out_hw, stride, offset, border, shift, mode: str, float_attrs=False):
    n, _, _, c = x.shape
    kind = "f32" if float_attrs else "i64"

    def arr(v):
        return f"array<{kind}: {v[0]}, {v[1]}>"

    attrs = (f"output_size = array<i64: {out_hw[0]}, {out_hw[1]}>, stride = {arr(stride)}, offset = {arr(offset)}, "
             f"border = array<i64: {border[0]}, {border[1]}>, shift = {shift} : i64, mode = #tosa<resize_mode {mode}>")
    shape = "x".join(map(str, x.shape))
    return run_op("tosa.resize", [(f"tensor<{shape}x{t_in}>", x)],
                  f"tensor<{n}x{out_hw[0]}x{out_hw[1]}x{c}x{t_out}>", attrs)


def test_resize_bilinear_power_of_two_upscale_same_corners() -> None:
    # Spec example: [OH-1, OW-1] = 2^k [IH-1, IW-1]: shift = k = 2, stride 1, offset 0, border 0.
    # IH = IW = 2 -> OH = idiv(1*4 - 0, 1) + 1 = 5. y = oy, iy = oy >> 2, dy = oy & 3; unit = 4.
    # 1D weights of [p, q]: [4p, 3p+q, 2p+2q, p+3q, 4q] (oy=4: iy0 = 1, iy1 = min(2, 1) = 1).
    # input [[10, 20], [30, 40]]: along x, row0 -> [40, 50, 60, 70, 80], row1 -> [120, 130, 140, 150, 160]
    # along y: 4*r0, 3*r0 + r1, 2*r0 + 2*r1, r0 + 3*r1, 4*r1
    x = np.array([[10, 20], [30, 40]], np.int8).reshape(1, 2, 2, 1)
    out = _resize(x, "i8", "i32", (5, 5), (1, 1), (0, 0), (0, 0), 2, "BILINEAR").reshape(5, 5)
    r0 = np.array([40, 50, 60, 70, 80])
    r1 = np.array([120, 130, 140, 150, 160])
    assert L(out) == L([4 * r0, 3 * r0 + r1, 2 * r0 + 2 * r1, r0 + 3 * r1, 4 * r1])
    assert L(out[0]) == [160, 200, 240, 280, 320]  # = 16 * [10, 12.5, 15, 17.5, 20]


def test_resize_bilinear_power_of_two_upscale_half_pixel() -> None:
    # Spec example: [OH, OW] = 2^k [IH, IW], k = 1: shift = 2, stride 2, offset -(1<<k)+1 = -1,
    # border 1<<(k-1) = 1. OH = idiv(1*4 + 1, 2) + 1 + 1 = 4.
    # y = 2*oy - 1: oy=0: y=-1, iy=-1, dy=3, iy0=iy1=0; oy=1: y=1, iy=0, dy=1;
    #              oy=2: y=3, iy=0, dy=3;              oy=3: y=5, iy=1, dy=1, iy0=iy1=1
    # 1D weights of [p, q]: [4p, 3p+q, p+3q, 4q]
    # along x: row0 [10,20] -> [40, 50, 70, 80]; row1 [30,40] -> [120, 130, 150, 160]
    # along y: 4*r0 = [160,200,280,320]; 3*r0+r1 = [240,280,360,400]; r0+3*r1 = [400,440,520,560];
    #          4*r1 = [480,520,600,640]
    x = np.array([[10, 20], [30, 40]], np.int8).reshape(1, 2, 2, 1)
    out = _resize(x, "i8", "i32", (4, 4), (2, 2), (-1, -1), (1, 1), 2, "BILINEAR").reshape(4, 4)
    assert L(out) == [[160, 200, 280, 320], [240, 280, 360, 400], [400, 440, 520, 560], [480, 520, 600, 640]]


def test_resize_bilinear_align_corners_stride() -> None:
    # Spec example: stride = ((I-1) << shift) / (O-1). IH=2 -> OH=3, IW=3 -> OW=5, shift 2:
    # stride_y = 4/2 = 2, stride_x = 8/4 = 2. OH = idiv(4, 2) + 1 = 3, OW = idiv(8, 2) + 1 = 5.
    # x = 2*ox: ix = x >> 2, dx = x & 3 -> (0,0), (0,2), (1,0), (1,2), (2,0)
    # row weights for [a, b, c]: [4a, 2a+2b, 4b, 2b+2c, 4c]
    # y = 2*oy: (0,0), (0,2), (1,0) with iy1 clamped -> rows [4*r0, 2*r0 + 2*r1, 4*r1]
    x = np.array([[0, 8, 16], [-40, 0, 40]], np.int8).reshape(1, 2, 3, 1)
    out = _resize(x, "i8", "i32", (3, 5), (2, 2), (0, 0), (0, 0), 2, "BILINEAR").reshape(3, 5)
    r0 = np.array([0, 16, 32, 48, 64])      # 4*[0, 4, 8, 12, 16]
    r1 = np.array([-160, -80, 0, 80, 160])  # 4*[-40, -20, 0, 20, 40]
    assert L(out) == L([4 * r0, 2 * r0 + 2 * r1, 4 * r1])


def test_resize_nearest_integer_ties_round_up() -> None:
    # IH=1, IW=3, shift 1, stride 1 (half steps), offset 0: OW = idiv(2*2, 1) + 1 = 5, OH = 1
    # x = ox: ix = ox >> 1, dx = ox & 1; unit/2 = 1 -> dx >= 1 picks ix1
    # ox: 0 -> 0; 1 -> ix1 = 1; 2 -> 1; 3 -> ix1 = 2; 4 -> ix = 2 (ix1 = min(3, 2) = 2)
    x = np.array([5, -7, 9], np.int8).reshape(1, 1, 3, 1)
    out = _resize(x, "i8", "i8", (1, 5), (1, 1), (0, 0), (0, 0), 1, "NEAREST")
    assert out.dtype == np.int8 and L(out.reshape(-1)) == [5, -7, -7, 9, 9]
    # negative offset: offset_x = -1, stride 2, shift 1 -> OW = idiv(4 + 1, 2) + 1 = 3
    # x = 2*ox - 1: ox=0: x=-1, ix=-1, dx=1 -> ix1 = min(0, 2) = 0; ox=1: x=1, ix=0, dx=1 -> 1;
    # ox=2: x=3, ix=1, dx=1 -> 2
    out = _resize(x, "i8", "i8", (1, 3), (1, 2), (0, -1), (0, 0), 1, "NEAREST")
    assert L(out.reshape(-1)) == [5, -7, 9]


def test_resize_int16_bilinear_int48() -> None:
    # shift 11 (unit 2048), IH=1: stride_y 2048, offset 0 -> OH = 1, y = 0, dy = 0, iy0 = iy1 = 0.
    # IW=2: stride_x 2048, offset_x 1024, border_x 1: OW = idiv(2048 - 1024, 2048) + 1 + 1 = 2
    # ox=0: x = 1024, ix=0, dx=1024: acc = p*2048*1024 + q*2048*1024 = 2^21 (p + q)
    # ox=1: x = 3072, ix=1, dx=1024, ix0 = ix1 = 1: acc = 2^22 q
    # p = -32768, q = 32767: [-2^21, 2^22 * 32767 = 137434759168] (beyond int32)
    x = np.array([-32768, 32767], np.int16).reshape(1, 1, 2, 1)
    out = _resize(x, "i16", "i48", (1, 2), (2048, 2048), (0, 1024), (0, 1), 11, "BILINEAR")
    assert L(out.reshape(-1)) == [-(1 << 21), 32767 << 22]


def test_resize_float_bilinear_and_nearest() -> None:
    # IH=1 (stride_y 1.0), IW=2, stride_x 0.25, offset 0 -> OW = idiv(1, 0.25) + 1 = 5
    # x = 0, .25, .5, .75, 1: bilinear of [0, 10] -> [0, 2.5, 5, 7.5, 10]
    # nearest: dx >= 0.5 picks ix1 -> [0, 0, 10, 10, 10]
    x = np.array([0.0, 10.0], np.float32).reshape(1, 1, 2, 1)
    out = _resize(x, "f32", "f32", (1, 5), (1.0, 0.25), (0.0, 0.0), (0, 0), 0, "BILINEAR", float_attrs=True)
    assert L(out.reshape(-1)) == [0.0, 2.5, 5.0, 7.5, 10.0]
    out = _resize(x, "f32", "f32", (1, 5), (1.0, 0.25), (0.0, 0.0), (0, 0), 0, "NEAREST", float_attrs=True)
    assert L(out.reshape(-1)) == [0.0, 0.0, 10.0, 10.0, 10.0]


# ----------------------------------------------------------------------------------------------
# CONV2D / DEPTHWISE_CONV2D / TRANSPOSE_CONV2D / MATMUL


def _conv_attrs(pad, stride, dil, izp, wzp) -> str:
    return (f"pad = array<i64: {', '.join(map(str, pad))}>, stride = array<i64: {stride[0]}, {stride[1]}>, "
            f"dilation = array<i64: {dil[0]}, {dil[1]}>, input_zp = {izp} : i64, weight_zp = {wzp} : i64")


def test_conv2d_int8_zero_points_at_borders() -> None:
    # input [[1,2],[3,4]] - input_zp 2 = [[-1,0],[1,2]]; weight 1..9 - weight_zp 1 = [[0,1,2],[3,4,5],[6,7,8]]
    # pad 1 all round, stride 1: OH = (2 - 1 + 2 - 2) / 1 + 1 = 2. Taps outside the input are skipped
    # (equivalent to padding with input_zp, not with 0).
    # out[oy][ox] = sum in[oy-1+ky][ox-1+kx] * w[ky][kx]
    # (0,0): -1*4 + 0*5 + 1*7 + 2*8 = 19;  (0,1): -1*3 + 0*4 + 1*6 + 2*7 = 17
    # (1,0): -1*1 + 0*2 + 1*4 + 2*5 = 13;  (1,1): -1*0 + 0*1 + 1*3 + 2*4 = 11;  + bias 100
    x = np.array([[1, 2], [3, 4]], np.int8).reshape(1, 2, 2, 1)
    w = np.arange(1, 10, dtype=np.int8).reshape(1, 3, 3, 1)
    out = run_op("tosa.conv2d", [("tensor<1x2x2x1xi8>", x), ("tensor<1x3x3x1xi8>", w), ("tensor<1xi32>", np.array([100]))],
                 "tensor<1x2x2x1xi32>", _conv_attrs((1, 1, 1, 1), (1, 1), (1, 1), 2, 1))
    assert L(out.reshape(2, 2)) == [[119, 117], [113, 111]]


def test_conv2d_int16x8_int48_bias() -> None:
    # 32767*127 + (-32768)*(-128) = 4161409 + 4194304 = 8355713; + bias 2^40 = 1099519983489
    x = np.array([32767, -32768], np.int16).reshape(1, 1, 1, 2)
    w = np.array([127, -128], np.int8).reshape(1, 1, 1, 2)
    b = np.array([1 << 40], np.int64)
    out = run_op("tosa.conv2d", [("tensor<1x1x1x2xi16>", x), ("tensor<1x1x1x2xi8>", w), ("tensor<1xi48>", b)],
                 "tensor<1x1x1x1xi48>", _conv_attrs((0, 0, 0, 0), (1, 1), (1, 1), 0, 0))
    assert L(out.reshape(-1)) == [(1 << 40) + 8355713]


def test_depthwise_multiplier_channel_order() -> None:
    # input channels [2, 3]; weight HWIM [1,1,2,3]: w[c][m] = 10c + m + 1 -> c0: [1,2,3], c1: [11,12,13]
    # output channel c*M + m: [2*1, 2*2, 2*3, 3*11, 3*12, 3*13] = [2, 4, 6, 33, 36, 39]
    # bias[(c*M)+m] = [0, 100, 200, 300, 400, 500]
    x = np.array([2, 3], np.int8).reshape(1, 1, 1, 2)
    w = np.array([[1, 2, 3], [11, 12, 13]], np.int8).reshape(1, 1, 2, 3)
    b = np.arange(6, dtype=np.int32) * 100
    out = run_op("tosa.depthwise_conv2d",
                 [("tensor<1x1x1x2xi8>", x), ("tensor<1x1x2x3xi8>", w), ("tensor<6xi32>", b)],
                 "tensor<1x1x1x6xi32>", _conv_attrs((0, 0, 0, 0), (1, 1), (1, 1), 0, 0))
    assert L(out.reshape(-1)) == [2, 104, 206, 333, 436, 539]


def test_transpose_conv2d_stride2_out_pad_crop() -> None:
    # input [[1,2],[3,4]], weight 3x3 [[1,2,3],[4,5,6],[7,8,9]], stride 2, out_pad [1,0,1,0]
    # OH = (2-1)*2 - 1 - 0 + 3 = 4. oy = 2*iy - 1 + ky (crop of the full 5x5 result by one row/col).
    # Full 5x5 (in[iy][ix] * w placed at (2iy, 2ix)):
    #   [ 1,  2,  5,  4,  6]
    #   [ 4,  5, 14, 10, 12]
    #   [10, 14, 36, 24, 30]     (row 2 col 2 = 9 + 2*7 + 3*3 + 4*1)
    #   [12, 15, 34, 20, 24]
    #   [21, 24, 55, 32, 36]
    # output = full[1:5, 1:5]
    x = np.array([[1, 2], [3, 4]], np.int8).reshape(1, 2, 2, 1)
    w = np.arange(1, 10, dtype=np.int8).reshape(1, 3, 3, 1)
    attrs = ("out_pad = array<i64: 1, 0, 1, 0>, stride = array<i64: 2, 2>, out_shape = array<i64: 1, 4, 4, 1>, "
             "input_zp = 0 : i64, weight_zp = 0 : i64")
    out = run_op("tosa.transpose_conv2d",
                 [("tensor<1x2x2x1xi8>", x), ("tensor<1x3x3x1xi8>", w), ("tensor<1xi32>", np.array([0]))],
                 "tensor<1x4x4x1xi32>", attrs)
    assert L(out.reshape(4, 4)) == [[5, 14, 10, 12], [14, 36, 24, 30], [15, 34, 20, 24], [24, 55, 32, 36]]


def test_matmul_zero_points() -> None:
    # A - 1 = [[0,1],[2,3]], B + 1 = [[6,7],[8,9]] -> [[8, 9], [36, 41]]
    a = np.array([[1, 2], [3, 4]], np.int8).reshape(1, 2, 2)
    b = np.array([[5, 6], [7, 8]], np.int8).reshape(1, 2, 2)
    out = run_op("tosa.matmul", [("tensor<1x2x2xi8>", a), ("tensor<1x2x2xi8>", b)], "tensor<1x2x2xi32>",
                 "A_zp = 1 : i64, B_zp = -1 : i64")
    assert L(out.reshape(2, 2)) == [[8, 9], [36, 41]]


# ----------------------------------------------------------------------------------------------
# ARGMAX / REDUCE_SUM / GATHER / SCATTER


def test_argmax_ties_and_nan() -> None:
    def am(x, t):
        return int(run_op("tosa.argmax", [(f"tensor<{len(x)}x{t}>", x)], "tensor<i32>", "axis = 0 : i64"))

    assert am(np.array([3, 7, 7, 1], np.int8), "i8") == 1            # first maximum (strict >)
    assert am(np.array([-128, -128], np.int8), "i8") == 0            # never > minimum -> 0
    assert am(np.array([np.nan, 1, 5, 5, np.nan], np.float32), "f32") == 2  # NaN never > anything
    assert am(np.array([np.nan, np.nan], np.float32), "f32") == 0
    assert am(np.array([-np.inf, -np.inf], np.float32), "f32") == 0
    out = run_op("tosa.argmax", [("tensor<2x2xi16>", np.array([[1, 9], [5, 2]], np.int16))], "tensor<2xi32>",
                 "axis = 0 : i64")
    assert L(out) == [1, 0]


def test_reduce_sum_partial_overflow_is_unpredictable() -> None:
    # apply_add REQUIREs every partial sum to fit: (2^31-1) + 1 overflows before the -1 comes
    def rs(x):
        return run_op("tosa.reduce_sum", [("tensor<3xi32>", x)], "tensor<1xi32>", "axis = 0 : i64")

    assert L(rs(np.array([I32_MAX, -1, 1], np.int32))) == [I32_MAX]
    with pytest.raises(TosaUnpredictable):
        rs(np.array([I32_MAX, 1, -1], np.int32))


def test_gather_and_out_of_range() -> None:
    values = np.array([[[1, 2], [3, 4], [5, 6]]], np.int32)

    def g(idx):
        return run_op("tosa.gather", [("tensor<1x3x2xi32>", values), ("tensor<1x2xi32>", np.array([idx], np.int32))],
                      "tensor<1x2x2xi32>")

    assert L(g([2, 0])) == [[[5, 6], [1, 2]]]
    for bad in ([3, 0], [0, -1]):
        with pytest.raises(TosaUnpredictable):
            g(bad)


def test_scatter_and_requires() -> None:
    values = np.zeros((1, 3, 1), np.int16)

    def s(idx):
        return run_op("tosa.scatter", [("tensor<1x3x1xi16>", values), ("tensor<1x2xi32>", np.array([idx], np.int32)),
                                       ("tensor<1x2x1xi16>", np.array([[[7], [9]]], np.int16))], "tensor<1x3x1xi16>")

    assert L(s([2, 0]).reshape(-1)) == [9, 0, 7]
    for bad in ([3, 0], [-1, 0], [1, 1]):  # out of range; duplicate output index
        with pytest.raises(TosaUnpredictable):
            s(bad)


# ----------------------------------------------------------------------------------------------
# FFT2D / RFFT2D (spec §2.3.6, §2.3.10): forward = exp(-2 pi i (...)), no normalisation


def test_fft2d_against_numpy() -> None:
    rng = np.random.default_rng(7)
    re = rng.uniform(-1, 1, (2, 4, 8)).astype(np.float32)
    im = rng.uniform(-1, 1, (2, 4, 8)).astype(np.float32)
    z = re.astype(np.float64) + 1j * im.astype(np.float64)
    t = "tensor<2x4x8xf32>"
    for inverse, ref in ((False, np.fft.fft2(z)), (True, np.fft.ifft2(z) * 32)):  # ifft2 divides by H*W
        o_re, o_im = run_op("tosa.fft2d", [(t, re), (t, im)], [t, t], f"inverse = {str(inverse).lower()}")
        np.testing.assert_allclose(o_re, ref.real, atol=2e-5 * 32)
        np.testing.assert_allclose(o_im, ref.imag, atol=2e-5 * 32)


def test_fft2d_single_impulse_sign_convention() -> None:
    # input delta at (m, n) = (0, 1), W = 4: forward output[h][w] = exp(-2 pi i w/4) -> w=1: -i
    re = np.zeros((1, 1, 4), np.float32)
    re[0, 0, 1] = 1
    im = np.zeros_like(re)
    t = "tensor<1x1x4xf32>"
    o_re, o_im = run_op("tosa.fft2d", [(t, re), (t, im)], [t, t], "inverse = false")
    np.testing.assert_allclose(o_re.reshape(-1), [1, 0, -1, 0], atol=1e-6)
    np.testing.assert_allclose(o_im.reshape(-1), [0, -1, 0, 1], atol=1e-6)
    o_re, o_im = run_op("tosa.fft2d", [(t, re), (t, im)], [t, t], "inverse = true")
    np.testing.assert_allclose(o_im.reshape(-1), [0, 1, 0, -1], atol=1e-6)


def test_rfft2d_against_numpy() -> None:
    rng = np.random.default_rng(8)
    x = rng.uniform(-1, 1, (2, 8, 4)).astype(np.float32)
    ref = np.fft.rfft2(x.astype(np.float64))[:, :5, :]  # [N, H/2+1, W/2+1]
    o_re, o_im = run_op("tosa.rfft2d", [("tensor<2x8x4xf32>", x)], ["tensor<2x5x3xf32>", "tensor<2x5x3xf32>"])
    np.testing.assert_allclose(o_re, ref.real, atol=1e-4)
    np.testing.assert_allclose(o_im, ref.imag, atol=1e-4)


# ----------------------------------------------------------------------------------------------
# SELECT / PAD / SLICE / TILE / CONCAT / REVERSE / TRANSPOSE


def test_select_broadcast() -> None:
    c = np.array([[True], [False]])
    a = np.array([[1, 2, 3]], np.int8)
    b = np.array([[4, 5, 6], [7, 8, 9]], np.int8)
    out = run_op("tosa.select", [("tensor<2x1xi1>", c), ("tensor<1x3xi8>", a), ("tensor<2x3xi8>", b)], "tensor<2x3xi8>")
    assert L(out) == [[1, 2, 3], [7, 8, 9]]


def test_pad() -> None:
    x = np.array([[1, 2], [3, 4]], np.int32)
    out = run_op("tosa.pad", [("tensor<2x2xi32>", x)], "tensor<3x5xi32>",
                 "padding = array<i64: 1, 0, 2, 1>, pad_const = -1 : i64")
    assert L(out) == [[-1, -1, -1, -1, -1], [-1, -1, 1, 2, -1], [-1, -1, 3, 4, -1]]


def test_slice_tile_reverse_transpose_concat() -> None:
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    out = run_op("tosa.slice", [("tensor<3x4xi32>", x)], "tensor<2x2xi32>",
                 "start = array<i64: 1, 2>, size = array<i64: 2, 2>")
    assert L(out) == [[6, 7], [10, 11]]
    out = run_op("tosa.tile", [("tensor<1x2xi32>", np.array([[1, 2]], np.int32))], "tensor<2x6xi32>",
                 "multiples = array<i64: 2, 3>")
    assert L(out) == [[1, 2, 1, 2, 1, 2]] * 2
    out = run_op("tosa.reverse", [("tensor<3x4xi32>", x)], "tensor<3x4xi32>", "axis = 1 : i64")
    assert L(out[0]) == [3, 2, 1, 0]
    y = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    out = run_op("tosa.transpose", [("tensor<2x3x4xi32>", y)], "tensor<4x2x3xi32>", "perms = array<i64: 2, 0, 1>")
    # output[i][j][k] = input[j][k][i]
    assert int(out[3, 1, 2]) == int(y[1, 2, 3]) == 23 and int(out[1, 0, 2]) == 9
    out = run_op("tosa.concat", [("tensor<1x2xi32>", np.array([[1, 2]], np.int32)),
                                 ("tensor<2x2xi32>", np.array([[3, 4], [5, 6]], np.int32))],
                 "tensor<3x2xi32>", "axis = 0 : i64")
    assert L(out) == [[1, 2], [3, 4], [5, 6]]


# ----------------------------------------------------------------------------------------------
# COND_IF / WHILE_LOOP (spec §2.16)


def test_cond_if_and_while_loop() -> None:
    text = """
func.func @main(%x: tensor<i32>, %c: tensor<i1>) -> tensor<i32> {
  %r = tosa.cond_if %x, %c : (tensor<i32>, tensor<i1>) -> tensor<i32> {
  ^bb0(%a: tensor<i32>):
    %r2:2 = tosa.while_loop %a, %a : (tensor<i32>, tensor<i32>) -> (tensor<i32>, tensor<i32>) {
    ^bb1(%i: tensor<i32>, %p: tensor<i32>):
      %lim = "tosa.const"() <{values = dense<100> : tensor<i32>}> : () -> tensor<i32>
      %g = tosa.greater %lim, %p : (tensor<i32>, tensor<i32>) -> tensor<i1>
      tosa.yield %g : tensor<i1>
    } do {
    ^bb1(%i: tensor<i32>, %p: tensor<i32>):
      %p2 = tosa.mul %p, %i {shift = 0 : i64} : (tensor<i32>, tensor<i32>) -> tensor<i32>
      tosa.yield %i, %p2 : tensor<i32>, tensor<i32>
    }
    tosa.yield %r2#1 : tensor<i32>
  } else {
  ^bb0(%a: tensor<i32>):
    %n = tosa.negate %a : (tensor<i32>) -> tensor<i32>
    tosa.yield %n : tensor<i32>
  }
  func.return %r : tensor<i32>
}
"""
    m = parse_module(text)
    # then: p = 3, 9, 27, 81, 243 (stops when p >= 100)
    assert int(run(m, {"x": np.array(3, np.int32), "c": np.array(True)})["output0"]) == 243
    assert int(run(m, {"x": np.array(3, np.int32), "c": np.array(False)})["output0"]) == -3


# ----------------------------------------------------------------------------------------------
# Further edge cases: spec "Floating-point behavior" tables, apply_max/apply_min NaN, int corners


SPECIALS = np.array([-np.inf, np.inf, -0.0, 0.0, np.nan], np.float32)


def _same(out, expected) -> bool:
    """Bitwise-style comparison: NaN == NaN and the sign of zero matters."""
    o = np.asarray(out, np.float64)
    e = np.asarray(expected, np.float64)
    return bool(np.all((np.isnan(o) & np.isnan(e)) | ((o == e) & (np.signbit(o) == np.signbit(e)))))


@pytest.mark.parametrize("op,expected", [
    # inputs: -inf, +inf, -0, +0, NaN (spec tables in §2.6.x)
    ("tosa.abs", [np.inf, np.inf, 0.0, 0.0, np.nan]),
    ("tosa.ceil", [-np.inf, np.inf, -0.0, 0.0, np.nan]),
    ("tosa.exp", [0.0, np.inf, 1.0, 1.0, np.nan]),
    ("tosa.floor", [-np.inf, np.inf, -0.0, 0.0, np.nan]),
    ("tosa.log", [np.nan, np.inf, -np.inf, -np.inf, np.nan]),
    ("tosa.negate", [np.inf, -np.inf, 0.0, -0.0, np.nan]),
    ("tosa.reciprocal", [-0.0, 0.0, -np.inf, np.inf, np.nan]),
    ("tosa.rsqrt", [np.nan, 0.0, -np.inf, np.inf, np.nan]),
])
@pytest.mark.parametrize("t", ["f32", "f16", "bf16"])
def test_unary_float_special_values(op: str, expected, t: str) -> None:
    out = run_op(op, [(f"tensor<5x{t}>", SPECIALS)], f"tensor<5x{t}>")
    assert _same(out, expected), (op, t, out)


def test_maximum_minimum_propagate_nan() -> None:
    # apply_max / apply_min: NaN if either input is NaN (unlike C fmax)
    a = np.array([np.nan, 1.0, 2.0, -0.0], np.float32)
    b = np.array([1.0, np.nan, 3.0, 5.0], np.float32)
    assert _same(_bin("tosa.maximum", a, b, "f32"), [np.nan, np.nan, 3.0, 5.0])
    assert _same(_bin("tosa.minimum", a, b, "f32"), [np.nan, np.nan, 2.0, -0.0])


def test_reduce_max_min_and_max_pool_propagate_nan() -> None:
    x = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]], np.float32)
    for op, exp in (("tosa.reduce_max", [[np.nan], [6.0]]), ("tosa.reduce_min", [[np.nan], [4.0]])):
        out = run_op(op, [("tensor<2x3xf32>", x)], "tensor<2x1xf32>", "axis = 1 : i64")
        assert _same(out, exp), (op, out)
    xp = np.array([1.0, np.nan, 3.0, 4.0], np.float32).reshape(1, 1, 4, 1)
    out = run_op("tosa.max_pool2d", [("tensor<1x1x4x1xf32>", xp)], "tensor<1x1x2x1xf32>",
                 "kernel = array<i64: 1, 2>, stride = array<i64: 1, 2>, pad = array<i64: 0, 0, 0, 0>")
    assert _same(out.reshape(-1), [np.nan, 4.0])


def test_clamp_nan_and_int() -> None:
    # apply_clip(NaN) = apply_min(apply_max(NaN, lo), hi) = NaN
    x = np.array([np.nan, -5.0, 0.5, 7.0], np.float32)
    out = run_op("tosa.clamp", [("tensor<4xf32>", x)], "tensor<4xf32>", "min_val = -1.0 : f32, max_val = 1.0 : f32")
    assert _same(out, [np.nan, -1.0, 0.5, 1.0])
    xi = np.array([-128, -3, 0, 127], np.int8)
    out = run_op("tosa.clamp", [("tensor<4xi8>", xi)], "tensor<4xi8>", "min_val = -2 : i64, max_val = 100 : i64")
    assert L(out) == [-2, -2, 0, 100]


def test_comparisons_with_nan() -> None:
    a = np.array([np.nan, 1.0, np.nan, 2.0], np.float32)
    b = np.array([np.nan, np.nan, 1.0, 2.0], np.float32)
    for op, exp in (("tosa.equal", [False, False, False, True]), ("tosa.greater", [False, False, False, False]),
                    ("tosa.greater_equal", [False, False, False, True])):
        assert L(_bin(op, a, b, "f32", t_out="i1")) == exp, op


def test_negate_int8_zero_points_and_clip() -> None:
    # value = in - input1_zp; -value + output_zp clipped to int8
    # zp 0: -(-128) = 128 -> 127;  zp in=3, out=-2: in 10 -> -(7) - 2 = -9; in -128 -> 131 - 2 = 129 -> 127
    out = run_op("tosa.negate", [("tensor<2xi8>", np.array([-128, 5], np.int8))], "tensor<2xi8>")
    assert L(out) == [127, -5]
    out = run_op("tosa.negate", [("tensor<2xi8>", np.array([10, -128], np.int8))], "tensor<2xi8>",
                 "input1_zp = 3 : i64, output_zp = -2 : i64")
    assert L(out) == [-9, 127]
    # int32: 0 - (-2^31) overflows apply_sub -> unpredictable
    with pytest.raises(TosaUnpredictable):
        run_op("tosa.negate", [("tensor<1xi32>", np.array([I32_MIN], np.int32))], "tensor<1xi32>")


def test_abs_int32_min_is_unpredictable() -> None:
    out = run_op("tosa.abs", [("tensor<3xi32>", np.array([-5, 5, I32_MAX * -1], np.int32))], "tensor<3xi32>")
    assert L(out) == [5, 5, I32_MAX]
    with pytest.raises(TosaUnpredictable):  # apply_sub(0, -2^31) does not fit
        run_op("tosa.abs", [("tensor<1xi32>", np.array([I32_MIN], np.int32))], "tensor<1xi32>")


def test_logical_left_shift_truncates() -> None:
    # int8: 1 << 7 = 0x80 = -128; 3 << 7 = 0x180 -> low 8 bits 0x80 = -128; -1 << 4 = 0xF0 = -16
    out = _bin("tosa.logical_left_shift", np.array([1, 3, -1], np.int8), np.array([7, 7, 4], np.int8), "i8")
    assert L(out) == [-128, -128, -16]
    out = _bin("tosa.logical_left_shift", np.array([1, 3], np.int32), np.array([31, 31], np.int32), "i32")
    assert L(out) == [I32_MIN, I32_MIN]


def test_add_sub_int32_overflow_unpredictable() -> None:
    with pytest.raises(TosaUnpredictable):
        _bin("tosa.add", np.array([I32_MAX], np.int32), np.array([1], np.int32), "i32")
    with pytest.raises(TosaUnpredictable):
        _bin("tosa.sub", np.array([I32_MIN], np.int32), np.array([1], np.int32), "i32")


def test_table_int16_slope_require() -> None:
    # slope = next - base must fit int16: t[256] = -32768, t[257] = 32767 -> slope 65535
    table = np.zeros(513, np.int16)
    table[256], table[257] = -32768, 32767
    with pytest.raises(TosaUnpredictable):
        run_op("tosa.table", [("tensor<1xi16>", np.array([5], np.int16)), ("tensor<513xi16>", table)], "tensor<1xi32>")


def test_resize_nearest_require_index_order() -> None:
    # REQUIRE(iy0 <= iy1): with a border past the end, iy = IH gives iy0 = IH > iy1 = IH - 1.
    # IH = 1 row axis trivial; IW = 2, shift 1, stride 2 (scale 1), offset 0, border 1:
    # OW = idiv(2, 2) + 1 + 1 = 3; ox = 2: x = 4, ix = 2 -> ix0 = 2 > ix1 = min(3, 1) = 1
    x = np.array([1, 2], np.int8).reshape(1, 1, 2, 1)
    with pytest.raises(TosaUnpredictable):
        _resize(x, "i8", "i8", (1, 3), (2, 2), (0, 0), (0, 1), 1, "NEAREST")


def test_conv2d_dilation_stride() -> None:
    # 1x5x5x1 input 0..24, 2x2 weights [[1, 10], [100, 1000]], dilation 2, stride 2, no pad
    # OH = (5 - 1 - 2) / 2 + 1 = 2; out[oy][ox] = x[2oy][2ox] + 10 x[2oy][2ox+2] + 100 x[2oy+2][2ox] + 1000 x[2oy+2][2ox+2]
    # (0,0): 0 + 20 + 1000 + 12000 = 13020; (0,1): 2 + 40 + 1200 + 14000 = 15242
    # (1,0): 10 + 120 + 2000 + 22000 = 24130; (1,1): 12 + 140 + 2200 + 24000 = 26352
    x = np.arange(25, dtype=np.int16).reshape(1, 5, 5, 1)
    w = np.array([[1, 10], [100, 127]], np.int8).reshape(1, 2, 2, 1)  # 127 instead of 1000 (int8)
    # recompute with 127: (0,0): 0 + 20 + 1000 + 127*12 = 2544; (0,1): 2 + 40 + 1200 + 127*14 = 3020
    # (1,0): 10 + 120 + 2000 + 127*22 = 4924; (1,1): 12 + 140 + 2200 + 127*24 = 5400
    out = run_op("tosa.conv2d", [("tensor<1x5x5x1xi16>", x), ("tensor<1x2x2x1xi8>", w), ("tensor<1xi48>", np.array([0]))],
                 "tensor<1x2x2x1xi48>", _conv_attrs((0, 0, 0, 0), (2, 2), (2, 2), 0, 0))
    assert L(out.reshape(2, 2)) == [[2544, 3020], [4924, 5400]]


def test_fully_connected_zero_points() -> None:
    # input [1, 2, 3] - (-1) = [2, 3, 4]; weight rows [[1,0,-1],[2,2,2]] - 2 = [[-1,-2,-3],[0,0,0]]
    # out = [2*-1 + 3*-2 + 4*-3, 0] + bias [10, 20] = [-20 + 10, 20] = [-10, 20]
    x = np.array([[1, 2, 3]], np.int8)
    w = np.array([[1, 0, -1], [2, 2, 2]], np.int8)
    out = run_op("tosa.fully_connected", [("tensor<1x3xi8>", x), ("tensor<2x3xi8>", w), ("tensor<2xi32>", np.array([10, 20]))],
                 "tensor<1x2xi32>", "input_zp = -1 : i64, weight_zp = 2 : i64")
    assert L(out) == [[-10, 20]]


def test_max_pool_int8_padding_ignored() -> None:
    # all inputs negative: padding must not contribute 0 (max starts at minimum<int8>)
    x = np.array([-5, -7, -3, -100], np.int8).reshape(1, 2, 2, 1)
    out = run_op("tosa.max_pool2d", [("tensor<1x2x2x1xi8>", x)], "tensor<1x3x3x1xi8>",
                 "kernel = array<i64: 2, 2>, stride = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>")
    # windows: (0,0) {-5}; (0,1) {-5,-7}; (0,2) {-7}; (1,0) {-5,-3}; (1,1) all; (1,2) {-7,-100};
    #          (2,0) {-3}; (2,1) {-3,-100}; (2,2) {-100}
    assert L(out.reshape(3, 3)) == [[-5, -5, -7], [-3, -3, -7], [-3, -3, -100]]


def test_resize_float_negative_offset_floor() -> None:
    # IW = 2, stride_x 0.5, offset_x -0.25: OW = trunc((1 + 0.25) / 0.5) + 1 = 3
    # x = -0.25: ix = floor = -1, dx = 0.75, ix0 = ix1 = 0 -> v0;  x = 0.25: 0.75 v0 + 0.25 v1;
    # x = 0.75: 0.25 v0 + 0.75 v1.  v = [4, 8] -> [4, 5, 7]; nearest: [4 (ix1 = 0), 4, 8]
    x = np.array([4.0, 8.0], np.float32).reshape(1, 1, 2, 1)
    out = _resize(x, "f32", "f32", (1, 3), (1.0, 0.5), (0.0, -0.25), (0, 0), 0, "BILINEAR", float_attrs=True)
    assert L(out.reshape(-1)) == [4.0, 5.0, 7.0]
    out = _resize(x, "f32", "f32", (1, 3), (1.0, 0.5), (0.0, -0.25), (0, 0), 0, "NEAREST", float_attrs=True)
    assert L(out.reshape(-1)) == [4.0, 4.0, 8.0]


def test_avg_pool_int8_output_clip() -> None:
    # all 127, input_zp 0, output_zp 10: mean 127 -> 137 -> clip 127; all -128, output_zp -10 -> -138 -> -128
    x = np.full((1, 2, 2, 1), 127, np.int8)
    assert L(_avg_pool(x, "i8", (2, 2), (1, 1), (0, 0, 0, 0), (1, 1, 1, 1), ozp=10).reshape(-1)) == [127]
    x = np.full((1, 2, 2, 1), -128, np.int8)
    assert L(_avg_pool(x, "i8", (2, 2), (1, 1), (0, 0, 0, 0), (1, 1, 1, 1), ozp=-10).reshape(-1)) == [-128]


def test_matmul_int16_int48() -> None:
    # 64 products of (-32768)*(-32768) = 2^30 each: 2^36 (beyond int32)
    a = np.full((1, 1, 64), -32768, np.int16)
    b = np.full((1, 64, 1), -32768, np.int16)
    out = run_op("tosa.matmul", [("tensor<1x1x64xi16>", a), ("tensor<1x64x1xi16>", b)], "tensor<1x1x1xi48>",
                 "A_zp = 0 : i64, B_zp = 0 : i64")
    assert L(out.reshape(-1)) == [1 << 36]


def test_transpose_conv2d_zero_points() -> None:
    # 1x1 input [5] - input_zp 2 = 3; weight 1x2x2x1 [[1,2],[3,4]] - weight_zp 1 = [[0,1],[2,3]]
    # stride 1, out_pad 0 -> OH = OW = 2; out = 3 * w' + bias 1 = [[1, 4], [7, 10]]
    out = run_op("tosa.transpose_conv2d",
                 [("tensor<1x1x1x1xi8>", np.array([5], np.int8).reshape(1, 1, 1, 1)),
                  ("tensor<1x2x2x1xi8>", np.array([1, 2, 3, 4], np.int8).reshape(1, 2, 2, 1)),
                  ("tensor<1xi32>", np.array([1]))],
                 "tensor<1x2x2x1xi32>",
                 "out_pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, out_shape = array<i64: 1, 2, 2, 1>, "
                 "input_zp = 2 : i64, weight_zp = 1 : i64")
    assert L(out.reshape(2, 2)) == [[1, 4], [7, 10]]


def test_argmax_middle_axis_rank3() -> None:
    # shape [2, 3, 2], axis 1: for each (i, k) the index j of the max of x[i, :, k]
    x = np.array([[[1, 9], [5, 9], [3, 2]], [[0, -1], [0, -2], [7, -1]]], np.int8)
    out = run_op("tosa.argmax", [("tensor<2x3x2xi8>", x)], "tensor<2x2xi32>", "axis = 1 : i64")
    assert L(out) == [[1, 0], [2, 0]]


def test_shift_amount_requires() -> None:
    with pytest.raises(TosaUnpredictable):  # ARITHMETIC_RIGHT_SHIFT: 0 <= value2
        _bin("tosa.arithmetic_right_shift", np.array([8], np.int16), np.array([-1], np.int16), "i16", "round = true")
    with pytest.raises(TosaUnpredictable):  # int16: value2 <= 15
        _bin("tosa.arithmetic_right_shift", np.array([8], np.int16), np.array([16], np.int16), "i16", "round = false")
    with pytest.raises(TosaUnpredictable):  # LOGICAL_RIGHT_SHIFT: value2 <= 31
        _bin("tosa.logical_right_shift", np.array([8], np.int32), np.array([32], np.int32), "i32")


def test_rescale_int16_input_zp_forbidden() -> None:
    with pytest.raises(VerifyError):
        rescale(np.array([1], np.int16), "i16", "i8", [1 << 30], [30], izp=1)
