"""The npu targets' schedules against a schedule-independent lower bound (issue 22, "Targets").

For each model and npu target: compile (``nnkiln.compile_to_blob``, the target's ``default`` pipeline) and report
the simulated makespan the compiler recorded in the blob (``simulated_cycles``), the lower bound
(``nnkiln.runtime.simulate``: the larger of the longest chain of data dependencies weighted by cycles and, per
executor kind, total cycles / instances), their ratio (target: <= 1.2 per model, geometric mean <= 1.25), spill
and DMA bytes, tasks, physical barriers, and the compile time against the cpu target's ``default`` pipeline on the
same model (target: npu <= 2x cpu; median of ``--rounds`` compiles each).

Models: ``tests/data/torch_onnx/<name>.onnx`` (``--models``), generated tosa graphs of
``tests/support/compiler_graphs.py`` (``--graphs``: ``resnet_like`` with 3 stages of 2 blocks at 32x32, ``wide``
with 24 parallel branches) and the independent ONNX models of ``tests/support/npu_models.py`` (``--npu-models``:
a residual CNN with upsampling, a transformer encoder block, int8 QDQ and QOperator models, the half-width
ResNet-18 at 224x224; built from seeded weights into a temporary directory). The ``checker`` column is
``tests/support/npu_checker.py`` over the blob's inspect JSON (violations per rule; ``ok`` when none), and
``checker bound`` that checker's independent lower bound (it should equal the simulator's). Run on demand (not a test):
``.venv/bin/python bench/npu_schedule.py [--models unetish,vitish,gptblock,effnetish] [--graphs resnet_like,wide]
[--npu-models cnn_residual_upsample,...,resnet18_half] [--rounds 3]`` (an empty list skips a group); prints a
markdown table.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from nnkiln.blob.inspect import describe
from nnkiln.compiler import compile_to_blob
from nnkiln.frontends import load
from nnkiln.ir.text import parse_module
from nnkiln.runtime.simulate import simulate

DATA = Path(__file__).parents[1] / "tests" / "data" / "torch_onnx"
sys.path.insert(0, str(Path(__file__).parents[1] / "tests" / "support"))
TARGETS = ("npu", "npu-small")


def _compile_seconds(module: object, target: str, rounds: int) -> tuple[float, object]:
    times, blob = [], None
    for _ in range(rounds):
        start = time.perf_counter()
        blob, _raw = compile_to_blob(module, target=target)
        times.append(time.perf_counter() - start)
    return statistics.median(times), blob


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="unetish,vitish,gptblock,effnetish")
    ap.add_argument("--graphs", default="resnet_like,wide")
    ap.add_argument("--npu-models", default="cnn_residual_upsample,transformer_encoder,int8_qdq,int8_qoperator,"
                    "resnet18_half", help="builders of tests/support/npu_models.py")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    print("| model | target | tasks | queues | physical barriers | simulated cycles | lower bound | checker bound | ratio | "
          "critical path | spill bytes | DMA bytes | compile s (npu / cpu) | npu / cpu | checker |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    ratios: dict[str, list[float]] = {t: [] for t in TARGETS}
    import compiler_graphs
    import npu_checker
    import npu_models

    graphs = [n for n in args.graphs.split(",") if n]
    built = [n for n in args.npu_models.split(",") if n]
    names = [n for n in args.models.split(",") if n] + graphs + built
    tmp = tempfile.TemporaryDirectory()
    for name in names:
        if name in graphs:
            module = parse_module(getattr(compiler_graphs, name)())
        elif name in built:
            import onnx

            path = Path(tmp.name) / f"{name}.onnx"
            onnx.save(npu_models.MODELS[name]()[0], path)
            module = load(str(path))
        else:
            module = load(str(DATA / f"{name}.onnx"))
        cpu_s, _ = _compile_seconds(module, "cpu", args.rounds)
        for target in TARGETS:
            npu_s, blob = _compile_seconds(module, target, args.rounds)
            sim = simulate(blob)  # type: ignore[arg-type]
            meta = blob.metadata  # type: ignore[attr-defined]
            assert sim.makespan == meta["simulated_cycles"], "the replay differs from what the compiler recorded"
            ratio = sim.makespan / sim.lower_bound
            ratios[target].append(ratio)
            queues = len({(t.executor, t.executor_index) for t in blob.tasks})  # type: ignore[attr-defined]
            barriers = len({b.physical_id for b in blob.barriers})  # type: ignore[attr-defined]
            d = json.loads(json.dumps(describe(blob)))  # type: ignore[arg-type]
            rules = Counter(v.split("]")[0].lstrip("[") for v in npu_checker.check(d))
            verdict = ", ".join(f"{k}: {n}" for k, n in sorted(rules.items())) or "ok"
            print(f"| {name} | {target} | {len(sim.cycles)} | {queues} | {barriers} | {sim.makespan} | "
                  f"{sim.lower_bound} | {npu_checker.lower_bound(d)} | {ratio:.3f} | {sim.critical_path} | {sim.spill_bytes} | {sim.dma_bytes} | "
                  f"{npu_s:.3f} / {cpu_s:.3f} | {npu_s / cpu_s:.2f} | {verdict} |", flush=True)
    tmp.cleanup()
    for target, rs in ratios.items():
        print(f"\ngeometric mean of makespan / lower bound on {target}: "
              f"{math.exp(sum(math.log(r) for r in rs) / len(rs)):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
