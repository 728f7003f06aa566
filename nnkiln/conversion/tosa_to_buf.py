"""``tosa-to-buf``: bufferization, L3 ``tosa`` tensors → L2 ``buf`` memrefs (architecture spec §3.2).

What:
- ``tosa.const`` / ``const.declare`` → ``buf.const`` (the numpy data, lazy transformations applied).
- ``tosa.reshape`` → ``buf.reshape`` (a view: same bytes); ``tosa.identity`` → an alias (no op).
- with the option ``views`` (the default): ``tosa.slice`` of one contiguous byte range (the dimensions before
  the first partial one have extent 1, those after it are whole) of an input or computed buffer →
  ``buf.subview`` (a view, no copy); ``tosa.concat`` along an axis with only extent-1 dimensions before it
  (each input is one contiguous range of the result) → the result buffer is allocated first; an input that
  is a kernel result used only there is written by its kernel straight into its ``buf.subview`` of the
  result, any other is copied there (``buf.copy``); ``buf.concat_view`` then orders those writes before the
  result's uses. ``views=false`` (the reference pipeline): SLICE and CONCAT are kernels like any op.
- every other tosa op → ``buf.alloc`` per result + ``buf.kernel "<op name>" ins(operands) outs(allocs)``;
  ``attrs`` = the op's properties unchanged, plus the defaults of absent optional properties (so a
  kernel gets exactly the ``attr_values()`` the reference interpreter uses).
- Function signature: ``@main(%in0, ..., %out0, ...)`` with memref arguments, inputs first, then one
  output buffer per result; ``arg_attrs`` carry ``nnkiln.name`` (the reference interpreter's
  input/output names) and ``nnkiln.io = "input" | "output"``; no results.
- Outputs are written in place where possible: the kernel producing a network output gets the
  output argument as its ``outs`` (through a ``buf.reshape`` of the output argument when the output
  is a reshape of the kernel's result). An output that is an input, a constant, a view of either,
  or a value already written into another output gets an explicit ``buf.copy`` into its buffer.
- ``tosa.cond_if``, ``tosa.while_loop`` (the blob format's ``CONTROL_FLOW_KERNELS``): each region becomes a
  program of its own (``regions_to_programs``), compiled by a nested pass pipeline: the passes
  ``region_passes(region_pipeline, target)`` returns (``nnkiln.pipelines`` sets that callable; a textual
  pipeline's ``tosa-to-buf`` gets it too). The op becomes one ``buf.kernel`` whose first operands are the
  programs' blob bytes (``buf.const`` of i8) and whose ``attrs`` are ``num_inputs`` (the input list's length)
  and ``region_inputs`` (per region, 1 if its program takes the input list).
- ``tosa.custom``: a ``buf.kernel "tosa.custom"`` like any op; the runtime looks its ``identifier`` up in
  its custom-kernel registry (``nnkiln.runtime.register_custom``).

Why: the lower levels reason about buffers (placement, hazards), not values.
Legal before: verified tosa IR, functions with tensor arguments/results. After: buf IR; no tensors.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import ArgSpec

from nnkiln.blob.format import CONTROL_FLOW_KERNELS
from nnkiln.conversion.regions_to_programs import ProgramCompiler, outline, program_bytes, takes_input_list
from nnkiln.dialects.buf import (
    AllocOp,
    ConcatViewOp,
    ConstOp,
    CopyOp,
    KernelOp,
    ReshapeOp,
    SubviewOp,
    base_buffer,
    contiguous_box,
)
from nnkiln.errors import NotExecutableError, PassError

_ALIASES = ("tosa.identity",)
_VIEWS = ("tosa.reshape",)


class UnsupportedOpError(NotExecutableError):
    """A valid tosa op the compiler pipeline cannot lower yet (the reference interpreter can run it)."""


_MEMREFS: dict[Attribute, MemRefType] = {}


def memref_of(t: Attribute) -> MemRefType:
    """The memref type of tensor type ``t`` (memoized: building an xDSL type is slow, types are values)."""
    m = _MEMREFS.get(t)
    if m is None:
        assert isinstance(t, TensorType), t
        m = MemRefType(t.element_type, t.shape)
        if len(_MEMREFS) >= 4096:
            _MEMREFS.clear()
        _MEMREFS[t] = m
    return m


def kernel_attrs(op: Operation) -> DictionaryAttr:
    """The op's properties plus the defaults of its absent optional properties."""
    props: dict[str, Attribute] = {}
    defn = getattr(type(op), "get_irdl_definition", None)
    if defn is not None:
        for name, pdef in defn().properties.items():
            default = getattr(pdef, "default_value", None)
            if default is not None:
                props[name] = default
    props.update(op.properties)
    return DictionaryAttr(props)


