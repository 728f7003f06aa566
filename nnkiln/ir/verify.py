"""Module verification that names the failing op and rule.

xDSL's ``Operation.verify`` attaches the whole printed module to an error; this walker verifies one
op at a time (innermost first) so the error it raises is short: the op name, where the op is (its
function and result name) and the broken rule with its values.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from nnkiln.ir.errors import VerifyError


def describe_op(op: Operation) -> str:
    """Where an op is: ``@main, op #3 (%conv)``: its function, its index in its block, its result name."""
    func = op
    while func.parent_op() is not None and not hasattr(func, "sym_name"):
        func = func.parent_op()  # type: ignore[assignment]
    where = f"@{func.sym_name.data}" if hasattr(func, "sym_name") else ""  # type: ignore[attr-defined]
    from nnkiln.ir.diagnostics import op_source

    text = f"op #{_index(op)}"
    if op.results and op.results[0].name_hint:
        text += f" (%{op.results[0].name_hint})"
    src = op_source(op)
    if src:
        text += f" from {src}"
    return f"{where}, {text}" if where else text


def _index(op: Operation) -> int:
    block = op.parent_block()
    if block is None:
        return 0
    for i, o in enumerate(block.ops):
        if o is op:
            return i
    return 0


def verify_op(op: Operation) -> None:
    """Verify ``op`` and everything nested in it; raise ``VerifyError`` naming the first failing op."""
    for inner in op.walk(reverse=False, region_first=True):
        try:
            inner.verify(verify_nested_ops=False)
        except VerifyError as err:
            err.op_name = err.op_name or inner.name
            err.location = err.location or describe_op(inner)
            if hasattr(err, "__notes__"):
                del err.__notes__
            raise
        except (VerifyException, DiagnosticException) as err:
            message = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            raise VerifyError(message, op_name=inner.name, rule="op definition", location=describe_op(inner)) from None


def verify_module(module: ModuleOp) -> None:
    """Verify a whole module (see ``verify_op``)."""
    verify_op(module)
