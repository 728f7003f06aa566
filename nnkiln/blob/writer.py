"""Writing blobs (no xDSL): ``BlobBuilder`` assembles the tables, ``encode`` / ``encode_chunks`` produce the bytes.

``BlobBuilder`` places constants in the constants section at 64-byte alignment and keeps only a reference to each
constant's array (no copy) until ``finish`` (one preallocated buffer, each constant copied once),
``finish_encoded`` (the blob's bytes, each constant copied once, straight into them) or ``finish_in_memory`` (no
copy: the runtime of the compiling process views the arrays themselves). Views are buffer entries inside their
base; barrier counts are derived from the tasks. The layout is ``docs/blob-format.md``.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from nnkiln.blob.format import (
    _BARRIER,
    _BUFFER,
    _COUNT,
    _HEADER,
    _IO,
    _SECTION,
    _TASK_HEAD,
    ALIGNMENT,
    DTYPE_CODES,
    MAGIC,
    MAX_RANK,
    VERSION_MAJOR,
    VERSION_MINOR,
    BarrierDesc,
    Blob,
    BufferDesc,
    ConstantChunk,
    ConstantStore,
    IODesc,
    Memory,
    SectionKind,
    TaskDesc,
    _constant_pieces,
    _to_json,
    encode_args,
    storage_dtype,
)
from nnkiln.errors import BlobError
from nnkiln.kinds import Kind

# ----------------------------------------------------------------------------------------------
# Encoding


class _Strings:
    def __init__(self) -> None:
        self.data = bytearray()
        self.index: dict[str, tuple[int, int]] = {}

    def ref(self, s: str) -> tuple[int, int]:
        if s not in self.index:
            b = s.encode("utf-8")
            self.index[s] = (len(self.data), len(b))
            self.data.extend(b)
        return self.index[s]


def _dims(shape: tuple[int, ...]) -> list[int]:
    if len(shape) > MAX_RANK:
        raise BlobError(f"rank {len(shape)} exceeds the blob's maximum rank {MAX_RANK}")
    return [int(d) for d in shape] + [0] * (MAX_RANK - len(shape))


def _table_sections(blob: Blob) -> dict[SectionKind, bytes]:
    """Every section but CONSTANTS (all small: tables, strings, metadata)."""
    strings = _Strings()
    sections: dict[SectionKind, bytes] = {}

    out = bytearray(_COUNT.pack(len(blob.buffers), 0))
    for b in blob.buffers:
        out += _BUFFER.pack(int(b.memory), DTYPE_CODES[b.kind], len(b.shape), 0, b.index, b.alias_of, 0,
                            b.offset, b.size, *_dims(b.shape))
    sections[SectionKind.BUFFERS] = bytes(out)

    out = bytearray(_COUNT.pack(len(blob.tasks), 0))
    for t in blob.tasks:
        ex, kn, ar = strings.ref(t.executor), strings.ref(t.kernel), strings.ref(encode_args(t.args))
        out += _TASK_HEAD.pack(*ex, t.executor_index, *kn, *ar, len(t.ins), len(t.outs), len(t.waits),
                               len(t.updates), 0)
        ids = [*t.ins, *t.outs, *t.waits, *t.updates]
        out += struct.pack(f"<{len(ids)}I", *ids)
    sections[SectionKind.TASKS] = bytes(out)

    out = bytearray(_COUNT.pack(len(blob.barriers), 0))
    for br in blob.barriers:
        out += _BARRIER.pack(br.physical_id, br.producers, br.consumers, 0)
    sections[SectionKind.BARRIERS] = bytes(out)

    ios = [*blob.inputs, *blob.outputs]
    out = bytearray(_COUNT.pack(len(ios), 0))
    for io in ios:
        nm = strings.ref(io.name)
        out += _IO.pack(*nm, int(io.is_output), DTYPE_CODES[io.kind], len(io.shape), 0, io.buffer, io.size,
                        *_dims(io.shape))
    sections[SectionKind.IO] = bytes(out)

    sections[SectionKind.METADATA] = json.dumps(_to_json(blob.metadata), sort_keys=True).encode("utf-8")
    sections[SectionKind.STRINGS] = bytes(strings.data)
    return sections


def encode_chunks(blob: Blob, chunks: Sequence[ConstantChunk], constants_size: int) -> tuple[bytes, int]:
    """Encode ``blob`` with its CONSTANTS section given as ``chunks`` (``blob.constants`` is ignored).

    Each constant's bytes are copied exactly once, into the result (one ``bytes.join``); CRCs are
    computed over memoryviews. Returns the blob's bytes and the offset of the CONSTANTS section in
    them, so a caller can alias the constants (``memoryview(raw)[off:off + constants_size]``).
    """
    sections = _table_sections(blob)
    const_pieces = _constant_pieces(chunks, constants_size)
    order = list(SectionKind)
    table_end = _HEADER.size + _SECTION.size * len(order)
    pos = table_end + (-table_end % ALIGNMENT)
    pieces: list[Any] = [b"", b"", bytes(pos - table_end)]  # header and table filled in below
    entries = []
    const_offset = 0
    for kind in order:
        if kind is SectionKind.CONSTANTS:
            size, crc = constants_size, 0
            for piece in const_pieces:
                crc = zlib.crc32(piece, crc)
            pieces.extend(const_pieces)
            const_offset = pos
        else:
            data = sections[kind]
            size, crc = len(data), zlib.crc32(data)
            pieces.append(data)
        entries.append((int(kind), 0, pos, size, crc & 0xFFFFFFFF, 0))
        pad = -size % ALIGNMENT
        if pad:
            pieces.append(bytes(pad))
        pos += size + pad
    total = pos
    table = b"".join(_SECTION.pack(*e) for e in entries)
    minor = VERSION_MINOR if any(b.memory is Memory.ARENA and b.index for b in blob.buffers) else 0
    head = struct.pack("<8sHHIQI", MAGIC, VERSION_MAJOR, minor, 0, total, len(order))
    crc = zlib.crc32(head + table) & 0xFFFFFFFF
    pieces[0] = _HEADER.pack(MAGIC, VERSION_MAJOR, minor, 0, total, len(order), crc, b"\0" * 32)
    pieces[1] = table
    result = b"".join(pieces)
    assert len(result) == total
    return result, const_offset


def encode(blob: Blob) -> bytes:
    """The bytes of ``blob`` (version 1.0). The result always decodes to an equal ``Blob``.

    The constants are copied once, straight into the result (no intermediate copies).
    """
    if isinstance(blob.constants, ConstantStore):
        return encode_chunks(blob, blob.constants.chunks, blob.constants.size)[0]
    size = len(memoryview(blob.constants).cast("B")) if len(blob.constants) else 0
    return encode_chunks(blob, [(0, blob.constants)] if size else [], size)[0]


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

    def add_arena(self, kind: Kind, shape: Sequence[int], offset: int, arena: int = 0) -> int:
        """A buffer at ``offset`` in arena ``arena`` (0: the default memory's; see ``Blob.arenas``)."""
        shape = tuple(int(d) for d in shape)
        return self._add(BufferDesc(Memory.ARENA, kind, shape, int(offset), _size(kind, shape), int(arena)))

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
                 waits: Sequence[int] = (), updates: Sequence[int] = (),
                 operand_perms: Sequence[Sequence[int]] = (), source: str = "") -> int:
        args: dict[str, Any] = {"attrs": dict(attrs or {}), "post_ops": [dict(p) for p in post_ops]}
        if source:
            args["source"] = source
        if any(operand_perms):
            args["operand_perms"] = [list(p) for p in operand_perms]
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
            meta["arena_bytes"] = max((b.offset + b.size for b in self.buffers
                                       if b.memory is Memory.ARENA and b.index == 0), default=0)
        return Blob(constants=constants, buffers=list(self.buffers), tasks=list(self.tasks),
                    barriers=[BarrierDesc(p, a, c) for p, a, c in zip(self.barrier_ids, prod, cons)],
                    inputs=list(self.inputs), outputs=list(self.outputs), metadata=meta)

    def preview(self, **metadata: Any) -> Blob:
        """The tables as ``finish`` would give them, without the constants (for analyses of the task graph that
        need no weights, such as the simulator, before the metadata is final)."""
        return self._tables(b"", metadata)

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