def _const_values(op: Operation):
    from nnkiln.ir.elements import from_numpy, storage_type

    if op.name == "tosa.const":
        return op.values  # type: ignore[attr-defined]
    t = op.results[0].type
    return from_numpy(op.read(), TensorType(storage_type(t.element_type), t.get_shape()))  # type: ignore[attr-defined]


def _destinations(func: FuncOp, out_args: list[SSAValue]) -> dict[SSAValue, tuple[SSAValue, list[int] | None]]:
    """Tensor value → (output argument, shape of a reshape view of it or None) for values written in place."""
    ret = func.body.block.last_op
    dest: dict[SSAValue, tuple[SSAValue, list[int] | None]] = {}
    for i, v in enumerate(ret.operands):  # type: ignore[union-attr]
        if v not in dest:
            dest[v] = (out_args[i], None)
    # propagate backwards through single-use reshapes/identities
    for op in reversed(list(func.body.block.ops)):
        if op.name in _VIEWS + _ALIASES and op.results[0] in dest:
            src = op.operands[0]
            if src not in dest and src.has_one_use() and isinstance(src.owner, Operation):
                arg, _ = dest[op.results[0]]
                dest[src] = (arg, list(src.type.get_shape()))  # type: ignore[attr-defined]
    return dest


def _contiguous_slice(op: Operation) -> bool:
    """A SLICE whose box is one contiguous byte range of its input (a ``buf.subview``)."""
    return contiguous_box(op.operands[0].type.get_shape(), op.properties["start"].get_values(),  # type: ignore[attr-defined]
                          op.properties["size"].get_values())  # type: ignore[attr-defined]


def _view_concats(func: FuncOp, dest: dict[SSAValue, tuple[SSAValue, list[int] | None]]
                  ) -> dict[SSAValue, tuple[Operation, int]]:
    """Kernel results written straight into their slot of a CONCAT → (the concat, operand index)."""
    slots: dict[SSAValue, tuple[Operation, int]] = {}
    for op in func.body.block.ops:
        if op.name != "tosa.concat":
            continue
        if not all(contiguous_box(op.results[0].type.get_shape(), *_slot_offsets(op, i))  # type: ignore[attr-defined]
                   for i in range(len(op.operands))):
            continue
        for i, v in enumerate(op.operands):
            owner = v.owner
            if (isinstance(owner, Operation) and owner.name.startswith("tosa.") and owner.name not in _NO_SLOT
                    and v.has_one_use() and v not in dest):
                slots[v] = (op, i)
    return slots


_NO_SLOT = frozenset({"tosa.const", "tosa.concat", "tosa.slice", *CONTROL_FLOW_KERNELS, *_VIEWS, *_ALIASES})
"""Producers that do not write a buffer of their own here (views, aliases, constants, nested concats)
or whose kernels take no view outputs (control flow)."""


def _slot_offsets(cat: Operation, index: int) -> tuple[list[int], list[int]]:
    axis = int(cat.properties["axis"].value.data)  # type: ignore[attr-defined]
    shape = list(cat.results[0].type.get_shape())  # type: ignore[attr-defined]
    offsets = [0] * len(shape)
    offsets[axis] = sum(v.type.get_shape()[axis] for v in cat.operands[:index])  # type: ignore[attr-defined]
    sizes = list(cat.operands[index].type.get_shape())  # type: ignore[attr-defined]
    return offsets, sizes


