"""``split-batch``: the per-sample program computes what the batched one does.

Oracle: the reference interpreter on the original function. Each case is run before and after the pass
(threshold 1 byte: split everything separable) and the outputs must be identical; the cases that are not
separable must come out unchanged. Then whole pipelines: a batched ResNet-like graph compiled with the
split forced on is checked with the independent rt checker (hazards, overlapping live buffers, simulated
run) and against the same graph compiled without it.
"""

from __future__ import annotations

import numpy as np
import pytest
from compiler_graphs import resnet_like
from compiler_rtcheck import check_hazards, check_memory, reconstruct, simulate

import nnkiln.targets
from nnkiln.ir.passes import PassManager
from nnkiln.ir.text import parse_module
from nnkiln.pipelines import pipeline
from nnkiln.reference.interpreter import run as reference_run
from nnkiln.targets import get_target
from nnkiln.transforms.tosa.split_batch import SplitBatch

CONV = ("{pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, "
        "input_zp = 0 : i64, weight_zp = 0 : i64}")

SEPARABLE = {
    "conv_clamp": """
  %w = tosa.const {values = dense<0.25> : tensor<4x3x3x2xf32>} : tensor<4x3x3x2xf32>
  %b = tosa.const {values = dense<0.5> : tensor<4xf32>} : tensor<4xf32>
  %c = tosa.conv2d %x, %w, %b """ + CONV + """ : (tensor<3x5x5x2xf32>, tensor<4x3x3x2xf32>, tensor<4xf32>) -> tensor<3x5x5x4xf32>
  %r = tosa.clamp %c {min_val = 0.0 : f32, max_val = 1.0 : f32} : (tensor<3x5x5x4xf32>) -> tensor<3x5x5x4xf32>
  func.return %r : tensor<3x5x5x4xf32>""",
    "depthwise_pools": """
  %w = tosa.const {values = dense<0.125> : tensor<3x3x2x1xf32>} : tensor<3x3x2x1xf32>
  %b = tosa.const {values = dense<0.0> : tensor<2xf32>} : tensor<2xf32>
  %d = tosa.depthwise_conv2d %x, %w, %b """ + CONV + """ : (tensor<3x5x5x2xf32>, tensor<3x3x2x1xf32>, tensor<2xf32>) -> tensor<3x5x5x2xf32>
  %m = tosa.max_pool2d %d {kernel = array<i64: 2, 2>, stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>} : (tensor<3x5x5x2xf32>) -> tensor<3x4x4x2xf32>
  %a = tosa.avg_pool2d %m {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, input_zp = 0 : i64, output_zp = 0 : i64} : (tensor<3x4x4x2xf32>) -> tensor<3x2x2x2xf32>
  func.return %a : tensor<3x2x2x2xf32>""",
    "rows_matmul_transpose": """
  %m = tosa.const {values = dense<0.5> : tensor<1x2x4xf32>} : tensor<1x2x4xf32>
  %r = tosa.reshape %x {new_shape = array<i64: 1, 75, 2>} : (tensor<3x5x5x2xf32>) -> tensor<1x75x2xf32>
  %p = tosa.matmul %r, %m {A_zp = 0 : i64, B_zp = 0 : i64} : (tensor<1x75x2xf32>, tensor<1x2x4xf32>) -> tensor<1x75x4xf32>
  %q = tosa.reshape %p {new_shape = array<i64: 3, 25, 4>} : (tensor<1x75x4xf32>) -> tensor<3x25x4xf32>
  %t = tosa.transpose %q {perms = array<i64: 2, 0, 1>} : (tensor<3x25x4xf32>) -> tensor<4x3x25xf32>
  func.return %t : tensor<4x3x25xf32>""",
    "reduce_argmax_concat_slice_pad_tile": """
  %s = tosa.reduce_sum %x {axis = 1 : i64} : (tensor<3x5x5x2xf32>) -> tensor<3x1x5x2xf32>
  %a = tosa.argmax %x {axis = 2 : i64} : (tensor<3x5x5x2xf32>) -> tensor<3x5x2xi32>
  %c = tosa.concat %x, %x {axis = 3 : i64} : (tensor<3x5x5x2xf32>, tensor<3x5x5x2xf32>) -> tensor<3x5x5x4xf32>
  %l = tosa.slice %c {start = array<i64: 0, 1, 0, 1>, size = array<i64: 3, 3, 5, 2>} : (tensor<3x5x5x4xf32>) -> tensor<3x3x5x2xf32>
  %p = tosa.pad %l {padding = array<i64: 0, 0, 1, 1, 0, 0, 0, 0>, pad_const = 0.0 : f32} : (tensor<3x3x5x2xf32>) -> tensor<3x5x5x2xf32>
  %t = tosa.tile %s {multiples = array<i64: 1, 5, 1, 1>} : (tensor<3x1x5x2xf32>) -> tensor<3x5x5x2xf32>
  %e = tosa.add %p, %t : (tensor<3x5x5x2xf32>, tensor<3x5x5x2xf32>) -> tensor<3x5x5x2xf32>
  func.return %e, %a : tensor<3x5x5x2xf32>, tensor<3x5x2xi32>""",
    "transpose_conv": """
  %w = tosa.const {values = dense<0.25> : tensor<3x2x2x2xf32>} : tensor<3x2x2x2xf32>
  %b = tosa.const {values = dense<0.5> : tensor<3xf32>} : tensor<3xf32>
  %t = tosa.transpose_conv2d %x, %w, %b {out_pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>, out_shape = array<i64: 3, 10, 10, 3>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<3x5x5x2xf32>, tensor<3x2x2x2xf32>, tensor<3xf32>) -> tensor<3x10x10x3xf32>
  func.return %t : tensor<3x10x10x3xf32>""",
    "broadcast_select_fc": """  // the fully_connected's weights outweigh its activations: it stays batched
  %k = tosa.const {values = dense<[[[[1.0, -1.0]]]]> : tensor<1x1x1x2xf32>} : tensor<1x1x1x2xf32>
  %p = tosa.max_pool2d %x {kernel = array<i64: 1, 1>, stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>} : (tensor<3x5x5x2xf32>) -> tensor<3x5x5x2xf32>
  %m = tosa.mul %p, %k {shift = 0 : i64} : (tensor<3x5x5x2xf32>, tensor<1x1x1x2xf32>) -> tensor<3x5x5x2xf32>
  %g = tosa.greater %m, %x : (tensor<3x5x5x2xf32>, tensor<3x5x5x2xf32>) -> tensor<3x5x5x2xi1>
  %s = tosa.select %g, %m, %x : (tensor<3x5x5x2xi1>, tensor<3x5x5x2xf32>, tensor<3x5x5x2xf32>) -> tensor<3x5x5x2xf32>
  %r = tosa.reshape %s {new_shape = array<i64: 3, 50>} : (tensor<3x5x5x2xf32>) -> tensor<3x50xf32>
  %w = tosa.const {values = dense<0.01> : tensor<7x50xf32>} : tensor<7x50xf32>
  %b = tosa.const {values = dense<0.1> : tensor<7xf32>} : tensor<7xf32>
  %y = tosa.fully_connected %r, %w, %b {input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<3x50xf32>, tensor<7x50xf32>, tensor<7xf32>) -> tensor<3x7xf32>
  func.return %y : tensor<3x7xf32>""",
}

