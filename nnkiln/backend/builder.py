"""``BlobBuilder``: assembles a ``Blob`` table by table (no xDSL; the writer and tests use it).

Constants are appended to the constants section at 64-byte alignment; views are buffer entries
inside their base; barrier counts are derived from the tasks in ``finish``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from nnkiln.backend.blob_format import ALIGNMENT, Blob, BarrierDesc, BufferDesc, IODesc, Memory, TaskDesc, storage_dtype
from nnkiln.errors import BlobError
from nnkiln.kinds import Kind


def _size(kind: Kind, shape: Sequence[int]) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n * storage_dtype(kind).itemsize


class BlobBuilder:
    """Collects buffers, tasks, barriers and io descriptors; ``finish`` returns the ``Blob``."""

    def __init__(self) -> None:
        self.constants = bytearray()
        self.buffers: list[BufferDesc] = []
        self.tasks: list[TaskDesc] = []
        self.barrier_ids: list[int] = []
        self.inputs: list[IODesc] = []
        self.outputs: list[IODesc] = []

    def _add(self, b: BufferDesc) -> int:
        self.buffers.append(b)
        return len(self.buffers) - 1

    def add_io(self, name: str, kind: Kind, shape: Sequence[int], *, output: bool) -> int:
        """Declare an input/output tensor; returns the buffer covering all of it."""
        group = self.outputs if output else self.inputs
        shape = tuple(int(d) for d in shape)
        idx = self._add(BufferDesc(Memory.OUTPUT if output else Memory.INPUT, kind, shape, 0, _size(kind, shape),
                                   len(group)))
        group.append(IODesc(name, output, kind, shape, idx))
        return idx

    def add_const(self, array: np.ndarray, kind: Kind) -> int:
        """Append a constant's bytes (as ``kind``'s storage dtype); returns its buffer."""
        data = np.ascontiguousarray(array, dtype=storage_dtype(kind))
        self.constants.extend(b"\0" * (-len(self.constants) % ALIGNMENT))
        off = len(self.constants)
        self.constants.extend(data.tobytes())
        return self._add(BufferDesc(Memory.CONSTANT, kind, tuple(data.shape), off, data.nbytes))

    def add_arena(self, kind: Kind, shape: Sequence[int], offset: int) -> int:
        shape = tuple(int(d) for d in shape)
        return self._add(BufferDesc(Memory.ARENA, kind, shape, int(offset), _size(kind, shape)))

    def add_buffer(self, memory: Memory, kind: Kind, shape: Sequence[int], offset: int, index: int = 0) -> int:
        shape = tuple(int(d) for d in shape)
        return self._add(BufferDesc(memory, kind, shape, int(offset), _size(kind, shape), int(index)))

    def add_view(self, base: int, kind: Kind, shape: Sequence[int], byte_offset: int = 0) -> int:
        """A buffer aliasing ``base``'s bytes from ``byte_offset`` (relative to the base)."""
        b = self.buffers[base]
        root = base
        while self.buffers[root].alias_of != -1:
            root = self.buffers[root].alias_of
        shape = tuple(int(d) for d in shape)
        size = _size(kind, shape)
        if byte_offset < 0 or byte_offset + size > b.size:
            raise BlobError(f"view of {size} bytes at {byte_offset} exceeds its base buffer ({b.size} bytes)")
        return self._add(BufferDesc(b.memory, kind, shape, b.offset + byte_offset, size, b.index, root))

    def add_barrier(self, physical_id: int) -> int:
        """A new use of physical barrier ``physical_id``; returns the record index tasks refer to."""
        self.barrier_ids.append(int(physical_id))
        return len(self.barrier_ids) - 1

    def add_task(self, kernel: str, ins: Sequence[int], outs: Sequence[int], *, attrs: dict[str, Any] | None = None,
                 post_ops: Sequence[dict[str, Any]] = (), executor: str = "cpu", executor_index: int = 0,
                 waits: Sequence[int] = (), updates: Sequence[int] = ()) -> int:
        args = {"attrs": dict(attrs or {}), "post_ops": [dict(p) for p in post_ops]}
        self.tasks.append(TaskDesc(executor, int(executor_index), kernel, args, tuple(ins), tuple(outs),
                                   tuple(waits), tuple(updates)))
        return len(self.tasks) - 1

    def finish(self, **metadata: Any) -> Blob:
        prod = [0] * len(self.barrier_ids)
        cons = [0] * len(self.barrier_ids)
        for t in self.tasks:
            for w in t.waits:
                cons[w] += 1
            for u in t.updates:
                prod[u] += 1
        meta = {"arena_bytes": 0, "arena_lower_bound_bytes": 0, "target": "cpu", "pipeline": "",
                "num_physical_barriers": len(set(self.barrier_ids))}
        meta.update(metadata)
        if "arena_bytes" not in metadata:
            meta["arena_bytes"] = max((b.offset + b.size for b in self.buffers if b.memory is Memory.ARENA), default=0)
        return Blob(constants=bytes(self.constants), buffers=list(self.buffers), tasks=list(self.tasks),
                    barriers=[BarrierDesc(p, a, c) for p, a, c in zip(self.barrier_ids, prod, cons)],
                    inputs=list(self.inputs), outputs=list(self.outputs), metadata=meta)


__all__ = ["BlobBuilder"]
