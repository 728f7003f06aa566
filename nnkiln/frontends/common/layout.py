"""Layout changes between framework layouts and TOSA's (NHWC feature maps, OHWI weights).

Every layout change is an explicit ``tosa.transpose`` with one of the permutations below, so a later
pass (``cancel-transpose-pairs``) can remove back-to-back pairs that importers produce.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.frontends.common.graph import GraphBuilder

NCHW_TO_NHWC = (0, 2, 3, 1)
NHWC_TO_NCHW = (0, 3, 1, 2)
NCDHW_TO_NDHWC = (0, 2, 3, 4, 1)
NDHWC_TO_NCDHW = (0, 4, 1, 2, 3)


def channels_last_perm(rank: int) -> tuple[int, ...]:
    """N C D1..Dk → N D1..Dk C."""
    return (0, *range(2, rank), 1)


def channels_first_perm(rank: int) -> tuple[int, ...]:
    """N D1..Dk C → N C D1..Dk."""
    return (0, rank - 1, *range(1, rank - 1))


def transpose(g: GraphBuilder, value: SSAValue, perms: Sequence[int]) -> SSAValue:
    """``tosa.transpose`` by ``perms`` (output dim i = input dim perms[i]); identity perms emit nothing."""
    from nnkiln.dialects.tosa.ops_data_layout import TransposeOp

    if tuple(perms) == tuple(range(len(perms))):
        return value
    return g.value(TransposeOp, [value], value.type.element_type, perms=list(perms))  # type: ignore[attr-defined]


def transpose_const(array: np.ndarray, perms: Sequence[int]) -> np.ndarray:
    """A constant's transpose, done at import (one contiguous copy)."""
    return np.ascontiguousarray(np.transpose(array, perms))
