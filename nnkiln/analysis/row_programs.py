"""Row programs: runs of float32 elementwise tasks, row reductions and their post-ops planned as one kernel.

Consecutive float32 tasks of one queue that are elementwise ops, reductions over the last (non-trivial) axis and
their post-ops, all over the same row geometry ``[rows, C]``, become ONE ``fused.row_program`` task
(``nnkiln.blob.row_program``): the program runs block of rows by block of rows while the block is in cache
(softmax = reduce_max, sub+exp, reduce_sum+reciprocal, mul; layer norm = 6 tasks; the GELU/Erf chain = 3 tasks)
and stores only the values that may be read after the group (``live_after``: io outputs, and arena bytes read
later before being overwritten). Runs of cheap elementwise steps whose intermediates are read once become CHAINs
evaluated in registers (one pass over the block instead of one per op). The post-ops of a float GEMM (MATMUL,
FULLY_CONNECTED) move into the group that follows it (one queue).

Hazards: a task joins a group only if every buffer it reads is either untouched by the group or exactly a value
the group computed with the same geometry (then it is read from the register), and every buffer it writes is
either disjoint from what the group read or exactly a region read row by row (in place), and disjoint from the
values the group computed unless nothing reads such a value's bytes afterwards (softmax's row sums planned over
its scaled input: the register is dropped, never stored). With several queues only tasks with no barrier between
them are grouped. Numerics: the same float32 operations in the same order as the reference kernels (row sums in
numpy's pairwise order); exp/tanh/sigmoid are the C file's own float32 functions (a few ulp from numpy's).

``plan(tasks, buffers)`` returns the ``TaskEdit``s; no xDSL.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from nnkiln.analysis.byte_regions import live_after, outputs_overlap_inputs, overlap, queues, region
from nnkiln.analysis.task_edits import NewTask, TaskEdit
from nnkiln.blob import row_program as isa
from nnkiln.blob.format import BufferDesc, TaskDesc
from nnkiln.blob.row_program import clamp_bounds
from nnkiln.kinds import Kind

_OPS = {name: int(op) for name, op in isa.TOSA_OPS.items()}
_OP_STORE, _OP_CHAIN, _OP_STEP = int(isa.Op.STORE), int(isa.Op.CHAIN), int(isa.Op.STEP)
_FULL, _CHAN, _ROWV, _SCAL = (int(isa.Mode[m]) for m in ("FULL", "CHAN", "ROWV", "SCAL"))
_BINARY = frozenset(int(o) for o in isa.BINARY)
_REDUCE = frozenset(int(o) for o in isa.REDUCE)
_COMMUTE = (int(isa.Op.ADD), int(isa.Op.MUL))
_CHAIN_BINARY = tuple(int(o) for o in isa.CHAIN_BINARY)
_CHAIN_UNARY = tuple(int(o) for o in isa.CHAIN_UNARY)
_MAX_STEPS = isa.MAX_STEPS
Ins = isa.Ins

PARALLEL_MIN_ELEMENTS = 1 << 13
"""Groups smaller than this run on one thread (waking threads costs more than it saves; bench/RESULTS.md)."""
BLOCK_FLOATS = 2048
"""Rows per block: about this many floats (8 KiB per register: a few live registers stay in L1)."""
_SPLIT_PRODUCERS = ("tosa.matmul", "tosa.fully_connected")
"""GEMM kernels whose float32 post-ops move into a row program (joined with what follows)."""


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
            bounds = clamp_bounds(at)
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
            bounds = clamp_bounds(at)
            if bounds is None:
                return None
            steps.append(("op", _OPS[nm], [src], float(bounds[0]), float(bounds[1])))
        else:
            steps.append(("op", _OPS[nm], [src], 0.0, 0.0))
    return steps



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
        r = region(buffers[b])
        v = g.values.get(r)
        if v is not None:  # the same bytes the group computed: read the register (same geometry)
            reg, sc, _ = v
            if (m == _FULL and not sc) or (m == _ROWV and sc) or (m == _SCAL and sc and g.rows == 1):
                return reg, sc
            return None
        if any(overlap(r, w) for w in g.values):
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
        if code in _REDUCE:  # reduction: a row scalar
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
    wr = region(buffers[ob])
    for r, m in new_reads:  # writing what the group read: only row by row, in place
        if overlap(r, wr) and not (r == wr and m in ((_ROWV,) if scalar else (_FULL,))):
            return False
    clobbered = []
    for w in g.values:
        if overlap(w, wr) and w != wr:
            # the plan put this task's result over a value the group computed: fine when nothing reads that value's
            # bytes after this task (with one queue, ``_live_after``): its register is then dropped, never stored
            rest = [(w[0], w[1], lo, hi - lo) for lo, hi in ((w[2], wr[2]), (wr[2] + wr[3], w[2] + w[3])) if hi > lo]
            if tasks and single_queue and not any(live_after(r, ti, tasks, buffers, True) for r in rest):
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


def _sources(i: Ins) -> tuple[int, ...]:
    op, _, a, b, _, _, _, _ = i
    if op not in _BINARY:  # unary, reduction, STORE, CHAIN: one source
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
            if b == t and op in _COMMUTE:  # add / mul commute exactly
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
            elif op in _COMMUTE and a != b and vector.get(b):
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


def _gemm_post_ops(task: TaskDesc, buffers: Sequence[BufferDesc]) -> tuple[NewTask, tuple[int, int, list[tuple]]] | None:
    """A float GEMM with post-ops as (the GEMM alone, its post-ops as a row program reading its output), or None."""
    posts = list(task.args.get("post_ops", ()))
    if task.kernel not in _SPLIT_PRODUCERS or not posts or len(task.outs) != 1:
        return None
    all_ins, outs = list(task.ins), list(task.outs)
    if any(buffers[b].kind is not Kind.F32 for b in (*all_ins, *outs)) or outputs_overlap_inputs(all_ins, outs, buffers):
        return None
    extra = {p["operand"] for p in posts if p.get("operand") is not None}
    ins = [b for i, b in enumerate(all_ins) if i not in extra]
    out = buffers[outs[0]]
    rows, c, k = _geometry(out.shape)
    steps = _post_steps(posts, all_ins, buffers, out.shape, k, False, ("buf", outs[0], _FULL))
    if steps is None:
        return None
    steps.append(("store", outs[0], False))
    gemm = NewTask(task.kernel, tuple(ins), tuple(outs), dict(task.args.get("attrs", {})))
    return gemm, (rows, c, steps)


def _finish(g: _Group, tasks: Sequence[TaskDesc], buffers: Sequence[BufferDesc], single_queue: bool) -> NewTask:
    """The ``fused.row_program`` task of a group: stores of the values read later, CHAINs, registers reused."""
    ins = list(g.ins)
    args = list(g.args)
    last = g.tasks[-1]
    for reg_, (reg, scalar, b) in g.values.items():
        if live_after(reg_, last, tasks, buffers, single_queue):
            key = (b, _ROWV if scalar else _FULL)
            if key not in args:
                args.append(key)
            ins.append((_OP_STORE, args.index(key), reg, 0, 0.0, 0.0, -1, 0))
    macro = _chain_up(ins, {**g.vector, **{-1 - k: m == _FULL for k, (_, m) in enumerate(args)}})
    prog, nregs = _allocate_registers(macro)
    prog = _store_directly(prog)
    rows, c = g.rows, g.c
    if all(m in (_FULL, _SCAL) for _, m in args) and not any(i[0] in _REDUCE for i in prog):
        # purely elementwise over contiguous data: any cut into rows is the same computation; choose rows of at
        # most BLOCK_FLOATS so a block's registers stay in L1
        total = rows * c
        cut = next((d for d in range(min(total, BLOCK_FLOATS), 63, -1) if total % d == 0), 0)
        if cut:
            rows, c = total // cut, cut
    block = max(1, min(rows, BLOCK_FLOATS // max(c, 1)))
    written = {i[1] for i in prog if i[0] == _OP_STORE} | {-1 - i[1] for i in prog
                                                           if i[0] not in (_OP_STORE, _OP_STEP) and i[1] < 0}
    ins_bufs = [b for k, (b, _) in enumerate(args) if k not in written]
    ins_bufs = list(dict.fromkeys(ins_bufs))
    outs_bufs = list(dict.fromkeys(b for k, (b, _) in enumerate(args) if k in written))
    position = [len(ins_bufs) + outs_bufs.index(b) if k in written else ins_bufs.index(b)
                for k, (b, _) in enumerate(args)]
    code, bounds = isa.encode(prog)
    attrs = {"code": code, "bounds": bounds, "registers": nregs, "rows": rows, "cols": c, "block": block,
             "modes": [m for _, m in args], "args": position,
             "parallel": single_queue and g.rows * g.c >= PARALLEL_MIN_ELEMENTS and rows > block}
    return NewTask(isa.KERNEL, tuple(ins_bufs), tuple(outs_bufs), attrs)


def plan(tasks: Sequence[TaskDesc], buffers: Sequence[BufferDesc]) -> list[TaskEdit]:
    """The row programs of every queue (see the module docstring)."""
    qs = queues(tasks)
    single = len(qs) <= 1
    edits: list[TaskEdit] = []
    for queue in qs:
        pending: list[NewTask] = []  # a split GEMM waiting for the group its post-ops start
        g: _Group | None = None
        members: list[int] = []

        def flush() -> None:
            nonlocal g, members, pending
            if g is not None:
                edits.append(TaskEdit(tuple(members), (*pending, _finish(g, tasks, buffers, single))))
            g, members, pending = None, [], []

        for ti in queue:
            t = tasks[ti]
            tp = _task_program(t, buffers)
            split = _gemm_post_ops(t, buffers) if single and tp is None else None
            if split is not None:  # the GEMM now, its post-ops as the start of a row group
                flush()
                pending = [split[0]]
                tp = split[1]
            if tp is None:
                flush()
                continue
            rows, c, prog = tp
            joinable = split is None and g is not None and (g.rows, g.c) == (rows, c) and (single or (
                not t.waits and not tasks[g.tasks[-1]].updates))
            if not (joinable and _try_add(g, ti, prog, buffers, tasks, single)):  # type: ignore[arg-type]
                if split is None:
                    flush()
                g = _Group(rows, c)
                if not _try_add(g, ti, prog, buffers, tasks, single):
                    g, pending = None, []  # a split GEMM whose post-ops cannot start a group: left as it is
                    continue
            members.append(ti)
            if not single and t.updates:
                flush()
        flush()
    return edits


__all__ = ["BLOCK_FLOATS", "PARALLEL_MIN_ELEMENTS", "plan"]
