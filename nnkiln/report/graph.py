"""A DAG as SVG: chains collapsed, a node cap, a Sugiyama layout by ``grandalf``, drawn here from its coordinates.

Why ``grandalf``: a maintained, pure-Python implementation of the layered (Sugiyama) layout Graphviz's ``dot``
uses; no binary, nothing to install beyond a wheel. We only compute positions with it; the SVG (boxes, labels,
polyline edges, a ``<title>`` tooltip per node) is written here, inline, without any external reference.

Large graphs stay readable: a linear chain (each node the only successor of the previous one, which has no other)
becomes one box listing its ops (``collapse_chains``), and at most ``max_nodes`` boxes are drawn (the first in
topological order; the figure says how many were left out).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape

CHAR_W = 6.6
"""Approximate width of one character of the 11 px label font, for box widths."""


@dataclass
class Node:
    """One box: its label lines, the colour key (executor instance or op family), the tooltip text."""

    lines: list[str]
    key: str
    tooltip: str
    members: int = 1
    preds: list[int] = field(default_factory=list)
    succs: list[int] = field(default_factory=list)


def dag(nodes: Sequence[Node], edges: Sequence[tuple[int, int]]) -> list[Node]:
    """``nodes`` with their (deduplicated, self-loop-free) edges filled in."""
    for a, b in sorted(set(edges)):
        if a != b:
            nodes[a].succs.append(b)
            nodes[b].preds.append(a)
    return list(nodes)


def collapse_chains(nodes: list[Node], max_lines: int = 4) -> list[Node]:
    """Merge each linear chain into its first node (labels joined, at most ``max_lines`` lines shown); the result
    has the same reachability between the kept boxes. Node order (topological when the input's is) is kept."""
    merged_into = list(range(len(nodes)))
    chains: dict[int, list[int]] = {}
    for i, n in enumerate(nodes):
        p = n.preds[0] if len(n.preds) == 1 else -1
        if p >= 0 and len(nodes[p].succs) == 1 and nodes[p].key == n.key:
            head = merged_into[p]
            merged_into[i] = head
            chains.setdefault(head, [head]).append(i)
        else:
            chains.setdefault(i, [i])
    heads = sorted(chains)
    new_index = {h: k for k, h in enumerate(heads)}
    out = []
    for h in heads:
        members = chains[h]
        lines = [line for m in members for line in nodes[m].lines[:1]]
        if len(lines) > max_lines:
            lines = [*lines[:max_lines - 1], f"… {len(members) - max_lines + 1} more"]
        if len(members) == 1:
            lines = nodes[h].lines
        out.append(Node(lines, nodes[h].key, "\n".join(nodes[m].tooltip for m in members),
                        sum(nodes[m].members for m in members)))
    edges = {(new_index[merged_into[a]], new_index[merged_into[b]]) for a, n in enumerate(nodes) for b in n.succs}
    return dag(out, [e for e in edges if e[0] != e[1]])


def _layout(nodes: Sequence[Node]) -> tuple[list[tuple[float, float, float, float]], dict[tuple[int, int], list]]:
    """(x centre, y centre, width, height) of each node and the polyline of each edge, from grandalf."""
    from grandalf.graphs import Edge, Graph, Vertex
    from grandalf.layouts import SugiyamaLayout

    class View:
        def __init__(self, w: float, h: float) -> None:
            self.w, self.h, self.xy = w, h, (0.0, 0.0)

    class EdgeView:
        def __init__(self) -> None:
            self.points: list = []

        def setpath(self, pts: list) -> None:
            self.points = pts

    verts = [Vertex(i) for i in range(len(nodes))]
    for v, n in zip(verts, nodes):
        v.view = View(max(60.0, CHAR_W * max(len(line) for line in n.lines) + 16), 14.0 * len(n.lines) + 10)
    es = []
    for a, n in enumerate(nodes):
        for b in n.succs:
            e = Edge(verts[a], verts[b])
            e.view = EdgeView()
            es.append(e)
    g = Graph(verts, es)
    x_off = 0.0
    boxes: list[tuple[float, float, float, float]] = [(0.0, 0.0, 0.0, 0.0)] * len(nodes)
    for comp in g.C:
        sug = SugiyamaLayout(comp)
        sug.yspace = 28
        sug.init_all()
        sug.draw(N=2)
        cvs = list(comp.sV)
        left = min(v.view.xy[0] - v.view.w / 2 for v in cvs)
        right = max(v.view.xy[0] + v.view.w / 2 for v in cvs)
        for v in cvs:
            boxes[v.data] = (v.view.xy[0] - left + x_off, v.view.xy[1], v.view.w, v.view.h)
        for e in comp.sE:
            e.view.points = [(x - left + x_off, y) for x, y in e.view.points]
        x_off += right - left + 40
    paths = {(e.v[0].data, e.v[1].data): e.view.points for e in es}
    return boxes, paths


def to_svg(nodes: list[Node], colours: dict[str, str], title: str, max_nodes: int = 400) -> str:
    """The inline SVG of the graph (chains collapsed, capped at ``max_nodes`` boxes) with a legend of ``colours``
    (colour key → fill); keys missing from ``colours`` are grey."""
    total = sum(n.members for n in nodes)
    boxes_in = collapse_chains(nodes)
    note = ""
    if len(boxes_in) > max_nodes:
        keep = set(range(max_nodes))
        cut = [Node(n.lines, n.key, n.tooltip, n.members) for n in boxes_in[:max_nodes]]
        boxes_in = dag(cut, [(a, b) for a, n in enumerate(boxes_in[:max_nodes]) for b in n.succs if b in keep])
        note = (f"showing the first {max_nodes} of {len(collapse_chains(nodes))} boxes "
                f"({sum(n.members for n in boxes_in)} of {total} nodes)")
    if not boxes_in:
        return f'<svg role="img" width="300" height="40"><text x="10" y="24">{escape(title)}: empty</text></svg>'
    boxes, paths = _layout(boxes_in)
    pad, legend_h = 20.0, 24.0 + (16.0 if note else 0.0)
    min_y = min(y - h / 2 for _, y, _, h in boxes)
    width = max(x + w / 2 for x, _, w, _ in boxes) + 2 * pad
    height = max(y + h / 2 for _, y, _, h in boxes) - min_y + 2 * pad + legend_h
    dy = pad + legend_h - min_y
    marker = "arrow-" + re.sub(r"[^A-Za-z0-9]", "-", title)  # unique per figure of one page, deterministic
    out = [f'<svg class="graph" role="img" aria-label="{escape(title)}" width="{width:.0f}" height="{height:.0f}" '
           f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="sans-serif" font-size="11">',
           f'<defs><marker id="{marker}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" '
           'orient="auto"><path d="M0,0L10,5L0,10z" fill="#666"/></marker></defs>']
    lx = pad
    for key, fill in colours.items():
        out.append(f'<rect x="{lx:.0f}" y="6" width="12" height="12" fill="{fill}" stroke="#333"/>'
                   f'<text x="{lx + 16:.0f}" y="16">{escape(key)}</text>')
        lx += 30 + CHAR_W * len(key)
    if note:
        out.append(f'<text x="{pad:.0f}" y="34" fill="#a00">{escape(note)}</text>')
    for (a, b), pts in paths.items():
        if not pts:
            (xa, ya, _, ha), (xb, yb, _, hb) = boxes[a], boxes[b]
            pts = [(xa, ya + ha / 2), (xb, yb - hb / 2)]
        d = " ".join(f"{x + pad:.1f},{y + dy:.1f}" for x, y in pts)
        out.append(f'<polyline points="{d}" fill="none" stroke="#666" marker-end="url(#{marker})"/>')
    for n, (x, y, w, h) in zip(boxes_in, boxes):
        fill = colours.get(n.key, "#ddd")
        out.append(f'<g><title>{escape(n.tooltip)}</title><rect x="{x - w / 2 + pad:.1f}" y="{y - h / 2 + dy:.1f}" '
                   f'width="{w:.1f}" height="{h:.1f}" rx="4" fill="{fill}" stroke="#333"/>')
        for k, line in enumerate(n.lines):
            ty = y - h / 2 + dy + 17 + 14 * k
            out.append(f'<text x="{x + pad:.1f}" y="{ty:.1f}" text-anchor="middle">{escape(line)}</text>')
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out)


__all__ = ["Node", "collapse_chains", "dag", "to_svg"]
