"""Expansion 1x1 convolutions computed together with the depthwise convolution that alone reads their result.

MobileNet-style blocks expand the channels with a 1x1 CONV2D (16 -> 96 at 112x112 in MobileNetV2: a 4.8 MB tensor)
that only the following DEPTHWISE_CONV2D reads. Run as two kernels, the expanded tensor goes out of the caches
and comes back; ``fused.conv2d_depthwise`` (``runtime/kernels/fused.py``) computes it band by band instead.

Conditions (one queue; the pair consecutive in it): the shapes and attributes of ``expansion_geometry``; the
expanded buffer is in the arena and read by nothing after the depthwise convolution; it holds at least
``MIN_BYTES`` (below that it stays in cache anyway, and splitting small images between threads would compute too
many rows twice). When the plan put the result over the 1x1 convolution's input (the bands read one while writing
the other), the input is first copied into the expanded buffer, unused otherwise, which must then lie apart from
both and be at least as large (``copy``).

``plan(tasks, buffers)`` returns the ``TaskEdit``s. No xDSL.
"""

from __future__ import annotations

from collections.abc import Sequence

from nnkiln.analysis.byte_regions import live_after, overlap, queues, region
from nnkiln.analysis.task_edits import NewTask, TaskEdit
from nnkiln.blob.format import BufferDesc, FusedKernel, TaskDesc
from nnkiln.runtime.kernels.fused import clamp_only, expansion_geometry

MIN_BYTES = 4 << 20
"""Smallest expanded tensor (bytes) worth fusing (measured on MobileNetV2: bench/RESULTS.md)."""


def _attrs(pw: TaskDesc, dw: TaskDesc, copy: bool) -> dict[str, object]:
    attrs: dict[str, object] = {"copy": copy}
    for prefix, t in (("pw", pw), ("dw", dw)):
        a = t.args.get("attrs", {})
        for k in ("pad", "stride", "dilation"):
            attrs[f"{prefix}_{k}"] = tuple(a.get(k, ()))
        bounds = clamp_only(t)
        attrs[f"{prefix}_clamp"] = tuple(bounds) if bounds else ()
    return attrs


def plan(tasks: Sequence[TaskDesc], buffers: Sequence[BufferDesc]) -> list[TaskEdit]:
    """The pairs to fuse (see the module docstring); none with several queues."""
    qs = queues(tasks)
    if len(qs) != 1:
        return []
    queue = qs[0]
    edits: list[TaskEdit] = []
    k = 0
    while k + 1 < len(queue):
        i, j = queue[k], queue[k + 1]
        pw, dw = tasks[i], tasks[j]
        if expansion_geometry(pw, dw, buffers) is None or buffers[pw.outs[0]].size < MIN_BYTES \
                or live_after(region(buffers[pw.outs[0]]), j, tasks, buffers, True):
            k += 1
            continue
        rx, ry, re_ = (region(buffers[b]) for b in (pw.ins[0], dw.outs[0], pw.outs[0]))
        copy = overlap(rx, ry)
        if copy and (overlap(re_, rx) or overlap(re_, ry) or buffers[pw.outs[0]].size < buffers[pw.ins[0]].size):
            k += 1
            continue
        new = NewTask(FusedKernel.CONV2D_DEPTHWISE.value, (*pw.ins, *dw.ins[1:]), (dw.outs[0], pw.outs[0]),
                      _attrs(pw, dw, copy))
        edits.append(TaskEdit((i, j), (new,)))
        k += 2
    return edits


__all__ = ["MIN_BYTES", "plan"]
