"""TOSA 0.30 §2.11 scatter/gather operators: GATHER and SCATTER.

Both use N batches, K positions per batch, W indices per batch and C channels: ``values`` /
``values_in`` are ``[N,K,C]``, ``indices`` ``[N,W]`` of ``int32_t``, the gathered / scattered data
``[N,W,C]``. Shapes that break the argument tables are errors (spec §1.7: an operator whose inputs or
outputs do not meet its Arguments table is a ``tosa_error``). Index ranges (``0 <= k < K``) and
SCATTER's "each output position written at most once" are REQUIRE conditions: run-time
``tosa_unpredictable``, never verifier errors.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.irdl import irdl_op_definition, operand_def, result_def, traits_def
from xdsl.traits import Pure

from nnkiln.dialects.tosa.base import Kind, Profile, Shape, TosaOp, TypeMode, modes, require_shape


def _require_rank(shape: Shape, rank: int, what: str, layout: str) -> None:
    require_shape(len(shape) == rank, f"{what} is {layout}", f"{what} has shape {list(shape)}")


def _nkc_nw(values: Shape, indices: Shape, vname: str) -> tuple[int, int, int, int]:
    """Check ``values [N,K,C]`` and ``indices [N,W]``; return N, K, C, W."""
    _require_rank(values, 3, vname, "[N,K,C]")
    _require_rank(indices, 2, "indices", "[N,W]")
    n, k, c = values
    require_shape(indices[0] == n, f"indices[N] == {vname}[N]",
                  f"indices has N = {indices[0]} but {vname} has N = {n}")
    return n, k, c, indices[1]


_BI_ROWS = (
    ("signed 8", (Kind.I8, Kind.I32, Kind.I8)),
    ("signed 16", (Kind.I16, Kind.I32, Kind.I16)),
    ("signed 32", (Kind.I32, Kind.I32, Kind.I32)),
)
_MI_ROWS = (
    ("fp16", (Kind.F16, Kind.I32, Kind.F16)),
    ("bf16", (Kind.BF16, Kind.I32, Kind.BF16)),
    ("fp32", (Kind.F32, Kind.I32, Kind.F32)),
)


@irdl_op_definition
class GatherOp(TosaOp):
    """GATHER (spec §2.11.1): ``output[n,w,c] = values[n, indices[n,w], c]``.

    Shapes: ``values [N,K,C]``, ``indices [N,W]`` (int32), ``output [N,W,C]``.
    Spec defect (inventory §1.3 #11): the MI row names only "float" as value_t. Decision: fp16, bf16
    and fp32, the float types of SCATTER's table (GATHER is SCATTER's inverse).
    """

    name = "tosa.gather"
    TYPE_SLOTS: ClassVar[tuple[str, ...]] = ("values", "indices", "output")
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = modes(Profile.BI, *_BI_ROWS) + modes(Profile.MI, *_MI_ROWS)
    values = operand_def(TensorType)
    indices = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        n, _k, c, w = _nkc_nw(tuple(shapes[0]), tuple(shapes[1]), "values")
        return [(n, w, c)]


@irdl_op_definition
class ScatterOp(TosaOp):
    """SCATTER (spec §2.11.2): ``values_out`` = ``values_in`` with ``values_out[n, indices[n,w], c] =
    input[n,w,c]``.

    Shapes: ``values_in [N,K,C]``, ``indices [N,W]`` (int32), ``input [N,W,C]``, ``values_out [N,K,C]``.
    Types: BI int8/int16/int32, MI fp16/bf16/fp32 (values_in, input and values_out of one type).
    A repeated index within a batch is a REQUIRE (unpredictable at run time), so it is not checked
    here even when W > K makes a repetition unavoidable.
    """

    name = "tosa.scatter"
    TYPE_SLOTS: ClassVar[tuple[str, ...]] = ("values_in", "indices", "input", "values_out")
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = modes(
        Profile.BI, *((nm, (v, i, v, v)) for nm, (v, i, _o) in _BI_ROWS)
    ) + modes(Profile.MI, *((nm, (v, i, v, v)) for nm, (v, i, _o) in _MI_ROWS))
    values_in = operand_def(TensorType)
    indices = operand_def(TensorType)
    input = operand_def(TensorType)
    values_out = result_def(TensorType)
    traits = traits_def(Pure())

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        n, k, c, w = _nkc_nw(tuple(shapes[0]), tuple(shapes[1]), "values_in")
        inp = tuple(shapes[2])
        require_shape(inp == (n, w, c), "input is [N,W,C]",
                      f"input has shape {list(inp)} but values_in/indices give [N,W,C] = {[n, w, c]}")
        return [(n, k, c)]
