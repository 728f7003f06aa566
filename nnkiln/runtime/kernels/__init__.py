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

``row_groups(tasks, queue, ...)`` (used by the executable) goes further when the native library
(``native/eltwise_rows.c``, part of conv.c's library and its thread pool) is available: consecutive float32 elementwise tasks, row reductions and
their post-ops with the same ``[rows, C]`` geometry run as ONE native row program (softmax, layer
norm, the Erf/GELU chain, bias + residual adds), and the post-ops of a float GEMM move into the
group that follows it. See the section comment below; without a C compiler every task keeps its
numpy path above.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from nnkiln.blob.format import BufferDesc, Memory, TaskDesc
from nnkiln.errors import NotExecutableError
from nnkiln.kinds import Kind
from nnkiln.runtime.kernels import control, epilogue, fast
from nnkiln.runtime.kernels.bound import Bound, NativeFn, address, slots, task_bind
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


def build_task(task: TaskDesc, buffers: Sequence[BufferDesc], static_views: Sequence[np.ndarray | None]) -> TaskFn:
    """The callable that executes ``task`` (see the module docstring)."""
    name = task.kernel
    all_ins, outs = list(task.ins), list(task.outs)
    extra = {p["operand"] for p in task.args.get("post_ops", ()) if p.get("operand") is not None}
    ins = [b for k, b in enumerate(all_ins) if k not in extra]  # the main kernel's own operands
    attrs = dict(task.args.get("attrs", {}))
    fused_posts = False
    if name in VIEW_KERNELS:
        return lambda views: None
    if name in control.CONTROL:
        return control.build_control(task, buffers, static_views)
    if name == "tosa.custom":
        return control.build_custom(task, buffers)
    if name == "buf.copy":
        if len(ins) != 1 or len(outs) != 1 or buffers[ins[0]].size != buffers[outs[0]].size:
            raise NotExecutableError(f"buf.copy needs one input and one output of equal byte size ({ins} -> {outs})")
        src, dst = ins[0], outs[0]

        def copy(views: Sequence[np.ndarray]) -> None:
            np.copyto(views[dst].reshape(-1), views[src].reshape(-1), casting="no")

        main: TaskFn = copy
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




# -- row programs: native fused elementwise / row-reduction groups ----------------------------------------
#
# Consecutive float32 tasks of one queue that are elementwise ops, reductions over the last
# (non-trivial) axis and their post-ops, all over the same row geometry ``[rows, C]``, are executed
# as ONE call of ``native/eltwise_rows.c``: the program runs block of rows by block of rows while
# the block is in cache (softmax = reduce_max, sub+exp, reduce_sum+reciprocal, mul; layer norm = 6
# tasks; the GELU/Erf chain = 3 tasks) and stores only the values that may be read after the group
# (``_live_after``: io outputs, and arena bytes read later before being overwritten). Runs of cheap
# elementwise steps whose intermediates are read once become CHAINs evaluated in registers (one
# pass over the block instead of one per op). Hazards: a task joins a group only if every buffer it
# reads is either untouched by the group or exactly a value the group computed with the same geometry
# (then it is read from the register), and every buffer it writes is either disjoint from what the
# group read or exactly a region read row by row (in place), and disjoint from the values the group
# computed unless nothing reads such a value's bytes afterwards (softmax's row sums planned over its
# scaled input: the register is dropped, never stored). Multi-executor runs group only tasks
# with no barrier between them. Numerics: the same float32 operations in the same order as the
# reference kernels (row sums in numpy's pairwise order: identical); exp/tanh/sigmoid are the C
# file's own float32 functions (within a few ulp of numpy's, not bit-identical).
# Without the native library (``NNKILN_NO_NATIVE=1``, no compiler) every task keeps its numpy path.

import ctypes  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402

from nnkiln.runtime.native import header  # noqa: E402

_OP = header.enum("nk_op")  # opcodes: binary < EXP <= unary < REDUCE_SUM <= reductions < STORE
_OPS = {f"tosa.{n.lower()}": _OP[n] for n in ("ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM", "EXP", "TANH", "SIGMOID",
                                             "ABS", "NEGATE", "RECIPROCAL", "RSQRT", "CLAMP", "REDUCE_SUM",
                                             "REDUCE_MAX", "REDUCE_MIN")}
_OP_STORE = _OP["STORE"]
_FULL, _CHAN, _ROWV, _SCAL = (header.enum("nk_mode")[m] for m in ("FULL", "CHAN", "ROWV", "SCAL"))
_PAR_MIN_ELEMENTS = 1 << 13
"""Groups smaller than this run on one thread (waking threads costs more than it saves). The row programs share
conv.c's pool, whose workers spin for a while after each job: measured on BERT-tiny at 2 threads (in-process,
interleaved, identical results), a pool of their own with 32 Ki took 1.41 ms, the shared pool 1.32 ms with 32 Ki,
1.23 ms with 8 Ki, 1.16 ms with 4 Ki; MobileNetV2 was best with 8 Ki (5.53 vs 6.00 ms), BERT-base neutral."""
_BLOCK_FLOATS = 2048
"""Rows per block: about this many floats (8 KiB per register: a few live registers stay in L1)."""


_Ins = header.struct("nk_ins")


Ins = tuple[int, int, int, int, float, float, int, int]
"""(op, dst, a, b, lo, hi, op2, c) as in ``nk_ins``: op2 = -1 for a single operation."""


_LIB: Any = False


def _rows_lib() -> Any:
    global _LIB
    if _LIB is False:
        from nnkiln.runtime import native

        _LIB = native.load()  # conv.c #includes eltwise_rows.c: one library, one thread pool
    return _LIB


def _strip(shape: tuple[int, ...]) -> tuple[int, ...]:
    """``shape`` without its trailing 1s (at least one dimension)."""
    n = len(shape)
    while n > 1 and shape[n - 1] == 1:
        n -= 1
    return tuple(shape[:n]) if shape else (1,)


def _geometry(shape: tuple[int, ...]) -> tuple[int, int, int]:
    """(rows, C, number of stripped trailing dims) of an output viewed as ``[rows, C]``."""
    s = _strip(shape)
    rows = 1
    for d in s[:-1]:
        rows *= d
    return rows, s[-1], len(shape) - len(s)


def _mode(shape: tuple[int, ...], out: tuple[int, ...], k: int, scalar_value: bool) -> int | None:
    """How an operand of ``shape`` broadcasts onto a value of shape ``out`` (``k`` trailing 1s
    stripped) in the ``[rows, C]`` view, or None."""
    if len(shape) != len(out) or any(d != 1 for d in shape[len(shape) - k:]):
        return None
    s, o = shape[:len(shape) - k] or (1,), out[:len(out) - k] or (1,)
    if all(d == 1 for d in s):
        return _SCAL
    if scalar_value:  # the value is one number per row: the operand must be too
        return _ROWV if tuple(s) == tuple(o) else None
    if tuple(s) == tuple(o):
        return _FULL
    if all(d == 1 for d in s[:-1]) and s[-1] == o[-1]:
        return _CHAN
    if s[-1] == 1 and tuple(s[:-1]) == tuple(o[:-1]):
        return _ROWV
    return None


def _region(b: BufferDesc) -> tuple[Any, int, int, int]:
    return (b.memory, b.index, b.offset, b.size)


def _overlap(a: tuple[Any, int, int, int], b: tuple[Any, int, int, int]) -> bool:
    return a[0] == b[0] and a[1] == b[1] and a[2] < b[2] + b[3] and b[2] < a[2] + a[3]


@dataclass
class _Group:
    rows: int
    c: int
    tasks: list[int] = field(default_factory=list)
    ins: list[Ins] = field(default_factory=list)
    vector: dict[int, bool] = field(default_factory=dict)  # virtual register -> holds a row block
    args: list[tuple[int, int]] = field(default_factory=list)      # (buffer, mode)
    reads: list[tuple[tuple[Any, int, int, int], int]] = field(default_factory=list)  # external (region, mode)
    values: dict[tuple[Any, int, int, int], tuple[int, bool, int]] = field(default_factory=dict)  # region -> (reg, scalar, buffer)
    nregs: int = 0


def _task_program(task: TaskDesc, buffers: Sequence[BufferDesc]) -> tuple[int, int, list[tuple]] | None:
    """The task as (rows, C, steps) or None. Steps: ("op", code, [operands], lo, hi) where an operand is
    ("buf", buffer index, mode) or ("val",) (the running value); ("store", buffer, scalar)."""
    name = task.kernel
    if name not in _OPS or len(task.outs) != 1:
        return None
    posts = list(task.args.get("post_ops", ()))
    all_ins = list(task.ins)
    extra = {p["operand"] for p in posts if p.get("operand") is not None}
    ins = [b for k, b in enumerate(all_ins) if k not in extra]
    if any(buffers[b].kind is not Kind.F32 for b in (*all_ins, *task.outs)):
        return None
    attrs = task.args.get("attrs", {})
    out = buffers[task.outs[0]]
    steps: list[tuple] = []

    def unary_step(nm: str, at: dict[str, Any], src: tuple) -> tuple | None:
        if nm == "tosa.clamp":
            bounds = epilogue.clamp_bounds(at)
            if bounds is None:
                return None
            return ("op", _OPS[nm], [src], float(bounds[0]), float(bounds[1]))
        return ("op", _OPS[nm], [src], 0.0, 0.0)

    if name.startswith("tosa.reduce_"):
        axis = attrs.get("axis")
        if len(ins) != 1 or not isinstance(axis, int):
            return None
        shape = buffers[ins[0]].shape
        rows, c, k = _geometry(shape)
        if axis != len(shape) - k - 1 or out.shape != tuple(1 if i == axis else d for i, d in enumerate(shape)):
            return None
        steps.append(("op", _OPS[name], [("buf", ins[0], _FULL)], 0.0, 0.0))
        scalar, oshape, ok = True, out.shape, k + 1
    else:
        rows, c, k = _geometry(out.shape)
        if name in ("tosa.add", "tosa.sub", "tosa.mul", "tosa.maximum", "tosa.minimum"):
            if len(ins) != 2 or (name == "tosa.mul" and attrs.get("shift", 0)):
                return None
            modes = [_mode(buffers[i].shape, out.shape, k, False) for i in ins]
            if None in modes:
                return None
            steps.append(("op", _OPS[name], [("buf", i, m) for i, m in zip(ins, modes)], 0.0, 0.0))
        else:
            if len(ins) != 1 or buffers[ins[0]].shape != out.shape:
                return None
            st = unary_step(name, attrs, ("buf", ins[0], _FULL))
            if st is None:
                return None
            steps.append(st)
        scalar, oshape, ok = False, out.shape, k
    post_steps = _post_steps(posts, all_ins, buffers, oshape, ok, scalar)
    if post_steps is None:
        return None
    steps.extend(post_steps)
    steps.append(("store", task.outs[0], scalar))
    return rows, c, steps


def _post_steps(posts: Sequence[dict[str, Any]], all_ins: Sequence[int], buffers: Sequence[BufferDesc],
                oshape: tuple[int, ...], k: int, scalar: bool, first: tuple | None = None) -> list[tuple] | None:
    """Row-program steps of post-ops applied to the running value (or, for the first one, to
    ``first`` when given: the producer's output buffer); None if one has no row form."""
    steps: list[tuple] = []
    for p in posts:
        nm, at = p["kernel"], p.get("attrs", {})
        src: tuple = ("val",) if (steps or first is None) else first
        if nm not in _OPS or nm.startswith("tosa.reduce_"):
            return None
        if p.get("operand") is not None:
            if nm not in ("tosa.add", "tosa.sub", "tosa.mul", "tosa.maximum", "tosa.minimum") or (
                    nm == "tosa.mul" and at.get("shift", 0)):
                return None
            b = all_ins[p["operand"]]
            m = _mode(buffers[b].shape, oshape, k, scalar)
            if m is None:
                return None
            steps.append(("op", _OPS[nm], [src, ("buf", b, m)], 0.0, 0.0))
        elif nm == "tosa.clamp":
            bounds = epilogue.clamp_bounds(at)
            if bounds is None:
                return None
            steps.append(("op", _OPS[nm], [src], float(bounds[0]), float(bounds[1])))
        else:
            steps.append(("op", _OPS[nm], [src], 0.0, 0.0))
    return steps


_SPLIT_PRODUCERS = ("tosa.matmul", "tosa.fully_connected")
"""GEMM kernels whose float32 post-ops move into a row program (joined with what follows)."""


def _split_gemm(task: TaskDesc, buffers: Sequence[BufferDesc],
                static_views: Sequence[np.ndarray | None]) -> tuple[TaskFn, tuple[int, int, list[tuple]]] | None:
    """(the GEMM alone, the post-ops as a row program reading its output), or None."""
    posts = list(task.args.get("post_ops", ()))
    if task.kernel not in _SPLIT_PRODUCERS or not posts or len(task.outs) != 1:
        return None
    all_ins, outs = list(task.ins), list(task.outs)
    if any(buffers[b].kind is not Kind.F32 for b in (*all_ins, *outs)) or _overlaps(all_ins, outs, buffers):
        return None
    extra = {p["operand"] for p in posts if p.get("operand") is not None}
    ins = [b for i, b in enumerate(all_ins) if i not in extra]
    out = buffers[outs[0]]
    rows, c, k = _geometry(out.shape)
    steps = _post_steps(posts, all_ins, buffers, out.shape, k, False, ("buf", outs[0], _FULL))
    if steps is None:
        return None
    gemm_fn = fast.build(task.kernel, dict(task.args.get("attrs", {})), [buffers[i] for i in ins], [out],
                         [static_views[i] if buffers[i].memory is Memory.CONSTANT else None for i in ins], None)
    if gemm_fn is None:
        return None
    o = outs[0]

    def run(views: Sequence[np.ndarray], _f=gemm_fn) -> None:
        _f([views[i] for i in ins], [views[o]], ())

    if isinstance(gemm_fn, NativeFn):
        run.bind = task_bind(gemm_fn, ins, [o], [])  # type: ignore[attr-defined]
    steps.append(("store", o, False))
    return run, (rows, c, steps)


def _try_add(g: _Group, ti: int, prog: list[tuple], buffers: Sequence[BufferDesc],
             tasks: Sequence[TaskDesc] = (), single_queue: bool = False) -> bool:
    """Append task ``ti``'s program to ``g`` if hazard-free (see the section comment); else leave ``g`` unchanged."""
    new_ins: list[Ins] = []
    new_vector: dict[int, bool] = {}
    new_args = list(g.args)
    new_reads = list(g.reads)
    nregs = g.nregs
    cur: int | None = None
    cur_scalar = False
    store: tuple[int, bool] | None = None

    def operand(src: tuple) -> tuple[int, bool] | None:
        if src[0] == "val":
            return cur, cur_scalar  # type: ignore[return-value]
        _, b, m = src
        r = _region(buffers[b])
        v = g.values.get(r)
        if v is not None:  # the same bytes the group computed: read the register (same geometry)
            reg, sc, _ = v
            if (m == _FULL and not sc) or (m == _ROWV and sc) or (m == _SCAL and sc and g.rows == 1):
                return reg, sc
            return None
        if any(_overlap(r, w) for w in g.values):
            return None
        key = (b, m)
        if key not in new_args:
            new_args.append(key)
        new_reads.append((r, m))
        return -1 - new_args.index(key), m in (_ROWV, _SCAL)

    for st in prog:
        if st[0] == "store":
            store = (st[1], st[2])
            continue
        _, code, srcs, lo, hi = st
        ops = []
        for s in srcs:
            o = operand(s)
            if o is None:
                return False
            ops.append(o)
        dst = nregs
        nregs += 1
        if code >= _OP["REDUCE_SUM"]:  # reduction: a row scalar
            cur_scalar = True
        elif len(ops) == 2:
            cur_scalar = ops[0][1] and ops[1][1]
        else:
            cur_scalar = ops[0][1]
        new_ins.append((code, dst, ops[0][0], ops[1][0] if len(ops) > 1 else 0, lo, hi, -1, 0))
        new_vector[dst] = not cur_scalar
        cur = dst
    assert store is not None and cur is not None
    ob, scalar = store
    if scalar != cur_scalar:
        return False
    wr = _region(buffers[ob])
    for r, m in new_reads:  # writing what the group read: only row by row, in place
        if _overlap(r, wr) and not (r == wr and m in ((_ROWV,) if scalar else (_FULL,))):
            return False
    clobbered = []
    for w in g.values:
        if _overlap(w, wr) and w != wr:
            # the plan put this task's result over a value the group computed: fine when nothing reads that value's
            # bytes after this task (with one queue, ``_live_after``): its register is then dropped, never stored
            rest = [(w[0], w[1], lo, hi - lo) for lo, hi in ((w[2], wr[2]), (wr[2] + wr[3], w[2] + w[3])) if hi > lo]
            if tasks and single_queue and not any(_live_after(r, ti, tasks, buffers, True) for r in rest):
                clobbered.append(w)
                continue
            return False
    for w in clobbered:
        del g.values[w]
    g.ins.extend(new_ins)
    g.vector.update(new_vector)
    g.args, g.reads, g.nregs = new_args, new_reads, nregs
    g.values[wr] = (cur, scalar, ob)
    g.tasks.append(ti)
    return True


def _live_after(region: tuple[Any, int, int, int], after: int, tasks: Sequence[TaskDesc],
                buffers: Sequence[BufferDesc], single_queue: bool) -> bool:
    """Whether some byte of ``region`` may be read after task ``after`` before being overwritten
    (io buffers and multi-executor runs: always)."""
    from nnkiln.blob.format import Memory as _M

    if region[0] is not _M.ARENA or not single_queue:
        return True
    left = [(region[2], region[2] + region[3])]  # byte ranges still holding the group's values
    for t in tasks[after + 1:]:
        for b in t.ins:
            r = _region(buffers[b])
            if r[0] == region[0] and r[1] == region[1] and any(lo < r[2] + r[3] and r[2] < hi for lo, hi in left):
                return True
        for b in t.outs:
            r = _region(buffers[b])
            if r[0] != region[0] or r[1] != region[1]:
                continue
            w0, w1 = r[2], r[2] + r[3]
            nxt: list[tuple[int, int]] = []
            for lo, hi in left:
                if w1 <= lo or hi <= w0:
                    nxt.append((lo, hi))
                    continue
                if lo < w0:
                    nxt.append((lo, w0))
                if w1 < hi:
                    nxt.append((w1, hi))
            left = nxt
        if not left:
            return False
    return False


_OP_CHAIN, _OP_STEP = _OP["CHAIN"], _OP["STEP"]
_CHAIN_BINARY = tuple(_OP[n] for n in ("ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM"))
_CHAIN_UNARY = tuple(_OP[n] for n in ("EXP", "TANH", "SIGMOID", "ABS", "NEGATE", "RECIPROCAL", "CLAMP"))
_COMMUTING = (_OP["ADD"], _OP["MUL"])  # float32 add and mul commute exactly
_MAX_STEPS = header.define("NK_MAX_STEPS")


def _sources(i: Ins) -> tuple[int, ...]:
    op, _, a, b, _, _, _, _ = i
    if op == _OP_STORE or op >= _OP["EXP"]:
        return (a,)
    return (a, b)


def _chain_up(ins: list[Ins], vector: dict[int, bool]) -> list[tuple[Ins, list[Ins]]]:
    """Group runs of cheap elementwise instructions into CHAINs: ``t = a; t = op_1(t, x_1); ...``
    where each intermediate is a row block read only by the next step: one pass over the block
    instead of one per operation (same float32 operations in the same order). Returns (head,
    steps) pairs: steps empty for a plain instruction."""
    uses: dict[int, int] = {}
    for i in ins:
        for r in _sources(i):
            uses[r] = uses.get(r, 0) + 1

    def step_of(i: Ins, t: int) -> Ins | None:
        """``i`` as a step applied to the running value ``t`` (None if it is not one)."""
        op, _, a, b, lo, hi, _, _ = i
        if op in _CHAIN_UNARY and a == t:
            return (_OP_STEP, -1, -1, -1, lo, hi, op, 0)
        if op in _CHAIN_BINARY and a != b:
            if a == t:
                return (_OP_STEP, -1, -1, -1, lo, hi, op, b)
            if b == t and op in _COMMUTING:
                return (_OP_STEP, -1, -1, -1, lo, hi, op, a)
        return None

    out: list[tuple[Ins, list[Ins]]] = []
    k = 0
    while k < len(ins):
        i = ins[k]
        op, dst, a, b, lo, hi, _, _ = i
        start: int | None = None
        first: Ins | None = None
        if vector.get(dst):  # the result is a row block: start from a row-block operand
            if op in _CHAIN_UNARY and vector.get(a):
                start, first = a, (_OP_STEP, -1, -1, -1, lo, hi, op, 0)
            elif op in _CHAIN_BINARY and a != b and vector.get(a):
                start, first = a, (_OP_STEP, -1, -1, -1, lo, hi, op, b)
            elif op in _COMMUTING and a != b and vector.get(b):
                start, first = b, (_OP_STEP, -1, -1, -1, lo, hi, op, a)
        steps: list[Ins] = [first] if first is not None else []
        cur, j = dst, k + 1
        while steps and j < len(ins) and uses.get(cur) == 1 and len(steps) < _MAX_STEPS:
            st = step_of(ins[j], cur)
            if st is None or not vector.get(ins[j][1]):
                break
            steps.append(st)
            cur = ins[j][1]
            j += 1
        if len(steps) >= 2 and start is not None:
            out.append(((_OP_CHAIN, cur, start, len(steps), 0.0, 0.0, -1, 0), steps))
            k = j
            continue
        out.append((i, []))
        k += 1
    return out


def _allocate_registers(macro: list[tuple[Ins, list[Ins]]]) -> tuple[list[Ins], int]:
    """Reuse scratch registers (a virtual register per value -> as few as are live at once) and
    flatten to the native program. A destination never shares a register with its own sources
    (row-wise kernels write as they read)."""
    def srcs(head: Ins, steps: list[Ins]) -> list[int]:
        if head[0] == _OP_CHAIN:
            return [head[2]] + [st[7] for st in steps if st[6] in _CHAIN_BINARY]
        return list(_sources(head))

    last: dict[int, int] = {}
    for k, (head, steps) in enumerate(macro):
        for r in srcs(head, steps):
            if r >= 0:
                last[r] = k
    free: list[int] = []
    phys: dict[int, int] = {}
    n = 0
    out: list[Ins] = []
    for k, (head, steps) in enumerate(macro):
        op, dst, a, b, lo, hi, op2, c = head
        used = srcs(head, steps)
        m = lambda r: phys[r] if r >= 0 else r  # noqa: E731
        if op == _OP_STORE:
            out.append((op, dst, m(a), b, lo, hi, op2, c))
        else:
            pd = free.pop() if free else n
            n = max(n, pd + 1)
            phys[dst] = pd
            if op == _OP_CHAIN:
                out.append((op, pd, m(a), b, lo, hi, op2, c))
                out.extend((s0, s1, s2, s3, s4, s5, s6, m(s7) if s6 in _CHAIN_BINARY else s7)
                           for s0, s1, s2, s3, s4, s5, s6, s7 in steps)
            else:
                out.append((op, pd, m(a), m(b) if b in used[1:] else b, lo, hi, op2, c))
        for r in set(used):
            if r >= 0 and last.get(r) == k:
                free.append(phys[r])
        if op != _OP_STORE and dst not in last:  # never read: free at once
            free.append(phys[dst])
    return out, n


def _store_directly(ins: list[Ins]) -> list[Ins]:
    """Let the last computed value go straight to its output argument when its only use is the
    STORE that follows (all STOREs come after every computation: nothing reads afterwards)."""
    heads = [k for k, i in enumerate(ins) if i[0] not in (_OP_STORE, _OP_STEP)]
    if not heads:
        return ins
    last = heads[-1]
    reg = ins[last][1]
    stores = [k for k, i in enumerate(ins) if i[0] == _OP_STORE and i[2] == reg]
    if len(stores) != 1 or stores[0] < last:
        return ins
    k = stores[0]
    h = ins[last]
    out = list(ins)
    out[last] = (h[0], -1 - ins[k][1], *h[2:])
    del out[k]
    return out


class RowGroup:
    """A group of tasks run as one native row program: ``fn(views)``."""

    def __init__(self, g: _Group, tasks: Sequence[TaskDesc], buffers: Sequence[BufferDesc],
                 static_views: Sequence[np.ndarray | None], single_queue: bool, threads: int):
        self.tasks = list(g.tasks)
        ins = list(g.ins)
        args = list(g.args)
        last = g.tasks[-1]
        for region, (reg, scalar, b) in g.values.items():
            if _live_after(region, last, tasks, buffers, single_queue):
                key = (b, _ROWV if scalar else _FULL)
                if key not in args:
                    args.append(key)
                ins.append((_OP_STORE, args.index(key), reg, 0, 0.0, 0.0, -1, 0))
        macro = _chain_up(ins, {**g.vector, **{-1 - k: m == _FULL for k, (_, m) in enumerate(args)}})
        ins, nregs = _allocate_registers(macro)
        ins = _store_directly(ins)
        self.prog = (_Ins * len(ins))(*[_Ins(*i) for i in ins])
        self.nins, self.nregs = len(ins), nregs
        self.ptrs = (ctypes.c_void_p * len(args))()
        self.dynamic: list[tuple[int, int]] = []
        for k, (b, _) in enumerate(args):
            v = static_views[b]
            if v is None:
                self.dynamic.append((k, b))
            else:
                self.ptrs[k] = v.ctypes.data
        self.modes = (ctypes.c_int32 * len(args))(*[m for _, m in args])
        self.rows, self.c = g.rows, g.c
        if all(m in (_FULL, _SCAL) for _, m in args) and not any(_OP["REDUCE_SUM"] <= i[0] < _OP_STORE for i in ins):
            # purely elementwise over contiguous data: any cut into rows is the same computation;
            # choose rows of at most _BLOCK_FLOATS so a block's registers stay in L1
            total = g.rows * g.c
            cut = next((d for d in range(min(total, _BLOCK_FLOATS), 63, -1) if total % d == 0), 0)
            if cut:
                self.rows, self.c = total // cut, cut
        self.block = max(1, min(self.rows, _BLOCK_FLOATS // max(self.c, 1)))
        self.threads = threads if g.rows * g.c >= _PAR_MIN_ELEMENTS and self.rows > self.block else 1
        self.lib = _rows_lib()

    def __call__(self, views: Sequence[np.ndarray]) -> None:
        ptrs = self.ptrs
        for k, b in self.dynamic:
            ptrs[k] = views[b].ctypes.data
        if self.lib.nk_rows_run(self.prog, self.nins, self.nregs, ptrs, self.modes, self.rows, self.c, self.block,
                                self.threads):
            raise MemoryError("row program: scratch allocation failed")

    def bind(self, views: Sequence[np.ndarray | None]) -> Bound | None:
        """The program as one bound call (``kernels.bound``); a graph input/output buffer is taken from ``views``
        (a probe view: the chain patches its entry of ``ptrs`` on each run), None if it is absent."""
        if self.lib is None or any(views[b] is None for _, b in self.dynamic):
            return None
        for k, b in self.dynamic:
            self.ptrs[k] = views[b].ctypes.data  # type: ignore[union-attr]
        args = slots(ctypes.addressof(self.prog), self.nins, self.nregs, ctypes.addressof(self.ptrs),
                     ctypes.addressof(self.modes), self.rows, self.c, self.block, self.threads)
        return Bound([(address(self.lib.nk_rows_run_b), args)], [self, self.ptrs])


def _fold_transposes(tasks: Sequence[TaskDesc], queue: Sequence[int], buffers: Sequence[BufferDesc],
                     static_views: Sequence[np.ndarray | None]) -> tuple[set[int], dict[int, TaskFn]]:
    """One queue: a float32 TRANSPOSE whose result only feeds a later float32 MATMUL (no post-ops)
    is not executed; the MATMUL reads the transposed (strided) view of the TRANSPOSE's input
    instead (BLAS takes the strides; same products, same sums). Legal when nothing writes the
    input's bytes in between and nothing else reads the transposed buffer. Returns (dropped tasks,
    replacement callables of the matmuls)."""
    from nnkiln.blob.format import Memory as _M

    pos = {ti: k for k, ti in enumerate(queue)}
    dropped: set[int] = set()
    subst: dict[int, dict[int, tuple[int, tuple[int, ...]]]] = {}  # matmul -> {operand: (src, perms)}
    for k, ti in enumerate(queue):
        t = tasks[ti]
        perms = t.args.get("attrs", {}).get("perms")
        if t.kernel != "tosa.transpose" or len(t.ins) != 1 or len(t.outs) != 1 or not isinstance(perms, tuple):
            continue
        src, dst = t.ins[0], t.outs[0]
        if buffers[src].kind is not Kind.F32 or buffers[dst].kind is not Kind.F32 or buffers[src].memory is _M.CONSTANT:
            continue
        if t.args.get("post_ops") or _overlap(_region(buffers[src]), _region(buffers[dst])):
            continue
        xs = buffers[src].shape
        if sorted(perms) != list(range(len(xs))) or tuple(xs[p] for p in perms) != buffers[dst].shape:
            continue
        rd, rs = _region(buffers[dst]), _region(buffers[src])
        user = None
        for tj in queue[k + 1:]:
            u = tasks[tj]
            reads = [b for b in u.ins if _overlap(rd, _region(buffers[b]))]
            if reads:
                user = tj
                break
            if any(_overlap(rs, _region(buffers[b])) or _overlap(rd, _region(buffers[b])) for b in u.outs):
                break  # the input (or the result) is overwritten before a use
        if user is None:
            continue
        m = tasks[user]
        if m.kernel != "tosa.matmul" or m.args.get("post_ops") or len(m.ins) != 2 or len(m.outs) != 1:
            continue
        hits = [i for i, b in enumerate(m.ins) if _overlap(rd, _region(buffers[b]))]
        if len(hits) != 1 or _region(buffers[m.ins[hits[0]]]) != rd or buffers[m.ins[hits[0]]].shape != buffers[dst].shape:
            continue
        if any(_overlap(rs, _region(buffers[b])) for b in m.outs) or any(
                buffers[b].kind is not Kind.F32 for b in (*m.ins, *m.outs)):
            continue
        if _live_after(rd, user, tasks, buffers, True) or pos[user] <= k:
            continue
        dropped.add(ti)
        subst.setdefault(user, {})[hits[0]] = (src, perms)
    repl: dict[int, TaskFn] = {}
    for user, ops in subst.items():
        m = tasks[user]
        ib = [buffers[b] for b in m.ins]
        f = fast.build(m.kernel, dict(m.args.get("attrs", {})), ib, [buffers[m.outs[0]]],
                       [static_views[b] if buffers[b].memory is _M.CONSTANT else None for b in m.ins], None)
        if f is None:
            dropped -= {t for t in queue if t in dropped and any(tasks[t].ins[0] == s for s, _ in ops.values())}
            continue
        srcs = [(ops[i][0], ops[i][1]) if i in ops else (b, None) for i, b in enumerate(m.ins)]
        o = m.outs[0]

        def run(views: Sequence[np.ndarray], _f=f, _srcs=srcs, _o=o) -> None:
            _f([views[b] if p is None else views[b].transpose(p) for b, p in _srcs], [views[_o]], ())

        if isinstance(f, NativeFn):
            def bind(views: Sequence[np.ndarray | None], _f=f, _srcs=srcs, _o=o) -> Bound | None:
                xs = [views[b] for b, _ in _srcs]
                if views[_o] is None or any(x is None for x in xs):
                    return None
                return _f.bind([x if p is None else x.transpose(p) for x, (_, p) in zip(xs, _srcs)], [views[_o]], ())

            run.bind = bind  # type: ignore[attr-defined]
        repl[user] = run
    return dropped, repl


def row_groups(tasks: Sequence[TaskDesc], queue: Sequence[int], buffers: Sequence[BufferDesc],
               static_views: Sequence[np.ndarray | None], *, single_queue: bool,
               threads: int) -> list[RowGroup | int | tuple[TaskFn, int]]:
    """Split ``queue`` (task indices in order) into native row groups, single tasks (their index) and
    (with one queue) GEMMs whose post-ops were moved into the next row group (``(fn, index)``).
    Every task stays single when the native library is unavailable."""
    out: list[RowGroup | int | tuple[TaskFn, int]]
    dropped, repl = _fold_transposes(tasks, queue, buffers, static_views) if single_queue else (set(), {})
    if dropped:
        queue = [ti for ti in queue if ti not in dropped]
    if _rows_lib() is None:
        return [(repl[ti], ti) if ti in repl else ti for ti in queue]
    out = []
    g: _Group | None = None

    def flush() -> None:
        nonlocal g
        if g is not None:
            out.append(RowGroup(g, tasks, buffers, static_views, single_queue, threads))
        g = None

    for ti in queue:
        t = tasks[ti]
        if ti in repl:
            flush()
            out.append((repl[ti], ti))
            continue
        tp = _task_program(t, buffers)
        split = _split_gemm(t, buffers, static_views) if single_queue and tp is None else None
        if split is not None:  # the GEMM now, its post-ops as the start of a row group
            flush()
            out.append((split[0], ti))
            tp = split[1]
        if tp is None:
            flush()
            out.append(ti)
            continue
        rows, c, prog = tp
        joinable = g is not None and (g.rows, g.c) == (rows, c) and (single_queue or (
            not t.waits and not tasks[g.tasks[-1]].updates))
        if not (joinable and _try_add(g, ti, prog, buffers, tasks, single_queue)):  # type: ignore[arg-type]
            flush()
            g = _Group(rows, c)
            if not _try_add(g, ti, prog, buffers, tasks, single_queue):
                g = None
                out.append(ti)
                continue
        if not single_queue and t.updates:
            flush()
    flush()
    return out


__all__ = ["RowGroup", "TaskFn", "build_task", "row_groups"]
