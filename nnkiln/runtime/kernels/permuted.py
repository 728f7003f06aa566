"""Kernels that read an operand through a permutation (a task's ``operand_perms``; the compiler's
``fold-transposes-into-operands`` writes them).

- ``tosa.matmul``: the fast GEMM (or the reference kernel) gets the transposed, strided views; same products,
  same sums as after a transpose.
- ``tosa.conv2d`` whose input is NCHW (perms 0, 2, 3, 1): bound into a chain, the convolution's padded copy of its
  input is made from the NCHW tensor directly (``nk_pad_nchw_f32``); otherwise the input is first transposed into
  the task's second output, an NHWC scratch buffer the compiler planned.

Any other kernel, or perms that are not a permutation of the operand's dimensions, is an invalid blob.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from nnkiln.blob.format import BufferDesc, Memory, TaskDesc
from nnkiln.errors import BlobError
from nnkiln.kinds import Kind
from nnkiln.runtime.kernels import fast
from nnkiln.runtime.kernels.bound import Bound, NativeFn, address
from nnkiln.runtime.kernels.reference import call_reference, store

TaskFn = Callable[[Sequence[np.ndarray]], None]
NCHW_TO_NHWC = (0, 2, 3, 1)


def _permuted(b: BufferDesc, p: Sequence[int]) -> BufferDesc:
    return BufferDesc(b.memory, b.kind, tuple(b.shape[i] for i in p), b.offset, b.size, b.index, b.alias_of)


def perms_of(task: TaskDesc, buffers: Sequence[BufferDesc]) -> list[tuple[int, ...]]:
    """The task's ``operand_perms``, one per input (empty: as it is), checked."""
    raw = task.args.get("operand_perms") or ()
    if not isinstance(raw, (list, tuple)) or len(raw) > len(task.ins):
        raise BlobError(f"invalid blob: {task.kernel}: operand_perms {raw!r} for {len(task.ins)} inputs")
    perms = [tuple(int(v) for v in p) for p in raw] + [()] * (len(task.ins) - len(raw))
    for b, p in zip(task.ins, perms):
        if p and sorted(p) != list(range(len(buffers[b].shape))):
            raise BlobError(f"invalid blob: {task.kernel}: operand_perms {list(p)} is not a permutation of the "
                            f"dimensions of a {list(buffers[b].shape)} operand")
    return perms


def build(task: TaskDesc, buffers: Sequence[BufferDesc], static_views: Sequence[np.ndarray | None],
          build_task: Callable[..., TaskFn]) -> TaskFn:
    """The callable of a task with ``operand_perms`` (see the module docstring)."""
    perms = perms_of(task, buffers)
    if task.kernel == "tosa.matmul" and not task.args.get("post_ops") and len(task.outs) == 1:
        return _matmul(task, buffers, static_views, perms)
    if task.kernel == "tosa.conv2d" and perms[0] == NCHW_TO_NHWC and not any(perms[1:]):
        return _nchw_conv(task, buffers, static_views, build_task)
    raise BlobError(f"invalid blob: kernel {task.kernel} cannot read permuted operands ({perms})")


def _matmul(task: TaskDesc, buffers: Sequence[BufferDesc], static_views: Sequence[np.ndarray | None],
            perms: list[tuple[int, ...]]) -> TaskFn:
    ins, o = list(task.ins), task.outs[0]
    attrs = dict(task.args.get("attrs", {}))
    ib = [_permuted(buffers[b], p) if p else buffers[b] for b, p in zip(ins, perms)]
    consts = [static_views[b] if buffers[b].memory is Memory.CONSTANT and not p else None for b, p in zip(ins, perms)]
    f = fast.build(task.kernel, attrs, ib, [buffers[o]], consts, None)

    def operands(views: Sequence[np.ndarray | None]) -> list[np.ndarray | None]:
        return [v if v is None or not p else v.transpose(p) for v, p in zip((views[b] for b in ins), perms)]

    if f is None:
        kinds, ob = [b.kind for b in ib], buffers[o]

        def reference(views: Sequence[np.ndarray]) -> None:
            res = call_reference(task.kernel, operands(views), attrs, kinds, [ob.kind], [ob.dtype], [ob.shape])
            store(views[o], res[0])

        return reference

    def run(views: Sequence[np.ndarray]) -> None:
        f(operands(views), [views[o]], ())

    if isinstance(f, NativeFn):
        def bind(views: Sequence[np.ndarray | None]) -> Bound | None:
            xs = operands(views)
            if views[o] is None or any(x is None for x in xs):
                return None
            return f.bind(xs, [views[o]], ())

        run.bind = bind  # type: ignore[attr-defined]
    return run


def _nchw_conv(task: TaskDesc, buffers: Sequence[BufferDesc], static_views: Sequence[np.ndarray | None],
               build_task: Callable[..., TaskFn]) -> TaskFn:
    """``outs[1]`` is the NHWC scratch the input is transposed into when the run is not bound."""
    src = task.ins[0]
    s = buffers[src]
    nhwc = tuple(s.shape[i] for i in NCHW_TO_NHWC) if len(s.shape) == 4 else ()
    if s.kind is not Kind.F32 or len(task.outs) != 2 or buffers[task.outs[1]].shape != nhwc \
            or buffers[task.outs[1]].kind is not Kind.F32:
        raise BlobError(f"invalid blob: tosa.conv2d with an NCHW input needs a float32 rank-4 input and an NHWC "
                        f"float32 scratch as its second output, got {s.shape} and {len(task.outs)} outputs")
    scratch = task.outs[1]
    args = {k: v for k, v in task.args.items() if k != "operand_perms"}
    inner = TaskDesc(task.executor, task.executor_index, task.kernel, args, (scratch, *task.ins[1:]), task.outs[:1])
    conv = build_task(inner, buffers, static_views)

    def run(views: Sequence[np.ndarray]) -> None:
        np.copyto(views[scratch], views[src].transpose(NCHW_TO_NHWC))
        conv(views)

    conv_bind = getattr(conv, "bind", None)
    if conv_bind is None:
        return run
    from nnkiln.runtime.kernels.conv import native_lib

    lib = native_lib()

    def bind(views: Sequence[np.ndarray | None]) -> Bound | None:
        x = views[src]
        if x is None or lib is None or not (x.dtype == np.float32 and x.flags.c_contiguous):
            return None
        b = conv_bind(views)
        if b is None or not b.calls or b.calls[0][0] != address(lib.nk_pad_f32_b):
            return None
        slots = b.calls[0][1].copy()
        slots[0] = x.ctypes.data
        b.calls[0] = (address(lib.nk_pad_nchw_f32_b), slots)
        return b

    run.bind = bind  # type: ignore[attr-defined]
    return run


__all__ = ["NCHW_TO_NHWC", "build", "perms_of"]
