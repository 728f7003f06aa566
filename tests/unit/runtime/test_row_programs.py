"""Row programs (planned by ``analysis.row_programs``, run by ``kernels.rows``: ``native/eltwise_rows.c``) and the
float32 gather / transpose fast paths, against the reference interpreter's kernels applied one op at a time.

The hand-made blobs get the edits the compiler's rt-level passes would make (``fold-transposes-into-operands``,
then ``fuse-row-programs``: the same planners, applied to the task list). Every chain runs twice: with the
native library and with the numpy interpreter of row programs (``_LIB`` forced to None). Expected values: the reference kernels (the spec's pseudocode)
op by op, as the unfused graph would compute; float results within 1e-5 relative (native exp/tanh
are a few ulp from numpy's), NaN where the reference has NaN, infinities equal.
"""

from __future__ import annotations

import ctypes
from types import SimpleNamespace

import numpy as np
import pytest

from nnkiln.analysis import operand_transposes, row_programs
from nnkiln.analysis.task_edits import apply_to_tasks
from nnkiln.blob.writer import BlobBuilder, encode
from nnkiln.errors import NnkilnError
from nnkiln.kinds import Kind
from nnkiln.reference.registry import KernelCall, load_kernels
from nnkiln.runtime import load_blob
from nnkiln.runtime.kernels import rows as rows_mod

F = Kind.F32
KERNELS = load_kernels(with_ir=False)
RNG = np.random.default_rng(2024)


def _ref(name: str, inputs: list[np.ndarray], attrs: dict | None = None) -> np.ndarray:
    shape = np.broadcast_shapes(*(a.shape for a in inputs)) if not name.startswith("tosa.reduce") else tuple(
        1 if i == attrs["axis"] else d for i, d in enumerate(inputs[0].shape))  # type: ignore[index]
    kinds = [Kind.I32 if a.dtype == np.int32 else F for a in inputs]
    call = KernelCall(name=name, inputs=inputs, attrs=dict(attrs or {}), out_kinds=[F],
                      out_dtypes=[np.dtype(np.float32)], out_shapes=[tuple(shape)], in_kinds=kinds)
    with np.errstate(all="ignore"):
        return np.asarray(KERNELS[name](call)[0], np.float32)


def _close(actual: np.ndarray, expected: np.ndarray) -> None:
    assert actual.shape == expected.shape and actual.dtype == np.float32
    nan = np.isnan(expected)
    np.testing.assert_array_equal(np.isnan(actual), nan)
    inf = np.isinf(expected)
    np.testing.assert_array_equal(actual[inf], expected[inf])
    fin = ~nan & ~inf
    scale = max(float(np.abs(expected[fin]).max()) if fin.any() else 0.0, 1e-30)
    np.testing.assert_allclose(actual[fin], expected[fin], rtol=1e-5, atol=1e-6 * scale)


@pytest.fixture(params=[pytest.param("native", marks=pytest.mark.native), "numpy"])
def path(request, monkeypatch):  # noqa: ANN001, ANN201
    if request.param == "numpy":
        monkeypatch.setattr(rows_mod, "_LIB", None)
    return request.param


def _load(b: BlobBuilder):  # noqa: ANN202
    """The blob of ``b`` with the compiler's rt-level edits applied, loaded; ``exe.groups``: the tasks (indices
    after the transposes were folded) of each row program."""
    b.tasks[:] = apply_to_tasks(b.tasks, operand_transposes.plan(b.tasks, b.buffers))
    edits = row_programs.plan(b.tasks, b.buffers)
    b.tasks[:] = apply_to_tasks(b.tasks, edits)
    exe = load_blob(encode(b.finish()))
    exe.groups = [list(e.tasks) for e in edits]
    assert exe.stats["kernel_calls"] == len(exe.blob.tasks)
    return exe


def _groups(exe) -> list:  # noqa: ANN001
    return [SimpleNamespace(tasks=g) for g in exe.groups]


