"""Control flow: If → COND_IF, Loop and Scan → WHILE_LOOP (TOSA 0.30 §2.16).

Sub-graphs: TOSA's graphs are isolated from above (``tosa.cond_if`` / ``tosa.while_loop`` regions may
not use outer values), while ONNX sub-graphs may read any value of the enclosing scopes. Every outer
value a sub-graph reads (its free names, nested sub-graphs included) is therefore passed explicitly:
run-time values become extra operands of the op and block arguments of the region; import-time
constants are re-emitted inside the region (they stay constants, so shape arithmetic still folds).

If: a condition known at import inlines the taken branch (no op). Otherwise both branches become
the regions of one COND_IF, whose input list is the union of the values both branches capture; the two
branches must yield outputs of identical types (static shapes), else the If is not supported.

Loop (opsets 1, 11, 13, 16, 19, 21): the WHILE_LOOP's loop-carried list is
``[iteration (i32), condition (bool), trip count (i32, if given), v_1..v_N, captured...]``; the
cond graph computes ``condition && iteration < trip_count`` (without trip count: ``condition``), the
body graph runs the ONNX body and yields ``[iteration + 1, cond_out, trip count, v_1'..v_N', captured]``.
Decision: the body's condition output ends the loop even when the node has no ``cond`` input (the
operator text calls it "ignored" in the for-loop form, but ONNX's reference implementation and
onnxruntime both stop on it; the initial condition is then true).
Loop-carried values must keep their type and shape; scan outputs (body outputs after the carried
values, which grow per iteration) are not supported; a Loop without trip count and condition (an
infinite loop) is not supported. A constant trip count beyond int32 (exporters use INT64_MAX for
"no limit") is treated as absent.

Scan (opsets 9, 11, 16, 19, 21, 23; opset 8's batched form is not supported): the number of iterations T is
the static length of the scan inputs along their scan axes, so the scan outputs have static shapes too.
Each scan input is put in ``[1, T, C]`` form (scan axis first, reversed for direction 1, the other axes
flattened into C) and carried unchanged; iteration ``i`` reads its slice with GATHER at index ``i``. Each scan
output is a carried ``[1, T, C]`` buffer (zeros) that iteration ``i`` writes with SCATTER at index ``i``; after
the loop the buffers are put back in the requested axis and direction. GATHER/SCATTER take int8/16/32 and
float tensors: bool scan inputs and outputs are not supported.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, Region, SSAValue

from nnkiln.dialects.tosa.base import Kind, element_type, kind_of
from nnkiln.frontends.common.arith import kind_of_value, shape_of
from nnkiln.frontends.common.broadcast import reshape
from nnkiln.frontends.onnx.importer import NodeContext, TensorValue, free_names
from nnkiln.frontends.onnx.lowerings import LOWERINGS, lowering
from nnkiln.ir.diagnostics import source_loc
from nnkiln.ir.elements import dtype_of

Result = list[Any]
_GATHER_KINDS = (Kind.I8, Kind.I16, Kind.I32, Kind.F16, Kind.BF16, Kind.F32)


# ------------------------------------------------------------------------------------------------
# sub-graph helpers


def _fresh(v: TensorValue) -> TensorValue:
    """A constant as a value with no IR yet (so it is re-emitted inside a region)."""
    assert v.const is not None
    return TensorValue(tuple(v.shape), v.kind, const=v.const)


@contextmanager
def _scope(ctx: NodeContext, arg_types: Sequence[TensorType]) -> Iterator[Block]:
    """Build ops into a fresh block (``GraphBuilder.region``: its own insertion point and constant
    cache) with a copy of the importer's value table whose constants have no IR yet, so they are
    re-emitted inside the isolated region; the value table is restored on exit."""
    imp = ctx.importer
    with ctx.g.region(arg_types) as block:
        saved = imp.values
        imp.values = {k: (_fresh(v) if v is not None and v.is_const else v) for k, v in saved.items()}
        try:
            yield block
        finally:
            imp.values = saved


def _captures(ctx: NodeContext, graphs: Sequence[Any], exclude: set[str]) -> tuple[list[str], list[SSAValue]]:
    """The run-time outer values the graphs read: (names, outer IR values), materialised in the outer block."""
    names: list[str] = []
    for gr in graphs:
        for n in free_names(gr):
            if n in exclude or n in names:
                continue
            v = ctx.importer.values.get(n)
            if v is None:
                raise ctx.error(f"sub-graph input '{n}' is not defined in an enclosing scope")
            if not v.is_const:
                names.append(n)
    values = [ctx.importer.materialize(ctx.importer.values[n]) for n in names]  # type: ignore[arg-type]
    return names, values


def _lower_graph_body(ctx: NodeContext, graph: Any) -> list[TensorValue]:
    """Lower a graph's nodes into the current scope; returns its outputs."""
    from nnkiln.frontends.onnx.reader import tensor_to_numpy

    imp = ctx.importer
    for t in graph.initializer:
        imp.values[t.name] = TensorValue.constant(tensor_to_numpy(t, imp.file, inline=imp.model.inline))
    imp.lower_nodes(graph.node, LOWERINGS)
    outs = []
    for o in graph.output:
        v = imp.values.get(o.name)
        if v is None:
            raise ctx.error(f"sub-graph output '{o.name}' is not produced")
        outs.append(v)
    return outs


