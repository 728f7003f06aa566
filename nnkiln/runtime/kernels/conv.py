"""Float32 CONV2D, DEPTHWISE_CONV2D (and MAX/AVG_POOL2D) fast paths, writing into the output view with
fused epilogues.

Native kernels first (``nnkiln/runtime/native/conv.c``, built at install time, loaded by ``runtime.native``;
see that file's header for the algorithms): CONV2D as an implicit GEMM over the zero-padded NHWC input
(no im2col; weights packed once at load time into 16-channel panels; 6x16 AVX2/FMA register tiles
summed from the bias, 6x32 over two panels with AVX-512; long K cut into L2-sized blocks),
DEPTHWISE_CONV2D row by row with the reference's sums in its order, as fused multiply-adds (within 1e-5
relative; 3x3 kernels with stride 1 or 2 load each input pixel once per kernel row), MAX/AVG_POOL2D with the
reference's float32 operations (identical results). Post-ops run in registers
before the store when every one has a C form (``NativeEpilogue``: CLAMP, ADD/SUB/MUL with a
full-shape or per-channel operand); otherwise the C kernel adds the bias and the Python ``Epilogue``
runs afterwards. Threads: ``blas.kernel_threads()`` (1 during multi-executor runs; the machine's
thread setting otherwise) are shared through the library's own pool (work items claimed from an
atomic counter: a busy core never stalls the caller; kernels below ``_PAR_MIN_FLOPS`` stay on one
thread). The implicit GEMM outran OpenBLAS via im2col on ResNet's 3x3 and MobileNetV2's 1x1 convolutions
(bench/RESULTS.md).

The numpy paths below are the fallback (``NNKILN_NO_NATIVE=1``, no C compiler), kept and tested:

CONV2D (spec §2.3.3) as GEMM ``[rows, KH·KW·IC] × [KH·KW·IC, OC]`` with ``np.matmul(out=)`` (``gemm``) into the
output view:
- 1x1, stride 1, no padding: the input itself is the left matrix (no copy at all), in row blocks of
  about 64 Ki output elements when the weights are small, so bias and epilogue run on L2-resident data;
- otherwise im2col: the input is copied into a zero-bordered padded image and a strided window view
  of it is copied into a column matrix. Both live in a per-thread scratch buffer reused by every
  kernel of that thread (no allocation per run). When the weights are small (≤ 640 KiB) the output
  is produced in blocks of whole output rows whose column block fits in L2 (≈ 384 KiB): im2col of a
  block, its GEMM and the epilogue (bias, then the fused post-ops) run while the block is in cache.
  Large weights (late layers, few rows) use one GEMM over all rows.
- weight matrix layout: the constant ``[OC, K]`` is used as its transpose view (no copy) when the
  GEMM has fewer rows than OC (measured faster for such shapes with OpenBLAS), otherwise a
  contiguous ``[K, OC]`` copy is made once at load time.
Numerics: accumulation order differs from the reference's per-tap sums (float32 results within 1e-5
relative). Decision: padded positions contribute ``0·w`` (the reference skips them; differs only for
non-finite weights).

DEPTHWISE_CONV2D (spec §2.3.5): per image and per tap (row-major, as the reference), multiply the
padded input's strided tap view by the tap's weights into a scratch image and add it to the output,
then add the bias: the reference's float32 operations in the reference's order (padded positions add
``0·w = ±0``, which leaves every finite sum unchanged). With channel multiplier 1 the views are 3-D
``[OH, OW, C]`` (a trailing size-1 axis would make numpy's inner loop one element long). Measured:
whole-image passes beat row blocks here (fewer numpy calls; the data is L2/L3 resident anyway).
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from nnkiln import native_header as header
from nnkiln.alloc import aligned_empty
from nnkiln.blob.format import BufferDesc
from nnkiln.errors import BlobError
from nnkiln.kinds import Kind
from nnkiln.runtime import native
from nnkiln.runtime.blas import kernel_threads
from nnkiln.runtime.kernels.bound import Bound, NativeFn, address, contiguous_f32, slots
from nnkiln.runtime.kernels.epilogue import Epilogue, clamp_bounds, operand_2d
from nnkiln.runtime.kernels.gemm import gemm, min_rows
from nnkiln.runtime.kernels.winograd import native_winograd

FastFn = Callable[[Sequence[np.ndarray], Sequence[np.ndarray], Sequence[np.ndarray]], None]
_F32 = np.float32
_tls = threading.local()
_BLOCK_BYTES = 384 * 1024
_SMALL_WEIGHTS = 640 * 1024
_DIRECT_BLOCK = 1 << 16
"""Output elements per row block of a 1x1 convolution with small weights (256 KiB: the epilogue runs in L2)."""




def scratch(n: int) -> np.ndarray:
    """A float32 buffer of at least ``n`` elements, private to this thread and reused across kernels."""
    buf = getattr(_tls, "buf", None)
    if buf is None or buf.size < n:
        buf = aligned_empty(max(n, 1), _F32)
        _tls.buf = buf
    return buf


def ints(v: Any, n: int) -> tuple[int, ...] | None:
    if not isinstance(v, (tuple, list)) or len(v) != n or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        return None
    return tuple(v)


def out_size(i: int, k: int, s: int, d: int, p0: int, p1: int) -> int:
    return (i - 1 + p0 + p1 - (k - 1) * d) // s + 1


def _pad_into(buf: np.ndarray, x: np.ndarray, pt: int, pb: int, pl: int, pr: int) -> np.ndarray:
    """``x`` (n, ih, iw, c) copied into ``buf`` with zero borders; returns the padded view."""
    n, ih, iw, c = x.shape
    hp, wp = ih + pt + pb, iw + pl + pr
    xp = buf[:n * hp * wp * c].reshape(n, hp, wp, c)
    if pt:
        xp[:, :pt] = 0
    if pb:
        xp[:, pt + ih:] = 0
    if pl:
        xp[:, pt:pt + ih, :pl] = 0
    if pr:
        xp[:, pt:pt + ih, pl + iw:] = 0
    xp[:, pt:pt + ih, pl:pl + iw] = x
    return xp


def _geometry(attrs: dict[str, Any]) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]] | None:
    pad, stride, dil = ints(attrs.get("pad"), 4), ints(attrs.get("stride"), 2), ints(attrs.get("dilation"), 2)
    if pad is None or stride is None or dil is None or min(stride) < 1 or min(dil) < 1 or min(pad) < 0:
        return None
    return pad, stride, dil


def use_native_conv(k: int, oc: int, rows: int) -> bool:
    """Whether CONV2D uses the C implicit-GEMM kernel when it is available (else im2col + BLAS): always,
    as it was at least as fast as OpenBLAS on every ResNet-18 / MobileNetV2 shape measured on the
    2-core AVX2 machine (a hook for targets where it is not)."""
    return True


def _bias_step(o: np.ndarray, b: np.ndarray) -> None:
    np.add(o, b, out=o)


# -- native kernels (nnkiln/runtime/native/conv.c) ----------------------------------------------------------

_P = ctypes.c_void_p
_PAR_MIN_FLOPS = 4e6
"""Kernels with less work than this (multiply-adds x 2) run on the calling thread only."""
_PAR_MIN_WEIGHT_BYTES = 1 << 20
"""Also threaded below ``_PAR_MIN_FLOPS`` when the weights are this large: a classifier's one-row product
(MobileNetV2's 1280 -> 1000, 5 MB) is bound by reading them, which two cores do faster."""
_EPI = header.enum("nk_epi")
_EPI_CODES = {f"tosa.{op.lower()}": tuple(_EPI[f"{op}_{cut}"] for cut in ("FULL", "CHAN", "SCAL"))
              for op in ("ADD", "SUB", "MUL")}
"""C post-op codes per operand cut: full (``p[offset]``), channel (``p[c]``), one number (``p[0]``)."""


def native_lib() -> native.Library | None:
    """The native library (``native.load()``: typed from ``nnkiln.h``), or None: the one place the kernels ask,
    so that tests can take the numpy paths by patching it."""
    return native.load()


class NativeEpilogue:
    """The post-ops of an ``Epilogue`` as the C kernels' op list (codes, parameters, operand slots),
    or ``ok = False`` when one of them has no C form (then the Python epilogue runs afterwards)."""

    def __init__(self, epi: Epilogue | None, out: BufferDesc):
        self.ok = True
        codes: list[int] = []
        prm: list[float] = []
        self.slots: list[int] = []  # index into the extras, per op (-1: none)
        spec = getattr(epi, "spec", None) if epi is not None else ([], [])
        if spec is None:
            self.ok = False
            spec = ([], [])
        posts, extras = spec
        k = 0
        for p in posts:
            name, attrs = p["kernel"], p.get("attrs", {})
            if p.get("operand") is not None:
                ex = extras[k] if k < len(extras) else None
                mode = operand_2d(ex.shape, out.shape) if ex is not None else None
                if (name not in _EPI_CODES or ex is None or ex.kind is not Kind.F32 or mode is None or mode == "row"
                        or (name == "tosa.mul" and attrs.get("shift", 0))):
                    self.ok = False
                    break
                scalar = mode == "channel" and ex.shape[-1] == 1 and out.shape[-1] != 1
                codes.append(_EPI_CODES[name][0 if mode == "full" else 2 if scalar else 1])
                prm += [0.0, 0.0]
                self.slots.append(k)
                k += 1
            elif name == "tosa.clamp" and clamp_bounds(attrs) is not None:
                lo, hi = clamp_bounds(attrs)  # type: ignore[misc]
                codes.append(_EPI["CLAMP"])
                prm += [float(lo), float(hi)]
                self.slots.append(-1)
            else:
                self.ok = False
                break
        if not self.ok:
            codes, prm, self.slots = [], [], []
        self.n = len(codes)
        self.codes = np.array(codes or [0], np.intc)
        self.prm = np.array(prm or [0.0, 0.0], np.float32)

        self.codes_p, self.prm_p = _ptr(self.codes), _ptr(self.prm)
        self._cached: tuple[list[np.ndarray | None], Any] | None = None

    def pointers(self, extras: Sequence[np.ndarray]) -> tuple[Any, list[np.ndarray | None]]:
        """The C array of operand pointers for one call (and the arrays to keep alive meanwhile);
        reused while the operands are the same array objects."""
        keep = [np.ascontiguousarray(extras[s], _F32) if s >= 0 else None for s in self.slots]
        c = self._cached
        if c is not None and all(a is b for a, b in zip(c[0], keep)):
            return c[1], keep
        arr = (_P * max(1, self.n))(*[a.ctypes.data if a is not None else None for a in keep])
        self._cached = (keep, arr)
        return arr, keep


def _ptr(a: np.ndarray) -> int:
    return a.ctypes.data


class _Ptrs:
    """Data addresses of a kernel's arguments, remembered per argument slot: arena and constant views
    are the same array objects on every run, and ``a.ctypes.data`` costs microseconds."""

    __slots__ = ("last",)

    def __init__(self, n: int):
        self.last: list[tuple[np.ndarray, int] | None] = [None] * n

    def __call__(self, i: int, a: np.ndarray) -> int:
        c = self.last[i]
        if c is not None and c[0] is a:
            return c[1]
        p = a.ctypes.data
        self.last[i] = (a, p)
        return p


def _channel_vector(b: np.ndarray, c: int) -> np.ndarray:
    if b.shape == (c,):
        return np.ascontiguousarray(b, _F32)
    return np.full(c, b.reshape(-1)[0], _F32)


def _native_depthwise(geo: tuple[int, ...], epi: Epilogue | None, out: BufferDesc) -> FastFn | None:
    lib = native_lib()
    if lib is None:
        return None
    n, ih, iw, c, m, kh, kw, oh, ow, sy, sx, dy, dx, pt, pl = geo
    parallel = 2.0 * n * oh * ow * c * m * kh * kw >= _PAR_MIN_FLOPS / 16  # memory-bound: split smaller jobs
    nepi = NativeEpilogue(epi, out)
    fn = lib.nk_depthwise_f32
    ptr = _Ptrs(4)

    def run(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray], extras: Sequence[np.ndarray]) -> None:
        x = np.ascontiguousarray(ins[0], _F32)
        w = np.ascontiguousarray(ins[1], _F32)
        b = _channel_vector(ins[2], c * m)
        o = outs[0]
        dst = o if o.flags.c_contiguous else np.empty(o.shape, _F32)
        ptrs, keep = nepi.pointers(extras)
        fn(ptr(0, x), n, ih, iw, c, m, ptr(1, w), kh, kw, ptr(2, b), ptr(3, dst), oh, ow, sy, sx, dy, dx, pt, pl,
           nepi.n, nepi.codes_p, nepi.prm_p, ptrs, kernel_threads() if parallel else 1)
        del keep
        if dst is not o:
            np.copyto(o, dst)
        if epi is not None and not nepi.ok:
            epi(o.reshape(-1, c * m), slice(None), extras)

    def bind(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray], extras: Sequence[np.ndarray]) -> Bound | None:
        x, w, b = ins
        if not nepi.ok or not contiguous_f32(x, w, outs[0], *extras):
            return None
        bias = _channel_vector(b, c * m)
        ptrs, keep = nepi.pointers(extras)
        args = slots(x.ctypes.data, n, ih, iw, c, m, w.ctypes.data, kh, kw, bias.ctypes.data, outs[0].ctypes.data, oh,
                     ow, sy, sx, dy, dx, pt, pl, nepi.n, nepi.codes_p, nepi.prm_p, ctypes.addressof(ptrs),
                     0 if parallel else 1)
        return Bound([(address(lib.nk_depthwise_f32_b), args)], [bias, nepi, ptrs, keep])

    return NativeFn(run, bind)