class Net:
    """A small blob of tasks over arena buffers (each intermediate its own region unless given)."""

    def __init__(self) -> None:
        self.b = BlobBuilder()
        self.off = 0
        self.feed: dict[str, np.ndarray] = {}

    def input(self, name: str, a: np.ndarray) -> int:
        self.feed[name] = a
        return self.b.add_io(name, F, a.shape, output=False)

    def const(self, a: np.ndarray) -> int:
        return self.b.add_const(np.asarray(a, np.float32), F)

    def arena(self, shape: tuple[int, ...], offset: int | None = None) -> int:
        if offset is None:
            offset = self.off
            self.off += (int(np.prod(shape)) * 4 + 63) // 64 * 64
        return self.b.add_arena(F, shape, offset)

    def task(self, kernel: str, ins: list[int], out: int, attrs: dict | None = None, posts: list | None = None) -> int:
        self.b.add_task(kernel, ins, [out], attrs=attrs or {}, post_ops=posts or [])
        return out

    def run(self, out_shape: tuple[int, ...], last_in: int) -> tuple[np.ndarray, object]:
        o = self.b.add_io("out", F, out_shape, output=True)
        self.b.add_task("buf.copy", [last_in], [o])
        exe = _load(self.b)
        return exe.run(self.feed)["out"], exe


def _softmax_net(x: np.ndarray) -> tuple[np.ndarray, object]:
    """softmax over the last non-trivial axis: reduce_max, sub+exp, reduce_sum+reciprocal, mul."""
    n = Net()
    xi = n.input("x", x)
    axis = x.ndim - 1
    while x.shape[axis] == 1 and axis > 0:
        axis -= 1
    red = tuple(1 if i == axis else d for i, d in enumerate(x.shape))
    m = n.task("tosa.reduce_max", [xi], n.arena(red), {"axis": axis})
    e = n.task("tosa.sub", [xi, m], n.arena(x.shape), posts=[{"kernel": "tosa.exp", "attrs": {}}])
    s = n.task("tosa.reduce_sum", [e], n.arena(red), {"axis": axis}, [{"kernel": "tosa.reciprocal", "attrs": {}}])
    y = n.task("tosa.mul", [e, s], n.arena(x.shape), {"shift": 0})
    return n.run(x.shape, y)


def _softmax_ref(x: np.ndarray) -> np.ndarray:
    axis = x.ndim - 1
    while x.shape[axis] == 1 and axis > 0:
        axis -= 1
    m = _ref("tosa.reduce_max", [x], {"axis": axis})
    e = _ref("tosa.exp", [_ref("tosa.sub", [x, m])])
    s = _ref("tosa.reciprocal", [_ref("tosa.reduce_sum", [e], {"axis": axis})])
    return _ref("tosa.mul", [e, s], {"shift": 0})


@pytest.mark.parametrize("shape", [(7, 13), (256, 128, 1), (2, 3, 5, 33), (1, 1), (300, 1000), (5, 1)])
def test_softmax_chain(path, shape) -> None:  # noqa: ANN001
    x = (RNG.standard_normal(shape) * 4).astype(np.float32)
    got, exe = _softmax_net(x)
    _close(got, _softmax_ref(x))
    if path == "native" and x.size > 1:
        assert len(_groups(exe)) == 1 and _groups(exe)[0].tasks == [0, 1, 2, 3]


def test_softmax_nan_inf_rows(path) -> None:  # noqa: ANN001
    x = RNG.standard_normal((6, 9)).astype(np.float32)
    x[1, 3] = np.nan
    x[2, 0] = np.inf          # inf - inf = NaN in the reference too
    x[3, :] = -np.inf         # exp(-inf - -inf) = NaN
    x[4, 2] = -np.inf         # exp(-inf) = 0
    x[5, 5] = 1e30
    got, _ = _softmax_net(x)
    _close(got, _softmax_ref(x))


