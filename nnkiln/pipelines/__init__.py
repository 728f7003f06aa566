"""Compiler pipelines: functions that only list passes (architecture: "pipelines/").

- ``reference``: tosa → rt with no optimisation: every op a plain kernel, one executor instance,
  no fusion, no constant folding. The baseline the optimised pipeline is checked against.
- ``default``: canonicalize, fold constants, propagate transposes through layout-agnostic ops and
  cancel the pairs that meet, fold per-channel constant add/mul into convolutions, run the early layers of a
  batch once per sample where the target says it pays (``split-batch``), then bufferize, fuse post-ops,
  schedule on ``queues`` instances of the target's compute executor, plan memory and assign physical barriers.

Queues: by default one instance when the executor's kernels are threaded themselves (the cpu: its kernels use
all the program's threads), every instance otherwise; ``queues=Q`` asks for Q (inter-op parallelism, kernels
then single-threaded): on the cpu, two queues were slower than one queue whose kernels use both cores
(ResNet-18, BERT-tiny: bench/RESULTS.md).

Control flow: ``tosa-to-buf`` compiles the program of each region of ``tosa.cond_if`` / ``tosa.while_loop`` by a
nested pass pipeline, the same pipeline for the same target on one queue (``region_passes``; the region programs
run on the thread count of the program that loads them). The pipeline gives ``tosa-to-buf`` that function, as a
callable: conversions do not import this module.

The npu targets (``Target.is_npu``; docs/npu-target.md), phase 1: ``reference`` is the same pass list on the
target's SHAVE cores (every op a software kernel on activations in DDR, spread over every SHAVE by the cost
model's list scheduler, barriers under the device's limit); ``default`` is ``reference`` for now
(``_npu_default``): the HW passes (NCE tasks, CMX tiling, DMA, the feasible scheduler with spills) come in the
next phases.

``pipeline(name, target)`` returns fresh pass instances; ``describe(name)`` prints the pass list
(mlir-opt pipeline syntax, one pass per line); ``nnkiln.pipelines.text`` parses a textual pass list.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

from xdsl.passes import ModulePass

from nnkiln.targets import Target, get_target


def _reference(target: Target, queues: int) -> list[ModulePass]:
    from nnkiln.conversion.async_to_rt import AsyncToRt
    from nnkiln.conversion.buf_to_async import WrapIntoAsyncRegions
    from nnkiln.conversion.tosa_to_buf import TosaToBuf
    from nnkiln.transforms.async_.optimize_async_deps import OptimizeAsyncDeps
    from nnkiln.transforms.async_.static_allocation import StaticAllocation
    from nnkiln.transforms.rt.assign_physical_barriers import AssignPhysicalBarriers

    return [
        TosaToBuf(views=False, target=target.name, region_pipeline="reference", region_passes=region_passes),
        WrapIntoAsyncRegions(target=target.name, threads=queues),
        StaticAllocation(target=target.name),
        OptimizeAsyncDeps(),
        AsyncToRt(),
        AssignPhysicalBarriers(max_barriers=target.num_barriers, target=target.name),
    ]


def _hw_agnostic() -> list[ModulePass]:
    """The level-3 clean-ups every ``default`` pipeline starts with (any target)."""
    from nnkiln.transforms.generic.canonicalize import Canonicalize
    from nnkiln.transforms.tosa.cancel_transpose_pairs import CancelTransposePairs
    from nnkiln.transforms.tosa.fold_bias_add import FoldBiasAdd
    from nnkiln.transforms.tosa.fold_constants import FoldConstants
    from nnkiln.transforms.tosa.propagate_transposes import PropagateTransposes

    return [Canonicalize(), FoldConstants(), PropagateTransposes(), CancelTransposePairs(), FoldBiasAdd()]


def _default(target: Target, queues: int) -> list[ModulePass]:
    from nnkiln.conversion.async_to_rt import AsyncToRt
    from nnkiln.conversion.buf_to_async import WrapIntoAsyncRegions
    from nnkiln.conversion.tosa_to_buf import TosaToBuf
    from nnkiln.transforms.async_.optimize_async_deps import OptimizeAsyncDeps
    from nnkiln.transforms.async_.static_allocation import StaticAllocation
    from nnkiln.transforms.buf.fuse_post_ops import FusePostOps
    from nnkiln.transforms.generic.dce import Dce
    from nnkiln.transforms.rt.assign_physical_barriers import AssignPhysicalBarriers
    from nnkiln.transforms.rt.fold_transposes_into_operands import FoldTransposesIntoOperands
    from nnkiln.transforms.rt.fuse_expansion_depthwise import FuseExpansionDepthwise
    from nnkiln.transforms.rt.fuse_row_programs import FuseRowPrograms
    from nnkiln.transforms.rt.select_kernel_variants import SelectKernelVariants
    from nnkiln.transforms.tosa.split_batch import SplitBatch

    return [
        *_hw_agnostic(),
        Dce(),
        SplitBatch(target=target.name),
        TosaToBuf(target=target.name, region_pipeline="default", region_passes=region_passes),
        FusePostOps(),
        WrapIntoAsyncRegions(target=target.name, threads=queues),
        OptimizeAsyncDeps(),
        StaticAllocation(target=target.name),
        OptimizeAsyncDeps(),
        AsyncToRt(),
        FoldTransposesIntoOperands(),
        FuseRowPrograms(),
        FuseExpansionDepthwise(),
        SelectKernelVariants(target=target.name),
        AssignPhysicalBarriers(max_barriers=target.num_barriers, target=target.name),
    ]


def _npu_default(target: Target, queues: int) -> list[ModulePass]:
    """The npu targets' ``default`` pipeline, the hardware mode (docs/npu-target.md): the HW-agnostic level-3
    clean-ups, the §6.1 adaptations that let more ops run on the NCE (``expand-channels`` and
    ``convert-precision-to-fp16`` are not listed: the cost model has no DPU alignment penalty for the first to pay
    back, and the runtime's fp16 kernels are the reference ones: both are in the registry for textual pipelines),
    bufferization, post-op fusion, NCE tiles in CMX with their DMAs, every executor kind scheduled
    together, the feasible CMX scheduler, DDR allocation, barriers under the device's limit. Control-flow regions
    are compiled by ``reference`` (SHAVE kernels)."""
    from nnkiln.conversion.async_to_rt import AsyncToRt
    from nnkiln.conversion.buf_to_async import WrapIntoAsyncRegions
    from nnkiln.conversion.tosa_to_buf import TosaToBuf
    from nnkiln.transforms.async_.feasible_allocation import FeasibleAllocation
    from nnkiln.transforms.async_.optimize_async_deps import OptimizeAsyncDeps
    from nnkiln.transforms.async_.static_allocation import StaticAllocation
    from nnkiln.transforms.buf.cmx_tiling import CmxTiling
    from nnkiln.transforms.buf.fuse_post_ops import FusePostOps
    from nnkiln.transforms.generic.canonicalize import Canonicalize
    from nnkiln.transforms.generic.dce import Dce
    from nnkiln.transforms.rt.assign_physical_barriers import AssignPhysicalBarriers
    from nnkiln.transforms.tosa.avgpool_to_depthwise import AvgpoolToDepthwise
    from nnkiln.transforms.tosa.fc_to_conv import FcToConv
    from nnkiln.transforms.tosa.fuse_low_precision import FuseLowPrecision
    from nnkiln.transforms.tosa.scale_shift_to_depthwise import ScaleShiftToDepthwise
    from nnkiln.transforms.tosa.split_asymmetric_strides import SplitAsymmetricStrides

    return [
        *_hw_agnostic(),
        FcToConv(),
        AvgpoolToDepthwise(),
        ScaleShiftToDepthwise(),
        SplitAsymmetricStrides(),
        FuseLowPrecision(),
        Canonicalize(),
        Dce(),
        TosaToBuf(target=target.name, region_pipeline="reference", region_passes=region_passes),
        FusePostOps(),
        CmxTiling(target=target.name),
        WrapIntoAsyncRegions(target=target.name, threads=queues),
        FeasibleAllocation(target=target.name),
        StaticAllocation(target=target.name),
        OptimizeAsyncDeps(),
        AsyncToRt(),
        AssignPhysicalBarriers(max_barriers=target.num_barriers, target=target.name),
    ]


def _spec(p: ModulePass) -> str:
    """``name{opt-name=value ...}`` with the command line's dashed option names and values (``true``/``false``,
    lists joined by commas): ``nnkiln.pipelines.text`` parses it back into the same pass."""

    def value(v: object) -> str:
        return str(v).lower() if isinstance(v, bool) else str(v)

    spec = p.pipeline_pass_spec()
    opts = " ".join(f"{k.replace('_', '-')}={','.join(value(v) for v in vals)}" for k, vals in spec.parameters.items())
    return f"{spec.name}{{{opts}}}" if opts else spec.name


PIPELINES: dict[str, Callable[[Target, int], list[ModulePass]]] = {"reference": _reference, "default": _default}
NPU_PIPELINES: dict[str, Callable[[Target, int], list[ModulePass]]] = {"reference": _reference,
                                                                        "default": _npu_default}
"""The pipelines of the npu targets (same names as ``PIPELINES``; ``default`` is ``reference`` in phase 1)."""


def default_queues(name: str, target: Target) -> int:
    """The executor instances pipeline ``name`` schedules on unless asked (see the module docstring): on the npu
    every SHAVE core; on the cpu one for ``reference`` or threaded kernels, else every instance."""
    ex = target.kernel_executor
    if target.is_npu:
        return ex.count
    return 1 if name == "reference" or ex.threaded_kernels else ex.count


def pipeline(name: str, target: Target | None = None, queues: int | None = None) -> list[ModulePass]:
    """The passes of pipeline ``name`` for ``target`` (default: the cpu target), scheduling on ``queues``
    executor instances (default: ``default_queues``; at most the target's instance count)."""
    from nnkiln.errors import NnkilnError, did_you_mean

    if name not in PIPELINES:
        raise NnkilnError(f"unknown pipeline '{name}'{did_you_mean(name, PIPELINES)} (available: {', '.join(PIPELINES)})")
    target = target or get_target("cpu")
    count = target.kernel_executor.count
    if queues is None:
        queues = default_queues(name, target)
    elif not 1 <= queues <= count:
        raise NnkilnError(f"queues must be between 1 and the target's {count} executor instances, got {queues}")
    return (NPU_PIPELINES if target.is_npu else PIPELINES)[name](target, queues)


def region_passes(name: str, target: str) -> list[ModulePass]:
    """The passes that compile the program of a control-flow region inside pipeline ``name`` for target ``target``:
    that pipeline on one executor queue (given to ``tosa-to-buf``, see the module docstring)."""
    return pipeline(name, get_target(target), queues=1)


def describe(name: str, target: Target | None = None, stream: TextIO | None = None) -> str:
    """Print (and return) the pass list of pipeline ``name``, one pass spec per line."""
    lines = [_spec(p) for p in pipeline(name, target)]
    text = "\n".join(lines) + "\n"
    (stream or sys.stdout).write(text)
    return text


__all__ = ["NPU_PIPELINES", "PIPELINES", "default_queues", "describe", "pipeline", "region_passes"]