def tap_segments(kh: int, kw: int, dy: int, dx: int, wp: int, ic: int) -> tuple[np.ndarray, int]:
    """The implicit GEMM's taps over a padded NHWC input of row width ``wp``: (start offsets in elements, values per
    segment). With dx = 1 a kernel row's taps are one contiguous segment of kw*ic values, else each tap is one."""
    if dx == 1:
        return np.array([ky * dy * wp * ic for ky in range(kh)], np.dtype("l")), kw * ic
    return np.array([(ky * dy * wp + kx * dx) * ic for ky in range(kh) for kx in range(kw)], np.dtype("l")), ic


def window_geometry(attrs: dict[str, Any], xs: tuple[int, ...], kh: int, kw: int) -> tuple[int, ...] | None:
    """(n, ih, iw, c, oh, ow, sy, sx, dy, dx, pt, pb, pl, pr) of a 2-D window op (pad / stride / dilation attributes)
    with a kh x kw kernel over the NHWC input shape ``xs``, or None when the attributes or the output are invalid."""
    g = _geometry(attrs)
    if g is None or len(xs) != 4:
        return None
    (pt, pb, pl, pr), (sy, sx), (dy, dx) = g
    n, ih, iw, c = xs
    oh, ow = out_size(ih, kh, sy, dy, pt, pb), out_size(iw, kw, sx, dx, pl, pr)
    if oh < 1 or ow < 1:
        return None  # (oh - 1)·sy + (kh - 1)·dy < ih + pt + pb follows from out_size: the last window fits
    return n, ih, iw, c, oh, ow, sy, sx, dy, dx, pt, pb, pl, pr


