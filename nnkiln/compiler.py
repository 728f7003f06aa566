"""``nnkiln.compile``: tosa-level module -> ``Executable`` (pipeline, then the blob backend, then the runtime).

The pipeline comes from ``nnkiln.pipelines`` (a list of passes for a name and a target), run by
``nnkiln.ir.passes.PassManager`` (verification after every pass). ``nnkiln.compile`` turns the resulting
rt-level module into an in-memory ``Blob`` (``nnkiln.conversion.rt_to_blob``) whose constants are the IR's own
arrays (a ``ConstantStore``: no copy, no checksum), and builds the ``Executable`` from it; the blob's bytes
are encoded only when asked for (``save`` / ``to_bytes``), and are then exactly what ``compile_to_bytes``
writes. Skipping the copy and the CRCs takes a large share off a big model's compile (BERT-base:
bench/RESULTS.md).
``compile_to_blob`` / ``compile_to_bytes`` (the CLI) encode at once, each constant copied once, straight
into the bytes. Files and byte strings from elsewhere go through the validating
``nnkiln.runtime.load_blob`` / ``Executable.load``.

Garbage collection: importing and compiling run inside ``nnkiln.ir.collector.fewer_collections`` (a larger
young-generation threshold): fewer collector pauses (bench/RESULTS.md).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from nnkiln.blob.format import Blob
from nnkiln.errors import InputError
from nnkiln.runtime import Executable


def compile_to_rt(module: Any, target: str = "cpu", pipeline: str = "default", threads: int | None = None, *,
                  queues: int | None = None, print_ir_after_all: bool = False, timing: bool = False,
                  stream: TextIO | None = None, on_pass: Callable[[int, int, str], None] | None = None) -> Any:
    """Run the pipeline on a copy of ``module``; returns the rt-level module. ``threads``: the cpu threads the
    program uses (recorded as the module attribute ``nnkiln.threads``, then in the blob's metadata; default:
    every core the runtime may use); ``queues``: executor instances to schedule on (``nnkiln.pipelines``)."""
    from xdsl.dialects.builtin import IntegerAttr, i64

    from nnkiln.ir.collector import fewer_collections
    from nnkiln.ir.passes import PassManager
    from nnkiln.ir.verify import verify_module
    from nnkiln.pipelines import pipeline as pipeline_passes
    from nnkiln.targets import get_target

    tgt = get_target(target, threads=threads)
    with fewer_collections():
        mod = module.clone()
        verify_module(mod)
        passes = pipeline_passes(pipeline, tgt, queues)
        PassManager(passes, print_ir_after_all=print_ir_after_all, timing=timing,
                    stream=stream or sys.stderr, on_pass=on_pass).run(mod)
    if threads is not None:
        mod.attributes["nnkiln.threads"] = IntegerAttr(threads, i64)
    return mod


def compile_to_blob(module: Any, target: str = "cpu", pipeline: str = "default", threads: int | None = None,
                    **kwargs: Any) -> tuple[Blob, bytes]:
    """Compile ``module``; returns its ``Blob`` and the blob bytes (the ``Blob``'s constants view the bytes)."""
    from nnkiln.conversion.rt_to_blob import blob_and_bytes_from_module

    rt = compile_to_rt(module, target, pipeline, threads, **kwargs)
    # no wall-clock time in the blob: the same module always gives the same bytes (issue 21, item 5)
    return blob_and_bytes_from_module(rt, target=target, pipeline=pipeline)


def compile_to_bytes(module: Any, target: str = "cpu", pipeline: str = "default", threads: int | None = None,
                     **kwargs: Any) -> bytes:
    """Compile ``module`` and return the blob bytes."""
    return compile_to_blob(module, target, pipeline, threads, **kwargs)[1]


def compile(module: Any, target: str = "cpu", pipeline: str = "default", threads: int | None = None,
            **kwargs: Any) -> Executable:  # noqa: A001 - the public API name
    """Compile a tosa-level module (or a model path) for ``target`` and load it: an ``Executable``.

    ``threads`` is the number of cpu threads the executable uses (default: every core it may run on, or
    ``OPENBLAS_NUM_THREADS``/``OMP_NUM_THREADS`` when set); ``queues`` (keyword) the executor queues its tasks
    are spread over (default 1: the kernels use the threads). Raises ``VerifyError``
    for invalid input IR, ``PassError`` for a compiler bug, ``NotExecutableError`` for an op without
    a runtime kernel.
    """
    if isinstance(module, (str, os.PathLike)):
        from nnkiln.frontends import load

        module = load(os.fspath(module))
    if not hasattr(module, "clone"):
        raise InputError(f"nnkiln.compile expects a module or a model path, got {type(module).__name__}")
    from nnkiln.conversion.rt_to_blob import blob_in_memory_from_module

    start = time.perf_counter()
    rt = compile_to_rt(module, target, pipeline, threads, **kwargs)
    # the runtime of this process views the IR's constants (no copy); the bytes are encoded by ``save``
    compile_seconds = time.perf_counter() - start
    blob = blob_in_memory_from_module(rt, target=target, pipeline=pipeline)  # deterministic: no time in the blob
    start = time.perf_counter()
    exe = Executable(blob)
    exe.stats["load_seconds"] = time.perf_counter() - start
    exe.stats["compile_seconds"] = compile_seconds
    return exe


__all__ = ["compile", "compile_to_blob", "compile_to_bytes", "compile_to_rt"]
