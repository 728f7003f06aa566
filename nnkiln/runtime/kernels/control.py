"""Runtime kernels of control flow (``tosa.cond_if``, ``tosa.while_loop``) and of ``tosa.custom``.

Control flow (``CONTROL``, the blob format's ``CONTROL_FLOW_KERNELS``; operands as
``nnkiln.conversion.regions_to_programs`` lays them out): the first two inputs of the task are constants holding
the blobs of the op's region programs; they are decoded and validated, and their executables built, when the
parent blob is loaded (a tampered nested blob is a ``BlobError`` then).
Each program's inputs and outputs must match the task's buffers (count, kind and shape).

- COND_IF (TOSA §2.16.1): reads the condition, runs the ``then`` or ``else`` program on the input list (if the
  program takes it) and writes its outputs into the task's outputs. Inputs that share memory with an
  output are copied first.
- WHILE_LOOP (§2.16.2): copies the input list, then ``while cond(list): list = body(list)`` with two sets of
  arrays used in turn (the body never writes what it reads), and writes the last list into the outputs.
  As in the spec and the reference interpreter, there is no iteration limit.

``tosa.custom``: the kernel registered for the op's ``identifier`` (``nnkiln.runtime.register_custom``,
shared with the reference interpreter; nnkiln's own NNEF custom ops are found without registration). A
blob whose custom identifier has no kernel fails to load with a ``NotExecutableError`` naming it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from nnkiln.blob.format import CONTROL_FLOW_KERNELS as CONTROL
from nnkiln.blob.format import BufferDesc, Memory, TaskDesc
from nnkiln.errors import BlobError, NotExecutableError

TaskFn = Callable[[Sequence[np.ndarray]], None]


def _program(task: TaskDesc, k: int, buffers: Sequence[BufferDesc], static_views: Sequence[np.ndarray | None]) -> Any:
    from nnkiln.blob.reader import decode
    from nnkiln.runtime.executable import Executable

    idx = task.ins[k]
    view = static_views[idx]
    if buffers[idx].memory is not Memory.CONSTANT or view is None:
        raise BlobError(f"{task.kernel}: operand {k} must be a constant holding a region program")
    try:
        return Executable(decode(view.reshape(-1).view(np.uint8).tobytes()))
    except BlobError as err:
        raise BlobError(f"{task.kernel}: region program {k}: {err}") from None


def _check(task: TaskDesc, k: int, exe: Any, ins: Sequence[BufferDesc], outs: Sequence[BufferDesc]) -> None:
    """The program's inputs/outputs have the kinds and shapes of the task buffers it is run on."""
    for what, ios, bufs in (("inputs", exe.blob.inputs, ins), ("outputs", exe.blob.outputs, outs)):
        # element counts, not shapes: a rank-0 value may be held in a [1] buffer
        got = [(io.kind.value, int(np.prod(io.shape, dtype=np.int64))) for io in ios]
        want = [(b.kind.value, int(np.prod(b.shape, dtype=np.int64))) for b in bufs]
        if got != want:
            raise BlobError(f"{task.kernel}: region program {k} has {what} {got}, the task gives {want}")


def _attrs(task: TaskDesc) -> tuple[int, list[bool]]:
    attrs = task.args.get("attrs", {})
    try:
        n = int(attrs["num_inputs"])
        takes = [bool(v) for v in attrs["region_inputs"]]
    except (KeyError, TypeError, ValueError):
        raise BlobError(f"{task.kernel}: attrs must give num_inputs and region_inputs") from None
    if len(takes) != 2 or n < 0:
        raise BlobError(f"{task.kernel}: region_inputs must have two entries, num_inputs must be >= 0")
    return n, takes


