"""The parts of nnkiln import each other without cycles, and the runtime stays free of the compiler.

Parts: the directories of ``nnkiln/`` (``ir``, ``dialects``, ``transforms``, ``conversion``, ``pipelines``,
``analysis``, ``frontends``, ``reference``, ``blob``, ``runtime``, ``targets``, ``cli``), ``compiler`` (``compiler.py``),
``api`` (the ``nnkiln`` package itself: the public names), ``conformance`` and ``base`` (the shared leaf modules:
``errors``, ``kinds``, ``alloc``, ``arrayfiles``, ``native_header``, ``limits``, ``progress``), and the other top-level modules
(``onnx_backend``: ONNX's backend-test harness, above the frontends and the compiler). The import graph comes from
every ``import`` statement of every module, function-level ones included (a late import is still a dependency).
One cycle remains, closed by the edge listed in ``KNOWN_CYCLE_EDGES`` with the reason; the test fails if another
appears or if a listed edge disappears (then remove it from the list).
"""

from __future__ import annotations

import ast
import functools
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "nnkiln"
BASE = {"errors", "kinds", "alloc", "arrayfiles", "native_header", "limits", "progress"}

KNOWN_CYCLE_EDGES = {
    ("ir", "dialects"): "ir.context.make_context loads every dialect (the default context of ir.text.parse_module "
                        "and ir.passes.PassManager) while the dialects use ir.errors and ir.elements: splitting ir "
                        "into a core below the dialects and its tools above them is a change of its own",
}


def part_of(module: str) -> str | None:
    """The part of a ``nnkiln`` module name (None: not nnkiln's)."""
    names = module.split(".")
    if names[0] != "nnkiln":
        return None
    if len(names) == 1:
        return "api"
    if names[1] in BASE:
        return "base"
    return names[1]


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    names = list(rel.parts)
    return ".".join(names[:-1] if names[-1] == "__init__" else names)


def _exists(module: str) -> bool:
    """``module`` (``nnkiln.x.y``) is a module or package of the source tree."""
    path = ROOT.parent.joinpath(*module.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imports_of(source: str, module: str, is_package: bool) -> set[str]:
    """The nnkiln modules the source of ``module`` imports anywhere in its body, as absolute names (``from nnkiln
    import x`` is an import of ``nnkiln.x`` when that is a module, else of the ``nnkiln`` package)."""
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            for a in node.names:
                sub = f"{base}.{a.name}"
                found.add(sub if _exists(sub) else base)
    return {m for m in found if part_of(m) is not None}


@functools.cache
def part_graph() -> dict[tuple[str, str], set[str]]:
    """(importing part, imported part) → the module imports behind that edge."""
    edges: dict[tuple[str, str], set[str]] = defaultdict(set)
    for path in sorted(ROOT.rglob("*.py")):
        src_module = _module_name(path)
        src = part_of(src_module)
        for target in imports_of(path.read_text(), src_module, path.name == "__init__.py"):
            dst = part_of(target)
            if dst is not None and dst != src:
                edges[(src, dst)].add(f"{src_module} -> {target}")  # type: ignore[index]
    return edges


def cycles(edges: set[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected components of more than one part (Tarjan), each sorted."""
    graph: dict[str, list[str]] = defaultdict(list)
    for a, b in sorted(edges):
        graph[a].append(b)
        graph.setdefault(b, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_cycle_between_parts_beyond_the_known_ones() -> None:
    graph = part_graph()
    edges = set(graph) - set(KNOWN_CYCLE_EDGES)
    found = cycles(edges)
    details = "\n".join(f"  {a} -> {b}: {', '.join(sorted(graph[(a, b)])[:4])}"
                        for component in found for a, b in sorted(edges) if a in component and b in component)
    assert found == [], f"import cycles between parts {found}; their edges:\n{details}"


def test_the_shared_leaf_modules_import_no_part() -> None:
    assert sorted(dst for src, dst in part_graph() if src == "base") == []


@pytest.mark.parametrize("edge", sorted(KNOWN_CYCLE_EDGES))
def test_each_known_exception_still_closes_a_cycle(edge: tuple[str, str]) -> None:
    graph = set(part_graph())
    assert edge in graph, f"{edge} is gone: remove it from KNOWN_CYCLE_EDGES"
    assert any(edge[0] in c and edge[1] in c for c in cycles(graph)), f"{edge} closes no cycle any more"


def test_a_new_bad_import_is_found() -> None:
    """Function-level and relative imports count: a conversion importing the compiler API (as region programs
    once did) closes a cycle."""
    late = "def f():\n    from nnkiln.compiler import compile_to_blob\n    from ..pipelines import pipeline\n"
    assert imports_of(late, "nnkiln.conversion.late", False) == {"nnkiln.compiler", "nnkiln.pipelines"}
    edges = (set(part_graph()) | {("conversion", "compiler")}) - set(KNOWN_CYCLE_EDGES)
    assert any({"compiler", "conversion"} <= set(c) for c in cycles(edges))


def test_runtime_and_blob_load_no_compiler_and_no_xdsl() -> None:
    code = ("import sys, nnkiln.runtime, nnkiln.blob, nnkiln.blob.format, nnkiln.blob.reader, nnkiln.blob.writer, "
            "nnkiln.blob.inspect, nnkiln.runtime.io, nnkiln.arrayfiles; print('\\n'.join(sorted(sys.modules)))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT.parent), os.environ.get("PYTHONPATH")) if p)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=env).stdout.split()
    forbidden = ("nnkiln.compiler", "nnkiln.pipelines", "nnkiln.transforms", "nnkiln.conversion", "nnkiln.frontends",
                 "nnkiln.dialects")
    loaded = [m for m in out if m == "xdsl" or m.startswith("xdsl.") or m.startswith(forbidden)]
    assert "nnkiln.runtime" in out and loaded == []
