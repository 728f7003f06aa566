"""Compile time, latency (batch 1 and 8) and peak memory of nnkiln vs onnxruntime.

Models are built with onnx.helper with random weights: a ResNet-18-like CNN and a BERT-like encoder
(``--bert-layers``). Each model is imported with ``nnkiln.load`` (ONNX frontend), compiled with
``nnkiln.compile`` and run; onnxruntime runs the same ONNX file. Prints a table and the ratios
nnkiln / onnxruntime. Peak memory is the process's resident-set growth measured in a fresh
subprocess per (engine, model, batch) (``ru_maxrss``), so one engine's allocations do not hide the
other's.

    .venv/bin/python bench/bench_compile.py [--models resnet,bert] [--batches 1,8] [--repeat 10]

Needs ``onnx`` and ``onnxruntime`` (the ``bench`` extra). A model the frontend cannot import yet is
reported and skipped.
"""

from __future__ import annotations

import argparse
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
    for stage, cout in enumerate((64, 128, 256, 512)):
        for block in range(2):
            s = 2 if stage > 0 and block == 0 else 1
            y = conv(x, cin, cout, 3, s, True)
            y = conv(y, cout, cout, 3, 1, False)
            sc = conv(x, cin, cout, 1, s, False) if (s != 1 or cin != cout) else x
            n = f"add{stage}_{block}"
            nodes.append(helper.make_node("Add", [y, sc], [n]))
            nodes.append(helper.make_node("Relu", [n], [n + "_r"]))
            x, cin = n + "_r", cout
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["gap"]))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"]))
    inits.append(_w(rng, "fc_w", (1000, 512)))
    inits.append(_w(rng, "fc_b", (1000,), 0.01))
    nodes.append(helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], transB=1))
    graph = helper.make_graph(nodes, "resnet18_like",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, [batch, 3, size, size])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, 1000])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)
    feed = {"input": np.random.default_rng(1).standard_normal((batch, 3, size, size)).astype(np.float32)}
    return model, feed


