"""Unit tests of the smaller pieces: targets, transpose composition, offset planning, liveness lower
bound, pipelines' pass lists, fuse-post-ops numerics against the reference."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from nnkiln.analysis.liveness import Interval, lower_bound
from nnkiln.dialects.tosa.canonicalization import compose
from nnkiln.errors import NnkilnError
from nnkiln.ir.context import make_context
from nnkiln.ir.text import parse_module, print_module
from nnkiln.targets import ExecutorKind, MemoryKind, get_target
from nnkiln.transforms.async_.static_allocation import plan
from nnkiln.transforms.tosa.cancel_transpose_pairs import CancelTransposePairs


def test_cpu_target() -> None:
    t = get_target("cpu", threads=3)
    assert t.name == "cpu" and t.num_barriers == 64
    (mem,) = t.memories
    assert (mem.name, mem.kind, mem.alignment) == ("host", MemoryKind.DDR, 64)
    (ex,) = t.executors
    assert (ex.name, ex.kind, ex.count) == ("cpu", ExecutorKind.CPU, 3)
    assert get_target("cpu").executors[0].count >= 1
    with pytest.raises(NnkilnError, match="unknown target 'tpu'"):
        get_target("tpu")
    with pytest.raises(NnkilnError):
        get_target("cpu", threads=0)


def test_compose_matches_two_numpy_transposes() -> None:
    x = np.arange(24).reshape(2, 3, 4)
    for p1 in itertools.permutations(range(3)):
        for p2 in itertools.permutations(range(3)):
            np.testing.assert_array_equal(x.transpose(p1).transpose(p2), x.transpose(compose(p1, p2)))


def test_cancel_transpose_pairs_keeps_values() -> None:
    from nnkiln.reference.interpreter import run

    text = """func.func @main(%x: tensor<2x3x4xi32>) -> tensor<4x2x3xi32> {
  %a = tosa.transpose %x {perms = array<i64: 1, 2, 0>} : (tensor<2x3x4xi32>) -> tensor<3x4x2xi32>
  %b = tosa.transpose %a {perms = array<i64: 1, 2, 0>} : (tensor<3x4x2xi32>) -> tensor<4x2x3xi32>
  func.return %b : tensor<4x2x3xi32>
}"""
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    module = parse_module(text)
    CancelTransposePairs().apply(make_context(), module)
    module.verify()
    assert print_module(module).count("tosa.transpose") == 1
    np.testing.assert_array_equal(run(module, {"x": x})["output0"], x.transpose(2, 0, 1))


def _iv(size: int, first: int, last: int) -> Interval:
    return Interval(buffer=None, size=size, first=first, last=last)  # type: ignore[arg-type]


def test_lower_bound_by_hand() -> None:
    # live at t0: 64; t1: 64 + 128; t2: 128 + 256; t3: 256 -> bound 384
    ivs = [_iv(64, 0, 1), _iv(128, 1, 2), _iv(256, 2, 3)]
    assert lower_bound(ivs) == 384


def test_plan_reuses_and_aligns() -> None:
    ivs = [_iv(64, 0, 1), _iv(128, 1, 2), _iv(64, 2, 3), _iv(192, 3, 4)]
    arena = plan(ivs, 64)
    assert all(iv.offset % 64 == 0 for iv in ivs)
    for a, b in itertools.combinations(ivs, 2):
        if a.overlaps(b):
            assert a.offset + a.size <= b.offset or b.offset + b.size <= a.offset
    assert arena == max(iv.offset + iv.size for iv in ivs)
    assert arena >= lower_bound(ivs) == 256
    assert arena == 256  # 64|128 then 64|192 fit side by side


def test_pipelines_list_passes() -> None:
    from nnkiln.pipelines import describe, pipeline

    names = [p.name for p in pipeline("reference", get_target("cpu", 2))]
    assert names == ["tosa-to-buf", "wrap-into-async-regions", "static-allocation", "optimize-async-deps",
                     "async-to-rt", "assign-physical-barriers"]
    default = [p.name for p in pipeline("default", get_target("cpu", 2))]
    assert "fuse-post-ops" in default and "fold-constants" in default and default[-1] == "assign-physical-barriers"
    text = describe("reference", get_target("cpu", 2), stream=open("/dev/null", "w"))
    assert "wrap-into-async-regions{threads=1}" in text and "assign-physical-barriers{max-barriers=64}" in text
    with pytest.raises(NnkilnError, match="unknown pipeline"):
        pipeline("fast")


def test_fused_post_ops_give_reference_values() -> None:
    """conv2d + add(bias-like constant) + clamp fused into one kernel: simulated result equals the
    reference interpreter's on the unfused graph."""
    from compiler_rtcheck import simulate

    from nnkiln.ir.passes import PassManager
    from nnkiln.pipelines import pipeline
    from nnkiln.reference.interpreter import run

    text = """func.func @main(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %w = tosa.const {values = dense<[[[[0.5, -1.0]]], [[[2.0, 0.25]]], [[[-0.75, 1.5]]]]> : tensor<3x1x1x2xf32>} : tensor<3x1x1x2xf32>
  %b = tosa.const {values = dense<[0.0, 1.0, -1.0]> : tensor<3xf32>} : tensor<3xf32>
  %k = tosa.const {values = dense<[[[[1.0, -2.0, 0.5]]]]> : tensor<1x1x1x3xf32>} : tensor<1x1x1x3xf32>
  %c = tosa.conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x4x4x2xf32>, tensor<3x1x1x2xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %a = tosa.add %k, %c : (tensor<1x1x1x3xf32>, tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  %r = tosa.clamp %a {min_val = 0.0 : f32, max_val = 6.0 : f32} : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  func.return %r : tensor<1x4x4x3xf32>
}"""
    module = parse_module(text)
    PassManager(pipeline("default", get_target("cpu", 2))).run(module)
    out = print_module(module)
    assert out.count("buf.kernel") == 1 and "post_ops" in out
    x = np.random.default_rng(1).standard_normal((1, 4, 4, 2)).astype(np.float32) * 3
    expected = run(parse_module(text), {"x": x})["output0"]
    np.testing.assert_allclose(simulate(module, {"x": x})[0], expected, rtol=1e-6)


