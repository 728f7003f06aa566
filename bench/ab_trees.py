"""Latency of two checkouts of nnkiln (and onnxruntime) on the benchmark models, alternated process by process.

    .venv/bin/python bench/ab_trees.py OLD_TREE NEW_TREE [--models resnet18,mobilenetv2,bert_tiny,bert_base]
        [--batches 1,8] [--threads 1,2] [--rounds 3] [--min-seconds 2]

Each tree compiles every model in a process of its own (``PYTHONPATH=TREE``, the tree's ``nnkiln``), then each
round runs, for every tree and onnxruntime in an order that changes round by round, one process that loads the
blob (or the model) and times runs as ``bench_compile.py`` does (pinned to ``threads`` cores). A machine whose
speed drifts moves all three alike within a round: the table gives the medians over rounds and the ratios
NEW/OLD and NEW/onnxruntime. Outputs are compared with onnxruntime's (max abs difference).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

_CHILD = r"""
import json, sys, time
import numpy as np
mode, workdir, threads, min_seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
feed = dict(np.load(workdir + "/feed.npz"))
if mode == "compile":
    import nnkiln
    t0 = time.perf_counter()
    exe = nnkiln.compile(nnkiln.load(workdir + "/m.onnx"))
    s = time.perf_counter() - t0
    exe.save(sys.argv[5])
    print(json.dumps({"compile_s": s, "tasks": exe.stats["num_tasks"], "file": nnkiln.__file__}))
    sys.exit(0)
if mode == "ort":
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads = threads, 1
    sess = ort.InferenceSession(workdir + "/m.onnx", so, providers=["CPUExecutionProvider"])
    run = lambda: sess.run(None, feed)
else:
    from nnkiln.runtime import load_blob
    exe = load_blob(sys.argv[5], threads=threads)
    run = lambda: list(exe.run(feed).values())
out = run()[0]
np.save(sys.argv[6], out)
for _ in range(3):
    run()
times = []
start = time.perf_counter()
while len(times) < 10 or (time.perf_counter() - start < min_seconds and len(times) < 300):
    t0 = time.perf_counter()
    run()
    times.append(time.perf_counter() - t0)
print(json.dumps({"ms": 1000 * float(np.median(times))}))
"""


def _spawn(tree: str | None, args: list[str], threads: int) -> dict:
    env = dict(os.environ)
    if tree:
        env["PYTHONPATH"] = tree
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[var] = str(threads)
    cmd = ["taskset", "-c", ",".join(str(i) for i in range(threads)), sys.executable, "-c", _CHILD, *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tree or None)
    if proc.returncode != 0:
        raise SystemExit(f"{tree or 'ort'}: {args[0]} failed: {proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--models", default="resnet18,mobilenetv2,bert_tiny,bert_base")
    p.add_argument("--batches", default="1")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--min-seconds", type=float, default=2.0)
    a = p.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import bench_compile  # the model builders
    import onnx

    trees = {"old": os.path.abspath(a.old), "new": os.path.abspath(a.new)}
    print("| model | batch | threads | old ms | new ms | ort ms | new/old | new/ort | old/ort | tasks old/new |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for model in a.models.split(","):
        for batch in (int(b) for b in a.batches.split(",")):
            work = tempfile.mkdtemp(prefix=f"ab-{model}-{batch}-")
            m, feed = bench_compile.MODELS[model](batch)
            onnx.save(m, os.path.join(work, "m.onnx"))
            np.savez(os.path.join(work, "feed.npz"), **feed)
            tasks = {}
            for name, tree in trees.items():
                tasks[name] = _spawn(tree, ["compile", work, "1", "0", f"{work}/{name}.kiln"], 2)["tasks"]
            for threads in (int(t) for t in a.threads.split(",")):
                times: dict[str, list[float]] = {"old": [], "new": [], "ort": []}
                order = ["old", "new", "ort"]
                for r in range(a.rounds):
                    for who in order[r % 3:] + order[:r % 3]:
                        tree = trees.get(who)
                        args = ["ort" if who == "ort" else "run", work, str(threads), str(a.min_seconds),
                                f"{work}/{who}.kiln", f"{work}/out_{who}.npy"]
                        times[who].append(_spawn(tree, args, threads)["ms"])
                med = {k: float(np.median(v)) for k, v in times.items()}
                ref = np.load(f"{work}/out_ort.npy")
                err = max(float(np.max(np.abs(np.load(f"{work}/out_{k}.npy") - ref))) for k in ("old", "new"))
                print(f"| {model} | {batch} | {threads} | {med['old']:.2f} | {med['new']:.2f} | {med['ort']:.2f} | "
                      f"{med['new'] / med['old']:.3f} | {med['new'] / med['ort']:.2f} | {med['old'] / med['ort']:.2f} | "
                      f"{tasks['old']}/{tasks['new']} |  (max |out - ort| {err:.1e})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
