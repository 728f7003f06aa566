"""NNEF sliding-window operations (spec §4.3) and RoI operations (§4.6) → TOSA 0.30.

Geometry (§4.3): ``f_d = (f-1)·d + 1``; basic ops give ``x = floor((p + X + q - f_d)/s) + 1``; automatic
padding (``padding = []``) takes ``t = (x-1)·s + f_d - X``, ``p = floor(t/2)``, ``q = ceil(t/2)`` with
``x = ceil(X/s)`` (basic ops) or the output extent X of the result (reverse ops). Negative padding crops.

Border modes (§4.3) are explicit PADs on the N C D.. value: ``constant`` (0), ``replicate`` (edge rows
tiled), ``reflect`` (``in[-i]``, REVERSE of rows 1..p), ``reflect-even`` (``in[-i-1]``, REVERSE of rows
0..p-1); ``ignore`` excludes the border: −inf padding for maxima, 0 for sums with the divisor counting only
inside taps (computed at import). Reflections wider than the tensor are not supported.

Lowerings: ``conv`` → CONV2D/DEPTHWISE_CONV2D/CONV3D (``frontends.common.nn.conv_nchw``); ``deconv`` →
TRANSPOSE_CONV2D (``transpose_conv_nchw``; border ``constant``/``ignore`` only); ``box``/``avg_pool``/
``max_pool`` → AVG/MAX_POOL2D on channels-last 4-D values when the window is spatial, else separable
per-axis pools (``axis_pool``) on any axis; ``debox``/``nearest_upsample``/``desample`` use zero insertion
(RESHAPE+PAD) and shifted sums; ``argmax_pool``/``sample`` enumerate the window taps (strided views),
ARGMAX over the stacked taps / SELECT by tap index; ``multilinear_upsample`` is RESIZE BILINEAR on the input
padded by one row per side with the border mode (so ``constant``/``reflect`` borders are exact).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind, element_type
from nnkiln.frontends.common import nn as cnn
from nnkiln.frontends.common.arith import etype, shape_of
from nnkiln.frontends.common.broadcast import reshape
from nnkiln.frontends.nnef.ast import Prim
from nnkiln.frontends.nnef.expand import FlatOp, TensorRef
from nnkiln.frontends.nnef.lowering import Lowerer, Val, full_like, handles

Pairs = list[tuple[int, int]]


def _out_ref(op: FlatOp) -> TensorRef:
    return list(op.outputs.values())[0]  # type: ignore[return-value]


def geometry(op: FlatOp, in_shape: Sequence[int], size: Sequence[int], first: int, reverse: bool,
             out_shape: Sequence[int]) -> tuple[Pairs, list[int], list[int]]:
    """(padding pairs, strides, dilations) for dims ``first..``; automatic padding resolved (§4.3)."""
    n = len(in_shape) - first
    stride = [int(s) for s in (op.attribs.get("stride") or [1] * n)]  # type: ignore[union-attr]
    dilation = [int(d) for d in (op.attribs.get("dilation") or [1] * n)]  # type: ignore[union-attr]
    padding = op.attribs.get("padding") or []
    if padding:
        pairs = [(int(p), int(q)) for p, q in padding]  # type: ignore[union-attr,misc]
    else:
        pairs = []
        for i in range(n):
            fd = (size[i] - 1) * dilation[i] + 1
            if reverse:
                big, small = out_shape[first + i], in_shape[first + i]
            else:
                big = in_shape[first + i]
                small = -(-big // stride[i])
            t = (small - 1) * stride[i] + fd - big
            pairs.append((t // 2, t - t // 2))
    return pairs, stride, dilation


def border_pad(lw: Lowerer, x: SSAValue, pairs: Sequence[tuple[int, int]], border: str, fill: float) -> SSAValue:
    """Extend ``x`` by ``pairs`` (one per dim, negative crops) with the §4.3 border mode."""
    from nnkiln.dialects.tosa.ops_data_layout import ConcatOp, ReverseOp, TileOp

    g = lw.g
    if border in ("constant", "ignore"):
        return cnn.pad_value(g, x, pairs, 0.0 if border == "constant" else fill)
    # crop negative amounts first
    x = cnn.pad_value(g, x, [(min(b, 0), min(e, 0)) for b, e in pairs])
    for ax, (b, e) in enumerate(pairs):
        b, e = max(b, 0), max(e, 0)
        if b == 0 and e == 0:
            continue
        shape = list(shape_of(x))
        z = shape[ax]

        def rows(start: int, count: int) -> SSAValue:
            st = [0] * len(shape)
            st[ax] = start
            sz = list(shape)
            sz[ax] = count
            return cnn.slice_value(g, x, st, sz)

        parts: list[SSAValue] = []
        if border == "replicate":
            if b:
                mult = [1] * len(shape)
                mult[ax] = b
                parts.append(g.value(TileOp, [rows(0, 1)], etype(x), multiples=mult))
            parts.append(x)
            if e:
                mult = [1] * len(shape)
                mult[ax] = e
                parts.append(g.value(TileOp, [rows(z - 1, 1)], etype(x), multiples=mult))
        else:
            even = border == "reflect-even"
            limit = z if even else z - 1
            if b > limit or e > limit:
                raise lw.error(f"border '{border}' with padding ({b}, {e}) wider than the extent {z} is not supported")
            if b:
                parts.append(g.value(ReverseOp, [rows(0 if even else 1, b)], etype(x), axis=ax))
            parts.append(x)
            if e:
                parts.append(g.value(ReverseOp, [rows(z - e if even else z - 1 - e, e)], etype(x), axis=ax))
        x = g.value(ConcatOp, [parts], etype(x), axis=ax)
    return x


def _bias_vector(lw: Lowerer, bias: Val, channels: int, like: SSAValue) -> tuple[SSAValue, Val | None]:
    """(bias operand [C], a bias to ADD afterwards or None)."""
    if isinstance(bias, np.ndarray):
        if bias.size in (1, channels):
            return lw.g.const(np.broadcast_to(bias.astype(np.float32).reshape(-1), (channels,)).copy()), None
        return lw.g.const(np.zeros(channels, np.float32)), bias
    if math.prod(shape_of(bias)) == channels:
        return reshape(lw.g, bias, (channels,)), None
    return lw.g.const(np.zeros(channels, np.float32)), bias


def _add_late(lw: Lowerer, y: SSAValue, late: Val | None) -> SSAValue:
    from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp
    from nnkiln.frontends.nnef.lowering import elementwise

    if late is None:
        return y
    return elementwise(lw, AddOp, [y, late], Prim.SCALAR, [Prim.SCALAR] * 2)


# ---------------------------------------------------------------------------------------------------
# conv / deconv


@handles("conv")
def _conv(lw: Lowerer, op: FlatOp) -> None:
    """conv (§4.3.1): groups 0 = depth-wise; non-constant borders and negative padding are explicit."""
    x = lw.ssa(lw.value(op.inputs["input"]), Prim.SCALAR)
    w = lw.value(op.inputs["filter"])
    xs = shape_of(x)
    wshape = tuple(np.shape(w)) if isinstance(w, np.ndarray) else shape_of(w)
    ref = _out_ref(op)
    groups = int(op.attribs.get("groups", 1)) or xs[1]  # type: ignore[arg-type]
    pairs, stride, dilation = geometry(op, xs, wshape[2:], 2, False, ref.shape)
    border = str(op.attribs.get("border", "constant"))
    if len(xs) - 2 not in (1, 2, 3):
        raise lw.error(f"a conv with input rank {len(xs)} is not supported (1-D, 2-D and 3-D only)")
    if border != "constant" or any(p < 0 for pair in pairs for p in pair):
        x = border_pad(lw, x, [(0, 0), (0, 0)] + pairs, border, 0.0)
        pairs = [(0, 0)] * len(pairs)
    bias, late = _bias_vector(lw, lw.value(op.inputs["bias"]), wshape[0], x)
    y = cnn.conv_nchw(lw.g, x, w if isinstance(w, np.ndarray) else w, bias, pairs, stride, dilation, groups)
    lw.out(op, _add_late(lw, y, late))


@handles("deconv")
def _deconv(lw: Lowerer, op: FlatOp) -> None:
    """deconv (§4.3.1): TRANSPOSE_CONV2D; ``o = i·s + j·d − p``; output extent from ``output_shape`` or
    the up-scaling rule. Border 'constant' (and 'ignore', identical without normalization) only."""
    x = lw.ssa(lw.value(op.inputs["input"]), Prim.SCALAR)
    w = lw.value(op.inputs["filter"])
    xs = shape_of(x)
    wshape = tuple(np.shape(w)) if isinstance(w, np.ndarray) else shape_of(w)
    ref = _out_ref(op)
    groups = int(op.attribs.get("groups", 1)) or xs[1]  # type: ignore[arg-type]
    border = str(op.attribs.get("border", "constant"))
    if border not in ("constant", "ignore"):
        raise lw.error(f"deconv with border '{border}' is not supported (only 'constant')")
    pairs, stride, dilation = geometry(op, xs, wshape[2:], 2, True, ref.shape)
    bias, late = _bias_vector(lw, lw.value(op.inputs["bias"]), ref.shape[1], x)
    y = cnn.transpose_conv_nchw(lw.g, x, w, bias, stride, dilation, [p for p, _ in pairs], list(ref.shape[2:]),
                                groups)
    lw.out(op, _add_late(lw, y, late))


# ---------------------------------------------------------------------------------------------------
# box-like windows


def _counts(in_shape: Sequence[int], size: Sequence[int], pairs: Pairs, stride: Sequence[int],
            dilation: Sequence[int], out_shape: Sequence[int]) -> np.ndarray:
    """Per-output number of window taps inside the input ('ignore' divisors), as a broadcastable array."""
    count = np.ones((), dtype=np.float64)
    dims = []
    for ax in range(len(in_shape)):
        taps = np.arange(out_shape[ax])[:, None] * stride[ax] - pairs[ax][0] + np.arange(size[ax])[None, :] * dilation[ax]
        c = ((taps >= 0) & (taps < in_shape[ax])).sum(axis=1).astype(np.float64)
        dims.append(c)
    for c in dims:
        count = np.multiply.outer(count, c)
    return count.reshape(tuple(out_shape))


def _window_attrs(lw: Lowerer, op: FlatOp, x: SSAValue, reverse: bool = False
                  ) -> tuple[list[int], Pairs, list[int], list[int], str]:
    xs = shape_of(x)
    size = [int(s) for s in op.attribs["size"]]  # type: ignore[union-attr]
    pairs, stride, dilation = geometry(op, xs, size, 0, reverse, _out_ref(op).shape)
    return size, pairs, stride, dilation, str(op.attribs.get("border", "constant"))


def _spatial_only(size: Sequence[int], pairs: Pairs, stride: Sequence[int], dilation: Sequence[int]) -> bool:
    return (len(size) in (3, 4) and size[0] == size[1] == 1 and stride[0] == stride[1] == 1
            and pairs[0] == pairs[1] == (0, 0) and all(d == 1 for d in dilation))


def pool(lw: Lowerer, op: FlatOp, x: SSAValue, is_max: bool, normalize: bool) -> SSAValue:
    """box / max_pool / avg_pool over all dims of N C D.. ``x`` (see the module docstring)."""
    from nnkiln.dialects.tosa.ops_tensor import AvgPool2dOp, MaxPool2dOp

    g = lw.g
    size, pairs, stride, dilation, border = _window_attrs(lw, op, x)
    out_shape = list(_out_ref(op).shape)
    xs = shape_of(x)
    volume = math.prod(size)
    fill = cnn.pool_fill(x) if is_max else 0.0
    if border == "ignore" and not is_max and not normalize:
        border = "constant"
    if _spatial_only(size, pairs, stride, dilation) and border in ("constant", "ignore") and \
            all(p >= 0 for pair in pairs for p in pair):
        sp = pairs[2:]
        geo = [cnn.window_geometry(s, k, st, 1, b, e, False) for s, k, st, (b, e) in
               zip(xs[2:], size[2:], stride[2:], sp)]
        if [o for o, _ in geo] == out_shape[2:] and all(b < k and max(e, 0) < k for (b, _), (_, e), k in
                                                         zip(sp, geo, size[2:])):
            xc = cnn.to_channels_last(g, x)
            begins, ends = [b for b, _ in sp], [e for _, e in geo]
            if border == "constant":
                # padded zeros take part in the max and the divisor (TOSA's AVG_POOL2D leaves padding out of
                # its divisor, so a sum = average * volume also needs the zeros inside): pad explicitly
                xc = cnn.pad_value(g, xc, [(0, 0)] * (len(shape_of(xc)) - 1 - len(sp)) +
                                   [(b, max(e, 0)) for b, e in zip(begins, ends)] + [(0, 0)])
                ends = [min(e, 0) for e in ends]
                begins = [0] * len(begins)
            xc, ends = cnn.trim_input(g, xc, ends)
            y = cnn.pool_nd(g, MaxPool2dOp if is_max else AvgPool2dOp, xc, size[2:], stride[2:], begins, ends)
            if not is_max and not normalize:
                y = cnn.scalar_mul(g, y, float(volume))
            return cnn.to_channels_first(g, y, len(sp))
    # general: explicit border, separable per-axis pools
    y = border_pad(lw, x, pairs, border, fill)
    for ax in range(len(xs)):
        if size[ax] != 1 or stride[ax] != 1 or shape_of(y)[ax] != out_shape[ax]:
            y = cnn.axis_pool(g, is_max, y, ax, size[ax], stride[ax], dilation[ax], out_shape[ax])
    if normalize and not is_max:
        if border == "ignore":
            cnt = _counts(xs, size, pairs, stride, dilation, out_shape)
            y = _mul_const(lw, y, (1.0 / np.maximum(cnt, 1.0)).astype(np.float32))
        elif volume != 1:
            y = cnn.scalar_mul(g, y, 1.0 / volume)
    return y


def _mul_const(lw: Lowerer, y: SSAValue, arr: np.ndarray) -> SSAValue:
    from nnkiln.dialects.tosa.ops_elementwise_binary import MulOp

    if np.all(arr == arr.flat[0]):
        return cnn.scalar_mul(lw.g, y, float(arr.flat[0]))
    return lw.g.value(MulOp, [y, lw.g.const(np.ascontiguousarray(arr.astype(np.float32)))], etype(y), shift=0)


@handles("box")
def _box(lw: Lowerer, op: FlatOp) -> None:
    x = lw.ssa(lw.value(op.inputs["input"]), Prim.SCALAR)
    lw.out(op, pool(lw, op, x, False, bool(op.attribs.get("normalize", False))))


@handles("avg_pool")
def _avg_pool(lw: Lowerer, op: FlatOp) -> None:
    x = lw.ssa(lw.value(op.inputs["input"]), Prim.SCALAR)
    lw.out(op, pool(lw, op, x, False, True))


@handles("max_pool")
def _max_pool(lw: Lowerer, op: FlatOp) -> None:
    x = lw.ssa(lw.value(op.inputs["input"]), Prim.SCALAR)
    lw.out(op, pool(lw, op, x, True, False))


# ---------------------------------------------------------------------------------------------------
# up-scaling: zero insertion, debox, desample


def zero_insert(lw: Lowerer, x: SSAValue, axis: int, s: int) -> SSAValue:
    """``u[k] = x[k/s]`` where ``k mod s == 0``, else 0; length ``(n-1)·s + 1``."""
    if s == 1:
        return x
    shape = shape_of(x)
    a, n, b = math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1:])
    v = reshape(lw.g, x, (a, n, 1, b))
    v = cnn.pad_value(lw.g, v, [(0, 0), (0, 0), (0, s - 1), (0, 0)])
    v = reshape(lw.g, v, (a, n * s, b))
    v = cnn.slice_value(lw.g, v, [0, 0, 0], [a, (n - 1) * s + 1, b])
    return reshape(lw.g, v, (*shape[:axis], (n - 1) * s + 1, *shape[axis + 1:]))


def _shift_to(lw: Lowerer, u: SSAValue, axis: int, begin: int, length: int) -> SSAValue:
    """Pad/crop ``u`` along ``axis``: ``begin`` rows before (negative crops), total ``length`` rows."""
    shape = shape_of(u)
    pairs = [(0, 0)] * len(shape)
    pairs[axis] = (begin, length - shape[axis] - begin)
    return cnn.pad_value(lw.g, u, pairs)


@handles("debox")
def _debox(lw: Lowerer, op: FlatOp) -> None:
    """debox (§4.3.2): per axis ``out[i] = Σ_j u[i + p − j·d]`` with ``u`` the zero-inserted input."""
    x = lw.ssa(lw.value(op.inputs["input"]), Prim.SCALAR)
    size, pairs, stride, dilation, border = _window_attrs(lw, op, x, reverse=True)
    if border not in ("constant", "ignore"):
        raise lw.error(f"debox with border '{border}' is not supported (only 'constant' and 'ignore')")
    out_shape = list(_out_ref(op).shape)
    xs = shape_of(x)
    y = x
    for ax in range(len(xs)):
        f, s, d, (p, _) = size[ax], stride[ax], dilation[ax], pairs[ax]
        if f == 1 and s == 1 and p == 0 and xs[ax] == out_shape[ax]:
            continue
        u = zero_insert(lw, y, ax, s)
        start = p - (f - 1) * d
        length = out_shape[ax] - 1 + (f - 1) * d + 1
        w = _shift_to(lw, u, ax, -start, length)
        y = cnn.axis_pool(lw.g, False, w, ax, f, 1, d, out_shape[ax]) if f > 1 else w
    if bool(op.attribs.get("normalize", False)):
        if border == "ignore":
            cnt = np.ones((), np.float64)
            for ax in range(len(xs)):
                i = np.arange(out_shape[ax])[:, None] + pairs[ax][0] - np.arange(size[ax])[None, :] * dilation[ax]
                ok = (i % stride[ax] == 0) & (i // stride[ax] >= 0) & (i // stride[ax] < xs[ax])
                cnt = np.multiply.outer(cnt, ok.sum(axis=1).astype(np.float64))
            y = _mul_const(lw, y, (1.0 / np.maximum(cnt.reshape(out_shape), 1.0)).astype(np.float32))
        elif math.prod(size) != 1:
            y = cnn.scalar_mul(lw.g, y, 1.0 / math.prod(size))
    lw.out(op, y)


@handles("nearest_upsample")
def _nearest_upsample(lw: Lowerer, op: FlatOp) -> None:
    """nearest_upsample (§4.3.4): each value repeated ``factor`` times per spatial axis (TILE)."""
    from nnkiln.dialects.tosa.ops_data_layout import TileOp

    x = lw.ssa(lw.value(op.inputs["input"]), Prim.SCALAR)
    factor = [int(f) for f in op.attribs["factor"]]  # type: ignore[union-attr]
    y = x
    for i, f in enumerate(factor):
        if f == 1:
            continue
        ax = 2 + i
        shape = shape_of(y)
        a, n, b = math.prod(shape[:ax]), shape[ax], math.prod(shape[ax + 1:])
        v = reshape(lw.g, y, (a, n, 1, b))
        v = lw.g.value(TileOp, [v], etype(v), multiples=[1, 1, f, 1])
        y = reshape(lw.g, v, (*shape[:ax], n * f, *shape[ax + 1:]))
    lw.out(op, y)


@handles("nearest_downsample")
def _nearest_downsample(lw: Lowerer, op: FlatOp) -> None:
    """nearest_downsample (§4.3.4): rows ``i·factor`` (strided SLICE views)."""
    x = lw.ssa(lw.value(op.inputs["input"]), Prim.SCALAR)
    out_shape = _out_ref(op).shape
    y = x
    for i, f in enumerate(op.attribs["factor"]):  # type: ignore[arg-type]
        y = cnn.strided_phase(lw.g, y, 2 + i, out_shape[2 + i], int(f))
    lw.out(op, y)


@handles("area_downsample")
def _area_downsample(lw: Lowerer, op: FlatOp) -> None:
    """area_downsample (§4.3.4) = box(size = stride = [1,1] + factor, normalize): AVG_POOL2D when 2-D."""
    x = lw.ssa(lw.value(op.inputs["input"]), Prim.SCALAR)
    factor = [int(f) for f in op.attribs["factor"]]  # type: ignore[union-attr]
    rank = len(shape_of(x))
    fake = FlatOp("box", None, {}, {"size": [1, 1] + factor, "stride": [1, 1] + factor,
                                    "padding": [(0, 0)] * rank, "border": "constant"}, op.outputs, op.line)
    lw.out(op, pool(lw, fake, x, False, True))


# ---------------------------------------------------------------------------------------------------
# argmax_pool, sample, desample


def _taps(lw: Lowerer, xp: SSAValue, size: Sequence[int], stride: Sequence[int], dilation: Sequence[int],
          out_shape: Sequence[int]) -> list[SSAValue]:
    """The window taps of padded ``xp`` in row-major window order: tap j = xp[i·s + j·d]."""
    taps = []
    count = math.prod(size)
    if count > 256:
        raise lw.error(f"a window of {count} taps is not supported for index-based pooling (limit 256)")
    for j in itertools.product(*[range(f) for f in size]):
        v = xp
        for ax, jj in enumerate(j):
            v = cnn.strided_phase(lw.g, _shift_to(lw, v, ax, -jj * dilation[ax], max(shape_of(v)[ax] - jj * dilation[ax], 1))
                                  if jj else v, ax, out_shape[ax], stride[ax])
        taps.append(v)
    return taps


@handles("argmax_pool")
def _argmax_pool(lw: Lowerer, op: FlatOp) -> None:
    """argmax_pool (§4.3.3): ARGMAX over the stacked taps (first maximum wins, row-major window index)."""
    from nnkiln.dialects.tosa.ops_data_layout import ConcatOp
    from nnkiln.dialects.tosa.ops_tensor import ArgMaxOp

    x = lw.ssa(lw.value(op.inputs["input"]), Prim.SCALAR)
    size, pairs, stride, dilation, border = _window_attrs(lw, op, x)
    out_shape = list(_out_ref(op).shape)
    xp = border_pad(lw, x, pairs, border, cnn.pool_fill(x))
    taps = _taps(lw, xp, size, stride, dilation, out_shape)
    vol = math.prod(out_shape)
    cols = [reshape(lw.g, t, (vol, 1)) for t in taps]
    stacked = cols[0] if len(cols) == 1 else lw.g.value(ConcatOp, [cols], etype(x), axis=1)
    idx = lw.g.value(ArgMaxOp, [stacked], element_type(Kind.I32), axis=1)
    lw.out(op, reshape(lw.g, idx, out_shape))


@handles("sample")
def _sample(lw: Lowerer, op: FlatOp) -> None:
    """sample (§4.3.3): ``out[i] = ĩ[i·s + index[i]·d − p]`` as a SELECT chain over the taps."""
    from nnkiln.dialects.tosa.ops_comparison import EqualOp
    from nnkiln.dialects.tosa.ops_elementwise_ternary import SelectOp

    x = lw.ssa(lw.value(op.inputs["input"]), Prim.SCALAR)
    index = lw.ssa(lw.value(op.inputs["index"], Prim.INTEGER), Prim.INTEGER)
    size, pairs, stride, dilation, border = _window_attrs(lw, op, x)
    out_shape = list(_out_ref(op).shape)
    xp = border_pad(lw, x, pairs, border, 0.0)
    taps = _taps(lw, xp, size, stride, dilation, out_shape)
    y = taps[0]
    b = element_type(Kind.BOOL)
    for j, t in enumerate(taps[1:], start=1):
        cond = lw.g.value(EqualOp, [index, full_like(lw, j, index)], b)
        y = lw.g.value(SelectOp, [cond, t, y], etype(x))
    lw.out(op, y)


@handles("desample")
def _desample(lw: Lowerer, op: FlatOp) -> None:
    """desample (§4.3.3): scatter-add; per tap j the values with ``index == j`` are zero-inserted and
    shifted to ``i·s + j·d − p``, and the placements are summed."""
    from nnkiln.dialects.tosa.ops_comparison import EqualOp
    from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp
    from nnkiln.dialects.tosa.ops_elementwise_ternary import SelectOp

    x = lw.ssa(lw.value(op.inputs["input"]), Prim.SCALAR)
    index = lw.ssa(lw.value(op.inputs["index"], Prim.INTEGER), Prim.INTEGER)
    size, pairs, stride, dilation, border = _window_attrs(lw, op, x, reverse=True)
    out_shape = list(_out_ref(op).shape)
    zero = full_like(lw, 0.0, x)
    b = element_type(Kind.BOOL)
    total: SSAValue | None = None
    for jn, j in enumerate(itertools.product(*[range(f) for f in size])):
        cond = lw.g.value(EqualOp, [index, full_like(lw, jn, index)], b)
        v = lw.g.value(SelectOp, [cond, x, zero], etype(x))
        for ax, jj in enumerate(j):
            v = zero_insert(lw, v, ax, stride[ax])
            v = _shift_to(lw, v, ax, jj * dilation[ax] - pairs[ax][0], out_shape[ax])
        total = v if total is None else lw.g.value(AddOp, [total, v], etype(x))
    lw.out(op, total)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------------
# multilinear_upsample


def multilinear_sampling(method: str, f: int, n: int) -> tuple[float, float]:
    """(stride, offset) of the TOSA RESIZE that samples ``multilinear_upsample`` by factor ``f`` of an axis
    of size ``n`` padded by one on each side (§4.4.4 methods), as float32 values."""
    if f == 1:
        st, off = 1.0, 1.0
    elif method == "asymmetric":
        st, off = 1.0 / f, 1.0
    elif method == "symmetric":
        st, off = 1.0 / f, 1.0 - (f - 1) / (2.0 * f)
    else:  # aligned
        st, off = (1.0 / f, 1.0) if n == 1 else ((n - 1) / (n * f - 1), 1.0)
    return float(np.float32(st)), float(np.float32(off))

@handles("multilinear_upsample")
def _multilinear(lw: Lowerer, op: FlatOp) -> None:
    """multilinear_upsample (§4.3.4) for 1 or 2 spatial axes as RESIZE BILINEAR (float resize_t).

    The input is padded by one row on each spatial side with the border mode; in padded coordinates
    the sample position of output i is ``pos(i) + 1`` with ``pos = i/f`` (asymmetric),
    ``(i − (f−1)/2)/f`` (symmetric) or ``i·(x−1)/(x·f−1)`` (aligned), i.e. RESIZE ``stride = 1/f``
    (aligned: ``(x−1)/(x·f−1)``) and ``offset = 1`` (symmetric: ``1 − (f−1)/(2f)``)."""
    from nnkiln.dialects.tosa.ops_image import ResizeMode, ResizeOp, resize_output_dim

    x = lw.ssa(lw.value(op.inputs["input"]), Prim.SCALAR)
    factor = [int(f) for f in op.attribs["factor"]]  # type: ignore[union-attr]
    method = str(op.attribs.get("method", "symmetric"))
    border = str(op.attribs.get("border", "replicate"))
    xs = shape_of(x)
    k = len(xs) - 2
    if k not in (1, 2):
        raise lw.error(f"multilinear_upsample with {k} spatial axes is not supported (1-D and 2-D only)")
    pad_pairs = [(0, 0), (0, 0)] + [(1, 1)] * k
    xp = border_pad(lw, x, pad_pairs, "replicate" if border == "replicate" else border, 0.0)
    xc = cnn.to_channels_last(lw.g, xp)
    ins = list(xs[2:])
    if k == 1:  # one spatial axis: RESIZE's H is to_channels_last's dummy axis of extent 1 (not padded), kept
        factor, ins = [1] + factor, [1] + ins
    strides, offsets, borders, outs = [], [], [], []
    if method not in ("asymmetric", "symmetric", "aligned"):
        raise lw.error(f"multilinear_upsample method '{method}' is not supported")
    for i in range(2):
        f, n = factor[i], ins[i]
        st, off = (1.0, 0.0) if k == 1 and i == 0 else multilinear_sampling(method, f, n)
        out = n * f
        padded = shape_of(xc)[1 + i]
        borders.append(out - resize_output_dim(padded, st, off, 0, 0))
        strides.append(st)
        offsets.append(off)
        outs.append(out)
    y = lw.g.value(ResizeOp, [xc], etype(xc), output_size=outs, stride=strides, offset=offsets, border=borders,
                   shift=0, mode=ResizeMode.BILINEAR)
    lw.out(op, cnn.to_channels_first(lw.g, y, k))


# ---------------------------------------------------------------------------------------------------
# RoI operations: tosa.custom with reference kernels


@handles("avg_roi_pool", "max_roi_pool", "roi_resample")
def _roi(lw: Lowerer, op: FlatOp) -> None:
    """RoI ops (§4.6): boxes are run-time tensors, which TOSA 0.30 cannot express; lowered to
    ``tosa.custom`` (identifier ``nnef.<op>``, ``implementation_attrs`` a JSON object of the attributes)
    executed by the kernels of :mod:`nnkiln.reference.custom_nnef`.

    ``roi_resample`` (and the ``*_roi_align`` compounds built on it) place their samples by §4.3.4's index maps
    with the RoI as an input of extent ``r = y1 − y0`` from ``y0`` (as RoI pooling's ``r_H``) and factor
    ``n / r``: 'asymmetric' at ``y0 + i·r/n``, 'symmetric' at ``y0 + (i + ½)·r/n − ½``, 'aligned' at
    ``y0 + i·(r − 1)/(n − 1)`` — its last sample on the RoI's last point ``y1 − 1``, from the spec's
    ``g(x) = (x·f − 1)/(x − 1)`` (before: ``y1``, one past the RoI). Interpolation reads the feature map,
    clamped to its edges. The reasoning is in :mod:`nnkiln.reference.custom_nnef`;
    ``tests/frontends/nnef/test_roi_resample.py`` pins it with hand-computed cases and a numpy model of the spec
    text."""
    import json

    from xdsl.dialects.builtin import TensorType

    from nnkiln.dialects.tosa.ops_custom import CustomOp
    from nnkiln.ir.diagnostics import source_loc
    from nnkiln.reference import custom_nnef as custom_ops

    custom_ops.register()
    x = lw.ssa(lw.value(op.inputs["input"]), Prim.SCALAR)
    rois = lw.ssa(lw.value(op.inputs["rois"]), Prim.SCALAR)
    bidx = lw.ssa(lw.value(op.inputs["batch_index"], Prim.INTEGER), Prim.INTEGER)
    ref = _out_ref(op)
    attrs = {k: v for k, v in op.attribs.items()}
    rt = TensorType(element_type(Kind.F32), list(ref.shape))
    c = CustomOp.make([x, rois, bidx], [rt], identifier=f"nnef.{op.name}", config="nnef",
                      implementation_attrs=json.dumps(attrs, sort_keys=True))
    c.location = source_loc(lw.file, op.name, op.line)
    lw.g.builder.insert(c)
    lw.out(op, c.results[0])
