"""The nnkiln blob format, version 1.0: the only thing the runtime reads (architecture spec §4, "blob").

This module holds the format's data model (plain dataclasses), the encoder (``encode``) and the
validating decoder (``decode``). It imports no xDSL: the runtime uses it directly. The writer from
an ``rt``-level module is ``nnkiln.backend.writer``. ``docs/blob-format.md`` repeats this text.

Layout
======

All integers are little-endian. ``u8/u32/u64`` are unsigned, ``i32/i64`` signed. A *string
reference* ``strref`` is ``u32 offset, u32 length`` into the STRINGS section (UTF-8, not
NUL-terminated).

Header (64 bytes, at file offset 0)::

    0   8  magic            b"NNKBLOB\\0"
    8   2  u16 version_major  (1: a reader rejects any other major version)
    10  2  u16 version_minor  (0: a reader rejects a newer minor version than it knows)
    12  4  u32 flags          (no flag is defined in 1.0: must be 0)
    16  8  u64 file_size      (the exact length of the blob)
    24  4  u32 num_sections   (7 in 1.0)
    28  4  u32 header_crc32   (CRC-32 of bytes 0..28 followed by the section table)
    32 32  reserved, zero

Section table (``num_sections`` entries of 32 bytes, at offset 64)::

    0  4  u32 kind   (1 STRINGS, 2 CONSTANTS, 3 BUFFERS, 4 TASKS, 5 BARRIERS, 6 IO, 7 METADATA)
    4  4  u32 reserved, zero
    8  8  u64 offset (from the start of the blob; a multiple of 64)
    16 8  u64 size   (bytes)
    24 4  u32 crc32  (CRC-32 of the section's bytes, zlib polynomial)
    28 4  u32 reserved, zero

Every kind appears exactly once; sections lie after the table, inside the file, and do not overlap;
every byte outside the header, the table and the sections (alignment padding) is zero.

STRINGS: UTF-8 bytes referenced by ``strref``s.

CONSTANTS: raw little-endian element bytes of every constant; each constant starts at a multiple of 64
(from the start of the section).

BUFFERS: ``u32 count, u32 reserved`` then ``count`` records of 96 bytes::

    0  1  u8 memory    (0 ARENA, 1 INPUT, 2 OUTPUT, 3 CONSTANT)
    1  1  u8 dtype     (element kind code, see DTYPE_CODES)
    2  1  u8 rank      (<= 8)
    3  1  reserved, zero
    4  4  u32 index    (INPUT/OUTPUT: position among the inputs/outputs; else 0)
    8  4  i32 alias_of (-1, or the index of the buffer whose bytes this view lies in)
    12 4  reserved, zero
    16 8  u64 offset   (bytes from the start of the memory: arena, io buffer, constants section)
    24 8  u64 size     (bytes; == product(shape) * itemsize(dtype))
    32 64 u64 dims[8]  (the first ``rank`` are the shape, the rest 0)

A view (``buf.reshape``, ``buf.subview``, a kernel result) is a buffer entry of its own whose bytes
lie inside its base's (``alias_of``); offsets are absolute in the memory.

TASKS: ``u32 count, u32 reserved`` then ``count`` variable-length records::

    0  8  strref executor      (e.g. "cpu")
    8  4  u32 executor_index   (tasks of one (executor, executor_index) run in blob order)
    12 8  strref kernel        ("tosa.conv2d", ..., or "buf.copy")
    20 8  strref args          (JSON object: {"attrs": {...}, "post_ops": [...]}; see below)
    28 4  u32 n_ins
    32 4  u32 n_outs
    36 4  u32 n_waits
    40 4  u32 n_updates
    44 4  reserved, zero
    48 .. u32 ins[n_ins], u32 outs[n_outs], u32 waits[n_waits], u32 updates[n_updates]

``ins``/``outs`` index BUFFERS; ``waits``/``updates`` index BARRIERS. Kernel args (JSON): ``attrs`` are
the tosa op's properties as JSON values (tuples become lists; enums their string value);
``post_ops`` a list of ``{"kernel": "tosa.clamp", "attrs": {...}}`` or ``{"kernel": "tosa.add", "attrs":
{}, "operand": k}`` (``k`` indexes ``ins``), applied in order to the kernel's (single) result.
Packed GEMM weights: a ``tosa.matmul`` task whose ``attrs`` hold ``"b_panels": 16`` takes its right operand
(``ins[1]``, a float32 CONSTANT) not as ``[1, K, N]`` but as ``[ceil(N/16), K, 16]`` panels: ``P[j, k, q] =
B[0, k, 16j + q]``, zeros beyond N (``pack_panels``; the layout the cpu runtime's GEMM kernel reads, so it needs
no second copy of the weights). The writer uses it where the target asks (``Target.gemm_weight_panels``)
and the constant feeds only such MATMULs (batch 1, float32).
Control flow: a ``tosa.cond_if`` / ``tosa.while_loop`` task's first two ``ins`` are CONSTANT buffers
(int8) holding complete blobs of this format, the programs of its two regions (then/else, cond/body),
validated when the blob is loaded; then come the condition (COND_IF) and the input list; ``attrs`` are
``num_inputs`` and ``region_inputs`` (per region, 1 if its program takes the input list).

BARRIERS: ``u32 count, u32 reserved`` then ``count`` records of 16 bytes: ``u32 physical_id,
u32 producers, u32 consumers, u32 reserved``. One record per *use* of a physical barrier: tasks refer
to a record by its position. ``producers``/``consumers`` equal the number of tasks that update / wait
on the record.

IO: ``u32 count, u32 reserved`` then records of 88 bytes::

    0  8  strref name
    8  1  u8 direction (0 input, 1 output)
    9  1  u8 dtype
    10 1  u8 rank
    11 1  reserved, zero
    12 4  u32 buffer   (index of a BUFFERS entry covering the whole io tensor: memory INPUT/OUTPUT,
                        index = position, offset 0)
    16 8  u64 size     (bytes)
    24 64 u64 dims[8]

Inputs come first, in position order, then outputs.

METADATA: a UTF-8 JSON object with at least ``arena_bytes``, ``arena_lower_bound_bytes`` (ints >= 0),
``target``, ``pipeline`` (strings); optional ``compile_seconds`` (number), ``num_physical_barriers``, ``threads``
(an integer >= 1: the cpu threads the program was compiled to use; absent: every core the runtime may use).

Validation (``decode``): magic, version, flags, sizes, the CRCs, section bounds and overlap, every
record inside its section, strings inside STRINGS and valid UTF-8, dtype codes in the whitelist,
rank <= 8, ``product(shape) * itemsize == size`` (Python integers: no overflow; each dim < 2^40),
every buffer's ``offset + size`` inside its memory (arena, constants section or io tensor), views
inside their base, task operand indices and barrier indices in range, tasks never write INPUT or
CONSTANT memory, barrier counts equal the tasks that use them, and the task graph (FIFO per executor
+ barriers) has no cycle (so the runtime cannot deadlock). Any failure raises ``BlobError`` naming
the rule; a blob that decodes is safe to execute.
"""

