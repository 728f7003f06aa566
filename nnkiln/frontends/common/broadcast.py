"""Rank broadcasting for TOSA's equal-rank elementwise ops (lowerings doc: apply_rank_broadcast).

Frameworks broadcast numpy-style (shapes aligned at the right). TOSA needs equal ranks, so the
lower-rank operand is reshaped with leading 1s. Constants are reshaped at import, not in the IR.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import element_type
from nnkiln.frontends.common.graph import GraphBuilder


def reshape(g: GraphBuilder, value: SSAValue, shape: Sequence[int]) -> SSAValue:
    """``tosa.reshape`` to ``shape`` (no op if the shape already matches)."""
    from nnkiln.dialects.tosa.ops_data_layout import ReshapeOp

    shape = tuple(int(d) for d in shape)
    current = tuple(value.type.get_shape())  # type: ignore[attr-defined]
    if current == shape:
        return value
    return g.value(ReshapeOp, [value], value.type.element_type, new_shape=list(shape))  # type: ignore[attr-defined]


def to_rank(g: GraphBuilder, value: SSAValue, rank: int) -> SSAValue:
    """Prepend size-1 dimensions until ``value`` has ``rank`` dimensions."""
    shape = tuple(value.type.get_shape())  # type: ignore[attr-defined]
    if len(shape) >= rank:
        return value
    return reshape(g, value, (1,) * (rank - len(shape)) + shape)


def equal_ranks(g: GraphBuilder, *values: SSAValue) -> list[SSAValue]:
    """All operands reshaped to the largest rank among them."""
    rank = max(len(v.type.get_shape()) for v in values)  # type: ignore[attr-defined]
    return [to_rank(g, v, rank) for v in values]


def numpy_broadcast_shape(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The numpy broadcast shape of ``shapes`` (raises ValueError if incompatible)."""
    import numpy as np

    return tuple(int(d) for d in np.broadcast_shapes(*[tuple(s) for s in shapes]))


__all__ = ["reshape", "to_rank", "equal_ranks", "numpy_broadcast_shape", "element_type"]
