"""The .dat tensor file format (NNEF 1.0.3 §5.2): header layout, every item type and width, lying headers."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from nnkiln import NnefError
from nnkiln.frontends.nnef import ItemType, read_tensor, write_tensor


def header(length: int, shape: list[int], bits: int, code: int, params: bytes = b"") -> bytes:
    h = bytearray(128)
    h[0:4] = b"\x4e\xef\x01\x00"
    struct.pack_into("<II", h, 4, length, len(shape))
    ext = shape[:8]
    struct.pack_into("<8I", h, 12, *(ext + [0] * (8 - len(ext))))
    struct.pack_into("<II", h, 44, bits, code)
    h[52:52 + len(params)] = params
    return bytes(h)


def test_header_layout_float32() -> None:
    data = write_tensor(np.array([[1.0, 2.0, 3.0]], dtype=np.float32))
    assert data[:4] == b"\x4e\xef\x01\x00"
    assert struct.unpack_from("<II", data, 4) == (12, 2)          # data length, rank
    assert struct.unpack_from("<8I", data, 12) == (1, 3, 0, 0, 0, 0, 0, 0)
    assert struct.unpack_from("<II", data, 44) == (32, 0x00)      # bits, Khronos float
    assert data[128:] == struct.pack("<3f", 1.0, 2.0, 3.0)       # little-endian items
    assert len(data) == 128 + 12


def test_one_bit_stream_msb_first() -> None:
    # decision: bit stream, MSB first; 1,0,1 -> 0b10100000 (last byte zero padded)
    data = write_tensor(np.array([True, False, True]))
    assert struct.unpack_from("<II", data, 44) == (1, 0x01)
    assert data[128:] == bytes([0b10100000])
    assert read_tensor(data).to_bool().tolist() == [True, False, True]


def test_hand_built_4bit_signed() -> None:
    # -1 and 3 as 4-bit two's complement: 1111 0011
    data = header(1, [2], 4, 0x01, struct.pack("<I", 1)) + bytes([0xF3])
    t = read_tensor(data)
    assert t.signed and t.values.tolist() == [-1, 3]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_float_round_trip(dtype: str) -> None:
    a = (np.arange(24).reshape(2, 3, 4) / 7.0).astype(dtype)
    t = read_tensor(write_tensor(a))
    assert t.item_type is ItemType.FLOAT and t.bits == np.dtype(dtype).itemsize * 8
    assert t.values.dtype == a.dtype and np.array_equal(t.values, a)


@pytest.mark.parametrize("bits", [1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 17, 24, 31, 32, 33, 48, 63, 64])
@pytest.mark.parametrize("signed", [False, True])
def test_integer_round_trip(bits: int, signed: bool) -> None:
    if signed and bits == 1:
        pytest.skip("a 1-bit signed integer holds only -1 and 0")
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    vals = [lo, hi, lo + (hi - lo) // 3, 0 if signed else hi // 2, hi - 1 if hi > lo else hi]
    a = np.array(vals, dtype=np.int64 if signed or bits < 64 else np.uint64)
    t = read_tensor(write_tensor(a, bits=bits, signed=signed))
    assert t.bits == bits and t.signed == signed
    assert [int(v) for v in t.values] == vals
    assert len(write_tensor(a, bits=bits, signed=signed)) == 128 + (len(vals) * bits + 7) // 8


@pytest.mark.parametrize("bits", [1, 2, 4, 8, 12, 16])
def test_linear_quantized(bits: int) -> None:
    r = (1 << bits) - 1
    codes = np.array([0, r, r // 2, 1 % (r + 1)])
    vmin, vmax = -2.0, 2.5
    x = codes / r * (vmax - vmin) + vmin          # exactly representable grid values (§5.2 decoding)
    t = read_tensor(write_tensor(x, item_type=ItemType.LINEAR_QUANTIZED, bits=bits, min=vmin, max=vmax))
    assert t.values.tolist() == codes.tolist()
    np.testing.assert_allclose(t.dequantize(), x, rtol=1e-6)
    # values outside [min, max] clamp to codes 0 and r
    t = read_tensor(write_tensor(np.array([-9.0, 9.0]), item_type=ItemType.LINEAR_QUANTIZED, bits=bits,
                                 min=vmin, max=vmax))
    assert t.values.tolist() == [0, r]


@pytest.mark.parametrize("bits,signed", [(3, False), (4, False), (8, False), (4, True), (8, True)])
def test_logarithmic_quantized(bits: int, signed: bool) -> None:
    # max = 4 -> m = 2; magnitude bits b' ; r = 2^b' - 1; code q decodes to 2^(q + m - r)
    mag = bits - 1 if signed else bits
    r = (1 << mag) - 1
    x = np.array([4.0, 2.0, 0.5, 2.0 ** (2 - r)])
    codes = [r, r - 1, r - 3, 0]
    if signed:
        x = np.concatenate([x, -x[:2]])
        codes = codes + [(1 << mag) | r, (1 << mag) | (r - 1)]
    t = read_tensor(write_tensor(x, item_type=ItemType.LOGARITHMIC_QUANTIZED, bits=bits, max=4.0, signed=signed))
    assert t.signed == signed and t.min == (-4.0 if signed else 0.0)
    assert t.values.tolist() == codes
    np.testing.assert_allclose(t.dequantize(), x)


def test_rank_zero_and_rank_eight() -> None:
    assert read_tensor(write_tensor(np.float32(3.5))).values.tolist() == 3.5
    a = np.ones((1, 2, 1, 2, 1, 2, 1, 2), dtype=np.int8)
    assert read_tensor(write_tensor(a)).shape == a.shape


@pytest.mark.parametrize("data,rule", [
    (b"", "truncated header"),
    (b"\x4e\xef" + bytes(100), "truncated header"),
    (b"NN" + bytes(126), "bad magic"),
    (header(4, [1], 32, 0).replace(b"\x01\x00", b"\x02\x00", 1) + bytes(4), "version"),
    (header(4, [1] * 9, 32, 0) + bytes(4), "rank 9"),
    (header(8, [1], 32, 0) + bytes(8), "does not match extents"),
    (header(4, [1], 32, 0) + bytes(2), "truncated data"),
    (header(4, [1], 32, 0) + bytes(5), "unexpected bytes"),
    (header(0, [0], 32, 0), "extents must be positive"),
    (header(2, [1], 12, 0) + bytes(2), "16, 32 or 64"),
    (header(9, [1], 65, 1) + bytes(9), "between 1 and 64"),
    (header(1, [1], 8, 0x07) + bytes(1), "unknown item type"),
    (header(1, [1], 8, 0x00010000) + bytes(1), "vendor"),
    (header(4 * 0xFFFF, [0xFFFF, 0xFFFF, 0xFFFF], 32, 0), "absurd"),
    (header(1, [1], 8, 0x10, struct.pack("<ff", 1.0, 1.0)) + bytes(1), "min < max"),
    (header(1, [1], 8, 0x11, struct.pack("<ff", 1.0, 4.0)) + bytes(1), "min = 0 or min = -max"),
])
def test_lying_headers(data: bytes, rule: str) -> None:
    with pytest.raises(NnefError) as info:
        read_tensor(data, file="w.dat")
    assert rule in str(info.value) and info.value.file == "w.dat"
