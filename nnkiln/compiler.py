"""``nnkiln.compile``: tosa-level module -> ``Executable`` (pipeline, then the blob backend, then the runtime).

The pipeline comes from ``nnkiln.pipelines`` (a list of passes for a name and a target), run by
``nnkiln.ir.passes.PassManager`` (verification after every pass). The resulting rt-level module is
serialised by ``nnkiln.backend.writer`` and loaded by ``nnkiln.runtime.load_blob``, so a compiled
model always goes through the same validated blob a saved ``.kiln`` file holds.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, TextIO

from nnkiln.errors import InputError, NnkilnError
from nnkiln.runtime import Executable, load_blob


def pipeline_passes(pipeline: str, target: Any) -> list[Any]:
    """The passes of pipeline ``pipeline`` for ``target`` (asks ``nnkiln.pipelines``)."""
    import nnkiln.pipelines as pipelines

    for fn_name in ("pipeline", "get_pipeline", "pipeline_passes", "build_pipeline", "passes_for"):
        fn = getattr(pipelines, fn_name, None)
        if callable(fn):
            return list(fn(pipeline, target))
    raise NnkilnError("nnkiln.pipelines defines no pipeline function (get_pipeline(name, target))")


def compile_to_rt(module: Any, target: str = "cpu", pipeline: str = "default", threads: int | None = None, *,
                  print_ir_after_all: bool = False, timing: bool = False, stream: TextIO | None = None) -> Any:
    """Run the pipeline on a copy of ``module``; returns the rt-level module."""
    from nnkiln.ir.passes import PassManager
    from nnkiln.ir.verify import verify_module
    from nnkiln.targets import get_target

    tgt = get_target(target, threads=threads)
    mod = module.clone()
    verify_module(mod)
    passes = pipeline_passes(pipeline, tgt)
    PassManager(passes, print_ir_after_all=print_ir_after_all, timing=timing,
                stream=stream or sys.stderr).run(mod)
    return mod


def compile_to_bytes(module: Any, target: str = "cpu", pipeline: str = "default", threads: int | None = None,
                     **kwargs: Any) -> bytes:
    """Compile ``module`` and return the blob bytes."""
    from nnkiln.backend.blob_format import encode
    from nnkiln.backend.writer import blob_from_module

    start = time.perf_counter()
    rt = compile_to_rt(module, target, pipeline, threads, **kwargs)
    blob = blob_from_module(rt, target=target, pipeline=pipeline)
    blob.metadata["compile_seconds"] = time.perf_counter() - start
    return encode(blob)


def compile(module: Any, target: str = "cpu", pipeline: str = "default", threads: int | None = None,
            **kwargs: Any) -> Executable:  # noqa: A001 - the public API name
    """Compile a tosa-level module (or a model path) for ``target`` and load it: an ``Executable``.

    ``threads`` is the number of cpu executors (default: ``os.cpu_count()``). Raises ``VerifyError``
    for invalid input IR, ``PassError`` for a compiler bug, ``NotExecutableError`` for an op without
    a runtime kernel.
    """
    if isinstance(module, (str, os.PathLike)):
        import nnkiln

        module = nnkiln.load(os.fspath(module))
    if not hasattr(module, "clone"):
        raise InputError(f"nnkiln.compile expects a module or a model path, got {type(module).__name__}")
    raw = compile_to_bytes(module, target, pipeline, threads, **kwargs)
    return load_blob(raw)


__all__ = ["compile", "compile_to_bytes", "compile_to_rt", "pipeline_passes"]
