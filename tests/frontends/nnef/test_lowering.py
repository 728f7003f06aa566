"""NNEF → tosa lowering: every standard operation compared with the Khronos ``nnef.Session`` executor (run in
/work/main/.venv-nnef through a subprocess; skipped when that venv is absent), plus hand-computed checks."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(__file__)
sys.path.insert(0, HERE)

from nnef_op_cases import CASES, ORACLE  # noqa: E402

from nnkiln.frontends.nnef import expand, load_nnef, parse_document, write_tensor  # noqa: E402

ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
KHRONOS_PY = os.path.join(ROOT, ".venv-nnef", "bin", "python")
needs_khronos = pytest.mark.skipif(not os.path.exists(KHRONOS_PY), reason=".venv-nnef with the nnef package is absent")

# compounds the Khronos Session does not implement natively are expanded by it (their bodies are normative)
KHRONOS_LOWERED = ["clamp", "batch_normalization", "rms_pool", "local_response_normalization",
                   "local_mean_normalization", "local_variance_normalization", "local_contrast_normalization",
                   "l1_normalization", "l2_normalization", "moments", "linear_quantize", "logarithmic_quantize",
                   "copy_n", "add_n", "separable_conv", "separable_deconv", "elu", "softplus", "prelu", "leaky_relu",
                   "rsqr", "log2", "max_pool_with_index", "area_downsample", "nearest_upsample", "nearest_downsample"]


def make_container(folder: str, text: str, seed: int = 0, scale: float = 0.5) -> None:
    """graph.nnef plus random float ``.dat`` files for every variable."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "graph.nnef"), "w") as f:
        f.write(text)
    flat = expand(parse_document(text))
    rng = np.random.default_rng(seed)
    for op in flat.operations:
        if op.name == "variable":
            ref = next(iter(op.outputs.values()))
            path = os.path.join(folder, str(op.attribs["label"]) + ".dat")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(write_tensor((rng.standard_normal(ref.shape) * scale).astype(np.float32)))


def random_inputs(folder: str, seed: int = 1) -> list[np.ndarray]:
    with open(os.path.join(folder, "graph.nnef")) as f:
        flat = expand(parse_document(f.read()))
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(r.shape).astype(np.float32) for r in flat.inputs]


