"""Shape rules shared by several TOSA ops (spec §1.8.4 broadcasting, §2.3 output sizes)."""

from __future__ import annotations

from collections.abc import Sequence

from nnkiln.dialects.tosa.base import Shape, require_shape


def broadcast_shapes(*shapes: Sequence[int]) -> Shape:
    """apply_broadcast (spec §3.2.4): equal ranks; a dimension may differ only where it is 1."""
    rank = len(shapes[0])
    require_shape(all(len(s) == rank for s in shapes), "broadcast: equal rank",
                  f"operand ranks differ: {[len(s) for s in shapes]}")
    out = []
    for dims in zip(*shapes):
        big = max(dims)
        require_shape(all(d in (1, big) for d in dims), "broadcast: mismatched dimension is 1",
                      f"dimensions {list(dims)} cannot broadcast")
        out.append(big)
    return tuple(out)
