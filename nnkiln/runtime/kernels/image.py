"""RESIZE (TOSA spec §2.12.1) with its sample positions computed once, when the executable is built.

The reference kernel (``nnkiln.reference.image``) derives every output row's and column's input indices and
fractions on each call; here ``sample_axis`` (the reference's own rule, REQUIRE included) runs at build time and
the call only gathers:

- NEAREST (any element type whose output type is the input's): two ``np.take`` (rows, then columns) into the
  output view: a copy of the reference's selected elements, so identical results;
- BILINEAR on float32: the reference's four products and sums with the same precomputed weights, in the same
  float32 operations and order (identical results).

A geometry whose REQUIRE fails, other element types (integer BILINEAR) or shapes that disagree with the
attributes get ``None``: the reference kernel runs (and raises where the spec says so).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from nnkiln.blob.format import BufferDesc
from nnkiln.errors import NnkilnError
from nnkiln.kinds import Kind
from nnkiln.reference.image import sample_axis

ResizeFn = Callable[[Sequence[np.ndarray], Sequence[np.ndarray], Sequence[np.ndarray]], None]
_F32 = np.float32


def _ints(v: Any, n: int) -> tuple[Any, ...] | None:
    try:
        t = tuple(v)
    except TypeError:
        return None
    return t if len(t) == n else None


def resize(attrs: dict[str, Any], ib: Sequence[BufferDesc], ob: Sequence[BufferDesc]) -> ResizeFn | None:
    """The fast RESIZE for these operands, or None (see the module docstring)."""
    if len(ib) != 1 or len(ob) != 1 or len(ib[0].shape) != 4 or len(ob[0].shape) != 4:
        return None
    (n, ih, iw, c), (on, oh, ow, oc) = ib[0].shape, ob[0].shape
    stride, offset = _ints(attrs.get("stride"), 2), _ints(attrs.get("offset"), 2)
    if stride is None or offset is None or (on, oc) != (n, c) or list(attrs.get("output_size") or (oh, ow)) != [oh, ow]:
        return None
    mode = str(getattr(attrs.get("mode"), "value", attrs.get("mode"))).upper()
    shift = int(attrs.get("shift", 0) or 0)
    kind = ib[0].kind
    is_float = kind.is_float
    try:
        iy0, iy1, dy = sample_axis(oh, ih, stride[0], offset[0], shift, is_float, "tosa.resize")
        ix0, ix1, dx = sample_axis(ow, iw, stride[1], offset[1], shift, is_float, "tosa.resize")
    except (NnkilnError, ValueError, TypeError, OverflowError):
        return None  # the reference kernel reports it on every run
    if mode == "NEAREST" and ob[0].kind is kind:
        half = _F32(0.5) if is_float else (1 << shift) // 2
        iy = np.where(dy >= half, iy1, iy0).astype(np.intp)
        ix = np.where(dx >= half, ix1, ix0).astype(np.intp)
        rows = np.empty((n, oh, iw, c), ib[0].dtype)

        def nearest(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray], extras: Sequence[np.ndarray]) -> None:
            np.take(ins[0], iy, axis=1, out=rows)
            np.take(rows, ix, axis=2, out=outs[0])

        return nearest
    if mode == "BILINEAR" and kind is Kind.F32 and ob[0].kind is Kind.F32:
        one = _F32(1)
        wy0, wy1 = (one - dy)[None, :, None, None], dy[None, :, None, None]
        wx0, wx1 = (one - dx)[None, None, :, None], dx[None, None, :, None]
        r0, r1, c0, c1 = iy0[:, None], iy1[:, None], ix0[None, :], ix1[None, :]

        def bilinear(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray], extras: Sequence[np.ndarray]) -> None:
            x = ins[0]
            acc = x[:, r0, c0, :] * wy0 * wx0 + x[:, r0, c1, :] * wy0 * wx1
            outs[0][...] = acc + x[:, r1, c0, :] * wy1 * wx0 + x[:, r1, c1, :] * wy1 * wx1

        return bilinear
    return None


__all__ = ["resize"]
