"""Convolution and pooling building blocks shared by the frontends (NCHW frameworks → TOSA's NHWC).

Used by the ONNX lowerings (``onnx/lowerings/nn_conv.py``) and the NNEF lowering. Every function takes the
:class:`GraphBuilder`; errors are ``g.error(...)`` (a ``FrontendError`` naming the file and node).

* ``window_geometry``: output size of a windowed axis (floor or ceil) and the end padding that makes
  TOSA's division exact (spec §2.3 ``idiv_check``); a negative end padding means trailing rows are unread.
* ``to_channels_last`` / ``to_channels_first``: N C D.. ↔ N D.. C (1-D runs as N 1 L C).
* ``slice_value``, ``pad_value`` (negative pads slice), ``trim_input``, ``strided_phase``.
* ``dilate_kernel`` (numpy) / ``dilate_kernel_ir``: zero taps between kernel taps.
* ``axis_pool``: max or window-sum along one axis of any rank (dilation and stride via reshapes).
* ``pool2d`` / ``pool_nd``: AVG_POOL2D / MAX_POOL2D on channels-last values (3-D as two 2-D pools).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind, kind_of
from nnkiln.frontends.common.arith import etype, shape_of
from nnkiln.frontends.common.broadcast import reshape
from nnkiln.frontends.common.graph import GraphBuilder
from nnkiln.frontends.common.layout import channels_first_perm, channels_last_perm, transpose
from nnkiln.limits import check_tensor

__all__ = ["window_geometry", "to_channels_last", "to_channels_first", "slice_value", "pad_value", "trim_input",
           "dilate_kernel", "dilate_kernel_ir", "axis_pool", "pool_fill", "pool2d", "pool_nd", "scalar_mul"]


def window_geometry(size: int, kernel: int, stride: int, dilation: int, begin: int, end: int,
                    ceil_mode: bool) -> tuple[int, int]:
    """Output size of a conv/pool axis and the end padding that makes TOSA's division exact.

    ``out = floor_or_ceil((size + begin + end - eff) / stride) + 1`` with ``eff = (kernel-1)*dilation+1``;
    in ceil mode a last window starting at or after ``size + begin`` (entirely in the end padding) is
    dropped (ONNX's rule). Returns (out, end padding); a negative end padding means the last ``-end``
    input rows are never read. ``out`` is 0 when the kernel does not fit.
    """
    eff = (kernel - 1) * dilation + 1
    span = size + begin + end - eff
    if span < 0:
        return 0, 0
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + begin:
        out -= 1
    return out, (out - 1) * stride + eff - size - begin


def to_channels_last(g: GraphBuilder, x: SSAValue) -> SSAValue:
    """N C D1..Dk → N D1..Dk C (1-D: → N 1 L C)."""
    shape = shape_of(x)
    y = transpose(g, x, channels_last_perm(len(shape)))
    if len(shape) == 3:
        y = reshape(g, y, (shape[0], 1, shape[2], shape[1]))
    return y


def to_channels_first(g: GraphBuilder, y: SSAValue, spatial: int) -> SSAValue:
    """Inverse of ``to_channels_last`` for an op with ``spatial`` spatial axes."""
    shape = shape_of(y)
    if spatial == 1:
        y = reshape(g, y, (shape[0], shape[2], shape[3]))
    return transpose(g, y, channels_first_perm(len(shape_of(y))))


def _slice_axis_by_axis(g: GraphBuilder, x: SSAValue, start: Sequence[int], size: Sequence[int],
                        axes: Sequence[int]) -> SSAValue:
    for i in axes:
        one_start, one_size = [0] * len(start), list(shape_of(x))
        one_start[i], one_size[i] = start[i], size[i]
        x = slice_value(g, x, one_start, one_size)
    return x


def slice_value(g: GraphBuilder, x: SSAValue, start: Sequence[int], size: Sequence[int]) -> SSAValue:
    """``tosa.slice`` (nothing when it is the whole tensor); ranks above 4 are viewed with merged axes."""
    from nnkiln.dialects.tosa.ops_data_layout import SliceOp

    shape = shape_of(x)
    if tuple(start) == (0,) * len(start) and tuple(size) == shape:
        return x
    if len(size) > 4:
        # merge runs of whole (unsliced) axes so the view has rank <= 4; along more than two axes, one
        # axis at a time (each a [before, axis, after] view)
        sliced = [i for i in range(len(shape)) if start[i] != 0 or size[i] != shape[i]]
        if len(sliced) > 2:
            return _slice_axis_by_axis(g, x, start, size, sliced)
        cuts = sorted({0, len(shape), *sliced, *(i + 1 for i in sliced)})
        groups = [list(range(a, b)) for a, b in zip(cuts, cuts[1:])]
        view = [math.prod(shape[i] for i in grp) for grp in groups]
        vstart = [start[grp[0]] if len(grp) == 1 else 0 for grp in groups]
        vsize = [size[grp[0]] if len(grp) == 1 else view[k] for k, grp in enumerate(groups)]
        if len(view) > 4:  # two sliced axes with whole axes before, between and after them
            return _slice_axis_by_axis(g, x, start, size, sliced)
        y = g.value(SliceOp, [reshape(g, x, view)], etype(x), start=vstart, size=vsize)
        return reshape(g, y, size)
    return g.value(SliceOp, [x], etype(x), start=list(start), size=list(size))


def pad_value(g: GraphBuilder, x: SSAValue, pairs: Sequence[tuple[int, int]], value: float = 0.0) -> SSAValue:
    """``tosa.pad`` with a constant; negative amounts remove rows (a SLICE first)."""
    from nnkiln.dialects.tosa.ops_data_layout import PadOp

    if any(b < 0 or e < 0 for b, e in pairs):
        shape = shape_of(x)
        start = [max(-b, 0) for b, _ in pairs]
        size = [s - max(-b, 0) - max(-e, 0) for s, (b, e) in zip(shape, pairs)]
        if any(s < 1 for s in size):
            raise g.error(f"negative padding {list(pairs)} removes the whole tensor of shape {list(shape)}")
        x = slice_value(g, x, start, size)
        pairs = [(max(b, 0), max(e, 0)) for b, e in pairs]
    if all(b == 0 and e == 0 for b, e in pairs):
        return x
    flat = [int(p) for pair in pairs for p in pair]
    kind = kind_of(x.type)  # type: ignore[arg-type]
    const: float | int = float(value) if kind is not None and kind.is_float else int(value)
    return g.value(PadOp, [x], etype(x), padding=flat, pad_const=const)


def trim_input(g: GraphBuilder, x: SSAValue, ends: Sequence[int]) -> tuple[SSAValue, list[int]]:
    """Slice off never-read trailing rows of channels-last ``x`` (spatial axes are the last k before C)
    where the needed end padding is negative; returns the input and the non-negative end paddings."""
    shape = shape_of(x)
    k = len(ends)
    offset = len(shape) - 1 - k
    size = list(shape)
    for i, e in enumerate(ends):
        if e < 0:
            size[offset + i] += e
    x = slice_value(g, x, [0] * len(shape), size)
    return x, [max(e, 0) for e in ends]


def dilate_kernel(w: np.ndarray, dilations: Sequence[int], first: int = 2) -> np.ndarray:
    """Insert d-1 zeros between the taps of axes ``first..`` of ``w``."""
    for i, d in enumerate(dilations):
        if d > 1:
            ax = first + i
            n = w.shape[ax]
            shape = list(w.shape)
            shape[ax] = (n - 1) * d + 1
            check_tensor(shape, w.dtype.itemsize, f"the kernel dilated by {list(dilations)}")
            out = np.zeros(shape, dtype=w.dtype)
            idx = [slice(None)] * w.ndim
            idx[ax] = slice(None, None, d)
            out[tuple(idx)] = w
            w = out
    return w


def dilate_kernel_ir(g: GraphBuilder, w: SSAValue, dilations: Sequence[int], first: int = 2) -> SSAValue:
    """``dilate_kernel`` for a run-time weight: per axis, view [P, n, 1, B], PAD the unit axis to d
    with zeros, reshape to [P, n·d, B] and SLICE the first (n−1)·d+1 rows."""
    for i, d in enumerate(dilations):
        if d > 1:
            shape = shape_of(w)
            ax = first + i
            p, n, b = math.prod(shape[:ax]), shape[ax], math.prod(shape[ax + 1:])
            v = reshape(g, w, (p, n, 1, b))
            v = pad_value(g, v, [(0, 0), (0, 0), (0, d - 1), (0, 0)])
            v = reshape(g, v, (p, n * d, b))
            v = slice_value(g, v, [0, 0, 0], [p, (n - 1) * d + 1, b])
            w = reshape(g, v, (*shape[:ax], (n - 1) * d + 1, *shape[ax + 1:]))
    return w


def pool_fill(x: SSAValue) -> float:
    """The padding value that never wins a max: −inf for floats, the type minimum for integers."""
    kind = kind_of(x.type)  # type: ignore[arg-type]
    if kind is Kind.I8:
        return -128
    if kind is Kind.I16:
        return -32768
    if kind is Kind.I32:
        return -(1 << 31)
    return float("-inf")


def scalar_mul(g: GraphBuilder, x: SSAValue, value: float) -> SSAValue:
    """``x * value`` (float ``x``) with a rank-matched constant."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import MulOp
    from nnkiln.frontends.common.arith import np_dtype

    c = g.const(np.full((1,) * len(shape_of(x)), value).astype(np_dtype(kind_of(x.type))))  # type: ignore[arg-type]
    return g.value(MulOp, [x, c], etype(x), shift=0)


def strided_phase(g: GraphBuilder, y: SSAValue, axis: int, out: int, stride: int, offset: int = 0) -> SSAValue:
    """Rows ``offset + i·stride`` (i < out) of ``y`` along ``axis`` (pads with zeros when needed)."""
    shape = shape_of(y)
    a, length, b = math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1:])
    v = reshape(g, y, (a, length, b))
    need = offset + out * stride
    if length < need:
        v = pad_value(g, v, [(0, 0), (0, need - length), (0, 0)])
    v = slice_value(g, v, [0, offset, 0], [a, out * stride, b])
    if stride > 1:
        v = reshape(g, v, (a, out, stride, b))
        v = slice_value(g, v, [0, 0, 0, 0], [a, out, 1, b])
    return reshape(g, v, (*shape[:axis], out, *shape[axis + 1:]))