NOT_SEPARABLE = {
    "reduce_over_batch": """
  %s = tosa.reduce_sum %x {axis = 0 : i64} : (tensor<3x5x5x2xf32>) -> tensor<1x5x5x2xf32>
  func.return %s : tensor<1x5x5x2xf32>""",
    "reshape_mixing_samples": """
  %r = tosa.reshape %x {new_shape = array<i64: 5, 3, 5, 2>} : (tensor<3x5x5x2xf32>) -> tensor<5x3x5x2xf32>
  %e = tosa.exp %r : (tensor<5x3x5x2xf32>) -> tensor<5x3x5x2xf32>
  func.return %e : tensor<5x3x5x2xf32>""",
    "batch_dependent_constant": """
  %k = tosa.const {values = dense<[[[[1.0]]], [[[2.0]]], [[[3.0]]]]> : tensor<3x1x1x1xf32>} : tensor<3x1x1x1xf32>
  %m = tosa.mul %x, %k {shift = 0 : i64} : (tensor<3x5x5x2xf32>, tensor<3x1x1x1xf32>) -> tensor<3x5x5x2xf32>
  func.return %m : tensor<3x5x5x2xf32>""",
    "slice_of_the_batch": """
  %s = tosa.slice %x {start = array<i64: 1, 0, 0, 0>, size = array<i64: 2, 5, 5, 2>} : (tensor<3x5x5x2xf32>) -> tensor<2x5x5x2xf32>
  %e = tosa.exp %s : (tensor<2x5x5x2xf32>) -> tensor<2x5x5x2xf32>
  func.return %e : tensor<2x5x5x2xf32>""",
}


