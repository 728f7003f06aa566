"""Control flow for the compiler pipeline: each region of ``tosa.cond_if`` / ``tosa.while_loop`` becomes a
program of its own (a nested blob), called by one runtime task.

Used by ``tosa-to-buf``. A region (isolated from above, as TOSA's graphs are: everything it reads is a block
argument or defined inside) is outlined into a tosa-level module ``@main(block args...)`` returning what its
``tosa.yield`` yields. The module is compiled by the same pipeline for the ``cpu`` target on one executor queue
(``nnkiln.compile`` recursion: nested control flow becomes nested programs) with no thread count of its own (the
runtime gives it the thread count of the program that loads it), and the blob bytes are a constant operand of
the task.

Task operands (``ins``), in order:

- ``tosa.cond_if``: ``then`` blob, ``else`` blob, condition, input list;
- ``tosa.while_loop``: ``cond`` blob, ``body`` blob, input list.

The runtime (``nnkiln.runtime.kernels.control``) validates the nested blobs when it loads the parent.
Decision: a COND_IF region may have no block arguments (its program then takes no inputs); WHILE_LOOP regions
must take the loop-carried list.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Operation, Region, SSAValue

from nnkiln.errors import NotExecutableError

CONTROL_FLOW = ("tosa.cond_if", "tosa.while_loop")


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


def program_bytes(module: ModuleOp, pipeline: str) -> np.ndarray:
    """``module`` compiled for the cpu target on one queue, as an int8 array (the blob bytes)."""
    from nnkiln.compiler import compile_to_blob

    _, raw = compile_to_blob(module, "cpu", pipeline, queues=1)
    return np.frombuffer(raw, np.int8)


def outline(op: Operation, pipeline: str) -> tuple[list[np.ndarray], list[SSAValue]]:
    """The programs of ``op``'s regions (blob bytes) and the value operands of its task (see the module
    docstring for their order)."""
    inputs = list(op.input_list)  # type: ignore[attr-defined]
    programs = []
    for region in op.regions:
        nargs = len(region.block.args)
        if nargs not in (0, len(inputs)) or (nargs == 0 and op.name == "tosa.while_loop"):
            raise NotExecutableError(f"'{op.name}': a region takes {nargs} block arguments for {len(inputs)} "
                                     "inputs; it must take the input list")
        programs.append(program_bytes(region_module(region), pipeline))
    operands = ([op.condition] if op.name == "tosa.cond_if" else []) + inputs  # type: ignore[attr-defined]
    return programs, operands


def takes_input_list(op: Operation) -> list[bool]:
    """Per region: whether its program takes the input list (a COND_IF region may take nothing)."""
    return [len(r.block.args) > 0 for r in op.regions]


__all__ = ["CONTROL_FLOW", "outline", "region_module", "takes_input_list"]
