"""Fast float32 kernels writing straight into their output views.

``build(name, attrs, in_bufs, out_bufs, const_views, epilogue)`` returns ``fn(ins, outs, extras)`` or
``None`` when no fast path applies (then the reference kernel runs). A fast path applies only when
every operand and result is float32, the zero points are 0 and the shapes agree with the op's
geometry (checked once, when the executable is built, so a tampered blob cannot make a strided view
read out of bounds). ``epilogue`` (``kernels.epilogue``) holds fused post-ops applied in place to
the output (by the producer, per block of rows while in cache); ``extras`` are their operands.

Numerics against ``nnkiln.reference`` (float32 everywhere, like the reference):
- CONV2D, DEPTHWISE_CONV2D: see ``kernels.conv`` (GEMM: within 1e-5 relative; depthwise: the
  reference's per-tap float32 operations in its order).
- AVG/MAX_POOL2D: the reference's per-tap loops, done in place in the output view (same operations
  in the same order: bit-identical).
- FULLY_CONNECTED, MATMUL: with constant weights under a native ``kernels.gemm.GemmPlan`` (conv.c's AVX-512
  tiles, and the executable's GEMM weights small enough to hold a packed second copy), the native implicit
  GEMM (``conv.native_gemm``: bias and post-ops in registers; another summation order, within 1e-5);
  otherwise ``np.matmul(out=)`` (``kernels.gemm``: one BLAS thread for small products) (+ bias);
  elementwise ops with ``out=``. A MATMUL whose weights the blob holds as GEMM panels (``b_panels``) always
  takes the native GEMM, reading them in place (unpacked once for BLAS only without the native library).
- int32 / bool ADD, SUB, MUL, MAXIMUM, MINIMUM, comparisons and SELECT: ``kernels.integer`` (the reference's
  results exactly; the reference kernel where an int32 result would overflow).
- RESIZE: ``kernels.image`` (sample positions computed once; identical results);
- TRANSPOSE (float32): one strided ``np.copyto``; GATHER (float32 values, int32 indices):
  ``np.take`` per batch (both copies: identical to the reference).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from itertools import product
from typing import Any

import numpy as np

from nnkiln.blob.format import BufferDesc
from nnkiln.kinds import Kind
from nnkiln.runtime.blas import kernel_threads
from nnkiln.runtime.kernels import conv, image, integer, quantized
from nnkiln.runtime.kernels.bound import Bound, NativeFn, adapt, address, contiguous_f32, slots
from nnkiln.runtime.kernels.epilogue import Epilogue, clamp_bounds
from nnkiln.runtime.kernels.epilogue import block_of as epilogue_block_of
from nnkiln.runtime.kernels.epilogue import operand_2d as epilogue_operand_2d
from nnkiln.runtime.kernels.gemm import current_plan, gemm

FastFn = Callable[[Sequence[np.ndarray], Sequence[np.ndarray], Sequence[np.ndarray]], None]
PlainFn = Callable[[Sequence[np.ndarray], Sequence[np.ndarray]], None]
_F32 = np.float32


def _taps(in_hw: tuple[int, int], out_hw: tuple[int, int], k: tuple[int, int], stride: tuple[int, int],
          dilation: tuple[int, int], pad_before: tuple[int, int]) -> list[tuple[tuple[int, int], tuple[slice, slice], tuple[slice, slice]]]:
    """(tap, input slices, output slices) per kernel tap in row-major order (as the reference)."""
    out = []
    for ky, kx in product(range(k[0]), range(k[1])):
        ry = _axis_range(in_hw[0], out_hw[0], stride[0], ky * dilation[0] - pad_before[0])
        rx = _axis_range(in_hw[1], out_hw[1], stride[1], kx * dilation[1] - pad_before[1])
        if ry is not None and rx is not None:
            out.append(((ky, kx), (ry[0], rx[0]), (ry[1], rx[1])))
    return out


def _axis_range(size_in: int, size_out: int, stride: int, offset: int) -> tuple[slice, slice] | None:
    lo = max(0, -(offset // stride))
    hi = min(size_out - 1, (size_in - 1 - offset) // stride)
    if lo > hi:
        return None
    return slice(lo * stride + offset, hi * stride + offset + 1, stride), slice(lo, hi + 1)


def _pool(max_pool: bool, attrs: dict[str, Any], ib: Sequence[BufferDesc], ob: Sequence[BufferDesc]) -> PlainFn | None:
    geo = conv.pool_geometry(max_pool, attrs, ib, ob)
    if geo is None:
        return None
    k, stride, pad = geo
    xs, os_ = ib[0].shape, ob[0].shape
    n, ih, iw, c = xs
    oh, ow = os_[1], os_[2]
    taps = _taps((ih, iw), (oh, ow), k, stride, (1, 1), (pad[0], pad[2]))
    cnt = np.zeros((oh, ow), np.int64)
    for _, _, (oy, ox) in taps:
        cnt[oy, ox] += 1
    if not max_pool and not cnt.all():
        return None  # a window with no input: the reference decides (division by zero)
    cnt_f = cnt[None, :, :, None].astype(_F32)

    def run(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray]) -> None:
        x, out = ins[0], outs[0]
        out.fill(-np.inf if max_pool else 0)
        for _, (iy, ix), (oy, ox) in taps:
            r = out[:, oy, ox, :]
            if max_pool:
                np.maximum(r, x[:, iy, ix, :], out=r)
            else:
                np.add(r, x[:, iy, ix, :], out=r)
        if not max_pool:
            np.divide(out, cnt_f, out=out)

    return run


def _fully_connected(attrs: dict[str, Any], ib: Sequence[BufferDesc], ob: Sequence[BufferDesc],
                     consts: Sequence[np.ndarray | None], epi: Epilogue | None) -> FastFn | None:
    if len(ib) != 3 or len(ob) != 1:
        return None
    xs, ws, bs, os_ = ib[0].shape, ib[1].shape, ib[2].shape, ob[0].shape
    if len(xs) != 2 or len(ws) != 2 or xs[1] != ws[1] or os_ != (xs[0], ws[0]) or bs not in ((ws[0],), (1,)):
        return None
    plan = current_plan()
    if plan.native and consts[1] is not None:
        nat = conv.native_gemm(xs[0], xs[1], ws[0], plan.packed_weights(consts[1], "nk"), epi, ob[0])
        if nat is not None:
            return nat
    small = plan.small_flops

    def run(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray], extras: Sequence[np.ndarray]) -> None:
        x, w, b = ins
        o = outs[0]
        gemm(x, w.T, o, small)
        np.add(o, b, out=o)
        if epi is not None:
            epi(o, slice(None), extras)

    return run


def _matmul(attrs: dict[str, Any], ib: Sequence[BufferDesc], ob: Sequence[BufferDesc],
            consts: Sequence[np.ndarray | None], epi: Epilogue | None) -> FastFn | None:
    if len(ib) != 2 or len(ob) != 1:
        return None
    if attrs.get("b_panels") is not None:
        return _matmul_panels(attrs, ib, ob, consts, epi)
    a, b, o = ib[0].shape, ib[1].shape, ob[0].shape
    if len(a) != 3 or len(b) != 3 or a[0] != b[0] or a[2] != b[1] or o != (a[0], a[1], b[2]):
        return None
    rows, cols = a[0] * a[1], b[2]
    plan = current_plan()
    if plan.native and a[0] == 1 and consts[1] is not None:  # constant weights (a linear layer), no bias
        nat = conv.native_gemm(a[1], a[2], cols, plan.packed_weights(consts[1][0], "kn"), epi, ob[0])
        if nat is not None:
            zeros = np.zeros(cols, _F32)
            return adapt(nat, lambda ins: (ins[0], None, zeros))
    if plan.pooled and consts[1] is None and epi is None and (kernel_threads() > 1 or a[0] * a[1] * a[2] * cols
                                                               <= _BMM_ONE_THREAD_MAX_MACS):
        # two run-time operands (attention's products): conv.c's tiles with every batch's work shared by the
        # threads, where OpenBLAS keeps products below SHARED_SMALL_FLOPS on one thread (see native_bmm); at one
        # thread OpenBLAS is as fast on large products without the packing of the right operand, but a small one
        # bound into the chain saves a Python call
        bmm = conv.native_bmm(a[0], a[1], a[2], cols)
        if bmm is not None:
            return bmm
    small = plan.small_flops

    def run(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray], extras: Sequence[np.ndarray]) -> None:
        x, y = ins
        if x.shape[0] == 1:  # one 2-D GEMM (no batch loop inside numpy)
            gemm(x[0], y[0], outs[0][0], small)
        else:
            gemm(x, y, outs[0], small)
        if epi is not None:
            epi(outs[0].reshape(rows, cols), slice(None), extras)

    return run


def _matmul_panels(attrs: dict[str, Any], ib: Sequence[BufferDesc], ob: Sequence[BufferDesc],
                   consts: Sequence[np.ndarray | None], epi: Epilogue | None) -> FastFn | None:
    """MATMUL whose constant right operand the blob holds as GEMM panels (``blob.format.pack_panels``): conv.c's
    implicit GEMM reads them as they are (AVX2 or AVX-512 tiles); without the native library they are unpacked
    once for BLAS."""
    from nnkiln.blob.format import PANEL_WIDTH, unpack_panels
    from nnkiln.errors import BlobError

    a, b, o = ib[0].shape, ib[1].shape, ob[0].shape
    if (attrs.get("b_panels") != PANEL_WIDTH or len(a) != 3 or a[0] != 1 or len(b) != 3 or b[2] != PANEL_WIDTH
            or b[1] != a[2] or len(o) != 3 or o[:2] != a[:2] or b[0] != -(-o[2] // PANEL_WIDTH) or consts[1] is None):
        raise BlobError(f"MATMUL with packed weights: operands {a} x {b} -> {o} (constant: {consts[1] is not None}) "
                        f"do not match the b_panels = {PANEL_WIDTH} layout")
    rows, k, cols = a[1], a[2], o[2]
    panels = np.ascontiguousarray(consts[1], _F32).reshape(-1)
    nat = conv.native_gemm(rows, k, cols, panels, epi, ob[0], wide_only=False)
    if nat is not None:
        zeros = np.zeros(cols, _F32)
        return adapt(nat, lambda ins: (ins[0], None, zeros))
    w_kn = unpack_panels(consts[1], cols)
    small = current_plan().small_flops

    def run(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray], extras: Sequence[np.ndarray]) -> None:
        gemm(ins[0][0], w_kn, outs[0][0], small)
        if epi is not None:
            epi(outs[0].reshape(rows, cols), slice(None), extras)

    return run


def _broadcastable(ib: Sequence[BufferDesc], ob: Sequence[BufferDesc]) -> bool:
    if len(ob) != 1:
        return False
    try:
        return np.broadcast_shapes(*(b.shape for b in ib)) == ob[0].shape
    except ValueError:
        return False


def _sigmoid(x: np.ndarray, out: np.ndarray) -> None:
    np.negative(x, out=out)
    np.exp(out, out=out)
    np.add(out, _F32(1), out=out)
    np.divide(_F32(1), out, out=out)


_BINARY: dict[str, Callable[..., Any]] = {
    "tosa.add": np.add, "tosa.sub": np.subtract, "tosa.maximum": np.maximum, "tosa.minimum": np.minimum,
}
ELEMENTWISE = ("tosa.add", "tosa.sub", "tosa.maximum", "tosa.minimum", "tosa.mul", "tosa.abs", "tosa.negate",
               "tosa.exp", "tosa.tanh", "tosa.sigmoid", "tosa.clamp")
"""Fast paths that are correct when the output aliases an input (numpy ufuncs handle overlap)."""
_UNARY: dict[str, Callable[..., Any]] = {
    "tosa.abs": np.abs, "tosa.negate": np.negative, "tosa.exp": np.exp, "tosa.tanh": np.tanh,
    "tosa.sigmoid": _sigmoid, "tosa.reciprocal": lambda x, out: np.divide(_F32(1), x, out=out),
    "tosa.rsqrt": lambda x, out: np.divide(_F32(1), np.sqrt(x, out=out), out=out),
}


def _with_epilogue(fn: PlainFn, ob: Sequence[BufferDesc],
                   epi: Epilogue | None) -> FastFn:
    if epi is None:
        if isinstance(fn, NativeFn):
            return NativeFn(lambda ins, outs, extras: fn(ins, outs), lambda ins, outs, extras: fn.bind(ins, outs))
        return lambda ins, outs, extras: fn(ins, outs)
    c = ob[0].shape[-1] if ob[0].shape else 1

    def run(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray], extras: Sequence[np.ndarray]) -> None:
        fn(ins, outs)
        epi(outs[0].reshape(-1, c), slice(None), extras)

    return run


def build(name: str, attrs: dict[str, Any], ib: Sequence[BufferDesc], ob: Sequence[BufferDesc],
          consts: Sequence[np.ndarray | None], epi: Epilogue | None = None) -> FastFn | None:
    """A fast float32 implementation of ``name`` (with the fused epilogue ``epi``) for these operands,
    or ``None``: ``fn(ins, outs, extras)``. A pooling task with a geometry TOSA forbids is a ``BlobError``
    (``_check_pool``), whatever its element type."""
    if name in ("tosa.max_pool2d", "tosa.avg_pool2d"):
        _check_pool(name, attrs, ib, ob)
    if name == "tosa.gather" and epi is None:
        return _gather(ib, ob)
    if name == "tosa.resize" and epi is None:  # positions computed once: any element type (NEAREST)
        return image.resize(attrs, ib, ob)
    if name in ("tosa.transpose", "tosa.slice") and epi is None:  # a copy: any element type
        t = _transpose(attrs, ib, ob) if name == "tosa.transpose" else _slice(attrs, ib, ob)
        return _with_epilogue(t, ob, None) if t is not None else None
    if name in integer.OPS and epi is None and not all(b.kind is Kind.F32 for b in (*ib, *ob)):
        return integer.build(name, attrs, ib, ob)
    if name in quantized.OPS and epi is None and not all(b.kind is Kind.F32 for b in (*ib, *ob)):
        return quantized.build(name, attrs, ib, ob, consts)
    if not all(b.kind is Kind.F32 for b in (*ib, *ob)):
        return None
    if any(attrs.get(z, 0) for z in ("input_zp", "weight_zp", "output_zp", "A_zp", "B_zp", "input1_zp", "input2_zp")):
        return None
    if name == "tosa.conv2d":
        return conv.conv2d(attrs, ib, ob, consts, epi)
    if name == "tosa.depthwise_conv2d":
        return conv.depthwise(attrs, ib, ob, epi)
    if name == "tosa.fully_connected":
        return _fully_connected(attrs, ib, ob, consts, epi)
    if name == "tosa.matmul":
        return _matmul(attrs, ib, ob, consts, epi)
    if name == "tosa.reduce_sum":
        nat = conv.reduce_sum(attrs, ib, ob, epi)
        if nat is not None:
            return nat
    if epi is not None:
        blocked = _blocked_elementwise(name, attrs, ib, ob, epi)
        if blocked is not None:
            return blocked
    plain = _plain(name, attrs, ib, ob)
    return _with_epilogue(plain, ob, epi) if plain is not None else None


_BLOCK_ELEMENTS = 1 << 16
"""Elements per block of a fused elementwise chain (256 KiB of float32: stays in L2)."""


def _blocked_elementwise(name: str, attrs: dict[str, Any], ib: Sequence[BufferDesc], ob: Sequence[BufferDesc],
                         epi: Epilogue) -> FastFn | None:
    """An elementwise op followed by its fused chain, evaluated block by block of output rows: per
    block the op writes the output block, then every post-op runs on it in place (same float32 ufuncs,
    same order: identical results to the unfused kernels)."""
    if len(ob) != 1 or not ob[0].shape:
        return None
    out_shape = ob[0].shape
    c = out_shape[-1]
    rows = int(np.prod(out_shape[:-1], dtype=np.int64))
    modes = [epilogue_operand_2d(b.shape, out_shape) for b in ib]
    if any(m is None for m in modes) or c == 0 or rows == 0:
        return None
    if name in _BINARY or name in ("tosa.mul",):
        if len(ib) != 2 or (name == "tosa.mul" and attrs.get("shift", 0)):
            return None
        fn2 = _BINARY.get(name, np.multiply)
        op = lambda a, o: fn2(a[0], a[1], out=o)  # noqa: E731
    elif name in _UNARY and len(ib) == 1:
        ufn = _UNARY[name]
        op = lambda a, o: ufn(a[0], out=o)  # noqa: E731
    elif name == "tosa.clamp" and len(ib) == 1 and clamp_bounds(attrs) is not None:
        lo, hi = clamp_bounds(attrs)  # type: ignore[misc]

        def op(a: Sequence[np.ndarray], o: np.ndarray) -> None:
            np.clip(a[0], lo, hi, out=o)
    elif name in ("tosa.reciprocal", "tosa.rsqrt") and len(ib) == 1:
        def op(a: Sequence[np.ndarray], o: np.ndarray) -> None:
            if name == "tosa.rsqrt":
                np.sqrt(a[0], out=o)
                np.divide(_F32(1), o, out=o)
            else:
                np.divide(_F32(1), a[0], out=o)
    else:
        return None
    step = max(1, _BLOCK_ELEMENTS // c)

    def run(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray], extras: Sequence[np.ndarray]) -> None:
        o2 = outs[0].reshape(rows, c)
        with np.errstate(all="ignore"):
            for r0 in range(0, rows, step):
                rs = slice(r0, min(rows, r0 + step))
                blk = o2[rs]
                op([epilogue_block_of(m, x, rs, c) for m, x in zip(modes, ins)], blk)  # type: ignore[arg-type]
                epi(blk, rs, extras)

    return run


def _reduce(name: str, attrs: dict[str, Any], ib: Sequence[BufferDesc], ob: Sequence[BufferDesc]) -> PlainFn | None:
    """REDUCE_SUM/MAX/MIN of float32 with ``np.sum/max/min(axis, keepdims, out=)``: the reference's
    numpy reduction on an array of the same layout (same summation order: identical results)."""
    axis = attrs.get("axis")
    if len(ib) != 1 or len(ob) != 1 or not isinstance(axis, int) or not 0 <= axis < len(ib[0].shape):
        return None
    if ob[0].shape != tuple(1 if i == axis else d for i, d in enumerate(ib[0].shape)):
        return None
    fn = {"tosa.reduce_sum": np.add, "tosa.reduce_max": np.maximum, "tosa.reduce_min": np.minimum}[name].reduce
    shape = ib[0].shape
    outer, n, inner = math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1:])
    # viewed as [outer, n, inner] (as [n, inner] when outer is 1): numpy still adds along the axis in the same
    # order (sequentially across it for inner > 1, pairwise when it is the contiguous one), so the results stay
    # identical, but a 2-D reduction streams the rows: faster with the input out of cache (bench/RESULTS.md)
    if outer == 1:
        view_in, view_out, ax = (n, inner), (inner,), 0
    else:
        view_in, view_out, ax = (outer, n, inner), (outer, inner), 1

    def run(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray]) -> None:
        with np.errstate(all="ignore"):
            fn(ins[0].reshape(view_in), axis=ax, out=outs[0].reshape(view_out))

    return run


def _gather(ib: Sequence[BufferDesc], ob: Sequence[BufferDesc]) -> FastFn | None:
    """GATHER of float32 ``values [N, K, C]`` by int32 ``indices [N, W]`` (spec §2.11.1): ``np.take``
    per batch straight into the output (a copy of rows: identical to the reference). An index outside
    ``[0, K)`` (REQUIRE) makes the call defer to the reference kernel, which reports it."""
    if len(ib) != 2 or len(ob) != 1 or ib[0].kind is not Kind.F32 or ob[0].kind is not Kind.F32:
        return None
    if ib[1].kind is not Kind.I32:
        return None
    vs, xs, os_ = ib[0].shape, ib[1].shape, ob[0].shape
    if len(vs) != 3 or len(xs) != 2 or vs[0] != xs[0] or os_ != (vs[0], xs[1], vs[2]) or vs[1] == 0:
        return None
    from nnkiln.runtime.kernels.reference import call_reference

    k = vs[1]

    def run(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray], extras: Sequence[np.ndarray]) -> None:
        values, idx = ins
        out = outs[0]
        if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= k):
            res = call_reference("tosa.gather", [values, idx], {}, [Kind.F32, Kind.I32], [Kind.F32],
                                 [out.dtype], [out.shape])
            np.copyto(out, res[0])
            return
        for n in range(out.shape[0]):
            np.take(values[n], idx[n], axis=0, out=out[n])

    lib = conv.native_lib()
    if lib is None:
        return run

    def bind(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray], extras: Sequence[np.ndarray]) -> Bound | None:
        """``nk_gather32``: the same row copies; an index outside [0, K) makes it fail, and the chain then runs
        ``run`` (the reference reports it)."""
        values, idx = ins
        if not (contiguous_f32(values, outs[0]) and idx.dtype == np.int32 and idx.flags.c_contiguous):
            return None
        return Bound([(address(lib.nk_gather32_b), slots(values.ctypes.data, idx.ctypes.data, outs[0].ctypes.data,
                                                         vs[0], k, vs[2], xs[1]))], clean_failure=True)

    return NativeFn(run, bind)


def _transpose(attrs: dict[str, Any], ib: Sequence[BufferDesc], ob: Sequence[BufferDesc]) -> PlainFn | None:
    """TRANSPOSE (spec §2.10.7): a copy into the output (identical to the reference): a permutation that swaps two
    groups of axes runs as a blocked 8x8-tile transpose in C (far faster than numpy's strided copy:
    bench/RESULTS.md); others are one numpy strided copy."""
    perms = attrs.get("perms")
    if len(ib) != 1 or len(ob) != 1 or not isinstance(perms, tuple):
        return None
    xs = ib[0].shape
    if sorted(perms) != list(range(len(xs))) or ob[0].shape != tuple(xs[p] for p in perms):
        return None

    swap = _swapped_groups(xs, perms)
    lib = conv.native_lib() if swap is not None and np.dtype(ib[0].dtype).itemsize == 4 else None
    if lib is not None and swap is not None:
        p_, a_, b_ = swap
        threads = kernel_threads if p_ * a_ * b_ >= _PARALLEL_TRANSPOSE_MIN else (lambda: 1)
        fn = lib.nk_transpose32
        small = p_ * a_ * b_ < _NATIVE_TRANSPOSE_MIN  # called alone, numpy's copy costs less than the ctypes call

        def swapped(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray]) -> None:
            x, o = ins[0], outs[0]
            if small or not (x.flags.c_contiguous and o.flags.c_contiguous):
                np.copyto(o, x.transpose(perms))
                return
            fn(x.ctypes.data, o.ctypes.data, p_, a_, b_, threads())

        def bind(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray]) -> Bound | None:
            x, o = ins[0], outs[0]
            if not (x.flags.c_contiguous and o.flags.c_contiguous):
                return None
            nt = 0 if p_ * a_ * b_ >= _PARALLEL_TRANSPOSE_MIN else 1
            return Bound([(address(lib.nk_transpose32_b), slots(x.ctypes.data, o.ctypes.data, p_, a_, b_, nt))])

        return NativeFn(swapped, bind)

    lib = conv.native_lib() if np.dtype(ib[0].dtype).itemsize == 4 and 1 < len(xs) <= 8 else None
    if lib is not None and perms[-1] == len(xs) - 1 and xs[-1] >= _PERMUTE_MIN_ROW:
        # attention's [N, H, heads, D] <-> [N, heads, H, D]
        strides = _strides(xs)
        return _strided_copy(lib, lambda x: x.transpose(perms), [xs[p] for p in perms], [strides[p] for p in perms], 0)
    last = ob[0].shape[-1] if ob[0].shape else 0
    if 1 < last <= _NARROW_LAST and perms[-1] != len(xs) - 1:
        # (Without the C transpose, or for other permutations.) A narrow innermost output axis taken from an
        # outer input axis (NCHW → NHWC with C = 3): numpy's
        # strided copy walks the input with a large stride for every element; one contiguous slab per
        # output channel is much faster (bench/RESULTS.md).
        def narrow(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray]) -> None:
            src, dst = ins[0].transpose(perms), outs[0]
            for k in range(last):
                np.copyto(dst[..., k], src[..., k])

        return narrow

    def run(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray]) -> None:
        np.copyto(outs[0], ins[0].transpose(perms))

    return run


def _strided_copy(lib: Any, view: Callable[[np.ndarray], np.ndarray], dims: Sequence[int], strides: Sequence[int],
                  offset: int) -> NativeFn:
    """``out = view(x)`` where ``view`` is a strided view of the 4-byte input (a permutation keeping the last axis, a
    SLICE box) as ``nk_permute32``: output dims ``dims`` read with element ``strides`` from element ``offset``, one
    memcpy per output row; bound into chains (numpy's copy when called alone on small tensors)."""
    d, st = np.array(dims, np.int64), np.array(strides, np.int64)
    total = math.prod(dims)
    small = total < _NATIVE_TRANSPOSE_MIN
    nt = 0 if total >= _PARALLEL_TRANSPOSE_MIN else 1

    def run(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray]) -> None:
        x, o = ins[0], outs[0]
        if small or not (x.flags.c_contiguous and o.flags.c_contiguous):
            np.copyto(o, view(x))
            return
        lib.nk_permute32(x.ctypes.data + 4 * offset, o.ctypes.data, len(dims), d.ctypes.data, st.ctypes.data,
                         kernel_threads() if nt == 0 else 1)

    def bind(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray]) -> Bound | None:
        x, o = ins[0], outs[0]
        if not (x.flags.c_contiguous and o.flags.c_contiguous):
            return None
        args = slots(x.ctypes.data + 4 * offset, o.ctypes.data, len(dims), d.ctypes.data, st.ctypes.data, nt)
        return Bound([(address(lib.nk_permute32_b), args)], [d, st])

    return NativeFn(run, bind)