def run_ours(folder: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
    import nnkiln.reference as ref
    from nnkiln.reference import entry_function, input_names

    module = load_nnef(folder)
    names = input_names(entry_function(module))
    out = ref.run(module, dict(zip(names, inputs)))
    return list(out.values()) if isinstance(out, dict) else list(out)


def run_khronos(folder: str, inputs: list[np.ndarray], tmp: str) -> list[np.ndarray]:
    inp, outp = os.path.join(tmp, "in.npz"), os.path.join(tmp, "out.npz")
    np.savez(inp, **{f"arg_{i}": a for i, a in enumerate(inputs)})
    proc = subprocess.run([KHRONOS_PY, os.path.join(HERE, "khronos_run.py"), folder, inp, outp,
                           json.dumps(KHRONOS_LOWERED)], capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise AssertionError(f"Khronos executor failed: {proc.stderr[-2000:]}")
    data = np.load(outp)
    return [data[f"arr_{i}"] for i in range(len(data.files))]


def assert_close(ours: list[np.ndarray], theirs: list[np.ndarray], rtol: float = 1e-4, atol: float = 1e-5) -> None:
    assert len(ours) == len(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        b = np.asarray(b)
        assert a.shape == b.shape, f"output {i}: shape {a.shape} vs {b.shape}"
        if b.dtype == np.bool_ or a.dtype == np.bool_:
            np.testing.assert_array_equal(a.astype(bool), b.astype(bool), err_msg=f"output {i}")
        elif np.issubdtype(b.dtype, np.integer):
            np.testing.assert_array_equal(a.astype(np.int64), b.astype(np.int64), err_msg=f"output {i}")
        else:
            np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol, atol=atol,
                                       err_msg=f"output {i}")


@needs_khronos
@pytest.mark.parametrize("name", sorted(CASES))
def test_op_against_khronos(name: str, tmp_path) -> None:  # noqa: ANN001
    folder = str(tmp_path / "model")
    make_container(folder, CASES[name])
    inputs = random_inputs(folder)
    oracle = folder
    if name in ORACLE:
        oracle = str(tmp_path / "oracle")
        os.makedirs(oracle)
        with open(os.path.join(oracle, "graph.nnef"), "w") as f:
            f.write(ORACLE[name])
        for fn in os.listdir(folder):
            if fn.endswith(".dat"):
                with open(os.path.join(folder, fn), "rb") as src, open(os.path.join(oracle, fn), "wb") as dst:
                    dst.write(src.read())
    assert_close(run_ours(folder, inputs), run_khronos(oracle, inputs, str(tmp_path)))


# ---------------------------------------------------------------------------------------------------
# numpy oracles written from the spec's formulas (§4.3.3, §4.3.4) where the Khronos executor differs


def _windows(x: np.ndarray, size, stride, pads, fill):  # noqa: ANN001, ANN202
    xp = np.pad(x, pads, constant_values=fill)
    out = [(xp.shape[a] - size[a]) // stride[a] + 1 for a in range(x.ndim)]
    taps = []
    for j in np.ndindex(*size):
        sl = tuple(slice(j[a], j[a] + (out[a] - 1) * stride[a] + 1, stride[a]) for a in range(x.ndim))
        taps.append(xp[sl])
    return np.stack(taps, axis=-1)


def test_argmax_pool_sample_desample_numpy(tmp_path) -> None:  # noqa: ANN001
    text = ("version 1.0;\ngraph G( x ) -> ( i, s, y )\n{\n    x = external(shape = [1, 2, 6, 6]);\n"
            "    i = argmax_pool(x, size = [1, 1, 3, 3], stride = [1, 1, 2, 2], border = 'ignore', "
            "padding = [(0,0),(0,0),(1,1),(1,1)]);\n"
            "    s = sample(x, i, size = [1, 1, 3, 3], stride = [1, 1, 2, 2], border = 'ignore', "
            "padding = [(0,0),(0,0),(1,1),(1,1)]);\n"
            "    y = desample(s, i, size = [1, 1, 3, 3], stride = [1, 1, 2, 2], padding = [(0,0),(0,0),(1,1),(1,1)], output_shape = [1, 2, 6, 6]);\n}\n")
    folder = str(tmp_path / "m")
    make_container(folder, text)
    x = np.random.default_rng(3).standard_normal((1, 2, 6, 6)).astype(np.float32)
    i, s, y = run_ours(folder, [x])
    taps = _windows(x, (1, 1, 3, 3), (1, 1, 2, 2), [(0, 0), (0, 0), (1, 1), (1, 1)], -np.inf)
    want_i = np.argmax(taps, axis=-1)  # first maximum, row-major window position
    np.testing.assert_array_equal(i, want_i)
    np.testing.assert_array_equal(s, taps.max(axis=-1))
    # desample: out[o] += s[p] where o = p*stride + (j // 3, j % 3) - 1 lies inside
    want_y = np.zeros_like(x)
    for n, c, ph, pw in np.ndindex(*s.shape):
        j = want_i[n, c, ph, pw]
        oh, ow = ph * 2 + j // 3 - 1, pw * 2 + j % 3 - 1
        if 0 <= oh < 6 and 0 <= ow < 6:
            want_y[n, c, oh, ow] += s[n, c, ph, pw]
    np.testing.assert_allclose(y, want_y, rtol=1e-6)


def _linear_1d(x: np.ndarray, axis: int, f: int, method: str) -> np.ndarray:
    n = x.shape[axis]
    i = np.arange(n * f, dtype=np.float64)
    if method == "asymmetric":
        pos = i / f
    elif method == "symmetric":
        pos = (i - (f - 1) / 2) / f
    else:
        pos = i / ((n * f - 1) / (n - 1))
    j = np.floor(pos).astype(int)
    u = pos - j
    lo, hi = np.clip(j, 0, n - 1), np.clip(j + 1, 0, n - 1)  # border 'replicate'
    a, b = np.take(x, lo, axis=axis), np.take(x, hi, axis=axis)
    shape = [1] * x.ndim
    shape[axis] = n * f
    u = u.reshape(shape)
    return (1 - u) * a + u * b


@pytest.mark.parametrize("method,factor", [("aligned", [3, 2]), ("symmetric", [3, 3]), ("asymmetric", [4, 1])])
def test_multilinear_upsample_numpy(method: str, factor: list[int], tmp_path) -> None:  # noqa: ANN001
    text = ("version 1.0;\ngraph G( x ) -> ( y )\n{\n    x = external(shape = [1, 2, 4, 5]);\n"
            f"    y = multilinear_upsample(x, factor = {factor}, method = '{method}', border = 'replicate');\n}}\n")
    folder = str(tmp_path / "m")
    make_container(folder, text)
    x = np.random.default_rng(4).standard_normal((1, 2, 4, 5)).astype(np.float32)
    (y,) = run_ours(folder, [x])
    want = _linear_1d(_linear_1d(x.astype(np.float64), 2, factor[0], method), 3, factor[1], method)
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-5)


def test_debox_normalize_divides_by_volume(tmp_path) -> None:  # noqa: ANN001
    """§4.3.2: normalize divides by the kernel volume (the Khronos executor ignores it for debox)."""
    text = ("version 1.0;\ngraph G( x ) -> ( y )\n{\n    x = external(shape = [1, 1, 2, 2]);\n"
            "    y = debox(x, size = [1, 1, 2, 2], stride = [1, 1, 2, 2], padding = [(0,0),(0,0),(0,0),(0,0)], "
            "normalize = true);\n}\n")
    folder = str(tmp_path / "m")
    make_container(folder, text)
    x = np.array([[[[1.0, 2.0], [3.0, 4.0]]]], np.float32)
    (y,) = run_ours(folder, [x])
    want = np.repeat(np.repeat(x, 2, axis=2), 2, axis=3) / 4.0
    np.testing.assert_allclose(y, want)


def test_alexnet_runs(tmp_path) -> None:  # noqa: ANN001
    """The spec's AlexNet (App. C.1) imports with random weights and runs; compared with Khronos if present."""
    folder = str(tmp_path / "alexnet")
    with open(os.path.join(ROOT, "tests", "data", "nnef", "alexnet.nnef")) as f:
        make_container(folder, f.read(), scale=0.02)
    inputs = random_inputs(folder)
    ours = run_ours(folder, inputs)
    assert ours[0].shape == (1, 1000, 1, 1)
    np.testing.assert_allclose(ours[0].sum(axis=1), 1.0, rtol=1e-4)
    if os.path.exists(KHRONOS_PY):
        assert_close(ours, run_khronos(folder, inputs, str(tmp_path)), rtol=1e-4, atol=1e-6)


def test_error_names_op_and_line(tmp_path) -> None:  # noqa: ANN001
    from nnkiln.ir.errors import NnefError

    text = ("version 1.0;\ngraph G( x ) -> ( y )\n{\n    x = external(shape = [1, 1, 4, 4]);\n"
            "    y = debox(x, size = [1, 1, 2, 2], border = 'replicate', padding = [(0,0),(0,0),(0,0),(0,0)]);\n}\n")
    folder = str(tmp_path / "m")
    make_container(folder, text)
    with pytest.raises(NnefError) as err:
        load_nnef(folder)
    assert err.value.line == 5 and "debox" in str(err.value) and "not supported" in str(err.value)


def test_locations_and_names(tmp_path) -> None:  # noqa: ANN001
    from nnkiln.ir.text import print_module

    folder = str(tmp_path / "m")
    make_container(folder, CASES["conv"])
    text = print_module(load_nnef(folder))
    assert 'nnkiln.name = "x"' in text and 'nnkiln.name = "y"' in text
    assert "tosa.conv2d" in text


def test_graph_quant_linear_pseudo_quantization(tmp_path) -> None:  # noqa: ANN001
    """§7.1: a graph.quant entry acts as linear_quantize applied right after the tensor."""
    text = ("version 1.0;\ngraph G( x ) -> ( y )\n{\n    x = external(shape = [1, 2, 2, 2]);\n"
            "    y = relu(x);\n}\n")
    folder = str(tmp_path / "m")
    make_container(folder, text)
    with open(os.path.join(folder, "graph.quant"), "w") as f:
        f.write('"y": linear_quantize(min = 0.0, max = 1.5, bits = 2);\n')
    x = np.array([0.2, 0.3, 0.74, 0.76, 1.2, 2.0, -1.0, 1.0], np.float32).reshape(1, 2, 2, 2)
    (y,) = run_ours(folder, [x])
    # grid step 0.5: q = floor(clamp(relu(x))/0.5 + 0.5) * 0.5
    want = np.array([0.0, 0.5, 0.5, 1.0, 1.0, 1.5, 0.0, 1.0], np.float32).reshape(1, 2, 2, 2)
    np.testing.assert_allclose(y, want, atol=1e-6)


def test_quantized_dat_variable_is_decoded(tmp_path) -> None:  # noqa: ANN001
    from nnkiln.frontends.nnef.tensor_file import ItemType

    text = ("version 1.0;\ngraph G( x ) -> ( y )\n{\n    x = external(shape = [1, 4]);\n"
            "    w = variable(shape = [1, 4], label = 'w');\n    y = add(x, w);\n}\n")
    folder = str(tmp_path / "m")
    make_container(folder, text)
    vals = np.array([[0.0, 1.0, 2.0, 3.0]], np.float32)
    with open(os.path.join(folder, "w.dat"), "wb") as f:
        f.write(write_tensor(vals, item_type=ItemType.LINEAR_QUANTIZED, bits=2, min=0.0, max=3.0))
    (y,) = run_ours(folder, [np.zeros((1, 4), np.float32)])
    np.testing.assert_allclose(y, vals, atol=1e-6)  # codes 0..3 map to min + q/3·(max-min)


@pytest.mark.parametrize("a_shape,b_shape,ta,tb", [((1, 3, 4), (2, 5, 3), True, True), ((2, 1, 3, 4), (1, 3, 4, 2), False, False)])
def test_matmul_batch_broadcast_numpy(a_shape, b_shape, ta: bool, tb: bool, tmp_path) -> None:  # noqa: ANN001
    """§4.7: the leading dims broadcast as in binary ops. numpy's matmul is the oracle: the Khronos executor
    reads past its buffers when a batch dim broadcasts (values like 1e+40 in the second batch)."""
    text = ("version 1.0;\ngraph G( a, b ) -> ( y )\n{\n"
            f"    a = external(shape = {list(a_shape)});\n    b = external(shape = {list(b_shape)});\n"
            f"    y = matmul(a, b, transposeA = {str(ta).lower()}, transposeB = {str(tb).lower()});\n}}\n")
    folder = str(tmp_path / "m")
    make_container(folder, text)
    a, b = random_inputs(folder)
    (y,) = run_ours(folder, [a, b])
    at = np.swapaxes(a, -1, -2) if ta else a
    bt = np.swapaxes(b, -1, -2) if tb else b
    np.testing.assert_allclose(y, np.matmul(at.astype(np.float64), bt.astype(np.float64)), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("border", ["constant", "replicate", "reflect", "reflect-even"])
def test_argmax_pool_sample_desample_borders_numpy(border: str, tmp_path) -> None:  # noqa: ANN001
    """§4.3.3 with a dilated, strided, asymmetrically padded window and each border mode of §4.3 (numpy's pad
    modes: reflect = in[-i], symmetric = in[-i-1]); desample scatters back where index[p] == j."""
    size, stride, dil, pads = (1, 1, 2, 3), (1, 1, 2, 1), (1, 1, 2, 1), [(0, 0), (0, 0), (1, 2), (2, 0)]
    win = (f"size = {list(size)}, stride = {list(stride)}, dilation = {list(dil)}, "
           f"padding = [{', '.join(f'({p}, {q})' for p, q in pads)}]")
    text = ("version 1.0;\ngraph G( x ) -> ( i, s, y )\n{\n    x = external(shape = [1, 2, 7, 6]);\n"
            f"    i = argmax_pool(x, {win}, border = '{border}');\n    s = sample(x, i, {win}, border = '{border}');\n"
            f"    y = desample(s, i, {win}, output_shape = [1, 2, 7, 6]);\n}}\n")
    folder = str(tmp_path / "m")
    make_container(folder, text)
    x = np.random.default_rng(5).standard_normal((1, 2, 7, 6)).astype(np.float32)
    i, s, y = run_ours(folder, [x])
    mode = {"constant": "constant", "replicate": "edge", "reflect": "reflect", "reflect-even": "symmetric"}[border]
    xp = np.pad(x, pads, mode=mode)
    out = [(xp.shape[a] - ((size[a] - 1) * dil[a] + 1)) // stride[a] + 1 for a in range(4)]
    taps = np.stack([xp[tuple(slice(j[a] * dil[a], j[a] * dil[a] + (out[a] - 1) * stride[a] + 1, stride[a])
                              for a in range(4))] for j in np.ndindex(*size)], axis=-1)
    want_i, want_s = np.argmax(taps, axis=-1), taps.max(axis=-1)
    np.testing.assert_array_equal(i, want_i)
    np.testing.assert_array_equal(s, want_s)
    want_y = np.zeros(x.shape, np.float64)
    for p in np.ndindex(*want_s.shape):
        j = np.unravel_index(want_i[p], size)
        o = tuple(p[a] * stride[a] + j[a] * dil[a] - pads[a][0] for a in range(4))
        if all(0 <= o[a] < x.shape[a] for a in range(4)):
            want_y[o] += want_s[p]
    np.testing.assert_allclose(y, want_y, rtol=1e-6, atol=1e-6)