def _layernorm(n: Net, x: int, shape: tuple[int, ...], gamma: np.ndarray, beta: np.ndarray, eps: float) -> int:
    rows, c = int(np.prod(shape[:-1])), shape[-1]
    x2 = n.b.add_view(x, F, (rows, c)) if shape != (rows, c) else x
    inv_c = n.const(np.full((1, 1), 1.0 / c))
    mean = n.task("tosa.reduce_sum", [x2, inv_c], n.arena((rows, 1)), {"axis": 1},
                  [{"kernel": "tosa.mul", "attrs": {"shift": 0}, "operand": 1}])
    d = n.task("tosa.sub", [x2, mean], n.arena((rows, c)))
    sq = n.task("tosa.mul", [d, d], n.arena((rows, c)), {"shift": 0})
    rstd = n.task("tosa.reduce_sum", [sq, inv_c, n.const(np.full((1, 1), eps))], n.arena((rows, 1)), {"axis": 1},
                  [{"kernel": "tosa.mul", "attrs": {"shift": 0}, "operand": 1},
                   {"kernel": "tosa.add", "attrs": {}, "operand": 2}, {"kernel": "tosa.rsqrt", "attrs": {}}])
    yb = n.arena((rows, c))
    n.task("tosa.mul", [d, rstd], yb, {"shift": 0})
    y3 = n.b.add_view(yb, F, shape)
    g = n.const(gamma.reshape((1,) * (len(shape) - 1) + (c,)))
    bt = n.const(beta.reshape((1,) * (len(shape) - 1) + (c,)))
    return n.task("tosa.mul", [y3, g, bt], n.arena(shape), {"shift": 0},
                  [{"kernel": "tosa.add", "attrs": {}, "operand": 2}])