from __future__ import annotations

import bisect

import json
import struct
import zlib
from dataclasses import dataclass, field
from enum import IntEnum
from collections.abc import Sequence
from typing import Any

import numpy as np

from nnkiln.errors import BlobError
from nnkiln.kinds import Kind

MAGIC = b"NNKBLOB\0"
VERSION_MAJOR = 1
VERSION_MINOR = 0
ALIGNMENT = 64
MAX_RANK = 8
MAX_DIM = 1 << 40
MAX_BYTES = 1 << 48

_HEADER = struct.Struct("<8sHHIQII32s")  # 64 bytes
_SECTION = struct.Struct("<IIQQII")  # 32 bytes
_COUNT = struct.Struct("<II")
_BUFFER = struct.Struct("<BBBBIiIQQ8Q")  # 96 bytes
_TASK_HEAD = struct.Struct("<IIIIIIIIIIII")  # 48 bytes: strref(2) idx strref(2) strref(2) 4 counts reserved
_BARRIER = struct.Struct("<IIII")  # 16 bytes
_IO = struct.Struct("<IIBBBBIQ8Q")  # 88 bytes

assert _HEADER.size == 64 and _SECTION.size == 32 and _BUFFER.size == 96
assert _TASK_HEAD.size == 48 and _BARRIER.size == 16 and _IO.size == 88


class SectionKind(IntEnum):
    """The sections of a blob, by their kind code."""

    STRINGS = 1
    CONSTANTS = 2
    BUFFERS = 3
    TASKS = 4
    BARRIERS = 5
    IO = 6
    METADATA = 7


