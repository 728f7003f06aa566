"""``nnkiln bench MODEL [--runs N] [--warmup W] [--threads T] [--batch B] [--compare onnxruntime] [--json]``.

Answers "how fast" in one command: compile MODEL (any format ``nnkiln.load`` takes; a ``.kiln`` blob is loaded as
it is), feed seeded inputs (floats standard normal, integers zero so index inputs stay in range, booleans random),
run ``W`` warm-up runs, then ``N`` timed runs with a progress bar on a terminal, and print the median, p90 and
minimum latency, the throughput (batch / median), the compile time and the process's peak resident memory.

``--compare onnxruntime`` (an ONNX model, onnxruntime installed) runs onnxruntime the same way in the same process:
same inputs, ``intra_op_num_threads`` = ``--threads``, and compares the outputs (dtype, shape, ``max_abs_diff``).
``--json`` prints one JSON object (``median_ms``, ``p90_ms``, ``min_ms``, ``runs``, ``throughput_per_s``,
``compile_seconds``, ``peak_rss_mb`` and, compared, an ``onnxruntime`` object with the same timing keys plus
``outputs_match`` and ``max_abs_diff``). ``--batch B`` binds the first dimension of every input whose first dimension
is symbolic. Measurements in one process share the machine: numbers are comparable within a run, not across
machines.
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from nnkiln.cli.compile_cmds import _guard, positive_int
from nnkiln.errors import InputError


def bench_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="nnkiln bench", description="measure a model's latency (and onnxruntime's)")
    p.add_argument("model", help="a model (.onnx, .mlir, NNEF, .tosa) or a compiled blob (.kiln)")
    p.add_argument("--runs", type=positive_int, default=20, help="timed runs (default 20)")
    p.add_argument("--warmup", type=int, default=3, help="untimed runs first (default 3)")
    p.add_argument("--threads", type=positive_int, default=None, help="cpu threads (default: every core)")
    p.add_argument("--batch", type=positive_int, default=None, help="the size of symbolic first dimensions")
    p.add_argument("--target", default="cpu")
    p.add_argument("--compare", choices=("onnxruntime",), default=None, help="also run onnxruntime (ONNX models)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def bench_main(argv: Sequence[str]) -> int:
    return _guard(_bench, bench_parser().parse_args(list(argv)))


def _inputs(specs: Sequence[tuple[str, tuple[int, ...], np.dtype]], seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape, dtype in specs:
        if dtype.kind == "f":
            out[name] = rng.standard_normal(shape).astype(dtype)
        elif dtype.kind == "b":
            out[name] = rng.random(shape) < 0.5
        else:
            out[name] = np.zeros(shape, dtype)
    return out


def _time(run: Callable[[], Any], runs: int, warmup: int, label: str, quiet: bool) -> list[float]:
    """Seconds of each of ``runs`` calls after ``warmup`` untimed ones, with a progress bar unless ``quiet``."""
    from nnkiln.progress import progress

    for _ in range(warmup):
        run()
    times = []
    with progress(runs, label, quiet=quiet, unit="run") as bar:
        for _ in range(runs):
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
            bar.update(1)
    return times


def _summary(times: Sequence[float], batch: int) -> dict[str, Any]:
    ms = np.asarray(times) * 1e3
    median = float(np.median(ms))
    return {"median_ms": round(median, 4), "p90_ms": round(float(np.percentile(ms, 90)), 4),
            "min_ms": round(float(ms.min()), 4), "runs": len(times),
            "throughput_per_s": round(batch * 1e3 / median, 3) if median > 0 else None}


def _compile(args: argparse.Namespace) -> tuple[Any, float, dict[str, list[int]]]:
    """The executable, its compile seconds and the shapes bound by --batch."""
    import nnkiln

    start = time.perf_counter()
    if args.model.endswith(".kiln"):
        return nnkiln.Executable.load(args.model, threads=args.threads), 0.0, {}
    shapes = _batch_shapes(args.model, args.batch) if args.batch else {}
    module = nnkiln.load(args.model, shapes or None)
    exe = nnkiln.compile(module, target=args.target, threads=args.threads)
    return exe, time.perf_counter() - start, shapes


def _batch_shapes(path: str, batch: int) -> dict[str, list[int]]:
    """For an ONNX model: every input whose first dimension is symbolic, with it set to ``batch``."""
    if not path.endswith(".onnx"):
        raise InputError(f"{path}: --batch binds symbolic dimensions of ONNX inputs; bind other formats' shapes "
                         "when compiling")
    import onnx

    graph = onnx.load(path, load_external_data=False).graph
    init = {t.name for t in graph.initializer}
    shapes = {}
    for vi in graph.input:
        dims = vi.type.tensor_type.shape.dim if vi.type.HasField("tensor_type") else []
        if vi.name in init or not dims or dims[0].HasField("dim_value"):
            continue
        rest = [int(d.dim_value) if d.HasField("dim_value") else 1 for d in dims[1:]]
        shapes[vi.name] = [batch, *rest]
    if not shapes:
        raise InputError(f"{path}: no input has a symbolic first dimension for --batch to bind")
    return shapes


def _onnxruntime(path: str, feeds: Mapping[str, np.ndarray], threads: int | None) -> Any:
    try:
        import onnxruntime as ort
    except ImportError:
        raise InputError("--compare onnxruntime: onnxruntime is not installed (pip install onnxruntime)") from None
    if not path.endswith(".onnx"):
        raise InputError(f"--compare onnxruntime needs an ONNX model, not {path}")
    opts = ort.SessionOptions()
    if threads:
        opts.intra_op_num_threads = threads
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    from nnkiln.session import numpy_dtype_of_ort_type

    # the same values, as the element types the model declares (onnxruntime wants int64 where the model says so)
    return sess, {i.name: feeds[i.name].astype(numpy_dtype_of_ort_type(i.type) or feeds[i.name].dtype)
                  for i in sess.get_inputs() if i.name in feeds}


def _bench(args: argparse.Namespace) -> int:
    quiet = args.quiet or args.json
    exe, compile_seconds, shapes = _compile(args)
    specs = exe.inputs + [(n, s, np.dtype(d)) for n, d, s in exe.ignored_inputs]
    feeds = _inputs(specs, args.seed)
    batch = args.batch or 1  # throughput counts samples only when the batch is known
    ours = exe.run(feeds)
    result = {"model": args.model, "target": args.target, "threads": exe.threads, "batch": batch,
              **_summary(_time(lambda: exe.run(feeds), args.runs, args.warmup, "nnkiln", quiet), batch),
              "compile_seconds": round(compile_seconds, 3)}
    if args.compare:
        sess, ort_feeds = _onnxruntime(args.model, feeds, args.threads)
        theirs = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, ort_feeds)))
        times = _time(lambda: sess.run(None, ort_feeds), args.runs, args.warmup, "onnxruntime", quiet)
        result["onnxruntime"] = {**_summary(times, batch), **_compare(ours, theirs)}
    result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    if args.json:
        print(json.dumps(result))
    else:
        _print(result)
    return 0


def _compare(ours: Mapping[str, np.ndarray], theirs: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """Whether both give the same outputs: names, dtypes, shapes, values within 1e-3 relative / 1e-4 absolute."""
    worst = 0.0
    match = set(ours) == set(theirs)
    for name, t in theirs.items():
        o = ours.get(name)
        if o is None or o.dtype != t.dtype or o.shape != t.shape:
            match = False
            continue
        if o.size:
            diff = np.abs(o.astype(np.float64) - t.astype(np.float64))
            worst = max(worst, float(np.nanmax(diff)) if np.isfinite(diff).any() else 0.0)
            match &= bool(np.allclose(o.astype(np.float64), t.astype(np.float64), rtol=1e-3, atol=1e-4,
                                      equal_nan=True))
    return {"outputs_match": bool(match), "max_abs_diff": worst}


def _print(r: Mapping[str, Any]) -> None:
    print(f"{r['model']}  target {r['target']}, {r['threads']} thread(s), batch {r['batch']}, {r['runs']} runs")
    rows = [("nnkiln", r)] + ([("onnxruntime", r["onnxruntime"])] if "onnxruntime" in r else [])
    print(f"{'':12} {'median ms':>10} {'p90 ms':>10} {'min ms':>10} {'per s':>10}")
    for label, x in rows:
        print(f"{label:12} {x['median_ms']:10.3f} {x['p90_ms']:10.3f} {x['min_ms']:10.3f} "
              f"{x['throughput_per_s'] or 0:10.1f}")
    if "onnxruntime" in r:
        o = r["onnxruntime"]
        print(f"speed-up over onnxruntime: {o['median_ms'] / r['median_ms']:.2f}x (median); outputs "
              f"{'match' if o['outputs_match'] else 'DIFFER'} (max abs diff {o['max_abs_diff']:.3g})")
    print(f"compile {r['compile_seconds']:.2f} s, peak memory {r['peak_rss_mb']:.0f} MB")
