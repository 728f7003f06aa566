"""Source locations that point back to a model node, and their human-readable form.

Frontends attach MLIR's name locations to the ops they create: ``loc("conv1"("model.onnx":0:0))``
is node ``conv1`` of ``model.onnx`` (a ``NameLoc`` around a ``FileLineColLoc``; line and column are
0 when the format has none). Errors about an op then name the file and node it came from.
"""

from __future__ import annotations

from xdsl.dialects.builtin import FileLineColLoc, IntAttr, NameLoc, StringAttr, UnknownLoc
from xdsl.ir import Attribute, Operation


def source_loc(file: str, node: str = "", line: int = 0, column: int = 0) -> Attribute:
    """The location of ``node`` in model ``file`` (either may be empty)."""
    flc = FileLineColLoc(StringAttr(file), IntAttr(line), IntAttr(column)) if file else UnknownLoc()
    if node:
        return NameLoc(StringAttr(node), flc)
    return flc


def describe_loc(loc: Attribute | None) -> str:
    """``model.onnx: node 'conv1'``, ``model.nnef:12:3``, or ``""`` for unknown locations."""
    if isinstance(loc, NameLoc):
        inner = describe_loc(loc.location)
        return f"{inner}: node '{loc.desc.data}'" if inner else f"node '{loc.desc.data}'"
    if isinstance(loc, FileLineColLoc):
        if loc.line.data or loc.column.data:
            return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
        return loc.filename.data
    return ""


def op_source(op: Operation) -> str:
    """Where an op came from in the source model, if its location says."""
    return describe_loc(op.location)
