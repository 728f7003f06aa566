"""Fast integer kernels of quantized graphs: RESCALE, int8 CONV2D / DEPTHWISE_CONV2D / FULLY_CONNECTED, int8 / int16
MATMUL, CAST.

Why: run through the reference kernels (int64 numpy with every REQUIRE checked, then copied out) quantized
models ran an order of magnitude slower than onnxruntime, mostly in their int8 convolutions and RESCALEs
(bench/RESULTS.md). Integer results must stay the reference's bit for bit, so every path here is exact
integer arithmetic or provably exact float arithmetic:

* RESCALE: conv.c's ``nk_rescale``, the spec's apply_scale_32 / apply_scale_16 in 64-bit integers; where a
  value breaks one of their REQUIREs the reference kernel runs instead (its error names the rule).
  Multiplier and shift ranges are checked here once (else the reference runs every time);
* int8 DEPTHWISE_CONV2D (multiplier 1): ``nk_depthwise_i16``, int16 products summed in int32, same bound;
* int8 CONV2D / FULLY_CONNECTED (int32 accumulator): conv.c's ``nk_conv_i16``, int16 pairs multiplied and
  summed in int32 lanes (exact). Used only where no sum can leave int32 (``|x − x_zp| · |w − w_zp| · K +
  |bias| < 2^31``, from the operand types and the constant weights): the spec's REQUIRE on the accumulator
  cannot fire there, elsewhere the reference checks it;
* int8 / int16 MATMUL of run-time operands: a float GEMM is exact when every partial sum is an integer
  below the float's integer range (2^24 for float32, 2^53 for float64), which the operand types bound:
  float32 BLAS over k blocks short enough, summed in int64, else float64 BLAS; beyond 2^53 (or where the
  accumulator could overflow) the reference;
* CAST between 8/16/32-bit integers, bool and float32: numpy conversions that round as the reference does.

RESCALE and CAST also bind into chains (``kernels.bound``): ``nk_rescale_b`` (a value breaking a REQUIRE fails the
call and the chain runs the Python path, whose fallback reports it) and ``nk_cast`` (conv_int.c: the same
conversions element by element; tested bit for bit against the reference for every pair of types).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from nnkiln import native_header as header
from nnkiln.blob.format import BufferDesc
from nnkiln.kinds import Kind
from nnkiln.runtime.blas import kernel_threads
from nnkiln.runtime.kernels.bound import Bound, NativeFn, address, slots
from nnkiln.runtime.kernels.gemm import current_plan, gemm
from nnkiln.runtime.kernels.reference import call_reference, store

FastFn = Callable[[Sequence[np.ndarray], Sequence[np.ndarray], Sequence[np.ndarray]], None]
_KIND = header.enum("nk_kind")
_NK_KIND = {Kind.I8: _KIND["I8"], Kind.U8: _KIND["U8"], Kind.I16: _KIND["I16"], Kind.U16: _KIND["U16"],
            Kind.I32: _KIND["I32"], Kind.I48: _KIND["I64"]}
_PAR_MIN_ELEMENTS = 1 << 16
_PAR_MIN_MACS = 1 << 21
OPS = frozenset({"tosa.rescale", "tosa.conv2d", "tosa.depthwise_conv2d", "tosa.fully_connected", "tosa.matmul",
                 "tosa.cast"})


def _lib() -> Any:
    from nnkiln.runtime.kernels.conv import native_lib

    return native_lib()


def _reference(name: str, attrs: dict[str, Any], ib: Sequence[BufferDesc], ob: Sequence[BufferDesc]) -> FastFn:
    """The reference kernel writing into the outputs (the fallback of the fast paths)."""
    in_kinds, out_kinds = [b.kind for b in ib], [b.kind for b in ob]
    dtypes, shapes = [b.dtype for b in ob], [b.shape for b in ob]

    def run(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray], extras: Sequence[np.ndarray]) -> None:
        for o, r in zip(outs, call_reference(name, list(ins), attrs, in_kinds, out_kinds, dtypes, shapes)):
            store(o, r)

    return run


def build(name: str, attrs: dict[str, Any], ib: Sequence[BufferDesc], ob: Sequence[BufferDesc],
          consts: Sequence[np.ndarray | None]) -> FastFn | None:
    """``fn(ins, outs, extras)`` for an integer ``name`` on these operands, or None (the reference kernel runs)."""
    if len(ob) != 1:
        return None
    if name == "tosa.cast":
        return _cast(ib, ob)
    if any(b.kind not in _NK_KIND for b in (*ib, *ob)):
        return None
    if name == "tosa.rescale":
        return _rescale(attrs, ib, ob)
    if name in ("tosa.conv2d", "tosa.fully_connected"):
        return _conv(name, attrs, ib, ob, consts)
    if name == "tosa.depthwise_conv2d":
        return _depthwise(attrs, ib, ob, consts)
    if name == "tosa.matmul":
        return _matmul(attrs, ib, ob, consts)
    return None


def _rescale(attrs: dict[str, Any], ib: Sequence[BufferDesc], ob: Sequence[BufferDesc]) -> FastFn | None:
    lib = _lib()
    if lib is None or len(ib) != 1 or ib[0].shape != ob[0].shape:
        return None
    scale32, per_channel = bool(attrs.get("scale32", False)), bool(attrs.get("per_channel", False))
    mult = np.asarray(attrs.get("multiplier", ()), np.int64).reshape(-1)
    shift = np.asarray(attrs.get("shift", ()), np.int64).reshape(-1)
    c = ob[0].shape[-1] if ob[0].shape else 1
    if not per_channel:
        mult, shift = mult[:1], shift[:1]
    if (mult.size != (c if per_channel else 1) or shift.size != mult.size or mult.min() < 0
            or mult.max() > (2**31 - 1 if scale32 else 2**15 - 1) or shift.min() < 2 or shift.max() > 62):
        return None  # a REQUIRE on the attributes: the reference reports it
    lo, hi = ob[0].kind.int_range
    izp, ozp = int(attrs.get("input_zp", 0)), int(attrs.get("output_zp", 0))
    n = int(np.prod(ob[0].shape, dtype=np.int64))
    ik, ok = _NK_KIND[ib[0].kind], _NK_KIND[ob[0].kind]
    parallel = n >= _PAR_MIN_ELEMENTS
    fallback = _reference("tosa.rescale", attrs, ib, ob)
    fn = lib.nk_rescale
    mp, sp = mult.ctypes.data, shift.ctypes.data

    def run(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray], extras: Sequence[np.ndarray]) -> None:
        x, o = ins[0], outs[0]
        if not (x.flags.c_contiguous and o.flags.c_contiguous):
            fallback(ins, outs, extras)
            return
        if fn(x.ctypes.data, ik, o.ctypes.data, ok, n, c, mp, sp, int(per_channel), izp, ozp, int(scale32),
              int(bool(attrs.get("double_round", False))), lo, hi, kernel_threads() if parallel else 1):
            fallback(ins, outs, extras)  # a value breaks a REQUIRE: the reference raises its error

    def bind(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray], extras: Sequence[np.ndarray]) -> Bound | None:
        """``nk_rescale`` in a chain; a value breaking a REQUIRE fails the call, and as the input is intact (no
        overlap with the output) the chain runs ``run``, whose fallback reports it."""
        x, o = ins[0], outs[0]
        if not (x.flags.c_contiguous and o.flags.c_contiguous) or np.shares_memory(x, o):
            return None
        args = slots(x.ctypes.data, ik, o.ctypes.data, ok, n, c, mp, sp, int(per_channel), izp, ozp, int(scale32),
                     int(bool(attrs.get("double_round", False))), lo, hi, 0 if parallel else 1)
        return Bound([(address(lib.nk_rescale_b), args)], [mult, shift], clean_failure=True)

    return NativeFn(run, bind)


def _int8_operands(ib: Sequence[BufferDesc], ob: Sequence[BufferDesc], consts: Sequence[np.ndarray | None]) -> bool:
    """int8 input and constant int8 weights, constant int32 bias, int32 result (the fast window kernels' case)."""
    return (len(ib) == 3 and ib[0].kind is Kind.I8 and ib[1].kind is Kind.I8 and ib[2].kind is Kind.I32
            and ob[0].kind is Kind.I32 and consts[1] is not None and consts[2] is not None)


def _zps_bias(attrs: dict[str, Any], consts: Sequence[np.ndarray | None], n: int) -> tuple[int, int, np.ndarray]:
    """(input zero point, weight zero point, the constant bias as ``n`` contiguous int32) of an int8 convolution."""
    bias = np.ascontiguousarray(np.broadcast_to(np.asarray(consts[2], np.int32).reshape(-1), (n,)))
    return int(attrs.get("input_zp", 0)), int(attrs.get("weight_zp", 0)), bias


def _sums_fit(izp: int, wi: np.ndarray, bias: np.ndarray, axis: int) -> bool:
    """Whether int16 holds ``x - izp`` (x int8) and the weights ``wi`` (zero point removed), and no sum of products
    over ``axis`` of ``wi`` plus the bias can leave int32 (then the spec's accumulator REQUIRE cannot fire)."""
    xmax = max(abs(-128 - izp), abs(127 - izp))
    if xmax > 32767 or (wi.size and int(np.abs(wi).max()) > 32767):
        return False  # zero points outside int8
    wsum = int(np.abs(wi).sum(axis=axis).max()) if wi.size else 0
    return xmax * wsum + int(np.abs(bias.astype(np.int64)).max(initial=0)) < 2**31


def _conv(name: str, attrs: dict[str, Any], ib: Sequence[BufferDesc], ob: Sequence[BufferDesc],
          consts: Sequence[np.ndarray | None]) -> FastFn | None:
    """int8 CONV2D (NHWC, weights [OC, KH, KW, IC]) or FULLY_CONNECTED ([N, IC] x [OC, IC]) with constant weights
    and bias, int32 result: nk_conv_i16."""
    from nnkiln.runtime.kernels.conv import tap_segments, window_geometry

    lib = _lib()
    if lib is None or not _int8_operands(ib, ob, consts):
        return None
    w = np.asarray(consts[1])
    if name == "tosa.fully_connected":
        if len(ib[0].shape) != 2 or w.ndim != 2 or ob[0].shape != (ib[0].shape[0], w.shape[0]):
            return None
        rows, ic = ib[0].shape
        oc, kh, kw = w.shape[0], 1, 1
        geo: tuple[int, ...] | None = (1, 1, rows, ic, 1, rows, 1, 1, 1, 1, 0, 0, 0, 0)
    else:
        if w.ndim != 4:
            return None
        oc, kh, kw, _ = w.shape
        geo = window_geometry(attrs, ib[0].shape, kh, kw)
    if geo is None:
        return None
    n, ih, iw, ic, oh, ow, sy, sx, dy, dx, pt, pb, pl, pr = geo
    if w.shape[-1] != ic or (name == "tosa.conv2d" and ob[0].shape != (n, oh, ow, oc)):
        return None
    izp, wzp, bias = _zps_bias(attrs, consts, oc)
    k = kh * kw * ic
    if not _sums_fit(izp, w.reshape(oc, k).astype(np.int64) - wzp, bias, 1):
        return None  # the reference checks the REQUIRE
    hp, wp = ih + pt + pb, iw + pl + pr
    toff, seg = tap_segments(kh, kw, dy, dx, wp, ic)
    ntaps = toff.size
    sege = seg + (seg & 1)
    panels = -(-oc // 16)
    bp = np.empty(panels * ntaps * sege * 16, np.int16)
    wc = np.ascontiguousarray(w.reshape(oc, k), np.int8)
    lib.nk_pack_weights_i16(wc.ctypes.data, oc, ntaps, seg, wzp, bp.ctypes.data)
    parallel = n * oh * ow * oc * k >= _PAR_MIN_MACS

    def conv(xp: int, out: int, nt: int) -> None:
        lib.nk_conv_i16(xp, n, hp, wp, ic, oh, ow, sy, sx, toff.ctypes.data, ntaps, seg, bp.ctypes.data, oc,
                        bias.ctypes.data, out, nt)

    return _on_padded_input(lib, (n, ih, iw, ic, izp, pt, pb, pl, pr), parallel, conv,
                            _reference(name, attrs, ib, ob), (toff, bp, bias))


def _on_padded_input(lib: Any, pad: tuple[int, ...], parallel: bool, kernel: Callable[[int, int, int], None],
                     fallback: FastFn, keep: tuple[np.ndarray, ...]) -> FastFn:
    """``fn(ins, outs, extras)``: the int8 input ``ins[0]`` copied minus its zero point into the thread's reused
    scratch buffer as int16 with zero borders (``nk_pad_i8_i16``; ``pad`` = n, ih, iw, c, zero point, pt, pb, pl,
    pr), then ``kernel(padded address, output address, threads)``; the reference for non-contiguous views."""
    from nnkiln.runtime.kernels.conv import scratch

    n, ih, iw, c, zp, pt, pb, pl, pr = pad
    elems = n * (ih + pt + pb) * (iw + pl + pr) * c + 2
    pad_fn = lib.nk_pad_i8_i16

    def run(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray], extras: Sequence[np.ndarray]) -> None:
        x, o = ins[0], outs[0]
        if not (x.flags.c_contiguous and o.flags.c_contiguous):
            fallback(ins, outs, extras)
            return
        nt = kernel_threads() if parallel else 1
        xp = scratch(-(-elems // 2)).ctypes.data  # a float32 buffer holding the int16 values
        pad_fn(x.ctypes.data, n, ih, iw, c, zp, xp, pt, pb, pl, pr, nt)
        kernel(xp, o.ctypes.data, nt)

    run.keep = keep  # type: ignore[attr-defined]
    return run


def _depthwise(attrs: dict[str, Any], ib: Sequence[BufferDesc], ob: Sequence[BufferDesc],
               consts: Sequence[np.ndarray | None]) -> FastFn | None:
    """int8 DEPTHWISE_CONV2D with channel multiplier 1 (weights [KH, KW, C, 1]), constant weights and bias, int32
    result: nk_depthwise_i16 on the zero-bordered int16 input."""
    from nnkiln.runtime.kernels.conv import window_geometry

    lib = _lib()
    if lib is None or not _int8_operands(ib, ob, consts):
        return None
    w = np.asarray(consts[1])
    if w.ndim != 4 or w.shape[3] != 1:
        return None
    kh, kw, wc, _ = w.shape
    geo = window_geometry(attrs, ib[0].shape, kh, kw)
    if geo is None:
        return None
    n, ih, iw, c, oh, ow, sy, sx, dy, dx, pt, pb, pl, pr = geo
    if wc != c or ob[0].shape != (n, oh, ow, c):
        return None
    izp, wzp, bias = _zps_bias(attrs, consts, c)
    wi = w.reshape(kh * kw, c).astype(np.int64) - wzp
    if not _sums_fit(izp, wi, bias, 0):
        return None  # the reference checks the REQUIRE
    w16 = np.ascontiguousarray(wi.astype(np.int16))
    hp, wp = ih + pt + pb, iw + pl + pr
    parallel = n * oh * ow * c * kh * kw >= _PAR_MIN_MACS // 4

    def depthwise(xp: int, out: int, nt: int) -> None:
        lib.nk_depthwise_i16(xp, n, hp, wp, c, w16.ctypes.data, kh, kw, bias.ctypes.data, out, oh, ow, sy, sx, dy, dx,
                             nt)

    return _on_padded_input(lib, (n, ih, iw, c, izp, pt, pb, pl, pr), parallel, depthwise,
                            _reference("tosa.depthwise_conv2d", attrs, ib, ob), (w16, bias))


def _matmul(attrs: dict[str, Any], ib: Sequence[BufferDesc], ob: Sequence[BufferDesc],
            consts: Sequence[np.ndarray | None]) -> FastFn | None:
    """int8 x int8 -> int32 / int16 x int16 -> int48 MATMUL by exact float GEMMs (see the module docstring). The
    bound on the terms comes from the operands' actual values (a run-time minimum and maximum: a u8 activation
    widened to int16 keeps |a| <= 255), so int16 products of 8-bit data still run in float32."""
    if len(ib) != 2 or ib[0].kind is not ib[1].kind or ib[0].kind not in (Kind.I8, Kind.I16):
        return None
    a, b, o = ib[0].shape, ib[1].shape, ob[0].shape
    if len(a) != 3 or len(b) != 3 or a[0] != b[0] or a[2] != b[1] or o != (a[0], a[1], b[2]) or 0 in (*a, *b):
        return None
    azp, bzp = int(attrs.get("A_zp", 0)), int(attrs.get("B_zp", 0))
    k = a[2]
    acc_hi = ob[0].kind.int_range[1]
    bconst = consts[1]
    if bconst is not None:
        bi = np.asarray(bconst).astype(np.int64) - bzp
        b_static = (int(np.abs(bi).max()), bi.astype(np.float32), bi.astype(np.float64))
    fallback = _reference("tosa.matmul", attrs, ib, ob)
    small = current_plan().small_flops  # OpenBLAS's threads only for products large enough (kernels.gemm)

    def run(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray], extras: Sequence[np.ndarray]) -> None:
        x, y = ins
        amax = max(abs(int(x.min()) - azp), abs(int(x.max()) - azp))
        bmax = b_static[0] if bconst is not None else max(abs(int(y.min()) - bzp), abs(int(y.max()) - bzp))
        term = amax * bmax
        if term * k > acc_hi:  # a partial sum could overflow: the reference checks the REQUIRE
            fallback(ins, outs, extras)
            return
        block = (2**24 - 1) // term if term else k  # float32 sums of this many terms are exact
        dt = np.float32 if block >= min(k, 64) else np.float64
        xf = x.astype(dt)
        if azp:
            xf -= azp
        if bconst is not None:
            yf = b_static[1] if dt is np.float32 else b_static[2]
        else:
            yf = y.astype(dt)
            if bzp:
                yf -= bzp
        prod = np.empty(o, dt)
        if dt is np.float64 or block >= k:  # one GEMM: every partial sum exact
            gemm(xf, yf, prod, small)
            np.copyto(outs[0], prod, casting="unsafe")
            return
        acc = np.zeros(o, np.int64)
        for k0 in range(0, k, block):
            gemm(xf[:, :, k0:k0 + block], yf[:, k0:k0 + block], prod, small)
            acc += prod.astype(np.int64)
        np.copyto(outs[0], acc, casting="unsafe")

    return run


_CAST_KIND = {k: _KIND[k.name] for k in (Kind.I8, Kind.U8, Kind.I16, Kind.I32, Kind.BOOL, Kind.F32)}


def _cast(ib: Sequence[BufferDesc], ob: Sequence[BufferDesc]) -> FastFn | None:
    """CAST's numpy path (``_numpy_cast``) with ``nk_cast`` (the same conversions, element by element) as its bound
    form in chains."""
    fn = _numpy_cast(ib, ob)
    lib = _lib()
    if fn is None or lib is None:
        return fn
    sk, dk = _CAST_KIND[ib[0].kind], _CAST_KIND[ob[0].kind]
    n = int(np.prod(ob[0].shape, dtype=np.int64))

    def bind(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray], extras: Sequence[np.ndarray]) -> Bound | None:
        x, o = ins[0], outs[0]
        if not (x.flags.c_contiguous and o.flags.c_contiguous) or np.shares_memory(x, o):
            return None
        return Bound([(address(lib.nk_cast_b), slots(x.ctypes.data, sk, o.ctypes.data, dk, n))])

    return NativeFn(fn, bind)


def _numpy_cast(ib: Sequence[BufferDesc], ob: Sequence[BufferDesc]) -> FastFn | None:
    """CAST between int8 / uint8 / int16 / int32 / bool / float32 with the reference's results (spec §2.13.1, see
    ``reference.type_conversion``): int -> int wraps (numpy's unsafe cast), int -> float32 rounds half to even
    (numpy's conversion; exact below 2^24), -> bool is ``!= 0``, float32 -> int rounds half to even, NaN -> 0,
    then saturates (in float64 for int32, whose bounds float32 cannot hold)."""
    if len(ib) != 1 or ib[0].shape != ob[0].shape:
        return None
    src, dst = ib[0].kind, ob[0].kind
    simple = {Kind.I8, Kind.U8, Kind.I16, Kind.I32, Kind.BOOL}
    if dst is Kind.BOOL and src in simple | {Kind.F32}:
        return lambda ins, outs, extras: np.not_equal(ins[0], 0, out=outs[0])
    if src in simple and dst in simple | {Kind.F32}:
        return lambda ins, outs, extras: np.copyto(outs[0], ins[0], casting="unsafe")
    if src is Kind.F32 and dst in (Kind.I8, Kind.U8, Kind.I16, Kind.I32):
        lo, hi = dst.int_range
        wide = np.float64 if dst is Kind.I32 else np.float32

        def f2i(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray], extras: Sequence[np.ndarray]) -> None:
            t = np.asarray(np.rint(ins[0].astype(wide, copy=wide is not np.float32)))  # rank 0: rint gives a scalar
            np.nan_to_num(t, copy=False, nan=0.0, posinf=np.inf, neginf=-np.inf)
            np.clip(t, lo, hi, out=t)
            np.copyto(outs[0], t, casting="unsafe")

        return f2i
    return None


__all__ = ["OPS", "build"]
