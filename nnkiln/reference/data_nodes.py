"""Reference kernels of the data nodes CONST and IDENTITY (spec §2.14)."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr

from nnkiln.errors import NotExecutableError
from nnkiln.ir.elements import to_numpy
from nnkiln.reference.registry import KernelCall, kernel


@kernel("tosa.const")
def const(call: KernelCall) -> list[np.ndarray]:
    """CONST (§2.14.1): the ``values`` attribute as a (read-only, zero-copy) array."""
    op = call.op
    for table in (op.properties, op.attributes):
        for key in ("values", "value"):
            attr = table.get(key)
            if isinstance(attr, DenseIntOrFPElementsAttr):
                return [to_numpy(attr)]
    raise NotExecutableError(f"'{op.name}' has no dense 'values' attribute to execute")


@kernel("tosa.identity")
def identity(call: KernelCall) -> list[np.ndarray]:
    """IDENTITY (§2.14.2): the input unchanged."""
    return [call.inputs[0]]


@kernel("const.declare")
def const_declare(call: KernelCall) -> list[np.ndarray]:
    """``const.declare``: the constant's data with its lazy transformations applied
    (``DeclareOp.read()`` of the const dialect)."""
    read = getattr(call.op, "read", None)
    if read is None:
        raise NotExecutableError(f"'{call.name}' cannot be read (the const dialect has no read())")
    data = np.asarray(read())
    return [data.astype(call.out_dtypes[0], copy=False).reshape(call.out_shapes[0])]