def _yield(ctx: NodeContext, values: Sequence[SSAValue]) -> None:
    from nnkiln.dialects.tosa.ops_control_flow import YieldOp

    ctx.g.builder.insert(YieldOp.create(operands=list(values)))


def _insert(ctx: NodeContext, op: Any) -> None:
    ctx.g.at_node(ctx.name)
    op.location = source_loc(ctx.g.file, ctx.name)
    ctx.g.builder.insert(op)


def _one_value(ctx: NodeContext, v: SSAValue, what: str) -> SSAValue:
    """``v`` (which must hold one value) reshaped to rank 0."""
    shape = shape_of(v)
    if int(np.prod(shape, dtype=np.int64)) != 1:
        raise ctx.error(f"{what} has shape {list(shape)}; it must hold one value")
    return reshape(ctx.g, v, ())


# ------------------------------------------------------------------------------------------------
# If


@lowering("If")
def If(ctx: NodeContext) -> Result:
    """If (opsets 1, 11, 13, 16, 19, 21, 23) → COND_IF with the captured outer values as its input
    list (see the module docstring); a constant condition inlines the taken branch."""
    from nnkiln.dialects.tosa.ops_control_flow import CondIfOp

    then_g, else_g = ctx.attr("then_branch"), ctx.attr("else_branch")
    if then_g is None or else_g is None:
        raise ctx.error("then_branch and else_branch are required")
    cv = ctx.input(0)
    if cv.is_const:
        arr = np.asarray(cv.const)
        if arr.size != 1:
            raise ctx.error(f"the condition has {arr.size} values; it must hold one")
        branch = then_g if bool(arr.reshape(-1)[0]) else else_g
        saved = dict(ctx.importer.values)
        try:
            outs = _lower_graph_body(ctx, branch)
        finally:
            produced = ctx.importer.values
            ctx.importer.values = saved
        del produced
        ctx.g.at_node(ctx.name)
        return list(outs)
    cond = _one_value(ctx, ctx.tensor(0), "the condition")
    names, outer = _captures(ctx, [then_g, else_g], set())
    arg_types = [v.type for v in outer]
    regions = []
    out_types: list[list[Any]] = []
    for gr in (then_g, else_g):
        with _scope(ctx, arg_types) as block:
            for n, arg in zip(names, block.args):
                ctx.importer.values[n] = TensorValue.of(arg)
            outs = _lower_graph_body(ctx, gr)
            vals = [ctx.importer.materialize(o) for o in outs]
            _yield(ctx, vals)
        out_types.append([v.type for v in vals])
        regions.append(Region(block))
    if out_types[0] != out_types[1]:
        raise ctx.error(f"the branches yield different types {[str(t) for t in out_types[0]]} and "
                        f"{[str(t) for t in out_types[1]]}; not supported (TOSA needs one static type per output)")
    op = CondIfOp.make(outer, cond, regions[0], regions[1])
    _insert(ctx, op)
    return list(op.results)