def _function(body: str) -> str:
    results = body.strip().splitlines()[-1].split(" : ", 1)[1]
    return f"func.func @main(%x: tensor<3x5x5x2xf32>) -> ({results}) {{{body}\n}}\n"


def _inputs(seed: int = 0) -> dict[str, np.ndarray]:
    return {"x": np.random.default_rng(seed).standard_normal((3, 5, 5, 2)).astype(np.float32)}


def _split(text: str, threshold: int = 1):
    module = parse_module(text)
    PassManager([SplitBatch(threshold_bytes=threshold)]).run(module)
    return module


def _op_names(module) -> list[str]:
    return [o.name for o in module.walk() if o.name.startswith("tosa.") and o.name != "tosa.const"]


@pytest.mark.parametrize("case", sorted(SEPARABLE))
def test_separable_ops_split_and_compute_the_same(case: str) -> None:
    text = _function(SEPARABLE[case])
    split = _split(text)
    names = _op_names(split)
    assert names.count("tosa.slice") >= 3, names  # one slice of x per sample (3 samples)
    expected = reference_run(parse_module(text), _inputs())
    got = reference_run(split, _inputs())
    for k in expected:
        np.testing.assert_array_equal(got[k], expected[k])


@pytest.mark.parametrize("case", sorted(NOT_SEPARABLE))
def test_ops_mixing_samples_are_left_alone(case: str) -> None:
    text = _function(NOT_SEPARABLE[case])
    assert _op_names(_split(text)) == _op_names(parse_module(text))


def test_threshold_zero_disables_and_prefix_stops_at_the_first_mixing_op() -> None:
    text = _function(SEPARABLE["conv_clamp"])
    assert "tosa.slice" not in _op_names(_split(text, threshold=0))
    mixed = _function("""
  %e = tosa.exp %x : (tensor<3x5x5x2xf32>) -> tensor<3x5x5x2xf32>
  %w = tosa.const {values = dense<0.25> : tensor<4x3x3x2xf32>} : tensor<4x3x3x2xf32>
  %b = tosa.const {values = dense<0.5> : tensor<4xf32>} : tensor<4xf32>
  %c = tosa.conv2d %e, %w, %b """ + CONV + """ : (tensor<3x5x5x2xf32>, tensor<4x3x3x2xf32>, tensor<4xf32>) -> tensor<3x5x5x4xf32>
  %s = tosa.reduce_sum %c {axis = 0 : i64} : (tensor<3x5x5x4xf32>) -> tensor<1x5x5x4xf32>
  %n = tosa.negate %s : (tensor<1x5x5x4xf32>) -> tensor<1x5x5x4xf32>
  func.return %n : tensor<1x5x5x4xf32>""")
    names = _op_names(_split(mixed))
    assert names.count("tosa.conv2d") == 3 and names.count("tosa.concat") == 1
    assert names[-2:] == ["tosa.reduce_sum", "tosa.negate"]
    np.testing.assert_array_equal(reference_run(_split(mixed), _inputs())["output0"],
                                  reference_run(parse_module(mixed), _inputs())["output0"])


