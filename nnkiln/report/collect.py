"""What a report shows, gathered in one place: ``collect(path, ...) -> ReportData``.

A model (any format ``nnkiln.load`` takes) is imported and compiled here (compile time measured); a ``.kiln``
blob is loaded as it is (its compile time is unknown: the blob holds no wall-clock time). The blob is described
by ``nnkiln.blob.inspect.describe`` (the same JSON as ``nnkiln inspect --json``), so every number of the report
is one the blob states.

Timeline: if the executable exposes a simulated one (``exe.stats["timeline"]`` or the blob's metadata
``timeline``: entries ``{task, start, end}`` in cycles; on an npu target the replay the blob records,
``task_start_cycles`` / ``task_cycles``), it is used as it is;
otherwise ``Executable.profile`` measures ``runs`` runs on seeded random inputs (as ``nnkiln bench``) and the
report shows, per task, the median duration and the timeline of the median run.

Source graph: the nodes of the model as its author wrote them. For ONNX, the ONNX graph itself (node names and
op types); for other formats, the imported TOSA ops with the source names the importer records (``NameLoc``).
The compiler carries each op's source node down to the blob: a task's kernel args name it (``source``, shown by
``nnkiln inspect``), so a source node is coloured by the executor instance that runs its tasks (an NCE op's tiles:
several instances, listed in the tooltip); a node with no task of its own (folded constants, views, post-ops fused
into a producer) is grey. The task graph (what runs) is always coloured by executor.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class SourceNode:
    """One node of the source graph: ``name`` (may be empty), ``op`` (ONNX op type or TOSA op name), the names of
    the values it reads and writes."""

    name: str
    op: str
    inputs: list[str]
    outputs: list[str]


@dataclass
class Timing:
    """One task's place in the shown timeline (``unit``: ``"s"`` measured or ``"cycles"`` simulated)."""

    task: int
    executor: str
    instance: int
    start: float
    end: float


@dataclass
class ReportData:
    """Everything the report draws; ``inspect`` is ``describe(blob)``; ``task_time[i]`` the duration of task ``i``
    (median over the profiled runs, or simulated) in ``unit``."""

    model: str
    target: str
    threads: int
    inspect: dict[str, Any]
    compile_seconds: float | None
    source_format: str
    source_nodes: list[SourceNode] | None
    timeline: list[Timing]
    unit: str
    timeline_kind: str
    task_time: dict[int, float] = field(default_factory=dict)
    runs: int = 0


def _onnx_nodes(path: str) -> list[SourceNode]:
    import onnx

    graph = onnx.load(path, load_external_data=False).graph
    return [SourceNode(n.name, n.op_type, [i for i in n.input if i], [o for o in n.output if o]) for n in graph.node]


def _module_nodes(module: Any) -> list[SourceNode]:
    """The ops of an imported module's entry function, values named by their position (``%N``)."""
    from xdsl.dialects.builtin import NameLoc
    from xdsl.dialects.func import FuncOp

    funcs = [op for op in module.body.block.ops if isinstance(op, FuncOp)]
    if not funcs:
        return []
    names: dict[Any, str] = {}

    def name(v: Any) -> str:
        return names.setdefault(v, f"%{len(names)}")

    for arg in funcs[0].body.block.args:
        name(arg)
    nodes = []
    for op in funcs[0].body.block.ops:
        if op.name in ("tosa.const", "func.return"):
            continue
        loc = getattr(op, "location", None)
        nodes.append(SourceNode(loc.desc.data if isinstance(loc, NameLoc) else "", op.name,
                                [name(v) for v in op.operands], [name(r) for r in op.results]))
    return nodes