def bert_like(batch: int, seq: int = 128, hidden: int = 768, heads: int = 12, layers: int = 4):  # noqa: ANN201
    """A BERT-base-like encoder (MatMul/Add/Softmax/LayerNorm as primitive ops, GELU via Erf)."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    nodes, inits = [], []
    hd = hidden // heads

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
        nodes.append(helper.make_node("ReduceMean", [x], [f"{n}_mu"], axes=[-1], keepdims=1))
        nodes.append(helper.make_node("Sub", [x, f"{n}_mu"], [f"{n}_d"]))
        nodes.append(helper.make_node("Mul", [f"{n}_d", f"{n}_d"], [f"{n}_sq"]))
        nodes.append(helper.make_node("ReduceMean", [f"{n}_sq"], [f"{n}_var"], axes=[-1], keepdims=1))
        eps = const(f"{n}_eps", np.array(1e-12, np.float32))
        nodes.append(helper.make_node("Add", [f"{n}_var", eps], [f"{n}_ve"]))
        nodes.append(helper.make_node("Sqrt", [f"{n}_ve"], [f"{n}_sd"]))
        nodes.append(helper.make_node("Div", [f"{n}_d", f"{n}_sd"], [f"{n}_nz"]))
        g = const(f"{n}_g", np.ones(hidden, np.float32))
        b = const(f"{n}_b", np.zeros(hidden, np.float32))
        nodes.append(helper.make_node("Mul", [f"{n}_nz", g], [f"{n}_sc"]))
        nodes.append(helper.make_node("Add", [f"{n}_sc", b], [f"{n}_o"]))
        return f"{n}_o"

    x = "hidden_in"
    shape_heads = const("shape_heads", np.array([batch, seq, heads, hd], np.int64))
    shape_back = const("shape_back", np.array([batch, seq, hidden], np.int64))
    scale = const("scale", np.array(1.0 / hd ** 0.5, np.float32))
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
        f1 = linear(h, f"{p}f1", hidden, 4 * hidden)
        half, sqrt2, one = (const(f"{p}_half", np.array(0.5, np.float32)), const(f"{p}_s2", np.array(2 ** 0.5, np.float32)),
                            const(f"{p}_one", np.array(1.0, np.float32)))
        nodes.append(helper.make_node("Div", [f1, sqrt2], [f"{p}_g1"]))
        nodes.append(helper.make_node("Erf", [f"{p}_g1"], [f"{p}_g2"]))
        nodes.append(helper.make_node("Add", [f"{p}_g2", one], [f"{p}_g3"]))
        nodes.append(helper.make_node("Mul", [f1, f"{p}_g3"], [f"{p}_g4"]))
        nodes.append(helper.make_node("Mul", [f"{p}_g4", half], [f"{p}_gelu"]))
        f2 = linear(f"{p}_gelu", f"{p}f2", 4 * hidden, hidden)
        nodes.append(helper.make_node("Add", [f2, h], [f"{p}_res2"]))
        x = layernorm(f"{p}_res2", f"{p}ln2")
    nodes.append(helper.make_node("Identity", [x], ["hidden_out"]))
    graph = helper.make_graph(nodes, "bert_like",
                              [helper.make_tensor_value_info("hidden_in", TensorProto.FLOAT, [batch, seq, hidden])],
                              [helper.make_tensor_value_info("hidden_out", TensorProto.FLOAT, [batch, seq, hidden])],
                              inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)
    feed = {"hidden_in": np.random.default_rng(1).standard_normal((batch, seq, hidden)).astype(np.float32)}
    return model, feed


MODELS = {"resnet": resnet18_like, "bert": bert_like}


# -- one measurement in a fresh process ------------------------------------------------------------------


def _measure(engine: str, model_name: str, batch: int, repeat: int, kwargs: dict) -> dict:
    import resource

    import onnx

    model, feed = MODELS[model_name](batch, **kwargs)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.onnx")
        onnx.save(model, path)
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        start = time.perf_counter()
        if engine == "ort":
            import onnxruntime as ort

            sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
            run = lambda: sess.run(None, feed)  # noqa: E731
        else:
            import nnkiln

            module = nnkiln.load(path)
            exe = nnkiln.compile(module)
            names = exe.input_names
            f = {names[0]: next(iter(feed.values()))} if len(names) == 1 else feed
            run = lambda: exe.run(f)  # noqa: E731
        compile_s = time.perf_counter() - start
        out = run()  # warm up
        first = np.asarray(out[0] if isinstance(out, list) else next(iter(out.values()))).reshape(-1)
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            run()
            times.append(time.perf_counter() - t0)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = {"compile_s": compile_s, "latency_ms": 1000 * float(np.median(times)), "peak_mb": peak / 1024,
              "peak_growth_mb": (peak - base) / 1024, "sample": first[:64].astype(float).tolist(),
              "absmax": float(np.abs(first).max())}
    if engine == "nnkiln":
        result["arena_mb"] = exe.stats["arena_bytes"] / 2**20
        result["arena_lower_bound_mb"] = exe.stats["arena_lower_bound_bytes"] / 2**20
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="resnet,bert")
    p.add_argument("--batches", default="1,8")
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--bert-layers", type=int, default=4)
    p.add_argument("--resnet-size", type=int, default=224)
    p.add_argument("--child", nargs=3, metavar=("ENGINE", "MODEL", "BATCH"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    kwargs_of = {"resnet": {"size": args.resnet_size}, "bert": {"layers": args.bert_layers}}
    if args.child:
        engine, model, batch = args.child
        print(json.dumps(_measure(engine, model, int(batch), args.repeat, kwargs_of[model])))
        return 0
    rows = []
    for model in args.models.split(","):
        for batch in (int(b) for b in args.batches.split(",")):
            res = {}
            for engine in ("ort", "nnkiln"):
                cmd = [sys.executable, __file__, "--child", engine, model, str(batch), "--repeat", str(args.repeat),
                       "--bert-layers", str(args.bert_layers), "--resnet-size", str(args.resnet_size)]
                proc = subprocess.run(cmd, capture_output=True, text=True)
                if proc.returncode != 0:
                    err = (proc.stderr.strip().splitlines() or ["?"])[-1]
                    print(f"{model} b{batch} {engine}: FAILED: {err}")
                    res[engine] = None
                    continue
                res[engine] = json.loads(proc.stdout.strip().splitlines()[-1])
            rows.append((model, batch, res))
            o, n = res.get("ort"), res.get("nnkiln")
            line = f"{model:7} b{batch}: "
            if o:
                line += f"ort compile {o['compile_s']:.2f}s lat {o['latency_ms']:.1f}ms peak {o['peak_mb']:.0f}MB | "
            if n:
                line += (f"nnkiln compile {n['compile_s']:.2f}s lat {n['latency_ms']:.1f}ms peak {n['peak_mb']:.0f}MB "
                         f"arena {n['arena_mb']:.1f}MB (lb {n['arena_lower_bound_mb']:.1f}MB)")
            if o and n:
                diff = float(np.abs(np.array(o["sample"]) - np.array(n["sample"])).max()) / max(o["absmax"], 1e-30)
                line += f" | max rel diff (64 values) {diff:.1e}"
                line += (f" | ratios nnkiln/ort: compile {n['compile_s'] / o['compile_s']:.1f}x, "
                         f"latency {n['latency_ms'] / o['latency_ms']:.2f}x, peak {n['peak_mb'] / o['peak_mb']:.2f}x")
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