def finish_output(rc: int, what: str, o: np.ndarray, dst: np.ndarray, epi: Epilogue | None, nepi: NativeEpilogue,
                  extras: Sequence[np.ndarray]) -> None:
    """After a C convolution into ``dst``: its error code, the copy into a non-contiguous output ``o`` and the
    post-ops the C code could not run."""
    if rc != 0:
        raise MemoryError(f"{what}: out of memory")
    if dst is not o:
        np.copyto(o, dst)
    if epi is not None and not nepi.ok:
        epi(o.reshape(-1, o.shape[-1]), slice(None), extras)


def _pack_conv(lib: Any, w: np.ndarray, oc: int, k: int) -> np.ndarray:
    wc = np.ascontiguousarray(w, _F32)
    bp = aligned_empty(-(-oc // 16) * k * 16)
    lib.nk_pack_weights(_ptr(wc), oc, k, _ptr(bp))
    return bp


def packed_conv_weights(w: np.ndarray) -> np.ndarray:
    """The constant convolution weights ``w`` ([OC, KH, KW, IC]) in ``nk_pack_weights``' panels, once per executable
    (``GemmPlan.cached``: the fused expansion kernel shares them); needs the native library."""
    from nnkiln.runtime.kernels.gemm import current_plan

    oc, k = w.shape[0], int(np.prod(w.shape[1:]))
    return current_plan().cached(w, "conv", lambda: _pack_conv(native_lib(), w, oc, k))


def _native_conv(geo: tuple[int, ...], wconst: np.ndarray | None, epi: Epilogue | None, out: BufferDesc,
                 bp_packed: np.ndarray | None = None) -> FastFn | None:
    """The C convolution for geometry ``geo``: weights ``bp_packed`` (``pack_gemm_weights``), else packed once from
    the constant ``wconst`` ([OC, ..., IC]), else from the run-time operand on every call."""
    lib = native_lib()
    if lib is None:
        return None
    n, ih, iw, ic, oc, kh, kw, oh, ow, sy, sx, dy, dx, pt, pb, pl, pr = geo
    k = kh * kw * ic
    padded = bool(pt or pb or pl or pr)
    hp, wp = ih + pt + pb, iw + pl + pr
    toff, seg = tap_segments(kh, kw, dy, dx, wp, ic)
    parallel = 2.0 * n * oh * ow * oc * k >= _PAR_MIN_FLOPS or 4 * oc * k >= _PAR_MIN_WEIGHT_BYTES
    nepi = NativeEpilogue(epi, out)
    conv_fn, pad_fn = lib.nk_conv_f32, lib.nk_pad_f32

    def packed(w: np.ndarray) -> np.ndarray:
        return _pack_conv(lib, w, oc, k)

    if bp_packed is None and wconst is not None:
        bp_packed = packed_conv_weights(wconst)
    bp_const = bp_packed
    ptr = _Ptrs(6)
    toff_p = _ptr(toff)

    def run(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray], extras: Sequence[np.ndarray]) -> None:
        x, w, b = ins
        bp = bp_const if bp_const is not None else packed(w)
        nt = kernel_threads() if parallel else 1
        if padded:  # the zero-bordered copy, in C (rows shared by the threads)
            xc = np.ascontiguousarray(x, _F32)
            xp = scratch(n * hp * wp * ic)
            pad_fn(ptr(4, xc), n, ih, iw, ic, ptr(5, xp), pt, pb, pl, pr, nt)
        else:
            xp = np.ascontiguousarray(x, _F32)
        bias = _channel_vector(b, oc)
        o = outs[0]
        dst = o if o.flags.c_contiguous else np.empty(o.shape, _F32)
        ptrs, keep = nepi.pointers(extras)
        rc = conv_fn(ptr(0, xp), n, hp, wp, ic, oh, ow, sy, sx, toff_p, toff.size, seg, ptr(1, bp), oc, ptr(2, bias),
                     ptr(3, dst), nepi.n, nepi.codes_p, nepi.prm_p, ptrs, nt)
        del keep
        finish_output(rc, "native conv2d", o, dst, epi, nepi, extras)

    def bind(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray], extras: Sequence[np.ndarray]) -> Bound | None:
        x, w, b = ins
        bp = bp_const
        if bp is None or not nepi.ok or not contiguous_f32(x, outs[0], *extras):
            return None
        bias = _channel_vector(b, oc)
        ptrs, keep = nepi.pointers(extras)
        nt = 0 if parallel else 1
        calls, scratch = [], []
        src = x.ctypes.data
        if padded:
            calls.append((address(lib.nk_pad_f32_b), slots(src, n, ih, iw, ic, 0, pt, pb, pl, pr, nt)))
            scratch = [(0, 5)]
            src = 0
        calls.append((address(lib.nk_conv_f32_b), slots(src, n, hp, wp, ic, oh, ow, sy, sx, toff_p, toff.size, seg,
                                                         bp.ctypes.data, oc, bias.ctypes.data, outs[0].ctypes.data,
                                                         nepi.n, nepi.codes_p, nepi.prm_p, ctypes.addressof(ptrs), nt)))
        if padded:
            scratch.append((1, 0))
        return Bound(calls, [bias, bp, toff, nepi, ptrs, keep], scratch, n * hp * wp * ic if padded else 0)

    return NativeFn(run, bind)