def _layernorm_ref(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    rows, c = int(np.prod(x.shape[:-1])), x.shape[-1]
    x2 = x.reshape(rows, c)
    inv_c = np.full((1, 1), 1.0 / c, np.float32)
    mean = _ref("tosa.mul", [_ref("tosa.reduce_sum", [x2], {"axis": 1}), inv_c], {"shift": 0})
    d = _ref("tosa.sub", [x2, mean])
    var = _ref("tosa.mul", [_ref("tosa.reduce_sum", [_ref("tosa.mul", [d, d], {"shift": 0})], {"axis": 1}), inv_c],
               {"shift": 0})
    rstd = _ref("tosa.rsqrt", [_ref("tosa.add", [var, np.full((1, 1), eps, np.float32)])])
    y = _ref("tosa.mul", [d, rstd], {"shift": 0}).reshape(x.shape)
    g = gamma.reshape((1,) * (x.ndim - 1) + (c,)).astype(np.float32)
    b = beta.reshape((1,) * (x.ndim - 1) + (c,)).astype(np.float32)
    return _ref("tosa.add", [_ref("tosa.mul", [y, g], {"shift": 0}), b])


@pytest.mark.parametrize("shape", [(1, 9, 13), (4, 1), (3, 5, 768), (1, 128, 128)])
def test_layernorm_chain(path, shape) -> None:  # noqa: ANN001
    x = (RNG.standard_normal(shape) * 3 + 1).astype(np.float32)
    gamma, beta = RNG.standard_normal(shape[-1]).astype(np.float32), RNG.standard_normal(shape[-1]).astype(np.float32)
    n = Net()
    y = _layernorm(n, n.input("x", x), shape, gamma, beta, 1e-5)
    got, exe = n.run(shape, y)
    _close(got, _layernorm_ref(x, gamma, beta, 1e-5))
    if path == "native" and shape[-1] > 1:
        assert [g.tasks for g in _groups(exe)] == [[0, 1, 2, 3, 4, 5]]


COEF = (1.1283797, 0.10276548, -1.8438157e-4, -6.257216e-4, 8.971341e-5, -5.985834e-6, 1.5896896e-7)


def _gelu_net(n: Net, f1: int, shape: tuple[int, ...]) -> int:
    """0.5·x·(1 + erf(x/√2)) with erf as the ONNX frontend lowers it (clamp, Horner, tanh)."""
    k = lambda v: n.const(np.full((1,) * len(shape), v))  # noqa: E731
    xc = n.task("tosa.mul", [f1, k(2 ** -0.5)], n.arena(shape), {"shift": 0},
                [{"kernel": "tosa.clamp", "attrs": {"min_val": -4.0, "max_val": 4.0}}])
    y = n.task("tosa.mul", [xc, xc], n.arena(shape), {"shift": 0})
    ins = [y, k(COEF[-1])]
    posts = []
    for c in COEF[-2:0:-1]:
        ins.append(k(c))
        posts.append({"kernel": "tosa.add", "attrs": {}, "operand": len(ins) - 1})
        ins.append(y)
        posts.append({"kernel": "tosa.mul", "attrs": {"shift": 0}, "operand": len(ins) - 1})
    ins.append(k(COEF[0]))
    posts.append({"kernel": "tosa.add", "attrs": {}, "operand": len(ins) - 1})
    ins.append(xc)
    posts.append({"kernel": "tosa.mul", "attrs": {"shift": 0}, "operand": len(ins) - 1})
    posts.append({"kernel": "tosa.tanh", "attrs": {}})
    for name, v in (("tosa.add", k(1.0)), ("tosa.mul", f1), ("tosa.mul", k(0.5))):
        ins.append(v)
        posts.append({"kernel": name, "attrs": {"shift": 0} if name == "tosa.mul" else {}, "operand": len(ins) - 1})
    return n.task("tosa.mul", ins, n.arena(shape), {"shift": 0}, posts)


def _gelu_ref(x: np.ndarray) -> np.ndarray:
    k = lambda v: np.full((1,) * x.ndim, v, np.float32)  # noqa: E731
    mul = lambda a, b: _ref("tosa.mul", [a, b], {"shift": 0})  # noqa: E731
    add = lambda a, b: _ref("tosa.add", [a, b])  # noqa: E731
    xc = _ref("tosa.clamp", [mul(x, k(2 ** -0.5))], {"min_val": -4.0, "max_val": 4.0})
    y = mul(xc, xc)
    q = mul(y, k(COEF[-1]))
    for c in COEF[-2:0:-1]:
        q = mul(add(q, k(c)), y)
    q = add(q, k(COEF[0]))
    t = _ref("tosa.tanh", [mul(q, xc)])
    return mul(mul(add(t, k(1.0)), x), k(0.5))


@pytest.mark.parametrize("shape", [(1, 128, 512), (3, 7, 11), (2, 3072), (1, 1)])
def test_gelu_erf_chain(path, shape) -> None:  # noqa: ANN001
    x = (RNG.standard_normal(shape) * 3).astype(np.float32)
    flat = x.reshape(-1)
    flat[:8] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, 50.0, -50.0][:flat.size]
    n = Net()
    y = _gelu_net(n, n.input("x", x), shape)
    got, exe = n.run(shape, y)
    _close(got, _gelu_ref(x))
    if path == "native" and x.size > 1:
        assert [g.tasks for g in _groups(exe)] == [[0, 1, 2]]


def test_elementwise_ops_broadcasts_and_specials(path) -> None:  # noqa: ANN001
    """Every row-program op, operands full / channel / per-row / scalar, with NaN, ±inf, ±0."""
    shape = (5, 7)
    x = RNG.standard_normal(shape).astype(np.float32) * 5
    x[0, :6] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40]
    x[1, :4] = [100.0, -100.0, 88.8, -104.0]
    ch = RNG.standard_normal((1, 7)).astype(np.float32)
    rw = RNG.standard_normal((5, 1)).astype(np.float32)
    rw[2, 0] = np.nan
    sc = np.full((1, 1), 0.75, np.float32)
    for name, other in (("tosa.add", ch), ("tosa.sub", rw), ("tosa.mul", sc), ("tosa.maximum", ch),
                        ("tosa.minimum", rw), ("tosa.sub", x[::-1].copy())):
        n = Net()
        xi = n.input("x", x)
        attrs = {"shift": 0} if name == "tosa.mul" else {}
        out = n.task(name, [xi, n.const(other)], n.arena(shape), attrs)
        got, _ = n.run(shape, out)
        _close(got, _ref(name, [x, other], attrs))
        # the broadcast operand first
        n = Net()
        xi = n.input("x", x)
        out = n.task(name, [n.const(other), xi], n.arena(shape), attrs)
        got, _ = n.run(shape, out)
        _close(got, _ref(name, [other, x], attrs))
    for name in ("tosa.exp", "tosa.tanh", "tosa.sigmoid", "tosa.abs", "tosa.negate", "tosa.reciprocal", "tosa.rsqrt"):
        n = Net()
        out = n.task(name, [n.input("x", x)], n.arena(shape))
        got, _ = n.run(shape, out)
        _close(got, _ref(name, [x]))
    for lo, hi in ((-1.0, 2.0), (0.0, float("inf")), (float("-inf"), 0.5)):
        n = Net()
        out = n.task("tosa.clamp", [n.input("x", x)], n.arena(shape), {"min_val": lo, "max_val": hi})
        got, _ = n.run(shape, out)
        _close(got, _ref("tosa.clamp", [x], {"min_val": lo, "max_val": hi}))