def _strides(shape: Sequence[int]) -> list[int]:
    """C-order element strides of ``shape``."""
    return [math.prod(shape[k + 1:]) for k in range(len(shape))]


_BMM_ONE_THREAD_MAX_MACS = 1 << 25
"""Run-time products of at most this many multiply-adds use ``conv.native_bmm`` at one thread too: it beat OpenBLAS
on BERT's products up to this size and lost on BERT-base's larger ones at batch 8 (bench/RESULTS.md)."""
_PERMUTE_MIN_ROW = 16
"""Shortest kept last axis for ``nk_permute32`` (shorter rows: numpy)."""
_NARROW_LAST = 8
_NATIVE_TRANSPOSE_MIN = 1 << 14
"""Elements from which a two-group transpose called alone runs in C (below it numpy's copy costs less than the
call; bound into a chain, it always runs in C)."""
_PARALLEL_TRANSPOSE_MIN = 1 << 17


def _swapped_groups(shape: tuple[int, ...], perms: tuple[int, ...]) -> tuple[int, int, int] | None:
    """``(P, A, B)`` when ``perms`` keeps a leading run of axes and swaps the two groups after it (the input
    is then [P, A, B] and the output [P, B, A]: NHWC -> NCHW, NCHW -> NHWC, [.., M, N] -> [.., N, M]), else
    None (also when the last axis stays last: numpy copies whole rows then)."""
    n = len(perms)
    k = 0
    while k < n and perms[k] == k:
        k += 1
    if k >= n - 1:
        return None
    j = perms[k]  # the output starts with input axes j .. n-1, then k .. j-1
    if list(perms[k:]) != list(range(j, n)) + list(range(k, j)):
        return None
    return math.prod(shape[:k]), math.prod(shape[k:j]), math.prod(shape[j:])


