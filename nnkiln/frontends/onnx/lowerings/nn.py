"""ONNX neural-network lowerings (family ``nn``): Flatten and Dropout.

The family is split in three files, each registered by ``lowerings/__init__``: this one (Flatten, Dropout),
``nn_conv`` (Conv, ConvTranspose, the pools, Gemm, MatMul) and ``nn_norm`` (the normalisations, Softmax,
LogSoftmax, Hardmax, LRN); the helpers they share are in ``_nn_common``.

Conventions: feature maps are ONNX NCHW; TOSA's spatial ops are NHWC with OHWI weights, so the
lowerings transpose the input to channels-last (``layout.transpose``), run the TOSA op and transpose
back. Weights are transposed at import with numpy when they are constants. Float tensors only (fp32,
fp16, bf16) unless an op says otherwise: the integer forms of these ONNX ops (e.g. an int32 Gemm)
have no exact TOSA 0.30 equivalent and are reported as not supported.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.frontends.common.broadcast import reshape
from nnkiln.frontends.onnx.importer import NodeContext, TensorValue
from nnkiln.frontends.onnx.lowerings import lowering
from nnkiln.frontends.onnx.lowerings._nn_common import FLOAT_KINDS, np_dtype, value_of

# ------------------------------------------------------------------------------------------------
# Flatten, Dropout


@lowering("Flatten")
def Flatten(ctx: NodeContext) -> list[TensorValue | SSAValue | np.ndarray]:
    """Flatten (opsets 1, 9, 11, 13, 21): [prod(d[:axis]), prod(d[axis:])] as one RESHAPE (folded for a
    constant input). ``axis`` may be negative from opset 11 and equal to the rank."""
    v = ctx.input(0)
    rank = v.rank
    axis = int(ctx.attr("axis", 1))
    if axis < 0:
        axis += rank
    if not 0 <= axis <= rank:
        raise ctx.error(f"axis {ctx.attr('axis')} is out of range for rank {rank}")
    shape = (math.prod(v.shape[:axis]), math.prod(v.shape[axis:]))
    if v.is_const:
        return [np.reshape(v.const, shape)]
    return [reshape(ctx.g, value_of(ctx, v), shape)]


@lowering("Dropout")
def Dropout(ctx: NodeContext) -> list[TensorValue | SSAValue | np.ndarray]:
    """Dropout in inference form: the output is the input and the mask is all true (opset >= 10,
    bool) or all ones (opsets 7-9, the input's type). Training mode (opset >= 12 ``training_mode``
    input, constant true) with a non-zero ratio draws random numbers: not supported. The ratio of
    inference mode is ignored, as ONNX specifies."""
    v = ctx.input(0)
    ctx.attr("ratio")
    ctx.attr("seed")
    training = False
    if ctx.opset >= 12 and ctx.has_input(2):
        training = bool(np.asarray(ctx.const(2, "training_mode")).reshape(-1)[0])
    if training:
        ratio = 0.5
        if ctx.has_input(1):
            ratio = float(np.asarray(ctx.const(1, "ratio")).reshape(-1)[0])
        if ratio != 0.0:
            raise ctx.error("training mode with a non-zero ratio is not supported (random masks)")
    outs: list[TensorValue | SSAValue | np.ndarray] = [v]
    if len(ctx.node.output) > 1 and ctx.node.output[1]:
        if ctx.opset >= 10:
            outs.append(np.ones(v.shape, dtype=np.bool_))
        else:
            outs.append(np.ones(v.shape, dtype=np_dtype(v.kind) if v.kind in FLOAT_KINDS else np.float32))
    return outs