def _program_const(data) -> ConstOp:  # noqa: ANN001
    from nnkiln.ir.elements import from_numpy

    t = TensorType(IntegerType(8), [data.size])
    return ConstOp(from_numpy(data, t), memref_of(t))


def convert_function(func: FuncOp, views: bool, compile_program: ProgramCompiler) -> FuncOp:
    """The bufferized ``func`` (see the module docstring); ``compile_program`` compiles the programs of control-flow
    regions."""
    from nnkiln.reference.interpreter import DTYPE_ATTR, declared_dtypes, input_names, output_names

    old = func.body.block
    in_types = [memref_of(a.type) for a in old.args]
    out_types = [memref_of(t) for t in func.function_type.outputs.data]
    block = Block(arg_types=in_types + out_types)
    in_args, out_args = list(block.args[: len(in_types)]), list(block.args[len(in_types):])
    for i, a in enumerate(out_args):
        a.name_hint = f"out{i}"
    for a, o in zip(in_args, old.args):
        if o.name_hint:
            a.name_hint = o.name_hint
    names = input_names(func) + output_names(func)
    dtypes = [None] * len(in_args) + declared_dtypes(func)
    arg_attrs = [DictionaryAttr({"nnkiln.name": StringAttr(n), "nnkiln.io": StringAttr(io),
                                 **({DTYPE_ATTR: StringAttr(d)} if d else {})})
                 for n, io, d in zip(names, ["input"] * len(in_args) + ["output"] * len(out_args), dtypes)]
    dest = _destinations(func, out_args)
    env: dict[SSAValue, SSAValue] = dict(zip(old.args, in_args))
    claimed: set[SSAValue] = set()  # output arguments some kernel writes
    slots = _view_concats(func, dest) if views else {}
    concat_buffers: dict[Operation, SSAValue] = {}

    def add(op: Operation) -> Operation:
        block.add_op(op)
        return op

    def result_buffers(op: Operation) -> list[SSAValue]:
        """Where ``op``'s results go: the output argument (or a reshape view of it) when the result is a
        network output not yet claimed, else a new ``buf.alloc``."""
        outs = []
        for r in op.results:
            t = memref_of(r.type)
            target = dest.get(r)
            if r in slots:
                cat, index = slots[r]
                offsets, sizes = _slot_offsets(cat, index)
                outs.append(add(SubviewOp(concat_buffer(cat), offsets, sizes, t)).results[0])
            elif target is not None and target[0] not in claimed:
                claimed.add(target[0])
                arg, shape = target
                outs.append(arg if shape is None else add(ReshapeOp(arg, t)).results[0])
            else:
                outs.append(add(AllocOp(t)).results[0])
        return outs

    def concat_buffer(cat: Operation) -> SSAValue:
        if cat not in concat_buffers:
            concat_buffers[cat] = result_buffers(cat)[0]
        return concat_buffers[cat]

    def convert_concat(op: Operation) -> None:
        buf = concat_buffer(op)
        ins = []
        for i, v in enumerate(op.operands):
            if slots.get(v) == (op, i):
                ins.append(env[v])
                continue
            offsets, sizes = _slot_offsets(op, i)
            view = add(SubviewOp(buf, offsets, sizes, memref_of(v.type))).results[0]
            ins.append(add(CopyOp(env[v], view)).results[0])
        view_op = add(ConcatViewOp.build(operands=[ins, [buf]], result_types=[[buf.type]]))
        env[op.results[0]] = view_op.results[0]

    viewed_concats = {cat for cat, _ in slots.values()}
    for op in old.ops:
        if isinstance(op, ReturnOp):
            for i, v in enumerate(op.operands):
                if env[v] is not out_args[i] and not _is_view_of(env[v], out_args[i]):
                    add(CopyOp(env[v], out_args[i]))
            add(ReturnOp())
        elif op.name == "tosa.const" or op.name == "const.declare":
            env[op.results[0]] = add(ConstOp(_const_values(op), memref_of(op.results[0].type))).results[0]
        elif op.name in _ALIASES:
            env[op.results[0]] = env[op.operands[0]]
        elif op.name in _VIEWS:
            env[op.results[0]] = add(ReshapeOp(env[op.operands[0]], memref_of(op.results[0].type))).results[0]
        elif op.name == "tosa.slice" and views and _contiguous_slice(op) and not isinstance(
                base_buffer(env[op.operands[0]]).owner, ConstOp):
            src = env[op.operands[0]]
            view = SubviewOp(src, op.properties["start"].get_values(), op.properties["size"].get_values(),  # type: ignore[attr-defined]
                             memref_of(op.results[0].type))
            env[op.results[0]] = add(view).results[0]
        elif op in viewed_concats:
            convert_concat(op)
        elif op.name in CONTROL_FLOW_KERNELS:
            programs, operands = outline(op, compile_program)
            blobs = [add(_program_const(p)).results[0] for p in programs]
            attrs = DictionaryAttr({
                "num_inputs": IntegerAttr(len(op.input_list), 64),  # type: ignore[attr-defined]
                "region_inputs": DenseArrayBase.from_list(i64, [int(b) for b in takes_input_list(op)])})
            kernel = add(KernelOp(op.name, blobs + [env[o] for o in operands], result_buffers(op), attrs))
            for r, k in zip(op.results, kernel.results):
                env[r] = k
        elif op.name.startswith("tosa."):
            kernel = add(KernelOp(op.name, [env[o] for o in op.operands], result_buffers(op), kernel_attrs(op)))
            kernel.location = op.location  # the source node: the blob's task names it (``nnkiln report``)
            for r, k in zip(op.results, kernel.results):
                env[r] = k
        else:
            raise UnsupportedOpError(f"'{op.name}' is not supported by tosa-to-buf")
    new = FuncOp(func.sym_name.data, (in_types + out_types, []), Region(block),
                 arg_attrs=ArrayAttr(arg_attrs))
    return new


