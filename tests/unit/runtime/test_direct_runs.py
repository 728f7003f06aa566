"""Direct runs (``runtime.direct``): a program that is one chain runs from the caller's arrays in one C call.

Checked: the data-pointer offset agrees with numpy's own address on arrays of every kind (views, transposes,
empty and 0-d arrays); direct runs give bit-identical results to the usual path on a model of two inputs and two
outputs, and are really taken (the usual path is made to fail); int64 token ids are narrowed in C to the int32
input, identically to int32 ids, and ids outside int32 fall back to the usual path's range error; an index out of
the table still reports TOSA's REQUIRE; inputs that need conversion (float64, non-contiguous, lists, a scalar
where an array belongs) take the usual path, with the same results or errors; runs from two threads at once stay
correct.
"""

from __future__ import annotations

import ctypes
import threading

import numpy as np
import onnx
import onnx.helper as oh
import pytest

import nnkiln
from nnkiln.runtime import direct
from nnkiln.runtime.kernels.bound import Chain

pytestmark = pytest.mark.native
RNG = np.random.default_rng(11)


def _two_in_two_out(path: str) -> np.ndarray:
    """y = relu(conv1x1(x) + r), z = conv1x1(x) * 2: two inputs, two outputs, one chain; returns the weights."""
    w = (RNG.standard_normal((16, 8, 1, 1)) * 0.3).astype(np.float32)
    inits = [oh.make_tensor("w", 1, w.shape, w.ravel()), oh.make_tensor("two", 1, [], [2.0])]
    nodes = [oh.make_node("Conv", ["x", "w"], ["c"]), oh.make_node("Add", ["c", "r"], ["s"]),
             oh.make_node("Relu", ["s"], ["y"]), oh.make_node("Mul", ["c", "two"], ["z"])]
    g = oh.make_graph(nodes, "g", [oh.make_tensor_value_info("x", 1, [1, 8, 6, 6]),
                                   oh.make_tensor_value_info("r", 1, [1, 16, 6, 6])],
                      [oh.make_tensor_value_info("y", 1, [1, 16, 6, 6]), oh.make_tensor_value_info("z", 1, [1, 16, 6, 6])],
                      inits)
    onnx.save(oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)]), path)
    return w[:, :, 0, 0].astype(np.float64)


def _gather(path: str, table: np.ndarray) -> None:
    nodes = [oh.make_node("Gather", ["table", "ids"], ["e"], axis=0), oh.make_node("Softmax", ["e"], ["y"], axis=-1)]
    g = oh.make_graph(nodes, "g", [oh.make_tensor_value_info("ids", onnx.TensorProto.INT32, [1, 7])],
                      [oh.make_tensor_value_info("y", 1, [1, 7, table.shape[1]])],
                      [oh.make_tensor("table", 1, table.shape, table.ravel())])
    onnx.save(oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)]), path)


def _usual(exe: nnkiln.Executable) -> nnkiln.Executable:
    exe._direct = None
    return exe


def test_data_offset_reads_numpy_addresses() -> None:
    off = direct.data_offset()
    if off is None:
        pytest.skip("no trusted data offset on this Python")
    base = np.arange(60, dtype=np.float64)
    arrays = [base, base[7:], base.reshape(3, 4, 5).transpose(2, 0, 1), base[::3], np.zeros((0, 4), np.int8),
              np.array(3.5, np.float32), np.ones((2, 2), bool), np.empty(1 << 20, np.uint8)]
    for a in arrays:
        assert ctypes.c_void_p.from_address(id(a) + off).value == a.ctypes.data


