"""``GraphBuilder``: builds the ``func.func @main`` of a tosa-level module op by op.

Frontends call ``emit(OpClass, operands, element_type, **attrs)``: the op's result shapes come from
its ``infer_shapes`` (the dialect's single shape inference), the op gets the source location of the
node being lowered, and a shape rule broken by the source model becomes a ``FrontendError`` naming
the file and node. Constants become ``tosa.const`` (numpy-backed, never Python lists); equal
constants are emitted once.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
from xdsl.builder import Builder
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

from nnkiln.dialects.tosa.base import TosaOp
from nnkiln.ir.diagnostics import source_loc
from nnkiln.ir.elements import from_numpy
from nnkiln.ir.errors import FrontendError, VerifyError

NAME_ATTR = "nnkiln.name"
DTYPE_ATTR = "nnkiln.dtype"
"""The element type (numpy name) a model declares for an output computed in another TOSA type."""
MAX_ELEMENTS = 1 << 32
"""Largest tensor a frontend may create (16 GiB of float32): a bigger one comes from a hostile or broken model
(e.g. a pooling window of 10^9 padded around the input) and would exhaust memory when run."""


def too_large(shape: Sequence[int], itemsize: int = 4) -> str | None:
    """Why a tensor of ``shape`` is refused ("a tensor of shape [...]: <reason>": more than ``MAX_ELEMENTS``
    elements, or more bytes than half the machine's memory), or None."""
    from nnkiln.targets import HOST_MEMORY

    count = int(np.prod(shape, dtype=np.float64)) if len(shape) else 1
    if count > MAX_ELEMENTS:
        return f"a tensor of shape {list(shape)}: more than 2^32 elements, refused as absurdly large"
    if count * itemsize > HOST_MEMORY.size // 2:
        return (f"a tensor of shape {list(shape)}: {count * itemsize} bytes, more than half of this machine's "
                f"{HOST_MEMORY.size} bytes of memory")
    return None


def _sample(raw: bytes) -> bytes:
    """A few kilobytes that stand for ``raw`` in a hash key: all of it if small, else its length,
    both ends and an evenly strided sample."""
    n = len(raw)
    if n <= 4096:
        return raw
    return n.to_bytes(8, "little") + raw[:1024] + raw[-1024:] + bytes(memoryview(raw)[:: n // 1024])


class GraphBuilder:
    """Accumulates ops of one function; ``finish`` returns the module."""

    def __init__(self, file: str, input_types: Sequence[tuple[str, TensorType]]):
        self.file = file
        self.node = ""
        self.block = Block(arg_types=[t for _, t in input_types])
        self.input_names = [n for n, _ in input_types]
        for arg, name in zip(self.block.args, self.input_names):
            if name.isidentifier():
                arg.name_hint = name
        self.builder = Builder(InsertPoint.at_end(self.block))
        self._consts: dict[tuple[Attribute, bytes], list[tuple[bytes, SSAValue]]] = {}

    # -- context ----------------------------------------------------------------------------------

    def at_node(self, node: str) -> None:
        """Ops emitted from now on come from source node ``node``."""
        self.node = node

    def error(self, message: str) -> FrontendError:
        return FrontendError(message, file=self.file, node=self.node)

    # -- emitting ---------------------------------------------------------------------------------

    def emit(
        self,
        op_cls: type[TosaOp],
        operands: Sequence[SSAValue | Sequence[SSAValue]],
        element_types: Attribute | Sequence[Attribute],
        **attrs: Any,
    ) -> TosaOp:
        """Create, locate and insert one op; shape rule violations become a ``FrontendError``."""
        try:
            op = op_cls.make(operands, element_types, **attrs)
        except VerifyError as err:
            err.op_name = err.op_name or op_cls.name
            raise self.error(f"cannot build {op_cls.name}: {err.describe()}") from None
        for r in op.results:
            why = too_large(r.type.get_shape()) if isinstance(r.type, TensorType) else None
            if why is not None:
                raise self.error(f"{op_cls.name} would produce {why}")
        op.location = source_loc(self.file, self.node)
        self.builder.insert(op)
        return op

    def value(self, op_cls: type[TosaOp], operands: Sequence[SSAValue | Sequence[SSAValue]],
              element_types: Attribute | Sequence[Attribute], **attrs: Any) -> SSAValue:
        """``emit`` for single-result ops: returns the result value."""
        return self.emit(op_cls, operands, element_types, **attrs).results[0]

    def const(self, array: np.ndarray, tensor_type: TensorType | None = None) -> SSAValue:
        """A ``tosa.const`` holding ``array`` (deduplicated by bytes and type)."""
        from nnkiln.dialects.tosa.ops_data_nodes import ConstOp

        attr = from_numpy(np.asarray(array), tensor_type)
        raw = attr.data.data
        # Deduplicate without hashing every weight byte: bucket by type and a sample of the bytes,
        # then compare the bytes in full within the bucket.
        bucket = self._consts.setdefault((attr.type, _sample(raw)), [])
        for other, value in bucket:
            if other is raw or other == raw:
                return value
        op = ConstOp.create(properties={"values": attr}, result_types=[attr.type])
        op.location = source_loc(self.file, self.node)
        self.builder.insert(op)
        bucket.append((raw, op.results[0]))
        return op.results[0]

    # -- nested regions ---------------------------------------------------------------------------

    @contextmanager
    def region(self, arg_types: Sequence[Attribute]) -> Iterator[Block]:
        """Build into a fresh block (a region body of a control-flow op) until the ``with`` ends.

        The insertion point and the constant cache are swapped, so constants used inside the (isolated)
        region are defined inside it; both are restored afterwards.
        """
        saved = (self.builder, self._consts, self.node)
        block = Block(arg_types=list(arg_types))
        self.builder = Builder(InsertPoint.at_end(block))
        self._consts = {}
        try:
            yield block
        finally:
            self.builder, self._consts, self.node = saved

    # -- finishing --------------------------------------------------------------------------------

    def finish(self, outputs: Sequence[tuple[str, SSAValue]], func_name: str = "main",
               declared: Sequence[str | None] = ()) -> ModuleOp:
        """Return the module: ``func.func @main`` with named inputs and outputs. ``declared``: per output, the
        element type the model declares when it is not the one computing it (``DTYPE_ATTR``; ``kinds.to_declared``
        converts at the boundary)."""
        self.builder.insert(ReturnOp(*[v for _, v in outputs]))
        ftype = ([a.type for a in self.block.args], [v.type for _, v in outputs])
        func = FuncOp(func_name, ftype, Region(self.block))
        func.arg_attrs = ArrayAttr([DictionaryAttr({NAME_ATTR: StringAttr(n)}) for n in self.input_names])
        dtypes = list(declared) + [None] * (len(outputs) - len(declared))
        func.res_attrs = ArrayAttr([
            DictionaryAttr({NAME_ATTR: StringAttr(n), **({DTYPE_ATTR: StringAttr(d)} if d else {})})
            for (n, _), d in zip(outputs, dtypes)])
        return ModuleOp([func])
