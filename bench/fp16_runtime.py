"""Run time of float32 models before and after ``convert-precision-to-fp16`` (issue 22, item 2).

The pass gives the NCE operations fp16 operands (convolutions: "fp16 with fp32 accumulate") and adds
``math.cast`` conversions. The runtime's fast kernels are float32-only (``nnkiln.runtime.kernels``: any other
operand type runs the reference interpreter's numpy kernel), so on the ``cpu`` and ``npu`` targets the fp16
graph is expected to run slower, not faster: this measures by how much, and the error against float32.

Models: ``tests/data/torch_onnx/<name>.onnx`` (``--models``, prepared with the layout passes) and a small CNN
(``--cnn``: conv 3x3, ReLU, conv 1x1, residual ADD, max pool, depthwise 3x3, MUL, global average pool; 32
channels at 32x32). For each: compile time, the best and median of ``--runs`` ``Executable.run`` calls and the
relative L2 error of the fp16 outputs against float32 (reference interpreter). Run on demand (not a
test): ``.venv/bin/python bench/fp16_runtime.py [--models effnetish,unetish] [--targets cpu,npu] [--runs 20]``.
"""

from __future__ import annotations

import argparse
import io
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp

import nnkiln
from nnkiln.frontends.onnx import load_onnx
from nnkiln.ir.passes import PassManager
from nnkiln.ir.text import parse_module
from nnkiln.pipelines.text import parse_pass_pipeline
from nnkiln.reference import run as reference_run

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "torch_onnx"
LAYOUT = "canonicalize,fold-constants,propagate-transposes,cancel-transpose-pairs,canonicalize"


def passes(spec: str, module: ModuleOp) -> ModuleOp:
    out = module.clone()
    PassManager(parse_pass_pipeline(spec), stream=io.StringIO()).run(out)
    return out


def small_cnn(c: int = 32, hw: int = 32) -> ModuleOp:
    rng = np.random.default_rng(0)

    def const(name: str, shape: tuple[int, ...]) -> str:
        values = (rng.standard_normal(shape) * 0.2).astype(np.float32)
        t = "x".join(map(str, shape))
        return f"  %{name} = tosa.const {{values = dense<{values.tolist()}> : tensor<{t}xf32>}} : tensor<{t}xf32>"

    conv = ("{{pad = array<i64: {p}, {p}, {p}, {p}>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, "
            "input_zp = 0 : i64, weight_zp = 0 : i64}}")
    t, h = f"tensor<1x{hw}x{hw}x{c}xf32>", hw // 2
    t2, t3 = f"tensor<1x{h}x{h}x{c}xf32>", f"tensor<1x1x1x{c}xf32>"
    text = "\n".join([
        f"func.func @main(%x: {t}) -> {t3} {{",
        const("w1", (c, 3, 3, c)), const("w2", (c, 1, 1, c)), const("wd", (3, 3, c, 1)), const("b", (c,)),
        f"  %c1 = tosa.conv2d %x, %w1, %b {conv.format(p=1)} : ({t}, tensor<{c}x3x3x{c}xf32>, tensor<{c}xf32>) -> {t}",
        f"  %r = tosa.clamp %c1 {{min_val = 0.0 : f32, max_val = 6.0 : f32}} : ({t}) -> {t}",
        f"  %c2 = tosa.conv2d %r, %w2, %b {conv.format(p=0)} : ({t}, tensor<{c}x1x1x{c}xf32>, tensor<{c}xf32>) -> {t}",
        f"  %a = tosa.add %c2, %c1 : ({t}, {t}) -> {t}",
        f"  %p = tosa.max_pool2d %a {{kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, "
        f"pad = array<i64: 0, 0, 0, 0>}} : ({t}) -> {t2}",
        f"  %d = tosa.depthwise_conv2d %p, %wd, %b {conv.format(p=1)} : ({t2}, tensor<3x3x{c}x1xf32>, "
        f"tensor<{c}xf32>) -> {t2}",
        f"  %m = tosa.mul %d, %d {{shift = 0 : i64}} : ({t2}, {t2}) -> {t2}",
        f"  %g = tosa.avg_pool2d %m {{kernel = array<i64: {h}, {h}>, stride = array<i64: 1, 1>, "
        f"pad = array<i64: 0, 0, 0, 0>, input_zp = 0 : i64, output_zp = 0 : i64}} : ({t2}) -> {t3}",
        f"  func.return %g : {t3}", "}"])
    return parse_module(text)


def timed(fn: Callable[[], object], runs: int) -> tuple[float, float]:
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def report(name: str, module: ModuleOp, inputs: dict[str, np.ndarray], targets: list[str], runs: int) -> None:
    fp16 = passes("convert-precision-to-fp16,dce", module)
    want = reference_run(module, inputs)
    got16 = reference_run(fp16, inputs)
    err = max(float(np.linalg.norm(got16[k].astype(np.float64) - want[k]) / np.linalg.norm(want[k].astype(np.float64)))
              for k in want)
    for target in targets:
        row = []
        for m in (module, fp16):
            start = time.perf_counter()
            exe = nnkiln.compile(m, target=target)
            compile_s = time.perf_counter() - start
            best, median = timed(lambda exe=exe: exe.run(inputs), runs)
            row.append((compile_s, best, median))
        (c32, b32, m32), (c16, b16, m16) = row
        print(f"| {name} | {target} | {b32 * 1e3:.2f} / {m32 * 1e3:.2f} | {b16 * 1e3:.2f} / {m16 * 1e3:.2f} | "
              f"{m16 / m32:.1f}x | {c32:.2f} / {c16:.2f} | {err:.1e} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="effnetish,unetish")
    parser.add_argument("--targets", default="cpu,npu")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--no-cnn", action="store_true")
    args = parser.parse_args()
    targets = args.targets.split(",")
    print("| model | target | f32 run best / median ms | fp16 run best / median ms | slowdown (median) "
          "| compile s f32 / fp16 | rel. L2 error fp16 |")
    print("|---|---|---|---|---|---|---|")
    if not args.no_cnn:
        cnn = small_cnn()
        x = np.random.default_rng(1).standard_normal((1, 32, 32, 32)).astype(np.float32)
        report("small CNN 32x32x32", cnn, {"x": x}, targets, args.runs)
    for name in filter(None, args.models.split(",")):
        module = passes(LAYOUT, load_onnx(str(DATA / f"{name}.onnx")))
        report(name, module, {"x": np.load(DATA / f"{name}_x.npy")}, targets, args.runs)


if __name__ == "__main__":
    main()
