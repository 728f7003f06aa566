"""``nnkiln report``: a model's compilation as one self-contained HTML page (issue 26, item 2).

``report(path, target, threads, runs) -> str`` (the HTML). Modules, one job each: ``collect`` (compile or load,
describe the blob, profile or take the simulated timeline), ``graph`` (DAG layout with ``grandalf``, drawn as
SVG), ``charts`` (Gantt chart and memory over time, hand-written SVG), ``page`` (the HTML).

The report's libraries are the optional extra ``nnkiln[report]`` (``grandalf``); ``require_extra`` turns their
absence into one ``InputError`` line naming the install command. Above the compiler and the runtime; nothing
below imports this package.
"""

from __future__ import annotations

from typing import Any

from nnkiln.errors import InputError

EXTRA_MODULES = ("grandalf",)


def require_extra() -> None:
    """Raise ``InputError`` unless the ``report`` extra's libraries import."""
    import importlib

    for name in EXTRA_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:
            raise InputError(f"nnkiln report needs {name}: pip install nnkiln[report]") from None


def report(path: str, target: str = "cpu", threads: int | None = None, runs: int = 3, seed: int = 0,
           on_step: Any = None) -> str:
    """The HTML report of ``path`` (a model or a ``.kiln`` blob)."""
    require_extra()
    from nnkiln.report.collect import collect
    from nnkiln.report.page import render

    return render(collect(path, target=target, threads=threads, runs=runs, seed=seed, on_step=on_step))


__all__ = ["report", "require_extra"]
