"""An expansion 1x1 CONV2D whose result only the next task, a DEPTHWISE_CONV2D, reads: one native kernel.

MobileNet-style blocks expand the channels with a 1x1 convolution (16 -> 96 at 112x112 in MobileNetV2: a 4.8 MB
tensor) that only the following depthwise convolution reads. Run as two kernels, the expanded tensor goes out
of the caches and comes back. ``nk_pwdw_f32`` (``native/conv_pwdw.c``) computes it band by band into a
thread's scratch instead, with the same tiles and rows as the two kernels: results are identical.

Measured on the 2-core AVX-512 EPYC, MobileNetV2 at batch 1, per-kernel times in the network (a timing runner
over the bound chain): the 112x112 expansion and its stride-2 depthwise took 0.63 + 0.28 ms there against
0.53 + 0.18 ms alone; fused, see ``MIN_BYTES``.

The blob is unchanged: its tasks, buffers and barriers stay as planned (the expanded buffer is simply not
written), so ``nnkiln inspect`` and the plan checker see the same plan. Conditions (``expansion_pairs``): one
executor queue; the 1x1 convolution has stride 1, no padding, constant float32 weights and bias, at most a
clamp after it; its output is an arena buffer read by nothing after the depthwise convolution, which has channel
multiplier 1, dilation 1, constant weights and bias and at most a clamp; the expanded tensor is at least
``MIN_BYTES`` (below that it stays in cache anyway, and the split of small images between threads would compute
too many rows twice). When the plan put the output over the 1x1 convolution's input (the bands read one while
writing the other), the input is first copied into the unused expanded buffer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from nnkiln.blob.format import BufferDesc, Memory, TaskDesc
from nnkiln.kinds import Kind
from nnkiln.runtime.blas import kernel_threads
from nnkiln.runtime.kernels import _live_after, _region
from nnkiln.runtime.kernels.bound import Bound, address, contiguous_f32, slots
from nnkiln.runtime.kernels.conv import _channel_vector, native_lib, packed_conv_weights, window_geometry
from nnkiln.runtime.kernels.epilogue import clamp_bounds
from nnkiln.runtime.native import header

MIN_BYTES = 4 << 20
"""Smallest expanded tensor (bytes) worth fusing. Measured on MobileNetV2 at batch 1, 1 thread (per-kernel times
in the network, both orders of two interleaved executables): the 112x112x96 expansion (4.8 MB) 1.10 -> 0.82 ms
with its depthwise; the 56x56x144 ones (1.8 MB, stride 1 and 2) gained nothing and slowed the layers after them,
fused they were 0.1 ms slower in all."""

_F32 = np.float32


def _clamp_only(task: TaskDesc) -> tuple[float, float] | None | bool:
    """The clamp bounds of a task whose post-ops are at most one clamp, None for no post-op, False otherwise."""
    posts = list(task.args.get("post_ops", ()))
    if not posts:
        return None
    if len(posts) == 1 and posts[0]["kernel"] == "tosa.clamp" and posts[0].get("operand") is None:
        b = clamp_bounds(posts[0].get("attrs", {}))
        if b is not None:
            return float(b[0]), float(b[1])
    return False


def _expansion(pw: TaskDesc, dw: TaskDesc, i: int, tasks: Sequence[TaskDesc], buffers: Sequence[BufferDesc]
               ) -> tuple[int, ...] | None:
    """The geometry ``(n, h, w, ci, c, kh, kw, oh, ow, sy, sx, pt, pl, copy)`` when tasks ``i`` (``pw``) and
    ``i + 1`` (``dw``) can run fused, else None; ``copy``: x must first be copied aside (see below)."""
    if pw.kernel != "tosa.conv2d" or dw.kernel != "tosa.depthwise_conv2d" or len(pw.outs) != 1 or len(dw.outs) != 1:
        return None
    if len(pw.ins) != 3 or len(dw.ins) != 3 or dw.ins[0] != pw.outs[0]:
        return None
    x, w1, b1 = (buffers[k] for k in pw.ins)
    e, w2, b2 = (buffers[k] for k in dw.ins)
    out = buffers[dw.outs[0]]
    if any(b.kind is not Kind.F32 for b in (x, w1, b1, e, w2, b2, out)):
        return None
    if any(b.memory is not Memory.CONSTANT for b in (w1, b1, w2, b2)) or e.memory is not Memory.ARENA:
        return None
    a1, a2 = pw.args.get("attrs", {}), dw.args.get("attrs", {})
    if any(a1.get(z, 0) or a2.get(z, 0) for z in ("input_zp", "weight_zp")):
        return None
    if _clamp_only(pw) is False or _clamp_only(dw) is False:
        return None
    if len(x.shape) != 4 or len(w1.shape) != 4 or len(w2.shape) != 4:
        return None
    n, h, w, ci = x.shape
    c = w1.shape[0]
    if w1.shape != (c, 1, 1, ci) or e.shape != (n, h, w, c) or b1.shape not in ((c,), (1,)):
        return None
    if tuple(a1.get("pad", ())) != (0, 0, 0, 0) or tuple(a1.get("stride", ())) != (1, 1) \
            or tuple(a1.get("dilation", ())) != (1, 1):
        return None
    kh, kw, c2, m = w2.shape
    if c2 != c or m != 1 or b2.shape not in ((c,), (1,)):
        return None
    geo = window_geometry(a2, e.shape, kh, kw)
    if geo is None:
        return None
    _, _, _, _, oh, ow, sy, sx, dy, dx, pt, _, pl, _ = geo
    if (dy, dx) != (1, 1) or out.shape != (n, oh, ow, c) or e.size < MIN_BYTES:
        return None
    if _live_after(_region(e), i + 1, tasks, buffers, True):
        return None
    # The bands interleave reading x and writing the output, but the plan may have put the output where x was
    # (dead once the 1x1 convolution is done, when the two run apart): then x is first copied into the expanded
    # buffer, unused otherwise, live during both tasks (so apart from x and the output), and larger than x.
    rx, ry, re_ = _region(x), _region(out), _region(e)
    copy = _overlap(rx, ry)
    if copy and (_overlap(re_, rx) or _overlap(re_, ry) or e.size < x.size):
        return None
    return n, h, w, ci, c, kh, kw, oh, ow, sy, sx, pt, pl, int(copy)


def _overlap(a: tuple[Any, int, int, int], b: tuple[Any, int, int, int]) -> bool:
    return a[:2] == b[:2] and a[2] < b[2] + b[3] and b[2] < a[2] + a[3]


class ExpansionDepthwise:
    """Tasks ``i`` (1x1 CONV2D) and ``i + 1`` (DEPTHWISE_CONV2D) as one unit: ``fn(views)``, ``bind(views)``."""

    def __init__(self, i: int, geo: tuple[int, ...], tasks: Sequence[TaskDesc], buffers: Sequence[BufferDesc],
                 static: Sequence[np.ndarray | None]):
        self.tasks = [i, i + 1]
        pw, dw = tasks[i], tasks[i + 1]
        self.geo = geo[:-1]
        self.copy = bool(geo[-1])
        n, h, w, ci, c, kh, kw, oh, ow, sy, sx, pt, pl = self.geo
        self.lib = native_lib()
        self.x, self.y, self.e = pw.ins[0], dw.outs[0], pw.outs[0]
        self.bp = packed_conv_weights(static[pw.ins[1]])  # type: ignore[arg-type]
        self.b1 = _channel_vector(static[pw.ins[2]], c)  # type: ignore[arg-type]
        self.w2 = np.ascontiguousarray(static[dw.ins[1]], _F32).reshape(kh, kw, c)  # type: ignore[arg-type]
        self.b2 = _channel_vector(static[dw.ins[2]], c)  # type: ignore[arg-type]
        self.post = []
        for t in (pw, dw):
            bounds = _clamp_only(t)
            prm = np.array(bounds if bounds else (0.0, 0.0), _F32)
            self.post.append((1 if bounds else 0, np.array([header.enum("nk_epi")["CLAMP"]], np.intc), prm))

    def _args(self, x: np.ndarray, y: np.ndarray, threads: int) -> list[int]:
        n, h, w, ci, c, kh, kw, oh, ow, sy, sx, pt, pl = self.geo
        (n1, c1, p1), (n2, c2, p2) = self.post
        return [x.ctypes.data, n, h, w, ci, self.bp.ctypes.data, c, self.b1.ctypes.data, n1, c1.ctypes.data,
                p1.ctypes.data, self.w2.ctypes.data, kh, kw, self.b2.ctypes.data, y.ctypes.data, oh, ow, sy, sx, pt,
                pl, n2, c2.ctypes.data, p2.ctypes.data, threads]

    def _aside(self, views: Sequence[np.ndarray | None]) -> np.ndarray:
        """Where x is copied to (the start of the expanded buffer) when it must be."""
        return views[self.e].reshape(-1)[:views[self.x].size].reshape(views[self.x].shape)  # type: ignore[union-attr]

    def __call__(self, views: Sequence[np.ndarray]) -> None:
        x, y = np.ascontiguousarray(views[self.x], _F32), views[self.y]
        if self.copy:
            aside = self._aside(views)
            np.copyto(aside, x)
            x = aside
        dst = y if y.flags.c_contiguous else np.empty(y.shape, _F32)
        if self.lib.nk_pwdw_f32(*self._args(x, dst, kernel_threads())):
            raise MemoryError("fused expansion + depthwise convolution: out of memory")
        if dst is not y:
            np.copyto(y, dst)

    def bind(self, views: Sequence[np.ndarray | None]) -> Bound | None:
        x, y = views[self.x], views[self.y]
        if x is None or y is None or not contiguous_f32(x, y):
            return None
        keep: list[Any] = [self.bp, self.b1, self.w2, self.b2, self.post]
        calls = []
        if self.copy:
            if views[self.e] is None or not contiguous_f32(views[self.e]):
                return None
            aside = self._aside(views)
            calls.append((address(self.lib.nk_copy_b), slots(x.ctypes.data, aside.ctypes.data, x.nbytes, 0)))
            x = aside
        calls.append((address(self.lib.nk_pwdw_f32_b), slots(*self._args(x, y, 0))))
        return Bound(calls, keep)


class TransposedInputConv:
    """Tasks ``i`` (TRANSPOSE NCHW -> NHWC, float32) and ``i + 1`` (a zero-padded CONV2D, the only reader of its
    result): bound, the convolution's padded copy of its input is made from the NCHW tensor directly
    (``nk_pad_nchw_f32``: one pass instead of the transpose and the copy; the same values). A network's NCHW input
    and its stem convolution: MobileNetV2's 224x224x3 took 73 + 72 us for the two passes in the network, at 1
    thread. Unbound (or when the convolution does not run as the padded C kernel), the two tasks run as they are."""

    def __init__(self, i: int, tasks: Sequence[TaskDesc], fns: Sequence[Any]):
        self.tasks = [i, i + 1]
        self.src = tasks[i].ins[0]
        self.first, self.conv = fns[i], fns[i + 1]
        self.lib = native_lib()

    def __call__(self, views: Sequence[np.ndarray]) -> None:
        self.first(views)
        self.conv(views)

    def bind(self, views: Sequence[np.ndarray | None]) -> Bound | None:
        src = views[self.src]
        conv_bind = getattr(self.conv, "bind", None)
        if src is None or conv_bind is None or not contiguous_f32(src):
            return None
        b = conv_bind(views)
        if b is None or not b.calls or b.calls[0][0] != address(self.lib.nk_pad_f32_b):
            return None
        args = b.calls[0][1].copy()
        args[0] = src.ctypes.data
        b.calls[0] = (address(self.lib.nk_pad_nchw_f32_b), args)
        return b


def _transposed_input(t: TaskDesc, c: TaskDesc, i: int, tasks: Sequence[TaskDesc], buffers: Sequence[BufferDesc]
                      ) -> bool:
    if t.kernel != "tosa.transpose" or c.kernel != "tosa.conv2d" or len(t.ins) != 1 or len(t.outs) != 1:
        return False
    if tuple(t.args.get("attrs", {}).get("perms", ())) != (0, 2, 3, 1) or t.args.get("post_ops") or not c.ins:
        return False
    x, o = buffers[t.ins[0]], buffers[t.outs[0]]
    if c.ins[0] != t.outs[0] or x.kind is not Kind.F32 or o.kind is not Kind.F32 or o.memory is not Memory.ARENA:
        return False
    if not any(c.args.get("attrs", {}).get("pad", ())) or _overlap(_region(x), _region(o)):
        return False
    return not _live_after(_region(o), i + 1, tasks, buffers, True)


def _pairs(parts: list[Any], make: Callable[[int], Any]) -> list[Any]:
    """``parts`` with every two consecutive tasks ``p, p + 1`` for which ``make(p)`` gives a unit replaced by it."""
    if native_lib() is None:
        return parts
    out: list[Any] = []
    k = 0
    while k < len(parts):
        p = parts[k]
        unit = make(p) if isinstance(p, int) and k + 1 < len(parts) and parts[k + 1] == p + 1 else None
        out.append(p if unit is None else unit)
        k += 1 if unit is None else 2
    return out


def expansion_pairs(parts: list[Any], tasks: Sequence[TaskDesc], buffers: Sequence[BufferDesc],
                    static: Sequence[np.ndarray | None]) -> list[Any]:
    """One queue's parts (task indices, row groups, ...) of a single-queue run with every fusable pair of
    consecutive tasks (see the module docstring) replaced by an ``ExpansionDepthwise``."""
    def make(p: int) -> ExpansionDepthwise | None:
        geo = _expansion(tasks[p], tasks[p + 1], p, tasks, buffers)
        return None if geo is None else ExpansionDepthwise(p, geo, tasks, buffers, static)

    return _pairs(parts, make)


def input_transposes(parts: list[Any], tasks: Sequence[TaskDesc], buffers: Sequence[BufferDesc], fns: Sequence[Any]
                     ) -> list[Any]:
    """One queue's parts of a single-queue run with each NCHW -> NHWC transpose that only feeds the next task, a
    zero-padded convolution, paired with it (``TransposedInputConv``)."""
    return _pairs(parts, lambda p: TransposedInputConv(p, tasks, fns)
                  if _transposed_input(tasks[p], tasks[p + 1], p, tasks, buffers) else None)


__all__ = ["MIN_BYTES", "ExpansionDepthwise", "TransposedInputConv", "expansion_pairs", "input_transposes"]
