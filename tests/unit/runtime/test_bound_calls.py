"""Bound native calls (``runtime.kernels.bound``): consecutive native units run as one ``Chain`` call.

Checked: one chain forms over every unit, including the first and last kernels, which read the graph's input
and write its output (arrays that change on every run: the chain patches their addresses, found by binding
with probe arrays); its results are bit-identical to the same executable run unit by unit, for input and output
arrays at new addresses on every run, and close to onnxruntime; graph inputs reached through a post-op's operand
pointers and a row program's arguments are patched too; a unit whose binding hides a probe's address stays
unbound; padded convolutions of different sizes share the chain's scratch buffer correctly.
"""

from __future__ import annotations

import ctypes

import numpy as np
import onnx
import onnx.helper as oh
import pytest

import nnkiln
from nnkiln.blob.format import Memory
from nnkiln.runtime import executable as exmod
from nnkiln.runtime.kernels.bound import Bound, Chain, chain_units, io_patches, slots

pytestmark = pytest.mark.native
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


def _unchained(monkeypatch, module) -> nnkiln.Executable:  # noqa: ANN001
    monkeypatch.setattr(exmod, "chain_units", lambda units, static, probe_views=None: units)
    plain = nnkiln.compile(module, threads=1)
    monkeypatch.undo()
    assert not _chains(plain)
    return plain


def _moved(a: np.ndarray, shift: int) -> np.ndarray:
    """A copy of ``a`` at a new address (``shift`` float32 elements into a larger buffer)."""
    buf = np.empty(a.size + shift, a.dtype)
    out = buf[shift:].reshape(a.shape)
    out[...] = a
    return out


def test_chain_covers_graph_io_and_is_identical(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    path = str(tmp_path / "m.onnx")
    _model(path)
    module = nnkiln.load(path)
    exe = nnkiln.compile(module, threads=1)
    chains = _chains(exe)
    assert len(exe._units[0]) == 1 and len(chains) == 1, [type(u).__name__ for u, _, _, _ in exe._units[0]]
    chain = chains[0]
    assert exe._whole is chain
    assert chain.scratch.size >= 10 * 10 * 8  # the larger padded input
    blob = exe.blob
    io = {i for i, b in enumerate(blob.buffers) if b.memory in (Memory.INPUT, Memory.OUTPUT)}
    touching = [t for t in range(len(blob.tasks)) if io & {*blob.tasks[t].ins, *blob.tasks[t].outs}]
    assert touching and {b for _, _, b, _ in chain._patches} <= io and len(chain._patches) >= 2
    plain = _unchained(monkeypatch, module)
    for k in range(4):  # new input and output addresses on every run
        x = _moved(RNG.standard_normal((1, 3, 8, 8)).astype(np.float32), k)
        got = exe.run({"x": x})["y"]
        np.testing.assert_array_equal(got, plain.run({"x": x})["y"])
        out = np.zeros((1, 8, 4, 4, 2), np.float32)[..., 1]  # a strided output: run_arrays copies it
        exe.run_arrays([x], [out])
        np.testing.assert_array_equal(out, got)
    ort = pytest.importorskip("onnxruntime")
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    ref = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)


def test_graph_input_as_post_op_operand_and_row_program_output(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """y = softmax(relu(x @ w + x)): the residual add fuses into the product, whose operand pointers then hold the
    graph input's address; the softmax is a row program writing the graph output through its argument pointers."""
    w = (RNG.standard_normal((64, 64)) * 0.3).astype(np.float32)
    nodes = [oh.make_node("MatMul", ["x", "w"], ["c"]), oh.make_node("Add", ["c", "x"], ["s"]),
             oh.make_node("Relu", ["s"], ["r"]), oh.make_node("Softmax", ["r"], ["y"], axis=-1)]
    g = oh.make_graph(nodes, "g", [oh.make_tensor_value_info("x", 1, [1, 48, 64])],
                      [oh.make_tensor_value_info("y", 1, [1, 48, 64])], [oh.make_tensor("w", 1, w.shape, w.ravel())])
    path = str(tmp_path / "r.onnx")
    onnx.save(oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)]), path)
    module = nnkiln.load(path)
    exe = nnkiln.compile(module, threads=1)
    chains = _chains(exe)
    assert len(chains) == 1 and len(exe._units[0]) == 1, [type(u).__name__ for u, _, _, _ in exe._units[0]]
    mem = [exe.blob.buffers[b].memory for _, _, b, _ in chains[0]._patches]
    assert mem.count(Memory.INPUT) >= 2 and Memory.OUTPUT in mem  # the product's input and operand; the output
    plain = _unchained(monkeypatch, module)
    for k in range(3):
        x = _moved(RNG.standard_normal((1, 48, 64)).astype(np.float32), 3 * k)
        np.testing.assert_array_equal(exe.run({"x": x})["y"], plain.run({"x": x})["y"])


