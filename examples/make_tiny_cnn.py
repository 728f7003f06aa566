"""Writes examples/tiny_cnn.mlir: a small int8 CNN in TOSA 0.30 with fixed random weights.

conv2d (i8 x i8 -> i32, zero points) -> rescale (per-channel, to i8) -> clamp (ReLU at the zero point)
-> max_pool2d -> reshape -> fully_connected (-> i32) -> rescale (-> i8).
Run: ``.venv/bin/python examples/make_tiny_cnn.py`` (the .mlir is committed; this documents it).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import TensorType, i8, i32

from nnkiln.dialects.tosa.ops_activation import ClampOp
from nnkiln.dialects.tosa.ops_data_layout import ReshapeOp
from nnkiln.dialects.tosa.ops_tensor import Conv2DOp, FullyConnectedOp, MaxPool2dOp
from nnkiln.dialects.tosa.ops_type_conversion import RescaleOp
from nnkiln.frontends.common.graph import GraphBuilder
from nnkiln.frontends.common.quant import compute_scale_32
from nnkiln.ir.text import print_module
from nnkiln.ir.verify import verify_module


def build() -> str:
    rng = np.random.default_rng(2026)
    g = GraphBuilder("tiny_cnn", [("image", TensorType(i8, [1, 16, 16, 3]))])
    g.at_node("conv1")
    w = g.const(rng.integers(-127, 128, (8, 3, 3, 3)).astype(np.int8))
    b = g.const(rng.integers(-2000, 2000, 8).astype(np.int32))
    x = g.value(Conv2DOp, [g.block.args[0], w, b], i32, pad=[1, 1, 1, 1], stride=[1, 1], dilation=[1, 1],
                input_zp=-3, weight_zp=0)
    scales = [compute_scale_32(s) for s in rng.uniform(0.0005, 0.002, 8)]
    x = g.value(RescaleOp, [x], i8, input_zp=0, output_zp=-5, multiplier=[m for m, _ in scales],
                shift=[s for _, s in scales], scale32=True, double_round=True, per_channel=True)
    g.at_node("relu1")
    x = g.value(ClampOp, [x], i8, min_val=-5, max_val=127)
    g.at_node("pool1")
    x = g.value(MaxPool2dOp, [x], i8, kernel=[2, 2], stride=[2, 2], pad=[0, 0, 0, 0])
    g.at_node("flatten")
    x = g.value(ReshapeOp, [x], i8, new_shape=[1, 8 * 8 * 8])
    g.at_node("fc")
    fw = g.const(rng.integers(-127, 128, (10, 512)).astype(np.int8))
    fb = g.const(rng.integers(-500, 500, 10).astype(np.int32))
    x = g.value(FullyConnectedOp, [x, fw, fb], i32, input_zp=-5, weight_zp=0)
    m, s = compute_scale_32(0.0003)
    logits = g.value(RescaleOp, [x], i8, input_zp=0, output_zp=0, multiplier=[m], shift=[s],
                     scale32=True, double_round=False, per_channel=False)
    module = g.finish([("logits", logits)])
    verify_module(module)
    return print_module(module)


if __name__ == "__main__":
    out = Path(__file__).with_name("tiny_cnn.mlir")
    out.write_text(build())
    print(f"wrote {out}")