def _compile(text: str, threads: int, threshold: int, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(nnkiln.targets, "l2_cache_bytes", lambda: threshold // 4)
    module = parse_module(text)
    PassManager(pipeline("default", get_target("cpu", threads))).run(module)
    return module


@pytest.mark.parametrize("threads", [1, 2])
def test_split_pipeline_is_safe_and_smaller(threads: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Batch 4 ResNet-like, split forced on (4 KiB threshold) vs off: the rt checker finds no hazard and
    no overlap, the simulated runs match the reference, the slices and concatenations became views (no
    slice/concat kernel), every split layer runs once per sample, and the arena shrinks."""
    text = resnet_like(2, 1, 16, 8, batch=4)
    inputs = {"x0": np.random.default_rng(1).standard_normal((4, 16, 16, 3)).astype(np.float32)}
    expected = list(reference_run(parse_module(text), inputs).values())
    arenas = {}
    for threshold in (0, 4096):
        module = _compile(text, threads, threshold, monkeypatch)
        tasks, anc, _ = reconstruct(module)
        check_hazards(tasks, anc)
        arenas[threshold], _ = check_memory(module, tasks)
        for s in range(2):
            for g, e in zip(simulate(module, inputs, seed=s), expected):
                np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
        kernels = [o.kernel.data for o in module.walk() if o.name == "buf.kernel"]
        assert "tosa.slice" not in kernels and "tosa.concat" not in kernels
        if threshold:
            assert kernels.count("tosa.conv2d") > 4 * 3  # per-sample copies of the split layers
    assert arenas[4096] < arenas[0]


def test_split_executable_matches_unsplit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled program (native kernels) gives the same outputs split and unsplit."""
    import nnkiln

    text = resnet_like(2, 2, 16, 8, batch=3)
    x = np.random.default_rng(2).standard_normal((3, 16, 16, 3)).astype(np.float32)
    outs, tasks = [], []
    for threshold in (0, 4096):
        monkeypatch.setattr(nnkiln.targets, "l2_cache_bytes", lambda t=threshold: t // 4)
        exe = nnkiln.compile(parse_module(text))
        outs.append(exe.run({"x0": x})["output0"])
        tasks.append(exe.stats["num_tasks"])
    assert tasks[1] > tasks[0]
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-6, atol=1e-6)


def test_per_sample_layers_share_weights_and_scratch(monkeypatch: pytest.MonkeyPatch) -> None:
    """The per-sample copies of a layer read one packed copy of its weights (the executable's plan caches
    load-time rearrangements per constant), and every chain of bound kernels uses one scratch buffer."""
    import nnkiln
    from nnkiln.runtime.kernels.bound import Chain, chain_units
    from nnkiln.runtime.kernels.gemm import GemmPlan, current_plan

    monkeypatch.setattr(nnkiln.targets, "l2_cache_bytes", lambda: 1024)
    exe = nnkiln.compile(parse_module(resnet_like(2, 1, 16, 8, batch=4)))
    whole = exe._units[0][0][0]  # every unit binds: one chain
    assert isinstance(whole, Chain) and len(exe._units[0]) == 1
    units = [(u, t, (), ()) for u, t in zip(whole.units, whole.tasks)]
    mid = len(units) // 2  # an unbound unit in the middle: two chains, one scratch buffer
    parts = chain_units(units[:mid] + [(lambda views: None, -1, (), ())] + units[mid:], exe._static, exe._probe_views())
    chains = [u[0] for u in parts if isinstance(u[0], Chain)]
    assert len(chains) == 2 and all(c.scratch is chains[0].scratch for c in chains)
    w = np.ones((4, 3), np.float32)
    plan = GemmPlan()
    made: list[int] = []
    first = plan.cached(w, "conv", lambda: np.array(made.append(1) or [1.0]))
    assert plan.cached(w, "conv", lambda: np.array(made.append(1) or [2.0])) is first and len(made) == 1
    assert plan.cached(w, "winograd", lambda: np.array(made.append(1) or [3.0])) is not first
    assert current_plan().cached(w, "conv", lambda: np.zeros(1)) is not current_plan().cached(w, "conv", lambda: np.zeros(1))


def test_a_per_sample_op_that_does_not_verify_leaves_the_function_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Defence in depth: were a shape-valued property left unadjusted (here RESHAPE's new_shape), the pass
    keeps the batched function rather than emit invalid IR."""
    import nnkiln.transforms.tosa.split_batch as sb

    monkeypatch.setattr(sb, "per_sample_props", lambda op, axes, n: dict(op.properties))
    text = _function(SEPARABLE["rows_matmul_transpose"])
    module = _split(text)
    assert _op_names(module) == _op_names(parse_module(text))
    def use_counts(m) -> list[int]:  # noqa: ANN001  (the discarded copies must not stay registered as users)
        return [len(list(v.uses)) for o in m.walk() for v in o.results]

    assert use_counts(module) == use_counts(parse_module(text))


def test_a_huge_batch_is_not_split_into_millions_of_ops(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 21: a batch of 100000 made split-batch emit a copy of the prefix per sample (compile time grew with the
    batch, not the work). Over ``MAX_SPLIT_OPS`` per-sample ops the function is left alone; at the cap it splits."""
    import time

    from nnkiln.transforms.tosa import split_batch

    body = SEPARABLE["conv_clamp"].replace("tensor<3x", "tensor<100000x")
    text = _function(body).replace("tensor<3x", "tensor<100000x")
    start = time.perf_counter()
    assert "tosa.slice" not in _op_names(_split(text))
    assert time.perf_counter() - start < 5
    monkeypatch.setattr(split_batch, "MAX_SPLIT_OPS", 6)  # 3 samples x 2 ops: still split
    assert _op_names(_split(_function(SEPARABLE["conv_clamp"]))).count("tosa.slice") == 3
    monkeypatch.setattr(split_batch, "MAX_SPLIT_OPS", 5)
    assert "tosa.slice" not in _op_names(_split(_function(SEPARABLE["conv_clamp"])))
