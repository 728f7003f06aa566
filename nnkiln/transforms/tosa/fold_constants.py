"""``fold-constants``: evaluate ``tosa`` ops whose operands are all constants.

What: an op whose every operand comes from ``tosa.const`` is replaced by a ``tosa.const`` holding
its result, computed by the reference interpreter's kernel for that op, so folding has exactly the
spec's semantics (bit-exact for integers). Ops with regions, ``tosa.custom`` and results larger
than ``max-elements`` are left alone; an op whose evaluation hits a REQUIRE failure
(``tosa_unpredictable``) is left unfolded, so the run-time behaviour is unchanged.

Why: importers produce constant subgraphs (weight reshapes/transposes, shape arithmetic).

Legal before: verified ``tosa`` IR. After: the same, with fewer ops; dead constants are not removed
(run ``dce``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from nnkiln.ir.elements import from_numpy, to_numpy
from nnkiln.ir.errors import NotExecutableError, TosaUnpredictable

_NEVER = {"tosa.const", "tosa.custom", "tosa.cond_if", "tosa.while_loop", "tosa.yield"}


@dataclass(frozen=True)
class FoldConstants(ModulePass):
    """Replace all-constant ``tosa`` ops by ``tosa.const`` with the reference result."""

    name = "fold-constants"
    max_elements: int = 1 << 24

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from nnkiln.dialects.tosa.ops_data_nodes import ConstOp
        from nnkiln.reference.registry import KERNELS, load_kernels, make_call

        load_kernels()
        for inner in list(op.walk()):
            if not self._foldable(inner, KERNELS):
                continue
            # Read-only zero-copy views of the constants (a reshape then folds without copying any
            # weight); a kernel that writes into its inputs gets private copies instead.
            views = [to_numpy(o.owner.values) for o in inner.operands]  # type: ignore[union-attr]
            try:
                try:
                    outputs = KERNELS[inner.name](make_call(inner, views))
                except ValueError:
                    outputs = KERNELS[inner.name](make_call(inner, [np.array(v) for v in views]))
            except (TosaUnpredictable, NotExecutableError):
                continue
            consts = [
                ConstOp.create(properties={"values": from_numpy(np.asarray(out), res.type)}, result_types=[res.type])
                for out, res in zip(outputs, inner.results)
            ]
            Rewriter.replace_op(inner, consts, [c.results[0] for c in consts])

    def _foldable(self, inner: Operation, kernels: dict) -> bool:
        if not inner.name.startswith("tosa.") or inner.name in _NEVER or inner.regions or inner.name not in kernels:
            return False
        if not inner.operands or any(getattr(o.owner, "name", "") != "tosa.const" for o in inner.operands):
            return False
        for res in inner.results:
            if not isinstance(res.type, TensorType):
                return False
            if int(np.prod(res.type.get_shape(), dtype=np.int64)) > self.max_elements:
                return False
        return True
