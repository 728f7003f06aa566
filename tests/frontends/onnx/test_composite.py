"""ONNX composite-family lowerings (ops composed of several TOSA ops): imported with nnkiln, run with
the reference interpreter, compared with onnxruntime or with values computed from the ONNX operator
definitions (numpy formulas written here, independent of the lowering)."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from nnkiln.ir.errors import FrontendError
from nnkiln.onnx_backend import run_model

ort = pytest.importorskip("onnxruntime")

RNG = np.random.default_rng(4321)


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def model(op: str, inputs: dict[str, np.ndarray], n_out: int = 1, opset: int = 18,
          inits: dict[str, np.ndarray] | None = None, order: list[str] | None = None,
          out_types: list[int] | None = None, **attrs: Any) -> onnx.ModelProto:
    names = order if order is not None else [*inputs, *(inits or {})]
    outs = [f"y{i}" if i < n_out else "" for i in range(n_out)]
    types = out_types or [TensorProto.FLOAT] * n_out
    g_in = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
            for n, a in inputs.items()]
    g_out = [helper.make_tensor_value_info(o, t, None) for o, t in zip(outs, types) if o]
    init = [numpy_helper.from_array(np.asarray(a), n) for n, a in (inits or {}).items()]
    graph = helper.make_graph([helper.make_node(op, names, outs, **attrs)], "g", g_in, g_out, initializer=init)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10
    return m


def ours(m: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    return run_model(m, list(inputs.values()))


def theirs(m: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, inputs)


def against_ort(m: onnx.ModelProto, inputs: dict[str, np.ndarray], rtol: float = 1e-4, atol: float = 1e-5) -> None:
    got, want = ours(m, inputs), theirs(m, inputs)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == np.asarray(w).shape
        if np.asarray(w).dtype.kind in "iub":
            np.testing.assert_array_equal(g.astype(np.int64), np.asarray(w).astype(np.int64))
        else:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


# ------------------------------------------------------------------------------------------------
# elementwise compositions


def test_swish_by_definition() -> None:
    x = rand(2, 5)
    got = ours(model("Swish", {"x": x}, opset=24, alpha=0.5), {"x": x})[0]
    want = x / (1.0 + np.exp(-0.5 * x.astype(np.float64)))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("bias", [0.0, 1.5])
def test_shrink(bias: float) -> None:
    x = np.array([-3.0, -1.0, -0.5, 0.0, 0.4, 1.0, 2.5], dtype=np.float32)
    against_ort(model("Shrink", {"x": x}, opset=9, lambd=0.9, bias=bias), {"x": x})


def test_shrink_integer_by_definition() -> None:
    x = np.array([-5, -2, -1, 0, 1, 2, 5], dtype=np.int32)
    got = ours(model("Shrink", {"x": x}, opset=9, out_types=[TensorProto.INT32], lambd=1.0, bias=2.0), {"x": x})[0]
    np.testing.assert_array_equal(got, [-3, 0, 0, 0, 0, 0, 3])


def test_lp_normalization_l2() -> None:
    x = rand(3, 4)
    x[1] = 0.0  # a zero row normalises to zeros
    got = ours(model("LpNormalization", {"x": x}, opset=22, axis=1, p=2), {"x": x})[0]
    norm = np.sqrt((x.astype(np.float64) ** 2).sum(axis=1, keepdims=True))
    want = np.where(norm == 0, 0, x / np.where(norm == 0, 1, norm))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def test_lp_normalization_l1_uses_absolute_values() -> None:
    x = np.array([[1.0, -3.0], [2.0, 2.0]], dtype=np.float32)
    got = ours(model("LpNormalization", {"x": x}, opset=22, axis=-1, p=1), {"x": x})[0]
    np.testing.assert_allclose(got, [[0.25, -0.75], [0.5, 0.5]], rtol=1e-6)


# ------------------------------------------------------------------------------------------------
# Einsum


@pytest.mark.parametrize("eq,shapes", [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ij->ji", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("i,i", [(5,), (5,)]),
    ("bii->bi", [(2, 3, 3)]),
    ("ii", [(4, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("...ij,...jk->...ik", [(2, 2, 3, 4), (2, 2, 4, 3)]),
    ("ij,kj->ikj", [(2, 3), (4, 3)]),
    ("i,j->ij", [(3,), (4,)]),
    ("bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)]),
    ("ijk,ij", [(2, 3, 4), (2, 3)]),
])
def test_einsum(eq: str, shapes: list[tuple[int, ...]]) -> None:
    inputs = {f"x{i}": rand(*s) for i, s in enumerate(shapes)}
    against_ort(model("Einsum", inputs, opset=12, equation=eq), inputs)


def test_einsum_integer_is_reported() -> None:
    x = np.ones((2, 2), dtype=np.int32)
    with pytest.raises(FrontendError, match="not supported"):
        ours(model("Einsum", {"x": x}, opset=12, out_types=[TensorProto.INT32], equation="ij->ji"), {"x": x})


# ------------------------------------------------------------------------------------------------
# losses


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore", [None, 1])
def test_nll_loss(reduction: str, weighted: bool, ignore: int | None) -> None:
    x = rand(3, 4, 2)
    t = np.array([[0, 1], [3, 1], [2, 0]], dtype=np.int64)
    inputs: dict[str, np.ndarray] = {"x": x, "t": t}
    if weighted:
        inputs["w"] = np.array([0.5, 2.0, 1.0, 0.25], dtype=np.float32)
    attrs: dict[str, Any] = {"reduction": reduction}
    if ignore is not None:
        attrs["ignore_index"] = ignore
    against_ort(model("NegativeLogLikelihoodLoss", inputs, opset=13, **attrs), inputs)


@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_softmax_cross_entropy_with_log_prob(reduction: str) -> None:
    x = rand(2, 5, 3)
    t = np.array([[4, 0, 2], [1, 1, 3]], dtype=np.int64)
    w = np.linspace(0.5, 1.5, 5).astype(np.float32)
    inputs = {"x": x, "t": t, "w": w}
    against_ort(model("SoftmaxCrossEntropyLoss", inputs, n_out=2, opset=13, reduction=reduction, ignore_index=2),
                inputs)


# ------------------------------------------------------------------------------------------------
# data movement


@pytest.mark.parametrize("shape,axes", [([3, 6], None), ([5, 2], None), ([4], [-1])])
def test_center_crop_pad(shape: list[int], axes: list[int] | None) -> None:
    x = rand(4, 4)
    attrs = {} if axes is None else {"axes": axes}
    m = model("CenterCropPad", {"x": x}, opset=18, inits={"s": np.array(shape, dtype=np.int64)}, **attrs)
    against_ort(m, {"x": x}, rtol=0, atol=0)


@pytest.mark.parametrize("time_axis", [0, 1])
def test_reverse_sequence(time_axis: int) -> None:
    x = rand(4, 4, 2)
    lens = np.array([4, 1, 3, 2], dtype=np.int64)
    m = model("ReverseSequence", {"x": x}, opset=10, inits={"l": lens}, time_axis=time_axis,
              batch_axis=1 - time_axis)
    against_ort(m, {"x": x}, rtol=0, atol=0)


@pytest.mark.parametrize("exclusive", [0, 1])
@pytest.mark.parametrize("reverse", [0, 1])
def test_cumprod_int32_exact(exclusive: int, reverse: int) -> None:
    x = np.array([[1, 2, 3, -1, 2], [2, 2, 2, 2, 2]], dtype=np.int32)
    m = model("CumProd", {"x": x}, opset=26, inits={"a": np.array(1, dtype=np.int64)},
              out_types=[TensorProto.INT32], exclusive=exclusive, reverse=reverse)
    got = ours(m, {"x": x})[0]
    src = x[:, ::-1] if reverse else x
    if exclusive:
        src = np.concatenate([np.ones((2, 1), np.int32), src[:, :-1]], axis=1)
    want = np.cumprod(src, axis=1)
    if reverse:
        want = want[:, ::-1]
    np.testing.assert_array_equal(got, want)


def test_cumprod_float_axis0() -> None:
    x = (1.0 + 0.1 * rand(7, 3)).astype(np.float32)
    m = model("CumProd", {"x": x}, opset=26, inits={"a": np.array(0, dtype=np.int64)})
    np.testing.assert_allclose(ours(m, {"x": x})[0], np.cumprod(x.astype(np.float64), axis=0), rtol=1e-5)


def test_max_unpool_run_time_indices() -> None:
    x = np.array([[[[5.0, 6.0], [7.0, 8.0]]]], dtype=np.float32)
    idx = np.array([[[[0, 3], [9, 15]]]], dtype=np.int64)
    inputs = {"x": x, "i": idx}
    m = model("MaxUnpool", inputs, opset=11, kernel_shape=[2, 2], strides=[2, 2])
    want = np.zeros(16, np.float32)
    want[[0, 3, 9, 15]] = [5, 6, 7, 8]
    np.testing.assert_array_equal(ours(m, inputs)[0], want.reshape(1, 1, 4, 4))


# ------------------------------------------------------------------------------------------------
# TopK


@pytest.mark.parametrize("largest", [0, 1])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_topk_with_ties(largest: int, axis: int) -> None:
    x = np.array([[3, 1, 3, 2], [0, 0, 5, 0], [2, 2, 2, 2]], dtype=np.float32)
    m = model("TopK", {"x": x}, n_out=2, opset=11, inits={"k": np.array([2], dtype=np.int64)},
              out_types=[TensorProto.FLOAT, TensorProto.INT64], axis=axis, largest=largest)
    against_ort(m, {"x": x}, rtol=0, atol=0)


def test_topk_int32_with_extreme_values() -> None:
    x = np.array([[-2**31, 7, -2**31, 2**31 - 1, 0]], dtype=np.int32)
    m = model("TopK", {"x": x}, n_out=2, opset=11, inits={"k": np.array([5], dtype=np.int64)},
              out_types=[TensorProto.INT32, TensorProto.INT64], largest=0)
    got = ours(m, {"x": x})
    np.testing.assert_array_equal(got[0], [[-2**31, -2**31, 0, 7, 2**31 - 1]])
    np.testing.assert_array_equal(got[1], [[0, 2, 4, 1, 3]])


def test_topk_float_with_infinities() -> None:
    x = np.array([[-np.inf, 1.0, -np.inf, np.inf]], dtype=np.float32)
    m = model("TopK", {"x": x}, n_out=2, opset=11, inits={"k": np.array([4], dtype=np.int64)},
              out_types=[TensorProto.FLOAT, TensorProto.INT64])
    got = ours(m, {"x": x})
    np.testing.assert_array_equal(got[0], [[np.inf, 1.0, -np.inf, -np.inf]])
    np.testing.assert_array_equal(got[1], [[3, 1, 0, 2]])


# ------------------------------------------------------------------------------------------------
# Col2Im, DFT, windows


@pytest.mark.parametrize("attrs", [{}, {"strides": [2, 2]}, {"pads": [1, 0, 1, 1], "dilations": [1, 2]}])
def test_col2im(attrs: dict[str, Any]) -> None:
    image, block = np.array([5, 6], dtype=np.int64), np.array([2, 3], dtype=np.int64)
    strides = attrs.get("strides", [1, 1])
    pads = attrs.get("pads", [0, 0, 0, 0])
    dil = attrs.get("dilations", [1, 1])
    grid = [(int(image[i]) + pads[i] + pads[2 + i] - (dil[i] * (int(block[i]) - 1) + 1)) // strides[i] + 1
            for i in range(2)]
    x = rand(2, 3 * 6, grid[0] * grid[1])
    m = model("Col2Im", {"x": x}, opset=18, inits={"im": image, "bl": block}, **attrs)
    against_ort(m, {"x": x}, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("inverse,onesided,length", [(0, 0, None), (0, 1, None), (1, 0, None), (0, 0, 6), (1, 1, 8)])
def test_dft_against_numpy(inverse: int, onesided: int, length: int | None) -> None:
    n = 5 if not (inverse and onesided) else 5
    x = rand(2, n, 2) if not onesided or inverse else rand(2, n, 1)
    inits: dict[str, np.ndarray] = {"axis": np.array(1, dtype=np.int64)}
    order = ["x", "len" if length else "", "axis"]
    if length:
        inits["len"] = np.array(length, dtype=np.int64)
    m = model("DFT", {"x": x}, opset=20, inits=inits, order=order, inverse=inverse, onesided=onesided)
    got = ours(m, {"x": x})[0]
    z = x[..., 0].astype(np.float64) + (1j * x[..., 1] if x.shape[-1] == 2 else 0)
    L = length or n
    if inverse and onesided:
        want = np.fft.irfft(z, n=L, axis=1)[..., None]
    else:
        f = np.fft.ifft(z, n=L, axis=1) if inverse else np.fft.fft(z, n=L, axis=1)
        if onesided:
            f = f[:, : L // 2 + 1]
        want = np.stack([f.real, f.imag], axis=-1)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", ["HannWindow", "HammingWindow", "BlackmanWindow"])
@pytest.mark.parametrize("periodic", [0, 1])
def test_windows(op: str, periodic: int) -> None:
    m = model(op, {}, opset=17, inits={"n": np.array(8, dtype=np.int64)}, periodic=periodic)
    against_ort(m, {}, rtol=1e-6, atol=1e-7)


def test_mel_weight_matrix() -> None:
    inits = {"a": np.array(8, np.int64), "b": np.array(16, np.int64), "c": np.array(8192, np.int64),
             "d": np.array(0.0, np.float32), "e": np.array(4096.0, np.float32)}
    m = model("MelWeightMatrix", {}, opset=17, inits=inits)
    against_ort(m, {}, rtol=1e-6, atol=1e-7)


# ------------------------------------------------------------------------------------------------
# RotaryEmbedding, Attention


@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("rdim", [0, 4])
def test_rotary_embedding_with_position_ids(interleaved: int, rdim: int) -> None:
    x = rand(2, 3, 4, 8)  # [B, H, S, D]
    r = rdim or 8
    pos = np.array([[0, 1, 2, 3], [5, 4, 3, 2]], dtype=np.int64)
    inputs = {"x": x, "cos": rand(6, r // 2), "sin": rand(6, r // 2), "pos": pos}
    m = model("RotaryEmbedding", inputs, opset=23, interleaved=interleaved, rotary_embedding_dim=rdim)
    against_ort(m, inputs)


def test_rotary_embedding_3d_without_position_ids() -> None:
    x = rand(2, 4, 12)  # [B, S, H*D], 3 heads of 4
    inputs = {"x": x, "cos": rand(2, 4, 2), "sin": rand(2, 4, 2)}
    m = model("RotaryEmbedding", inputs, opset=23, num_heads=3)
    against_ort(m, inputs)


def _attention_reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray | None = None,
                         causal: bool = False, scale: float | None = None) -> np.ndarray:
    """Attention on 4-D inputs from the operator definition, in float64."""
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    rep = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, rep, axis=1), np.repeat(v, rep, axis=1)
    s = (1 / np.sqrt(q.shape[-1])) if scale is None else scale
    logits = q @ np.swapaxes(k, -1, -2) * s
    sq, sk = logits.shape[-2:]
    bias = np.zeros((sq, sk))
    if mask is not None:
        bias = bias + (np.where(mask, 0.0, -np.inf) if mask.dtype == np.bool_ else mask)
    if causal:
        bias = bias + np.where(np.arange(sk)[None, :] <= np.arange(sq)[:, None], 0.0, -np.inf)
    x = logits + bias
    with np.errstate(invalid="ignore"):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return (e / e.sum(axis=-1, keepdims=True)) @ v


@pytest.mark.parametrize("heads", [(2, 2), (4, 2)])
@pytest.mark.parametrize("causal", [False, True])
def test_attention_4d_by_definition(heads: tuple[int, int], causal: bool) -> None:
    q, k, v = rand(2, heads[0], 3, 8), rand(2, heads[1], 5, 8), rand(2, heads[1], 5, 6)
    inputs = {"q": q, "k": k, "v": v}
    got = ours(model("Attention", inputs, opset=23, is_causal=int(causal)), inputs)[0]
    np.testing.assert_allclose(got, _attention_reference(q, k, v, causal=causal), rtol=1e-4, atol=1e-5)


def test_attention_bool_mask_and_scale_by_definition() -> None:
    q, k, v = rand(1, 2, 3, 4), rand(1, 2, 4, 4), rand(1, 2, 4, 4)
    mask = np.array([[True, False, True, True], [True, True, False, False], [False, True, True, True]])
    inputs = {"q": q, "k": k, "v": v, "m": mask}
    got = ours(model("Attention", inputs, opset=23, scale=0.3), inputs)[0]
    np.testing.assert_allclose(got, _attention_reference(q, k, v, mask=mask, scale=0.3), rtol=1e-4, atol=1e-5)


def test_attention_fully_masked_row_is_zero() -> None:
    q, k, v = rand(1, 1, 2, 4), rand(1, 1, 3, 4), rand(1, 1, 3, 4)
    mask = np.array([[False, False, False], [True, True, False]])
    inputs = {"q": q, "k": k, "v": v, "m": mask}
    got = ours(model("Attention", inputs, opset=24), inputs)[0]
    np.testing.assert_array_equal(got[0, 0, 0], np.zeros(4, np.float32))
    np.testing.assert_allclose(got[0, 0, 1], _attention_reference(q, k, v, mask=mask)[0, 0, 1], rtol=1e-4, atol=1e-5)


def test_attention_3d_with_past_against_ort() -> None:
    q, k, v = rand(2, 3, 8), rand(2, 3, 8), rand(2, 3, 8)
    pk, pv = rand(2, 2, 4, 4), rand(2, 2, 4, 4)
    inputs = {"q": q, "k": k, "v": v, "m": rand(3, 7), "pk": pk, "pv": pv}
    m = model("Attention", inputs, n_out=3, opset=23, q_num_heads=2, kv_num_heads=2)
    against_ort(m, inputs)


# ------------------------------------------------------------------------------------------------
# RNN, GRU, LSTM


def _rnn_inputs(gates: int, dirs: int, seq: int = 4, batch: int = 3, inp: int = 5, hid: int = 4,
                layout: int = 0, bias: bool = True, initial: bool = True) -> dict[str, np.ndarray]:
    xs = (seq, batch, inp) if layout == 0 else (batch, seq, inp)
    ins = {"X": rand(*xs), "W": rand(dirs, gates * hid, inp) * 0.5, "R": rand(dirs, gates * hid, hid) * 0.5}
    if bias:
        ins["B"] = rand(dirs, 2 * gates * hid) * 0.3
    if initial:
        ins["h"] = rand(dirs, batch, hid) if layout == 0 else rand(batch, dirs, hid)
    return ins


def _rnn_model(op: str, ins: dict[str, np.ndarray], n_out: int, opset: int = 14, lens: np.ndarray | None = None,
               extra: dict[str, np.ndarray] | None = None, **attrs: Any) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    order = ["X", "W", "R", "B" if "B" in ins else "", "lens" if lens is not None else "", "h" if "h" in ins else ""]
    all_ins = dict(ins)
    if extra:
        order += list(extra)
        all_ins.update(extra)
    inits = {"lens": lens} if lens is not None else None
    return model(op, all_ins, n_out=n_out, opset=opset, inits=inits, order=order, **attrs), all_ins


def _against_ort_batchwise(op: str, ins: dict[str, np.ndarray], n_out: int, **attrs: Any) -> None:
    """onnxruntime has no ``layout = 1``: compare with its layout-0 result on swapped inputs/outputs."""
    m1, ins1 = _rnn_model(op, ins, n_out, layout=1, **attrs)
    swapped = {k: (np.swapaxes(v, 0, 1).copy() if k in ("X", "h", "c") else v) for k, v in ins.items()}
    m0, ins0 = _rnn_model(op, swapped, n_out, **attrs)
    got, want = ours(m1, ins1), theirs(m0, ins0)
    np.testing.assert_allclose(got[0], np.transpose(want[0], (2, 0, 1, 3)), rtol=1e-4, atol=1e-5)
    for g, w in zip(got[1:], want[1:]):
        np.testing.assert_allclose(g, np.swapaxes(w, 0, 1), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_rnn(direction: str) -> None:
    dirs = 2 if direction == "bidirectional" else 1
    ins = _rnn_inputs(1, dirs)
    m, all_ins = _rnn_model("RNN", ins, 2, hidden_size=4, direction=direction)
    against_ort(m, all_ins)


def test_rnn_batchwise_bidirectional() -> None:
    _against_ort_batchwise("RNN", _rnn_inputs(1, 2, layout=1), 2, hidden_size=4, direction="bidirectional")


def test_rnn_relu_with_clip() -> None:
    ins = _rnn_inputs(1, 1)
    m, all_ins = _rnn_model("RNN", ins, 2, hidden_size=4, activations=["Relu"], clip=0.7)
    against_ort(m, all_ins)


@pytest.mark.parametrize("lbr", [0, 1])
@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_gru(lbr: int, direction: str) -> None:
    dirs = 2 if direction == "bidirectional" else 1
    ins = _rnn_inputs(3, dirs)
    m, all_ins = _rnn_model("GRU", ins, 2, hidden_size=4, direction=direction, linear_before_reset=lbr)
    against_ort(m, all_ins)


def test_gru_partial_sequence_lengths() -> None:
    ins = _rnn_inputs(3, 1)
    m, all_ins = _rnn_model("GRU", ins, 2, hidden_size=4, lens=np.array([4, 2, 1], dtype=np.int32))
    against_ort(m, all_ins)


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_lstm_with_peepholes_and_cell_state(direction: str) -> None:
    dirs = 2 if direction == "bidirectional" else 1
    ins = _rnn_inputs(4, dirs)
    extra = {"c": rand(dirs, 3, 4), "P": rand(dirs, 12) * 0.5}
    m, all_ins = _rnn_model("LSTM", ins, 3, extra=extra, hidden_size=4, direction=direction)
    against_ort(m, all_ins)


def test_lstm_layout1_without_bias() -> None:
    _against_ort_batchwise("LSTM", _rnn_inputs(4, 1, layout=1, bias=False, initial=False), 3, hidden_size=4)


def test_rnn_reverse_with_partial_lengths_is_reported() -> None:
    ins = _rnn_inputs(1, 1)
    m, all_ins = _rnn_model("RNN", ins, 2, hidden_size=4, direction="reverse", lens=np.array([4, 2, 1], np.int32))
    with pytest.raises(FrontendError, match="not supported"):
        ours(m, all_ins)