def _slice(attrs: dict[str, Any], ib: Sequence[BufferDesc], ob: Sequence[BufferDesc]) -> PlainFn | None:
    """SLICE (spec §2.10.5): a copy of the box ``[start, start + size)`` (identical to the reference); for 4-byte
    elements bound into chains as ``nk_permute32`` over the box (a memcpy per row of the last axis)."""
    start, size = attrs.get("start"), attrs.get("size")
    if len(ib) != 1 or len(ob) != 1 or not isinstance(start, tuple) or not isinstance(size, tuple):
        return None
    xs = ib[0].shape
    if len(start) != len(xs) or len(size) != len(xs) or ob[0].shape != tuple(size) or not xs:
        return None
    if any(b < 0 or n < 1 or b + n > d for b, n, d in zip(start, size, xs)):
        return None
    box = tuple(slice(b, b + n) for b, n in zip(start, size))
    lib = conv.native_lib() if np.dtype(ib[0].dtype).itemsize == 4 and len(xs) <= 8 else None
    if lib is None:
        return lambda ins, outs: np.copyto(outs[0], ins[0][box])
    strides = _strides(xs)
    return _strided_copy(lib, lambda x: x[box], size, strides, sum(b * k for b, k in zip(start, strides)))


def _check_pool(name: str, attrs: dict[str, Any], ib: Sequence[BufferDesc], ob: Sequence[BufferDesc]) -> None:
    """A pooling task's geometry as TOSA's ERROR_IF rules allow it (spec §2.3.1, §2.3.6: positive kernel and stride,
    non-negative pads, NHWC operands with the same N and C, and the output size the window sweep gives), else a
    ``BlobError``: a blob cannot ask for a window of 2^24 rows over a 16-row input (work without bound)."""
    from nnkiln.errors import BlobError

    k, stride, pad = conv.ints(attrs.get("kernel"), 2), conv.ints(attrs.get("stride"), 2), conv.ints(attrs.get("pad"), 4)
    ok = k is not None and stride is not None and pad is not None and len(ib) == 1 and len(ob) == 1
    if ok:
        xs, os_ = ib[0].shape, ob[0].shape
        ok = (len(xs) == 4 and len(os_) == 4 and xs[0] == os_[0] and xs[3] == os_[3] and min(k) >= 1
              and min(stride) >= 1 and min(pad) >= 0 and k[0] <= xs[1] + pad[0] + pad[1]
              and k[1] <= xs[2] + pad[2] + pad[3]
              and os_[1] == conv.out_size(xs[1], k[0], stride[0], 1, pad[0], pad[1])
              and os_[2] == conv.out_size(xs[2], k[1], stride[1], 1, pad[2], pad[3]))
    if not ok:
        raise BlobError(f"{name}: kernel {attrs.get('kernel')}, stride {attrs.get('stride')}, pad {attrs.get('pad')} "
                        f"do not map {[d.shape for d in ib]} to {[d.shape for d in ob]}")


