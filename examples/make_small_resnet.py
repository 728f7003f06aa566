"""Writes examples/small_resnet.onnx and examples/input.npy: a small residual CNN with fixed random weights.

conv-bn-relu stem, two residual blocks (one with a strided 1x1 projection), global average pool, Gemm.
Built with onnx.helper at opset 17 (what torch exports), so the README's main command compiles a
realistic graph. Run: ``.venv/bin/python examples/make_small_resnet.py`` (outputs are committed).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = Path(__file__).parent


def build() -> onnx.ModelProto:
    rng = np.random.default_rng(7)
    inits: list[onnx.TensorProto] = []
    nodes: list[onnx.NodeProto] = []

    def const(name: str, arr: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(arr.astype(np.float32), name))
        return name

    def conv_bn(x: str, cin: int, cout: int, k: int, stride: int, name: str, relu: bool = True) -> str:
        w = const(f"{name}.w", rng.standard_normal((cout, cin, k, k)) * np.sqrt(2.0 / (cin * k * k)))
        nodes.append(helper.make_node("Conv", [x, w], [f"{name}.c"], name=f"{name}/conv", pads=[k // 2] * 4,
                                      strides=[stride, stride], kernel_shape=[k, k]))
        gamma, beta = const(f"{name}.g", rng.uniform(0.5, 1.5, cout)), const(f"{name}.b", rng.normal(0, 0.1, cout))
        mean, var = const(f"{name}.m", rng.normal(0, 0.1, cout)), const(f"{name}.v", rng.uniform(0.5, 1.5, cout))
        nodes.append(helper.make_node("BatchNormalization", [f"{name}.c", gamma, beta, mean, var], [f"{name}.bn"],
                                      name=f"{name}/bn", epsilon=1e-5))
        if not relu:
            return f"{name}.bn"
        nodes.append(helper.make_node("Relu", [f"{name}.bn"], [f"{name}.r"], name=f"{name}/relu"))
        return f"{name}.r"

    def block(x: str, cin: int, cout: int, stride: int, name: str) -> str:
        y = conv_bn(x, cin, cout, 3, stride, f"{name}.1")
        y = conv_bn(y, cout, cout, 3, 1, f"{name}.2", relu=False)
        short = x if stride == 1 and cin == cout else conv_bn(x, cin, cout, 1, stride, f"{name}.proj", relu=False)
        nodes.append(helper.make_node("Add", [y, short], [f"{name}.sum"], name=f"{name}/add"))
        nodes.append(helper.make_node("Relu", [f"{name}.sum"], [f"{name}.out"], name=f"{name}/relu"))
        return f"{name}.out"

    x = conv_bn("input", 3, 16, 3, 1, "stem")
    nodes.append(helper.make_node("MaxPool", [x], ["pool"], name="pool", kernel_shape=[2, 2], strides=[2, 2]))
    x = block("pool", 16, 16, 1, "layer1")
    x = block(x, 16, 32, 2, "layer2")
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["gap"], name="gap"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="flatten"))
    fw, fb = const("fc.w", rng.standard_normal((10, 32)) * 0.2), const("fc.b", rng.normal(0, 0.1, 10))
    nodes.append(helper.make_node("Gemm", ["flat", fw, fb], ["logits"], name="fc", transB=1))
    graph = helper.make_graph(
        nodes, "small_resnet",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 3, 32, 32])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 10])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="nnkiln-examples")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


if __name__ == "__main__":
    onnx.save(build(), HERE / "small_resnet.onnx")
    np.save(HERE / "input.npy", np.random.default_rng(1).standard_normal((1, 3, 32, 32)).astype(np.float32))
    print("wrote examples/small_resnet.onnx and examples/input.npy")