def test_int8_conv_rescale_is_bit_exact_and_not_fused() -> None:
    """Integer producers are not fused (fuse-post-ops docstring); the int8 path matches the reference bit for bit."""
    from compiler_rtcheck import simulate

    from nnkiln.ir.passes import PassManager
    from nnkiln.pipelines import pipeline
    from nnkiln.reference.interpreter import run

    text = """func.func @main(%x: tensor<1x4x4x2xi8>) -> tensor<1x4x4x3xi8> {
  %w = tosa.const {values = dense<[[[[5, -7]]], [[[12, 3]]], [[[-9, 4]]]]> : tensor<3x1x1x2xi8>} : tensor<3x1x1x2xi8>
  %b = tosa.const {values = dense<[10, -20, 30]> : tensor<3xi32>} : tensor<3xi32>
  %c = tosa.conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x4x4x2xi8>, tensor<3x1x1x2xi8>, tensor<3xi32>) -> tensor<1x4x4x3xi32>
  %r = tosa.rescale %c {input_zp = 0 : i64, output_zp = 0 : i64, multiplier = array<i64: 1073741824>, shift = array<i64: 35>, scale32 = true, double_round = true, per_channel = false} : (tensor<1x4x4x3xi32>) -> tensor<1x4x4x3xi8>
  func.return %r : tensor<1x4x4x3xi8>
}"""
    module = parse_module(text)
    PassManager(pipeline("default", get_target("cpu", 2))).run(module)
    assert print_module(module).count("buf.kernel") == 2 and "post_ops" not in print_module(module)
    x = np.random.default_rng(2).integers(-128, 128, (1, 4, 4, 2)).astype(np.int8)
    expected = run(parse_module(text), {"x": x})["output0"]
    np.testing.assert_array_equal(simulate(module, {"x": x})[0], expected)


def test_quantized_types_and_const_declare_through_the_levels() -> None:
    """Quantized element types survive bufferization; const.declare becomes buf.const with its data;
    constants nobody uses are dropped by wrap-into-async-regions; an identity output is a copy."""
    from nnkiln.ir.passes import PassManager
    from nnkiln.pipelines import pipeline

    q = "!quant.uniform<i8:f32, 5.000000e-01>"
    text = f"""func.func @main(%x: tensor<1x4x{q}>) -> (tensor<1x4x{q}>, tensor<4xi8>, tensor<1x4x{q}>) {{
  %w = const.declare tensor<4xi8> = #const.content<dense<[1, 2, 3, 4]> : tensor<4xi8>>
  %unused = tosa.const {{values = dense<[[1, 2, 3, 4]]> : tensor<1x4xi8>}} : tensor<1x4x{q}>
  %c = tosa.clamp %x {{min_val = -5 : i64, max_val = 5 : i64}} : (tensor<1x4x{q}>) -> tensor<1x4x{q}>
  %i = tosa.identity %x : (tensor<1x4x{q}>) -> tensor<1x4x{q}>
  func.return %c, %w, %i : tensor<1x4x{q}>, tensor<4xi8>, tensor<1x4x{q}>
}}"""
    module = parse_module(text)
    PassManager(pipeline("reference", get_target("cpu", 1))).run(module)
    out = print_module(module)
    assert f'buf.kernel "tosa.clamp" ins(%x_1 : memref<1x4x{q}>) outs(%out0_1 : memref<1x4x{q}>)' in out
    assert out.count("buf.const") == 1 and "dense<[1, 2, 3, 4]> : tensor<4xi8>} : memref<4xi8>" in out
    assert out.count("buf.copy") == 2


def test_plan_larger_than_the_target_memory_is_refused_at_compile_time() -> None:
    """Activations that cannot fit the cpu target's memory (the machine's RAM) are a compile error naming
    both sizes, not a failure when the blob is loaded."""
    import nnkiln

    big = get_target("cpu").default_memory.size // 4 + 1  # float32 elements: 4 bytes each
    n = 1 << 20
    rows = big // n + 1
    text = (f"func.func @main(%x: tensor<{rows}x{n}xf32>) -> tensor<{rows}x{n}xf32> {{\n"
            f"  %a = tosa.abs %x : (tensor<{rows}x{n}xf32>) -> tensor<{rows}x{n}xf32>\n"
            f"  %b = tosa.reverse %a {{axis = 0 : i64}} : (tensor<{rows}x{n}xf32>) -> tensor<{rows}x{n}xf32>\n"
            f"  func.return %b : tensor<{rows}x{n}xf32>\n}}\n")
    with pytest.raises(NnkilnError, match=r"need \d+ bytes of memory 'host', but target 'cpu' has \d+ bytes"):
        nnkiln.compile(parse_module(text))
