"""The ``async`` dialect (module ``async_`` because ``async`` is a Python keyword)."""

from __future__ import annotations

from xdsl.ir import Dialect

from nnkiln.dialects.async_.ops import AwaitAllOp, ExecuteOp, TokenType, YieldOp

ASYNC = Dialect("async", [ExecuteOp, YieldOp, AwaitAllOp], [TokenType])

__all__ = ["ASYNC", "AwaitAllOp", "ExecuteOp", "TokenType", "YieldOp"]
