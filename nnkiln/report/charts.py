"""The report's charts as hand-written inline SVG: a Gantt chart per executor instance and memory use over time.

Why not matplotlib: both charts are rectangles, a polyline, two reference lines and an axis. Written directly they
are a few kilobytes with text kept as text (searchable, scalable), in the page's own font, with a ``<title>``
tooltip per task; matplotlib's SVG backend would add a ~40 MB dependency, draw glyphs as paths, and for a
ResNet-50-sized schedule produce several times the bytes. The graph's layout, the one hard part, comes from a
layout library (``nnkiln.report.graph``).

Invariants: every chart is one ``<svg>`` element without an ``xmlns`` (inline in HTML5 it needs none, so the page
holds no ``http://`` reference at all; ``standalone`` adds it when a chart is saved as a file), every value drawn
is escaped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from nnkiln.report.collect import Timing

PALETTE = ["#8dd3c7", "#fdb462", "#bebada", "#fb8072", "#80b1d3", "#b3de69", "#fccde5", "#ffffb3", "#bc80bd",
           "#ccebc5", "#ffed6f", "#d9d9d9"]


def colours_for(keys: Sequence[str]) -> dict[str, str]:
    """A fill per key, in the order given (cycling the palette)."""
    return {k: PALETTE[i % len(PALETTE)] for i, k in enumerate(keys)}


def _ticks(hi: float, n: int = 6) -> list[float]:
    """About ``n`` round tick values from 0 to ``hi``."""
    if hi <= 0:
        return [0.0]
    raw = hi / n
    mag = 10.0 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    return [k * step for k in range(int(hi / step) + 1)]


def _fmt(v: float) -> str:
    return f"{v:.6g}"


def standalone(svg: str) -> str:
    """``svg`` as a file of its own (with the SVG namespace a standalone file needs)."""
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + svg.replace(
        "<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1)


def gantt(timeline: Sequence[Timing], kernels: Sequence[str], unit: str, title: str, width: int = 1000) -> str:
    """One row per executor instance, one bar per task (fill by kernel, tooltip: task, kernel, start, duration)."""
    rows = sorted({(t.executor, t.instance) for t in timeline})
    if not rows:
        return '<svg class="chart" role="img" width="300" height="40"><text x="10" y="24">no tasks</text></svg>'
    scale, label = (1e3, "ms") if unit == "s" else (1.0, unit)
    end = max(t.end for t in timeline) * scale or 1.0
    left, top, row_h = 90.0, 30.0, 26.0
    plot_w = width - left - 20
    height = top + row_h * len(rows) + 60
    fills = colours_for(sorted(set(kernels)))
    x = lambda v: left + plot_w * v * scale / end  # noqa: E731
    out = [f'<svg class="chart" role="img" aria-label="{escape(title)}" width="{width}" height="{height:.0f}" '
           f'viewBox="0 0 {width} {height:.0f}" font-family="sans-serif" font-size="11">',
           f'<text x="{left:.0f}" y="16" font-weight="bold">{escape(title)}</text>']
    for r, (ex, inst) in enumerate(rows):
        y = top + r * row_h
        out.append(f'<text x="{left - 6:.0f}" y="{y + 16:.0f}" text-anchor="end">{escape(f"{ex}:{inst}")}</text>'
                   f'<rect x="{left:.0f}" y="{y:.0f}" width="{plot_w:.0f}" height="{row_h - 4:.0f}" fill="#f4f4f4"/>')
    for t in timeline:
        y = top + rows.index((t.executor, t.instance)) * row_h
        k = kernels[t.task]
        w = max(0.5, x(t.end) - x(t.start))
        tip = f"task {t.task}: {k}\nstart {_fmt(t.start * scale)} {label}, {_fmt((t.end - t.start) * scale)} {label}"
        out.append(f'<rect x="{x(t.start):.2f}" y="{y:.0f}" width="{w:.2f}" height="{row_h - 4:.0f}" '
                   f'fill="{fills[k]}" stroke="#555" stroke-width="0.3"><title>{escape(tip)}</title></rect>')
    axis_y = top + row_h * len(rows) + 4
    out.append(f'<line x1="{left:.0f}" y1="{axis_y:.0f}" x2="{left + plot_w:.0f}" y2="{axis_y:.0f}" stroke="#333"/>')
    for v in _ticks(end):
        out.append(f'<line x1="{x(v / scale):.1f}" y1="{axis_y:.0f}" x2="{x(v / scale):.1f}" y2="{axis_y + 4:.0f}" '
                   f'stroke="#333"/><text x="{x(v / scale):.1f}" y="{axis_y + 16:.0f}" '
                   f'text-anchor="middle">{_fmt(v)}</text>')
    out.append(f'<text x="{left + plot_w:.0f}" y="{axis_y + 30:.0f}" text-anchor="end">{escape(label)}</text>')
    lx = left
    for k, fill in fills.items():  # legend: kernels, wrapped onto the width
        if lx + 30 + 6.6 * len(k) > width:
            break
        out.append(f'<rect x="{lx:.0f}" y="{axis_y + 36:.0f}" width="10" height="10" fill="{fill}"/>'
                   f'<text x="{lx + 13:.0f}" y="{axis_y + 45:.0f}">{escape(k)}</text>')
        lx += 24 + 6.6 * len(k)
    out.append("</svg>")
    return "\n".join(out)


def live_bytes(inspect: Mapping[str, Any], memory: str) -> list[int]:
    """Bytes of ``memory`` live at each task (blob order): the sizes of its base buffers (not views) whose
    ``live`` range covers the task."""
    steps = [0] * len(inspect["tasks"])
    for b in inspect["buffers"]:
        if b["memory"] == memory and b["alias_of"] is None and b["live"] is not None:
            for i in range(b["live"][0], b["live"][1] + 1):
                steps[i] += b["size"]
    return steps


def memory_chart(inspect: Mapping[str, Any], memory: str, capacity: int, lower_bound: int | None,
                 width: int = 1000) -> str:
    """Live bytes of ``memory`` per task (a step line), with its size (``capacity``) and its lower bound drawn."""
    steps = live_bytes(inspect, memory)
    n = max(1, len(steps))
    top_v = max([capacity, lower_bound or 0, *steps, 1])
    left, top, plot_h = 90.0, 30.0, 180.0
    plot_w = width - left - 20
    height = top + plot_h + 50
    x = lambda i: left + plot_w * i / n  # noqa: E731
    y = lambda v: top + plot_h * (1 - v / top_v)  # noqa: E731
    mib = 1 << 20
    title = f"memory '{memory}' over time: live bytes per task"
    out = [f'<svg class="chart" role="img" aria-label="{escape(title)}" width="{width}" height="{height:.0f}" '
           f'viewBox="0 0 {width} {height:.0f}" font-family="sans-serif" font-size="11">',
           f'<text x="{left:.0f}" y="16" font-weight="bold">{escape(title)}</text>',
           f'<rect x="{left:.0f}" y="{top:.0f}" width="{plot_w:.0f}" height="{plot_h:.0f}" fill="#fafafa" '
           'stroke="#ccc"/>']
    pts = [f"{x(0):.1f},{y(0):.1f}"]
    for i, v in enumerate(steps):
        pts += [f"{x(i):.1f},{y(v):.1f}", f"{x(i + 1):.1f},{y(v):.1f}"]
    pts.append(f"{x(n):.1f},{y(0):.1f}")
    out.append(f'<polygon points="{" ".join(pts)}" fill="#80b1d3" fill-opacity="0.6" stroke="#1f5f8b"/>')
    for value, colour, name, tx, anchor in ((capacity, "#d62728", "size", left + plot_w - 4, "end"),
                                            (lower_bound, "#2ca02c", "lower bound", left + 4, "start")):
        if value is None:
            continue
        out.append(f'<line x1="{left:.0f}" y1="{y(value):.1f}" x2="{left + plot_w:.0f}" y2="{y(value):.1f}" '
                   f'stroke="{colour}" stroke-dasharray="6,3"><title>{name}: {value} B</title></line>'
                   f'<text x="{tx:.0f}" y="{y(value) - 3:.1f}" text-anchor="{anchor}" fill="{colour}">'
                   f'{name} {value / mib:.3f} MiB</text>')
    for v in _ticks(top_v / mib, 4):
        out.append(f'<text x="{left - 6:.0f}" y="{y(v * mib) + 4:.1f}" text-anchor="end">{_fmt(v)} MiB</text>')
    for v in _ticks(float(n), 8):
        out.append(f'<text x="{x(v):.1f}" y="{top + plot_h + 16:.0f}" text-anchor="middle">{int(v)}</text>')
    out.append(f'<text x="{left + plot_w:.0f}" y="{top + plot_h + 32:.0f}" text-anchor="end">task (blob order)</text>')
    out.append("</svg>")
    return "\n".join(out)


__all__ = ["colours_for", "gantt", "live_bytes", "memory_chart", "standalone"]
