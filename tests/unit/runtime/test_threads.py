"""Thread counts: ``nnkiln.compile(threads=N)`` makes a one-queue program whose kernels use N threads (recorded
in the blob), ``queues=Q`` spreads tasks over Q executor queues, ``load(threads=)`` overrides the blob's count;
``blas.thread_budget`` sets and restores the count kernels and OpenBLAS see."""

from __future__ import annotations

import json

import numpy as np
import pytest

import nnkiln
from nnkiln.blob.reader import decode
from nnkiln.blob.writer import encode
from nnkiln.errors import BlobError, NnkilnError
from nnkiln.ir.text import parse_module
from nnkiln.reference import run as reference_run
from nnkiln.runtime import blas

GRAPH = """
func.func @main(%x: tensor<1x8x8x4xf32>) -> (tensor<1x8x8x6xf32>, tensor<1x8x8x6xf32>) {
  %w = "tosa.const"() <{values = dense<0.25> : tensor<6x3x3x4xf32>}> : () -> tensor<6x3x3x4xf32>
  %b = "tosa.const"() <{values = dense<0.5> : tensor<6xf32>}> : () -> tensor<6xf32>
  %a = tosa.conv2d %x, %w, %b {pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x8x8x4xf32>, tensor<6x3x3x4xf32>, tensor<6xf32>) -> tensor<1x8x8x6xf32>
  %c = tosa.conv2d %x, %w, %b {pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x8x8x4xf32>, tensor<6x3x3x4xf32>, tensor<6xf32>) -> tensor<1x8x8x6xf32>
  %t = tosa.tanh %c : (tensor<1x8x8x6xf32>) -> tensor<1x8x8x6xf32>
  func.return %a, %t : tensor<1x8x8x6xf32>, tensor<1x8x8x6xf32>
}
"""
X = {"x": np.random.default_rng(3).standard_normal((1, 8, 8, 4)).astype(np.float32)}


def _close(got: dict[str, np.ndarray], ref: dict[str, np.ndarray]) -> None:
    assert got.keys() == ref.keys()
    for k in ref:
        np.testing.assert_allclose(got[k], ref[k], rtol=1e-5, atol=1e-5 * float(np.abs(ref[k]).max()))


def test_threads_make_one_queue_and_are_recorded(tmp_path) -> None:  # noqa: ANN001
    m = parse_module(GRAPH)
    ref = reference_run(m, X)
    exe = nnkiln.compile(m, threads=2)
    assert exe.stats["num_executors"] == 1
    assert exe.blob.metadata["threads"] == 2
    assert exe.threads == min(2, blas.usable_cpus())
    _close(exe.run(X), ref)
    exe.save(tmp_path / "m.kiln")
    assert decode((tmp_path / "m.kiln").read_bytes()).metadata["threads"] == 2
    assert nnkiln.Executable.load(tmp_path / "m.kiln", threads=1).threads == 1
    one = nnkiln.compile(m, threads=1)
    assert one.threads == 1 and one.blob.metadata["threads"] == 1
    _close(one.run(X), ref)
    assert "threads" not in nnkiln.compile(m).blob.metadata


def test_queues_spread_tasks() -> None:
    m = parse_module(GRAPH)
    ref = reference_run(m, X)
    exe = nnkiln.compile(m, threads=2, queues=2)
    assert exe.stats["num_executors"] == 2
    _close(exe.run(X), ref)
    with pytest.raises(NnkilnError, match="queues must be between 1 and the target's 2"):
        nnkiln.compile(m, threads=2, queues=3)
    with pytest.raises(NnkilnError, match="threads must be >= 1"):
        nnkiln.compile(m, threads=0)


def test_thread_budget_sets_and_restores() -> None:
    outside = blas.kernel_threads()
    with blas.thread_budget(1):
        assert blas.kernel_threads() == 1
        funcs = blas.find_blas_thread_controls()
        if funcs:
            assert funcs[0]() == 1
        with blas.thread_budget(64):
            assert blas.kernel_threads() == blas.usable_cpus()
        assert blas.kernel_threads() == 1
    assert blas.kernel_threads() == outside
    with blas.single_threaded_blas():  # a region program's run inside a multi-executor run changes nothing
        with blas.thread_budget(2):
            assert blas.kernel_threads() == 1
            funcs = blas.find_blas_thread_controls()
            if funcs:
                assert funcs[0]() == 1


def test_blob_rejects_bad_thread_counts() -> None:
    blob = nnkiln.compile(parse_module(GRAPH), threads=1).blob
    for bad in (0, -1, 1.5, True, "2", 10**6):
        blob.metadata["threads"] = bad
        with pytest.raises(BlobError, match="METADATA threads"):
            decode(encode(blob))


def test_cli_threads_and_queues(tmp_path, capsys) -> None:  # noqa: ANN001
    from nnkiln.cli.compile_cmds import compile_main, run_main

    src = tmp_path / "g.mlir"
    src.write_text(GRAPH)
    out = tmp_path / "g.kiln"
    assert compile_main([str(src), "-o", str(out), "--threads", "2", "--queues", "2"]) == 0
    assert decode(out.read_bytes()).metadata["threads"] == 2
    capsys.readouterr()
    assert run_main([str(out), "--random-inputs", "--stats", "--threads", "1"]) == 0
    printed = capsys.readouterr().out
    stats = json.loads(printed[printed.index("{"):])
    assert stats["num_executors"] == 2 and stats["threads"] == 2
    with pytest.raises(SystemExit):
        compile_main([str(src), "-o", str(out), "--threads", "0"])
    assert "expected a positive integer, got 0" in capsys.readouterr().err
