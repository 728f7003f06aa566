"""Build small int8 TFLite models with nnef-tools' TFLite writer (run by test_nnef_tools_quant.py under the
.venv-nnef interpreter, with the ``flatbuffers`` package importable).

Usage: ``python tflite_quant_builder.py OUT.tflite SEED [int8|uint8|matmul|mul]``. ``matmul`` / ``mul``:
BATCH_MATMUL of int8 run-time inputs a [2, 4, 8] and b [2, 8, 5] (quantized attention) / MUL of a [2, 4, 8] and
b [2, 1, 8], writing OUT.npz with both inputs. int8: weights are random int8 codes
(per-channel, zero point 0, for CONV_2D; per-tensor elsewhere); uint8 (the older TFLite scheme): every
tensor uint8 with per-tensor zero points, weights included; biases int32 at ``s_in·s_w``; activation scales/zero points are calibrated
on a float forward pass of a random input (numpy, here) so that outputs use the int8 range. The model:
CONV_2D(SAME, RELU) → MAX_POOL_2D 2x2/2 ; DEPTHWISE_CONV_2D(SAME, stride 2) on the conv output ; ADD ;
AVERAGE_POOL_2D 2x2/2 ; RESHAPE ; FULLY_CONNECTED. Writes OUT.tflite, OUT.json (input/output quantization) and OUT.npy (the int8
input the activations were calibrated on).
"""

from __future__ import annotations

import json
import sys

import numpy as np
from nnef_tools.io.tf.lite import Writer
from nnef_tools.model import Graph, Operation, Tensor

OFF = {"int8": -128, "uint8": 0}
MODE = "int8"


def _qparams(lo: float, hi: float) -> tuple[float, int]:
    lo, hi = min(1.25 * lo, 0.0), max(1.25 * hi, 0.0)
    scale = (hi - lo) / 255.0 or 1.0
    off = OFF[MODE]
    return float(np.float32(scale)), int(np.clip(round(off - lo / scale), off, off + 255))


def _weights(rng: np.random.Generator, shape: tuple, per_channel: int = 0) -> tuple[np.ndarray, object]:
    """(codes, zero point) of random weights: int8 symmetric (zp 0, one per channel if ``per_channel``) or
    uint8 with a per-tensor zero point."""
    if MODE == "int8":
        return rng.integers(-127, 128, shape).astype(np.int8), ([0] * per_channel if per_channel else 0)
    return rng.integers(0, 256, shape).astype(np.uint8), int(rng.integers(100, 156))


