"""RESIZE (spec §2.12.1): hand-computed from the pseudocode with the spec's example parameters."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from nnkiln.dialects.tosa.base import Kind
from nnkiln.dialects.tosa.ops_image import ResizeMode
from nnkiln.ir.errors import TosaUnpredictable
from nnkiln.reference.image import resize
from nnkiln.reference.registry import KERNELS, KernelCall

X = np.array([[1, 2], [3, 4]])


def _img(dtype) -> np.ndarray:
    return X.astype(dtype).reshape(1, 2, 2, 1)


def _hw(a: np.ndarray) -> list:
    return a[0, :, :, 0].tolist()


# upscale [OH-1, OW-1] = 2 [IH-1, IW-1]: shift = 1, stride 1, offset 0, border 0 -> OH = 3
# y = oy: oy 0 -> (iy 0, dy 0), oy 1 -> (0, 1), oy 2 -> (1, 0) with iy1 = min(2, 1) = 1; unit 2


def test_nearest_int8_align_corners_style() -> None:
    # dy = 1 >= unit/2 = 1 picks iy1: rows [0, 1, 1]
    out = resize(_img(np.int8), (3, 3), (1, 1), (0, 0), (0, 0), 1, "NEAREST")
    assert out.dtype == np.int8
    assert _hw(out) == [[1, 2, 2], [3, 4, 4], [3, 4, 4]]


def test_bilinear_int8_to_int32() -> None:
    # acc = v00 (2-dy)(2-dx) + v01 (2-dy) dx + v10 dy (2-dx) + v11 dy dx: 4 x the bilinear value
    out = resize(_img(np.int8), (3, 3), (1, 1), (0, 0), (0, 0), 1, "BILINEAR", np.int32)
    assert out.dtype == np.int32
    assert _hw(out) == [[4, 6, 8], [8, 10, 12], [12, 14, 16]]


# upscale [OH, OW] = 2 [IH, IW] (k = 1): shift 2, stride 2, offset -1, border 1 -> OH = idiv(5, 2) + 2 = 4
# y = 2 oy - 1: oy 0 -> y -1, iy -1, dy 3 (iy0 = iy1 = 0); oy 1 -> (0, 1); oy 2 -> (0, 3); oy 3 -> (1, 1)


def test_nearest_int16_half_pixel_upscale() -> None:
    out = resize(_img(np.int16), (4, 4), (2, 2), (-1, -1), (1, 1), 2, "NEAREST")
    assert out.dtype == np.int16
    assert _hw(out) == [[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4], [3, 3, 4, 4]]


def test_bilinear_int16_to_int48() -> None:
    # per axis weights (unit 4): rows [[4, 0], [3, 1], [1, 3], [0, 4]]; out = Wy X Wx^T
    out = resize(_img(np.int16), (4, 4), (2, 2), (-1, -1), (1, 1), 2, "BILINEAR", np.int64)
    assert out.dtype == np.int64
    assert _hw(out) == [[16, 20, 28, 32], [24, 28, 36, 40], [40, 44, 52, 56], [48, 52, 60, 64]]


def test_bilinear_int8_extreme_values_exact() -> None:
    # shift 11 (unit 2048), stride 1024 = half a pixel: the midpoint of -128 and 127 is
    # (-128 * 1024 + 127 * 1024) * 2048 = -2^21
    x = np.array([[-128, 127]], np.int8).reshape(1, 1, 2, 1)
    out = resize(x, (1, 3), (2048, 1024), (0, 0), (0, 0), 11, "BILINEAR", np.int32)
    assert out.reshape(-1).tolist() == [-128 << 22, -(1 << 21), 127 << 22]


def test_require_sample_inside_input() -> None:
    # stride 3 with shift 1: oy = 2 samples y = 6 -> iy = 3 >= IH: iy0 = 3 > iy1 = 1
    with pytest.raises(TosaUnpredictable):
        resize(_img(np.int8), (3, 1), (3, 1), (0, 0), (2, 0), 1, "NEAREST")
    # offset -5 with shift 1: y = -5 -> iy = -3, iy1 = -2 < iy0 = 0
    with pytest.raises(TosaUnpredictable):
        resize(_img(np.int8), (1, 1), (1, 1), (-5, 0), (0, 0), 1, "NEAREST")
    # iy = -1 is still allowed (iy0 = iy1 = 0): offset -2 with shift 1 -> y = -2, iy = -1
    out = resize(_img(np.int8), (1, 1), (1, 1), (-2, 0), (0, 0), 1, "NEAREST")
    assert out.reshape(-1).tolist() == [1]


def test_float_bilinear_and_nearest() -> None:
    # stride 0.5, offset 0: y = 0, 0.5, 1.0
    out = resize(_img(np.float32), (3, 3), (0.5, 0.5), (0.0, 0.0), (0, 0), 0, "BILINEAR")
    assert _hw(out) == [[1, 1.5, 2], [2, 2.5, 3], [3, 3.5, 4]]
    out = resize(_img(np.float32), (3, 3), (0.5, 0.5), (0.0, 0.0), (0, 0), 0, "NEAREST")
    assert _hw(out) == [[1, 2, 2], [3, 4, 4], [3, 4, 4]]
    # offset -0.25: y = -0.25 -> iy = -1, dy = 0.75, iy0 = iy1 = 0
    out = resize(_img(np.float32), (1, 1), (1.0, 1.0), (-0.25, 0.0), (0, 0), 0, "BILINEAR")
    assert out.reshape(-1).tolist() == [1.0]


def test_resize_kernel_bf16() -> None:
    x = _img(np.float32).astype(ml_dtypes.bfloat16)
    attrs = {"output_size": (3, 3), "stride": (0.5, 0.5), "offset": (0.0, 0.0), "border": (0, 0), "shift": 0,
             "mode": ResizeMode.BILINEAR}
    call = KernelCall(name="test", inputs=[x], attrs=attrs, out_kinds=[Kind.BF16],
                      out_dtypes=[np.dtype(ml_dtypes.bfloat16)], out_shapes=[(1, 3, 3, 1)])
    out = KERNELS["tosa.resize"](call)[0]
    assert out.dtype == np.dtype(ml_dtypes.bfloat16)
    assert _hw(out.astype(np.float32)) == [[1, 1.5, 2], [2, 2.5, 3], [3, 3.5, 4]]
