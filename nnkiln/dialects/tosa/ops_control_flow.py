"""TOSA 0.30 §2.16 control flow operators: COND_IF and WHILE_LOOP, with their ``tosa.yield``.

A ``tosa_graph_t`` attribute (spec §2.2 "Operator Graphs": tosa_input_shape/tosa_output_shape) is a single-block
region: its block arguments are the graph's inputs and the operands of its ``tosa.yield``
terminator are the graph's outputs.

Decisions:
- Sub-graphs are isolated from above (``IsolatedFromAbove``): the spec executes a graph on its
  input list only (``tosa_execute_graph(then_graph, input_list, output_list)``), so a graph may not
  use values defined outside it; constants it needs are defined inside it.
- The spec's ERROR_IFs compare tensor list *shapes*; the verifier compares full tensor types
  (shape and element type), since a graph connection with equal shapes but different element
  types cannot execute either (spec §2.2: connected tensor lists must match). Messages name the
  spec rule and the first mismatching position.
- COND_IF's operands follow the spec's argument order: ``input_list`` first, then ``condition``
  (rank-0 ``i1`` tensor) LAST (MLIR's TOSA puts the condition first; we do not).

Text form (regions in MLIR's generic region syntax, with their entry block arguments)::

    %r = tosa.cond_if %x, %c : (tensor<2xi32>, tensor<i1>) -> tensor<2xi32> {
    ^bb0(%a : tensor<2xi32>):
      tosa.yield %a : tensor<2xi32>
    } else {
    ^bb0(%a : tensor<2xi32>):
      ...
    }
    %w = tosa.while_loop %x : (tensor<i32>) -> tensor<i32> { ...cond... } do { ...body... }
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.ir import Attribute, Region
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import HasParent, IsolatedFromAbove, IsTerminator, RecursiveMemoryEffect

from nnkiln.dialects.tosa.base import Shape, TosaOp, require
from nnkiln.ir.errors import ShapeError, VerifyError


def _fmt_types(types: Sequence[Attribute]) -> str:
    return "(" + ", ".join(str(t) for t in types) + ")"


def _graph_io(region: Region, graph: str) -> tuple[list[Attribute], list[Attribute]]:
    """(input types, output types) of a sub-graph region; ``VerifyError`` if it is malformed."""
    if len(region.blocks) != 1:
        raise VerifyError(f"{graph} has {len(region.blocks)} blocks", rule=f"{graph} is a single-block graph")
    block = region.block
    last = block.last_op
    if not isinstance(last, YieldOp):
        raise VerifyError(f"{graph} does not end with tosa.yield", rule=f"{graph} ends with tosa.yield")
    return [a.type for a in block.args], [v.type for v in last.inputs]


def _require_types(actual: Sequence[Attribute], expected: Sequence[Attribute], rule: str, what: str) -> None:
    if len(actual) != len(expected):
        raise ShapeError(f"{what}: {len(actual)} tensors {_fmt_types(actual)} vs {len(expected)} "
                         f"{_fmt_types(expected)}", rule=rule)
    for i, (a, e) in enumerate(zip(actual, expected)):
        if a != e:
            raise ShapeError(f"{what}: position {i} is {a} vs {e}", rule=rule)


def _is_bool_scalar(t: Attribute) -> bool:
    return (isinstance(t, TensorType) and len(t.get_shape()) == 0 and isinstance(t.element_type, IntegerType)
            and t.element_type.width.data == 1)


@irdl_op_definition
class CondIfOp(TosaOp):
    """COND_IF (spec §2.16.1): runs ``then_graph`` if ``condition`` else ``else_graph`` on ``input_list``.

    Operands: ``input_list`` (variadic), ``condition`` (rank-0 ``i1`` tensor, last: spec order).
    Regions: ``then_graph``, ``else_graph``. Results: ``output_list``.

    ERROR_IF: ``tensor_list_shape(input_list) != tosa_input_shape(then_graph)`` (and else_graph);
    ``tensor_list_shape(output_list) != tosa_output_shape(then_graph)`` (and else_graph);
    ``condition`` is a rank-0 bool tensor (argument table).
    """

    name = "tosa.cond_if"

    input_list = var_operand_def(TensorType)
    condition = operand_def(TensorType)
    output_list = var_result_def(TensorType)
    then_graph = region_def("single_block")
    else_graph = region_def("single_block")
    traits = traits_def(IsolatedFromAbove(), RecursiveMemoryEffect())
    assembly_format = (
        "operands attr-dict `:` functional-type(operands, results) $then_graph `else` $else_graph"
    )

    def verify_shapes(self, attrs: Mapping[str, Any]) -> None:
        ctype = self.condition.type
        require(_is_bool_scalar(ctype), "condition is a rank-0 bool_t tensor", f"condition has type {ctype}")
        inputs = [v.type for v in self.input_list]
        outputs = [r.type for r in self.output_list]
        for graph, region in (("then_graph", self.then_graph), ("else_graph", self.else_graph)):
            g_in, g_out = _graph_io(region, graph)
            _require_types(inputs, g_in, f"ERROR_IF(tensor_list_shape(input_list) != tosa_input_shape({graph}))",
                           f"input_list vs {graph} arguments")
            _require_types(outputs, g_out, f"ERROR_IF(tensor_list_shape(output_list) != tosa_output_shape({graph}))",
                           f"output_list vs {graph} yield")

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        raise NotImplementedError("tosa.cond_if's output shapes are those its graphs yield; build it with make()")

    @classmethod
    def make(  # type: ignore[override]
        cls, input_list: Sequence[Any], condition: Any, then_graph: Region, else_graph: Region,
    ) -> CondIfOp:
        """Build a COND_IF whose result types are those ``then_graph`` yields."""
        _, outs = _graph_io(then_graph, "then_graph")
        return cls.create(operands=[*input_list, condition], result_types=outs, regions=[then_graph, else_graph])


@irdl_op_definition
class WhileLoopOp(TosaOp):
    """WHILE_LOOP (spec §2.16.2): ``list = input_list; while (cond_graph(list)) list = body_graph(list)``.

    Operands ``input_list`` (variadic), results ``output_list``, regions ``cond_graph`` and
    ``body_graph``.

    ERROR_IF: ``tensor_list_shape(input_list) != tensor_list_shape(output_list)``;
    ``!= tosa_input_shape(cond_graph)``; ``!= tosa_input_shape(body_graph)``;
    ``!= tosa_output_shape(body_graph)``; ``tosa_output_shape(cond_graph) != [bool_t]`` (one rank-0
    ``i1`` tensor; the spec's ``tosa_list_shape`` is read as ``tensor_list_shape``).
    """

    name = "tosa.while_loop"

    input_list = var_operand_def(TensorType)
    output_list = var_result_def(TensorType)
    cond_graph = region_def("single_block")
    body_graph = region_def("single_block")
    traits = traits_def(IsolatedFromAbove(), RecursiveMemoryEffect())
    assembly_format = (
        "operands attr-dict `:` functional-type(operands, results) $cond_graph `do` $body_graph"
    )

    def verify_shapes(self, attrs: Mapping[str, Any]) -> None:
        inputs = [v.type for v in self.input_list]
        outputs = [r.type for r in self.output_list]
        _require_types(inputs, outputs, "ERROR_IF(tensor_list_shape(input_list) != tensor_list_shape(output_list))",
                       "input_list vs output_list")
        c_in, c_out = _graph_io(self.cond_graph, "cond_graph")
        b_in, b_out = _graph_io(self.body_graph, "body_graph")
        _require_types(inputs, c_in, "ERROR_IF(tensor_list_shape(input_list) != tosa_input_shape(cond_graph))",
                       "input_list vs cond_graph arguments")
        _require_types(inputs, b_in, "ERROR_IF(tensor_list_shape(input_list) != tosa_input_shape(body_graph))",
                       "input_list vs body_graph arguments")
        _require_types(inputs, b_out, "ERROR_IF(tensor_list_shape(input_list) != tosa_output_shape(body_graph))",
                       "input_list vs body_graph yield")
        if len(c_out) != 1 or not _is_bool_scalar(c_out[0]):
            raise ShapeError(f"cond_graph yields {_fmt_types(c_out)}, not one tensor<i1>",
                             rule="ERROR_IF(tosa_output_shape(cond_graph) != tosa_list_shape([bool_t]))")

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        """The output list has the input list's shapes."""
        return [tuple(s) for s in shapes]

    @classmethod
    def make(  # type: ignore[override]
        cls, input_list: Sequence[Any], cond_graph: Region, body_graph: Region,
    ) -> WhileLoopOp:
        """Build a WHILE_LOOP; its result types are the input types."""
        return cls.create(operands=list(input_list), result_types=[v.type for v in input_list],
                          regions=[cond_graph, body_graph])


@irdl_op_definition
class YieldOp(IRDLOperation):
    """The terminator of a TOSA sub-graph region: its operands are the graph's outputs
    (``tosa_output_shape(graph)``). Not a spec operator; the spec's graphs have output lists."""

    name = "tosa.yield"
    inputs = var_operand_def(TensorType)
    traits = traits_def(IsTerminator(), HasParent(CondIfOp, WhileLoopOp))
    assembly_format = "attr-dict ($inputs^ `:` type($inputs))?"


__all__ = ["CondIfOp", "WhileLoopOp", "YieldOp"]
