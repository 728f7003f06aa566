"""Independent checks of an rt-level module (written for the tests; shares no code with the passes).

- ``reconstruct``: tasks in order, the byte ranges each task reads and writes (views resolved by hand),
  barrier uses split by the documented rule (a physical id's use changes at the first updating task
  after a waiting task), the happens-before relation (FIFO per queue + barrier uses).
- ``check_hazards``: every pair of tasks touching overlapping bytes, one of them writing, is ordered.
- ``check_memory``: arena buffers whose bytes overlap have disjoint live ranges (first..last task
  using them, in task order); offsets aligned; the arena holds every buffer; arena >= lower bound
  (recomputed here from the live ranges).
- ``simulate``: runs the tasks with numpy reference kernels in a random order the barriers allow, in
  one shared arena, and returns the outputs.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np


@dataclass
class TaskInfo:
    op: object
    queue: tuple[str, int]
    waits: tuple[int, ...]
    updates: tuple[int, ...]
    reads: list[tuple[str, int, int, int]] = field(default_factory=list)  # (section, index, start, end)
    writes: list[tuple[str, int, int, int]] = field(default_factory=list)
    arena_buffers: set = field(default_factory=set)


def _itemsize(t) -> int:
    from nnkiln.ir.elements import dtype_of

    return dtype_of(t.element_type).itemsize


def _nbytes(t) -> int:
    n = 1
    for d in t.get_shape():
        n *= d
    return n * _itemsize(t)


def resolve(value):
    """(root op, byte offset inside the root) of a buffer value, following views and kernel aliases."""
    offset = 0
    while True:
        op = value.owner
        name = getattr(op, "name", None)
        if name == "buf.reshape":
            value = op.operands[0]
        elif name == "buf.subview":
            src = op.operands[0].type
            shape = list(src.get_shape())
            offs = list(op.offsets.get_values())
            idx = 0
            for d, o in zip(shape, offs):
                idx = idx * d + o
            offset += idx * _itemsize(src)
            value = op.operands[0]
        elif name in ("buf.kernel", "buf.copy"):
            n_ins = len(op.ins)
            value = op.operands[n_ins + value.index]
        else:
            return op, offset


def _range(value):
    root, off = resolve(value)
    if root.name == "rt.buffer":
        sec = root.section.data
        idx = root.index.value.data if root.index is not None else 0
        start = root.offset.value.data + off
        return (sec, idx, start, start + _nbytes(value.type)), root
    return ("const", id(root), off, off + _nbytes(value.type)), root


def reconstruct(module):
    from nnkiln.dialects.rt import TaskOp

    tasks: list[TaskInfo] = []
    for op in module.walk():
        if isinstance(op, TaskOp):
            t = TaskInfo(op, (op.executor_name, op.executor_index_value), op.wait_ids, op.update_ids)
            for inner in op.body.block.ops:
                if inner.name in ("buf.kernel", "buf.copy"):
                    for v in inner.ins:
                        r, root = _range(v)
                        t.reads.append(r)
                        if r[0] == "arena":
                            t.arena_buffers.add(root)
                    for v in inner.outs:
                        r, root = _range(v)
                        t.writes.append(r)
                        if r[0] == "arena":
                            t.arena_buffers.add(root)
            tasks.append(t)
    # barrier uses: per physical id, a new use starts at an updating task after a waiting task
    use_of_wait: dict[tuple[int, int], int] = {}
    use_of_update: dict[tuple[int, int], int] = {}
    uses: list[tuple[list[int], list[int], int]] = []  # (producers, consumers, physical id)
    state: dict[int, tuple[int, bool]] = {}  # id -> (use index, seen a consumer)
    for i, t in enumerate(tasks):
        for b in t.updates:
            cur = state.get(b)
            if cur is None or cur[1]:
                uses.append(([], [], b))
                cur = (len(uses) - 1, False)
                state[b] = cur
            uses[cur[0]][0].append(i)
            use_of_update[(i, b)] = cur[0]
        for b in t.waits:
            cur = state.get(b)
            assert cur is not None, f"task {i} waits on barrier {b} before any task updates it"
            uses[cur[0]][1].append(i)
            use_of_wait[(i, b)] = cur[0]
            state[b] = (cur[0], True)
    anc: list[int] = []
    last: dict[tuple[str, int], int] = {}
    for i, t in enumerate(tasks):
        bits = 0
        preds = [p for b in t.waits for p in uses[use_of_wait[(i, b)]][0]]
        if t.queue in last:
            preds.append(last[t.queue])
        for p in preds:
            assert p < i
            bits |= anc[p] | (1 << p)
        anc.append(bits)
        last[t.queue] = i
    return tasks, anc, uses


def _overlap(a, b) -> bool:
    return a[0] == b[0] and a[1] == b[1] and a[2] < b[3] and b[2] < a[3]


def check_hazards(tasks, anc) -> int:
    """Every RAW/WAR/WAW pair is ordered by happens-before; returns the number of pairs checked."""
    checked = 0
    for j, tj in enumerate(tasks):
        for i in range(j):
            ti = tasks[i]
            hazard = any(_overlap(w, x) for w in ti.writes for x in tj.reads + tj.writes) or \
                any(_overlap(r, w) for r in ti.reads for w in tj.writes)
            if hazard:
                checked += 1
                assert (anc[j] >> i) & 1, f"tasks {i} and {j} touch the same bytes but are not ordered"
    return checked


def check_memory(module, tasks, alignment: int = 64) -> tuple[int, int]:
    """Returns (arena bytes, lower bound recomputed here)."""
    from nnkiln.dialects.rt import BufferOp

    arena = module.attributes["nnkiln.arena_bytes"].value.data
    live: dict[object, list[int]] = {}
    for i, t in enumerate(tasks):
        for b in t.arena_buffers:
            live.setdefault(b, [i, i])[1] = i
    bufs = [op for op in module.walk() if isinstance(op, BufferOp) and op.section.data == "arena"]
    for b in bufs:
        off = b.offset.value.data
        assert off % alignment == 0
        assert off + _nbytes(b.buffer.type) <= arena
    items = [(b, b.offset.value.data, b.offset.value.data + _nbytes(b.buffer.type), *live[b]) for b in bufs if b in live]
    for x in range(len(items)):
        for y in range(x + 1, len(items)):
            a, c = items[x], items[y]
            if a[1] < c[2] and c[1] < a[2]:
                assert a[4] < c[3] or c[4] < a[3], "two simultaneously live buffers share bytes"
    bound = 0
    for i in range(len(tasks)):
        bound = max(bound, sum(-(-(e - s) // alignment) * alignment for _, s, e, f, last in items if f <= i <= last))
    assert arena >= bound
    return arena, bound


def simulate(module, inputs: dict[str, np.ndarray], seed: int = 0) -> list[np.ndarray]:
    """Run the rt module with reference kernels in a random order allowed by FIFO queues and barriers."""
    from xdsl.dialects.func import FuncOp

    from nnkiln.dialects.tosa.base import from_attr, kind_of
    from nnkiln.ir.elements import dtype_of, to_numpy
    from nnkiln.reference.registry import KernelCall, load_kernels

    kernels = load_kernels()
    func = next(op for op in module.walk() if isinstance(op, FuncOp))
    attrs = [d.data for d in func.arg_attrs.data]
    in_types = [a.type for a, d in zip(func.body.block.args, attrs) if d["nnkiln.io"].data == "input"]
    out_types = [a.type for a, d in zip(func.body.block.args, attrs) if d["nnkiln.io"].data == "output"]
    names = [d["nnkiln.name"].data for d in attrs if d["nnkiln.io"].data == "input"]
    arena = np.zeros(module.attributes["nnkiln.arena_bytes"].value.data + 64, np.uint8)
    ins = [np.ascontiguousarray(inputs[n], dtype_of(t.element_type)).reshape(-1).view(np.uint8) for n, t in zip(names, in_types)]
    outs = [np.zeros(_nbytes(t), np.uint8) for t in out_types]

    def view(value):
        root, off = resolve(value)
        t = value.type
        if root.name == "buf.const":
            return np.array(to_numpy(root.values)).reshape(t.get_shape())
        sec = root.section.data
        mem = arena if sec == "arena" else (ins if sec == "input" else outs)[root.index.value.data]
        start = (root.offset.value.data if sec == "arena" else 0) + off
        return mem[start:start + _nbytes(t)].view(dtype_of(t.element_type)).reshape(t.get_shape())

    def tosa(name, operands, attrs, o):
        call = KernelCall(name, operands, attrs, [kind_of(o.element_type)], [dtype_of(o.element_type)],
                          [tuple(o.get_shape())], [kind_of(o.element_type)] * len(operands))
        return kernels[name](call)[0]

    def run_kernel(op):
        if op.name == "buf.copy":
            view(op.outs[0])[...] = view(op.ins[0]).reshape(op.outs[0].type.get_shape())
            return
        a = {k: from_attr(v) for k, v in op.attrs.data.items()}
        if op.kernel.data == "fused.row_program":
            _row_program(a, [view(v) for v in (*op.ins, *op.outs)])
            return
        o = op.outs[0].type
        if op.kernel.data == "fused.conv2d_depthwise":  # x, w1, b1, w2, b2 -> y, expanded
            x, w1, b1, w2, b2 = (np.array(view(v)) for v in op.ins)
            e = tosa("tosa.conv2d", [x, w1, b1], _conv_attrs(a, "pw"), op.outs[1].type)
            view(op.outs[0])[...] = tosa("tosa.depthwise_conv2d", [_clamped(e, a["pw_clamp"]), w2, b2],
                                         _conv_attrs(a, "dw"), o)
            view(op.outs[0])[...] = _clamped(view(op.outs[0]), a["dw_clamp"])
            return
        perms = op.perms()
        operands = [np.ascontiguousarray(np.array(view(v)).transpose(p)) if p else np.array(view(v))
                    for v, p in zip(op.ins, perms)]
        call = KernelCall(op.kernel.data, operands[: len(op.ins) - _extra(op)], a,
                          [kind_of(o.element_type)], [dtype_of(o.element_type)], [tuple(o.get_shape())],
                          [kind_of(v.type.element_type) for v in op.ins])
        result = kernels[op.kernel.data](call)[0]
        for post in (op.post_ops.data if op.post_ops else ()):
            d = post.data
            extra = [np.array(view(op.ins[d["operand"].value.data]))] if "operand" in d else []
            pa = {k: from_attr(v) for k, v in d["attrs"].data.items()}
            call = KernelCall(d["kernel"].data, [result, *extra], pa, [kind_of(o.element_type)],
                              [dtype_of(o.element_type)], [tuple(o.get_shape())])
            result = kernels[d["kernel"].data](call)[0]
        view(op.outs[0])[...] = result

    tasks, _, uses = reconstruct(module)
    pending = [len(p) for p, _, _ in uses]
    producers_use = {}
    waits_use = {}
    for u, (prods, cons, _) in enumerate(uses):
        for p in prods:
            producers_use.setdefault(p, []).append(u)
        for c in cons:
            waits_use.setdefault(c, []).append(u)
    queues: dict[tuple[str, int], list[int]] = {}
    for i, t in enumerate(tasks):
        queues.setdefault(t.queue, []).append(i)
    rng = random.Random(seed)
    done = 0
    while done < len(tasks):
        ready = [q[0] for q in queues.values() if q and all(pending[u] == 0 for u in waits_use.get(q[0], ()))]
        assert ready, "deadlock"
        i = rng.choice(ready)
        queues[tasks[i].queue].pop(0)
        for inner in tasks[i].op.body.block.ops:
            if inner.name in ("buf.kernel", "buf.copy"):
                run_kernel(inner)
        for u in producers_use.get(i, ()):
            pending[u] -= 1
        done += 1
    return [o.view(dtype_of(t.element_type)).reshape(t.get_shape()) for o, t in zip(outs, out_types)]


def _conv_attrs(a: dict, prefix: str) -> dict:
    return {"pad": a[f"{prefix}_pad"], "stride": a[f"{prefix}_stride"], "dilation": a[f"{prefix}_dilation"],
            "input_zp": 0, "weight_zp": 0}


def _clamped(x: np.ndarray, bounds) -> np.ndarray:
    return np.clip(x, np.float32(bounds[0]), np.float32(bounds[1])) if len(bounds) else np.asarray(x)


def _row_program(a: dict, bufs: list[np.ndarray]) -> None:
    """``fused.row_program`` as the blob format documents it, written here from the documentation: instructions of
    6 integers (op, dst, a, b, op2, c) and 2 floats (lo, hi); operands >= 0 registers, < 0 arguments; whole arrays
    (a row block is [rows, cols], a per-row value [rows, 1])."""
    rows, cols = a["rows"], a["cols"]
    shape = {0: (rows, cols), 1: (1, cols), 2: (rows, 1), 3: (1, 1)}
    args = [bufs[j].reshape(-1)[:int(np.prod(shape[m]))].reshape(shape[m]) for j, m in zip(a["args"], a["modes"])]
    code, bounds = list(a["code"]), list(a["bounds"])
    prog = [(code[6 * i:6 * i + 6], bounds[2 * i:2 * i + 2]) for i in range(len(code) // 6)]
    f = np.float32
    binary = {0: np.add, 1: np.subtract, 2: np.multiply, 3: np.maximum, 4: np.minimum, 5: np.divide}

    def unary(op, x, lo, hi):
        return {10: np.exp, 11: np.tanh, 12: lambda v: f(1) / (np.exp(-v) + f(1)), 13: np.abs, 14: np.negative,
                15: lambda v: f(1) / v, 16: lambda v: f(1) / np.sqrt(v), 17: lambda v: np.clip(v, f(lo), f(hi)),
                18: lambda v: v}[op](x)

    regs: dict[int, np.ndarray] = {}

    def read(i):
        return regs[i] if i >= 0 else args[-1 - i]

    def write(d, value):
        if d >= 0:
            regs[d] = np.array(value, np.float32)
        else:
            args[-1 - d][...] = np.broadcast_to(value, args[-1 - d].shape)

    k = 0
    with np.errstate(all="ignore"):
        while k < len(prog):
            (op, dst, x, y, _, _), (lo, hi) = prog[k]
            if op == 30:
                args[dst][...] = np.broadcast_to(read(x), args[dst].shape)
            elif op == 40:
                v = read(x)
                for (_, _, _, _, op2, c), (lo2, hi2) in prog[k + 1:k + 1 + y]:
                    v = binary[op2](v, read(c)) if op2 < 10 else unary(op2, v, lo2, hi2)
                write(dst, v)
                k += y
            elif op < 10:
                write(dst, binary[op](read(x), read(y)))
            elif op < 20:
                write(dst, unary(op, read(x), lo, hi))
            else:
                red = {20: np.sum, 21: np.max, 22: np.min}[op]
                write(dst, red(np.broadcast_to(read(x), (rows, cols)), axis=1, keepdims=True))
            k += 1


def _extra(op) -> int:
    """Number of trailing ins that only post-ops read."""
    return sum(1 for p in (op.post_ops.data if op.post_ops else ()) if "operand" in p.data)