def axis_pool(g: GraphBuilder, is_max: bool, x: SSAValue, axis: int, kernel: int, stride: int,
              dilation: int, out: int) -> SSAValue:
    """Max or window-sum along one ``axis`` of an explicitly padded ``x`` whose length along the axis
    is at least ``(out - 1)·stride + (kernel - 1)·dilation + 1`` (longer: the rest is sliced off), as
    stride-1 pools on a phase view.

    View [A, L, B] (A, B: the products of the other axes). With L padded to Lq·d, the reshape
    [A, Lq, d, B] puts positions q·d + r at (q, r); a pool with kernel [K, 1] over it (read as NHWC)
    combines x[(q + j)·d + r] for j < K, i.e. the dilated window starting at q·d + r. Reshaping back
    to [A, (Lq−K+1)·d, B] gives the stride-1 result at every start; the stride is then a reshape to
    [A, out, s, B] and a SLICE of phase 0. Sums are AVG_POOL2D (no padding, divisor K) times K.
    """
    from nnkiln.dialects.tosa.ops_tensor import AvgPool2dOp, MaxPool2dOp

    if kernel == 1 and dilation == 1:
        return strided_phase(g, x, axis, out, stride) if (stride > 1 or shape_of(x)[axis] != out) else x
    shape = shape_of(x)
    a, length, b = math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1:])
    d = dilation
    fill = pool_fill(x) if is_max else 0.0
    y = reshape(g, x, (a, length, b))
    span = (out - 1) * stride + (kernel - 1) * d + 1
    if length > span:  # rows a floor division never reads
        y = slice_value(g, y, [0, 0, 0], [a, span, b])
        length = span
    lq = -(-length // d)
    y = pad_value(g, y, [(0, 0), (0, lq * d - length), (0, 0)], fill)
    y = reshape(g, y, (a, lq, d, b))
    op = MaxPool2dOp if is_max else AvgPool2dOp
    y = pool2d(g, op, y, [kernel, 1], [1, 1], [0, 0], [0, 0])
    if not is_max and kernel != 1:
        y = scalar_mul(g, y, float(kernel))
    rows = (lq - kernel + 1) * d
    y = reshape(g, y, (a, rows, b))
    need = out * stride
    if rows < need:
        y = pad_value(g, y, [(0, 0), (0, need - rows), (0, 0)], fill)
    elif rows > need:
        y = slice_value(g, y, [0, 0, 0], [a, need, b])
    if stride > 1:
        y = reshape(g, y, (a, out, stride, b))
        y = slice_value(g, y, [0, 0, 0, 0], [a, out, 1, b])
    return reshape(g, y, (*shape[:axis], out, *shape[axis + 1:]))


def pool2d(g: GraphBuilder, op: type, x: SSAValue, kernel: Sequence[int], strides: Sequence[int],
           begins: Sequence[int], ends: Sequence[int], input_zp: int = 0, output_zp: int = 0) -> SSAValue:
    """One AVG/MAX_POOL2D on NHWC ``x``; avg pools get zero points."""
    from nnkiln.dialects.tosa.ops_tensor import AvgPool2dOp

    for kk, b, e in zip(kernel, begins, ends):
        if b >= kk or e >= kk:
            raise g.error(f"padding {list(begins)}/{list(ends)} not smaller than the kernel {list(kernel)} "
                          f"is not supported (TOSA 0.30 pools require pad < kernel)")
    extra = {"input_zp": input_zp, "output_zp": output_zp} if op is AvgPool2dOp else {}
    pad = [begins[0], ends[0], begins[1], ends[1]]
    return g.value(op, [x], etype(x), kernel=list(kernel), stride=list(strides), pad=pad, **extra)


def pool_nd(g: GraphBuilder, op: type, x: SSAValue, kernel: Sequence[int], strides: Sequence[int],
            begins: Sequence[int], ends: Sequence[int]) -> SSAValue:
    """Pool channels-last ``x`` (spatial axes 1..k, 1-D already as [N,1,L,C]). 3-D pools run as a 2-D
    pool over (H, W) of [N·D, H, W, C] followed by a pool over D of [N, D, OH·OW, C]: the window is
    a box, so max-of-max and (for the valid-count divisor) mean-of-means factor exactly."""
    shape = shape_of(x)
    if len(shape) == 4:
        if len(kernel) == 1:
            kernel, strides, begins, ends = [1, *kernel], [1, *strides], [0, *begins], [0, *ends]
        return pool2d(g, op, x, kernel, strides, begins, ends)
    n, d, h, w, c = shape
    y = reshape(g, x, (n * d, h, w, c))
    y = pool2d(g, op, y, kernel[1:], strides[1:], begins[1:], ends[1:])
    _, oh, ow, _ = shape_of(y)
    y = reshape(g, y, (n, d, oh * ow, c))
    y = pool2d(g, op, y, [kernel[0], 1], [strides[0], 1], [begins[0], 0], [ends[0], 0])
    od = shape_of(y)[1]
    return reshape(g, y, (n, od, oh, ow, c))


# ------------------------------------------------------------------------------------------------
# convolutions on N C D.. values


def _weight_cl(g: GraphBuilder, w: np.ndarray | SSAValue, perm: Sequence[int], shape: Sequence[int],
               like: SSAValue) -> SSAValue:
    """Weight ``w`` reshaped to ``shape`` and permuted by ``perm`` (numpy at import, else IR ops)."""
    from nnkiln.frontends.common.arith import np_dtype

    if isinstance(w, np.ndarray):
        # a strided view: the constant's bytes are gathered in C order by one copy (``from_numpy``)
        arr = np.transpose(w.reshape(shape), perm).astype(np_dtype(kind_of(like.type)), copy=False)  # type: ignore[arg-type]
        return g.const(arr)
    return transpose(g, reshape(g, w, shape), perm)


def conv_nchw(g: GraphBuilder, x: SSAValue, weight: np.ndarray | SSAValue, bias: SSAValue,
              pairs: Sequence[tuple[int, int]], strides: Sequence[int], dilations: Sequence[int],
              group: int) -> SSAValue:
    """Grouped convolution of N C D1..Dk ``x`` (k = 1, 2, 3) by ``weight`` [M, C/group, K..] plus ``bias``
    [M], zero padding ``pairs`` (non-negative; floor division), returning N M O1..Ok.

    1-D runs as CONV2D with H = 1, 2-D as CONV2D, 3-D as CONV3D; ``group == C`` is DEPTHWISE_CONV2D
    (channel multiplier M/C) in 1-D and 2-D; other groups (and every grouped 3-D convolution) are
    per-group convolutions joined by CONCAT.
    """
    from nnkiln.dialects.tosa.ops_data_layout import ConcatOp
    from nnkiln.dialects.tosa.ops_tensor import Conv2DOp, Conv3DOp, DepthwiseConv2DOp

    xs = shape_of(x)
    wshape = tuple(weight.shape) if isinstance(weight, np.ndarray) else shape_of(weight)
    k = len(xs) - 2
    kernel = list(wshape[2:])
    c_in, m_out = xs[1], wshape[0]
    geo = [window_geometry(s, kk, st, d, b, e, False) for s, kk, st, d, (b, e) in
           zip(xs[2:], kernel, strides, dilations, pairs)]
    if any(o < 1 for o, _ in geo):
        raise g.error(f"the kernel {kernel} is larger than the padded input {list(xs[2:])}")
    xc = to_channels_last(g, x)
    xc, ends = trim_input(g, xc, [e for _, e in geo])
    begins = [b for b, _ in pairs]
    strides, dilations = list(strides), list(dilations)
    if k == 1:
        kernel, strides, dilations, begins, ends = [1] + kernel, [1] + strides, [1] + dilations, [0] + begins, [0] + ends
    pad = [p for b, e in zip(begins, ends) for p in (b, e)]
    et = etype(xc)
    attrs = dict(pad=pad, stride=strides, dilation=dilations, input_zp=0, weight_zp=0)
    conv = Conv3DOp if k == 3 else Conv2DOp
    w_shape = (m_out, wshape[1], *kernel)
    w_perm = (0, *range(2, len(w_shape)), 1)  # OI K.. → O K.. I
    if group == 1:
        y = g.value(conv, [xc, _weight_cl(g, weight, w_perm, w_shape, xc), bias], et, **attrs)
    elif group == c_in and k < 3:
        mult = m_out // c_in
        w = _weight_cl(g, weight, (2, 3, 0, 1), (c_in, mult, *kernel), xc)
        y = g.value(DepthwiseConv2DOp, [xc, w, bias], et, **attrs)
    else:  # per-group convolutions (CONV3D has no grouped or depthwise form) joined by CONCAT
        cg, mg = c_in // group, m_out // group
        w = _weight_cl(g, weight, w_perm, w_shape, xc)
        xsh, wsh = shape_of(xc), shape_of(w)
        parts = []
        for gi in range(group):
            xg = slice_value(g, xc, [0] * (len(xsh) - 1) + [gi * cg], [*xsh[:-1], cg])
            wg = slice_value(g, w, [gi * mg] + [0] * (len(wsh) - 1), [mg, *wsh[1:]])
            bg = slice_value(g, bias, [gi * mg], [mg])
            parts.append(g.value(conv, [xg, wg, bg], et, **attrs))
        y = g.value(ConcatOp, [parts], et, axis=len(xsh) - 1)
    return to_channels_first(g, y, k)


def transpose_conv_nchw(g: GraphBuilder, x: SSAValue, weight: np.ndarray | SSAValue, bias: SSAValue,
                        strides: Sequence[int], dilations: Sequence[int], begins: Sequence[int],
                        out_sizes: Sequence[int], group: int) -> SSAValue:
    """Transposed convolution of N C D1..Dk ``x`` (k = 1, 2) by ``weight`` [C, M/group, K..]: ``x[i]·w[j]``
    lands at ``o = i·s + j·d − begin``; the output has ``out_sizes`` (positions outside the full result
    receive only the bias). TRANSPOSE_CONV2D per group (CONCAT), 1-D with H = 1; dilations insert
    zero taps into the kernel."""
    from nnkiln.dialects.tosa.ops_data_layout import ConcatOp
    from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp
    from nnkiln.dialects.tosa.ops_tensor import TransposeConv2DOp
    from nnkiln.frontends.common.arith import np_dtype

    xs = shape_of(x)
    wshape = tuple(weight.shape) if isinstance(weight, np.ndarray) else shape_of(weight)
    k = len(xs) - 2
    if k not in (1, 2):
        raise g.error(f"a transposed convolution with {k} spatial axes is not supported (1-D and 2-D only)")
    c_in = xs[1]
    m_out = wshape[1] * group
    kernel = list(wshape[2:])
    effs = [(kk - 1) * d + 1 for kk, d in zip(kernel, dilations)]
    crops = []
    for i in range(k):
        base = (xs[2 + i] - 1) * strides[i] + effs[i]
        crops.append((begins[i], base - begins[i] - out_sizes[i]))
    xc = to_channels_last(g, x)
    strides, out_sizes = list(strides), list(out_sizes)
    if k == 1:
        strides, crops, out_sizes, effs = [1] + strides, [(0, 0)] + crops, [1] + out_sizes, [1] + effs
    neg = any(c < 0 for pair in crops for c in pair)
    et = etype(xc)
    dt = np_dtype(kind_of(xc.type))  # type: ignore[arg-type]
    conv_bias = g.const(np.zeros(m_out, dtype=dt)) if neg else bias
    out_pad = [max(c, 0) for pair in crops for c in pair]
    oh = [(shape_of(xc)[1 + i] - 1) * strides[i] + effs[i] - out_pad[2 * i] - out_pad[2 * i + 1] for i in range(2)]
    cg, mg = c_in // group, m_out // group
    if isinstance(weight, np.ndarray):
        warr = dilate_kernel(weight.astype(dt), dilations).reshape((c_in, wshape[1], *effs))
        w = g.const(np.ascontiguousarray(np.transpose(warr, (1, 2, 3, 0))))
    else:
        w = dilate_kernel_ir(g, weight, dilations)
        w = transpose(g, reshape(g, w, (c_in, wshape[1], *effs)), (1, 2, 3, 0))
    n = shape_of(xc)[0]
    s4 = shape_of(xc)
    parts = []
    for gi in range(group):
        xg = xc if group == 1 else slice_value(g, xc, [0, 0, 0, gi * cg], [s4[0], s4[1], s4[2], cg])
        wg = w if group == 1 else slice_value(g, w, [0, 0, 0, gi * cg], [mg, effs[0], effs[1], cg])
        bg = conv_bias if group == 1 else slice_value(g, conv_bias, [gi * mg], [mg])
        parts.append(g.value(TransposeConv2DOp, [xg, wg, bg], et, out_pad=out_pad, stride=strides,
                             out_shape=[n, oh[0], oh[1], mg], input_zp=0, weight_zp=0))
    y = parts[0] if group == 1 else g.value(ConcatOp, [parts], et, axis=3)
    if neg:
        y = pad_value(g, y, [(0, 0)] + [(max(-a, 0), max(-b, 0)) for a, b in crops] + [(0, 0)])
        y = g.value(AddOp, [y, reshape(g, bias, (1, 1, 1, m_out))], et)
    return to_channels_first(g, y, k)
