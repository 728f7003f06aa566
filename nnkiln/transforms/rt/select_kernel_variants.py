"""``select-kernel-variants``: which implementation of a kernel runs, chosen for the target and written into the IR
(and so into the blob), where the runtime reads it instead of choosing when it loads the blob.

- A float32 CONV2D with constant weights gets ``attrs.variant``: ``"winograd"`` (F(2x2, 3x3): 3x3, stride 1,
  dilation 1, at least 32 input and output channels, ``WINOGRAD_MIN_MACS`` multiply-adds, transformed weights of
  at most ``WINOGRAD_MAX_WEIGHT_BYTES``), else ``"implicit_gemm"``.
- The function's GEMMs with constant weights (FULLY_CONNECTED, MATMUL whose weights the blob does not hold as
  panels) run on the kernel library's own GEMM when the target has wide vector units (``Target.wide_simd``) and
  their weights total at most ``Target.native_gemm_max_bytes``: the module attribute ``nnkiln.gemm`` (the blob's
  metadata ``gemm``) is ``"native"``, else ``"blas"``.

Why a pass: the choice depends on the whole program (the weights' total) and on the target, and the blob must show
what runs. Not a rewrite pattern: a per-function analysis over the blob tables (the weights' buffers).
Measurements behind the thresholds: ``bench/RESULTS.md``.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import DictionaryAttr, ModuleOp, StringAttr
from xdsl.passes import ModulePass

from nnkiln.analysis.task_table import TaskTable, packable_weights
from nnkiln.blob.format import Memory, TaskDesc
from nnkiln.kinds import Kind
from nnkiln.targets import get_target
from nnkiln.transforms.rt.rewrite_tasks import rt_functions

WINOGRAD_MIN_MACS = 16_000_000
"""Smaller convolutions stay on the implicit GEMM: the transforms' fixed costs outweigh the saved multiplications."""
WINOGRAD_MAX_WEIGHT_BYTES = 4 << 20
"""Larger transformed weights (16/9 of the weights, kept beside them) stay on the implicit GEMM (memory)."""
GEMM_KERNELS = ("tosa.fully_connected", "tosa.matmul")


def use_winograd(n: int, oh: int, ow: int, ic: int, oc: int, kh: int, kw: int, strides: tuple[int, ...],
                 dilations: tuple[int, ...]) -> bool:
    """Whether a float32 CONV2D of this geometry (constant weights) runs as Winograd F(2x2, 3x3)."""
    if (kh, kw) != (3, 3) or tuple(strides) != (1, 1) or tuple(dilations) != (1, 1) or ic < 32 or oc < 32:
        return False
    return 9 * n * oh * ow * ic * oc >= WINOGRAD_MIN_MACS and 16 * ic * oc * 4 <= WINOGRAD_MAX_WEIGHT_BYTES


def conv_variant(t: TaskDesc, table: TaskTable) -> str | None:
    """The variant of a CONV2D task, or None when it has none to choose (not float32 with constant weights)."""
    b = table.buffers
    if t.kernel != "tosa.conv2d" or len(t.ins) < 3 or not t.outs:
        return None
    x, w, y = b[t.ins[0]], b[t.ins[1]], b[t.outs[0]]
    if any(k.kind is not Kind.F32 for k in (x, w, y)) or w.memory is not Memory.CONSTANT or len(w.shape) != 4 \
            or len(y.shape) != 4:
        return None
    a = t.args.get("attrs", {})
    oc, kh, kw, ic = w.shape
    n, oh, ow, _ = y.shape
    wino = use_winograd(n, oh, ow, ic, oc, kh, kw, a.get("stride", ()), a.get("dilation", ()))
    return "winograd" if wino else "implicit_gemm"


def gemm_plan(table: TaskTable, wide_simd: bool, max_bytes: int) -> str:
    """``"native"`` or ``"blas"`` for the function's constant-weight GEMMs (see the module docstring)."""
    b = table.buffers
    weights = {t.ins[1] for t in table.tasks if t.kernel in GEMM_KERNELS and len(t.ins) > 1
               and b[t.ins[1]].memory is Memory.CONSTANT and not t.args.get("attrs", {}).get("b_panels")}
    total = sum(b[k].size for k in weights)
    return "native" if weights and wide_simd and total <= max_bytes else "blas"


@dataclass(frozen=True)
class SelectKernelVariants(ModulePass):
    name = "select-kernel-variants"

    target: str = "cpu"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = get_target(self.target, threads=1)
        plans = []
        for func in rt_functions(op):
            table = TaskTable.of_function(func, packable_weights(func, target.gemm_weight_panels))
            for t, kernel in zip(table.tasks, table.ops):
                variant = conv_variant(t, table)
                if variant is not None and kernel is not None:
                    kernel.attrs = DictionaryAttr({**kernel.attrs.data, "variant": StringAttr(variant)})
            plans.append(gemm_plan(table, target.wide_simd, target.native_gemm_max_bytes))
        if plans:
            op.attributes["nnkiln.gemm"] = StringAttr("native" if "native" in plans else "blas")