@pytest.mark.parametrize("name", ["tosa.reduce_sum", "tosa.reduce_max", "tosa.reduce_min"])
@pytest.mark.parametrize("c", [1, 7, 8, 16, 33, 1000])
def test_row_reductions(path, name, c) -> None:  # noqa: ANN001
    x = RNG.standard_normal((6, c)).astype(np.float32) * 10
    x[1, c // 2] = np.nan
    x[2, 0] = np.inf
    x[3, c - 1] = -np.inf
    n = Net()
    out = n.task(name, [n.input("x", x)], n.arena((6, 1)), {"axis": 1})
    got, _ = n.run((6, 1), out)
    _close(got, _ref(name, [x], {"axis": 1}))


def test_intermediate_read_later_is_stored(path) -> None:  # noqa: ANN001
    """A value computed inside a group and read by a later (non-row) task must reach memory."""
    x = RNG.standard_normal((4, 6)).astype(np.float32)
    n = Net()
    xi = n.input("x", x)
    a = n.task("tosa.exp", [xi], n.arena((4, 6)))
    b = n.task("tosa.mul", [a, n.const(np.full((1, 1), 2.0))], n.arena((4, 6)), {"shift": 0})
    t = n.task("tosa.transpose", [a], n.arena((6, 4)), {"perms": (1, 0)})  # reads ``a`` after the group
    t2 = n.b.add_view(t, F, (4, 6))
    s = n.task("tosa.add", [b, t2], n.arena((4, 6)))
    got, _ = n.run((4, 6), s)
    ea = _ref("tosa.exp", [x])
    _close(got, _ref("tosa.add", [_ref("tosa.mul", [ea, np.full((1, 1), 2.0, np.float32)], {"shift": 0}),
                                  ea.T.copy().reshape(4, 6)]))


def test_in_place_and_reused_regions(path) -> None:  # noqa: ANN001
    """Outputs written over the group's own inputs (the static allocator's address reuse)."""
    x = RNG.standard_normal((8, 16)).astype(np.float32)
    n = Net()
    xi = n.input("x", x)
    a = n.task("tosa.abs", [xi], n.arena((8, 16), 0))
    b = n.task("tosa.add", [a, n.const(np.ones((1, 16)))], n.arena((8, 16), 512))
    c = n.task("tosa.mul", [b, a], n.arena((8, 16), 0), {"shift": 0})      # over ``a``, in place
    d = n.task("tosa.sub", [c, b], n.arena((8, 16), 512))                   # over ``b``, in place
    # a partly overlapping region: written over the second half of ``d`` -> must not be merged unsafely
    e = n.task("tosa.negate", [d], n.arena((8, 16), 256))
    f = n.task("tosa.add", [e, n.b.add_view(d, F, (8, 16))], n.arena((8, 16), 1024))
    got, _ = n.run((8, 16), f)
    ea = np.abs(x)
    eb = ea + np.float32(1)
    ec = eb * ea
    ed = ec - eb
    ee = -ed
    # ``e`` overwrote bytes 256..768 of the arena: ``d`` (512..1024) now holds e's first half at 512..768
    d_after = np.concatenate([ee.reshape(-1)[64:128], ed.reshape(-1)[64:]]).reshape(8, 16)
    _close(got, ee + d_after)


def test_multi_executor_groups_only_between_barriers(path) -> None:  # noqa: ANN001
    x = RNG.standard_normal((16, 32)).astype(np.float32)
    b = BlobBuilder()
    xi = b.add_io("x", F, x.shape, output=False)
    out = b.add_io("out", F, x.shape, output=True)
    a1, a2, a3, a4 = (b.add_arena(F, x.shape, k * 2048) for k in range(4))
    bar0, bar1 = b.add_barrier(0), b.add_barrier(1)
    b.add_task("tosa.exp", [xi], [a1], executor_index=0)
    b.add_task("tosa.negate", [a1], [a2], executor_index=0, updates=[bar0])
    b.add_task("tosa.abs", [xi], [a3], executor_index=1, waits=[bar0])
    b.add_task("tosa.add", [a3, a2], [a4], executor_index=1, updates=[bar1])
    b.add_task("tosa.tanh", [a4], [out], executor_index=0, waits=[bar1])
    exe = _load(b)
    for _ in range(3):
        got = exe.run({"x": x})["out"]
        _close(got, _ref("tosa.tanh", [_ref("tosa.add", [np.abs(x), -_ref("tosa.exp", [x])])]))
    if path == "native":
        assert sorted(g.tasks for g in _groups(exe)) == [[0, 1], [2, 3], [4]]


@pytest.mark.native
def test_native_exp_tanh_accuracy() -> None:
    lib = rows_mod.rows_lib()
    x = np.concatenate([np.linspace(-103.9, 88.7, 200001, dtype=np.float32),
                        (RNG.standard_normal(100000) * 0.1).astype(np.float32)])
    for fn, ref in ((lib.nk_exp, np.exp), (lib.nk_tanh, np.tanh)):
        y = np.empty_like(x)
        fn(ctypes.c_void_p(x.ctypes.data), ctypes.c_void_p(y.ctypes.data), ctypes.c_ssize_t(x.size))
        r = ref(x.astype(np.float64))
        ok = np.abs(r) > 1.2e-38  # normal results
        assert np.max(np.abs(y[ok] - r[ok]) / np.abs(r[ok])) < 1e-6
    sp = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 89.0, -104.0, 1e-40], np.float32)
    y = np.empty_like(sp)
    lib.nk_exp(ctypes.c_void_p(sp.ctypes.data), ctypes.c_void_p(y.ctypes.data), ctypes.c_ssize_t(sp.size))
    assert np.isnan(y[0]) and y[1] == np.inf and y[2] == 0 and y[3] == 1 and y[4] == 1 and y[5] == np.inf
    assert y[6] == 0 and y[7] == 1
    lib.nk_tanh(ctypes.c_void_p(sp.ctypes.data), ctypes.c_void_p(y.ctypes.data), ctypes.c_ssize_t(sp.size))
    assert np.isnan(y[0]) and y[1] == 1 and y[2] == -1 and y[3] == 0 and np.signbit(y[4]) and y[5] == 1
    assert y[6] == -1 and y[7] == np.float32(1e-40)
    # saturation as numpy's float32 tanh: 1 - 2^-24 below |x| = 10, then 1
    sat = np.array([9.35, -9.99, 10.0, -10.0], np.float32)
    y = np.empty_like(sat)
    lib.nk_tanh(ctypes.c_void_p(sat.ctypes.data), ctypes.c_void_p(y.ctypes.data), ctypes.c_ssize_t(sat.size))
    np.testing.assert_array_equal(y, np.float32([1 - 2**-24, -(1 - 2**-24), 1, -1]))


