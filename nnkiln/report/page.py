"""The report page: ``render(data) -> str``, one self-contained HTML file.

Sections: summary (inputs/outputs, op counts by kind, constants, arena vs lower bound, compile time, target,
pipeline), the source graph and the task graph (``nnkiln.report.graph``), the schedule per executor instance and
memory over time (``nnkiln.report.charts``), and a per-task table (kernel, shapes, time, bytes moved).

Invariants: no external reference of any kind (no ``http(s)://``, no ``src=``/``href=``; styles inline, no
script); every text from the model (names, op types, attributes) is escaped; each summary number the blob
states sits in an element with ``data-key`` (the metadata key) and ``data-value`` (the exact number), so tests and
tools can read it back.
"""

from __future__ import annotations

from collections import Counter
from html import escape
from typing import Any

from nnkiln.report.charts import colours_for, gantt, memory_chart
from nnkiln.report.collect import ReportData
from nnkiln.report.graph import Node, dag, to_svg

STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; border-bottom: 1px solid #ccc; margin-top: 1.6em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
td, th { border: 1px solid #ccc; padding: 2px 6px; text-align: left; vertical-align: top; }
th { background: #eee; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.figure { overflow: auto; max-height: 900px; border: 1px solid #ddd; margin: 0.5em 0; }
.note { color: #555; font-size: 0.85em; } .cols { display: flex; gap: 2em; flex-wrap: wrap; }
"""

_SKIP_MEMORIES = {"constant", "input", "output"}
"""Memories without a plan over time (constants are fixed, graph inputs/outputs are the caller's arrays)."""


def _bytes(n: int) -> str:
    return f"{n} B ({n / (1 << 20):.3f} MiB)"


def _kv(label: str, text: str, key: str | None = None, value: Any = None) -> str:
    attrs = f' data-key="{escape(key)}" data-value="{escape(str(value))}"' if key else ""
    return f"<tr><th>{escape(label)}</th><td{attrs}>{escape(text)}</td></tr>"


def _counts_table(title: str, counts: Counter[str]) -> str:
    rows = "".join(f'<tr><td>{escape(k)}</td><td class="num">{v}</td></tr>' for k, v in sorted(counts.items()))
    return f"<div><table><tr><th>{escape(title)}</th><th>count</th></tr>{rows}</table></div>"


def summary(data: ReportData) -> str:
    meta, ins = data.inspect["metadata"], data.inspect
    arena, lower = int(meta.get("arena_bytes", 0)), int(meta.get("arena_lower_bound_bytes", 0))
    ratio = f", {arena / lower:.3f}× the bound" if lower else ""
    compile_text = f"{data.compile_seconds:.3f} s" if data.compile_seconds is not None else "unknown (a loaded blob)"
    executors = sorted({(t["executor"], t["executor_index"]) for t in ins["tasks"]})
    rows = [
        _kv("model", data.model), _kv("source format", data.source_format),
        _kv("target", str(meta.get("target", "")), "target", meta.get("target", "")),
        _kv("pipeline", str(meta.get("pipeline", "")), "pipeline", meta.get("pipeline", "")),
        _kv("threads", str(data.threads)),
        _kv("compile time", compile_text, "compile_seconds",
            "" if data.compile_seconds is None else f"{data.compile_seconds:.6f}"),
        _kv("tasks", str(len(ins["tasks"])), "num_tasks", len(ins["tasks"])),
        _kv("barriers", str(len(ins["barriers"])), "num_barriers", len(ins["barriers"])),
        _kv("executor instances", ", ".join(f"{e}:{i}" for e, i in executors)),
        _kv("constants", _bytes(ins["constants_bytes"]), "constants_bytes", ins["constants_bytes"]),
        _kv("arena", _bytes(arena) + ratio, "arena_bytes", arena),
        _kv("arena lower bound", _bytes(lower), "arena_lower_bound_bytes", lower),
    ]
    io_rows = "".join(f"<tr><td>{escape(d['direction'])}</td><td>{escape(d['name'])}</td>"
                      f"<td>{escape(str(d['shape']))}</td><td>{escape(d['dtype'])}</td></tr>" for d in ins["io"])
    io = f"<table><tr><th></th><th>name</th><th>shape</th><th>dtype</th></tr>{io_rows}</table>"
    counts = [_counts_table("kernel (task)", Counter(t["kernel"] for t in ins["tasks"]))]
    if data.source_nodes is not None:
        counts.insert(0, _counts_table(f"source op ({data.source_format})", Counter(n.op for n in data.source_nodes)))
    return (f'<h2>Summary</h2><div class="cols"><table>{"".join(rows)}</table><div>{io}</div></div>'
            f'<h3>Ops by kind</h3><div class="cols">{"".join(counts)}</div>')


def _executor_key(task: dict[str, Any]) -> str:
    return f"{task['executor']}:{task['executor_index']}"


def task_graph(data: ReportData, colours: dict[str, str]) -> str:
    """Tasks as nodes, an edge where a task reads bytes the last writer of that buffer (or its base) wrote."""
    ins = data.inspect
    bufs = ins["buffers"]

    def base(i: int) -> int:
        while bufs[i]["alias_of"] is not None:
            i = bufs[i]["alias_of"]
        return i

    writer: dict[int, int] = {}
    edges = []
    nodes = []
    for t in ins["tasks"]:
        for j in t["inputs"]:
            if base(j) in writer:
                edges.append((writer[base(j)], t["index"]))
        for j in t["outputs"]:
            writer[base(j)] = t["index"]
        shapes = " ".join(str(bufs[j]["shape"]) for j in t["outputs"])
        nodes.append(Node([f"#{t['index']} {t['kernel']}"], _executor_key(t),
                          f"task {t['index']} {t['kernel']} on {_executor_key(t)} -> {shapes}"))
    return to_svg(dag(nodes, edges), colours, "task graph")


def source_graph(data: ReportData, colours: dict[str, str]) -> tuple[str, str]:
    """The source graph's SVG and a note on its colours: each node coloured by the executor instance that runs its
    tasks (the blob's tasks name their source node: ``source``), grey when none does (folded, a view, or fused
    into another node's task)."""
    assert data.source_nodes is not None
    runs_on: dict[str, list[str]] = {}
    for t in data.inspect["tasks"]:
        if t.get("source"):
            runs_on.setdefault(t["source"], []).append(_executor_key(t))
    shown = [n for n in data.source_nodes if n.op != "Constant"]  # constants clutter; counted in the summary
    producer = {o: k for k, n in enumerate(shown) for o in n.outputs}
    edges = [(producer[i], k) for k, n in enumerate(shown) for i in n.inputs if i in producer]
    nodes = []
    for n in shown:
        keys = sorted(set(runs_on.get(n.name, ())))
        where = (f"runs on {', '.join(keys)}" if keys else "no task of its own (folded, a view, or fused)")
        nodes.append(Node([n.op, *([n.name[:48]] if n.name else [])], keys[0] if keys else "no task",
                          f"{n.name or '(unnamed)'} ({n.op}) reads {', '.join(n.inputs)}; writes "
                          f"{', '.join(n.outputs)}; {where}"))
    mapped = sum(1 for n in shown if n.name in runs_on)
    note = (f"{mapped} of {len(shown)} nodes mapped to the tasks that run them (coloured by the first executor "
            "instance; the tooltip lists all), the others grey")
    if len(shown) < len(data.source_nodes):
        note += f"; {len(data.source_nodes) - len(shown)} ONNX Constant nodes not drawn"
    legend = {k: c for k, c in colours.items() if any(k in v for v in runs_on.values())}
    return to_svg(dag(nodes, edges), {**legend, "no task": "#ddd"}, "source graph"), note


def task_table(data: ReportData) -> str:
    ins = data.inspect
    bufs = ins["buffers"]
    label = "ms" if data.unit == "s" else data.unit
    scale = 1e3 if data.unit == "s" else 1.0
    rows = []
    for t in ins["tasks"]:
        i = t["index"]
        moved = sum(bufs[j]["size"] for j in (*t["inputs"], *t["outputs"]))
        shapes_in = ", ".join(f"{bufs[j]['dtype']}{bufs[j]['shape']}" for j in t["inputs"])
        shapes_out = ", ".join(f"{bufs[j]['dtype']}{bufs[j]['shape']}" for j in t["outputs"])
        time = data.task_time.get(i)
        rows.append(f'<tr><td class="num">{i}</td><td>{escape(_executor_key(t))}</td><td>{escape(t["kernel"])}</td>'
                    f"<td>{escape(shapes_in)}</td><td>{escape(shapes_out)}</td>"
                    f'<td class="num">{"" if time is None else f"{time * scale:.4g}"}</td>'
                    f'<td class="num">{moved}</td></tr>')
    return (f"<table><tr><th>task</th><th>executor</th><th>kernel</th><th>inputs</th><th>outputs</th>"
            f"<th>time ({escape(label)})</th><th>bytes moved</th></tr>{''.join(rows)}</table>")


def memories(data: ReportData) -> list[str]:
    """One chart per planned memory (the arena on cpu; each named memory of other targets)."""
    meta = data.inspect["metadata"]
    names = sorted({b["memory"] for b in data.inspect["buffers"]} - _SKIP_MEMORIES)
    out = []
    for m in names:
        ends = [b["offset"] + b["size"] for b in data.inspect["buffers"] if b["memory"] == m]
        capacity = int(meta.get(f"{m}_bytes", max(ends, default=0)))
        lower = meta.get(f"{m}_lower_bound_bytes")
        out.append(memory_chart(data.inspect, m, capacity, None if lower is None else int(lower)))
    return out


def render(data: ReportData) -> str:
    ins = data.inspect
    keys = sorted({_executor_key(t) for t in ins["tasks"]})
    colours = colours_for(keys)
    kernels = [t["kernel"] for t in ins["tasks"]]
    how = (f"measured: median of {data.runs} profiled run(s) (Executable.profile), timeline of the median run"
           if data.timeline_kind == "measured" else f"simulated ({data.unit})")
    parts = [f"<h1>nnkiln report: {escape(data.model)}</h1>", summary(data)]
    if data.source_nodes is not None:
        svg, note = source_graph(data, colours)
        parts += ["<h2>Source graph</h2>", f'<p class="note">nodes named by the source (op type, node name); '
                  f'linear chains collapsed; {escape(note)}; hover a box for details</p>',
                  f'<div class="figure">{svg}</div>']
    parts += ["<h2>Task graph</h2>", '<p class="note">the blob\'s tasks, coloured by the executor instance that '
              'runs them; edges: a task reads what another wrote</p>', f'<div class="figure">{task_graph(data, colours)}</div>',
              "<h2>Schedule</h2>", f'<p class="note">{escape(how)}</p>',
              f'<div class="figure">{gantt(data.timeline, kernels, data.unit, "tasks per executor instance")}</div>',
              "<h2>Memory</h2>", *(f'<div class="figure">{svg}</div>' for svg in memories(data)),
              "<h2>Tasks</h2>", f'<p class="note">time: {escape(how)}; bytes moved: operand bytes read and '
              'written</p>', task_table(data)]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>nnkiln report: {escape(data.model)}</title><style>{STYLE}</style></head>\n<body>\n"
            + "\n".join(parts) + "\n</body></html>\n")


__all__ = ["render"]
