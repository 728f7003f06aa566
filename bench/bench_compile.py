"""nnkiln vs onnxruntime, side by side: compile time, latency (batch 1 and 8), peak memory, 1 and 2 threads.

Models (random weights, built with onnx.helper, opset 17, BatchNorm already folded into Conv bias as
exporters do): ResNet-18 (torchvision topology), MobileNetV2 (torchvision topology, ReLU6 = Clip),
BERT-tiny (2 layers, hidden 128, 2 heads, FFN 512, seq 128) and BERT-base (12 layers, hidden 768,
12 heads, FFN 3072, seq 128): int64 token ids, word + position embeddings, post-LN
LayerNormalization, Softmax attention without mask, GELU via Erf, no pooler.

Method (after /work/shared/notes/perf-anchors.md): every measurement runs in a fresh subprocess pinned
with ``taskset`` to T cores with ``OMP/MKL/OPENBLAS_NUM_THREADS=T``. onnxruntime: ``intra_op_num_threads
= T``, ``inter_op_num_threads = 1``. nnkiln: compiled once with the default thread count (no ``threads=``:
one executor queue whose kernels, ours and BLAS's, use every core the running process may use, here T). "compile" = nnkiln.load (ONNX import) + nnkiln.compile with nnkiln's compiler modules already
imported, resp. onnxruntime session creation (after ``import onnxruntime``, which loads its library); the
time to import nnkiln's modules in the fresh process is shown separately ("+x s module imports").
Latency = median of at least 10 timed runs and at least ``--min-seconds`` after 3 warm-up runs. Peak
memory = the process's VmHWM (peak resident set; ``ru_maxrss`` would include the parent's): for onnxruntime the process that creates the session and runs;
for nnkiln two numbers: "compile peak" (the process that imports and compiles) and "runtime peak" (a
fresh process that loads the saved blob and runs, the deployment case). Correctness: max |nnkiln −
ort| / max |ort| on the outputs of the same input.

    .venv/bin/python bench/bench_compile.py [--models resnet18,mobilenetv2,bert_tiny,bert_base]
        [--batches 1,8] [--threads 1,2] [--min-seconds 1.0] [--rounds 1] [--out bench/RESULTS.md]
        [--source torch|onnx-helper]

``--source torch`` builds the same four models in torch (``bench/torch_models.py``: seeded random weights,
exported with ``torch.onnx.export(..., dynamo=False, opset_version=17)``); it is the default when torch is
importable, ``onnx-helper`` (below) otherwise.

Needs ``onnx`` and ``onnxruntime``. The machine is shared: treat differences under ~10 % as noise.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

# -- models -------------------------------------------------------------------------------------------


def _w(rng: np.random.Generator, name: str, shape: tuple[int, ...], scale: float | None = None):  # noqa: ANN202
    from onnx import numpy_helper

    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    s = scale if scale is not None else (2.0 / max(fan_in, 1)) ** 0.5
    return numpy_helper.from_array((rng.standard_normal(shape) * s).astype(np.float32), name)


def resnet18_like(batch: int, size: int = 224):  # noqa: ANN201
    """ResNet-18 topology: 7x7/2 stem, maxpool, 4 stages x 2 basic blocks (64-512 ch), GAP, FC-1000."""
    return _resnet_like(batch, size, (2, 2, 2, 2), False, "resnet18_like")


def resnet50_like(batch: int, size: int = 224):  # noqa: ANN201
    """ResNet-50 topology (torchvision v1.5): 4 stages x (3, 4, 6, 3) bottleneck blocks (1x1, 3x3 with the
    stride, 1x1 to 4x the width; 256-2048 ch), GAP, FC-1000."""
    return _resnet_like(batch, size, (3, 4, 6, 3), True, "resnet50_like")


def _resnet_like(batch: int, size: int, blocks: tuple[int, ...], bottleneck: bool, name: str):  # noqa: ANN202
    from onnx import TensorProto, helper

    rng = np.random.default_rng(0)
    nodes, inits = [], []
    count = [0]

    def conv(x: str, cin: int, cout: int, k: int, s: int, relu: bool) -> str:
        count[0] += 1
        n = f"c{count[0]}"
        inits.append(_w(rng, f"{n}_w", (cout, cin, k, k)))
        inits.append(_w(rng, f"{n}_b", (cout,), 0.01))
        nodes.append(helper.make_node("Conv", [x, f"{n}_w", f"{n}_b"], [f"{n}_o"], kernel_shape=[k, k],
                                      strides=[s, s], pads=[k // 2] * 4))
        if relu:
            nodes.append(helper.make_node("Relu", [f"{n}_o"], [f"{n}_r"]))
            return f"{n}_r"
        return f"{n}_o"

    x = conv("input", 3, 64, 7, 2, True)
    nodes.append(helper.make_node("MaxPool", [x], ["pool"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    x, cin = "pool", 64
    for stage, width in enumerate((64, 128, 256, 512)):
        cout = width * 4 if bottleneck else width
        for block in range(blocks[stage]):
            s = 2 if stage > 0 and block == 0 else 1
            if bottleneck:
                y = conv(x, cin, width, 1, 1, True)
                y = conv(y, width, width, 3, s, True)
                y = conv(y, width, cout, 1, 1, False)
            else:
                y = conv(x, cin, cout, 3, s, True)
                y = conv(y, cout, cout, 3, 1, False)
            sc = conv(x, cin, cout, 1, s, False) if (s != 1 or cin != cout) else x
            n = f"add{stage}_{block}"
            nodes.append(helper.make_node("Add", [y, sc], [n]))
            nodes.append(helper.make_node("Relu", [n], [n + "_r"]))
            x, cin = n + "_r", cout
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["gap"]))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"]))
    inits.append(_w(rng, "fc_w", (1000, cin)))
    inits.append(_w(rng, "fc_b", (1000,), 0.01))
    nodes.append(helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], transB=1))
    graph = helper.make_graph(nodes, name,
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, [batch, 3, size, size])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, 1000])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)
    feed = {"input": np.random.default_rng(1).standard_normal((batch, 3, size, size)).astype(np.float32)}
    return model, feed




def mobilenetv2(batch: int, size: int = 224):  # noqa: ANN201
    """MobileNetV2 (torchvision topology, width 1.0): inverted residual blocks, ReLU6 as Clip(0, 6)."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    nodes, inits = [], []
    count = [0]
    six = numpy_helper.from_array(np.array(6.0, np.float32), "six")
    zero = numpy_helper.from_array(np.array(0.0, np.float32), "zero")
    inits += [six, zero]

    def conv(x: str, cin: int, cout: int, k: int, s: int, groups: int, relu6: bool) -> str:
        count[0] += 1
        n = f"c{count[0]}"
        inits.append(_w(rng, f"{n}_w", (cout, cin // groups, k, k)))
        inits.append(_w(rng, f"{n}_b", (cout,), 0.01))
        nodes.append(helper.make_node("Conv", [x, f"{n}_w", f"{n}_b"], [f"{n}_o"], kernel_shape=[k, k],
                                      strides=[s, s], pads=[k // 2] * 4, group=groups))
        if relu6:
            nodes.append(helper.make_node("Clip", [f"{n}_o", "zero", "six"], [f"{n}_r"]))
            return f"{n}_r"
        return f"{n}_o"

    x = conv("input", 3, 32, 3, 2, 1, True)
    cin = 32
    for t, c, n_rep, s in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                           (6, 160, 3, 2), (6, 320, 1, 1)):
        for i in range(n_rep):
            stride = s if i == 0 else 1
            hidden = cin * t
            y = conv(x, cin, hidden, 1, 1, 1, True) if t != 1 else x
            y = conv(y, hidden, hidden, 3, stride, hidden, True)
            y = conv(y, hidden, c, 1, 1, 1, False)
            if stride == 1 and cin == c:
                nodes.append(helper.make_node("Add", [y, x], [y + "_add"]))
                y = y + "_add"
            x, cin = y, c
    x = conv(x, cin, 1280, 1, 1, 1, True)
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["gap"]))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"]))
    inits.append(_w(rng, "fc_w", (1000, 1280)))
    inits.append(_w(rng, "fc_b", (1000,), 0.01))
    nodes.append(helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], transB=1))
    graph = helper.make_graph(nodes, "mobilenetv2",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, [batch, 3, size, size])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, 1000])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)
    feed = {"input": np.random.default_rng(1).standard_normal((batch, 3, size, size)).astype(np.float32)}
    return model, feed


