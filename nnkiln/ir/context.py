"""The xDSL context with every dialect nnkiln understands loaded."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func


def make_context() -> Context:
    """A fresh context with builtin, func and nnkiln's dialects (tosa, quant, const, ...)."""
    from nnkiln.dialects import all_dialects

    ctx = Context()
    ctx.load_dialect(Builtin)
    ctx.load_dialect(Func)
    for d in all_dialects():
        ctx.load_dialect(d)
    return ctx
