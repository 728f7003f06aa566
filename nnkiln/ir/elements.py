"""Numpy-backed constants.

Weights are held as xDSL ``DenseIntOrFPElementsAttr`` built directly from the raw bytes of a
numpy array (never through Python lists), and read back as zero-copy, read-only numpy views.
A 25M-element f32 tensor is created and verified in milliseconds. Large constants print as
``dense_resource<handle>`` with their bytes in the file's ``dialect_resources`` section (see
``nnkiln.ir.text``); small ones print as ``dense<...>``.

Storage decisions (element type → numpy dtype):
- ``i1`` (TOSA bool_t) → ``bool``;  ``i4`` → ``int8`` (one byte per element, as xDSL stores it);
- ``i48`` → ``int64`` (xDSL stores i48 in 8 bytes); ``ui8``/``ui16`` → ``uint8``/``uint16``;
- ``bf16`` → ``ml_dtypes.bfloat16``; quantized element types use their storage type.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    TensorType,
)
from xdsl.ir import Attribute

from nnkiln.ir.errors import InputError

_INT_DTYPES = {1: np.bool_, 4: np.int8, 8: np.int8, 16: np.int16, 32: np.int32, 48: np.int64, 64: np.int64}
_UINT_DTYPES = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def storage_type(element_type: Attribute) -> Attribute:
    """The element type that holds the bits: a quantized type's storage type, else itself."""
    inner = getattr(element_type, "storage_type", None)
    return inner if isinstance(inner, Attribute) else element_type


def dtype_of(element_type: Attribute) -> np.dtype:
    """The numpy dtype that stores one element of ``element_type``."""
    t = storage_type(element_type)
    if isinstance(t, IntegerType):
        width = t.width.data
        table = _UINT_DTYPES if t.signedness.data == Signedness.UNSIGNED else _INT_DTYPES
        if width in table:
            return np.dtype(table[width])
    elif isinstance(t, Float32Type):
        return np.dtype(np.float32)
    elif isinstance(t, Float16Type):
        return np.dtype(np.float16)
    elif isinstance(t, BFloat16Type):
        return np.dtype(ml_dtypes.bfloat16)
    elif isinstance(t, Float64Type):
        return np.dtype(np.float64)
    raise InputError(f"element type {t} has no numpy storage")


def from_numpy(array: np.ndarray, tensor_type: TensorType | None = None) -> DenseIntOrFPElementsAttr:
    """A dense elements attribute holding ``array``'s bytes (one copy, no Python lists).

    If ``tensor_type`` is given, ``array`` is converted to its storage dtype and must have its shape.
    """
    if tensor_type is None:
        tensor_type = TensorType(element_type_of(array.dtype), array.shape)
    dtype = dtype_of(tensor_type.element_type)
    shape = tuple(tensor_type.get_shape())
    data = np.asarray(array, dtype=dtype)
    if data.shape != shape:
        if data.size == 1:
            data = np.broadcast_to(data.reshape(()), shape)
        else:
            raise InputError(f"constant of shape {data.shape} does not fit {tensor_type}")
    raw = _backing_bytes(data)
    if raw is None:
        raw = data.tobytes()  # one copy, in C order whatever the array's strides
    return DenseIntOrFPElementsAttr(tensor_type, BytesAttr(raw))


def _backing_bytes(data: np.ndarray) -> bytes | None:
    """The ``bytes`` object ``data`` is a C-contiguous view of, byte for byte (then no copy is needed:
    e.g. an ONNX initializer's raw data), else ``None``."""
    if not data.flags.c_contiguous or data.dtype.byteorder == ">":
        return None
    base = data.base
    while isinstance(base, np.ndarray):
        base = base.base
    if type(base) is not bytes or len(base) != data.nbytes or not data.nbytes:
        return None
    if np.frombuffer(base, dtype=np.uint8).__array_interface__["data"][0] != data.__array_interface__["data"][0]:
        return None
    return base


def to_numpy(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    """A read-only numpy view of a dense elements attribute (zero-copy)."""
    ttype = attr.type
    dtype = dtype_of(ttype.element_type)
    arr = np.frombuffer(attr.data.data, dtype=dtype)
    shape = tuple(ttype.get_shape())
    count = int(np.prod(shape, dtype=np.int64))
    if arr.size == 1 and count != 1:
        arr = np.broadcast_to(arr, shape)  # splat
    return arr.reshape(shape)


def element_type_of(dtype: np.dtype) -> Attribute:
    """The MLIR element type for a numpy dtype (``bool`` → ``i1``, ``int64`` → ``i64``)."""
    from xdsl.dialects.builtin import bf16, f16, f32, f64

    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return IntegerType(1)
    if dtype == np.dtype(ml_dtypes.bfloat16):
        return bf16
    if dtype.kind == "i":
        return IntegerType(dtype.itemsize * 8)
    if dtype.kind == "u":
        return IntegerType(dtype.itemsize * 8, Signedness.UNSIGNED)
    floats = {np.dtype(np.float16): f16, np.dtype(np.float32): f32, np.dtype(np.float64): f64}
    if dtype in floats:
        return floats[dtype]
    raise InputError(f"numpy dtype {dtype} has no MLIR element type here")
