"""Transposes that need not run: the kernel that alone reads the result reads the transpose's input instead,
through a permuted view (``buf.kernel``'s ``operand_perms``).

Two cases, one queue only (blob order is run order), float32:

- a TRANSPOSE whose result only a later MATMUL (no post-ops) reads: the MATMUL reads the transposed (strided)
  view of the TRANSPOSE's input (BLAS and the native GEMM take the strides; same products, same sums). Legal when
  nothing in between writes the input's bytes and nothing after the MATMUL reads the transposed buffer;
- an NCHW -> NHWC TRANSPOSE (perms 0, 2, 3, 1) right before the zero-padded CONV2D that alone reads its result:
  the convolution makes its padded copy of the input from the NCHW tensor directly (one pass instead of the
  transpose and the copy; the same values): a network's NCHW input and its stem convolution. The transpose's
  result stays as the convolution's second output, a scratch for runs that transpose first.

``plan(tasks, buffers)`` returns the ``TaskEdit``s (one per reading kernel, with the transposes it absorbs). No xDSL.
"""

from __future__ import annotations

from collections.abc import Sequence

from nnkiln.analysis.byte_regions import live_after, overlap, queues, region
from nnkiln.analysis.task_edits import NewTask, TaskEdit
from nnkiln.blob.format import BufferDesc, Memory, TaskDesc
from nnkiln.kinds import Kind

NCHW_TO_NHWC = (0, 2, 3, 1)


def _transpose(t: TaskDesc, buffers: Sequence[BufferDesc]) -> tuple[int, int, tuple[int, ...]] | None:
    """(source, result, perms) of a plain float32 TRANSPOSE into the arena, or None."""
    perms = t.args.get("attrs", {}).get("perms")
    if t.kernel != "tosa.transpose" or len(t.ins) != 1 or len(t.outs) != 1 or not isinstance(perms, tuple):
        return None
    src, dst = t.ins[0], t.outs[0]
    s, d = buffers[src], buffers[dst]
    if s.kind is not Kind.F32 or d.kind is not Kind.F32 or s.memory is Memory.CONSTANT or d.memory is not Memory.ARENA:
        return None
    if t.args.get("post_ops") or overlap(region(s), region(d)):
        return None
    if sorted(perms) != list(range(len(s.shape))) or tuple(s.shape[p] for p in perms) != d.shape:
        return None
    return src, dst, perms


def _reader(queue: Sequence[int], k: int, src: int, dst: int, tasks: Sequence[TaskDesc],
            buffers: Sequence[BufferDesc]) -> int | None:
    """The first task after position ``k`` of ``queue`` that reads ``dst``, if neither ``src`` nor ``dst`` is
    written before it."""
    rd, rs = region(buffers[dst]), region(buffers[src])
    for tj in queue[k + 1:]:
        u = tasks[tj]
        if any(overlap(rd, region(buffers[b])) for b in u.ins):
            return tj
        if any(overlap(rs, region(buffers[b])) or overlap(rd, region(buffers[b])) for b in u.outs):
            return None
    return None


def _matmul_reads(m: TaskDesc, dst: int, buffers: Sequence[BufferDesc]) -> int | None:
    """The operand position at which float32 MATMUL ``m`` (no post-ops) reads exactly ``dst``, or None."""
    if m.kernel != "tosa.matmul" or m.args.get("post_ops") or m.args.get("operand_perms") or len(m.ins) != 2 \
            or len(m.outs) != 1 or any(buffers[b].kind is not Kind.F32 for b in (*m.ins, *m.outs)):
        return None
    rd = region(buffers[dst])
    hits = [i for i, b in enumerate(m.ins) if overlap(rd, region(buffers[b]))]
    if len(hits) != 1 or region(buffers[m.ins[hits[0]]]) != rd or buffers[m.ins[hits[0]]].shape != buffers[dst].shape:
        return None
    return hits[0]


def _padded_conv(c: TaskDesc, dst: int) -> bool:
    """Whether ``c`` is a zero-padded CONV2D reading ``dst`` as its input."""
    return (c.kernel == "tosa.conv2d" and bool(c.ins) and c.ins[0] == dst and not c.args.get("operand_perms")
            and any(c.args.get("attrs", {}).get("pad", ())))


def plan(tasks: Sequence[TaskDesc], buffers: Sequence[BufferDesc]) -> list[TaskEdit]:
    """The edits for every foldable transpose (see the module docstring); none with several queues."""
    qs = queues(tasks)
    if len(qs) != 1:
        return []
    queue = qs[0]
    folded: dict[int, dict[int, tuple[int, int, tuple[int, ...]]]] = {}  # reader -> {operand: (transpose, src, perms)}
    scratch: dict[int, int] = {}  # padded convolution -> the transpose's result, its NHWC scratch
    for k, ti in enumerate(queue):
        tr = _transpose(tasks[ti], buffers)
        if tr is None:
            continue
        src, dst, perms = tr
        user = _reader(queue, k, src, dst, tasks, buffers)
        if user is None or live_after(region(buffers[dst]), user, tasks, buffers, True):
            continue
        m = tasks[user]
        pos = _matmul_reads(m, dst, buffers)
        if pos is None and perms == NCHW_TO_NHWC and user == ti + 1 and _padded_conv(m, dst):
            pos = 0
            scratch[user] = dst
        if pos is None or any(overlap(region(buffers[src]), region(buffers[b])) for b in m.outs):
            continue
        folded.setdefault(user, {})[pos] = (ti, src, perms)
    edits = []
    for user, ops in sorted(folded.items()):
        m = tasks[user]
        ins = tuple(ops[i][1] if i in ops else b for i, b in enumerate(m.ins))
        perms = tuple(ops[i][2] if i in ops else () for i in range(len(m.ins)))
        outs = (*m.outs, scratch[user]) if user in scratch else tuple(m.outs)
        new = NewTask(m.kernel, ins, outs, dict(m.args.get("attrs", {})),
                      tuple(m.args.get("post_ops", ())), perms)
        edits.append(TaskEdit(tuple(sorted([*(t for t, _, _ in ops.values()), user])), (new,)))
    return edits


__all__ = ["NCHW_TO_NHWC", "plan"]
