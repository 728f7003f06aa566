"""``nnkiln inspect`` and the independent checker on blobs written from rt-level IR."""

from __future__ import annotations

import json

import numpy as np
import pytest
from blob_checker import check

from nnkiln.blob.inspect import describe
from nnkiln.blob.reader import decode
from nnkiln.blob.writer import encode
from nnkiln.cli.compile_cmds import inspect_main, run_main
from nnkiln.runtime import load_blob

RT = """builtin.module attributes {nnkiln.arena_bytes = 512 : i64, nnkiln.arena_lower_bound_bytes = 256 : i64} {
func.func @main(%in0: memref<1x4x4x2xf32> {nnkiln.io = "input", nnkiln.name = "x"}, %out0: memref<1x16x2xf32> {nnkiln.io = "output", nnkiln.name = "y"}) {
  rt.barrier {id = 0 : i64}
  rt.barrier {id = 1 : i64}
  %x = rt.buffer {section = "input", offset = 0 : i64, index = 0 : i64} : memref<1x4x4x2xf32>
  %a = rt.buffer {section = "arena", offset = 0 : i64} : memref<1x4x4x2xf32>
  %b = rt.buffer {section = "arena", offset = 256 : i64} : memref<1x4x4x2xf32>
  %y = rt.buffer {section = "output", offset = 0 : i64, index = 0 : i64} : memref<1x16x2xf32>
  %w = buf.const {values = dense<[[[[1.0, 2.0]]], [[[0.5, -1.0]]]]> : tensor<2x1x1x2xf32>} : memref<2x1x1x2xf32>
  %bias = buf.const {values = dense<[0.0, 1.0]> : tensor<2xf32>} : memref<2xf32>
  rt.task {executor = "cpu", executor_index = 0 : i64, updates = array<i64: 0>} {
    %r = buf.kernel "tosa.conv2d" ins(%x, %w, %bias : memref<1x4x4x2xf32>, memref<2x1x1x2xf32>, memref<2xf32>) outs(%a : memref<1x4x4x2xf32>) {attrs = {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64}, post_ops = [{kernel = "tosa.clamp", attrs = {min_val = 0.0 : f32, max_val = 6.0 : f32}}]} -> memref<1x4x4x2xf32>
    rt.end
  }
  rt.task {executor = "cpu", executor_index = 1 : i64, waits = array<i64: 0>, updates = array<i64: 1>} {
    %r2 = buf.kernel "tosa.add" ins(%a, %x : memref<1x4x4x2xf32>, memref<1x4x4x2xf32>) outs(%b : memref<1x4x4x2xf32>) {attrs = {}} -> memref<1x4x4x2xf32>
    rt.end
  }
  rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64: 1>} {
    %v = buf.reshape %b : memref<1x4x4x2xf32> -> memref<1x16x2xf32>
    %c = buf.copy ins(%v : memref<1x16x2xf32>) outs(%y : memref<1x16x2xf32>) -> memref<1x16x2xf32>
    rt.end
  }
  func.return
}
}
"""


def _blob_bytes(text: str = RT) -> bytes:
    from nnkiln.conversion.rt_to_blob import write_blob
    from nnkiln.ir.text import parse_module
    from nnkiln.ir.verify import verify_module

    m = parse_module(text)
    verify_module(m)
    return write_blob(m, target="cpu", pipeline="hand-written")


def test_writer_blob_runs_and_matches_hand_computation() -> None:
    exe = load_blob(_blob_bytes())
    x = np.arange(32, dtype=np.float32).reshape(1, 4, 4, 2) / 10
    w = np.array([[1, 2], [0.5, -1]], np.float32)
    expected = (np.clip(x.reshape(16, 2) @ w.T + [0, 1], 0, 6) + x.reshape(16, 2)).reshape(1, 16, 2)
    np.testing.assert_allclose(exe.run({"x": x})["y"], expected, rtol=1e-6)
    assert exe.stats["arena_bytes"] == 512 and exe.stats["arena_lower_bound_bytes"] == 256


