"""The runtime: no xDSL, kernels against the reference kernels, executors and barriers, files, stats."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from rt_blobs import two_executor_blob

from nnkiln.blob.writer import BlobBuilder, encode
from nnkiln.errors import InputError, NotExecutableError
from nnkiln.kinds import Kind
from nnkiln.reference import tensor_ops
from nnkiln.runtime import Executable, load_blob


def _close(actual: np.ndarray, expected: np.ndarray) -> None:
    """1e-5 relative to the tensor's magnitude (accumulation order may differ)."""
    scale = max(float(np.abs(expected).max()), 1e-30)
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5 * scale)


def test_runtime_imports_no_xdsl() -> None:
    code = ("import nnkiln.runtime, nnkiln.runtime.io, nnkiln.blob.format, nnkiln.blob.inspect, sys; "
            "bad = [m for m in sys.modules if m.startswith('xdsl')]; assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_two_executors_with_barriers() -> None:
    blob, p = two_executor_blob()
    exe = load_blob(encode(blob))
    x = np.random.default_rng(5).standard_normal((1, 6, 6, 3)).astype(np.float32)
    z = exe.run({"x": x})["z"]
    y1 = tensor_ops.conv2d(x, p["w1"], p["b1"], (1, 1, 1, 1), (1, 1), (1, 1), out_kind=Kind.F32)
    y2 = tensor_ops.conv2d(x, p["w2"], p["b2"], (0, 0, 0, 0), (1, 1), (1, 1), out_kind=Kind.F32)
    _close(z, np.clip(y1, 0, 6) + y2)
    assert exe.stats["num_executors"] == 2
    # repeated runs reuse the arena and give the same result
    np.testing.assert_array_equal(exe.run({"x": x})["z"], z)


def test_stats_save_load(tmp_path) -> None:  # noqa: ANN001
    blob, _ = two_executor_blob()
    exe = load_blob(encode(blob))
    for key in ("arena_bytes", "arena_lower_bound_bytes", "num_tasks", "num_barriers", "compile_seconds"):
        assert key in exe.stats
    assert exe.stats["arena_bytes"] == 1152 and exe.stats["num_tasks"] == 3 and exe.stats["num_barriers"] == 2
    path = tmp_path / "m.kiln"
    exe.save(path)
    again = Executable.load(path)
    x = np.ones((1, 6, 6, 3), np.float32)
    np.testing.assert_array_equal(again.run({"x": x})["z"], exe.run({"x": x})["z"])


def test_input_errors() -> None:
    exe = load_blob(encode(two_executor_blob()[0]))
    with pytest.raises(InputError, match="missing 'x'"):
        exe.run({})
    with pytest.raises(InputError, match="shape"):
        exe.run({"x": np.zeros((1, 6, 6, 4), np.float32)})
    with pytest.raises(InputError, match="floating point"):
        exe.run({"x": np.zeros((1, 6, 6, 3), np.int32)})


def _single(kernel: str, ins: list[tuple[np.ndarray, Kind, bool]], out_kind: Kind, out_shape: tuple[int, ...],
            attrs: dict, post_ops: list | None = None) -> np.ndarray:
    """Run one kernel; ins are (array, kind, is_constant)."""
    b = BlobBuilder()
    bufs, feed = [], {}
    for i, (a, k, const) in enumerate(ins):
        if const:
            bufs.append(b.add_const(a, k))
        else:
            bufs.append(b.add_io(f"in{i}", k, a.shape, output=False))
            feed[f"in{i}"] = a
    out = b.add_io("out", out_kind, out_shape, output=True)
    b.add_task(kernel, bufs, [out], attrs=attrs, post_ops=post_ops or [])
    return load_blob(encode(b.finish())).run(feed)["out"]


RNG = np.random.default_rng(7)
F = Kind.F32


@pytest.mark.parametrize("pad,stride,dil", [((0, 0, 0, 0), (1, 1), (1, 1)), ((1, 2, 0, 1), (2, 1), (1, 2)),
                                             ((1, 1, 1, 1), (2, 2), (1, 1))])
def test_conv2d_fast(pad, stride, dil) -> None:  # noqa: ANN001
    x = RNG.standard_normal((2, 9, 8, 5)).astype(np.float32)
    w = RNG.standard_normal((6, 3, 2, 5)).astype(np.float32)
    bias = RNG.standard_normal(6).astype(np.float32)
    ref = tensor_ops.conv2d(x, w, bias, pad, stride, dil, out_kind=F)
    got = _single("tosa.conv2d", [(x, F, False), (w, F, True), (bias, F, True)], F, ref.shape,
                  {"pad": pad, "stride": stride, "dilation": dil, "input_zp": 0, "weight_zp": 0})
    _close(got, ref)


def test_conv2d_post_ops_add() -> None:
    x = RNG.standard_normal((1, 5, 5, 3)).astype(np.float32)
    w = RNG.standard_normal((4, 1, 1, 3)).astype(np.float32)
    bias = RNG.standard_normal(4).astype(np.float32)
    res = RNG.standard_normal((1, 5, 5, 4)).astype(np.float32)
    ref = np.minimum(np.maximum(tensor_ops.conv2d(x, w, bias, (0,) * 4, (1, 1), (1, 1), out_kind=F) + res, 0), 1)
    got = _single("tosa.conv2d", [(x, F, False), (w, F, True), (bias, F, True), (res, F, False)], F, ref.shape,
                  {"pad": (0,) * 4, "stride": (1, 1), "dilation": (1, 1), "input_zp": 0, "weight_zp": 0},
                  post_ops=[{"kernel": "tosa.add", "attrs": {}, "operand": 3},
                            {"kernel": "tosa.clamp", "attrs": {"min_val": 0.0, "max_val": 1.0}}])
    _close(got, ref)


def test_depthwise_and_pools_match_reference() -> None:
    x = RNG.standard_normal((1, 7, 6, 4)).astype(np.float32)
    w = RNG.standard_normal((3, 3, 4, 2)).astype(np.float32)
    bias = RNG.standard_normal(8).astype(np.float32)
    ref = tensor_ops.depthwise_conv2d(x, w, bias, (1, 1, 0, 1), (2, 1), (1, 1), out_kind=F)
    got = _single("tosa.depthwise_conv2d", [(x, F, False), (w, F, True), (bias, F, True)], F, ref.shape,
                  {"pad": (1, 1, 0, 1), "stride": (2, 1), "dilation": (1, 1), "input_zp": 0, "weight_zp": 0})
    _close(got, ref)  # fused multiply-adds in the native kernel; pools identical
    for name, fn in (("tosa.max_pool2d", tensor_ops.max_pool2d), ("tosa.avg_pool2d", tensor_ops.avg_pool2d)):
        ref = fn(x, (3, 2), (2, 2), (1, 1, 1, 0))
        attrs = {"kernel": (3, 2), "stride": (2, 2), "pad": (1, 1, 1, 0)}
        if name == "tosa.avg_pool2d":
            attrs.update(input_zp=0, output_zp=0)
        got = _single(name, [(x, F, False)], F, ref.shape, attrs)
        np.testing.assert_array_equal(got, ref)


def test_fc_matmul_elementwise() -> None:
    x = RNG.standard_normal((3, 10)).astype(np.float32)
    w = RNG.standard_normal((4, 10)).astype(np.float32)
    b = RNG.standard_normal(4).astype(np.float32)
    _close(_single("tosa.fully_connected", [(x, F, False), (w, F, True), (b, F, True)], F, (3, 4),
                   {"input_zp": 0, "weight_zp": 0}), x @ w.T + b)
    a = RNG.standard_normal((2, 3, 5)).astype(np.float32)
    c = RNG.standard_normal((2, 5, 4)).astype(np.float32)
    _close(_single("tosa.matmul", [(a, F, False), (c, F, False)], F, (2, 3, 4), {"A_zp": 0, "B_zp": 0}), a @ c)
    u = RNG.standard_normal((2, 1, 4)).astype(np.float32)
    v = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    np.testing.assert_array_equal(_single("tosa.add", [(u, F, False), (v, F, False)], F, (2, 3, 4), {}), u + v)
    np.testing.assert_array_equal(_single("tosa.mul", [(u, F, False), (v, F, False)], F, (2, 3, 4), {"shift": 0}),
                                  u * v)
    # EXP in the native kernels (C expf) may differ from numpy's by an ulp: the runtime promises 1e-5 relative
    np.testing.assert_allclose(_single("tosa.sigmoid", [(v, F, False)], F, v.shape, {}),
                               np.float32(1) / (np.float32(1) + np.exp(-v)), rtol=1e-6, atol=0)


def test_int8_conv_uses_reference_bit_exact() -> None:
    x = RNG.integers(-128, 128, (1, 6, 6, 3)).astype(np.int8)
    w = RNG.integers(-128, 128, (4, 3, 3, 3)).astype(np.int8)
    bias = RNG.integers(-1000, 1000, 4).astype(np.int32)
    ref = tensor_ops.conv2d(x, w, bias, (1, 1, 1, 1), (1, 1), (1, 1), input_zp=-3, weight_zp=0, out_kind=Kind.I32)
    got = _single("tosa.conv2d", [(x, Kind.I8, False), (w, Kind.I8, True), (bias, Kind.I32, True)], Kind.I32,
                  ref.shape, {"pad": (1, 1, 1, 1), "stride": (1, 1), "dilation": (1, 1), "input_zp": -3, "weight_zp": 0})
    np.testing.assert_array_equal(got, ref)
    # hand-computed: add of int32 through the reference kernel
    a = np.array([[1, -2, 2147483000]], np.int32)
    got = _single("tosa.add", [(a, Kind.I32, False), (np.array([[5, 5, 600]], np.int32), Kind.I32, True)],
                  Kind.I32, (1, 3), {})
    np.testing.assert_array_equal(got, [[6, 3, 2147483600]])


def test_copy_and_views() -> None:
    b = BlobBuilder()
    x = b.add_io("x", F, (2, 3), output=False)
    y = b.add_io("y", F, (3, 2), output=True)
    a = b.add_arena(F, (2, 3), 64)
    b.add_task("buf.copy", [x], [a])
    v = b.add_view(a, F, (3, 2), 0)
    b.add_task("tosa.negate", [v], [y], attrs={"input1_zp": 0, "output_zp": 0})
    xv = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(load_blob(encode(b.finish())).run({"x": xv})["y"], -xv.reshape(3, 2))


def test_unknown_kernel_is_not_executable() -> None:
    b = BlobBuilder()
    x = b.add_io("x", F, (2,), output=False)
    y = b.add_io("y", F, (2,), output=True)
    b.add_task("tosa.nonexistent", [x], [y])
    with pytest.raises(NotExecutableError, match="tosa.nonexistent"):
        load_blob(encode(b.finish()))


def test_task_failure_in_thread_is_raised() -> None:
    """A REQUIRE failure on executor 1 stops the run and reaches the caller."""
    from nnkiln.errors import TosaUnpredictable

    b = BlobBuilder()
    x = b.add_io("x", Kind.I32, (2,), output=False)
    y = b.add_io("y", Kind.I32, (2,), output=True)
    z = b.add_io("z", Kind.I32, (2,), output=True)
    big = b.add_const(np.array([2147483647, 0], np.int32), Kind.I32)
    bar = b.add_barrier(0)
    b.add_task("tosa.add", [x, big], [y], executor_index=1, updates=[bar])
    b.add_task("tosa.add", [x, x], [z], executor_index=0, waits=[bar])
    exe = load_blob(encode(b.finish()))
    with pytest.raises(TosaUnpredictable):
        exe.run({"x": np.array([1, 1], np.int32)})
    np.testing.assert_array_equal(exe.run({"x": np.array([0, 1], np.int32)})["z"], [0, 2])


@pytest.mark.parametrize("ids,error", [
    (np.array([[0, 5, 2**31 - 1]], np.int64), None),
    (np.array([[0, -(2**31), 7]], np.int64), None),
    (np.array([[0, 2**31, 7]], np.int64), r"holds values in \[0, 2147483648\], outside the range"),
    (np.array([[-(2**31) - 1, 1, 2]], np.int64), r"outside the range \[-2147483648, 2147483647\]"),
    (np.array([[1, 2, 3, 4, 5, 6]], np.int64)[:, ::2], None),  # not contiguous: the numpy path
])
def test_int64_token_ids_narrowed_to_int32(ids: np.ndarray, error: str | None) -> None:
    """An int32 input given as int64 (token ids): converted in one C pass (``nk_narrow_i64_i32``) when every value
    fits, else the same error as before, naming the values' range."""
    b = BlobBuilder()
    x = b.add_io("ids", Kind.I32, (1, 3), output=False)
    y = b.add_io("y", Kind.I32, (1, 3), output=True)
    b.add_task("tosa.maximum", [x, x], [y])
    exe = load_blob(encode(b.finish()))
    if error is not None:
        with pytest.raises(InputError, match=error):
            exe.run({"ids": ids})
        return
    np.testing.assert_array_equal(exe.run({"ids": ids})["y"], ids)


def test_arenas_scratch_and_outputs_are_cache_line_aligned() -> None:
    """Every executable's arena starts on a page, its outputs of 64 KiB or more on a cache line, however many
    executables the process made before (nnkiln.alloc: a misaligned arena made MobileNetV2 3% slower; smaller
    outputs come from np.empty, runtime.direct.SMALL_OUTPUT_BYTES)."""
    from onnx import TensorProto, helper, numpy_helper

    import nnkiln
    from nnkiln.alloc import aligned_empty
    from nnkiln.onnx_backend import import_model_proto

    w = numpy_helper.from_array(np.ones((8, 3, 3, 3), np.float32), "w")
    g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 64, 64])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    x = np.ones((1, 3, 64, 64), np.float32)  # y: 128 KiB
    module = import_model_proto(model, [x])
    keep = []
    for k in range(6):
        keep.append(np.empty(1000 + 37 * k, np.uint8))  # other allocations in between
        exe = nnkiln.compile(module)
        assert exe._arena.ctypes.data % 4096 == 0
        y = exe.run({"x": x})["y"]
        assert y.ctypes.data % 64 == 0 and y.shape == (1, 8, 64, 64) and y.flags.c_contiguous
    for shape, dt in (((3, 5), np.float32), (7, np.int8), ((2, 2, 2), np.float64)):
        a = aligned_empty(shape, dt, 256)
        assert a.ctypes.data % 256 == 0 and a.dtype == dt and a.shape == (shape if isinstance(shape, tuple) else (shape,))


def test_small_page_arrays() -> None:
    """``small_page_empty``: writable, page-aligned, C-contiguous arrays of the asked shape, in a mapping of their own
    from 4 MiB (numpy's huge-page advice never given: nnkiln.alloc), an aligned numpy array below."""
    import mmap

    from nnkiln.alloc import PAGE, SMALL_PAGE_MIN_BYTES, small_page_empty

    for shape, dt in (((3, 5), np.float32), ((SMALL_PAGE_MIN_BYTES // 4 + 3,), np.float32), ((1 << 23,), np.uint8),
                      ((64, 1024, 16), np.float32)):
        a = small_page_empty(shape, dt)
        assert a.shape == shape and a.dtype == dt and a.flags.c_contiguous and a.flags.writeable
        assert a.ctypes.data % PAGE == 0
        base = a.base
        while isinstance(base, (np.ndarray, memoryview)):
            base = base.base if isinstance(base, np.ndarray) else base.obj
        assert isinstance(base, mmap.mmap) == (a.nbytes >= SMALL_PAGE_MIN_BYTES), type(base)
        a[...] = 7
        assert int(a.reshape(-1)[-1]) == 7 and int(a.reshape(-1)[0]) == 7
