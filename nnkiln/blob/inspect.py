"""``describe(blob)``: a blob as plain JSON-ready data (``nnkiln inspect --json``). No xDSL.

Every buffer with memory, io index, offset, size, dtype, shape, alias (view base), producing task
(first task writing it) and last consuming task (last task, in blob order, reading it), both through this
buffer entry itself, and ``live``: the first and last task (blob order) that read or write its bytes through
any entry (the base and all its views: a concatenation's slots are written through views of it), which is
the range the memory plan reserves (None if no task uses it); every task
with executor, executor index, kernel, attrs, post-ops, ``operand_perms`` (when present), inputs, outputs,
waits, updates; every
barrier record with its physical id, counts and the tasks that update / wait on it. A control-flow task
(``tosa.cond_if`` / ``tosa.while_loop``) also lists its region programs under ``programs``, each described
the same way (nested blobs, recursively), so that every plan can be checked independently.

Device and schedule (docs/blob-format.md, "Device and schedule"): ``metadata`` is the blob's own, so it holds the
target's ``memories`` (``[{name, kind, capacity}]``, CMX instances named ``CMX0``, ``CMX1``, ...), ``executors``
(``[{kind, count}]``), ``max_physical_barriers`` and the simulator's ``simulated_cycles`` when the compiler
recorded them; then every task also has ``cycles`` and ``start_cycle`` (its ``executor`` is its kind).
"""

from __future__ import annotations

from typing import Any

from nnkiln.blob.format import (
    CONTROL_FLOW_KERNELS,
    VERSION_MAJOR,
    VERSION_MINOR,
    Blob,
    Memory,
    _to_json,
    constants_u8,
)
from nnkiln.blob.reader import decode


def _programs(blob: Blob, task: Any) -> list[dict[str, Any]]:
    """The region programs of a control-flow task (its first two operands, constants holding blobs)."""
    out = []
    consts = constants_u8(blob)
    for i in task.ins[:2]:
        b = blob.buffers[i]
        if b.memory is not Memory.CONSTANT:
            continue
        out.append(describe(decode(consts[b.offset:b.offset + b.size].tobytes())))
    return out


def _base(blob: Blob, i: int) -> int:
    """The buffer whose bytes buffer ``i`` lies in (itself unless it is a view)."""
    seen = 0
    while blob.buffers[i].alias_of >= 0 and seen <= len(blob.buffers):
        i, seen = blob.buffers[i].alias_of, seen + 1
    return i


def describe(blob: Blob) -> dict[str, Any]:
    producer: dict[int, int] = {}
    consumer: dict[int, int] = {}
    touched: dict[int, list[int]] = {}  # base buffer -> [first, last] task using it or any view of it
    for i, t in enumerate(blob.tasks):
        for o in t.outs:
            producer.setdefault(o, i)
        for j in t.ins:
            consumer[j] = i
        for j in (*t.ins, *t.outs):
            span = touched.setdefault(_base(blob, j), [i, i])
            span[1] = i
    arenas = [name for name, _ in blob.arenas]

    def memory(b: Any) -> str:  # an arena buffer: the memory (instance) its arena is, by name
        return arenas[b.index] if b.memory is Memory.ARENA and b.index < len(arenas) else b.memory.name.lower()

    buffers = [{
        "index": i, "memory": memory(b), "io_index": b.index if b.memory is not Memory.ARENA else 0,
        "offset": b.offset, "size": b.size,
        "dtype": b.kind.value, "shape": list(b.shape), "alias_of": None if b.alias_of < 0 else b.alias_of,
        "producer": producer.get(i), "last_consumer": consumer.get(i), "live": touched.get(_base(blob, i)),
    } for i, b in enumerate(blob.buffers)]
    meta = blob.metadata
    cycles, starts = meta.get("task_cycles"), meta.get("task_start_cycles")
    timed = isinstance(cycles, list) and isinstance(starts, list)
    tasks = [{
        "index": i, "executor": t.executor, "executor_index": t.executor_index, "kernel": t.kernel,
        "attrs": _to_json(t.args.get("attrs", {})), "post_ops": _to_json(t.args.get("post_ops", [])),
        **({"operand_perms": _to_json(t.args["operand_perms"])} if t.args.get("operand_perms") else {}),
        **({"source": t.args["source"]} if isinstance(t.args.get("source"), str) else {}),
        "inputs": list(t.ins), "outputs": list(t.outs), "waits": list(t.waits), "updates": list(t.updates),
        **({"programs": _programs(blob, t)} if t.kernel in CONTROL_FLOW_KERNELS else {}),
        **({"cycles": cycles[i], "start_cycle": starts[i]} if timed else {}),  # type: ignore[index]
    } for i, t in enumerate(blob.tasks)]
    barriers = [{
        "index": i, "physical_id": b.physical_id, "producers": b.producers, "consumers": b.consumers,
        "producer_tasks": [j for j, t in enumerate(blob.tasks) if i in t.updates],
        "consumer_tasks": [j for j, t in enumerate(blob.tasks) if i in t.waits],
    } for i, b in enumerate(blob.barriers)]
    io = [{"name": d.name, "direction": "output" if d.is_output else "input", "dtype": d.kind.value,
           "shape": list(d.shape), "buffer": d.buffer} for d in (*blob.inputs, *blob.outputs)]
    return {"version": f"{VERSION_MAJOR}.{VERSION_MINOR}", "metadata": _to_json(blob.metadata),
            "constants_bytes": len(blob.constants), "io": io, "buffers": buffers, "tasks": tasks,
            "barriers": barriers}


__all__ = ["describe"]