def _is_view_of(value: SSAValue, arg: SSAValue) -> bool:
    """``value`` is ``arg`` seen through views and kernel results (it was written in place)."""
    return base_buffer(value) is arg and isinstance(value.owner, (KernelOp, ReshapeOp, ConcatViewOp))


RegionPasses = Callable[[str, str], Sequence[ModulePass]]
"""``(pipeline name, target name)`` → fresh passes lowering a tosa-level module ``@main`` to the rt level."""


@dataclass(frozen=True)
class TosaToBuf(ModulePass):
    """Bufferize every ``func.func`` of the module (see the module docstring)."""

    name = "tosa-to-buf"
    views: bool = True
    """Lower contiguous SLICEs and CONCATs to views (False: to kernels, as every other op)."""
    target: str = "cpu"
    """The target the programs of control-flow regions are compiled for."""
    region_pipeline: str = "default"
    """The pipeline that compiles the programs of control-flow regions (its name is recorded in their blobs)."""
    region_passes: RegionPasses | None = field(default=None, compare=False, repr=False)
    """Gives the passes of ``region_pipeline`` for ``target`` (on one executor queue). Set by ``nnkiln.pipelines``,
    which lists the conversions (they do not import it); a Python callable, not a command-line option."""

    def spec(self, *, include_default: bool = False) -> ArgSpec:
        """The pass's command-line options (without ``region_passes``)."""
        return ModulePass.spec(replace(self, region_passes=None), include_default=include_default)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func in [f for f in op.body.block.ops if isinstance(f, FuncOp)]:
            if any(isinstance(a.type, TensorType) for a in func.body.block.args) or func.function_type.outputs.data:
                new = convert_function(func, self.views, self._program_compiler(ctx))
                op.body.block.insert_op_before(new, func)
                func.detach()
                func.erase(safe_erase=False)

    def _program_compiler(self, ctx: Context) -> ProgramCompiler:
        """Compiles a region's module by a nested pipeline: fresh passes of ``region_pipeline`` for ``target``."""

        def compile_program(module: ModuleOp) -> np.ndarray:
            if self.region_passes is None:
                raise PassError("tosa-to-buf has no passes for the programs of control-flow regions (region_passes, "
                                "set by nnkiln.pipelines)")
            passes = self.region_passes(self.region_pipeline, self.target)
            return program_bytes(module, passes, ctx, target=self.target, pipeline=self.region_pipeline)

        return compile_program
