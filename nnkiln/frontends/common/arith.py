"""Small value helpers shared by frontends: the static shape, element type and kind of an IR value, scalar
constants shaped to broadcast against a value, and float truncation toward zero.

Truncation toward zero (C/ONNX float→int semantics) is composed exactly from TOSA 0.30 ops:
``SELECT(GREATER(0, x), CEIL(x), FLOOR(x))``; TOSA's CAST rounds to nearest, so an integral value
must be formed before a float→int CAST.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import Attribute, SSAValue

from nnkiln.dialects.tosa.base import Kind, element_type, kind_of
from nnkiln.frontends.common.graph import GraphBuilder
from nnkiln.ir.elements import dtype_of


def shape_of(v: SSAValue) -> tuple[int, ...]:
    """The static shape of a tensor-typed IR value."""
    return tuple(int(d) for d in v.type.get_shape())  # type: ignore[attr-defined]


def etype(v: SSAValue) -> Attribute:
    """The element type of a tensor-typed IR value."""
    return v.type.element_type  # type: ignore[attr-defined]


def kind_of_value(v: SSAValue) -> Kind:
    """The TOSA element kind of a tensor-typed IR value."""
    k = kind_of(v.type)
    assert k is not None
    return k


def np_dtype(kind: Kind) -> np.dtype:
    """The numpy dtype that stores one element of ``kind``."""
    return dtype_of(element_type(kind))


def scalar_like(g: GraphBuilder, value: float | int | bool, like: SSAValue) -> SSAValue:
    """A ``tosa.const`` holding ``value`` in ``like``'s element kind, shaped ``[1] * rank(like)``."""
    kind = kind_of_value(like)
    arr = np.full((1,) * len(shape_of(like)), value)
    return g.const(arr.astype(np.bool_) if kind is Kind.BOOL else arr.astype(np_dtype(kind)))


def trunc_toward_zero(g: GraphBuilder, x: SSAValue) -> SSAValue:
    """A float value rounded toward zero (still float): ``SELECT(0 > x, CEIL(x), FLOOR(x))`` (exact;
    NaN and infinities pass through)."""
    from nnkiln.dialects.tosa.ops_comparison import GreaterOp
    from nnkiln.dialects.tosa.ops_elementwise_ternary import SelectOp
    from nnkiln.dialects.tosa.ops_elementwise_unary import CeilOp, FloorOp

    et = etype(x)
    negative = g.value(GreaterOp, [scalar_like(g, 0.0, x), x], element_type(Kind.BOOL))
    return g.value(SelectOp, [negative, g.value(CeilOp, [x], et), g.value(FloorOp, [x], et)], et)
