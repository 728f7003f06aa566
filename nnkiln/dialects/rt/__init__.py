"""The ``rt`` dialect (L1, runtime level): declared buffers, barriers and per-executor task lists.

See ``nnkiln.dialects.rt.ops`` for the ops and their rules. ``RT`` is the xDSL ``Dialect``.
"""

from __future__ import annotations

from xdsl.ir import Dialect

from nnkiln.dialects.rt.ops import BarrierOp, BufferOp, EndOp, Section, TaskOp

RT = Dialect("rt", [BufferOp, BarrierOp, TaskOp, EndOp], [])

__all__ = ["RT", "BarrierOp", "BufferOp", "EndOp", "Section", "TaskOp"]
