"""Reference kernel of RESIZE (spec §2.12.1).

Per output row ``oy`` (columns likewise): ``y = oy * stride_y + offset_y``; integer modes
``iy = y >> shift`` (floor), ``dy = y - (iy << shift)``, unit ``1 << shift``; float modes
``iy = floor(y)``, ``dy = y - iy``, unit 1.0, with ``y`` computed in fp32 (``resize_t``).
``iy0 = max(iy, 0)``, ``iy1 = min(iy + 1, IH - 1)`` and REQUIRE(``iy0 <= iy1 && ix0 <= ix1``): a
sample row beyond the last input row (``iy >= IH``) or before row -1 (``iy < -1``) is
unpredictable.
- BILINEAR: ``v00 (u-dy)(u-dx) + v01 (u-dy) dx + v10 dy (u-dx) + v11 dy dx``. Integer: exact int64
  (int8 → int32, int16 → int48; the result has ``2 * shift`` fractional bits, never overflows).
  Float: computed in float32, rounded once to the output type.
- NEAREST: index 1 when ``d >= u / 2`` (round half up), else index 0.
The output size is ``output_size`` (checked against the derived OH/OW by the verifier).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from nnkiln.reference.registry import KernelCall, kernel, unpredictable_if
from nnkiln.reference.tensor_ops import attr, op_name_of

_F32 = np.float32


def sample_axis(
    out_size: int, in_size: int, stride: int | float, offset: int | float, shift: int, is_float: bool, op: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(i0, i1, d) per output index of one axis: d is an int64 fraction (integer modes) or fp32."""
    o = np.arange(out_size, dtype=np.int64)
    if is_float:
        pos = o.astype(_F32) * _F32(stride) + _F32(offset)
        i = np.floor(pos).astype(np.int64)
        d = pos - i.astype(_F32)
    else:
        pos = o * int(stride) + int(offset)
        i = pos >> shift
        d = pos - (i << shift)
    i0 = np.maximum(i, 0)
    i1 = np.minimum(i + 1, in_size - 1)
    unpredictable_if(i0 > i1, op, "REQUIRE(ix0 <= ix1 && iy0 <= iy1): sample position inside the input")
    return i0, i1, d


def resize(
    x: np.ndarray,
    output_size: Sequence[int],
    stride: Sequence[int | float],
    offset: Sequence[int | float],
    border: Sequence[int],
    shift: int,
    mode: str,
    out_dtype: np.dtype | type | None = None,
    op: str = "tosa.resize",
) -> np.ndarray:
    """RESIZE (spec §2.12.1) of ``x [N,IH,IW,C]`` to ``[N,OH,OW,C]`` with ``output_size = [OH, OW]``.

    ``mode`` is "BILINEAR" or "NEAREST". Integer modes when ``x`` is int8/int16 (resize_t = int16),
    float modes otherwise (resize_t = fp32). ``border`` only enters the output size."""
    del border  # only determines OH/OW, which output_size carries
    n, ih, iw, c = x.shape
    oh, ow = (int(v) for v in output_size)
    is_float = not np.issubdtype(x.dtype, np.integer)
    dt = np.dtype(out_dtype) if out_dtype is not None else x.dtype
    iy0, iy1, dy = sample_axis(oh, ih, stride[0], offset[0], shift, is_float, op)
    ix0, ix1, dx = sample_axis(ow, iw, stride[1], offset[1], shift, is_float, op)
    mode = mode.upper()
    if mode == "NEAREST":
        half = _F32(0.5) if is_float else (1 << shift) // 2
        iy = np.where(dy >= half, iy1, iy0)
        ix = np.where(dx >= half, ix1, ix0)
        return x[:, iy[:, None], ix[None, :], :].astype(dt)
    if mode != "BILINEAR":
        raise ValueError(f"unknown RESIZE mode {mode!r}")
    if is_float:
        xf = x.astype(_F32)
        u = _F32(1)
    else:
        xf = x.astype(np.int64)
        u = np.int64(1 << shift)
    wy0, wy1 = (u - dy)[None, :, None, None], dy[None, :, None, None]
    wx0, wx1 = (u - dx)[None, None, :, None], dx[None, None, :, None]
    v00 = xf[:, iy0[:, None], ix0[None, :], :]
    v01 = xf[:, iy0[:, None], ix1[None, :], :]
    v10 = xf[:, iy1[:, None], ix0[None, :], :]
    v11 = xf[:, iy1[:, None], ix1[None, :], :]
    acc = v00 * wy0 * wx0 + v01 * wy0 * wx1
    acc = acc + v10 * wy1 * wx0 + v11 * wy1 * wx1
    return acc.astype(dt)


def _resize_values(call: KernelCall, name: str) -> tuple[Any, ...]:
    """``stride``/``offset`` keeping fp32 values as floats (the generic attribute conversion reads
    every dense array as ints, so read the op's own property when there is an op)."""
    op = getattr(call, "op", None)
    prop = getattr(op, "properties", {}).get(name) if op is not None else None
    if prop is not None:
        from nnkiln.dialects.tosa.ops_image import _values

        return tuple(_values(prop))
    return tuple(call.attrs[name])


@kernel("tosa.resize")
def resize_kernel(call: KernelCall) -> list[np.ndarray]:
    mode = attr(call, "mode")
    mode_s = str(getattr(mode, "value", mode))
    out_size = call.attrs.get("output_size") or call.out_shapes[0][1:3]
    return [resize(
        call.inputs[0], tuple(out_size), _resize_values(call, "stride"), _resize_values(call, "offset"),
        tuple(attr(call, "border", default=(0, 0))), int(attr(call, "shift", default=0)), mode_s,
        call.out_dtypes[0], op_name_of(call, "tosa.resize"),
    )]