def test_gather_and_transpose_fast_paths() -> None:
    values = RNG.standard_normal((2, 50, 7)).astype(np.float32)
    idx = RNG.integers(0, 50, (2, 9)).astype(np.int32)
    b = BlobBuilder()
    vi = b.add_io("v", F, values.shape, output=False)
    ii = b.add_io("i", Kind.I32, idx.shape, output=False)
    g = b.add_arena(F, (2, 9, 7), 0)
    out = b.add_io("out", F, (7, 2, 9), output=True)
    b.add_task("tosa.gather", [vi, ii], [g])
    b.add_task("tosa.transpose", [g], [out], attrs={"perms": (2, 0, 1)})
    exe = load_blob(encode(b.finish()))
    got = exe.run({"v": values, "i": idx})["out"]
    expected = np.stack([values[n][idx[n]] for n in range(2)]).transpose(2, 0, 1)  # GATHER pseudocode
    np.testing.assert_array_equal(got, expected)
    bad = idx.copy()
    bad[1, 3] = 50
    with pytest.raises(NnkilnError, match="REQUIRE"):
        exe.run({"v": values, "i": bad})


@pytest.mark.parametrize("shape,perms", [((1, 3, 9, 11), (0, 2, 3, 1)), ((2, 5, 7), (1, 2, 0)),
                                         ((4, 6, 2, 3), (3, 0, 2, 1)), ((3, 8, 5), (0, 2, 1)), ((2, 9, 4), (1, 0, 2))])