class Memory(IntEnum):
    """Where a buffer's bytes are."""

    ARENA = 0
    INPUT = 1
    OUTPUT = 2
    CONSTANT = 3


DTYPE_CODES: dict[Kind, int] = {
    Kind.BOOL: 1, Kind.I4: 2, Kind.I8: 3, Kind.I16: 4, Kind.I32: 5, Kind.I48: 6,
    Kind.U8: 7, Kind.U16: 8, Kind.F16: 9, Kind.BF16: 10, Kind.F32: 11,
}
"""The dtype whitelist: element kind -> code."""
KIND_OF_CODE: dict[int, Kind] = {v: k for k, v in DTYPE_CODES.items()}


PANEL_WIDTH = 16
"""Columns per panel of packed GEMM weights (``b_panels``)."""


def pack_panels(b_kn: np.ndarray, width: int = PANEL_WIDTH, out: np.ndarray | None = None) -> np.ndarray:
    """A ``[K, N]`` matrix as ``[ceil(N/width), K, width]`` panels (``P[j, k, q] = B[k, width·j + q]``, zeros beyond
    N), float32, C-contiguous; written into ``out`` (float32, that shape) when given."""
    k, n = b_kn.shape
    panels = -(-n // width)
    if out is None:  # pages without numpy's huge-page advice (runtime.alloc: no compaction stalls)
        from nnkiln.runtime.alloc import small_page_empty

        out = small_page_empty((panels, k, width), np.float32)
    full = n // width
    src = np.asarray(b_kn[:, :full * width], np.float32)
    if src.flags.c_contiguous and out.flags.c_contiguous and full:
        # rows of ``width`` floats moved as single opaque items (1.7x faster than numpy's float-by-float copy of
        # the transposed view: 3.3 vs 5.6 ms for a 768x3072 matrix)
        item = np.dtype((np.void, 4 * width))
        out[:full].view(item).reshape(full, k)[...] = src.view(item).reshape(k, full).T
    else:
        out[:full] = src.reshape(k, full, width).transpose(1, 0, 2)
    if full < panels:
        out[full] = 0.0
        out[full, :, :n - full * width] = b_kn[:, full * width:]
    return out


def unpack_panels(p: np.ndarray, n: int) -> np.ndarray:
    """The ``[K, N]`` matrix of ``pack_panels`` output ``p`` (``[panels, K, width]``)."""
    panels, k, width = p.shape
    return np.ascontiguousarray(p.transpose(1, 0, 2).reshape(k, panels * width)[:, :n])


def storage_dtype(kind: Kind) -> np.dtype:
    """The numpy dtype holding one element of ``kind`` (same decisions as ``nnkiln.ir.elements``)."""
    if kind is Kind.BF16:
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype({
        Kind.BOOL: np.bool_, Kind.I4: np.int8, Kind.I8: np.int8, Kind.I16: np.int16, Kind.I32: np.int32,
        Kind.I48: np.int64, Kind.U8: np.uint8, Kind.U16: np.uint16, Kind.F16: np.float16, Kind.F32: np.float32,
    }[kind])


def _itemsize(kind: Kind) -> int:
    return 2 if kind is Kind.BF16 else storage_dtype(kind).itemsize


# ----------------------------------------------------------------------------------------------
# Data model


@dataclass
class BufferDesc:
    """One BUFFERS record."""

    memory: Memory
    kind: Kind
    shape: tuple[int, ...]
    offset: int
    size: int
    index: int = 0
    alias_of: int = -1

    @property
    def dtype(self) -> np.dtype:
        return storage_dtype(self.kind)


@dataclass
class TaskDesc:
    """One TASKS record."""

    executor: str
    executor_index: int
    kernel: str
    args: dict[str, Any]
    ins: tuple[int, ...]
    outs: tuple[int, ...]
    waits: tuple[int, ...] = ()
    updates: tuple[int, ...] = ()


@dataclass
class BarrierDesc:
    """One BARRIERS record (one use of physical barrier ``physical_id``)."""

    physical_id: int
    producers: int
    consumers: int


@dataclass
class IODesc:
    """One IO record."""

    name: str
    is_output: bool
    kind: Kind
    shape: tuple[int, ...]
    buffer: int

    @property
    def size(self) -> int:
        return _num_elements(self.shape) * _itemsize(self.kind)


class ConstantStore:
    """The CONSTANTS section left as the constants' own arrays at their offsets, never joined into one buffer.

    What an in-process ``nnkiln.compile`` gives the runtime: joining a model's weights into one buffer costs a
    copy of all of them (BERT-base: 415 MB, about 0.5 s with the page faults) that running does not need.
    ``view`` returns the bytes of one constant without a copy; ``tobytes`` (and ``encode``, when the blob is
    saved) joins them. The arrays must not change afterwards (IR constants are immutable).
    """

    def __init__(self, chunks: Sequence[ConstantChunk], size: int):
        self.chunks: list[tuple[int, np.ndarray]] = sorted(
            ((int(off), np.frombuffer(_byte_view(data), np.uint8)) for off, data in chunks), key=lambda c: c[0])
        self._starts = [off for off, _ in self.chunks]
        self.size = int(size)
        self._joined: bytes | None = None

    def __len__(self) -> int:
        return self.size

    def view(self, offset: int, nbytes: int) -> np.ndarray:
        """The ``nbytes`` bytes at ``offset`` as a read-only uint8 array (no copy when one constant holds
        them; bytes between constants are zeros, as in the encoded section)."""
        i = bisect.bisect_right(self._starts, offset) - 1
        if i >= 0:
            start, arr = self.chunks[i]
            if offset + nbytes <= start + arr.size:
                return arr[offset - start:offset - start + nbytes]
        return np.frombuffer(self.tobytes(), np.uint8)[offset:offset + nbytes]

    def tobytes(self) -> bytes:
        """The whole section, joined (computed once)."""
        if self._joined is None:
            self._joined = b"".join(_constant_pieces(self.chunks, self.size))
        return self._joined

    __bytes__ = tobytes


@dataclass
class Blob:
    """A decoded blob: every table plus the constants' bytes (or, compiled in process, a ``ConstantStore``)."""

    constants: bytes | memoryview | ConstantStore
    buffers: list[BufferDesc]
    tasks: list[TaskDesc]
    barriers: list[BarrierDesc]
    inputs: list[IODesc]
    outputs: list[IODesc]
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def arena_bytes(self) -> int:
        return int(self.metadata.get("arena_bytes", 0))


def _num_elements(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


# ----------------------------------------------------------------------------------------------
# JSON of kernel args


def _to_json(value: Any) -> Any:
    from enum import Enum

    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        return value
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, (tuple, list)):
        return [_to_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _to_json(v) for k, v in value.items()}
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    raise BlobError(f"kernel argument {value!r} of type {type(value).__name__} cannot be stored in a blob")


def _from_json(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_from_json(v) for v in value)
    if isinstance(value, dict):
        return {k: _from_json(v) for k, v in value.items()}
    return value


def encode_args(args: dict[str, Any]) -> str:
    """The JSON text of a task's kernel args (tuples as lists, enums as their values)."""
    return json.dumps(_to_json(args), sort_keys=True, separators=(",", ":"))


def decode_args(text: str) -> dict[str, Any]:
    """Kernel args from JSON (lists become tuples, as ``from_attr`` gives them)."""
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError("kernel args are not a JSON object")
    attrs = value.get("attrs", {})
    post = value.get("post_ops", [])
    if not isinstance(attrs, dict) or not isinstance(post, list):
        raise ValueError("kernel args need 'attrs' (object) and 'post_ops' (list)")
    result = {"attrs": _from_json(attrs), "post_ops": []}
    for p in post:
        if not isinstance(p, dict) or not isinstance(p.get("kernel"), str) or not isinstance(p.get("attrs", {}), dict):
            raise ValueError(f"bad post-op {p!r}")
        op = p.get("operand")
        if op is not None and (not isinstance(op, int) or isinstance(op, bool)):
            raise ValueError(f"bad post-op operand {op!r}")
        entry = {"kernel": p["kernel"], "attrs": _from_json(p.get("attrs", {}))}
        if op is not None:
            entry["operand"] = op
        result["post_ops"].append(entry)
    for k, v in value.items():
        if k not in ("attrs", "post_ops"):
            result[k] = _from_json(v)
    return result


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


ConstantChunk = tuple[int, "bytes | bytearray | memoryview | np.ndarray"]
"""A piece of the CONSTANTS section: its byte offset in the section and its bytes (any C-contiguous buffer)."""


def _byte_view(data: Any) -> memoryview:
    """A flat unsigned-byte memoryview of ``data`` (no copy; numpy arrays of any dtype, bytes-likes)."""
    if isinstance(data, np.ndarray):
        data = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    mv = memoryview(data)
    return mv if mv.format == "B" and mv.ndim == 1 else mv.cast("B")


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


def _constant_pieces(chunks: Sequence[ConstantChunk], size: int) -> list[memoryview | bytes]:
    """The CONSTANTS section as a list of byte pieces (chunks and the zero gaps between them), in order."""
    pieces: list[memoryview | bytes] = []
    pos = 0
    for off, data in sorted(chunks, key=lambda c: c[0]):
        mv = _byte_view(data)
        if off < pos or off + len(mv) > size:
            raise BlobError(f"constant chunk [{off}, {off + len(mv)}) overlaps another or exceeds the constants "
                            f"section ({size} bytes)")
        if off > pos:
            pieces.append(bytes(off - pos))
        if len(mv):
            pieces.append(mv)
        pos = off + len(mv)
    if pos < size:
        pieces.append(bytes(size - pos))
    return pieces


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
    head = struct.pack("<8sHHIQI", MAGIC, VERSION_MAJOR, VERSION_MINOR, 0, total, len(order))
    crc = zlib.crc32(head + table) & 0xFFFFFFFF
    pieces[0] = _HEADER.pack(MAGIC, VERSION_MAJOR, VERSION_MINOR, 0, total, len(order), crc, b"\0" * 32)
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


def constants_u8(blob: Blob) -> np.ndarray:
    """The CONSTANTS section as one flat uint8 array (joined if it is a ``ConstantStore``)."""
    c = blob.constants
    if isinstance(c, ConstantStore):
        c = c.tobytes()
    return np.frombuffer(c, np.uint8) if len(c) else np.zeros(0, np.uint8)


# ----------------------------------------------------------------------------------------------
# Decoding with validation


def _fail(message: str) -> BlobError:
    return BlobError(f"invalid blob: {message}")


class _Reader:
    """Bounds-checked reads of one section."""

    def __init__(self, data: memoryview, name: str):
        self.data = data
        self.name = name
        self.pos = 0

    def take(self, st: struct.Struct, what: str) -> tuple[Any, ...]:
        end = self.pos + st.size
        if end > len(self.data):
            raise _fail(f"{self.name} section is truncated in {what} (needs {end} bytes, has {len(self.data)})")
        values = st.unpack_from(self.data, self.pos)
        self.pos = end
        return values

    def u32s(self, n: int, what: str) -> tuple[int, ...]:
        end = self.pos + 4 * n
        if end > len(self.data):
            raise _fail(f"{self.name} section is truncated in {what} ({n} ids do not fit)")
        values = struct.unpack_from(f"<{n}I", self.data, self.pos)
        self.pos = end
        return values

    def count(self, record_size: int, what: str) -> int:
        n, reserved = self.take(_COUNT, f"the {what} count")
        if reserved != 0:
            raise _fail(f"{self.name} section: reserved field is {reserved}, not 0")
        if n * record_size > len(self.data) - self.pos:
            raise _fail(f"{self.name} section declares {n} {what} but holds {len(self.data) - self.pos} bytes")
        return n


def _string(strings: memoryview, ref: tuple[int, int], what: str) -> str:
    off, length = ref
    if off + length > len(strings):
        raise _fail(f"{what}: string reference [{off}, {off + length}) is outside the strings section "
                    f"({len(strings)} bytes)")
    try:
        return bytes(strings[off:off + length]).decode("utf-8")
    except UnicodeDecodeError:
        raise _fail(f"{what}: string is not valid UTF-8") from None


def _kind(code: int, what: str) -> Kind:
    kind = KIND_OF_CODE.get(code)
    if kind is None:
        raise _fail(f"{what}: dtype code {code} is not in the whitelist {sorted(KIND_OF_CODE)}")
    return kind


def _shape(rank: int, dims: tuple[int, ...], what: str) -> tuple[int, ...]:
    if rank > MAX_RANK:
        raise _fail(f"{what}: rank {rank} exceeds {MAX_RANK}")
    if any(d != 0 for d in dims[rank:]):
        raise _fail(f"{what}: dims beyond rank {rank} are not zero")
    shape = tuple(int(d) for d in dims[:rank])
    if any(d >= MAX_DIM for d in shape):
        raise _fail(f"{what}: dimension in {list(shape)} is >= 2^40")
    return shape


def decode(data: bytes | bytearray | memoryview, *, max_arena_bytes: int = 1 << 36) -> Blob:
    """Decode and fully validate a blob; ``BlobError`` names the first broken rule."""
    mv = memoryview(data).cast("B") if not isinstance(data, memoryview) else data.cast("B")
    if len(mv) < _HEADER.size:
        raise _fail(f"{len(mv)} bytes is shorter than the {_HEADER.size}-byte header (truncated)")
    magic, major, minor, flags, file_size, nsec, crc, reserved = _HEADER.unpack_from(mv, 0)
    if magic != MAGIC:
        raise _fail(f"bad magic {bytes(magic)!r} (expected {MAGIC!r}): not an nnkiln blob")
    if major != VERSION_MAJOR:
        raise _fail(f"version {major}.{minor} is not supported (this reader reads {VERSION_MAJOR}.x)")
    if minor > VERSION_MINOR:
        raise _fail(f"version {major}.{minor} is newer than this reader ({VERSION_MAJOR}.{VERSION_MINOR})")
    if flags != 0:
        raise _fail(f"unknown flags 0x{flags:x}")
    if file_size != len(mv):
        raise _fail(f"header says {file_size} bytes but the blob has {len(mv)} (truncated or padded)")
    if nsec != len(SectionKind):
        raise _fail(f"{nsec} sections, expected {len(SectionKind)}")
    table_end = _HEADER.size + _SECTION.size * nsec
    if table_end > len(mv):
        raise _fail("the section table is truncated")
    head = bytes(mv[:28])
    table = bytes(mv[_HEADER.size:table_end])
    if zlib.crc32(head + table) & 0xFFFFFFFF != crc:
        raise _fail("header CRC-32 mismatch (the header or section table was modified)")
    if any(bytes(reserved)):
        raise _fail("reserved header bytes are not zero")

    secs: dict[SectionKind, memoryview] = {}
    spans = []
    for i in range(nsec):
        kind_code, res1, off, size, scrc, res2 = _SECTION.unpack_from(mv, _HEADER.size + i * _SECTION.size)
        try:
            kind = SectionKind(kind_code)
        except ValueError:
            raise _fail(f"section {i} has unknown kind {kind_code}") from None
        if kind in secs:
            raise _fail(f"section {kind.name} appears twice")
        if res1 or res2:
            raise _fail(f"section {kind.name}: reserved fields are not zero")
        if off % ALIGNMENT or off < table_end or off + size > len(mv):
            raise _fail(f"section {kind.name} [{off}, {off + size}) is misaligned or outside the blob "
                        f"[{table_end}, {len(mv)})")
        body = mv[off:off + size]
        if zlib.crc32(body) & 0xFFFFFFFF != scrc:
            raise _fail(f"section {kind.name} CRC-32 mismatch (its bytes were modified)")
        secs[kind] = body
        spans.append((off, off + size, kind.name))
    spans.sort()
    for (a0, a1, an), (b0, b1, bn) in zip(spans, spans[1:]):
        if b0 < a1:
            raise _fail(f"sections {an} and {bn} overlap")
    gap_start = table_end
    for a0, a1, _ in (*spans, (len(mv), len(mv), "end")):
        if a0 > gap_start and any(bytes(mv[gap_start:a0])):
            raise _fail(f"padding bytes [{gap_start}, {a0}) are not zero")
        gap_start = max(gap_start, a1)

    strings = secs[SectionKind.STRINGS]
    constants = secs[SectionKind.CONSTANTS]

    # metadata
    try:
        meta = json.loads(bytes(secs[SectionKind.METADATA]).decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        raise _fail(f"METADATA is not a UTF-8 JSON object: {err}") from None
    if not isinstance(meta, dict):
        raise _fail("METADATA is not a JSON object")
    for key in ("arena_bytes", "arena_lower_bound_bytes"):
        v = meta.get(key)
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise _fail(f"METADATA {key} = {v!r} is not a non-negative integer")
    for key in ("target", "pipeline"):
        if not isinstance(meta.get(key), str):
            raise _fail(f"METADATA {key} = {meta.get(key)!r} is not a string")
    threads = meta.get("threads")
    if threads is not None and (not isinstance(threads, int) or isinstance(threads, bool) or not 1 <= threads <= 4096):
        raise _fail(f"METADATA threads = {threads!r} is not an integer in 1..4096")
    arena = meta["arena_bytes"]
    if arena > max_arena_bytes:
        raise _fail(f"arena of {arena} bytes exceeds the limit of {max_arena_bytes} bytes")

    # io
    r = _Reader(secs[SectionKind.IO], "IO")
    n_io = r.count(_IO.size, "io descriptors")
    inputs: list[IODesc] = []
    outputs: list[IODesc] = []
    for i in range(n_io):
        so, sl, direction, code, rank, res, buf, size, *dims = r.take(_IO, f"io descriptor {i}")
        what = f"io descriptor {i}"
        if res or direction not in (0, 1):
            raise _fail(f"{what}: bad direction {direction} or reserved byte")
        io = IODesc(_string(strings, (so, sl), what), bool(direction), _kind(code, what), _shape(rank, dims, what), buf)
        if io.size != size:
            raise _fail(f"{what} '{io.name}': size {size} != product(shape) * itemsize = {io.size}")
        if direction == 1:
            outputs.append(io)
        else:
            if outputs:
                raise _fail(f"{what}: an input after an output")
            inputs.append(io)
    for group in ([io.name for io in inputs], [io.name for io in outputs]):
        if len(set(group)) != len(group):
            raise _fail(f"duplicate io names in {group}")

    # buffers
    r = _Reader(secs[SectionKind.BUFFERS], "BUFFERS")
    n_buf = r.count(_BUFFER.size, "buffers")
    buffers: list[BufferDesc] = []
    for i in range(n_buf):
        mem, code, rank, res, index, alias, res2, off, size, *dims = r.take(_BUFFER, f"buffer {i}")
        what = f"buffer {i}"
        if res or res2:
            raise _fail(f"{what}: reserved fields are not zero")
        try:
            memory = Memory(mem)
        except ValueError:
            raise _fail(f"{what}: memory code {mem} is unknown") from None
        kind = _kind(code, what)
        shape = _shape(rank, dims, what)
        expect = _num_elements(shape) * _itemsize(kind)
        if expect != size:
            raise _fail(f"{what}: size {size} != product({list(shape)}) * itemsize = {expect}")
        if memory is Memory.ARENA:
            limit, where = arena, "the arena"
            if index:
                raise _fail(f"{what}: arena buffer has index {index}")
        elif memory is Memory.CONSTANT:
            limit, where = len(constants), "the constants section"
            if index:
                raise _fail(f"{what}: constant buffer has index {index}")
        else:
            group = inputs if memory is Memory.INPUT else outputs
            if index >= len(group):
                raise _fail(f"{what}: {memory.name.lower()} index {index} but there are {len(group)}")
            limit, where = group[index].size, f"{memory.name.lower()} '{group[index].name}'"
        if off + size > limit:
            raise _fail(f"{what}: bytes [{off}, {off + size}) exceed {where} ({limit} bytes)")
        if alias != -1:
            if not 0 <= alias < i:
                raise _fail(f"{what}: alias_of {alias} is not an earlier buffer")
            base = buffers[alias]
            if base.memory != memory or base.index != index or off < base.offset or off + size > base.offset + base.size:
                raise _fail(f"{what}: view bytes [{off}, {off + size}) are not inside base buffer {alias}")
        buffers.append(BufferDesc(memory, kind, shape, off, size, index, alias))
    for io in (*inputs, *outputs):
        what = f"io '{io.name}'"
        if not 0 <= io.buffer < n_buf:
            raise _fail(f"{what}: buffer index {io.buffer} is outside [0, {n_buf})")
        b = buffers[io.buffer]
        pos = (inputs if not io.is_output else outputs).index(io)
        want = Memory.OUTPUT if io.is_output else Memory.INPUT
        if b.memory != want or b.index != pos or b.offset != 0 or b.size != io.size or b.kind != io.kind:
            raise _fail(f"{what}: buffer {io.buffer} does not cover the whole {want.name.lower()} {pos}")

    # barriers
    r = _Reader(secs[SectionKind.BARRIERS], "BARRIERS")
    n_bar = r.count(_BARRIER.size, "barriers")
    barriers = []
    for i in range(n_bar):
        pid, prod, cons, res = r.take(_BARRIER, f"barrier {i}")
        if res:
            raise _fail(f"barrier {i}: reserved field is not zero")
        barriers.append(BarrierDesc(pid, prod, cons))

    # tasks
    r = _Reader(secs[SectionKind.TASKS], "TASKS")
    n_task = r.count(_TASK_HEAD.size, "tasks")
    tasks: list[TaskDesc] = []
    produced = [0] * n_bar
    consumed = [0] * n_bar
    for i in range(n_task):
        es, el, eidx, ks, kl, as_, al, ni, no, nw, nu, res = r.take(_TASK_HEAD, f"task {i}")
        what = f"task {i}"
        if res:
            raise _fail(f"{what}: reserved field is not zero")
        ids = r.u32s(ni + no + nw + nu, what)
        ins, outs = ids[:ni], ids[ni:ni + no]
        waits, updates = ids[ni + no:ni + no + nw], ids[ni + no + nw:]
        executor = _string(strings, (es, el), what)
        kernel = _string(strings, (ks, kl), what)
        try:
            args = decode_args(_string(strings, (as_, al), what))
        except ValueError as err:
            raise _fail(f"{what} ({kernel}): kernel args: {err}") from None
        for j in (*ins, *outs):
            if j >= n_buf:
                raise _fail(f"{what} ({kernel}): operand buffer {j} is outside [0, {n_buf})")
        for j in outs:
            if buffers[j].memory in (Memory.INPUT, Memory.CONSTANT):
                raise _fail(f"{what} ({kernel}): writes buffer {j} in read-only {buffers[j].memory.name} memory")
        for j in (*waits, *updates):
            if j >= n_bar:
                raise _fail(f"{what} ({kernel}): barrier {j} is outside [0, {n_bar})")
        if len(set(waits)) != len(waits) or len(set(updates)) != len(updates) or set(waits) & set(updates):
            raise _fail(f"{what} ({kernel}): repeated barrier in waits {list(waits)} / updates {list(updates)}")
        for p in args["post_ops"]:
            if p.get("operand") is not None and not 0 <= p["operand"] < len(ins):
                raise _fail(f"{what} ({kernel}): post-op operand {p['operand']} is outside its {len(ins)} ins")
        for j in waits:
            consumed[j] += 1
        for j in updates:
            produced[j] += 1
        tasks.append(TaskDesc(executor, eidx, kernel, args, tuple(ins), tuple(outs), tuple(waits), tuple(updates)))
    for i, br in enumerate(barriers):
        if br.producers != produced[i] or br.consumers != consumed[i]:
            raise _fail(f"barrier {i}: counts (producers {br.producers}, consumers {br.consumers}) do not match "
                        f"the tasks (producers {produced[i]}, consumers {consumed[i]})")
        if br.consumers and not br.producers:
            raise _fail(f"barrier {i} has consumers but no producer (they would wait forever)")
    _check_acyclic(tasks, n_bar)
    return Blob(constants=constants, buffers=buffers, tasks=tasks, barriers=barriers, inputs=inputs,
                outputs=outputs, metadata=meta)


def _check_acyclic(tasks: list[TaskDesc], n_bar: int) -> None:
    """Kahn's algorithm on FIFO + barrier edges: every task can start (no deadlock)."""
    n = len(tasks)
    succ: list[list[int]] = [[] for _ in range(n)]
    indeg = [0] * n
    last: dict[tuple[str, int], int] = {}
    producers: list[list[int]] = [[] for _ in range(n_bar)]
    for i, t in enumerate(tasks):
        for b in t.updates:
            producers[b].append(i)
    for i, t in enumerate(tasks):
        key = (t.executor, t.executor_index)
        if key in last:
            succ[last[key]].append(i)
            indeg[i] += 1
        last[key] = i
        for b in t.waits:
            for p in producers[b]:
                succ[p].append(i)
                indeg[i] += 1
    ready = [i for i in range(n) if indeg[i] == 0]
    done = 0
    while ready:
        i = ready.pop()
        done += 1
        for j in succ[i]:
            indeg[j] -= 1
            if indeg[j] == 0:
                ready.append(j)
    if done != n:
        stuck = [i for i in range(n) if indeg[i] > 0][:5]
        raise _fail(f"the task graph has a cycle (tasks {stuck} can never start: deadlock)")


__all__ = [
    "PANEL_WIDTH", "pack_panels", "unpack_panels",
    "ALIGNMENT", "Blob", "BarrierDesc", "BufferDesc", "DTYPE_CODES", "IODesc", "MAGIC", "Memory",
    "SectionKind", "TaskDesc", "VERSION_MAJOR", "VERSION_MINOR", "ConstantChunk", "ConstantStore", "constants_u8",
    "decode", "decode_args", "encode",
    "encode_args", "encode_chunks", "storage_dtype",
]
