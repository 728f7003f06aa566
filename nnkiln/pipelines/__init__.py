"""Compiler pipelines: functions that only list passes (architecture: "pipelines/").

- ``reference``: tosa → rt with no optimisation: every op a plain kernel, one executor instance,
  no fusion, no constant folding. The baseline the optimised pipeline is checked against.
- ``default``: canonicalize, fold constants, propagate transposes through layout-agnostic ops and
  cancel the pairs that meet, fold per-channel constant add/mul into convolutions, then bufferize, fuse post-ops,
  schedule on the target's compute executors (one instance when its kernels are threaded themselves, the cpu
  default; every instance when ``threads`` was given), plan memory and assign physical barriers.

``pipeline(name, target)`` returns fresh pass instances; ``describe(name)`` prints the pass list
(mlir-opt pipeline syntax, one pass per line).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

from xdsl.passes import ModulePass

from nnkiln.targets import Target, get_target


def _reference(target: Target) -> list[ModulePass]:
    from nnkiln.conversion.async_to_rt import AsyncToRt
    from nnkiln.conversion.buf_to_async import WrapIntoAsyncRegions
    from nnkiln.conversion.tosa_to_buf import TosaToBuf
    from nnkiln.transforms.async_.optimize_async_deps import OptimizeAsyncDeps
    from nnkiln.transforms.async_.static_allocation import StaticAllocation
    from nnkiln.transforms.rt.assign_physical_barriers import AssignPhysicalBarriers

    return [
        TosaToBuf(pipeline="reference"),
        WrapIntoAsyncRegions(target=target.name, threads=1),
        StaticAllocation(target=target.name),
        OptimizeAsyncDeps(),
        AsyncToRt(),
        AssignPhysicalBarriers(max_barriers=target.num_barriers, target=target.name),
    ]


def _default(target: Target) -> list[ModulePass]:
    from nnkiln.conversion.async_to_rt import AsyncToRt
    from nnkiln.conversion.buf_to_async import WrapIntoAsyncRegions
    from nnkiln.conversion.tosa_to_buf import TosaToBuf
    from nnkiln.transforms.async_.optimize_async_deps import OptimizeAsyncDeps
    from nnkiln.transforms.async_.static_allocation import StaticAllocation
    from nnkiln.transforms.buf.fuse_post_ops import FusePostOps
    from nnkiln.transforms.generic.canonicalize import Canonicalize
    from nnkiln.transforms.generic.dce import Dce
    from nnkiln.transforms.rt.assign_physical_barriers import AssignPhysicalBarriers
    from nnkiln.transforms.tosa.cancel_transpose_pairs import CancelTransposePairs
    from nnkiln.transforms.tosa.fold_bias_add import FoldBiasAdd
    from nnkiln.transforms.tosa.fold_constants import FoldConstants
    from nnkiln.transforms.tosa.propagate_transposes import PropagateTransposes

    ex = target.compute_executors()[0]
    threads = 1 if ex.threaded_kernels else ex.count  # intra-op threads beat queues on chains (see targets)
    return [
        Canonicalize(),
        FoldConstants(),
        PropagateTransposes(),
        CancelTransposePairs(),
        FoldBiasAdd(),
        Dce(),
        TosaToBuf(),
        FusePostOps(),
        WrapIntoAsyncRegions(target=target.name, threads=threads),
        OptimizeAsyncDeps(),
        StaticAllocation(target=target.name),
        OptimizeAsyncDeps(),
        AsyncToRt(),
        AssignPhysicalBarriers(max_barriers=target.num_barriers, target=target.name),
    ]


def _spec(p: ModulePass) -> str:
    """``name{opt-name=value ...}`` with the command line's dashed option names."""
    spec = p.pipeline_pass_spec()
    opts = " ".join(f"{k.replace('_', '-')}={' '.join(str(v) for v in vals)}" for k, vals in spec.parameters.items())
    return f"{spec.name}{{{opts}}}" if opts else spec.name


PIPELINES: dict[str, Callable[[Target], list[ModulePass]]] = {"reference": _reference, "default": _default}


def pipeline(name: str, target: Target | None = None) -> list[ModulePass]:
    """The passes of pipeline ``name`` for ``target`` (default: the cpu target)."""
    from nnkiln.errors import NnkilnError

    if name not in PIPELINES:
        raise NnkilnError(f"unknown pipeline '{name}'; available: {', '.join(PIPELINES)}")
    return PIPELINES[name](target or get_target("cpu"))


def describe(name: str, target: Target | None = None, stream: TextIO | None = None) -> str:
    """Print (and return) the pass list of pipeline ``name``, one pass spec per line."""
    lines = [_spec(p) for p in pipeline(name, target)]
    text = "\n".join(lines) + "\n"
    (stream or sys.stdout).write(text)
    return text


__all__ = ["PIPELINES", "describe", "pipeline"]