def test_transposes_with_a_narrow_innermost_output_axis(shape, perms) -> None:  # noqa: ANN001
    """Per-channel copies (narrow last output axis from an outer input axis) equal numpy's transpose."""
    x = RNG.standard_normal(shape).astype(np.float32)
    b = BlobBuilder()
    xi = b.add_io("x", F, shape, output=False)
    out = b.add_io("out", F, tuple(shape[p] for p in perms), output=True)
    b.add_task("tosa.transpose", [xi], [out], attrs={"perms": perms})
    got = load_blob(encode(b.finish())).run({"x": x})["out"]
    np.testing.assert_array_equal(got, x.transpose(perms))  # TRANSPOSE: output[i] = input[perms-permuted i]


def test_gemm_post_ops_move_into_the_next_group(path) -> None:  # noqa: ANN001
    """matmul + bias + residual, then layer norm: the GEMM runs alone, its post-ops start the group."""
    x = RNG.standard_normal((1, 12, 16)).astype(np.float32)
    w = RNG.standard_normal((1, 16, 16)).astype(np.float32) * 0.3
    bias = RNG.standard_normal((1, 1, 16)).astype(np.float32)
    gamma, beta = RNG.standard_normal(16).astype(np.float32), RNG.standard_normal(16).astype(np.float32)
    n = Net()
    xi = n.input("x", x)
    mm = n.task("tosa.matmul", [xi, n.const(w), n.const(bias), xi], n.arena((1, 12, 16)), {"A_zp": 0, "B_zp": 0},
                [{"kernel": "tosa.add", "attrs": {}, "operand": 2}, {"kernel": "tosa.add", "attrs": {}, "operand": 3}])
    y = _layernorm(n, mm, (1, 12, 16), gamma, beta, 1e-5)
    fc = n.task("tosa.fully_connected", [n.b.add_view(y, F, (12, 16)), n.const(w[0].T.copy()), n.const(bias[0, 0])],
                n.arena((12, 16)), {"input_zp": 0, "weight_zp": 0},
                [{"kernel": "tosa.clamp", "attrs": {"min_val": 0.0, "max_val": 6.0}}])
    got, exe = n.run((12, 16), fc)
    r = _ref("tosa.add", [_ref("tosa.add", [np.matmul(x, w), bias]), x])
    ln = _layernorm_ref(r, gamma, beta, 1e-5)
    expected = np.clip(ln[0] @ w[0] + bias[0, 0], 0, 6)  # FULLY_CONNECTED: x·wᵀ + bias (weights stored [OC, IC])
    _close(got, expected)
    if path == "native":
        assert [g.tasks for g in _groups(exe)] == [[0, 1, 2, 3, 4, 5, 6], [7]]