def random_inputs(exe: Any, seed: int) -> dict[str, np.ndarray]:
    """Seeded inputs as ``nnkiln bench`` makes them (floats normal, integers zero, booleans random)."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape, dtype in exe.inputs + [(n, s, np.dtype(d)) for n, d, s in exe.ignored_inputs]:
        if dtype.kind == "f":
            out[name] = rng.standard_normal(shape).astype(dtype)
        elif dtype.kind == "b":
            out[name] = rng.random(shape) < 0.5
        else:
            out[name] = np.zeros(shape, dtype)  # index inputs stay in range
    return out


def _simulated(exe: Any) -> list[Timing] | None:
    """A simulated timeline the executable or blob carries, if any (see the module docstring): on an npu target the
    blob's own replay (METADATA ``task_start_cycles`` / ``task_cycles``, what ``nnkiln inspect`` shows)."""
    meta = exe.blob.metadata
    entries = exe.stats.get("timeline") or meta.get("timeline")
    starts, cycles = meta.get("task_start_cycles"), meta.get("task_cycles")
    npu = any(e.get("kind") == "NCE" for e in meta.get("executors", ()) if isinstance(e, dict))
    if not entries and npu and isinstance(starts, list) and isinstance(cycles, list):
        entries = [(i, s, s + c) for i, (s, c) in enumerate(zip(starts, cycles))]
    if not entries:
        return None
    tasks = exe.blob.tasks
    out = []
    for e in entries:
        i = int(e["task"] if isinstance(e, dict) else e[0])
        start, end = (e["start"], e["end"]) if isinstance(e, dict) else (e[1], e[2])
        out.append(Timing(i, tasks[i].executor, tasks[i].executor_index, float(start), float(end)))
    return out


def collect(path: str, target: str = "cpu", threads: int | None = None, runs: int = 3, seed: int = 0,
            on_step: Any = None) -> ReportData:
    """Compile (or load) ``path`` and gather the report's data; ``on_step(label)`` is told of each phase."""
    import nnkiln
    from nnkiln.blob.inspect import describe

    step = on_step or (lambda label: None)
    source_nodes: list[SourceNode] | None = None
    compile_seconds: float | None = None
    if path.endswith(".kiln"):
        step("loading the blob")
        exe = nnkiln.Executable.load(path, threads=threads)
        fmt = "kiln"
    else:
        step("importing")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # symbolic dimensions bound to 1 etc.: the compile command says so
            module = nnkiln.load(path)
        fmt = path.rsplit(".", 1)[-1] if "." in path else "model"
        source_nodes = _onnx_nodes(path) if path.endswith(".onnx") else _module_nodes(module)
        step("compiling")
        start = time.perf_counter()
        exe = nnkiln.compile(module, target=target, threads=threads)
        compile_seconds = time.perf_counter() - start
    step("describing")
    data = ReportData(model=path, target=str(exe.blob.metadata.get("target", target)), threads=exe.threads,
                      inspect=describe(exe.blob), compile_seconds=compile_seconds, source_format=fmt,
                      source_nodes=source_nodes, timeline=[], unit="s", timeline_kind="measured")
    simulated = _simulated(exe)
    if simulated is not None:
        data.timeline, data.unit, data.timeline_kind = simulated, "cycles", "simulated"
        data.task_time = {t.task: t.end - t.start for t in simulated}
        return data
    step("profiling")
    feeds = random_inputs(exe, seed)
    exe.run(feeds)  # warm-up: first-touch of the arena, lazily built plans
    profiles = [exe.profile(feeds) for _ in range(max(1, runs))]
    totals = [max((t.end_s for t in p), default=0.0) for p in profiles]
    median_run = profiles[int(np.argsort(totals)[len(totals) // 2])]
    data.timeline = [Timing(t.task, t.executor, t.instance, t.start_s, t.end_s) for t in median_run]
    per_task: dict[int, list[float]] = {}
    for p in profiles:
        for t in p:
            per_task.setdefault(t.task, []).append(t.end_s - t.start_s)
    data.task_time = {i: float(np.median(v)) for i, v in per_task.items()}
    data.runs = len(profiles)
    return data


__all__ = ["ReportData", "SourceNode", "Timing", "collect", "random_inputs"]
