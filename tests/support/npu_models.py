"""Independent ONNX models for the npu target's hardware path (issue 22, "How it will be checked"), built at test
time with ``onnx.helper`` and seeded numpy weights: no binary is committed, and nothing here comes from nnkiln.

Each builder returns ``(model, inputs)``: an ``onnx.ModelProto`` (checked with ``onnx.checker``) and a dict of
deterministic inputs by graph input name. ``MODELS`` maps a name to its builder and ``INT8`` names the models whose
outputs are int8 (compared bit for bit with ``nnkiln.reference.run``; the float ones with onnxruntime).

- ``cnn_residual_upsample``: a float CNN with residual blocks, a max pool, a strided convolution and two
  ``Resize`` upsamplings (nearest, then bilinear) with skip connections (a small U-Net).
- ``transformer_encoder``: a float pre-norm encoder block: ``LayerNormalization``, 4-head attention (MatMul,
  Softmax), a residual, a decomposed layer norm (ReduceMean/Sub/Mul/Sqrt/Div), an MLP with the exact
  ``Erf`` GELU, a residual.
- ``int8_qdq``: int8 in and out, QuantizeLinear/DequantizeLinear around Conv (per-channel weight scales, int32
  bias), Relu, a residual Add and a MaxPool.
- ``int8_qoperator``: int8 in and out, ``QLinearConv`` (per-channel weight scales), ``QLinearAdd``
  (``com.microsoft``) and ``QLinearMatMul``.
- ``resnet18_half``: ResNet-18 at 224x224 with half the channels (32, 64, 128, 256), BatchNormalization kept,
  stride-2 7x7 stem + 3x3 max pool, global average pool + Gemm (1000 classes). Its 3x3x256x256 float32 weights
  (2.36 MB) fit neither the npu's 917504-byte CMX nor npu-small's 262144 untiled.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
Inputs = dict[str, np.ndarray]
Model = tuple[onnx.ModelProto, Inputs]


class _Graph:
    """A small helper to append nodes and initializers with unique names."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.n = 0

    def name(self, hint: str) -> str:
        self.n += 1
        return f"{hint}_{self.n}"

    def const(self, value: np.ndarray, hint: str = "c") -> str:
        n = self.name(hint)
        self.inits.append(numpy_helper.from_array(np.asarray(value), n))
        return n

    def op(self, op_type: str, inputs: list[str], hint: str | None = None, domain: str | None = None,
           **attrs: object) -> str:
        out = self.name(hint or op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], domain=domain, **attrs))
        return out

    def model(self, inputs: list[onnx.ValueInfoProto], outputs: list[onnx.ValueInfoProto], name: str,
              extra_opsets: dict[str, int] | None = None) -> onnx.ModelProto:
        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.inits)
        opsets = [helper.make_opsetid("", OPSET)]
        opsets += [helper.make_opsetid(d, v) for d, v in (extra_opsets or {}).items()]
        m = helper.make_model(graph, opset_imports=opsets, producer_name="nnkiln-tests")
        m.ir_version = 8
        onnx.checker.check_model(m)
        return m

    # float layers
    def conv(self, x: str, cin: int, cout: int, k: int = 3, stride: int = 1, bias: bool = True) -> str:
        w = self.rng.standard_normal((cout, cin, k, k)).astype(np.float32) * np.float32(np.sqrt(2.0 / (cin * k * k)))
        ins = [x, self.const(w, "w")]
        if bias:
            ins.append(self.const(self.rng.uniform(-0.1, 0.1, cout).astype(np.float32), "b"))
        return self.op("Conv", ins, "conv", kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4)

    def bn(self, x: str, c: int) -> str:
        r = self.rng
        return self.op("BatchNormalization", [x, self.const(r.uniform(0.5, 1.5, c).astype(np.float32), "gamma"),
                                              self.const(r.uniform(-0.1, 0.1, c).astype(np.float32), "beta"),
                                              self.const(r.uniform(-0.1, 0.1, c).astype(np.float32), "mean"),
                                              self.const(r.uniform(0.5, 1.5, c).astype(np.float32), "var")],
                       "bn", epsilon=1e-5)

    def relu(self, x: str) -> str:
        return self.op("Relu", [x])

    def linear(self, x: str, din: int, dout: int) -> str:
        w = self.rng.standard_normal((din, dout)).astype(np.float32) * np.float32(1 / np.sqrt(din))
        y = self.op("MatMul", [x, self.const(w, "w")])
        return self.op("Add", [y, self.const(self.rng.uniform(-0.1, 0.1, dout).astype(np.float32), "b")])