def pack_gemm_weights(w: np.ndarray, layout: str) -> np.ndarray:
    """A GEMM's constant weights as ``blob.format.pack_panels`` lays them out (the layout of
    ``nk_pack_weights``), 64-byte aligned: ``layout`` "nk" for FULLY_CONNECTED's [N, K], "kn" for MATMUL's
    [K, N]."""
    from nnkiln.blob.format import PANEL_WIDTH, pack_panels

    wkn = w.T if layout == "nk" else w
    k, n = wkn.shape
    panels = -(-n // PANEL_WIDTH)
    bp = aligned_empty(panels * k * PANEL_WIDTH)
    pack_panels(wkn, out=bp.reshape(panels, k, PANEL_WIDTH))
    return bp


def native_gemm(rows: int, k: int, n: int, bp: np.ndarray, epi: Epilogue | None, out: BufferDesc,
                wide_only: bool = True) -> FastFn | None:
    """``out[rows, n] = x[rows, k] · W + bias`` then the post-ops (FULLY_CONNECTED / MATMUL with constant weights,
    ``bp`` = ``pack_gemm_weights(W)``) as conv.c's implicit GEMM: a 1x1 convolution of one image of 1 x ``rows``
    pixels, bias and C-expressible post-ops in registers; ``fn((x, unused, bias), (out,), extras)``. Used where
    conv.c has its AVX-512 tiles (``native_gemm_available``; the plan is ``kernels.gemm.GemmPlan``), where it
    was faster than OpenBLAS plus a bias pass on BERT's products (bench/RESULTS.md); the AVX2 tiles were slower
    than OpenBLAS on BERT's products on the AVX2 machine (``wide_only``: then None; weights the blob already
    holds as panels run here on any tiles, as no second copy is needed)."""
    if rows < 1 or k < 1 or n < 1 or native_lib() is None or (wide_only and not native_gemm_available()):
        return None
    return _native_conv((1, 1, rows, k, n, 1, 1, 1, rows, 1, 1, 1, 1, 0, 0, 0, 0), None, epi, out, bp_packed=bp)


def native_bmm(batch: int, m: int, k: int, n: int) -> FastFn | None:
    """``out[b] = x[b] · y[b]`` for two run-time operands (MATMUL without zero points or post-ops) as conv.c's
    ``nk_bmm_f32``: each ``y[b]`` packed into panels (any strides), then the implicit GEMM tiles with the batches'
    work shared by the threads; ``x`` needs unit stride along k and a row stride that is a multiple of k (a
    transposed view of ``[m, heads, k]`` qualifies), else OpenBLAS runs it. Where conv.c has its AVX-512 tiles
    (``native_gemm_available``) only. Against OpenBLAS on attention's products (bench/RESULTS.md) it was faster
    at 2 threads and slower on large products at 1 thread (packing the right operand is a cost OpenBLAS does not
    have), so ``fast._matmul`` uses it when kernels may use several threads, and at one thread only for small
    products (``fast._BMM_ONE_THREAD_MAX_MACS``). Same products summed in k order with fused multiply-adds
    (identical outputs to OpenBLAS here)."""
    if min(batch, m, k, n) < 1 or not native_gemm_available():
        return None
    lib = native_lib()
    panels = -(-n // 16)
    need = batch * panels * k * 16 + panels * 16
    parallel = 2.0 * batch * m * k * n >= _PAR_MIN_FLOPS
    fn = lib.nk_bmm_f32

    def geometry(x: np.ndarray, y: np.ndarray, o: np.ndarray) -> tuple[int, ...] | None:
        xs, ys = x.strides, y.strides
        if (x.dtype != _F32 or y.dtype != _F32 or not o.flags.c_contiguous or o.dtype != _F32 or xs[2] != 4
                or xs[1] % (4 * k) or any(v % 4 for v in (*xs, *ys))):
            return None
        return xs[0] // 4, xs[1] // 4, ys[0] // 4, ys[1] // 4, ys[2] // 4

    def run(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray], extras: Sequence[np.ndarray]) -> None:
        x, y = ins
        o = outs[0]
        g = geometry(x, y, o)
        if g is None:
            gemm(x, y, o)
            return
        sab, sam, sbb, sbk, sbn = g
        buf = scratch(need)
        if fn(x.ctypes.data, sab, sam, y.ctypes.data, sbb, sbk, sbn, o.ctypes.data, batch, m, k, n, buf.ctypes.data,
              kernel_threads() if parallel else 1) != 0:
            raise MemoryError("native matmul: out of memory")

    def bind(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray], extras: Sequence[np.ndarray]) -> Bound | None:
        x, y = ins
        g = geometry(x, y, outs[0])
        if g is None:
            return None
        sab, sam, sbb, sbk, sbn = g
        args = slots(x.ctypes.data, sab, sam, y.ctypes.data, sbb, sbk, sbn, outs[0].ctypes.data, batch, m, k, n, 0,
                     0 if parallel else 1)
        return Bound([(address(lib.nk_bmm_f32_b), args)], [], [(0, 12)], need)

    return NativeFn(run, bind)


