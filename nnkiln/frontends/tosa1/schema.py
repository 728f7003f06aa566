"""A hand-written reader for the subset of the TOSA 1.x flatbuffer schema (``tosa.fbs``) nnkiln needs.

The file layout (``file_identifier "TOSA"``, ``root_type TosaGraph``) is read with the ``flatbuffers``
runtime's generic ``Table`` accessor; every table below names its fields by their slot index in the
schema (a field's vtable offset is ``4 + 2 * index``; a union occupies two slots: its type byte, then
its table). Only what the importer uses is exposed, as plain Python dataclasses:

- ``TosaGraph``: version, regions; ``TosaRegion``: name, blocks;
- ``TosaBasicBlock``: name, operators, tensors, inputs, outputs, shapes;
- ``TosaOperator``: op (``OpCode``), attribute table (read lazily by field index), inputs, outputs;
- ``TosaTensor``: name, shape, dtype (``DType``), raw data bytes; ``TosaShape``: name, rank, data.

Enum values are those of the schema version shipped with tosa-tools 2026.x (TOSA 1.1 draft), which is
append-only ("New values added to the schema should be placed at the end of the list").
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np
from flatbuffers import encode
from flatbuffers import number_types as N
from flatbuffers.table import Table

from nnkiln.ir.errors import FrontendError
from nnkiln.limits import check_tensor


class DType(IntEnum):
    """``enum DType:uint32`` of tosa.fbs."""

    UNKNOWN = 0
    BOOL = 1
    INT4 = 2
    INT8 = 3
    INT16 = 4
    INT32 = 5
    INT48 = 6
    FP32 = 7
    FP16 = 8
    BF16 = 9
    SHAPE = 10
    FP8E4M3 = 11
    FP8E5M2 = 12
    FP6E2M3 = 13
    FP6E3M2 = 14
    FP4E2M1 = 15
    FP8UE8M0 = 16
    INT64 = 17
    MXINT8 = 18


class ResizeMode(IntEnum):
    UNKNOWN = 0
    NEAREST = 1
    BILINEAR = 2


class NanPropagationMode(IntEnum):
    UNKNOWN = 0
    PROPAGATE = 1
    IGNORE = 2


class RoundingMode(IntEnum):
    UNKNOWN = 0
    SINGLE_ROUND = 1
    INEXACT_ROUND = 2
    DOUBLE_ROUND = 3


_OP_NAMES = """UNKNOWN ARGMAX AVG_POOL2D CONV2D CONV3D DEPTHWISE_CONV2D FFT2D MATMUL MAX_POOL2D RFFT2D
TRANSPOSE_CONV2D CLAMP ERF SIGMOID TANH ADD ARITHMETIC_RIGHT_SHIFT BITWISE_AND BITWISE_OR BITWISE_XOR INTDIV
LOGICAL_AND LOGICAL_LEFT_SHIFT LOGICAL_RIGHT_SHIFT LOGICAL_OR LOGICAL_XOR MAXIMUM MINIMUM MUL POW SUB TABLE ABS
BITWISE_NOT CEIL CLZ COS EXP FLOOR LOG LOGICAL_NOT NEGATE RECIPROCAL RSQRT SIN SELECT EQUAL GREATER GREATER_EQUAL
REDUCE_ALL REDUCE_ANY REDUCE_MAX REDUCE_MIN REDUCE_PRODUCT REDUCE_SUM CONCAT PAD RESHAPE REVERSE SLICE TILE
TRANSPOSE GATHER SCATTER RESIZE CAST RESCALE CONST IDENTITY CUSTOM COND_IF WHILE_LOOP VARIABLE VARIABLE_WRITE
VARIABLE_READ CONST_SHAPE MATMUL_T_BLOCK_SCALED CAST_FROM_BLOCK_SCALED CAST_TO_BLOCK_SCALED DIM CONCAT_SHAPE
ADD_SHAPE SUB_SHAPE MUL_SHAPE SLICE_SHAPE EXP2_SHAPE LOG2_CEIL_SHAPE LOG2_FLOOR_SHAPE MAX_SHAPE MIN_SHAPE
MOD_SHAPE DIV_CEIL_SHAPE DIV_FLOOR_SHAPE ASSERT_EQUAL_SHAPE CONV2D_BLOCK_SCALED MAX_POOL2D_ADAPTIVE
AVG_POOL2D_ADAPTIVE RESHAPE_BLOCK_SCALED ROW_GATHER_BLOCK_SCALED ROW_GATHER MATMUL_T""".split()

OpCode = IntEnum("OpCode", {name: i for i, name in enumerate(_OP_NAMES)})  # type: ignore[misc]
"""``enum Op:uint32`` of tosa.fbs (``OpCode.CONV2D`` == 3)."""


# numpy storage of each element type as serialized in TosaTensor.data (little endian)
_STORAGE: dict[DType, np.dtype] = {
    DType.BOOL: np.dtype(np.bool_),
    DType.INT8: np.dtype("<i1"),
    DType.INT16: np.dtype("<i2"),
    DType.INT32: np.dtype("<i4"),
    DType.INT64: np.dtype("<i8"),
    DType.FP32: np.dtype("<f4"),
    DType.FP16: np.dtype("<f2"),
    DType.SHAPE: np.dtype("<i8"),
}


class CorruptFlatbuffer(FrontendError):
    """An offset, size or length of the flatbuffer points outside it (raised without the file name: the importer's
    entry point adds it)."""


def _guarded(method):  # noqa: ANN001, ANN202
    """Turn the flatbuffers runtime's low-level failures on a corrupt buffer into ``CorruptFlatbuffer``: attribute
    tables are read lazily, long after ``read_graph``, so every accessor needs the guard."""
    import functools

    @functools.wraps(method)
    def guarded(self, *args):  # noqa: ANN001, ANN002, ANN202
        try:
            return method(self, *args)
        except FrontendError:
            raise
        except (struct.error, TypeError, ValueError, IndexError, OverflowError, UnicodeDecodeError) as err:
            raise CorruptFlatbuffer(f"corrupt TOSA flatbuffer ({method.__name__}): {err}") from None

    return guarded


class _T:
    """A flatbuffer table at a position, read field by field (slot index → vtable offset); every read is bounds
    checked (a corrupt offset or length raises ``CorruptFlatbuffer``)."""

    __slots__ = ("tab",)

    def __init__(self, buf: bytes | bytearray, pos: int) -> None:
        if not 0 <= pos <= len(buf) - 4:
            raise CorruptFlatbuffer(f"corrupt TOSA flatbuffer: table offset {pos} is outside the {len(buf)} bytes")
        self.tab = Table(buf, pos)

    def _off(self, slot: int) -> int:
        return self.tab.Offset(4 + 2 * slot)

    def _vector(self, o: int, elem_size: int) -> tuple[int, int]:
        """(start, length) of the vector at field offset ``o``, checked to lie inside the buffer."""
        start, n = self.tab.Vector(o), self.tab.VectorLen(o)
        if start < 0 or start + n * elem_size > len(self.tab.Bytes):
            raise CorruptFlatbuffer(f"corrupt TOSA flatbuffer: a vector of {n} elements at {start} runs past the "
                                    f"end of the {len(self.tab.Bytes)} bytes")
        return start, n

    @_guarded
    def has(self, slot: int) -> bool:
        return self._off(slot) != 0

    @_guarded
    def scalar(self, slot: int, flags: type, default: int | bool = 0) -> int | bool:
        o = self._off(slot)
        return self.tab.Get(flags, o + self.tab.Pos) if o else default

    def int32(self, slot: int, default: int = 0) -> int:
        return int(self.scalar(slot, N.Int32Flags, default))

    def uint32(self, slot: int, default: int = 0) -> int:
        return int(self.scalar(slot, N.Uint32Flags, default))

    def uint64(self, slot: int, default: int = 0) -> int:
        return int(self.scalar(slot, N.Uint64Flags, default))

    def bool(self, slot: int, default: bool = False) -> bool:
        return bool(self.scalar(slot, N.BoolFlags, default))

    @_guarded
    def string(self, slot: int) -> str:
        o = self._off(slot)
        return self.tab.String(o + self.tab.Pos).decode("utf-8") if o else ""

    @_guarded
    def table(self, slot: int) -> _T | None:
        o = self._off(slot)
        if not o:
            return None
        return _T(self.tab.Bytes, self.tab.Indirect(o + self.tab.Pos))

    @_guarded
    def union(self, slot: int) -> _T | None:
        """The table of a union whose value is at ``slot`` (the type byte is at ``slot - 1``)."""
        o = self._off(slot)
        if not o:
            return None
        t = Table(self.tab.Bytes, 0)
        self.tab.Union(t, o)
        out = _T(self.tab.Bytes, t.Pos)
        out.tab = t
        return out

    @_guarded
    def vec_len(self, slot: int) -> int:
        o = self._off(slot)
        return self._vector(o, 1)[1] if o else 0

    @_guarded
    def tables(self, slot: int) -> list[_T]:
        o = self._off(slot)
        if not o:
            return []
        start, n = self._vector(o, 4)
        return [_T(self.tab.Bytes, self.tab.Indirect(start + 4 * i)) for i in range(n)]

    @_guarded
    def strings(self, slot: int) -> list[str]:
        o = self._off(slot)
        if not o:
            return []
        start, n = self._vector(o, 4)
        return [self.tab.String(start + 4 * i).decode("utf-8") for i in range(n)]

    @_guarded
    def int32s(self, slot: int) -> list[int]:
        o = self._off(slot)
        if not o:
            return []
        self._vector(o, 4)
        return [int(v) for v in self.tab.GetVectorAsNumpy(N.Int32Flags, o)]

    @_guarded
    def ubytes(self, slot: int) -> bytes:
        o = self._off(slot)
        if not o:
            return b""
        start, n = self._vector(o, 1)
        return bytes(self.tab.Bytes[start : start + n])


# ------------------------------------------------------------------------------------------------
# The tables


@dataclass
class TosaTensor:
    name: str
    shape: list[int]
    dtype: DType
    data: bytes
    is_unranked: bool = False
    variable: bool = False

    def array(self) -> np.ndarray:
        """The constant data as a numpy array (storage dtype; INT4/INT48 unpacked)."""
        return decode_tensor_data(self.data, self.dtype, self.shape, self.name)


@dataclass
class TosaShape:
    name: str
    rank: int
    data: bytes


@dataclass
class TosaOperator:
    op: int
    attribute: _T | None
    inputs: list[str]
    outputs: list[str]
    location: str = ""

    @property
    def op_name(self) -> str:
        try:
            return OpCode(self.op).name
        except ValueError:
            return f"<op code {self.op}>"


@dataclass
class TosaBasicBlock:
    name: str
    operators: list[TosaOperator]
    tensors: list[TosaTensor]
    inputs: list[str]
    outputs: list[str]
    shapes: list[TosaShape] = field(default_factory=list)


@dataclass
class TosaRegion:
    name: str
    blocks: list[TosaBasicBlock]


@dataclass
class TosaGraph:
    version: tuple[int, int, int, bool]
    regions: list[TosaRegion]


def _tensor(t: _T) -> TosaTensor:
    # table TosaTensor { name 0, shape 1, type 2, data 3, variable 4, is_unranked 5, variable_name 6,
    #                    offset 7, size 8, scale_type 9, scale_data 10, block_shape 11, ... }
    return TosaTensor(
        name=t.string(0), shape=t.int32s(1), dtype=_dtype(t.uint32(2)), data=t.ubytes(3),
        variable=t.bool(4), is_unranked=t.bool(5),
    )


def _dtype(v: int) -> DType:
    try:
        return DType(v)
    except ValueError:
        return DType.UNKNOWN


def _operator(t: _T) -> TosaOperator:
    # table TosaOperator { op 0, attribute_type 1, attribute 2, inputs 3, outputs 4, location 5 }
    loc = t.table(5)
    return TosaOperator(op=t.uint32(0), attribute=t.union(2), inputs=t.strings(3), outputs=t.strings(4),
                        location=loc.string(0) if loc else "")


def _block(t: _T) -> TosaBasicBlock:
    # table TosaBasicBlock { name 0, operators 1, tensors 2, inputs 3, outputs 4, shapes 5 }
    return TosaBasicBlock(
        name=t.string(0),
        operators=[_operator(o) for o in t.tables(1)],
        tensors=[_tensor(x) for x in t.tables(2)],
        inputs=t.strings(3),
        outputs=t.strings(4),
        shapes=[TosaShape(s.string(0), s.uint32(1), s.ubytes(2)) for s in t.tables(5)],
    )


def read_graph(data: bytes, filename: str = "") -> TosaGraph:
    """Parse a ``.tosa`` flatbuffer. Raises ``FrontendError`` if it is not one."""
    if len(data) < 8 or data[4:8] != b"TOSA":
        raise FrontendError("not a TOSA flatbuffer (file identifier 'TOSA' missing)", file=filename)
    try:
        root = _T(data, encode.Get(N.UOffsetTFlags.packer_type, data, 0))
        # table TosaGraph { version 0 (required), regions 1, software_version 2, compatibility 3 }
        v = root.table(0)
        if v is None:
            raise FrontendError("TosaGraph.version is missing", file=filename)
        # table Version { _major 0, _minor 1, _patch 2, _draft 3 (default true) }
        version = (v.int32(0, -1), v.int32(1, -1), v.int32(2, -1), v.bool(3, True))
        regions = [TosaRegion(r.string(0), [_block(b) for b in r.tables(1)]) for r in root.tables(1)]
    except FrontendError:
        raise
    except Exception as err:  # struct errors on a truncated/corrupt buffer
        raise FrontendError(f"corrupt TOSA flatbuffer: {err}", file=filename) from None
    return TosaGraph(version, regions)


_PACKED_BYTES = {DType.INT4: 0.5, DType.INT48: 6, DType.BF16: 2, DType.BOOL: 1}


def data_itemsize(dtype: DType) -> float:
    """Bytes per element of ``dtype`` in ``TosaTensor.data`` (0.5 for INT4; 1 for a type without a decoder)."""
    dt = _STORAGE.get(dtype)
    return _PACKED_BYTES.get(dtype, dt.itemsize if dt is not None else 1)


def decode_tensor_data(data: bytes, dtype: DType, shape: list[int], name: str = "") -> np.ndarray:
    """Raw little-endian tensor bytes → numpy array of ``shape``.

    INT4 is packed two per byte (low nibble first) and sign-extended into int8; INT48 is 6 bytes per
    element, sign-extended into int64; BOOL is one byte per element. The shape is checked against the limits
    (``nnkiln.limits``) and the data must hold every element, before anything is allocated.
    """
    if len(shape) > 64:
        raise FrontendError(f"tensor '{name}': rank {len(shape)} is over 64")
    decoded = {DType.INT4: 1, DType.INT48: 8}.get(dtype, data_itemsize(dtype))  # bytes per element once decoded
    count = check_tensor(shape, decoded, f"tensor '{name}'")
    needed = (count + 1) // 2 if dtype is DType.INT4 else int(count * data_itemsize(dtype))
    if len(data) < needed:
        raise FrontendError(f"tensor '{name}': {len(data)} bytes of data for {count} {dtype.name} elements")
    data = data[:needed]  # trailing bytes (padding, or a corrupt length) are not elements: frombuffer needs whole ones
    if dtype is DType.INT4:
        raw = np.frombuffer(data, np.uint8)[: (count + 1) // 2]
        nib = np.empty(raw.size * 2, np.int8)
        nib[0::2] = (raw & 0xF).astype(np.int8)
        nib[1::2] = (raw >> 4).astype(np.int8)
        nib = np.where(nib >= 8, nib - 16, nib).astype(np.int8)
        return nib[:count].reshape(shape)
    if dtype is DType.INT48:
        raw = np.frombuffer(data, np.uint8)[: 6 * count].reshape(count, 6).astype(np.int64)
        val = sum(raw[:, i] << (8 * i) for i in range(6))
        val = np.where(val >= (1 << 47), val - (1 << 48), val)
        return np.asarray(val, np.int64).reshape(shape)
    if dtype is DType.BF16:
        import ml_dtypes

        return np.frombuffer(data, ml_dtypes.bfloat16)[:count].reshape(shape).copy()
    dt = _STORAGE.get(dtype)
    if dt is None:
        raise FrontendError(f"tensor '{name}': element type {dtype.name} has no decoder")
    if dtype is DType.BOOL:
        return (np.frombuffer(data, np.uint8)[:count] != 0).reshape(shape)
    arr = np.frombuffer(data, dt)[:count]
    if arr.size != count:
        raise FrontendError(f"tensor '{name}': {len(data)} bytes of data for {count} {dtype.name} elements")
    return arr.reshape(shape).astype(dt.newbyteorder("="))


def decode_shape_data(s: TosaShape) -> list[int]:
    """A ``TosaShape``'s values (int64 little endian, ``rank`` of them)."""
    whole = len(s.data) // 8 * 8  # a corrupt length need not be a multiple of 8
    values = np.frombuffer(s.data[:whole], "<i8")[: s.rank]
    if len(values) < s.rank:
        raise FrontendError(f"shape '{s.name}': {len(s.data)} bytes of data for rank {s.rank}")
    return [int(v) for v in values]
