"""The ``quant`` dialect (types only): MLIR's uniform quantized element types.

``QUANT`` is the xDSL ``Dialect`` (name ``quant``) registering ``!quant.uniform``; per-tensor
values are ``UniformQuantizedType`` and per-axis values ``UniformQuantizedPerAxisType`` (see
``nnkiln.dialects.quant.types`` for the syntax and the verification rules).
"""

from __future__ import annotations

from xdsl.ir import Dialect

from nnkiln.dialects.quant.types import (
    MAX_STORAGE_BITS,
    QuantizedType,
    UniformQuantizedPerAxisType,
    UniformQuantizedType,
    format_scale,
    is_quantized,
    is_signed_storage,
    storage_range,
    storage_type_from_name,
)

QUANT = Dialect("quant", [], [UniformQuantizedType])

__all__ = [
    "QUANT",
    "MAX_STORAGE_BITS",
    "QuantizedType",
    "UniformQuantizedType",
    "UniformQuantizedPerAxisType",
    "format_scale",
    "is_quantized",
    "is_signed_storage",
    "storage_range",
    "storage_type_from_name",
]
