"""The ``const`` dialect: lazily folded constants (architecture spec §5.2).

``CONST`` registers ``const.declare`` (``DeclareOp``), the content attribute ``#const.content``
(``ContentAttr``) and the transformation attributes (``#const.reshape``, ``#const.transpose``,
``#const.convert_elem_type``, ``#const.quant_cast``, ``#const.dequantize``, ``#const.broadcast``,
``#const.pad_with_zero``, ``#const.subview``, ``#const.rescale``, ``#const.add``). Data is read with
``read_content(attr)`` / ``DeclareOp.read()``, which is the only place transformations run.
"""

from __future__ import annotations

from xdsl.ir import Dialect

from nnkiln.dialects.const.content import ContentAttr, read_content
from nnkiln.dialects.const.ops import DeclareOp, append_transformation, materialize
from nnkiln.dialects.const.transforms import (
    TRANSFORMS,
    AddAttr,
    BroadcastAttr,
    ConvertElemTypeAttr,
    DequantizeAttr,
    PadWithZeroAttr,
    QuantCastAttr,
    RescaleAttr,
    ReshapeAttr,
    SubViewAttr,
    TransformAttr,
    TransposeAttr,
    convert_values,
)

CONST = Dialect("const", [DeclareOp], [ContentAttr, *TRANSFORMS])

__all__ = [
    "CONST",
    "ContentAttr",
    "DeclareOp",
    "TransformAttr",
    "AddAttr",
    "BroadcastAttr",
    "ConvertElemTypeAttr",
    "DequantizeAttr",
    "PadWithZeroAttr",
    "QuantCastAttr",
    "RescaleAttr",
    "ReshapeAttr",
    "SubViewAttr",
    "TransposeAttr",
    "append_transformation",
    "convert_values",
    "materialize",
    "read_content",
]