def build_control(task: TaskDesc, buffers: Sequence[BufferDesc], static_views: Sequence[np.ndarray | None]) -> TaskFn:
    """The task function of a COND_IF or WHILE_LOOP task (see the module docstring)."""
    n, takes = _attrs(task)
    progs = [_program(task, k, buffers, static_views) for k in (0, 1)]
    outs = list(task.outs)
    first = 3 if task.kernel == "tosa.cond_if" else 2
    inputs = list(task.ins[first:])
    if len(inputs) != n:
        raise BlobError(f"{task.kernel}: {len(inputs)} inputs, attrs say {n}")
    if task.kernel == "tosa.cond_if":
        cond = task.ins[2]
        for k, exe in enumerate(progs):
            _check(task, k, exe, [buffers[i] for i in (inputs if takes[k] else [])], [buffers[o] for o in outs])

        def cond_if(views: Sequence[np.ndarray]) -> None:
            k = 0 if bool(views[cond].reshape(-1)[0]) else 1
            args = [views[i] for i in (inputs if takes[k] else [])]
            results = [views[o] for o in outs]
            if any(np.may_share_memory(a, r) for a in args for r in results):
                args = [a.copy() for a in args]
            progs[k].run_arrays(args, results)

        return cond_if
    if not all(takes):
        raise BlobError("tosa.while_loop: both region programs must take the loop-carried list")
    carried = [buffers[i] for i in inputs]
    _check(task, 1, progs[1], carried, carried)
    cond_out = progs[0].blob.outputs
    if len(cond_out) != 1 or int(np.prod(cond_out[0].shape, dtype=np.int64)) != 1:
        raise BlobError("tosa.while_loop: the cond program must have one output of one element")
    flag_desc = BufferDesc(Memory.OUTPUT, cond_out[0].kind, cond_out[0].shape, 0, 0)
    _check(task, 0, progs[0], carried, [flag_desc])
    if [(buffers[o].kind, buffers[o].size) for o in outs] != [(b.kind, b.size) for b in carried]:
        raise BlobError("tosa.while_loop: the outputs must have the types of the input list")

    def while_loop(views: Sequence[np.ndarray]) -> None:
        cur = [np.array(views[i]) for i in inputs]
        nxt = [np.empty_like(c) for c in cur]
        flag = np.empty(flag_desc.shape, flag_desc.dtype)
        while True:
            progs[0].run_arrays(cur, [flag])
            if not bool(flag.reshape(-1)[0]):
                break
            progs[1].run_arrays(cur, nxt)
            cur, nxt = nxt, cur
        for o, c in zip(outs, cur):
            np.copyto(views[o], c)

    return while_loop


def build_custom(task: TaskDesc, buffers: Sequence[BufferDesc]) -> TaskFn:
    """The task function of a ``tosa.custom`` task: the registered kernel, its results stored in the outputs."""
    from nnkiln.reference.registry import KernelCall, custom_kernel
    from nnkiln.runtime.kernels.reference import store

    attrs = dict(task.args.get("attrs", {}))
    ident = str(attrs.get("identifier", ""))
    fn = custom_kernel(ident)
    if fn is None:
        raise NotExecutableError(f"'tosa.custom' with identifier '{ident}' cannot be executed: no kernel was "
                                 "registered for it (nnkiln.runtime.register_custom)")
    ins, outs = list(task.ins), list(task.outs)
    in_kinds = [buffers[i].kind for i in ins]
    out_kinds = [buffers[o].kind for o in outs]
    out_dtypes = [buffers[o].dtype for o in outs]
    out_shapes = [tuple(buffers[o].shape) for o in outs]

    def custom(views: Sequence[np.ndarray]) -> None:
        call = KernelCall(name="tosa.custom", inputs=[views[i] for i in ins], attrs=dict(attrs),
                          out_kinds=list(out_kinds), out_dtypes=list(out_dtypes), out_shapes=list(out_shapes),
                          in_kinds=list(in_kinds))
        res = fn(call)
        if len(res) != len(outs):
            raise NotExecutableError(f"custom kernel '{ident}' returned {len(res)} results for {len(outs)} outputs")
        for o, r in zip(outs, res):
            store(views[o], r)

    return custom


__all__ = ["CONTROL", "build_control", "build_custom"]