# ------------------------------------------------------------------------------------------------
# Loop


@lowering("Loop")
def Loop(ctx: NodeContext) -> Result:
    """Loop → WHILE_LOOP (see the module docstring)."""
    from nnkiln.dialects.tosa.ops_comparison import GreaterOp
    from nnkiln.dialects.tosa.ops_control_flow import WhileLoopOp
    from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp, LogicalAndOp

    body = ctx.attr("body")
    if body is None:
        raise ctx.error("the body graph is required")
    n_carried = len(ctx.node.input) - 2
    if len(body.input) != n_carried + 2:
        raise ctx.error(f"the body has {len(body.input)} inputs, expected {n_carried + 2}")
    n_scan = len(body.output) - 1 - n_carried
    if n_scan > 0:
        raise ctx.error(f"scan outputs ({n_scan}) are not supported (their shape grows per iteration)")
    g = ctx.g
    i32, b1 = element_type(Kind.I32), element_type(Kind.BOOL)

    def scalar_i32(v: int) -> SSAValue:
        return g.const(np.array(v, np.int32), TensorType(i32, []))

    # trip count
    trip: SSAValue | None = None
    if ctx.has_input(0):
        mv = ctx.input(0)
        if mv.is_const:
            m = int(np.asarray(mv.const).reshape(-1)[0])
            if m < (1 << 31):
                trip = scalar_i32(max(m, 0))
        else:
            trip = _one_value(ctx, ctx.tensor(0), "the trip count")
    cond0: SSAValue
    has_cond = ctx.has_input(1)
    if has_cond:
        cv = ctx.input(1)
        if cv.is_const:
            cond0 = g.const(np.array(bool(np.asarray(cv.const).reshape(-1)[0])), TensorType(b1, []))
        else:
            cond0 = _one_value(ctx, ctx.tensor(1), "the condition")
    else:
        cond0 = g.const(np.array(True), TensorType(b1, []))
    if trip is None and not has_cond:
        raise ctx.error("a Loop without trip count and condition never ends; not supported")
    carried = [ctx.tensor(2 + i) for i in range(n_carried)]
    exclude = {i.name for i in body.input}
    names, outer = _captures(ctx, [body], exclude)
    state: list[SSAValue] = [scalar_i32(0), cond0] + ([trip] if trip is not None else []) + carried + outer
    types = [v.type for v in state]
    k0 = 3 if trip is not None else 2

    # cond graph
    with _scope(ctx, types) as block:
        a = block.args
        c = a[1]
        if trip is not None:
            more = g.value(GreaterOp, [a[2], a[0]], b1)
            c = g.value(LogicalAndOp, [c, more], b1)
        _yield(ctx, [c])
    cond_region = Region(block)

    # body graph
    with _scope(ctx, types) as block:
        a = block.args
        imp = ctx.importer
        imp.values[body.input[0].name] = TensorValue.of(a[0])
        imp.values[body.input[1].name] = TensorValue.of(a[1])
        for i in range(n_carried):
            imp.values[body.input[2 + i].name] = TensorValue.of(a[k0 + i])
        for n, arg in zip(names, a[k0 + n_carried:]):
            imp.values[n] = TensorValue.of(arg)
        outs = _lower_graph_body(ctx, body)
        cond_out = _one_value(ctx, imp.materialize(outs[0]), "the condition")
        new_vals = [imp.materialize(o) for o in outs[1:1 + n_carried]]
        for i, (nv, old) in enumerate(zip(new_vals, carried)):
            if nv.type != old.type:
                raise ctx.error(f"loop-carried value {i} changes type from {old.type} to {nv.type}; not supported "
                                "(WHILE_LOOP needs static loop-carried types)")
        nxt = g.value(AddOp, [a[0], g.const(np.array(1, np.int32), TensorType(i32, []))], i32)
        _yield(ctx, [nxt, cond_out] + ([a[2]] if trip is not None else []) + new_vals + list(a[k0 + n_carried:]))
    body_region = Region(block)
    op = WhileLoopOp.make(state, cond_region, body_region)
    _insert(ctx, op)
    return list(op.results[k0:k0 + n_carried])


