"""Bound native calls (``runtime.kernels.bound``): consecutive native units run as one ``Chain`` call.

Checked: a chain forms over the units between the graph's first and last kernels (those touch the input /
output buffers, which change on every run, and stay unbound); its results are bit-identical to the same
executable run unit by unit, and close to onnxruntime; padded convolutions of different sizes share the
chain's scratch buffer correctly.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnx.helper as oh
import pytest

import nnkiln
from nnkiln.backend.blob_format import Memory
from nnkiln.runtime import executable as exmod
from nnkiln.runtime.kernels import conv as kconv
from nnkiln.runtime.kernels.bound import Chain

pytestmark = pytest.mark.skipif(kconv.native_lib("conv") is None, reason="native library unavailable")
RNG = np.random.default_rng(7)


def _model(path: str) -> None:
    """input -> conv3x3 -> relu -> conv3x3 (8 -> 16) -> depthwise 3x3 -> max pool -> conv3x3 (16 -> 24) -> clip ->
    conv1x1 -> output; every 3x3 conv zero-padded (the scratch sizes differ: 10x10x8 then 6x6x16)."""
    inits, nodes = [], []

    def conv(x: str, y: str, ci: int, co: int, k: int, group: int = 1) -> None:
        w = (RNG.standard_normal((co, ci // group, k, k)) * 0.3).astype(np.float32)
        b = RNG.standard_normal(co).astype(np.float32)
        inits.extend([oh.make_tensor(f"{y}_w", 1, w.shape, w.ravel()), oh.make_tensor(f"{y}_b", 1, [co], b)])
        nodes.append(oh.make_node("Conv", [x, f"{y}_w", f"{y}_b"], [y], kernel_shape=[k, k], pads=[k // 2] * 4,
                                  group=group))

    conv("x", "c1", 3, 8, 3)
    nodes.append(oh.make_node("Relu", ["c1"], ["r1"]))
    conv("r1", "c2", 8, 16, 3)
    conv("c2", "d1", 16, 16, 3, group=16)
    nodes.append(oh.make_node("MaxPool", ["d1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]))
    conv("p1", "c3", 16, 24, 3)
    inits += [oh.make_tensor("lo", 1, [], [0.0]), oh.make_tensor("hi", 1, [], [6.0])]
    nodes.append(oh.make_node("Clip", ["c3", "lo", "hi"], ["r3"]))
    conv("r3", "y", 24, 8, 1)
    g = oh.make_graph(nodes, "g", [oh.make_tensor_value_info("x", 1, [1, 3, 8, 8])],
                      [oh.make_tensor_value_info("y", 1, [1, 8, 4, 4])], inits)
    onnx.save(oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)]), path)


def _chains(exe: nnkiln.Executable) -> list[Chain]:
    return [u for u, _, _, _ in exe._units[0] if isinstance(u, Chain)]


def test_chain_is_identical_to_unit_by_unit(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    path = str(tmp_path / "m.onnx")
    _model(path)
    module = nnkiln.load(path)
    x = {"x": RNG.standard_normal((1, 3, 8, 8)).astype(np.float32)}
    exe = nnkiln.compile(module, threads=1)
    chains = _chains(exe)
    assert len(chains) == 1 and len(chains[0].units) >= 4, [type(u).__name__ for u, _, _, _ in exe._units[0]]
    chain = chains[0]
    assert chain.scratch.size >= 10 * 10 * 8  # the larger padded input
    blob = exe.blob
    io = {i for i, b in enumerate(blob.buffers) if b.memory in (Memory.INPUT, Memory.OUTPUT)}
    for t in chain.tasks:  # no unit of the chain touches a graph input or output
        assert not io & {*blob.tasks[t].ins, *blob.tasks[t].outs}
    got = [exe.run(x)["y"] for _ in range(2)]  # the chain's pre-built arguments stay valid across runs
    monkeypatch.setattr(exmod, "chain_units", lambda units, static: units)
    plain = nnkiln.compile(module, threads=1)
    assert not _chains(plain)
    expected = plain.run(x)["y"]
    for g in got:
        np.testing.assert_array_equal(g, expected)
    ort = pytest.importorskip("onnxruntime")
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    ref = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"]).run(None, x)[0]
    np.testing.assert_allclose(got[0], ref, rtol=1e-4, atol=1e-4)


def test_saved_blob_runs_its_chain(tmp_path) -> None:  # noqa: ANN001
    path = str(tmp_path / "m.onnx")
    _model(path)
    exe = nnkiln.compile(nnkiln.load(path), threads=2)
    exe.save(tmp_path / "m.kiln")
    loaded = nnkiln.Executable.load(tmp_path / "m.kiln")
    x = {"x": RNG.standard_normal((1, 3, 8, 8)).astype(np.float32)}
    if len(loaded._units) == 1:
        assert _chains(loaded)
    np.testing.assert_array_equal(loaded.run(x)["y"], exe.run(x)["y"])