def _conv_nhwc(x: np.ndarray, w: np.ndarray, stride: int, depthwise: bool) -> np.ndarray:
    """SAME convolution (odd kernels) of x [1,H,W,C] with w [O,KH,KW,C] (or [1,KH,KW,C] depthwise)."""
    _, h, wd, c = x.shape
    kh, kw = w.shape[1:3]
    oh, ow = -(-h // stride), -(-wd // stride)
    ph = max((oh - 1) * stride + kh - h, 0)
    pw = max((ow - 1) * stride + kw - wd, 0)
    xp = np.pad(x, [(0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)])
    out = np.zeros((1, oh, ow, c if depthwise else w.shape[0]))
    for i in range(oh):
        for j in range(ow):
            patch = xp[0, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
            out[0, i, j] = (patch[None] * w).sum(axis=(1, 2)).reshape(-1) if depthwise else \
                np.einsum("hwc,ohwc->o", patch, w)
    return out


def build(path: str, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    g = Graph("quant_net")
    quant = lambda s, z: {"scale": s, "zero_point": z, "min": None, "max": None}  # noqa: E731

    dt = np.int8 if MODE == "int8" else np.uint8
    xs, xz = 0.02, -5 + OFF[MODE] + 128
    x_codes = rng.integers(OFF[MODE], OFF[MODE] + 256, (1, 8, 8, 3)).astype(dt)
    x_real = (x_codes.astype(np.float64) - xz) * xs

    w1q, w1z = _weights(rng, (4, 3, 3, 3), 4)
    w1s = np.array([0.004, 0.006, 0.003, 0.005], np.float32) if MODE == "int8" else np.float32(0.005)
    b1s = (np.float32(xs) * w1s).astype(np.float32)
    b1q = rng.integers(-300, 300, (4,)).astype(np.int32)
    w1r = (w1q.astype(np.float64) - np.reshape(w1z, (-1, 1, 1, 1))) * np.reshape(w1s, (-1, 1, 1, 1))
    c1 = np.maximum(_conv_nhwc(x_real, w1r, 1, False) + b1q * b1s, 0)
    c1s, c1z = _qparams(c1.min(), c1.max())

    m1 = c1.reshape(1, 4, 2, 4, 2, 4).max(axis=(2, 4))

    wdq, wdz = _weights(rng, (1, 3, 3, 4))
    wds = 0.01
    bds = np.float32(c1s * wds)
    bdq = rng.integers(-200, 200, (4,)).astype(np.int32)
    d1 = _conv_nhwc(c1, (wdq.astype(np.float64) - wdz) * wds, 2, True) + bdq * bds
    d1s, d1z = _qparams(d1.min(), d1.max())

    a1 = m1 + d1
    a1s, a1z = _qparams(a1.min(), a1.max())
    p1 = a1.reshape(1, 2, 2, 2, 2, 4).mean(axis=(2, 4))

    wfq, wfz = _weights(rng, (5, 16))
    wfs = 0.008
    bfs = np.float32(a1s * wfs)
    bfq = rng.integers(-500, 500, (5,)).astype(np.int32)
    y = p1.reshape(1, 16) @ ((wfq.astype(np.float64) - wfz) * wfs).T + bfq * bfs
    ys, yz = _qparams(y.min(), y.max())

    def t(name: str, shape: tuple, dtype: type, q: dict, data: np.ndarray | None = None) -> Tensor:
        return Tensor(g, name=name, shape=shape, dtype=dtype, data=data, quant=q)

    b1qp = quant(b1s, [0, 0, 0, 0]) if MODE == "int8" else quant(float(b1s), 0)
    x = t("x", (1, 8, 8, 3), dt, quant(xs, xz))
    w1 = t("w1", w1q.shape, dt, quant(w1s if MODE == "int8" else float(w1s), w1z), w1q)
    b1 = t("b1", (4,), np.int32, b1qp, b1q)
    tc1 = t("c1", (1, 8, 8, 4), dt, quant(c1s, c1z))
    tm1 = t("m1", (1, 4, 4, 4), dt, quant(c1s, c1z))
    wd = t("wd", wdq.shape, dt, quant(wds, wdz), wdq)
    bd = t("bd", (4,), np.int32, quant(float(bds), 0), bdq)
    td1 = t("d1", (1, 4, 4, 4), dt, quant(d1s, d1z))
    ta1 = t("a1", (1, 4, 4, 4), dt, quant(a1s, a1z))
    tp1 = t("p1", (1, 2, 2, 4), dt, quant(a1s, a1z))
    tr1 = t("r1", (1, 16), dt, quant(a1s, a1z))
    shape_t = t("shape", (2,), np.int32, None, np.array([1, 16], np.int32))
    wf = t("wf", wfq.shape, dt, quant(wfs, wfz), wfq)
    bf = t("bf", (5,), np.int32, quant(float(bfs), 0), bfq)
    ty = t("y", (1, 5), dt, quant(ys, yz))

    conv = {"padding": "SAME", "stride_w": 1, "stride_h": 1, "dilation_w_factor": 1, "dilation_h_factor": 1}
    Operation(g, type="CONV_2D", inputs=(x, w1, b1), outputs=(tc1,),
              attribs={**conv, "fused_activation_function": "RELU"})
    pool = {"padding": "VALID", "stride_w": 2, "stride_h": 2, "filter_width": 2, "filter_height": 2,
            "fused_activation_function": "NONE"}
    Operation(g, type="MAX_POOL_2D", inputs=(tc1,), outputs=(tm1,), attribs=dict(pool))
    Operation(g, type="DEPTHWISE_CONV_2D", inputs=(tc1, wd, bd), outputs=(td1,),
              attribs={**conv, "stride_w": 2, "stride_h": 2, "depth_multiplier": 1,
                       "fused_activation_function": "NONE"})
    Operation(g, type="ADD", inputs=(tm1, td1), outputs=(ta1,), attribs={"fused_activation_function": "NONE"})
    Operation(g, type="AVERAGE_POOL_2D", inputs=(ta1,), outputs=(tp1,), attribs=dict(pool))
    Operation(g, type="RESHAPE", inputs=(tp1, shape_t), outputs=(tr1,), attribs={"new_shape": [1, 16]})
    Operation(g, type="FULLY_CONNECTED", inputs=(tr1, wf, bf), outputs=(ty,),
              attribs={"fused_activation_function": "NONE", "weights_format": "DEFAULT", "keep_num_dims": False,
                       "asymmetric_quantize_inputs": False})
    g.inputs = (x,)
    g.outputs = (ty,)
    Writer()(g, path)
    np.save(path.rsplit(".", 1)[0] + ".npy", x_codes)
    return {"x_scale": xs, "x_zp": xz, "y_scale": ys, "y_zp": yz}


def build_matmul(path: str, seed: int, op: str = "BATCH_MATMUL") -> dict:
    """BATCH_MATMUL(a [2,4,8], b [2,8,5]) or MUL(a [2,4,8], b [2,1,8]) of two int8 activations (the output range
    calibrated on the float result), or LOGISTIC / TANH (a [2,4,8]) / SOFTMAX (a [2,3,50], beta 1) of one, with
    TFLite's fixed int8 output quantization of those ops."""
    rng = np.random.default_rng(seed)
    g = Graph("quant_matmul")
    quant = lambda s, z: {"scale": s, "zero_point": z, "min": None, "max": None}  # noqa: E731
    a_s, a_z, b_s, b_z = 0.05, int(rng.integers(-10, 10)), 0.04, int(rng.integers(-10, 10))
    a = rng.integers(-128, 128, (2, 3, 50) if op == "SOFTMAX" else (2, 4, 8)).astype(np.int8)
    b = rng.integers(-128, 128, (2, 8, 5) if op == "BATCH_MATMUL" else (2, 1, 8)).astype(np.int8)
    ra, rb = (a.astype(np.float64) - a_z) * a_s, (b.astype(np.float64) - b_z) * b_s
    real = ra @ rb if op == "BATCH_MATMUL" else ra * rb if op == "MUL" else ra
    ys, yz = _qparams(real.min(), real.max())
    if op in ("LOGISTIC", "TANH", "SOFTMAX"):  # TFLite's fixed int8 output quantization of these ops
        ys, yz = (1.0 / 128, 0) if op == "TANH" else (1.0 / 256, -128)
    ta = Tensor(g, name="a", shape=a.shape, dtype=np.int8, quant=quant(a_s, a_z))
    tb = Tensor(g, name="b", shape=b.shape, dtype=np.int8, quant=quant(b_s, b_z))
    ty = Tensor(g, name="y", shape=real.shape, dtype=np.int8, quant=quant(ys, yz))
    if op == "BATCH_MATMUL":
        Operation(g, type="BATCH_MATMUL", inputs=(ta, tb), outputs=(ty,),
                  attribs={"adj_x": False, "adj_y": False, "asymmetric_quantize_inputs": False})
    elif op == "MUL":
        Operation(g, type="MUL", inputs=(ta, tb), outputs=(ty,), attribs={"fused_activation_function": "NONE"})
    else:
        Operation(g, type=op, inputs=(ta,), outputs=(ty,), attribs={"beta": 1.0} if op == "SOFTMAX" else {})
    g.inputs = (ta, tb) if op in ("BATCH_MATMUL", "MUL") else (ta,)
    g.outputs = (ty,)
    Writer()(g, path)
    np.savez(path.rsplit(".", 1)[0] + ".npz", **({"a": a, "b": b} if op in ("BATCH_MATMUL", "MUL") else {"a": a}))
    return {"a_scale": a_s, "a_zp": a_z, "b_scale": b_s, "b_zp": b_z, "y_scale": ys, "y_zp": yz}


if __name__ == "__main__":
    out, seed = sys.argv[1], int(sys.argv[2])
    kind = sys.argv[3] if len(sys.argv) > 3 else "int8"
    ops = {"matmul": "BATCH_MATMUL", "mul": "MUL", "sigmoid": "LOGISTIC", "tanh": "TANH", "softmax": "SOFTMAX"}
    MODE = "int8" if kind in ops else kind
    if kind in ops:
        info = build_matmul(out, seed, ops[kind])
    else:
        info = build(out, seed)
    with open(out.rsplit(".", 1)[0] + ".json", "w") as f:
        json.dump(info, f)
