"""ONNX composite_more-family lowerings (GatherElements with run-time indices, SwiGLU, TensorScatter,
AffineGrid, STFT): imported with nnkiln, run with the reference interpreter, compared with
onnxruntime or with numpy formulas written here from the ONNX operator definitions."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from nnkiln.ir.errors import FrontendError
from nnkiln.onnx_backend import run_model

ort = pytest.importorskip("onnxruntime")

RNG = np.random.default_rng(97)


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def model(op: str, inputs: dict[str, np.ndarray], inits: dict[str, np.ndarray] | None = None,
          order: list[str] | None = None, opset: int = 18, out_type: int = TensorProto.FLOAT,
          **attrs: Any) -> onnx.ModelProto:
    names = order if order is not None else [*inputs, *(inits or {})]
    g_in = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
            for n, a in inputs.items()]
    g_out = [helper.make_tensor_value_info("y", out_type, None)]
    init = [numpy_helper.from_array(np.asarray(a), n) for n, a in (inits or {}).items()]
    graph = helper.make_graph([helper.make_node(op, names, ["y"], **attrs)], "g", g_in, g_out, initializer=init)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10
    return m


def ours(m: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> np.ndarray:
    return run_model(m, list(inputs.values()))[0]


def theirs(m: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> np.ndarray:
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, inputs)[0]


# ------------------------------------------------------------------------------------------------
# GatherElements with run-time indices


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_gather_elements_runtime_indices_match_ort(axis: int) -> None:
    data = rand(3, 4, 5)
    ishape = [3, 4, 5]
    ishape[axis] = 6
    dim = data.shape[axis]
    idx = RNG.integers(-dim, dim, size=ishape).astype(np.int64)
    inputs = {"data": data, "indices": idx}
    m = model("GatherElements", inputs, opset=13, axis=axis)
    np.testing.assert_array_equal(ours(m, inputs), theirs(m, inputs))


def test_gather_elements_smaller_indices_slice_the_data() -> None:
    data = rand(4, 5)
    idx = np.array([[4, 0], [1, 1], [3, 2]], np.int64)  # [3, 2] against [4, 5], axis 1
    inputs = {"data": data, "indices": idx}
    m = model("GatherElements", inputs, opset=13, axis=1)
    want = np.take_along_axis(data[:3, :], idx, axis=1)  # ONNX definition: out[i][j] = data[i][idx[i][j]]
    np.testing.assert_array_equal(ours(m, inputs), want)


def test_gather_elements_is_bit_exact_for_nan_inf_and_negative_zero() -> None:
    data = np.array([[np.nan, -0.0, np.inf], [-np.inf, 1.5, -0.0]], np.float32)
    idx = np.array([[1, 0, 2, 1], [2, 0, 1, 2]], np.int64)
    inputs = {"data": data, "indices": idx}
    got = ours(model("GatherElements", inputs, opset=13, axis=1), inputs)
    want = np.take_along_axis(data, idx, axis=1)
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.bool_])
def test_gather_elements_integer_and_bool_data(dtype: type) -> None:
    data = (RNG.integers(-100, 100, size=(3, 4)) if dtype is not np.bool_ else RNG.integers(0, 2, (3, 4))).astype(dtype)
    idx = RNG.integers(0, 3, size=(2, 4)).astype(np.int64)
    inputs = {"data": data, "indices": idx}
    out_type = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    got = ours(model("GatherElements", inputs, opset=13, out_type=out_type, axis=0), inputs)
    np.testing.assert_array_equal(got, np.take_along_axis(data, idx, axis=0))


# ------------------------------------------------------------------------------------------------
# SwiGLU (opset 28: not in onnxruntime; Y = A * sigmoid(alpha * A) * B)


def _swiglu(a: np.ndarray, b: np.ndarray, alpha: float) -> np.ndarray:
    a64 = a.astype(np.float64)
    return a64 / (1.0 + np.exp(-alpha * a64)) * b.astype(np.float64)


@pytest.mark.parametrize("alpha", [1.0, 1.702])
def test_swiglu_matches_definition(alpha: float) -> None:
    a, b = rand(3, 7) * 3, rand(3, 7)
    inputs = {"a": a, "b": b}
    attrs = {} if alpha == 1.0 else {"alpha": alpha}
    got = ours(model("SwiGLU", inputs, opset=28, **attrs), inputs)
    np.testing.assert_allclose(got, _swiglu(a, b, alpha), rtol=1e-4, atol=1e-6)


def test_swiglu_rejects_different_shapes() -> None:
    inputs = {"a": rand(2, 3), "b": rand(1, 3)}
    with pytest.raises(FrontendError, match="same shape"):
        ours(model("SwiGLU", inputs, opset=28), inputs)


# ------------------------------------------------------------------------------------------------
# TensorScatter (numpy from the operator's pseudocode)


def _tensor_scatter(past: np.ndarray, upd: np.ndarray, w: np.ndarray, axis: int, mode: str) -> np.ndarray:
    out = past.copy()
    axis %= past.ndim
    m, s = past.shape[axis], upd.shape[axis]
    for prefix in np.ndindex(past.shape[:axis]):
        for t in range(s):
            c = int(w[prefix[0]]) + t
            if mode == "circular":
                c %= m
            out[(*prefix, c)] = upd[(*prefix, t)]
    return out


@pytest.mark.parametrize("mode", ["linear", "circular"])
@pytest.mark.parametrize("axis", [-2, 1, 2])
def test_tensor_scatter_runtime_write_indices(mode: str, axis: int) -> None:
    past = rand(2, 5, 6, 4)
    ushape = list(past.shape)
    ushape[axis] = 3
    upd = rand(*ushape)
    m = past.shape[axis]
    w = np.array([1, m - 3], np.int64) if mode == "linear" else np.array([4 % m, m - 1], np.int64)
    inputs = {"past": past, "upd": upd, "w": w}
    got = ours(model("TensorScatter", inputs, opset=24, mode=mode, axis=axis), inputs)
    np.testing.assert_array_equal(got, _tensor_scatter(past, upd, w, axis, mode))


def test_tensor_scatter_without_write_indices_writes_at_zero() -> None:
    past = rand(2, 5, 3)
    upd = rand(2, 2, 3)
    inputs = {"past": past, "upd": upd}
    got = ours(model("TensorScatter", inputs, opset=24, axis=1), inputs)
    np.testing.assert_array_equal(got, _tensor_scatter(past, upd, np.zeros(2, np.int64), 1, "linear"))


def test_tensor_scatter_int32_cache() -> None:
    past = RNG.integers(-50, 50, size=(2, 4, 3)).astype(np.int32)
    upd = RNG.integers(-50, 50, size=(2, 2, 3)).astype(np.int32)
    w = np.array([3, 0], np.int64)
    inputs = {"past": past, "upd": upd, "w": w}
    got = ours(model("TensorScatter", inputs, opset=24, out_type=TensorProto.INT32, mode="circular", axis=1), inputs)
    np.testing.assert_array_equal(got, _tensor_scatter(past, upd, w, 1, "circular"))


# ------------------------------------------------------------------------------------------------
# AffineGrid (onnxruntime)


@pytest.mark.parametrize("size", [[2, 3, 5, 6], [2, 3, 4, 5, 6]])
@pytest.mark.parametrize("align", [0, 1])
def test_affine_grid_matches_ort(size: list[int], align: int) -> None:
    nd = len(size) - 2
    theta = rand(size[0], nd, nd + 1)
    inputs = {"theta": theta}
    m = model("AffineGrid", inputs, inits={"size": np.array(size, np.int64)}, opset=20, align_corners=align)
    np.testing.assert_allclose(ours(m, inputs), theirs(m, inputs), rtol=1e-5, atol=1e-6)


def test_affine_grid_needs_constant_size() -> None:
    inputs = {"theta": rand(1, 2, 3), "size": np.array([1, 1, 2, 2], np.int64)}
    with pytest.raises(FrontendError, match="constant"):
        run_model(model("AffineGrid", inputs, opset=20), list(inputs.values()), specialize=False)


# ------------------------------------------------------------------------------------------------
# STFT (onnxruntime)


@pytest.mark.parametrize("onesided", [1, 0])
def test_stft_with_constant_frame_params_matches_ort(onesided: int) -> None:
    sig = rand(2, 64, 1)
    inputs = {"signal": sig}
    m = model("STFT", inputs, inits={"step": np.array(6, np.int64), "len": np.array(16, np.int64)},
              order=["signal", "step", "", "len"], opset=17, onesided=onesided)
    np.testing.assert_allclose(ours(m, inputs), theirs(m, inputs), rtol=1e-4, atol=2e-5)


def test_stft_with_runtime_window_matches_ort() -> None:
    sig = rand(1, 50, 1)
    win = np.hanning(12).astype(np.float32)
    inputs = {"signal": sig, "window": win}
    m = model("STFT", inputs, inits={"step": np.array(4, np.int64)}, order=["signal", "step", "window"], opset=17)
    np.testing.assert_allclose(ours(m, inputs), theirs(m, inputs), rtol=1e-4, atol=2e-5)


def test_stft_with_constant_window_matches_definition() -> None:
    sig = rand(1, 40, 1)
    win = np.hamming(8)
    inputs = {"signal": sig}
    m = model("STFT", inputs, inits={"step": np.array(8, np.int64), "window": win.astype(np.float32)},
              order=["signal", "step", "window"], opset=17)
    frames = np.stack([sig[0, f * 8:f * 8 + 8, 0] * win.astype(np.float32) for f in range(5)]).astype(np.float64)
    spec = np.fft.rfft(frames, axis=-1)
    want = np.stack([spec.real, spec.imag], axis=-1)[None]
    np.testing.assert_allclose(ours(m, inputs), want, rtol=1e-4, atol=2e-5)


# ------------------------------------------------------------------------------------------------
# CausalConvWithState (opset 27: numpy from the operator definition)


def _causal_conv(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, past: np.ndarray | None,
                 act: str) -> tuple[np.ndarray, np.ndarray]:
    bsz, ch, length = x.shape
    k = w.shape[2]
    pad = np.zeros((bsz, ch, k - 1)) if past is None else past.astype(np.float64)
    padded = np.concatenate([pad, x.astype(np.float64)], axis=2)
    y = np.zeros((bsz, ch, length))
    for t in range(length):
        y[:, :, t] = np.sum(padded[:, :, t:t + k] * w[None, :, 0, :].astype(np.float64), axis=2)
    if b is not None:
        y += b[None, :, None]
    if act in ("silu", "swish"):
        y = y / (1.0 + np.exp(-y))
    return y, padded[:, :, length:]


def _causal_model(inputs: dict[str, np.ndarray], order: list[str], **attrs: Any) -> onnx.ModelProto:
    g_in = [helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape) for n, a in inputs.items()]
    g_out = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("y", "state")]
    node = helper.make_node("CausalConvWithState", order, ["y", "state"], **attrs)
    m = helper.make_model(helper.make_graph([node], "g", g_in, g_out), opset_imports=[helper.make_opsetid("", 27)])
    m.ir_version = 10
    return m


@pytest.mark.parametrize("with_bias,with_past,act", [(False, False, "none"), (True, True, "silu"), (True, False, "swish")])
def test_causal_conv_with_state_matches_definition(with_bias: bool, with_past: bool, act: str) -> None:
    x, w = rand(2, 3, 5), rand(3, 1, 3)
    b = rand(3) if with_bias else None
    past = rand(2, 3, 2) if with_past else None
    inputs = {"x": x, "w": w}
    order = ["x", "w", "", ""]
    if b is not None:
        inputs["b"] = b
        order[2] = "b"
    if past is not None:
        inputs["past"] = past
        order[3] = "past"
    y, state = run_model(_causal_model(inputs, order, activation=act), list(inputs.values()))
    want_y, want_state = _causal_conv(x, w, b, past, act)
    np.testing.assert_allclose(y, want_y, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(state, want_state.astype(np.float32))


def test_causal_conv_short_input_state_keeps_past_values() -> None:
    x, w, past = rand(1, 2, 1), rand(2, 1, 4), rand(1, 2, 3)
    inputs = {"x": x, "w": w, "past": past}
    y, state = run_model(_causal_model(inputs, ["x", "w", "", "past"]), list(inputs.values()))
    want_y, want_state = _causal_conv(x, w, None, past, "none")
    np.testing.assert_allclose(y, want_y, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(state, want_state.astype(np.float32))


# ------------------------------------------------------------------------------------------------
# LinearAttention (opset 27: numpy recurrence written from the operator's formulas)


def _linear_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, past: np.ndarray | None,
                      decay: np.ndarray | None, beta: np.ndarray | None, hq: int, hkv: int,
                      scale: float) -> tuple[np.ndarray, np.ndarray]:
    bsz, t_len, _ = q.shape
    dk = q.shape[2] // hq
    dv = v.shape[2] // hkv
    grp = hq // hkv
    s = np.zeros((bsz, hkv, dk, dv)) if past is None else past.astype(np.float64).copy()
    out = np.zeros((bsz, t_len, hq, dv))
    for b in range(bsz):
        for t in range(t_len):
            for h in range(hkv):
                kt = k[b, t, h * dk:(h + 1) * dk].astype(np.float64)
                vt = v[b, t, h * dv:(h + 1) * dv].astype(np.float64)
                if decay is not None:
                    gt = decay[b, t, h] if decay.shape[2] == hkv else decay[b, t, h * dk:(h + 1) * dk]
                    s[b, h] = np.exp(np.asarray(gt, np.float64)).reshape(-1, 1) * s[b, h]
                if beta is not None:
                    bt = beta[b, t, h if beta.shape[2] == hkv else 0]
                    vt = bt * (vt - s[b, h].T @ kt)
                s[b, h] = s[b, h] + np.outer(kt, vt)
                for j in range(grp):
                    qh = h * grp + j
                    out[b, t, qh] = scale * (q[b, t, qh * dk:(qh + 1) * dk].astype(np.float64) @ s[b, h])
    return out.reshape(bsz, t_len, hq * dv), s


@pytest.mark.parametrize("rule,hq,hkv,per_head,with_past", [
    ("linear", 2, 2, False, False), ("gated", 2, 2, True, True), ("delta", 4, 2, False, False),
    ("gated_delta", 4, 1, False, True)])
def test_linear_attention_matches_definition(rule: str, hq: int, hkv: int, per_head: bool, with_past: bool) -> None:
    bsz, t_len, dk, dv = 2, 3, 4, 3
    q, k, v = rand(bsz, t_len, hq * dk), rand(bsz, t_len, hkv * dk) * 0.5, rand(bsz, t_len, hkv * dv)
    inputs = {"q": q, "k": k, "v": v}
    order = ["q", "k", "v", "", "", ""]
    past = decay = beta = None
    if with_past:
        past = rand(bsz, hkv, dk, dv)
        inputs["past"], order[3] = past, "past"
    if rule in ("gated", "gated_delta"):
        decay = -np.abs(rand(bsz, t_len, hkv if per_head else hkv * dk))
        inputs["decay"], order[4] = decay, "decay"
    if rule in ("delta", "gated_delta"):
        beta = (1.0 / (1.0 + np.exp(-rand(bsz, t_len, 1)))).astype(np.float32)
        inputs["beta"], order[5] = beta, "beta"
    g_in = [helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape) for n, a in inputs.items()]
    g_out = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("y", "state")]
    node = helper.make_node("LinearAttention", order, ["y", "state"], q_num_heads=hq, kv_num_heads=hkv, update_rule=rule)
    m = helper.make_model(helper.make_graph([node], "g", g_in, g_out), opset_imports=[helper.make_opsetid("", 27)])
    m.ir_version = 10
    y, state = run_model(m, list(inputs.values()))
    want_y, want_s = _linear_attention(q, k, v, past, decay, beta, hq, hkv, 1.0 / np.sqrt(dk))
    np.testing.assert_allclose(y, want_y, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(state, want_s, rtol=1e-4, atol=1e-5)


# ------------------------------------------------------------------------------------------------
# RoiAlign (onnxruntime)


@pytest.mark.parametrize("ctm", ["half_pixel", "output_half_pixel"])
@pytest.mark.parametrize("runtime_batch", [True, False])
def test_roi_align_avg_matches_ort(ctm: str, runtime_batch: bool) -> None:
    x = rand(2, 3, 9, 11)
    rois = np.array([[0.0, 0.0, 10.0, 8.0], [2.5, 1.0, 6.0, 7.5], [-2.0, 3.0, 12.5, 10.0], [4.0, 4.0, 4.2, 4.1]],
                    np.float32)
    bidx = np.array([1, 0, 1, 0], np.int64)
    attrs = {"coordinate_transformation_mode": ctm, "output_height": 3, "output_width": 4,
             "sampling_ratio": 2, "spatial_scale": 0.9}
    if runtime_batch:
        inputs = {"x": x, "rois": rois, "bidx": bidx}
        m = model("RoiAlign", inputs, opset=16, **attrs)
    else:
        inputs = {"x": x, "rois": rois}
        m = model("RoiAlign", inputs, inits={"bidx": bidx}, opset=16, **attrs)
    np.testing.assert_allclose(ours(m, inputs), theirs(m, inputs), rtol=1e-4, atol=1e-5)


def test_roi_align_max_mode_is_not_supported() -> None:
    inputs = {"x": rand(1, 1, 4, 4), "rois": np.array([[0, 0, 3, 3]], np.float32)}
    m = model("RoiAlign", inputs, inits={"bidx": np.array([0], np.int64)}, opset=16, mode="max", sampling_ratio=1)
    with pytest.raises(FrontendError, match="not supported"):
        ours(m, inputs)


# ------------------------------------------------------------------------------------------------
# DeformConv (numpy from the definition: zero-padded bilinear sampling at the offset taps)


def _bilinear_zero(img: np.ndarray, y: float, x: float) -> float:
    h, w = img.shape
    y0, x0 = int(np.floor(y)), int(np.floor(x))
    total = 0.0
    for yy, wy in ((y0, 1 - (y - y0)), (y0 + 1, y - y0)):
        for xx, wx in ((x0, 1 - (x - x0)), (x0 + 1, x - x0)):
            if 0 <= yy < h and 0 <= xx < w:
                total += wy * wx * float(img[yy, xx])
    return total


def _deform_conv(x: np.ndarray, wt: np.ndarray, off: np.ndarray, b: np.ndarray | None, mask: np.ndarray | None,
                 pads: list[int], strides: list[int], dil: list[int], group: int, og: int) -> np.ndarray:
    n, c, _, _ = x.shape
    oc, cpg, kh, kw = wt.shape
    oh, ow = off.shape[2:]
    off = off.reshape(n, og, kh, kw, 2, oh, ow)
    out = np.zeros((n, oc, oh, ow))
    for bi in range(n):
        for o in range(oc):
            grp = o // (oc // group)
            for ci in range(grp * cpg, (grp + 1) * cpg):
                gi = ci // (c // og)
                for i in range(oh):
                    for j in range(ow):
                        for a in range(kh):
                            for e in range(kw):
                                y = -pads[0] + i * strides[0] + a * dil[0] + off[bi, gi, a, e, 0, i, j]
                                xx = -pads[1] + j * strides[1] + e * dil[1] + off[bi, gi, a, e, 1, i, j]
                                m = 1.0 if mask is None else mask[bi, (gi * kh + a) * kw + e, i, j]
                                out[bi, o, i, j] += wt[o, ci - grp * cpg, a, e] * m * _bilinear_zero(x[bi, ci], y, xx)
    if b is not None:
        out += b.reshape(1, -1, 1, 1)
    return out


def test_deform_conv_groups_stride_dilation_mask_bias() -> None:
    x = rand(2, 4, 6, 7)
    wt = rand(6, 2, 2, 3)
    pads, strides, dil, group, og = [1, 0, 1, 2], [2, 1], [1, 2], 2, 2
    oh = (6 + 2 - 2) // 2 + 1
    ow = (7 + 2 - 5) // 1 + 1
    off = (rand(2, og * 6 * 2, oh, ow) * 1.5).astype(np.float32)
    b = rand(6)
    mask = RNG.uniform(0, 1, size=(2, og * 6, oh, ow)).astype(np.float32)
    inputs = {"x": x, "w": wt, "off": off, "b": b, "mask": mask}
    m = model("DeformConv", inputs, opset=19, kernel_shape=[2, 3], pads=pads, strides=strides,
              dilations=dil, group=group, offset_group=og)
    want = _deform_conv(x, wt, off, b, mask, pads, strides, dil, group, og)
    np.testing.assert_allclose(ours(m, inputs), want, rtol=1e-4, atol=1e-5)
