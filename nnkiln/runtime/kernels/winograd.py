"""CONV2D 3x3, stride 1, dilation 1 by Winograd's minimal filtering F(2x2, 3x3) (``native/conv_wino.c``).

The 16 transformed weight matrices ``U[xi] = (G g G^T)[xi]`` ([IC, OC] each) are computed once at load time in
float64, rounded to float32 and packed into the GEMM's 16-column panels; every run pads the input (as the direct
kernel does), transforms 4x4 patches, runs 16 GEMMs and transforms back with the bias and fused post-ops.

When: the compiler chooses it (``select-kernel-variants`` writes ``variant = "winograd"`` into the task's attrs).
Error against a float64 convolution (max abs / max |y|): 3e-7 to 6e-7, the direct kernel's 1e-6 to 3e-6 (the
weights are transformed in float64; the transforms add and subtract values of the operands' magnitude).
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence

import numpy as np

from nnkiln.blob.format import BufferDesc
from nnkiln.runtime.blas import kernel_threads
from nnkiln.runtime.kernels.bound import Bound, NativeFn, address, contiguous_f32, slots
from nnkiln.runtime.kernels.epilogue import Epilogue
from nnkiln.runtime.kernels.gemm import current_plan

_G = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]])
def transformed_weights(w: np.ndarray) -> np.ndarray:
    """CONV2D weights [OC, 3, 3, IC] → ``U[xi] = G g G^T`` for xi = 4i + j, each [IC, OC] packed into panels
    (``conv.pack_gemm_weights``), one 64-byte aligned vector of 16 · ceil(OC/16) · IC · 16 floats."""
    from nnkiln.alloc import aligned_empty
    from nnkiln.blob.format import PANEL_WIDTH, pack_panels

    oc, _, _, ic = w.shape
    u = np.einsum("ik,oklc,jl->ijco", _G, w.astype(np.float64), _G).reshape(16, ic, oc).astype(np.float32)
    panels = -(-oc // PANEL_WIDTH)
    out = aligned_empty(16 * panels * ic * PANEL_WIDTH)
    per = panels * ic * PANEL_WIDTH
    for xi in range(16):
        pack_panels(u[xi], out=out[xi * per:(xi + 1) * per].reshape(panels, ic, PANEL_WIDTH))
    return out


def native_winograd(geo: tuple[int, ...], wconst: np.ndarray, epi: Epilogue | None, out: BufferDesc) -> NativeFn | None:
    """The C Winograd convolution for ``geo`` = (n, ih, iw, ic, oc, oh, ow, pt, pb, pl, pr) with constant weights
    ``wconst`` [OC, 3, 3, IC]; None without the native library."""
    from nnkiln.runtime.kernels.conv import NativeEpilogue, _channel_vector, finish_output, native_lib, scratch

    lib = native_lib()
    if lib is None:
        return None
    n, ih, iw, ic, oc, oh, ow, pt, pb, pl, pr = geo
    hp, wp = ih + pt + pb, iw + pl + pr
    work = int(lib.nk_wino_work_floats(n, oh, ow, ic, oc))
    pad_elems = n * hp * wp * ic
    padded = bool(pt or pb or pl or pr)
    u = current_plan().cached(wconst, "winograd", lambda: transformed_weights(np.asarray(wconst, np.float32)))
    nepi = NativeEpilogue(epi, out)

    def run(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray], extras: Sequence[np.ndarray]) -> None:
        x, _, b = ins
        nt = kernel_threads()
        buf = scratch(pad_elems * padded + work)
        xc = np.ascontiguousarray(x, np.float32)
        if padded:
            xp = buf[:pad_elems]
            lib.nk_pad_f32(xc.ctypes.data, n, ih, iw, ic, xp.ctypes.data, pt, pb, pl, pr, nt)
        else:
            xp = xc
        bias = _channel_vector(b, oc)
        o = outs[0]
        dst = o if o.flags.c_contiguous else np.empty(o.shape, np.float32)
        ptrs, keep = nepi.pointers(extras)
        wk = buf[pad_elems * padded:]
        rc = lib.nk_wino_f32(xp.ctypes.data, n, hp, wp, ic, oh, ow, u.ctypes.data, oc, bias.ctypes.data,
                             dst.ctypes.data, nepi.n, nepi.codes_p, nepi.prm_p, ptrs, wk.ctypes.data, nt)
        del keep
        finish_output(rc, "native conv2d (Winograd)", o, dst, epi, nepi, extras)

    def bind(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray], extras: Sequence[np.ndarray]) -> Bound | None:
        x, _, b = ins
        if not nepi.ok or not contiguous_f32(x, outs[0], *extras):
            return None
        bias = _channel_vector(b, oc)
        ptrs, keep = nepi.pointers(extras)
        calls, scratch_slots = [], []
        src = x.ctypes.data
        if padded:
            calls.append((address(lib.nk_pad_f32_b), slots(src, n, ih, iw, ic, 0, pt, pb, pl, pr, 0)))
            scratch_slots.append((0, 5))
            src = 0
        call = slots(src, n, hp, wp, ic, oh, ow, u.ctypes.data, oc, bias.ctypes.data, outs[0].ctypes.data, nepi.n,
                     nepi.codes_p, nepi.prm_p, ctypes.addressof(ptrs), 0, 0)
        calls.append((address(lib.nk_wino_f32_b), call))
        k = len(calls) - 1
        if padded:
            scratch_slots.append((k, 0))
        scratch_slots.append((k, 15, pad_elems * padded))
        return Bound(calls, [bias, u, nepi, ptrs, keep], scratch_slots, pad_elems * padded + work)

    return NativeFn(run, bind)


__all__ = ["native_winograd", "transformed_weights"]