def bert(batch: int, layers: int, hidden: int, heads: int, seq: int = 128, vocab: int = 30522):  # noqa: ANN201
    """A BERT encoder as exported from torch: Gather embeddings, post-LN, Softmax, GELU via Erf."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    nodes, inits = [], []
    hd, ffn = hidden // heads, 4 * hidden

    def const(name: str, arr: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(arr, name))
        return name

    def linear(x: str, n: str, din: int, dout: int) -> str:
        inits.append(_w(rng, f"{n}_w", (din, dout), (1.0 / din) ** 0.5))
        inits.append(_w(rng, f"{n}_b", (dout,), 0.01))
        nodes.append(helper.make_node("MatMul", [x, f"{n}_w"], [f"{n}_m"]))
        nodes.append(helper.make_node("Add", [f"{n}_m", f"{n}_b"], [f"{n}_o"]))
        return f"{n}_o"

    def layernorm(x: str, n: str) -> str:
        g = const(f"{n}_g", (1 + 0.1 * rng.standard_normal(hidden)).astype(np.float32))
        b = const(f"{n}_b", (0.1 * rng.standard_normal(hidden)).astype(np.float32))
        nodes.append(helper.make_node("LayerNormalization", [x, g, b], [f"{n}_o"], axis=-1, epsilon=1e-12))
        return f"{n}_o"

    const("word_emb", (0.02 * rng.standard_normal((vocab, hidden))).astype(np.float32))
    const("pos_emb", (0.02 * rng.standard_normal((1, seq, hidden))).astype(np.float32))
    nodes.append(helper.make_node("Gather", ["word_emb", "input_ids"], ["emb_w"], axis=0))
    nodes.append(helper.make_node("Add", ["emb_w", "pos_emb"], ["emb"]))
    x = layernorm("emb", "ln_e")
    shape_heads = const("shape_heads", np.array([batch, seq, heads, hd], np.int64))
    shape_back = const("shape_back", np.array([batch, seq, hidden], np.int64))
    scale = const("scale", np.array(1.0 / hd ** 0.5, np.float32))
    half, sqrt2, one = (const("half", np.array(0.5, np.float32)), const("sqrt2", np.array(2 ** 0.5, np.float32)),
                        const("one", np.array(1.0, np.float32)))
    for i in range(layers):
        p = f"l{i}"
        qkv = []
        for nm in ("q", "k", "v"):
            t = linear(x, f"{p}{nm}", hidden, hidden)
            nodes.append(helper.make_node("Reshape", [t, shape_heads], [f"{p}{nm}_r"]))
            perm = [0, 2, 3, 1] if nm == "k" else [0, 2, 1, 3]
            nodes.append(helper.make_node("Transpose", [f"{p}{nm}_r"], [f"{p}{nm}_t"], perm=perm))
            qkv.append(f"{p}{nm}_t")
        nodes.append(helper.make_node("MatMul", [qkv[0], qkv[1]], [f"{p}_s"]))
        nodes.append(helper.make_node("Mul", [f"{p}_s", scale], [f"{p}_ss"]))
        nodes.append(helper.make_node("Softmax", [f"{p}_ss"], [f"{p}_a"], axis=-1))
        nodes.append(helper.make_node("MatMul", [f"{p}_a", qkv[2]], [f"{p}_c"]))
        nodes.append(helper.make_node("Transpose", [f"{p}_c"], [f"{p}_ct"], perm=[0, 2, 1, 3]))
        nodes.append(helper.make_node("Reshape", [f"{p}_ct", shape_back], [f"{p}_cr"]))
        o = linear(f"{p}_cr", f"{p}o", hidden, hidden)
        nodes.append(helper.make_node("Add", [o, x], [f"{p}_res1"]))
        h = layernorm(f"{p}_res1", f"{p}ln1")
        f1 = linear(h, f"{p}f1", hidden, ffn)
        nodes.append(helper.make_node("Div", [f1, sqrt2], [f"{p}_g1"]))
        nodes.append(helper.make_node("Erf", [f"{p}_g1"], [f"{p}_g2"]))
        nodes.append(helper.make_node("Add", [f"{p}_g2", one], [f"{p}_g3"]))
        nodes.append(helper.make_node("Mul", [f1, f"{p}_g3"], [f"{p}_g4"]))
        nodes.append(helper.make_node("Mul", [f"{p}_g4", half], [f"{p}_gelu"]))
        f2 = linear(f"{p}_gelu", f"{p}f2", ffn, hidden)
        nodes.append(helper.make_node("Add", [f2, h], [f"{p}_res2"]))
        x = layernorm(f"{p}_res2", f"{p}ln2")
    nodes.append(helper.make_node("Identity", [x], ["hidden_out"]))
    graph = helper.make_graph(nodes, "bert",
                              [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [batch, seq])],
                              [helper.make_tensor_value_info("hidden_out", TensorProto.FLOAT, [batch, seq, hidden])],
                              inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)
    feed = {"input_ids": np.random.default_rng(1).integers(0, vocab, (batch, seq)).astype(np.int64)}
    return model, feed


def quantized(base, dynamic: bool):  # noqa: ANN001, ANN201
    """``base`` quantized by onnxruntime.quantization: statically to QDQ int8 (activations and weights int8,
    calibrated on four random inputs), or dynamically (int8 weights, DynamicQuantizeLinear + MatMulInteger)."""

    def build(batch: int):  # noqa: ANN202
        import onnx
        from onnxruntime.quantization import (
            CalibrationDataReader,
            QuantFormat,
            QuantType,
            quantize_dynamic,
            quantize_static,
        )

        model, feed = base(batch)
        with tempfile.TemporaryDirectory() as d:
            src, dst = os.path.join(d, "f.onnx"), os.path.join(d, "q.onnx")
            onnx.save(model, src)
            if dynamic:
                quantize_dynamic(src, dst, weight_type=QuantType.QInt8)
            else:
                name, x = next(iter(feed.items()))

                class Calibration(CalibrationDataReader):
                    def __init__(self) -> None:
                        self.left = [{name: np.random.default_rng(i).standard_normal(x.shape).astype(x.dtype)}
                                     for i in range(4)]

                    def get_next(self):  # noqa: ANN202
                        return self.left.pop() if self.left else None

                quantize_static(src, dst, Calibration(), quant_format=QuantFormat.QDQ,
                                activation_type=QuantType.QInt8, weight_type=QuantType.QInt8)
            return onnx.load(dst), feed

    return build


MODELS = {
    "resnet18": lambda b: resnet18_like(b),
    "resnet50": lambda b: resnet50_like(b),
    "mobilenetv2": lambda b: mobilenetv2(b),
    "bert_tiny": lambda b: bert(b, layers=2, hidden=128, heads=2),
    "bert_base": lambda b: bert(b, layers=12, hidden=768, heads=12),
}
QUANTIZED = {"resnet18_qdq": ("resnet18", False), "bert_tiny_dq": ("bert_tiny", True)}
"""Quantized variants of the float models (``quantized``), for either ``--source``; not in the issue's table of
targets, measured to keep quantized graphs honest."""


# -- one measurement in a fresh process ------------------------------------------------------------------


def _timed(run, min_seconds: float) -> tuple[float, int]:  # noqa: ANN001
    for _ in range(3):
        run()
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < 10 or (time.perf_counter() - start < min_seconds and len(times) < 300):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return 1000 * float(np.median(times)), len(times)


def _peak_mb() -> float:
    """VmHWM of this process (ru_maxrss would include the parent's peak: Linux keeps it across execve)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def _child(mode: str, workdir: str, threads: int, min_seconds: float) -> dict:
    feed = dict(np.load(os.path.join(workdir, "feed.npz")))
    onnx_path, blob_path = os.path.join(workdir, "m.onnx"), os.path.join(workdir, "m.kiln")
    if mode == "ort":
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.intra_op_num_threads, so.inter_op_num_threads = threads, 1
        t0 = time.perf_counter()
        sess = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
        compile_s = time.perf_counter() - t0
        out = sess.run(None, feed)[0]
        lat, n = _timed(lambda: sess.run(None, feed), min_seconds)
        np.save(os.path.join(workdir, f"out_ort_{threads}.npy"), out)
        return {"compile_s": compile_s, "latency_ms": lat, "n": n, "peak_mb": _peak_mb()}
    if mode == "compile":
        t0 = time.perf_counter()
        import nnkiln
        import nnkiln.compiler
        import nnkiln.conversion.rt_to_blob
        import nnkiln.frontends.onnx.importer
        import nnkiln.frontends.onnx.lowerings
        import nnkiln.pipelines  # noqa: F401

        import_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        exe = nnkiln.compile(nnkiln.load(onnx_path))
        compile_s = time.perf_counter() - t0
        exe.save(blob_path)
        return {"compile_s": compile_s, "import_s": import_s, "compile_peak_mb": _peak_mb(),
                "arena_mb": exe.stats["arena_bytes"] / 2**20,
                "arena_lb_mb": exe.stats["arena_lower_bound_bytes"] / 2**20, "tasks": exe.stats["num_tasks"]}
    from nnkiln.runtime import load_blob

    exe = load_blob(blob_path)
    out = next(iter(exe.run(feed).values()))
    lat, n = _timed(lambda: exe.run(feed), min_seconds)
    np.save(os.path.join(workdir, f"out_kiln_{threads}.npy"), out)
    return {"latency_ms": lat, "n": n, "peak_mb": _peak_mb()}


def _spawn(mode: str, workdir: str, threads: int, min_seconds: float) -> dict | None:
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[var] = str(threads)
    cmd = ["taskset", "-c", ",".join(str(i) for i in range(threads)), sys.executable, os.path.abspath(__file__),
           "--child", mode, workdir, str(threads), "--min-seconds", str(min_seconds)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        err = (proc.stderr.strip().splitlines() or ["?"])[-1]
        print(f"  {mode} (threads={threads}) FAILED: {err}", flush=True)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}x" if a is not None and b else "–"


def _fmt(v: float | None, spec: str) -> str:
    return format(v, spec) if v is not None else "–"


def _default_source() -> str:
    import importlib.util

    return "torch" if importlib.util.find_spec("torch") is not None else "onnx-helper"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default=",".join([*MODELS, *QUANTIZED]))
    p.add_argument("--batches", default="1,8")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--min-seconds", type=float, default=1.0)
    p.add_argument("--rounds", type=int, default=1,
                   help="measure the two latencies this many times, alternating (a shared machine's slow phases then "
                        "hit both); the table shows the medians and the per-round ratios' range and median")
    p.add_argument("--out", default="", help="write the table (markdown) to this file")
    p.add_argument("--source", choices=("torch", "onnx-helper"), default=_default_source(),
                   help="build the models in torch and export them (bench/torch_models.py; the default when "
                        "torch is importable) or write them with onnx.helper (the default otherwise)")
    p.add_argument("--child", nargs=3, metavar=("MODE", "WORKDIR", "THREADS"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        mode, workdir, threads = args.child
        print(json.dumps(_child(mode, workdir, int(threads), args.min_seconds)))
        return 0
    import onnx

    header = ("| model | batch | threads | compile s ort / nnkiln (ratio) | latency ms ort / nnkiln (ratio) | "
              "peak MB ort / nnkiln runtime (ratio) | nnkiln compile peak MB | arena MB (lower bound) | max rel diff |")
    rows = [header, "|" + "---|" * 9]
    print(header, flush=True)
    models = MODELS
    if args.source == "torch":
        import torch_models  # bench/ is on sys.path when this file runs as a script

        models = torch_models.MODELS
    models = {**models, **{q: quantized(models[f], dyn) for q, (f, dyn) in QUANTIZED.items() if f in models}}
    print(f"models built by: {args.source}", flush=True)
    for model in args.models.split(","):
        if model not in models:
            print(f"  {model}: not available from source {args.source} (available: {', '.join(models)})", flush=True)
            continue
        for batch in (int(b) for b in args.batches.split(",")):
            with tempfile.TemporaryDirectory() as wd:
                m, feed = models[model](batch)
                onnx.save(m, os.path.join(wd, "m.onnx"))
                np.savez(os.path.join(wd, "feed.npz"), **feed)
                del m
                comp: dict | None = None
                tried = False
                for threads in (int(t) for t in args.threads.split(",")):
                    o = _spawn("ort", wd, threads, args.min_seconds)
                    if not tried:
                        comp, tried = _spawn("compile", wd, threads, args.min_seconds), True
                    k = _spawn("run", wd, threads, args.min_seconds) if comp else None
                    spread = ""
                    if o and k and args.rounds > 1:  # alternate the two, as many rounds: the median of each and
                        ratios = [k["latency_ms"] / o["latency_ms"]]  # of the per-round ratios
                        lats = ([o["latency_ms"]], [k["latency_ms"]])
                        for _ in range(args.rounds - 1):
                            o2, k2 = _spawn("ort", wd, threads, args.min_seconds), _spawn("run", wd, threads, args.min_seconds)
                            if o2 and k2:
                                lats[0].append(o2["latency_ms"])
                                lats[1].append(k2["latency_ms"])
                                ratios.append(k2["latency_ms"] / o2["latency_ms"])
                        o["latency_ms"], k["latency_ms"] = float(np.median(lats[0])), float(np.median(lats[1]))
                        spread = f"; rounds {min(ratios):.2f}-{max(ratios):.2f}, median {float(np.median(ratios)):.2f}x"
                    diff = None
                    if o and k:
                        a = np.load(os.path.join(wd, f"out_ort_{threads}.npy"))
                        b = np.load(os.path.join(wd, f"out_kiln_{threads}.npy"))
                        diff = float(np.abs(a - b).max() / max(np.abs(a).max(), 1e-30))
                    oc, kc = (o or {}).get("compile_s"), (comp or {}).get("compile_s")
                    ol, kl = (o or {}).get("latency_ms"), (k or {}).get("latency_ms")
                    op, kp = (o or {}).get("peak_mb"), (k or {}).get("peak_mb")
                    ki = (comp or {}).get("import_s")
                    row = (f"| {model} | {batch} | {threads} | {_fmt(oc, '.2f')} / {_fmt(kc, '.2f')} ({_ratio(kc, oc)}; "
                           f"+{_fmt(ki, '.2f')} s module imports) | "
                           f"{_fmt(ol, '.2f')} / {_fmt(kl, '.2f')} (**{_ratio(kl, ol)}**{spread}) | "
                           f"{_fmt(op, '.0f')} / {_fmt(kp, '.0f')} ({_ratio(kp, op)}) | "
                           f"{_fmt((comp or {}).get('compile_peak_mb'), '.0f')} | "
                           f"{_fmt((comp or {}).get('arena_mb'), '.2f')} ({_fmt((comp or {}).get('arena_lb_mb'), '.2f')}) | "
                           f"{_fmt(diff, '.1e')} |")
                    rows.append(row)
                    print(row, flush=True)
    if args.out:
        cmd = " ".join(["python", "bench/bench_compile.py"] + (argv if argv is not None else sys.argv[1:]))
        load = os.getloadavg()
        text = (f"# nnkiln vs onnxruntime\n\nDate: {datetime.datetime.now().isoformat(timespec='minutes')}  \n"
                f"Command: `{cmd}`  \nLoad average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
                f"(the machine is shared; treat differences under ~10 % as noise)\n\n"
                "Ratios are nnkiln / onnxruntime (lower is better for nnkiln; > 1.00x means nnkiln is slower / "
                "bigger). Method: see the docstring of bench/bench_compile.py.\n\n" + "\n".join(rows) + "\n")
        with open(args.out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