def native_gemm_available() -> bool:
    """conv.c is loaded and has its AVX-512 tiles (``nk_wide_tiles``)."""
    lib = native_lib()
    return lib is not None and bool(lib.nk_wide_tiles())


def conv2d(attrs: dict[str, Any], ib: Sequence[BufferDesc], ob: Sequence[BufferDesc],
           consts: Sequence[np.ndarray | None], epi: Epilogue | None) -> FastFn | None:
    if len(ib) != 3 or len(ob) != 1 or len(ib[1].shape) != 4:
        return None
    oc, kh, kw, wic = ib[1].shape
    geo = window_geometry(attrs, ib[0].shape, kh, kw)
    if geo is None:
        return None
    n, ih, iw, ic, oh, ow, sy, sx, dy, dx, pt, pb, pl, pr = geo
    pad = (pt, pb, pl, pr)
    if wic != ic or ob[0].shape != (n, oh, ow, oc) or ib[2].shape not in ((oc,), (1,)):
        return None
    k = kh * kw * ic
    rows = n * oh * ow
    wconst = consts[1]
    if attrs.get("variant") == "winograd":  # chosen by select-kernel-variants
        if wconst is None or (kh, kw, sy, sx, dy, dx) != (3, 3, 1, 1, 1, 1):
            raise BlobError(f"invalid blob: a tosa.conv2d with variant winograd must be 3x3, stride 1, dilation 1, "
                            f"with constant weights (got {kh}x{kw}, stride {sy}x{sx}, dilation {dy}x{dx})")
        wino = native_winograd((n, ih, iw, ic, oc, oh, ow, pt, pb, pl, pr), wconst, epi, ob[0])
        if wino is not None:
            return wino
    if use_native_conv(k, oc, rows):
        nat = _native_conv((n, ih, iw, ic, oc, kh, kw, oh, ow, sy, sx, dy, dx, pt, pb, pl, pr), wconst, epi, ob[0])
        if nat is not None:
            return nat
    wmat = None
    if wconst is not None:
        wmat = wconst.reshape(oc, k).T if rows < oc else np.ascontiguousarray(wconst.reshape(oc, k).T)
    direct = kh == kw == 1 and (sy, sx) == (1, 1) and not any(pad)
    hp, wp = ih + pt + pb, iw + pl + pr
    padded = any(pad)
    blocked = not direct and k * oc * 4 <= _SMALL_WEIGHTS and oh > 1
    block_rows = min(oh, max(1, _BLOCK_BYTES // (ow * k * 4), min_rows(2.0 * ow * k * oc)))
    direct_block = rows if k * oc * 4 > _SMALL_WEIGHTS else max(256, _DIRECT_BLOCK // oc, min_rows(2.0 * ic * oc))

    def window(xp: np.ndarray) -> np.ndarray:
        s0, s1, s2, s3 = xp.strides
        return np.lib.stride_tricks.as_strided(xp, (xp.shape[0], oh, ow, kh, kw, ic),
                                               (s0, s1 * sy, s2 * sx, s1 * dy, s2 * dx, s3), writeable=False)

    def run(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray], extras: Sequence[np.ndarray]) -> None:
        x, w, b = ins
        wm = wmat if wmat is not None else w.reshape(oc, k).T
        o2 = outs[0].reshape(rows, oc)
        if direct:
            x2 = x.reshape(rows, ic)
            for r0 in range(0, rows, direct_block):
                rs = slice(r0, min(rows, r0 + direct_block))
                blk = o2[rs]
                gemm(x2[rs], wm, blk)
                _bias_step(blk, b)
                if epi is not None:
                    epi(blk, rs, extras)
            return
        if blocked:
            pimg = hp * wp * ic if padded else 0
            buf = scratch(pimg + block_rows * ow * k)
            cols = buf[pimg:]
            for img in range(n):
                xi = x[img:img + 1]
                win = window(_pad_into(buf, xi, pt, pb, pl, pr) if padded else xi)[0]
                for r0 in range(0, oh, block_rows):
                    r1 = min(oh, r0 + block_rows)
                    c = cols[:(r1 - r0) * ow * k].reshape(r1 - r0, ow, kh, kw, ic)
                    np.copyto(c, win[r0:r1])
                    rs = slice((img * oh + r0) * ow, (img * oh + r1) * ow)
                    blk = o2[rs]
                    gemm(c.reshape(-1, k), wm, blk)
                    _bias_step(blk, b)
                    if epi is not None:
                        epi(blk, rs, extras)
            return
        pall = n * hp * wp * ic if padded else 0
        buf = scratch(pall + rows * k)
        xp = _pad_into(buf, x, pt, pb, pl, pr) if padded else x
        c = buf[pall:pall + rows * k].reshape(n, oh, ow, kh, kw, ic)
        np.copyto(c, window(xp))
        gemm(c.reshape(rows, k), wm, o2)
        _bias_step(o2, b)
        if epi is not None:
            epi(o2, slice(None), extras)

    return run


def depthwise(attrs: dict[str, Any], ib: Sequence[BufferDesc], ob: Sequence[BufferDesc],
              epi: Epilogue | None) -> FastFn | None:
    if len(ib) != 3 or len(ob) != 1 or len(ib[1].shape) != 4:
        return None
    kh, kw, wc, m = ib[1].shape
    geo = window_geometry(attrs, ib[0].shape, kh, kw)
    if geo is None:
        return None
    n, ih, iw, c, oh, ow, sy, sx, dy, dx, pt, pb, pl, pr = geo
    pad = (pt, pb, pl, pr)
    if wc != c or ob[0].shape != (n, oh, ow, c * m) or ib[2].shape not in ((c * m,), (1,)):
        return None
    nat = _native_depthwise((n, ih, iw, c, m, kh, kw, oh, ow, sy, sx, dy, dx, pt, pl), epi, ob[0])
    if nat is not None:
        return nat
    padded = any(pad)
    pimg = (ih + pt + pb) * (iw + pl + pr) * c if padded else 0
    taps = [(ky, kx, slice(ky * dy, ky * dy + (oh - 1) * sy + 1, sy), slice(kx * dx, kx * dx + (ow - 1) * sx + 1, sx))
            for ky in range(kh) for kx in range(kw)]

    def run(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray], extras: Sequence[np.ndarray]) -> None:
        x, w, b = ins
        out = outs[0]
        wt = w.reshape(kh, kw, c) if m == 1 else w
        buf = scratch(pimg + oh * ow * c * m)
        for img in range(n):
            xp = (_pad_into(buf, x[img:img + 1], pt, pb, pl, pr) if padded else x[img:img + 1])[0]
            o = out[img].reshape(oh, ow, c) if m == 1 else out[img].reshape(oh, ow, c, m)
            tmp = buf[pimg:pimg + o.size].reshape(o.shape)
            for i, (ky, kx, ys, xs_) in enumerate(taps):
                tap = xp[ys, xs_] if m == 1 else xp[ys, xs_, :, None]
                if i == 0:
                    np.multiply(tap, wt[ky, kx], out=o)
                else:
                    np.multiply(tap, wt[ky, kx], out=tmp)
                    np.add(o, tmp, out=o)
        o2 = out.reshape(n * oh * ow, c * m)
        _bias_step(o2, b)
        if epi is not None:
            epi(o2, slice(None), extras)

    return run


def pool_geometry(max_pool: bool, attrs: dict[str, Any], ib: Sequence[BufferDesc], ob: Sequence[BufferDesc]
                  ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]] | None:
    """(kernel, stride, pad) of a pooling op the fast kernels handle (one NHWC input and output, positive
    kernel and stride, no negative padding, zero points 0 for AVG_POOL2D), else None."""
    k, stride, pad = ints(attrs.get("kernel"), 2), ints(attrs.get("stride"), 2), ints(attrs.get("pad"), 4)
    if k is None or stride is None or pad is None or len(ib) != 1 or len(ob) != 1:
        return None
    if min(stride) < 1 or min(k) < 1 or min(pad) < 0:
        return None
    if not max_pool and (attrs.get("input_zp", 0) or attrs.get("output_zp", 0)):
        return None
    xs, os_ = ib[0].shape, ob[0].shape
    if len(xs) != 4 or len(os_) != 4 or xs[0] != os_[0] or xs[3] != os_[3]:
        return None
    return k, stride, pad