def _vi(name: str, dtype: int, shape: list[int]) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, dtype, shape)


def cnn_residual_upsample() -> Model:
    """A float U-Net-like CNN (module docstring): 1x3x32x32 -> 1x4x32x32."""
    g = _Graph(101)
    x = g.relu(g.conv("x", 3, 16))                              # 32x32x16
    p = g.op("MaxPool", [x], "pool", kernel_shape=[2, 2], strides=[2, 2])  # 16x16x16
    r = g.conv(g.relu(g.conv(p, 16, 16)), 16, 16)
    s16 = g.relu(g.op("Add", [r, p]))                           # residual at 16x16
    d = g.relu(g.conv(s16, 16, 32, stride=2))                   # 8x8x32
    r = g.conv(g.relu(g.conv(d, 32, 32)), 32, 32)
    s8 = g.relu(g.op("Add", [r, d]))                            # residual at 8x8
    up = g.op("Resize", [s8, "", g.const(np.array([1, 1, 2, 2], np.float32), "scales")], "up", mode="nearest")
    u16 = g.relu(g.op("Add", [g.conv(up, 32, 16), s16]))        # skip from the 16x16 stage
    up = g.op("Resize", [u16, "", g.const(np.array([1, 1, 2, 2], np.float32), "scales")], "up", mode="linear")
    y = g.conv(g.op("Add", [g.conv(up, 16, 16), x]), 16, 4)     # skip from the 32x32 stage
    g.nodes.append(helper.make_node("Identity", [y], ["y"]))
    m = g.model([_vi("x", TensorProto.FLOAT, [1, 3, 32, 32])], [_vi("y", TensorProto.FLOAT, [1, 4, 32, 32])],
                "cnn_residual_upsample")
    return m, {"x": np.random.default_rng(1).standard_normal((1, 3, 32, 32)).astype(np.float32)}


def _layer_norm_decomposed(g: _Graph, x: str, d: int) -> str:
    mean = g.op("ReduceMean", [x], "mean", axes=[-1], keepdims=1)
    c = g.op("Sub", [x, mean])
    var = g.op("ReduceMean", [g.op("Mul", [c, c])], "var", axes=[-1], keepdims=1)
    std = g.op("Sqrt", [g.op("Add", [var, g.const(np.array(1e-5, np.float32), "eps")])])
    y = g.op("Div", [c, std])
    y = g.op("Mul", [y, g.const(g.rng.uniform(0.5, 1.5, d).astype(np.float32), "gamma")])
    return g.op("Add", [y, g.const(g.rng.uniform(-0.1, 0.1, d).astype(np.float32), "beta")])


def transformer_encoder(seq: int = 16, d: int = 64, heads: int = 4, hidden: int = 256) -> Model:
    """A float pre-norm encoder block (module docstring): 1 x seq x d -> 1 x seq x d."""
    g = _Graph(202)
    dh = d // heads
    ln = g.op("LayerNormalization", ["x", g.const(g.rng.uniform(0.5, 1.5, d).astype(np.float32), "gamma"),
                                     g.const(g.rng.uniform(-0.1, 0.1, d).astype(np.float32), "beta")],
              "ln", axis=-1, epsilon=1e-5)
    split = g.const(np.array([1, seq, heads, dh], np.int64), "shape")

    def heads_of(t: str, perm: list[int]) -> str:
        return g.op("Transpose", [g.op("Reshape", [t, split])], perm=perm)

    q = heads_of(g.linear(ln, d, d), [0, 2, 1, 3])              # 1 h s dh
    k = heads_of(g.linear(ln, d, d), [0, 2, 3, 1])              # 1 h dh s
    v = heads_of(g.linear(ln, d, d), [0, 2, 1, 3])
    scores = g.op("Mul", [g.op("MatMul", [q, k]), g.const(np.array(1 / np.sqrt(dh), np.float32), "scale")])
    att = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])  # 1 h s dh
    merged = g.op("Reshape", [g.op("Transpose", [att], perm=[0, 2, 1, 3]),
                              g.const(np.array([1, seq, d], np.int64), "shape")])
    h = g.op("Add", ["x", g.linear(merged, d, d)])
    f = g.linear(_layer_norm_decomposed(g, h, d), d, hidden)
    erf = g.op("Erf", [g.op("Div", [f, g.const(np.array(np.sqrt(2.0), np.float32), "sqrt2")])])
    gelu = g.op("Mul", [g.op("Mul", [f, g.const(np.array(0.5, np.float32), "half")]),
                        g.op("Add", [erf, g.const(np.array(1.0, np.float32), "one")])])
    y = g.op("Add", [h, g.linear(gelu, hidden, d)])
    g.nodes.append(helper.make_node("Identity", [y], ["y"]))
    m = g.model([_vi("x", TensorProto.FLOAT, [1, seq, d])], [_vi("y", TensorProto.FLOAT, [1, seq, d])],
                "transformer_encoder")
    return m, {"x": np.random.default_rng(2).standard_normal((1, seq, d)).astype(np.float32)}