def _axes(ctx: NodeContext, name: str, count: int, ranks: Sequence[int]) -> list[int]:
    """The ``scan_*_axes`` / ``scan_*_directions`` attribute (default all 0), negative axes normalised."""
    vals = [int(v) for v in (ctx.attr(name, None) or [0] * count)]
    if len(vals) != count:
        raise ctx.error(f"{name} has {len(vals)} entries for {count} scan tensors")
    if name.endswith("axes"):
        for j, (a, r) in enumerate(zip(vals, ranks)):
            if not -r <= a < r:
                raise ctx.error(f"{name}[{j}] = {a} is out of range for rank {r}")
        vals = [a % r for a, r in zip(vals, ranks)]
    elif any(v not in (0, 1) for v in vals):
        raise ctx.error(f"{name} must be 0 (forward) or 1 (reverse), got {vals}")
    return vals


def _reverse(ctx: NodeContext, v: SSAValue, axis: int) -> SSAValue:
    from nnkiln.dialects.tosa.ops_data_layout import ReverseOp

    return ctx.g.value(ReverseOp, [v], element_type(kind_of_value(v)), axis=axis)


@lowering("Scan")
def Scan(ctx: NodeContext) -> Result:
    """Scan → WHILE_LOOP with GATHER/SCATTER at the iteration index (see the module docstring)."""
    from nnkiln.dialects.tosa.ops_comparison import GreaterOp
    from nnkiln.dialects.tosa.ops_control_flow import WhileLoopOp
    from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp
    from nnkiln.dialects.tosa.ops_scatter_gather import GatherOp, ScatterOp
    from nnkiln.frontends.common.layout import transpose

    if ctx.opset < 9:
        raise ctx.error("the opset-8 form of Scan (batch axis, sequence_lens) is not supported")
    body = ctx.attr("body")
    m = int(ctx.attr("num_scan_inputs", 0))
    if body is None or m < 1:
        raise ctx.error("the body graph and num_scan_inputs >= 1 are required")
    n = len(ctx.node.input) - m
    k = len(body.output) - n
    if n < 0 or len(body.input) != n + m or k < 0:
        raise ctx.error(f"the body has {len(body.input)} inputs and {len(body.output)} outputs for {n} state and "
                        f"{m} scan inputs")
    g = ctx.g
    i32 = element_type(Kind.I32)
    states = [ctx.tensor(i) for i in range(n)]
    scans = [ctx.tensor(n + j) for j in range(m)]
    in_axes = _axes(ctx, "scan_input_axes", m, [len(shape_of(v)) for v in scans])
    in_dirs = _axes(ctx, "scan_input_directions", m, [])
    lengths = {shape_of(v)[a] for v, a in zip(scans, in_axes)}
    if len(lengths) != 1:
        raise ctx.error(f"the scan inputs have different lengths {sorted(lengths)} along their scan axes")
    t = lengths.pop()
    for v in states + scans:
        if kind_of_value(v) not in _GATHER_KINDS:
            raise ctx.error(f"{kind_of_value(v).value} scan tensors are not supported (GATHER/SCATTER take int8, "
                            "int16, int32 and float)")

    def to_rows(v: SSAValue, axis: int, reverse: bool) -> SSAValue:
        rank = len(shape_of(v))
        if axis:
            v = transpose(g, v, [axis] + [d for d in range(rank) if d != axis])
        if reverse:
            v = _reverse(ctx, v, 0)
        return reshape(g, v, [1, t, int(np.prod(shape_of(v)[1:], dtype=np.int64))])

    rows = [to_rows(v, a, bool(d)) for v, a, d in zip(scans, in_axes, in_dirs)]
    slice_shapes = [[d for i, d in enumerate(shape_of(v)) if i != a] for v, a in zip(scans, in_axes)]
    exclude = {i.name for i in body.input}
    names, outer = _captures(ctx, [body], exclude)

    def scalar_i32(v: int) -> SSAValue:
        return g.const(np.array(v, np.int32), TensorType(i32, []))

    # The body is lowered once first, into a block that is then dropped, to learn the scan outputs'
    # slice types (they size the buffers); node numbering restarts for the real lowering.
    first_index = ctx.importer.node_index
    with _scope(ctx, [v.type for v in states] + [TensorType(s.element_type, sh) for s, sh in
                                                  zip((v.type for v in scans), slice_shapes)] + [v.type for v in outer]):
        a = ctx.g.builder.insertion_point.block.args
        for i, inp in enumerate(body.input):
            ctx.importer.values[inp.name] = TensorValue.of(a[i])
        for nm, arg in zip(names, a[n + m:]):
            ctx.importer.values[nm] = TensorValue.of(arg)
        probe = [ctx.importer.materialize(o) for o in _lower_graph_body(ctx, body)]
        out_types = [v.type for v in probe[n:]]
    ctx.importer.node_index = first_index
    bufs = []
    for ot in out_types:
        kind = kind_of(ot)
        if kind not in _GATHER_KINDS:
            raise ctx.error(f"{kind.value} scan outputs are not supported (SCATTER takes int8, int16, int32 and float)")
        c = int(np.prod(ot.get_shape(), dtype=np.int64))
        bufs.append(g.const(np.zeros((1, t, c), dtype_of(ot.element_type)), TensorType(ot.element_type, [1, t, c])))
    state0 = [scalar_i32(0), *states, *rows, *bufs, *outer]
    types = [v.type for v in state0]
    ks, kr, kb, ko = 1, 1 + n, 1 + n + m, 1 + n + m + k

    with _scope(ctx, types) as block:
        _yield(ctx, [g.value(GreaterOp, [scalar_i32(t), block.args[0]], element_type(Kind.BOOL))])
    cond_region = Region(block)

    with _scope(ctx, types) as block:
        a = block.args
        imp = ctx.importer
        idx = reshape(g, a[0], [1, 1])
        for i in range(n):
            imp.values[body.input[i].name] = TensorValue.of(a[ks + i])
        for j in range(m):
            row = g.value(GatherOp, [a[kr + j], idx], rows[j].type.element_type)
            imp.values[body.input[n + j].name] = TensorValue.of(reshape(g, row, slice_shapes[j]))
        for nm, arg in zip(names, a[ko:]):
            imp.values[nm] = TensorValue.of(arg)
        outs = [imp.materialize(o) for o in _lower_graph_body(ctx, body)]
        for i, (nv, old) in enumerate(zip(outs[:n], states)):
            if nv.type != old.type:
                raise ctx.error(f"state {i} changes type from {old.type} to {nv.type}; not supported")
        new_bufs = []
        for j in range(k):
            if outs[n + j].type != out_types[j]:
                raise ctx.error(f"scan output {j} changes type from {out_types[j]} to {outs[n + j].type}")
            piece = reshape(g, outs[n + j], [1, 1, bufs[j].type.get_shape()[2]])
            new_bufs.append(g.value(ScatterOp, [a[kb + j], idx, piece], bufs[j].type.element_type))
        nxt = g.value(AddOp, [a[0], scalar_i32(1)], i32)
        _yield(ctx, [nxt, *outs[:n], *a[kr:kb], *new_bufs, *a[ko:]])
    body_region = Region(block)
    op = WhileLoopOp.make(state0, cond_region, body_region)
    _insert(ctx, op)

    out_axes = _axes(ctx, "scan_output_axes", k, [len(ot.get_shape()) + 1 for ot in out_types])
    out_dirs = _axes(ctx, "scan_output_directions", k, [])
    results = list(op.results[ks:ks + n])
    for j, ot in enumerate(out_types):
        v = reshape(g, op.results[kb + j], [t, *ot.get_shape()])
        if out_dirs[j]:
            v = _reverse(ctx, v, 0)
        if out_axes[j]:
            rank = len(ot.get_shape()) + 1
            perm = list(range(1, rank))
            perm.insert(out_axes[j], 0)
            v = transpose(g, v, perm)
        results.append(v)
    return results