def pool2d(max_pool: bool, attrs: dict[str, Any], ib: Sequence[BufferDesc],
           ob: Sequence[BufferDesc]) -> Callable[[Sequence[np.ndarray], Sequence[np.ndarray]], None] | None:
    """MAX_POOL2D (spec §2.3.6) / AVG_POOL2D (spec §2.3.1) on float32 NHWC with the native kernel
    (``nk_pool2d_f32``: the taps inside the input in row-major order, numpy's NaN-propagating maximum
    resp. a float32 sum divided by the number of such taps: the reference's operations, identical
    results), or None (no native library, odd geometry, an average window with no input, zero points):
    then ``kernels.fast`` uses its numpy path."""
    geo = pool_geometry(max_pool, attrs, ib, ob)
    lib = native_lib()
    if geo is None or lib is None or ib[0].kind is not Kind.F32 or ob[0].kind is not Kind.F32:
        return None
    k, stride, pad = geo
    n, ih, iw, c = ib[0].shape
    oh, ow = ob[0].shape[1], ob[0].shape[2]
    (kh, kw), (sy, sx), (pt, pb, pl, pr) = k, stride, pad
    if (oh, ow) != (out_size(ih, kh, sy, 1, pt, pb), out_size(iw, kw, sx, 1, pl, pr)) or oh < 1 or ow < 1:
        return None

    def inside(i: int, kk: int, s: int, p: int, o: int) -> bool:  # every window holds an input position
        return all(min(i, q * s - p + kk) > max(0, q * s - p) for q in range(o))

    if not max_pool and not (inside(ih, kh, sy, pt, oh) and inside(iw, kw, sx, pl, ow)):
        return None  # a window with no input: the reference decides (division by zero)
    parallel = n * oh * ow * c * kh * kw >= _PAR_MIN_FLOPS / 4
    fn = lib.nk_pool2d_f32
    ptr = _Ptrs(2)

    def run(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray]) -> None:
        x = np.ascontiguousarray(ins[0], _F32)
        o = outs[0]
        dst = o if o.flags.c_contiguous else np.empty(o.shape, _F32)
        fn(ptr(0, x), n, ih, iw, c, ptr(1, dst), oh, ow, kh, kw, sy, sx, pt, pl, int(max_pool),
           kernel_threads() if parallel else 1)
        if dst is not o:
            np.copyto(o, dst)

    def bind(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray]) -> Bound | None:
        if not contiguous_f32(ins[0], outs[0]):
            return None
        args = slots(ins[0].ctypes.data, n, ih, iw, c, outs[0].ctypes.data, oh, ow, kh, kw, sy, sx, pt, pl,
                     int(max_pool), 0 if parallel else 1)
        return Bound([(address(lib.nk_pool2d_f32_b), args)])

    return NativeFn(run, bind)


