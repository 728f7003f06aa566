"""``BlobBuilder``: assembles a ``Blob`` table by table (no xDSL; the writer and tests use it).

Constants are placed in the constants section at 64-byte alignment; the builder only keeps a
reference to each constant's array (no copy) until ``finish`` (one preallocated buffer, each constant
copied once), ``finish_encoded`` (the blob's bytes, each constant copied once, straight into them) or
``finish_in_memory`` (no copy: the runtime of the compiling process views the arrays themselves).
Views are buffer entries inside their base; barrier counts are derived from the tasks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from nnkiln.backend.blob_format import (ALIGNMENT, Blob, BarrierDesc, BufferDesc, ConstantChunk, ConstantStore, IODesc,
                                        Memory,
                                        TaskDesc, encode_chunks, storage_dtype)
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
        self.constant_chunks: list[ConstantChunk] = []
        self.constants_size = 0
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
        """Place a constant (as ``kind``'s storage dtype) in the constants section; returns its buffer.

        Only a reference to the (contiguous, converted) array is kept until ``finish``/``finish_encoded``
        copies it: the caller must not modify ``array`` in between (IR constants are immutable).
        """
        data = np.ascontiguousarray(array, dtype=storage_dtype(kind))
        off = self.constants_size + (-self.constants_size % ALIGNMENT)
        self.constant_chunks.append((off, data))
        self.constants_size = off + data.nbytes
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

    def _tables(self, constants: bytes | memoryview, metadata: dict[str, Any]) -> Blob:
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
        return Blob(constants=constants, buffers=list(self.buffers), tasks=list(self.tasks),
                    barriers=[BarrierDesc(p, a, c) for p, a, c in zip(self.barrier_ids, prod, cons)],
                    inputs=list(self.inputs), outputs=list(self.outputs), metadata=meta)

    def constants_bytes(self) -> memoryview:
        """The constants section: one preallocated buffer, each constant copied into it once (read-only view)."""
        buf = bytearray(self.constants_size)
        flat = np.frombuffer(buf, np.uint8)
        for off, data in self.constant_chunks:
            if data.nbytes:
                flat[off:off + data.nbytes] = data.reshape(-1).view(np.uint8)
        del flat
        return memoryview(buf).toreadonly()

    def finish(self, **metadata: Any) -> Blob:
        """The ``Blob`` (its constants in one new buffer)."""
        return self._tables(self.constants_bytes(), metadata)

    def finish_in_memory(self, **metadata: Any) -> Blob:
        """The ``Blob`` with its constants left where they are (a ``ConstantStore``: no copy); for a runtime
        in this process. Encoding it (``Executable.save``) joins them then."""
        return self._tables(ConstantStore(self.constant_chunks, self.constants_size), metadata)

    def finish_encoded(self, **metadata: Any) -> tuple[Blob, bytes]:
        """The ``Blob`` and its encoded bytes, copying each constant once: into the bytes.

        The blob's ``constants`` is a read-only view into those bytes, so the pair holds one copy.
        """
        blob = self._tables(b"", metadata)
        raw, off = encode_chunks(blob, self.constant_chunks, self.constants_size)
        blob.constants = memoryview(raw)[off:off + self.constants_size]
        return blob, raw


__all__ = ["BlobBuilder"]
