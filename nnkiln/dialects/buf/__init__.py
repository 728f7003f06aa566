"""The ``buf`` dialect (bufferized level L2); see ``nnkiln.dialects.buf.ops``."""

from __future__ import annotations

from xdsl.ir import Dialect

from nnkiln.dialects.buf.ops import (
    NCE_ATTR,
    AllocOp,
    ConcatViewOp,
    ConstOp,
    CopyOp,
    KernelOp,
    ReshapeOp,
    StaticAllocOp,
    SubviewOp,
    base_buffer,
    byte_size,
    contiguous_box,
    num_elements,
    shape_and_itemsize,
    view_source,
)

BUF = Dialect("buf", [AllocOp, StaticAllocOp, ConstOp, KernelOp, CopyOp, ConcatViewOp, ReshapeOp, SubviewOp], [])

__all__ = ["BUF", "NCE_ATTR", "AllocOp", "ConcatViewOp", "ConstOp", "CopyOp", "KernelOp", "ReshapeOp", "StaticAllocOp",
           "SubviewOp", "base_buffer", "byte_size", "contiguous_box", "num_elements", "shape_and_itemsize",
           "view_source"]
