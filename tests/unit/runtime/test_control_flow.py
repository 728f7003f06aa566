"""Control flow (COND_IF, WHILE_LOOP) and tosa.custom compiled: region programs as nested blobs, run by the
runtime; results compared with hand-computed values and the reference interpreter, plans (nested ones
included) checked by the independent checker."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from blob_checker import check

import nnkiln
from nnkiln.blob.inspect import describe
from nnkiln.blob.reader import decode
from nnkiln.blob.writer import encode
from nnkiln.errors import BlobError, NotExecutableError
from nnkiln.ir.text import parse_module
from nnkiln.runtime import load_blob

# Regions are isolated from above (TOSA): values reach them as the input list; the then-branch holds a nested
# COND_IF and a constant.
COND_IF = """func.func @main(%x: tensor<2x3xf32>, %w: tensor<2x3xf32>, %c: tensor<i1>, %d: tensor<i1>) -> tensor<2x3xf32> {
  %r = tosa.cond_if %x, %w, %d, %c : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<i1>, tensor<i1>) -> tensor<2x3xf32> {
  ^bb0(%a : tensor<2x3xf32>, %v : tensor<2x3xf32>, %e : tensor<i1>):
    %s = tosa.add %a, %v : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %n = tosa.cond_if %s, %e : (tensor<2x3xf32>, tensor<i1>) -> tensor<2x3xf32> {
    ^bb1(%b : tensor<2x3xf32>):
      %k = "tosa.const"() <{values = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>}> : () -> tensor<2x3xf32>
      %m = tosa.mul %b, %k {shift = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
      tosa.yield %m : tensor<2x3xf32>
    } else {
    ^bb1(%b : tensor<2x3xf32>):
      tosa.yield %b : tensor<2x3xf32>
    }
    tosa.yield %n : tensor<2x3xf32>
  } else {
  ^bb0(%a : tensor<2x3xf32>, %v : tensor<2x3xf32>, %e : tensor<i1>):
    %k = "tosa.const"() <{values = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>}> : () -> tensor<2x3xf32>
    %f = tosa.sub %a, %k : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    tosa.yield %f : tensor<2x3xf32>
  }
  func.return %r : tensor<2x3xf32>
}"""

# WHILE_LOOP: (i, acc, n, x) → (i + 1, acc * 2 + x, n, x) while i < n.
WHILE = """func.func @main(%n: tensor<i32>, %acc: tensor<4xi32>, %x: tensor<4xi32>) -> (tensor<i32>, tensor<4xi32>) {
  %zero = "tosa.const"() <{values = dense<0> : tensor<i32>}> : () -> tensor<i32>
  %r:4 = tosa.while_loop %zero, %acc, %n, %x : (tensor<i32>, tensor<4xi32>, tensor<i32>, tensor<4xi32>) -> (tensor<i32>, tensor<4xi32>, tensor<i32>, tensor<4xi32>) {
  ^bb0(%i : tensor<i32>, %a : tensor<4xi32>, %m : tensor<i32>, %y : tensor<4xi32>):
    %more = tosa.greater %m, %i : (tensor<i32>, tensor<i32>) -> tensor<i1>
    tosa.yield %more : tensor<i1>
  } do {
  ^bb0(%i : tensor<i32>, %a : tensor<4xi32>, %m : tensor<i32>, %y : tensor<4xi32>):
    %one = "tosa.const"() <{values = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %j = tosa.add %i, %one : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %twice = tosa.add %a, %a : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %b = tosa.add %twice, %y : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    tosa.yield %j, %b, %m, %y : tensor<i32>, tensor<4xi32>, tensor<i32>, tensor<4xi32>
  }
  func.return %r#0, %r#1 : tensor<i32>, tensor<4xi32>
}"""


@pytest.mark.parametrize("pipeline", ["reference", "default"])
def test_nested_cond_if(pipeline: str) -> None:
    module = parse_module(COND_IF)
    exe = nnkiln.compile(module, pipeline=pipeline)
    assert check(describe(decode(exe.to_bytes()))) == []
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 3)).astype(np.float32), rng.standard_normal((2, 3)).astype(np.float32)
    k = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    for c in (True, False):
        for d in (True, False):
            feeds = {"x": x, "w": w, "c": np.array(c), "d": np.array(d)}
            got = next(iter(exe.run(feeds).values()))
            want = ((x + w) * k if d else x + w) if c else x - k  # hand-computed from the IR above
            np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(got, next(iter(nnkiln.reference.run(module, feeds).values())))


@pytest.mark.parametrize("n", [0, 1, 5])
def test_while_loop(n: int) -> None:
    module = parse_module(WHILE)
    exe = nnkiln.compile(module)
    acc, x = np.array([1, -2, 3, 0], np.int32), np.array([5, 6, -7, 1], np.int32)
    i, got = exe.run({"n": np.array(n, np.int32), "acc": acc, "x": x}).values()
    want = acc.copy()
    for _ in range(n):
        want = want * 2 + x
    assert int(i) == n
    np.testing.assert_array_equal(got, want)
    d = describe(decode(exe.to_bytes()))
    loops = [t for t in d["tasks"] if t["kernel"] == "tosa.while_loop"]
    assert len(loops) == 1 and len(loops[0]["programs"]) == 2 and check(d) == []


def test_region_programs_take_the_thread_count_of_their_program() -> None:
    exe = nnkiln.compile(parse_module(WHILE), threads=1)
    blob = decode(exe.to_bytes())
    assert blob.metadata["threads"] == 1
    task = next(t for t in blob.tasks if t.kernel == "tosa.while_loop")
    for k in (0, 1):
        b = blob.buffers[task.ins[k]]
        nested = decode(bytes(blob.constants[b.offset:b.offset + b.size]))
        assert "threads" not in nested.metadata and len({t.executor_index for t in nested.tasks}) <= 1


def test_a_tampered_region_program_is_refused_at_load() -> None:
    exe = nnkiln.compile(parse_module(WHILE))
    blob = decode(exe.to_bytes())
    task = next(t for t in blob.tasks if t.kernel == "tosa.while_loop")
    body = blob.buffers[task.ins[1]]
    consts = bytearray(blob.constants)
    consts[body.offset + body.size // 2] ^= 0xFF  # inside the nested body blob; the outer CRCs are recomputed
    raw = encode(dataclasses.replace(blob, constants=bytes(consts)))
    with pytest.raises(BlobError, match="region program 1"):
        load_blob(raw)


def test_custom_ops_compile_and_unknown_identifiers_fail_clearly() -> None:
    text = """func.func @main(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %y = tosa.custom %x {identifier = "IDENT", config = "nnef", implementation_attrs = ""} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  func.return %y : tensor<2x2xf32>
}"""
    x = np.array([[0.0, 0.5], [1.0, -2.0]], np.float32)
    exe = nnkiln.compile(parse_module(text.replace("IDENT", "nnef.sinh")))  # found without registration
    np.testing.assert_allclose(next(iter(exe.run({"x": x}).values())), np.sinh(x), rtol=1e-6)
    with pytest.raises(NotExecutableError, match="'nnkiln.test_unknown'.*register_custom"):
        nnkiln.compile(parse_module(text.replace("IDENT", "nnkiln.test_unknown")))
    nnkiln.runtime.register_custom("nnkiln.test_twice", lambda call: [call.inputs[0] * 2])
    exe = nnkiln.compile(parse_module(text.replace("IDENT", "nnkiln.test_twice")))
    np.testing.assert_array_equal(next(iter(exe.run({"x": x}).values())), x * 2)


def test_nnef_roi_ops_compile_and_the_saved_blob_runs_in_a_fresh_process(tmp_path) -> None:  # noqa: ANN001
    import subprocess
    import sys

    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "graph.nnef").write_text(
        "version 1.0;\ngraph G( x, rois, idx ) -> ( y, z )\n{\n"
        "    x = external(shape = [2, 3, 8, 8]);\n    rois = external(shape = [3, 4]);\n"
        "    idx = external<integer>(shape = [3]);\n"
        "    y = max_roi_pool(x, rois, idx, output_size = [2, 2]);\n"
        "    z = avg_roi_align(x, rois, idx, output_size = [2, 3], sampling_rate = [2, 2], resize_method = 'symmetric');\n}\n")
    module = nnkiln.load(str(tmp_path / "m"))
    rng = np.random.default_rng(3)
    feeds = dict(zip(nnkiln.reference.input_names(nnkiln.reference.entry_function(module)),
                     [rng.standard_normal((2, 3, 8, 8)).astype(np.float32),
                      np.array([[0, 0, 7, 7], [1.2, 2.5, 6.1, 5.0], [3, 1, 4, 7]], np.float32),
                      np.array([0, 1, 1], np.int32)]))
    want = nnkiln.reference.run(module, feeds)
    exe = nnkiln.compile(module)
    got = exe.run(feeds)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-6, atol=1e-7)
    exe.save(tmp_path / "m.kiln")
    np.savez(tmp_path / "in.npz", **feeds)
    code = ("import sys, numpy as np; from nnkiln.runtime import load_blob; "
            f"out = load_blob({str(tmp_path / 'm.kiln')!r}).run(dict(np.load({str(tmp_path / 'in.npz')!r}))); "
            f"np.savez({str(tmp_path / 'out.npz')!r}, **out); "
            "assert not any(m.startswith('xdsl') for m in sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    fresh = np.load(tmp_path / "out.npz")
    for k in want:
        np.testing.assert_array_equal(fresh[k], got[k])
