"""Control flow for the compiler pipeline: each region of ``tosa.cond_if`` / ``tosa.while_loop`` becomes a
program of its own (a nested blob), called by one runtime task.

Used by ``tosa-to-buf``. A region (isolated from above, as TOSA's graphs are: everything it reads is a block
argument or defined inside) is outlined into a tosa-level module ``@main(block args...)`` returning what its
``tosa.yield`` yields. The module is compiled here by a nested pass pipeline (``program_bytes``): the passes are
the ones ``tosa-to-buf`` was given by ``nnkiln.pipelines`` (the enclosing pipeline for the same target on one
executor queue, whose own ``tosa-to-buf`` makes nested control flow nested programs), with no thread count of
their own (the runtime gives a program the thread count of the program that loads it). The rt-level result is
encoded by ``nnkiln.conversion.rt_to_blob`` (``nnkiln.blob.writer``) with the metadata ``nnkiln.compile`` writes
(target, pipeline, compile time), and the blob bytes are a constant operand of the task. Nothing here imports the
compiler API or the pipelines, and nothing chooses a target.

Task operands (``ins``), in order:

- ``tosa.cond_if``: ``then`` blob, ``else`` blob, condition, input list;
- ``tosa.while_loop``: ``cond`` blob, ``body`` blob, input list.

The runtime (``nnkiln.runtime.kernels.control``) validates the nested blobs when it loads the parent; the kernel
names are the blob format's ``CONTROL_FLOW_KERNELS``.
Decision: a COND_IF region may have no block arguments (its program then takes no inputs); WHILE_LOOP regions
must take the loop-carried list.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from nnkiln.conversion.rt_to_blob import write_blob
from nnkiln.errors import NotExecutableError
from nnkiln.ir.passes import PassManager
from nnkiln.ir.verify import verify_module

ProgramCompiler = Callable[[ModuleOp], np.ndarray]
"""A tosa-level module ``@main`` → the bytes of its compiled blob (an int8 array)."""


def region_module(region: Region) -> ModuleOp:
    """A module whose ``@main`` runs ``region`` on its block arguments and returns what it yields."""
    src = region.block
    block = Block(arg_types=list(src.arg_types))
    mapping: dict[SSAValue, SSAValue] = dict(zip(src.args, block.args))
    result_types: list = []
    for inner in src.ops:
        if inner.name == "tosa.yield":
            yielded = [mapping.get(v, v) for v in inner.operands]
            result_types = [v.type for v in yielded]
            block.add_op(ReturnOp(*yielded))
            break
        block.add_op(inner.clone(value_mapper=mapping))
    func = FuncOp("main", FunctionType.from_lists(list(block.arg_types), result_types), Region(block))
    return ModuleOp([func])


def program_bytes(module: ModuleOp, passes: Sequence[ModulePass], ctx: Context, *, target: str,
                  pipeline: str) -> np.ndarray:
    """``module`` (verified first) lowered to the rt level in place by ``passes`` (verified after each), encoded as
    a blob whose metadata names ``target`` and ``pipeline``: its bytes as an int8 array."""
    verify_module(module)
    PassManager(passes).run(module, ctx)
    raw = write_blob(module, target=target, pipeline=pipeline)  # no compile time: deterministic bytes
    return np.frombuffer(raw, np.int8)


def outline(op: Operation, compile_program: ProgramCompiler) -> tuple[list[np.ndarray], list[SSAValue]]:
    """The programs of ``op``'s regions (blob bytes, compiled by ``compile_program``) and the value operands of its
    task (see the module docstring for their order)."""
    inputs = list(op.input_list)  # type: ignore[attr-defined]
    programs = []
    for region in op.regions:
        nargs = len(region.block.args)
        if nargs not in (0, len(inputs)) or (nargs == 0 and op.name == "tosa.while_loop"):
            raise NotExecutableError(f"'{op.name}': a region takes {nargs} block arguments for {len(inputs)} "
                                     "inputs; it must take the input list")
        programs.append(compile_program(region_module(region)))
    operands = ([op.condition] if op.name == "tosa.cond_if" else []) + inputs  # type: ignore[attr-defined]
    return programs, operands


def takes_input_list(op: Operation) -> list[bool]:
    """Per region: whether its program takes the input list (a COND_IF region may take nothing)."""
    return [len(r.block.args) > 0 for r in op.regions]


__all__ = ["ProgramCompiler", "outline", "program_bytes", "region_module", "takes_input_list"]
