"""Passes, one per file: ``transforms/<dialect>/<pass_name>.py``. ``registry()`` maps names to classes."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def registry() -> dict[str, Callable[[], type[ModulePass]]]:
    """Pass name → a function returning the pass class (imported lazily)."""

    def lazy(module: str, cls: str) -> Callable[[], type[ModulePass]]:
        def load() -> type[ModulePass]:
            import importlib

            return getattr(importlib.import_module(f"nnkiln.{module}"), cls)

        return load

    return {
        # generic
        "canonicalize": lazy("transforms.generic.canonicalize", "Canonicalize"),
        "cse": lazy("transforms.generic.cse", "Cse"),
        "dce": lazy("transforms.generic.dce", "Dce"),
        # level 3: tosa
        "fold-constants": lazy("transforms.tosa.fold_constants", "FoldConstants"),
        "cancel-transpose-pairs": lazy("transforms.tosa.cancel_transpose_pairs", "CancelTransposePairs"),
        "propagate-transposes": lazy("transforms.tosa.propagate_transposes", "PropagateTransposes"),
        "fold-bias-add": lazy("transforms.tosa.fold_bias_add", "FoldBiasAdd"),
        "split-batch": lazy("transforms.tosa.split_batch", "SplitBatch"),
        # level 3: tosa, HW adaptation for the NPU's NCE (architecture §6.1)
        "fc-to-conv": lazy("transforms.tosa.fc_to_conv", "FcToConv"),
        "avgpool-to-depthwise": lazy("transforms.tosa.avgpool_to_depthwise", "AvgpoolToDepthwise"),
        "scale-shift-to-depthwise": lazy("transforms.tosa.scale_shift_to_depthwise", "ScaleShiftToDepthwise"),
        "expand-channels": lazy("transforms.tosa.expand_channels", "ExpandChannels"),
        "split-asymmetric-strides": lazy("transforms.tosa.split_asymmetric_strides", "SplitAsymmetricStrides"),
        "convert-precision-to-fp16": lazy("transforms.tosa.convert_precision_to_fp16", "ConvertPrecisionToFp16"),
        "fuse-low-precision": lazy("transforms.tosa.fuse_low_precision", "FuseLowPrecision"),
        # level 3 -> 2 -> 1 conversions
        "tosa-to-buf": lazy("conversion.tosa_to_buf", "TosaToBuf"),
        "wrap-into-async-regions": lazy("conversion.buf_to_async", "WrapIntoAsyncRegions"),
        "async-to-rt": lazy("conversion.async_to_rt", "AsyncToRt"),
        # level 2: buf, async
        "fuse-post-ops": lazy("transforms.buf.fuse_post_ops", "FusePostOps"),
        "cmx-tiling": lazy("transforms.buf.cmx_tiling", "CmxTiling"),
        "optimize-async-deps": lazy("transforms.async_.optimize_async_deps", "OptimizeAsyncDeps"),
        "static-allocation": lazy("transforms.async_.static_allocation", "StaticAllocation"),
        "feasible-allocation": lazy("transforms.async_.feasible_allocation", "FeasibleAllocation"),
        # level 1: rt
        "fold-transposes-into-operands": lazy("transforms.rt.fold_transposes_into_operands",
                                              "FoldTransposesIntoOperands"),
        "fuse-expansion-depthwise": lazy("transforms.rt.fuse_expansion_depthwise", "FuseExpansionDepthwise"),
        "fuse-row-programs": lazy("transforms.rt.fuse_row_programs", "FuseRowPrograms"),
        "select-kernel-variants": lazy("transforms.rt.select_kernel_variants", "SelectKernelVariants"),
        "assign-physical-barriers": lazy("transforms.rt.assign_physical_barriers", "AssignPhysicalBarriers"),
    }
