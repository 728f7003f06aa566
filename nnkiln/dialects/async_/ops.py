"""The ``async`` dialect (architecture spec §3.3 "async regions"): tasks and their dependencies.

- ``!async.token``: completion of one ``async.execute``.
- ``%t = async.execute [%t0, %t1] {executor = "cpu", executor_index = 0 : i64} { ...; async.yield }``:
  a task that starts after the executes producing ``%t0``, ``%t1`` have finished, running on the
  given executor instance. The region has one block, no arguments, and ends with ``async.yield``;
  it is NOT isolated from above (it uses memrefs defined outside). IR order = schedule order.
- ``async.yield``: the region terminator.
- ``async.await_all %t3, %t4``: wait for the given tokens (placed before ``func.return``).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import I64, IntegerAttr, StringAttr, i64
from xdsl.ir import Block, ParametrizedAttribute, Region, SSAValue, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsTerminator

from nnkiln.ir.errors import VerifyError


@irdl_attr_definition
class TokenType(ParametrizedAttribute, TypeAttribute):
    """``!async.token``: completion of an ``async.execute``."""

    name = "async.token"


@irdl_op_definition
class ExecuteOp(IRDLOperation):
    """A task on ``executor``/``executor_index`` that waits for ``dependencies`` (tokens)."""

    name = "async.execute"
    dependencies = var_operand_def(TokenType)
    executor = prop_def(StringAttr)
    executor_index = prop_def(IntegerAttr[I64])
    token = result_def(TokenType)
    body = region_def("single_block")
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, dependencies: Sequence[SSAValue], executor: str, executor_index: int,
                 body: Region | None = None):
        if body is None:
            body = Region(Block())
        super().__init__(operands=[list(dependencies)], result_types=[TokenType()], regions=[body],
                         properties={"executor": StringAttr(executor), "executor_index": IntegerAttr(executor_index, i64)})

    @property
    def index(self) -> int:
        return self.executor_index.value.data

    def print(self, printer: Printer) -> None:
        printer.print_string(" [")
        printer.print_list(self.dependencies, printer.print_operand)
        printer.print_string("] ")
        printer.print_attr_dict({**self.properties, **self.attributes})
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=True)

    @classmethod
    def parse(cls, parser: Parser) -> ExecuteOp:
        deps = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_unresolved_operand)
        resolved = [parser.resolve_operand(d, TokenType()) for d in deps]
        attrs = parser.parse_optional_attr_dict()
        body = parser.parse_region()
        op = cls.build(operands=[resolved], result_types=[TokenType()], regions=[body],
                       properties={k: v for k, v in attrs.items() if k in ("executor", "executor_index")},
                       attributes={k: v for k, v in attrs.items() if k not in ("executor", "executor_index")})
        return op

    def verify_(self) -> None:
        block = self.body.block
        if block.args:
            raise VerifyError(f"the region has {len(block.args)} arguments", op_name=self.name,
                              rule="region has no arguments")
        if not isinstance(block.last_op, YieldOp):
            raise VerifyError("the region does not end with async.yield", op_name=self.name,
                              rule="region ends with async.yield")
        if self.index < 0:
            raise VerifyError(f"executor_index = {self.index}", op_name=self.name, rule="executor_index >= 0")


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Terminator of an ``async.execute`` region."""

    name = "async.yield"
    traits = traits_def(IsTerminator(), HasParent(ExecuteOp))
    assembly_format = "attr-dict"


@irdl_op_definition
class AwaitAllOp(IRDLOperation):
    """Waits for every token in ``tokens``."""

    name = "async.await_all"
    tokens = var_operand_def(TokenType)
    assembly_format = "$tokens attr-dict"

    def __init__(self, tokens: Sequence[SSAValue]):
        super().__init__(operands=[list(tokens)])


__all__ = ["AwaitAllOp", "ExecuteOp", "TokenType", "YieldOp"]