def _plain(name: str, attrs: dict[str, Any], ib: Sequence[BufferDesc],
           ob: Sequence[BufferDesc]) -> PlainFn | None:
    if name == "tosa.transpose":
        return _transpose(attrs, ib, ob)
    if name in ("tosa.max_pool2d", "tosa.avg_pool2d"):
        return conv.pool2d(name == "tosa.max_pool2d", attrs, ib, ob) or _pool(name == "tosa.max_pool2d", attrs, ib, ob)
    if name in ("tosa.reduce_sum", "tosa.reduce_max", "tosa.reduce_min"):
        return _reduce(name, attrs, ib, ob)
    if name in _BINARY and len(ib) == 2 and _broadcastable(ib, ob):
        fn = _BINARY[name]

        def binary(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray]) -> None:
            fn(ins[0], ins[1], out=outs[0])

        return binary
    if name == "tosa.mul" and len(ib) == 2 and not attrs.get("shift", 0) and _broadcastable(ib, ob):
        def mul(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray]) -> None:
            np.multiply(ins[0], ins[1], out=outs[0])

        return mul
    if name in _UNARY and len(ib) == 1 and len(ob) == 1 and ib[0].shape == ob[0].shape:
        ufn = _UNARY[name]

        def unary(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray]) -> None:
            with np.errstate(all="ignore"):
                ufn(ins[0], out=outs[0])

        return unary
    if name == "tosa.clamp" and len(ib) == 1 and len(ob) == 1 and ib[0].shape == ob[0].shape:
        bounds = clamp_bounds(attrs)
        if bounds is None:
            return None
        lo, hi = bounds

        def clamp(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray]) -> None:
            np.clip(ins[0], lo, hi, out=outs[0])

        return clamp
    return None


__all__ = ["ELEMENTWISE", "build", "clamp_bounds"]