@pytest.mark.parametrize("clobber", [False, True])
def test_transpose_folded_into_matmul(path, clobber) -> None:  # noqa: ANN001
    """TRANSPOSE feeding only a MATMUL: the MATMUL reads the strided view (not when the transpose's
    input is overwritten before the MATMUL runs)."""
    q = RNG.standard_normal((6, 2, 4)).astype(np.float32)
    k = RNG.standard_normal((2, 4, 6)).astype(np.float32)
    n = Net()
    qi = n.input("q", q)
    x = n.task("tosa.abs", [qi], n.arena((6, 2, 4), 0))
    t = n.task("tosa.transpose", [x], n.arena((2, 6, 4), 256), {"perms": (1, 0, 2)})
    if clobber:  # overwrite the transpose's input before the matmul reads the transposed data
        n.task("tosa.negate", [n.input("z", np.ones((6, 2, 4), np.float32))], n.arena((6, 2, 4), 0))
    m = n.task("tosa.matmul", [t, n.const(k)], n.arena((2, 6, 6), 512), {"A_zp": 0, "B_zp": 0})
    got, exe = n.run((2, 6, 6), m)
    _close(got, np.matmul(np.abs(q).transpose(1, 0, 2), k))
    folded = not any(t.kernel == "tosa.transpose" for t in exe.blob.tasks)
    assert folded == (not clobber)


@pytest.mark.parametrize("read_later", [False, True])
def test_result_planned_over_a_computed_value(path: str, read_later: bool) -> None:  # noqa: ARG001
    """Softmax as the importers lower it, with the plan of a real compile: the row sums land over the scaled
    input, which the group computed and which is dead by then. The group keeps going (the scaled input's register
    is dropped, never stored); when a later task still reads the scaled input's other bytes, it stops there."""
    rows, c = 64, 32
    x = (RNG.standard_normal((rows, c, 1)) * 4).astype(np.float32)
    b = BlobBuilder()
    xi = b.add_io("x", F, x.shape, output=False)
    out = b.add_io("y", F, x.shape, output=True)
    s = b.add_const(np.array([[[0.125]]], np.float32), F)
    scaled = b.add_arena(F, x.shape, 0)
    mx = b.add_arena(F, (rows, 1, 1), rows * c * 4)
    e = b.add_arena(F, x.shape, rows * c * 4 + 4096)
    sums = b.add_arena(F, (rows, 1, 1), 0)  # over the scaled input's first bytes
    b.add_task("tosa.mul", [xi, s], [scaled], attrs={"shift": 0})
    b.add_task("tosa.reduce_max", [scaled], [mx], attrs={"axis": 1})
    b.add_task("tosa.sub", [scaled, mx], [e], post_ops=[{"kernel": "tosa.exp", "attrs": {}}])
    b.add_task("tosa.reduce_sum", [e], [sums], attrs={"axis": 1},
               post_ops=[{"kernel": "tosa.reciprocal", "attrs": {}}])
    b.add_task("tosa.mul", [e, sums], [out], attrs={"shift": 0})
    tail = None
    if read_later:  # the scaled input's last row, after the sums took its first bytes
        last = b.add_arena(F, (1, c, 1), (rows - 1) * c * 4)
        tail = b.add_io("tail", F, (1, c, 1), output=True)
        b.add_task("tosa.abs", [last], [tail])
    exe = _load(b)
    got = exe.run({"x": x})
    sc = _ref("tosa.mul", [x, np.float32([[[0.125]]])], {"shift": 0})
    ex = _ref("tosa.exp", [_ref("tosa.sub", [sc, _ref("tosa.reduce_max", [sc], {"axis": 1})])])
    _close(got["y"], _ref("tosa.mul", [ex, _ref("tosa.reciprocal", [_ref("tosa.reduce_sum", [ex], {"axis": 1})])],
                          {"shift": 0}))
    if read_later:
        _close(got["tail"], np.abs(sc[-1:]))
    if path == "native":
        groups = [g.tasks for g in _groups(exe)]
        assert groups[0] == ([0, 1, 2] if read_later else [0, 1, 2, 3, 4]), groups
