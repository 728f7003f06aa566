"""Runtime kernels: turn one blob task into a callable over the buffer views.

``build_task(task, buffers, static_views)`` returns ``fn(views)`` that reads ``views[i]`` for the task's
``ins`` and writes ``views[j]`` for its ``outs`` (numpy arrays over the arena, the constants or the io
tensors). Fast float32 paths (``fast``) are chosen when every operand is float32 and the geometry
checks out; everything else (all integer modes, other float formats, unusual ops) runs the reference
interpreter's numeric kernel and copies its result into the output view (``reference``).

The operands a post-op takes from ``ins`` (its ``operand`` index) are not passed to the main kernel.
Post-ops (``args["post_ops"]``) are applied in order to the kernel's first output, in place. When the
main kernel has a fast path and every post-op has a native float32 form (``kernels.epilogue``), the
fast kernel applies them itself (per block of output rows, in cache, no temporaries). Otherwise they
run one by one after the kernel: ``tosa.clamp`` and ``tosa.add`` on float32 natively, anything else
through the reference kernel with the current result as operand 0 (and ``ins[operand]`` as operand 1).
If an output overlaps any input (including post-op operands), a fast kernel computes into a
temporary first.

Fused tasks (``nnkiln.blob.format.FusedKernel``, decided by the compiler's rt-level passes) have kernels of their
own: ``kernels.rows`` (row programs) and ``kernels.fused`` (expansion + depthwise convolution); a task with
``operand_perms`` reads permuted operands (``kernels.permuted``). One task, one kernel: nothing here groups tasks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from nnkiln.blob.format import BufferDesc, FusedKernel, Memory, TaskDesc
from nnkiln.errors import NotExecutableError
from nnkiln.kinds import Kind
from nnkiln.runtime.kernels import control, epilogue, fast
from nnkiln.runtime.kernels.bound import NativeFn, task_bind
from nnkiln.runtime.kernels.reference import call_reference, reference_kernel, store

TaskFn = Callable[[Sequence[np.ndarray]], None]

VIEW_KERNELS = ("buf.concat_view", "rt.nop")
"""Kernels that only order accesses (no data movement)."""


def _post_op_fn(post: dict[str, Any], out_idx: int, ins: Sequence[int], buffers: Sequence[BufferDesc]) -> TaskFn:
    name = post["kernel"]
    attrs = post.get("attrs", {})
    operand = post.get("operand")
    ob = buffers[out_idx]
    extra = ins[operand] if operand is not None else None
    kinds = [ob.kind] + ([buffers[extra].kind] if extra is not None else [])
    if all(k is Kind.F32 for k in kinds):
        if name == "tosa.clamp":
            lo = epilogue.clamp_bounds(attrs)
            if lo is not None:
                lo_v, hi_v = lo

                def clamp(views: Sequence[np.ndarray]) -> None:
                    o = views[out_idx]
                    np.maximum(o, lo_v, out=o)
                    np.minimum(o, hi_v, out=o)

                return clamp
        if name == "tosa.add" and extra is not None:
            def add(views: Sequence[np.ndarray]) -> None:
                o = views[out_idx]
                np.add(o, views[extra], out=o)

            return add
    reference_kernel(name)

    def generic(views: Sequence[np.ndarray]) -> None:
        o = views[out_idx]
        operands = [o.copy()] + ([views[extra]] if extra is not None else [])
        res = call_reference(name, operands, attrs, kinds, [ob.kind], [ob.dtype], [ob.shape])
        store(o, res[0])

    return generic


def _overlaps(ins: Sequence[int], outs: Sequence[int], buffers: Sequence[BufferDesc]) -> bool:
    """Whether an output's bytes intersect an input's (same memory)."""
    for o in outs:
        bo = buffers[o]
        for i in ins:
            bi = buffers[i]
            if (bi.memory, bi.index) == (bo.memory, bo.index) and bi.offset < bo.offset + bo.size and bo.offset < bi.offset + bi.size:
                return True
    return False


def _copy(ins: Sequence[int], outs: Sequence[int], attrs: dict[str, Any], buffers: Sequence[BufferDesc]) -> TaskFn:
    """``buf.copy``: all the bytes, or a box of the larger side (``src_offsets`` / ``dst_offsets``: the DMA's
    strided transfers; checked against the shapes here, once, so a tampered blob cannot index out of bounds)."""
    if len(ins) != 1 or len(outs) != 1 or buffers[ins[0]].kind != buffers[outs[0]].kind:
        raise NotExecutableError(f"buf.copy needs one input and one output of one element type ({ins} -> {outs})")
    src, dst = ins[0], outs[0]
    side = "src" if "src_offsets" in attrs else "dst" if "dst_offsets" in attrs else None
    if side is None:
        if buffers[src].size != buffers[dst].size:
            raise NotExecutableError(f"buf.copy needs one input and one output of equal byte size ({ins} -> {outs})")

        def copy(views: Sequence[np.ndarray]) -> None:
            np.copyto(views[dst].reshape(-1), views[src].reshape(-1), casting="no")

        return copy
    big, small = (buffers[src], buffers[dst]) if side == "src" else (buffers[dst], buffers[src])
    offs = attrs[f"{side}_offsets"]
    perm = attrs.get("src_perm")
    extent = list(small.shape)
    if perm is not None:
        if side != "src" or not isinstance(perm, (list, tuple)) or sorted(perm) != list(range(len(extent))):
            raise NotExecutableError(f"buf.copy src_perm {perm!r} is not a permutation of a source box's dimensions")
        for d, p in enumerate(perm):
            extent[p] = small.shape[d]
    if (not isinstance(offs, (list, tuple)) or len(offs) != len(big.shape) or len(small.shape) != len(big.shape)
            or any(not isinstance(o, int) or o < 0 or o + n > d for o, n, d in zip(offs, extent, big.shape))):
        raise NotExecutableError(f"buf.copy {side}_offsets {offs!r}: the box of {extent} is not inside "
                                 f"{list(big.shape)}")
    if "shape" in attrs and list(attrs["shape"]) != extent:
        raise NotExecutableError(f"buf.copy box shape {attrs['shape']!r} is not its operand's extent {extent}")
    box = tuple(slice(o, o + n) for o, n in zip(offs, extent))
    if perm is not None:
        order = tuple(perm)

        def copy_permuted(views: Sequence[np.ndarray]) -> None:
            np.copyto(views[dst], views[src][box].transpose(order), casting="no")

        return copy_permuted
    if side == "src":
        def copy_box(views: Sequence[np.ndarray]) -> None:
            np.copyto(views[dst], views[src][box], casting="no")
    else:
        def copy_box(views: Sequence[np.ndarray]) -> None:
            np.copyto(views[dst][box], views[src], casting="no")
    return copy_box


def build_task(task: TaskDesc, buffers: Sequence[BufferDesc], static_views: Sequence[np.ndarray | None]) -> TaskFn:
    """The callable that executes ``task`` (see the module docstring)."""
    name = task.kernel
    all_ins, outs = list(task.ins), list(task.outs)
    extra = {p["operand"] for p in task.args.get("post_ops", ()) if p.get("operand") is not None}
    ins = [b for k, b in enumerate(all_ins) if k not in extra]  # the main kernel's own operands
    attrs = dict(task.args.get("attrs", {}))
    fused_posts = False
    if task.args.get("operand_perms"):
        from nnkiln.runtime.kernels import permuted

        return permuted.build(task, buffers, static_views, build_task)
    if name in VIEW_KERNELS:
        return lambda views: None
    if name in control.CONTROL:
        return control.build_control(task, buffers, static_views)
    if name == "tosa.custom":
        return control.build_custom(task, buffers)
    if name == FusedKernel.CONV2D_DEPTHWISE:
        from nnkiln.runtime.kernels.fused import ExpansionDepthwise

        return ExpansionDepthwise(task, buffers, static_views)
    if name == FusedKernel.ROW_PROGRAM:
        from nnkiln.runtime.kernels.gemm import blas_threads
        from nnkiln.runtime.kernels.rows import RowProgram

        return RowProgram(task, buffers, static_views, max(1, blas_threads()))
    if name == "buf.copy":
        main = _copy(ins, outs, attrs, buffers)
    else:
        post_list = list(task.args.get("post_ops", ()))
        extra_idx = [all_ins[p["operand"]] for p in post_list if p.get("operand") is not None]
        epi = (epilogue.build(post_list, buffers[outs[0]], [buffers[i] for i in extra_idx])
               if post_list and len(outs) == 1 else None)
        main_fast = fast.build(name, attrs, [buffers[i] for i in ins], [buffers[o] for o in outs],
                               [static_views[i] if buffers[i].memory is Memory.CONSTANT else None for i in ins], epi)
        if main_fast is not None and epi is not None:
            fused_posts = True
        if main_fast is not None and (_overlaps(all_ins, outs, buffers) and (name not in fast.ELEMENTWISE or epi)):
            def main(views: Sequence[np.ndarray], _f=main_fast) -> None:
                tmp = [np.empty_like(views[o]) for o in outs]
                _f([views[i] for i in ins], tmp, [views[i] for i in extra_idx])
                for o, t in zip(outs, tmp):
                    np.copyto(views[o], t)
        elif main_fast is not None:
            def main(views: Sequence[np.ndarray], _f=main_fast) -> None:
                _f([views[i] for i in ins], [views[o] for o in outs], [views[i] for i in extra_idx])

            if isinstance(main_fast, NativeFn):
                main.bind = task_bind(main_fast, ins, outs, extra_idx)  # type: ignore[attr-defined]
        else:
            reference_kernel(name)  # NotExecutableError now rather than at run time
            in_kinds = [buffers[i].kind for i in ins]
            out_kinds = [buffers[o].kind for o in outs]
            out_dtypes = [buffers[o].dtype for o in outs]
            out_shapes = [buffers[o].shape for o in outs]

            def main(views: Sequence[np.ndarray]) -> None:
                res = call_reference(name, [views[i] for i in ins], attrs, in_kinds, out_kinds, out_dtypes, out_shapes)
                if len(res) != len(outs):
                    raise NotExecutableError(f"kernel '{name}' returned {len(res)} results for {len(outs)} outputs")
                for o, r in zip(outs, res):
                    store(views[o], r)

    if fused_posts:
        return main
    posts = [_post_op_fn(p, outs[0], all_ins, buffers) for p in task.args.get("post_ops", ())] if outs else []
    if not posts:
        return main

    def with_posts(views: Sequence[np.ndarray]) -> None:
        main(views)
        for p in posts:
            p(views)

    return with_posts


__all__ = ["TaskFn", "build_task"]