def _int8_input(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    return np.random.default_rng(seed).integers(-128, 128, shape).astype(np.int8)


def _s(v: float) -> np.ndarray:
    return np.array(v, np.float32)


def _zp(v: int) -> np.ndarray:
    return np.array(v, np.int8)


def int8_qdq(c: int = 16, hw: int = 16) -> Model:
    """The QDQ model (module docstring): int8 1x8xhwxhw -> int8 1xcx(hw/2)x(hw/2)."""
    g = _Graph(303)
    cin = 8

    def dq(t: str, scale: float, zp: int) -> str:
        return g.op("DequantizeLinear", [t, g.const(_s(scale), "s"), g.const(_zp(zp), "zp")], "dq")

    def q(t: str, scale: float, zp: int) -> str:
        return g.op("QuantizeLinear", [t, g.const(_s(scale), "s"), g.const(_zp(zp), "zp")], "q")

    def qconv(t: str, t_scale: float, ci: int, co: int) -> str:
        w = g.rng.integers(-127, 128, (co, ci, 3, 3)).astype(np.int8)
        w_scale = g.rng.uniform(0.002, 0.01, co).astype(np.float32)  # per output channel
        wf = g.op("DequantizeLinear", [g.const(w, "wq"), g.const(w_scale, "ws"), g.const(np.zeros(co, np.int8))],
                  "dqw", axis=0)
        b = g.rng.integers(-2000, 2000, co).astype(np.int32)
        bf = g.op("DequantizeLinear", [g.const(b, "bq"), g.const((w_scale * t_scale).astype(np.float32), "bs"),
                                       g.const(np.zeros(co, np.int32))], "dqb", axis=0)
        return g.op("Conv", [t, wf, bf], "conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1])

    sx, s1, s2, s3, s4 = 0.05, 0.04, 0.06, 0.08, 0.08
    xf = dq("x", sx, 3)
    a = q(g.relu(qconv(xf, sx, cin, c)), s1, -128)               # conv + relu fused by the quantizer
    b = q(qconv(dq(a, s1, -128), s1, c, c), s2, 5)
    skip = q(qconv(xf, sx, cin, c), s2, -2)                       # a second branch from the input
    add = q(g.op("Add", [dq(b, s2, 5), dq(skip, s2, -2)]), s3, 0)
    r = q(g.relu(dq(add, s3, 0)), s4, -128)
    pooled = g.op("MaxPool", [dq(r, s4, -128)], "pool", kernel_shape=[2, 2], strides=[2, 2])
    g.nodes.append(helper.make_node("QuantizeLinear", [pooled, g.const(_s(s4), "s"), g.const(_zp(-128), "zp")],
                                    ["y"]))
    m = g.model([_vi("x", TensorProto.INT8, [1, cin, hw, hw])], [_vi("y", TensorProto.INT8, [1, c, hw // 2, hw // 2])],
                "int8_qdq")
    return m, {"x": _int8_input(3, (1, cin, hw, hw))}


def int8_qoperator(c: int = 16, hw: int = 8) -> Model:
    """The QOperator model (module docstring): int8 1x8xhwxhw -> QLinearConv x2, QLinearAdd, QLinearMatMul ->
    int8 1xcxhwx16."""
    g = _Graph(404)
    cin = 8

    def qlinear_conv(t: str, t_scale: float, t_zp: int, ci: int, co: int, y_scale: float, y_zp: int) -> str:
        w = g.rng.integers(-127, 128, (co, ci, 3, 3)).astype(np.int8)
        w_scale = g.rng.uniform(0.002, 0.01, co).astype(np.float32)
        b = g.rng.integers(-2000, 2000, co).astype(np.int32)
        return g.op("QLinearConv", [t, g.const(_s(t_scale)), g.const(_zp(t_zp)), g.const(w, "wq"),
                                    g.const(w_scale, "ws"), g.const(np.zeros(co, np.int8), "wzp"),
                                    g.const(_s(y_scale)), g.const(_zp(y_zp)), g.const(b, "bq")],
                    "qconv", kernel_shape=[3, 3], pads=[1, 1, 1, 1])

    a = qlinear_conv("x", 0.05, 3, cin, c, 0.05, -4)
    b = qlinear_conv(a, 0.05, -4, c, c, 0.07, 2)
    skip = qlinear_conv("x", 0.05, 3, cin, c, 0.07, 0)
    add = g.op("QLinearAdd", [b, g.const(_s(0.07)), g.const(_zp(2)), skip, g.const(_s(0.07)), g.const(_zp(0)),
                              g.const(_s(0.1)), g.const(_zp(1))], "qadd", domain="com.microsoft")
    w = g.rng.integers(-127, 128, (hw, 16)).astype(np.int8)
    g.nodes.append(helper.make_node("QLinearMatMul", [add, g.const(_s(0.1)), g.const(_zp(1)), g.const(w, "wm"),
                                                      g.const(_s(0.01)), g.const(_zp(0)), g.const(_s(0.4)),
                                                      g.const(_zp(-3))], ["y"]))
    m = g.model([_vi("x", TensorProto.INT8, [1, cin, hw, hw])], [_vi("y", TensorProto.INT8, [1, c, hw, 16])],
                "int8_qoperator", {"com.microsoft": 1})
    return m, {"x": _int8_input(4, (1, cin, hw, hw))}


def resnet18_half(hw: int = 224, classes: int = 1000) -> Model:
    """Half-width ResNet-18 (module docstring): 1x3xhwxhw -> 1xclasses."""
    g = _Graph(505)
    x = g.relu(g.bn(g.conv("x", 3, 32, k=7, stride=2, bias=False), 32))
    x = g.op("MaxPool", [x], "pool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 32
    for cout, stride in ((32, 1), (64, 2), (128, 2), (256, 2)):
        for block in range(2):
            s = stride if block == 0 else 1
            y = g.relu(g.bn(g.conv(x, cin, cout, stride=s, bias=False), cout))
            y = g.bn(g.conv(y, cout, cout, bias=False), cout)
            skip = x if s == 1 and cin == cout else g.bn(g.conv(x, cin, cout, k=1, stride=s, bias=False), cout)
            x, cin = g.relu(g.op("Add", [y, skip])), cout
    flat = g.op("Flatten", [g.op("GlobalAveragePool", [x])], axis=1)
    w = g.rng.standard_normal((classes, 256)).astype(np.float32) * np.float32(1 / 16)
    g.nodes.append(helper.make_node("Gemm", [flat, g.const(w, "fc"), g.const(np.zeros(classes, np.float32), "fcb")],
                                    ["y"], transB=1))
    m = g.model([_vi("x", TensorProto.FLOAT, [1, 3, hw, hw])], [_vi("y", TensorProto.FLOAT, [1, classes])],
                "resnet18_half")
    return m, {"x": np.random.default_rng(5).standard_normal((1, 3, hw, hw)).astype(np.float32)}


MODELS: dict[str, Callable[[], Model]] = {
    "cnn_residual_upsample": cnn_residual_upsample,
    "transformer_encoder": transformer_encoder,
    "int8_qdq": int8_qdq,
    "int8_qoperator": int8_qoperator,
    "resnet18_half": resnet18_half,
}
INT8 = frozenset({"int8_qdq", "int8_qoperator"})
SLOW = frozenset({"resnet18_half"})


def onnxruntime_outputs(model: onnx.ModelProto, inputs: Inputs) -> dict[str, np.ndarray]:
    """The model's outputs by name under onnxruntime (CPU, all graph optimizations off: the model as written)."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, inputs)))


__all__ = ["INT8", "MODELS", "SLOW", "cnn_residual_upsample", "int8_qdq", "int8_qoperator", "onnxruntime_outputs",
           "resnet18_half", "transformer_encoder"]
