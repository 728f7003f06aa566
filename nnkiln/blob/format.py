"""The blob format's data model (version 1.0; the specification is ``docs/blob-format.md``).

Plain dataclasses for the tables (``BufferDesc``, ``TaskDesc``, ``BarrierDesc``, ``IODesc``, ``Blob``), the record
layouts, the dtype whitelist, the JSON of kernel args, the packed GEMM weight layout and the control-flow kernels
(whose first operands are nested blobs). No xDSL: the runtime
imports this package and nothing of the compiler. Encoding: ``nnkiln.blob.writer``; validating decoding:
``nnkiln.blob.reader``.
"""

from __future__ import annotations

import bisect
import json
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum, IntEnum
from typing import Any

import numpy as np

from nnkiln.errors import BlobError
from nnkiln.kinds import Kind

MAGIC = b"NNKBLOB\0"
VERSION_MAJOR = 1
VERSION_MINOR = 1
"""1.1: ARENA buffers may have index > 0 (the arena of another memory instance: METADATA ``arenas``); a blob that
uses no second arena is written as 1.0, byte for byte as before."""
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


class FusedKernel(str, Enum):
    """Kernels that compiler passes make of several tasks (the other kernels are tosa ops, ``buf.copy``,
    ``buf.concat_view`` and ``rt.nop``): their args are in ``docs/blob-format.md``."""

    ROW_PROGRAM = "fused.row_program"
    CONV2D_DEPTHWISE = "fused.conv2d_depthwise"


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

CONTROL_FLOW_KERNELS = frozenset({"tosa.cond_if", "tosa.while_loop"})
"""The kernels of control-flow tasks: their first two ``ins`` are CONSTANT buffers holding complete blobs (the
programs of the op's two regions; docs/blob-format.md, "Control flow"). The one list of them: the compiler writes
such tasks, the runtime loads their programs, ``nnkiln inspect`` describes them."""


def pack_panels(b_kn: np.ndarray, width: int = PANEL_WIDTH, out: np.ndarray | None = None) -> np.ndarray:
    """A ``[K, N]`` matrix as ``[ceil(N/width), K, width]`` panels (``P[j, k, q] = B[k, width·j + q]``, zeros beyond
    N), float32, C-contiguous; written into ``out`` (float32, that shape) when given."""
    k, n = b_kn.shape
    panels = -(-n // width)
    if out is None:  # pages without numpy's huge-page advice (nnkiln.alloc: no compaction stalls)
        from nnkiln.alloc import small_page_empty

        out = small_page_empty((panels, k, width), np.float32)
    full = n // width
    src = np.asarray(b_kn[:, :full * width], np.float32)
    if src.flags.c_contiguous and out.flags.c_contiguous and full:
        # rows of ``width`` floats moved as single opaque items (faster than numpy's float-by-float copy of the
        # transposed view: bench/RESULTS.md)
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


ConstantChunk = tuple[int, "bytes | bytearray | memoryview | np.ndarray"]
"""A piece of the CONSTANTS section: its byte offset in the section and its bytes (any C-contiguous buffer)."""


def _byte_view(data: Any) -> memoryview:
    """A flat unsigned-byte memoryview of ``data`` (no copy; numpy arrays of any dtype, bytes-likes)."""
    if isinstance(data, np.ndarray):
        data = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    mv = memoryview(data)
    return mv if mv.format == "B" and mv.ndim == 1 else mv.cast("B")


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


class ConstantStore:
    """The CONSTANTS section left as the constants' own arrays at their offsets, never joined into one buffer.

    What an in-process ``nnkiln.compile`` gives the runtime: joining a model's weights into one buffer costs a
    copy of all of them, page faults included (a large share of BERT-base's compile: bench/RESULTS.md), that
    running does not need.
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

    @property
    def arenas(self) -> list[tuple[str, int]]:
        """``(memory name, bytes)`` per arena, by the ARENA buffers' ``index``: METADATA ``arenas``, else one arena
        (the default memory: ``memories[0]``'s name, or ``"arena"``) of ``arena_bytes``."""
        listed = self.metadata.get("arenas")
        if isinstance(listed, list) and listed:
            return [(str(a["name"]), int(a["bytes"])) for a in listed]
        mems = self.metadata.get("memories")
        name = str(mems[0]["name"]) if isinstance(mems, list) and mems and isinstance(mems[0], dict) else "arena"
        return [(name, self.arena_bytes)]


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


def constants_u8(blob: Blob) -> np.ndarray:
    """The CONSTANTS section as one flat uint8 array (joined if it is a ``ConstantStore``)."""
    c = blob.constants
    if isinstance(c, ConstantStore):
        c = c.tobytes()
    return np.frombuffer(c, np.uint8) if len(c) else np.zeros(0, np.uint8)