def test_inspect_json_and_checker(tmp_path, capsys) -> None:  # noqa: ANN001
    path = tmp_path / "m.kiln"
    path.write_bytes(_blob_bytes())
    assert inspect_main([str(path), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [t["kernel"] for t in d["tasks"]] == ["tosa.conv2d", "tosa.add", "buf.copy"]
    assert d["tasks"][1]["waits"] == [0] and d["tasks"][0]["updates"] == [0]
    conv_out = d["tasks"][0]["outputs"][0]
    assert d["buffers"][conv_out]["producer"] == 0 and d["buffers"][conv_out]["last_consumer"] == 1
    assert d["tasks"][0]["post_ops"][0]["kernel"] == "tosa.clamp"
    assert all(b["physical_id"] in (0, 1) for b in d["barriers"])
    assert check(d) == []
    assert inspect_main([str(path)]) == 0
    assert "tosa.conv2d" in capsys.readouterr().out


def test_checker_finds_a_missing_barrier() -> None:
    blob = decode(_blob_bytes())
    blob.tasks[1].waits = ()  # the add no longer waits for the conv it reads
    blob.barriers[0].consumers = 0
    d = describe(decode(encode(blob)))
    assert any("tasks 0 and 1" in p for p in check(d))


def test_checker_finds_overlapping_live_buffers() -> None:
    blob = decode(_blob_bytes())
    moved = blob.tasks[1].outs[0]
    for b in blob.buffers:  # the add's output (and its views) placed over the conv's output
        if b is blob.buffers[moved] or b.alias_of == moved:
            b.offset = 0
    assert check(describe(decode(encode(blob)))) == []  # still ordered by barrier 0
    blob.tasks[1].waits = ()
    blob.barriers[0].consumers = 0
    problems = check(describe(decode(encode(blob))))
    assert any("overlap" in p for p in problems)


def test_wait_before_update_is_rejected() -> None:
    from nnkiln.errors import BlobError

    bad = RT.replace('rt.task {executor = "cpu", executor_index = 0 : i64, updates = array<i64: 0>}',
                     'rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64: 1>, updates = array<i64: 0>}')
    with pytest.raises(BlobError, match="before any task updates it"):
        _blob_bytes(bad)


def test_run_main(tmp_path, capsys) -> None:  # noqa: ANN001
    path = tmp_path / "m.kiln"
    path.write_bytes(_blob_bytes())
    np.save(tmp_path / "x.npy", np.ones((1, 4, 4, 2), np.float32))
    out = tmp_path / "o.npz"
    assert run_main([str(path), "--input", f"x={tmp_path / 'x.npy'}", "--output", str(out)]) == 0
    assert np.load(out)["y"].shape == (1, 16, 2)
    assert run_main([str(tmp_path / "missing.kiln")]) == 2
    (tmp_path / "bad.kiln").write_bytes(b"garbage")
    assert run_main([str(tmp_path / "bad.kiln")]) == 1
    assert "invalid blob" in capsys.readouterr().err


def test_split_batch_blob_checks_and_live_ranges(monkeypatch: pytest.MonkeyPatch) -> None:
    """A batched network whose early layers run per sample (split-batch forced on): the independent checker
    finds nothing, and a concatenation buffer, written only through views of it, reports the live range the
    plan reserves (from its first slot's writer), while producer/last_consumer describe its own entry."""
    import nnkiln
    import nnkiln.targets
    from nnkiln.ir.text import parse_module

    t, w, b = "tensor<4x8x8x8xf32>", "tensor<8x3x3x8xf32>", "tensor<8xf32>"
    conv = ('tosa.conv2d {x}, %w, %b {{pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = '
            'array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64}} : ({t}, {w}, {b}) -> {t}')
    text = f"""func.func @main(%x: {t}) -> ({t}, tensor<1x8x8x8xf32>) {{
  %w = tosa.const {{values = dense<0.1> : {w}}} : {w}
  %b = tosa.const {{values = dense<0.5> : {b}}} : {b}
  %c1 = {conv.format(x="%x", t=t, w=w, b=b)}
  %r1 = tosa.clamp %c1 {{min_val = 0.0 : f32, max_val = 6.0 : f32}} : ({t}) -> {t}
  %c2 = {conv.format(x="%r1", t=t, w=w, b=b)}
  %a = tosa.add %c2, %r1 : ({t}, {t}) -> {t}
  %s = tosa.reduce_sum %a {{axis = 0 : i64}} : ({t}) -> tensor<1x8x8x8xf32>
  func.return %a, %s : {t}, tensor<1x8x8x8xf32>
}}"""
    monkeypatch.setattr(nnkiln.targets, "l2_cache_bytes", lambda: 1024)
    d = describe(decode(nnkiln.compile(parse_module(text)).to_bytes()))
    assert check(d) == []
    bufs = d["buffers"]
    bases = {b["alias_of"] for b in bufs if b["alias_of"] is not None and bufs[b["alias_of"]]["memory"] != "input"}
    slotted = [bufs[i] for i in bases if bufs[i]["producer"] is None]
    assert slotted, "no concatenation written through views"
    for base in slotted:
        writers = [t["index"] for t in d["tasks"] for o in t["outputs"] if bufs[o]["alias_of"] == base["index"]]
        assert base["live"][0] == min(writers) and base["live"][1] >= max(writers + [base["last_consumer"] or 0])