def test_direct_runs_are_taken_and_identical(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    path = str(tmp_path / "m.onnx")
    w = _two_in_two_out(path)
    module = nnkiln.load(path)
    exe = nnkiln.compile(module, threads=2)
    assert exe._direct is not None
    plain = _usual(nnkiln.compile(module, threads=2))
    monkeypatch.setattr(Chain, "run_io", lambda *a: (_ for _ in ()).throw(AssertionError("usual path taken")))
    for _ in range(3):
        feed = {"x": RNG.standard_normal((1, 8, 6, 6)).astype(np.float32),
                "r": RNG.standard_normal((1, 16, 6, 6)).astype(np.float32)}
        got = exe.run(feed)
        assert list(got) == ["y", "z"]
        monkeypatch.undo()
        want = plain.run(feed)
        monkeypatch.setattr(Chain, "run_io", lambda *a: (_ for _ in ()).throw(AssertionError("usual path taken")))
        for k in want:
            np.testing.assert_array_equal(got[k], want[k])
        c = np.einsum("nchw,oc->nohw", feed["x"].astype(np.float64), w)
        np.testing.assert_allclose(got["z"], 2 * c, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(got["y"], np.maximum(c + feed["r"], 0), rtol=1e-5, atol=1e-5)


def test_inputs_needing_conversion_take_the_usual_path(tmp_path) -> None:  # noqa: ANN001
    path = str(tmp_path / "m.onnx")
    _two_in_two_out(path)
    exe = nnkiln.compile(nnkiln.load(path), threads=1)
    x = RNG.standard_normal((1, 8, 6, 6)).astype(np.float32)
    r = RNG.standard_normal((1, 16, 6, 6)).astype(np.float32)
    want = exe.run({"x": x, "r": r})
    wide = np.zeros((1, 16, 6, 12), np.float32)
    wide[..., ::2] = r
    for feed in ({"x": x.astype(np.float64), "r": r}, {"x": x, "r": wide[..., ::2]}, {"x": x.tolist(), "r": r},
                 {"x": np.asfortranarray(x), "r": r}):
        got = exe.run(feed)
        for k in want:
            np.testing.assert_array_equal(got[k], want[k])
    with pytest.raises(nnkiln.InputError, match="missing 'r'"):
        exe.run({"x": x})
    with pytest.raises(nnkiln.InputError, match="unknown 'q'"):
        exe.run({"x": x, "r": r, "q": r})
    with pytest.raises(nnkiln.InputError, match="unknown 'q', 1"):  # names of any type are reported
        exe.run({"x": x, "r": r, "q": r, 1: r})
    with pytest.raises(nnkiln.InputError, match="shape"):
        exe.run({"x": x[..., :5], "r": r})
    with pytest.raises(nnkiln.InputError, match="floating point"):
        exe.run({"x": x.astype(np.int32), "r": r})


def test_int64_token_ids_narrowed_in_c(tmp_path) -> None:  # noqa: ANN001
    table = RNG.standard_normal((50, 24)).astype(np.float32)
    path = str(tmp_path / "g.onnx")
    _gather(path, table)
    exe = nnkiln.compile(nnkiln.load(path), threads=1)
    assert exe._direct is not None
    ids = np.array([[0, 3, 49, 7, 7, 1, 20]], np.int64)
    got = exe.run({"ids": ids})["y"]
    np.testing.assert_array_equal(got, exe.run({"ids": ids.astype(np.int32)})["y"])
    e = table[ids[0]]
    expected = np.exp(e - e.max(-1, keepdims=True))
    np.testing.assert_allclose(got[0], expected / expected.sum(-1, keepdims=True), rtol=1e-5)
    with pytest.raises(nnkiln.InputError, match=r"outside the range \[-2147483648, 2147483647\]"):
        exe.run({"ids": np.array([[0, 3, 1 << 40, 7, 7, 1, 20]], np.int64)})
    with pytest.raises(nnkiln.NnkilnError, match="REQUIRE"):
        exe.run({"ids": np.array([[0, 3, 50, 7, 7, 1, 20]], np.int64)})
    np.testing.assert_array_equal(exe.run({"ids": ids})["y"], got)  # nothing left behind by the failures


def test_runs_from_two_threads(tmp_path) -> None:  # noqa: ANN001
    path = str(tmp_path / "m.onnx")
    _two_in_two_out(path)
    exe = nnkiln.compile(nnkiln.load(path), threads=2)
    feeds = [{"x": RNG.standard_normal((1, 8, 6, 6)).astype(np.float32),
              "r": RNG.standard_normal((1, 16, 6, 6)).astype(np.float32)} for _ in range(2)]
    want = [exe.run(f) for f in feeds]
    bad: list[int] = []

    def work(k: int) -> None:
        for _ in range(200):
            got = exe.run(feeds[k])
            if not all(np.array_equal(got[n], want[k][n]) for n in got):
                bad.append(k)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad
