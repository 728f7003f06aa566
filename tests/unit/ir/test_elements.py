"""Numpy-backed dense constants: storage dtypes, zero-copy views, no Python lists."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects.builtin import BFloat16Type, IntegerType, Signedness, TensorType, f16, f32, i1, i8

from nnkiln.ir.elements import dtype_of, from_numpy, to_numpy
from nnkiln.ir.errors import InputError


@pytest.mark.parametrize(
    "elem, dtype",
    [
        (i1, np.bool_),
        (IntegerType(4), np.int8),
        (i8, np.int8),
        (IntegerType(48), np.int64),
        (IntegerType(8, Signedness.UNSIGNED), np.uint8),
        (IntegerType(16, Signedness.UNSIGNED), np.uint16),
        (f16, np.float16),
        (BFloat16Type(), ml_dtypes.bfloat16),
        (f32, np.float32),
    ],
)
def test_storage_dtypes(elem, dtype):
    assert dtype_of(elem) == np.dtype(dtype)


def test_round_trip_is_zero_copy_and_read_only():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    attr = from_numpy(a)
    assert attr.type == TensorType(f32, [3, 4])
    view = to_numpy(attr)
    np.testing.assert_array_equal(view, a)
    assert not view.flags.writeable
    assert to_numpy(attr).__array_interface__["data"][0] == view.__array_interface__["data"][0]


def test_bf16_bits_are_the_bf16_encoding():
    attr = from_numpy(np.array([1.5, -2.0], dtype=np.float32), TensorType(BFloat16Type(), [2]))
    # bf16(1.5) = 0x3FC0, bf16(-2.0) = 0xC000, little endian
    assert attr.data.data == bytes([0xC0, 0x3F, 0x00, 0xC0])


def test_i48_values_survive():
    big = np.array([(1 << 47) - 1, -(1 << 47)], dtype=np.int64)
    attr = from_numpy(big, TensorType(IntegerType(48), [2]))
    np.testing.assert_array_equal(to_numpy(attr), big)


def test_scalar_broadcasts_to_shape():
    attr = from_numpy(np.array(7, dtype=np.int8), TensorType(i8, [2, 2]))
    np.testing.assert_array_equal(to_numpy(attr), np.full((2, 2), 7, np.int8))


def test_shape_mismatch_is_an_input_error():
    with pytest.raises(InputError, match="does not fit"):
        from_numpy(np.zeros(3, np.float32), TensorType(f32, [4]))
