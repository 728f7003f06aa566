"""Reference kernels of COND_IF and WHILE_LOOP (spec §2.16).

Regions are run by the interpreter (``KernelCall.run_region``): COND_IF's region 0 is ``then_graph``
and region 1 ``else_graph``; WHILE_LOOP's region 0 is ``cond_graph`` and region 1 ``body_graph``.
Each region receives the input list as block arguments (a region without block arguments uses the
enclosing values directly) and yields its output list.

Decision: WHILE_LOOP has no iteration limit, as in the spec: a loop whose condition never becomes
false does not terminate (interrupt it from outside, e.g. with Ctrl-C).
"""

from __future__ import annotations

import numpy as np

from nnkiln.errors import NotExecutableError
from nnkiln.reference.registry import KernelCall, kernel


def _truth(call: KernelCall, value: np.ndarray) -> bool:
    arr = np.asarray(value)
    if arr.size != 1:
        raise NotExecutableError(f"'{call.name}': the condition has {arr.size} elements; it must be one bool")
    return bool(arr.reshape(-1)[0])


def _need_regions(call: KernelCall) -> None:
    if call.run_region is None:
        raise NotExecutableError(f"'{call.name}' needs the interpreter to run its regions")


@kernel("tosa.cond_if")
def cond_if(call: KernelCall) -> list[np.ndarray]:
    """COND_IF (§2.16.1): run ``then_graph`` if ``condition`` else ``else_graph`` on the input list."""
    _need_regions(call)
    assert call.run_region is not None
    # Operands are ``input_list`` then ``condition`` (spec argument order, see ops_control_flow).
    input_list = getattr(call.op, "input_list", None)
    count = len(input_list) if input_list is not None else len(call.inputs) - 1
    inputs, condition = call.inputs[:count], call.inputs[count]
    branch = 0 if _truth(call, condition) else 1
    return [np.asarray(v) for v in call.run_region(branch, inputs)]


@kernel("tosa.while_loop")
def while_loop(call: KernelCall) -> list[np.ndarray]:
    """WHILE_LOOP (§2.16.2): ``while cond_graph(list): list = body_graph(list)``; output the last list."""
    _need_regions(call)
    assert call.run_region is not None
    values = list(call.inputs)
    call.inputs = []  # let the loop drop superseded lists
    while True:
        (condition,) = call.run_region(0, values)[:1]
        if not _truth(call, condition):
            return [np.asarray(v) for v in values]
        values = list(call.run_region(1, values))