def test_io_patches_and_hidden_addresses() -> None:
    probe = np.zeros(64, np.float32)
    lo = probe.ctypes.data
    inner = (ctypes.c_void_p * 3)(None, lo + 12, None)
    b = Bound([(0, slots(lo, 5, lo + 64))], [[np.zeros(2, np.float32), inner]])
    found = sorted((k, buf, off) for _, k, buf, off in io_patches(b, [(9, lo, probe.nbytes)]))
    assert found == [(0, 9, 0), (1, 9, 12), (2, 9, 64)]
    assert io_patches(Bound([(0, slots(lo + 256, 5))]), [(9, lo, probe.nbytes)]) == []

    class Hidden:  # binds only with the probe, yet keeps no trace of its address: must stay unbound
        def __call__(self, views) -> None:  # noqa: ANN001
            pass

        def bind(self, views) -> Bound | None:  # noqa: ANN001
            return None if views[1] is None else Bound([(0, slots(7))])

    class Plain(Hidden):
        def bind(self, views) -> Bound | None:  # noqa: ANN001
            return Bound([(0, slots(8))])

    static = [np.zeros(4, np.float32), None]
    units = [(Plain(), 0, (), ()), (Hidden(), 1, (), ()), (Plain(), 2, (), ())]
    out = chain_units(units, static, [static[0], probe])
    assert [type(u[0]).__name__ for u in out] == ["Plain", "Hidden", "Plain"]


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


def test_gather_index_out_of_range_reported_from_a_chain(tmp_path) -> None:  # noqa: ANN001
    """An embedding lookup then a softmax: the native GATHER is bound with the rows after it; an index outside
    the table makes it fail before writing anything, and the chain runs that unit's own path, which reports the
    spec's REQUIRE (not an out-of-memory error)."""
    table = RNG.standard_normal((50, 24)).astype(np.float32)
    nodes = [oh.make_node("Gather", ["table", "ids"], ["e"], axis=0), oh.make_node("Softmax", ["e"], ["y"], axis=-1)]
    g = oh.make_graph(nodes, "g", [oh.make_tensor_value_info("ids", onnx.TensorProto.INT32, [1, 7])],
                      [oh.make_tensor_value_info("y", 1, [1, 7, 24])], [oh.make_tensor("table", 1, table.shape, table.ravel())])
    path = str(tmp_path / "g.onnx")
    onnx.save(oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)]), path)
    exe = nnkiln.compile(nnkiln.load(path), threads=1)
    chains = _chains(exe)
    assert chains and any(exe.blob.tasks[t].kernel == "tosa.gather" for t in chains[0].tasks)
    assert exe._whole is chains[0]  # one chain is the whole program: runs go straight to it (Chain.run_io)
    ids = np.array([[0, 3, 49, 7, 7, 1, 20]], np.int32)
    e = table[ids[0]]
    expected = np.exp(e - e.max(-1, keepdims=True))
    np.testing.assert_allclose(exe.run({"ids": ids})["y"][0], expected / expected.sum(-1, keepdims=True), rtol=1e-5)
    with pytest.raises(nnkiln.NnkilnError, match="REQUIRE"):
        exe.run({"ids": np.array([[0, 3, 50, 7, 7, 1, 20]], np.int32)})
