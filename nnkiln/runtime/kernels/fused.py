"""The ``fused.conv2d_depthwise`` kernel: an expansion 1x1 CONV2D and the DEPTHWISE_CONV2D that alone reads its
result, computed band by band without the expanded tensor leaving the caches (``nk_pwdw_f32``,
``native/conv_pwdw.c``, with the same tiles and rows as the two kernels: results are identical).

The compiler's ``fuse-expansion-depthwise`` pass decides where (``nnkiln.analysis.expansion_depthwise``); a task's
``ins`` are ``x, w1, b1, w2, b2`` (input, 1x1 weights and bias, depthwise weights and bias), its ``outs`` the
result and the expanded buffer (a scratch: x is copied into it first when ``attrs["copy"]``, because the plan
put the result over x); ``attrs`` hold each convolution's ``pad``/``stride``/``dilation`` (``pw_*``, ``dw_*``) and
its clamp bounds (``pw_clamp``, ``dw_clamp``: two floats, or none). ``expansion_geometry`` checks the shapes (the
planner and the runtime share it): a blob whose geometry does not hold is invalid.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from nnkiln import native_header as header
from nnkiln.blob.format import BufferDesc, Memory, TaskDesc
from nnkiln.blob.row_program import clamp_bounds
from nnkiln.errors import BlobError
from nnkiln.kinds import Kind
from nnkiln.runtime.blas import kernel_threads
from nnkiln.runtime.kernels.bound import Bound, address, contiguous_f32, slots
from nnkiln.runtime.kernels.conv import _channel_vector, native_lib, packed_conv_weights, window_geometry

_F32 = np.float32


def clamp_only(task: TaskDesc) -> tuple[float, float] | None | bool:
    """The clamp bounds of a task whose post-ops are at most one clamp, None for no post-op, False otherwise."""
    posts = list(task.args.get("post_ops", ()))
    if not posts:
        return None
    if len(posts) == 1 and posts[0]["kernel"] == "tosa.clamp" and posts[0].get("operand") is None:
        b = clamp_bounds(posts[0].get("attrs", {}))
        if b is not None:
            return float(b[0]), float(b[1])
    return False


def expansion_geometry(pw: TaskDesc, dw: TaskDesc, buffers: Sequence[BufferDesc]) -> tuple[int, ...] | None:
    """``(n, h, w, ci, c, kh, kw, oh, ow, sy, sx, pt, pl)`` when 1x1 CONV2D ``pw`` and DEPTHWISE_CONV2D ``dw`` (which
    reads ``pw``'s result) can run as one ``nk_pwdw_f32``: float32, constant weights and biases, no zero points, at
    most a clamp after each, stride 1 and no padding for ``pw``, channel multiplier 1 and dilation 1 for ``dw``."""
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
    if clamp_only(pw) is False or clamp_only(dw) is False:
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
    if (dy, dx) != (1, 1) or out.shape != (n, oh, ow, c):
        return None
    return n, h, w, ci, c, kh, kw, oh, ow, sy, sx, pt, pl


def split_tasks(task: TaskDesc) -> tuple[TaskDesc, TaskDesc]:
    """The 1x1 CONV2D and the DEPTHWISE_CONV2D a ``fused.conv2d_depthwise`` task computes."""
    a = task.args.get("attrs", {})
    x, w1, b1, w2, b2 = task.ins
    y, e = task.outs

    def conv(kernel: str, prefix: str, ins: tuple[int, ...], out: int) -> TaskDesc:
        attrs = {k: a.get(f"{prefix}_{k}", ()) for k in ("pad", "stride", "dilation")}
        bounds = tuple(a.get(f"{prefix}_clamp", ()))
        posts = [{"kernel": "tosa.clamp", "attrs": {"min_val": bounds[0], "max_val": bounds[1]}}] if bounds else []
        return TaskDesc(task.executor, task.executor_index, kernel, {"attrs": attrs, "post_ops": posts}, ins, (out,))

    return conv("tosa.conv2d", "pw", (x, w1, b1), e), conv("tosa.depthwise_conv2d", "dw", (e, w2, b2), y)


class ExpansionDepthwise:
    """A ``fused.conv2d_depthwise`` task: ``fn(views)``, ``bind(views)`` (see the module docstring)."""

    def __init__(self, task: TaskDesc, buffers: Sequence[BufferDesc], static: Sequence[np.ndarray | None]):
        if len(task.ins) != 5 or len(task.outs) != 2 or task.args.get("post_ops"):
            raise BlobError(f"invalid blob: {task.kernel} takes 5 inputs and 2 outputs, got {len(task.ins)} and "
                            f"{len(task.outs)}")
        pw, dw = split_tasks(task)
        geo = expansion_geometry(pw, dw, buffers)
        self.copy = bool(task.args.get("attrs", {}).get("copy", False))
        if geo is None or (self.copy and buffers[pw.outs[0]].size < buffers[pw.ins[0]].size):
            raise BlobError(f"invalid blob: {task.kernel}: the operands' shapes, kinds or attributes do not make an "
                            "expansion 1x1 convolution and a depthwise convolution")
        self.geo = geo
        n, h, w, ci, c, kh, kw, oh, ow, sy, sx, pt, pl = self.geo
        self.lib = native_lib()
        self.x, self.y, self.e = pw.ins[0], dw.outs[0], pw.outs[0]
        self.bp = packed_conv_weights(static[pw.ins[1]])  # type: ignore[arg-type]
        self.b1 = _channel_vector(static[pw.ins[2]], c)  # type: ignore[arg-type]
        self.w2 = np.ascontiguousarray(static[dw.ins[1]], _F32).reshape(kh, kw, c)  # type: ignore[arg-type]
        self.b2 = _channel_vector(static[dw.ins[2]], c)  # type: ignore[arg-type]
        self.post = []
        for t in (pw, dw):
            bounds = clamp_only(t)
            prm = np.array(bounds if bounds else (0.0, 0.0), _F32)
            self.post.append((1 if bounds else 0, np.array([header.enum("nk_epi")["CLAMP"]], np.intc), prm))
        if self.lib is None:  # no native library: the two convolutions as they are
            from nnkiln.runtime.kernels import build_task

            self._apart = [build_task(pw, buffers, static), build_task(dw, buffers, static)]

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
        if self.lib is None:
            for f in self._apart:
                f(views)
            return
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
        if self.lib is None or x is None or y is None or not contiguous_f32(x, y):
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


__all__ = ["ExpansionDepthwise", "clamp_only", "expansion_geometry", "split_tasks"]