def reduce_sum(attrs: dict[str, Any], ib: Sequence[BufferDesc], ob: Sequence[BufferDesc],
               epi: Epilogue | None) -> FastFn | None:
    """REDUCE_SUM of float32 over an axis followed by at least two contiguous values (``nk_reduce_sum_f32``:
    the rows added in numpy's order, identical results) with its post-ops fused (a global average pool's
    multiplication), or None (no native library, the innermost axis, which numpy sums pairwise, or a post-op
    without a C form): then ``kernels.fast`` uses numpy. Bindable, so the classifier head of a CNN joins the
    chain of native calls before it."""
    lib = native_lib()
    axis = attrs.get("axis")
    if (lib is None or len(ib) != 1 or len(ob) != 1 or not isinstance(axis, int) or ib[0].kind is not Kind.F32
            or ob[0].kind is not Kind.F32 or not 0 <= axis < len(ib[0].shape)):
        return None
    shape = ib[0].shape
    if ob[0].shape != tuple(1 if i == axis else d for i, d in enumerate(shape)):
        return None
    outer, n, inner = int(np.prod(shape[:axis])), shape[axis], int(np.prod(shape[axis + 1:]))
    nepi = NativeEpilogue(epi, ob[0])
    if inner < 2 or n < 1 or outer < 1 or (epi is not None and not nepi.ok):
        return None
    c = ob[0].shape[-1]
    fn = lib.nk_reduce_sum_f32
    ptr = _Ptrs(2)

    def run(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray], extras: Sequence[np.ndarray]) -> None:
        x = np.ascontiguousarray(ins[0], _F32)
        o = outs[0]
        dst = o if o.flags.c_contiguous else np.empty(o.shape, _F32)
        ptrs, keep = nepi.pointers(extras)
        fn(ptr(0, x), outer, n, inner, ptr(1, dst), c, nepi.n, nepi.codes_p, nepi.prm_p, ptrs)
        del keep
        if dst is not o:
            np.copyto(o, dst)

    def bind(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray], extras: Sequence[np.ndarray]) -> Bound | None:
        if not contiguous_f32(ins[0], outs[0], *extras):
            return None
        ptrs, keep = nepi.pointers(extras)
        args = slots(ins[0].ctypes.data, outer, n, inner, outs[0].ctypes.data, c, nepi.n, nepi.codes_p, nepi.prm_p,
                     ctypes.addressof(ptrs))
        return Bound([(address(lib.nk_reduce_sum_f32_b), args)], [nepi, ptrs, keep])

    return NativeFn(run, bind)


__all__ = ["conv2d", "depthwise", "packed_conv_weights", "pool2d", "reduce_sum", "scratch"]
