"""Control flow: ``tfl.while`` → WHILE_LOOP and ``tfl.if`` → COND_IF (TOSA 0.30 §2.16), the referenced subgraphs
(``WhileOptions.cond_subgraph_index`` / ``body_subgraph_index``, ``IfOptions.then_subgraph_index`` /
``else_subgraph_index``) imported recursively as the regions (``TfliteImporter.lower_subgraph``).

The document (``tosa-lowerings-tf-tflite.txt``) gives ``tfl.while`` no lowering ("TODO") and has no ``tfl.if``
section; this follows TFLite's kernels (``while.cc``, ``if.cc``). TFLite subgraphs see only their inputs, so,
unlike ONNX (``onnx/lowerings/control.py``), nothing is captured: the op's inputs are the regions' arguments.
Loop-carried values must keep their type and static shape (WHILE_LOOP has no dynamic shapes), and both IF
branches must yield the same types; otherwise the op is reported as not supported.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Region, SSAValue

from nnkiln.dialects.tosa.base import Kind
from nnkiln.frontends.common.arith import kind_of_value, shape_of
from nnkiln.frontends.common.broadcast import reshape
from nnkiln.frontends.tflite.importer import OpContext
from nnkiln.frontends.tflite.lowerings._registry import lowering


def _scalar_bool(ctx: OpContext, v: SSAValue, what: str) -> SSAValue:
    """``v`` (one Boolean) reshaped to rank 0."""
    shape = shape_of(v)
    n = 1
    for d in shape:
        n *= int(d)
    if n != 1 or kind_of_value(v) is not Kind.BOOL:
        raise ctx.error(f"{what} must be one Boolean; it is {v.type}")
    return reshape(ctx.g, v, ())


def _yield(ctx: OpContext, values: Sequence[SSAValue]) -> None:
    from nnkiln.dialects.tosa.ops_control_flow import YieldOp

    ctx.g.builder.insert(YieldOp.create(operands=list(values)))


@lowering("WHILE")
def while_op(ctx: OpContext) -> list[SSAValue]:
    """``tfl.while`` (document: TODO) → WHILE_LOOP over the op's inputs: the cond region runs the cond subgraph
    (its Boolean output, reshaped to rank 0), the body region runs the body subgraph and yields its outputs."""
    from nnkiln.dialects.tosa.ops_control_flow import WhileLoopOp

    cond_i, body_i = int(ctx.opt("CondSubgraphIndex", -1)), int(ctx.opt("BodySubgraphIndex", -1))
    state = [ctx.value(i) for i in range(len(ctx.op.inputs))]
    if len(ctx.op.outputs) != len(state):
        raise ctx.error(f"{len(ctx.op.outputs)} outputs for {len(state)} loop-carried inputs")
    types = [v.type for v in state]
    imp, g = ctx.importer, ctx.g
    with g.region(types) as block:
        outs = imp.lower_subgraph(cond_i, list(block.args), ctx)
        if len(outs) != 1:
            raise ctx.error(f"the cond subgraph {cond_i} has {len(outs)} outputs; it must have one")
        _yield(ctx, [_scalar_bool(ctx, outs[0], "the cond subgraph's output")])
    cond_region = Region(block)
    with g.region(types) as block:
        outs = imp.lower_subgraph(body_i, list(block.args), ctx)
        if [o.type for o in outs] != types:
            raise ctx.error(f"the body subgraph {body_i} yields {[str(o.type) for o in outs]}, the loop carries "
                            f"{[str(t) for t in types]}; not supported (WHILE_LOOP needs static loop-carried types)")
        _yield(ctx, outs)
    body_region = Region(block)
    op = WhileLoopOp.make(state, cond_region, body_region)
    g.builder.insert(op)
    return list(op.results)


@lowering("IF")
def if_op(ctx: OpContext) -> list[SSAValue]:
    """``tfl.if`` (no section in the document) → COND_IF on input 0 (one Boolean), the other inputs passed to
    both branch subgraphs as the regions' arguments; the branches must yield identical types."""
    from nnkiln.dialects.tosa.ops_control_flow import CondIfOp

    then_i, else_i = int(ctx.opt("ThenSubgraphIndex", -1)), int(ctx.opt("ElseSubgraphIndex", -1))
    cond = _scalar_bool(ctx, ctx.value(0), "the condition")
    args = [ctx.value(i) for i in range(1, len(ctx.op.inputs))]
    types = [v.type for v in args]
    regions, out_types = [], []
    for index in (then_i, else_i):
        with ctx.g.region(types) as block:
            outs = ctx.importer.lower_subgraph(index, list(block.args), ctx)
            _yield(ctx, outs)
        out_types.append([o.type for o in outs])
        regions.append(Region(block))
    if out_types[0] != out_types[1]:
        raise ctx.error(f"the branches yield different types {[str(t) for t in out_types[0]]} and "
                        f"{[str(t) for t in out_types[1]]}; not supported (TOSA needs one static type per output)")
    op = CondIfOp.make(args, cond, regions[0], regions[1])
    ctx.g.builder.insert(op)
    return list(op.results)
