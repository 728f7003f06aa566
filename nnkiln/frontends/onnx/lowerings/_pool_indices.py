"""MaxPool's Indices output (private module of ``nn_conv``): for every output element, the position of the
maximum in the flattened input ``N·C·S`` (``S`` the spatial size), the spatial part row-major
(``storage_order = 0``) or column-major (``= 1``), as ``onnx.reference`` and onnxruntime compute it.

The windows are fixed at import, so the candidate taps are too: the input viewed as ``[1, S, N·C]`` goes
through one GATHER at the constant tap positions ``[O·K]`` (O output positions, K taps per window) to
``[O, K, N·C]``; ARGMAX over K picks the first maximal tap (ONNX scans the window in row-major order and
replaces only on a strict ``>``: the first maximum wins), and a GATHER from the constant table of each tap's
storage-order position ``[O, K, 1]`` turns the tap into a position; the channel's offset ``(n·C + c)·S`` is
added. A tap in the padding is read as the window's first valid tap and maps to its position: if that value
is the maximum and such a padding tap comes first, the first valid tap is the answer anyway (it precedes every
other valid tap), so the padding changes nothing. ONNX's loop starts from the first valid tap, so a NaN there
is kept; ARGMAX never selects NaN (the one divergence: windows holding NaN).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind, element_type
from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp
from nnkiln.dialects.tosa.ops_scatter_gather import GatherOp
from nnkiln.dialects.tosa.ops_tensor import ArgMaxOp
from nnkiln.frontends.common import nn as _nn
from nnkiln.frontends.common.arith import etype, shape_of
from nnkiln.frontends.common.broadcast import reshape
from nnkiln.frontends.common.layout import transpose
from nnkiln.frontends.onnx.importer import NodeContext

_I32_MAX = int(np.iinfo(np.int32).max)


def _axis_taps(size: int, kernel: int, stride: int, dilation: int, begin: int, out: int
               ) -> tuple[np.ndarray, np.ndarray]:
    """(coordinate ``[out, kernel]`` of each tap along one axis, whether it is inside the input)."""
    taps = np.arange(out)[:, None] * stride - begin + np.arange(kernel)[None, :] * dilation
    return taps, (taps >= 0) & (taps < size)


def _tap_tables(ctx: NodeContext, sizes: Sequence[int], kernel: Sequence[int], strides: Sequence[int],
                dilations: Sequence[int], begins: Sequence[int], outs: Sequence[int], storage_order: int
                ) -> tuple[np.ndarray, np.ndarray]:
    """(row-major spatial index ``[O·K]`` to read per tap, its storage-order position ``[O, K]``), padding taps
    replaced by the window's first valid tap."""
    k = len(sizes)
    coords, valid = [], np.ones((1,) * (2 * k), dtype=bool)
    for i in range(k):
        taps, ok = _axis_taps(sizes[i], kernel[i], strides[i], dilations[i], begins[i], outs[i])
        # axis i's output index at dimension i and its tap index at dimension k + i
        view = [1] * (2 * k)
        view[i], view[k + i] = outs[i], kernel[i]
        coords.append(np.clip(taps, 0, sizes[i] - 1).reshape(view))
        valid = valid & ok.reshape(view)
    full = tuple(outs) + tuple(kernel)
    o, kk = math.prod(outs), math.prod(kernel)
    coords = [np.broadcast_to(c, full).reshape(o, kk) for c in coords]
    valid = np.broadcast_to(valid, full).reshape(o, kk)
    if not valid.any(axis=1).all():
        raise ctx.error("a window lies entirely in the padding (its Indices are undefined)")
    first = valid.argmax(axis=1)[:, None]
    coords = [np.where(valid, c, np.take_along_axis(c, first, axis=1)) for c in coords]
    read = np.ravel_multi_index(tuple(coords), tuple(sizes))
    stored = np.ravel_multi_index(tuple(coords), tuple(sizes), order="F" if storage_order else "C")
    return read.reshape(-1), stored


def maxpool_indices(ctx: NodeContext, x: SSAValue, kernel: Sequence[int], strides: Sequence[int],
                    dilations: Sequence[int], pairs: Sequence[tuple[int, int]], ceil_mode: bool,
                    storage_order: int) -> SSAValue:
    """The int32 Indices ``[N, C, *out]`` of a MaxPool of ``x`` ``[N, C, *spatial]`` (module docstring)."""
    shape = shape_of(x)
    n, c, sizes = shape[0], shape[1], list(shape[2:])
    s, nc = math.prod(sizes), shape[0] * shape[1]
    if nc * s - 1 > _I32_MAX:
        raise ctx.error(f"Indices of an input of {nc * s} elements do not fit int32")
    outs = [_nn.window_geometry(size, kk, st, d, b, e, ceil_mode)[0]
            for size, kk, st, d, (b, e) in zip(sizes, kernel, strides, dilations, pairs)]
    read, stored = _tap_tables(ctx, sizes, kernel, strides, dilations, [b for b, _ in pairs], outs, storage_order)
    o, kk = stored.shape
    i32 = element_type(Kind.I32)
    values = reshape(ctx.g, transpose(ctx.g, reshape(ctx.g, x, (nc, s)), [1, 0]), (1, s, nc))
    taps = ctx.g.const(read.reshape(1, -1).astype(np.int32))
    cand = reshape(ctx.g, ctx.g.value(GatherOp, [values, taps], etype(x)), (o, kk, nc))
    best = ctx.g.value(ArgMaxOp, [cand], i32, axis=1)
    table = ctx.g.const(stored.reshape(o, kk, 1).astype(np.int32))
    pos = reshape(ctx.g, ctx.g.value(GatherOp, [table, best], i32), (o, nc))
    offset = ctx.g.const((np.arange(nc, dtype=np.int64) * s).astype(np.int32).reshape(1, nc))
    flat = ctx.g.value(AddOp, [pos, offset], i32)
    return reshape(ctx.g, transpose(ctx.g, flat, [1, 0]), (n, c, *outs))
