"""The activation arena over its lower bound, for every model of the test corpora (issue 20, item 5).

For each model: compile with the default pipeline (cpu target) and print the arena size (``arena_bytes`` of the
blob's metadata, as ``Executable.stats`` reports it), the interval lower bound (``arena_lower_bound_bytes``: the
largest sum of simultaneously live buffers, ``nnkiln.analysis.liveness.lower_bound``), their ratio, the
number of planned buffers and the ``static-allocation`` pass's time; then the worst ratios.

Corpora (the models the tests compile or import): ``tests/data/torch_onnx`` (both exporters), the onnx model
sets of ``tests/frontends/onnx/model_sets.py`` (simple, pytorch-converted, pytorch-operator, light), the
fixtures of ``tests/data/nnef_torch``, ``tests/data/nnef/*.nnef``, the NNEF documents of
``tests/frontends/nnef`` (``nnef_op_cases``, ``nnef_corpus``: variables random), ``examples/``, and onnx's backend
node tests (``tests/frontends/onnx/node_suite.py``; ``--no-node-suite`` leaves their ~1,900 single-node models
out). A model that does not import or compile is listed as skipped with the reason. Two to three minutes in all.

Run on demand (not a test): ``.venv/bin/python bench/arena_ratio.py [--only REGEX] [--no-node-suite] [--worst N]``.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

Loader = Callable[[], Any]  # () -> a tosa-level module


def _onnx_loader(get_model: Callable[[], Any], get_inputs: Callable[[Any], list[Any]]) -> Loader:
    """Import an onnx ModelProto with its input shapes bound from sample inputs, specialising on an input that
    must be known at import (as ``model_sets.run`` and the node suite do)."""

    def load() -> Any:
        from nnkiln.ir.errors import FrontendError
        from nnkiln.onnx_backend import import_model_proto

        model = get_model()
        ins = get_inputs(model)
        init = {t.name for t in model.graph.initializer}
        given = {vi.name: x for vi, x in zip([i for i in model.graph.input if i.name not in init], ins)}
        fixed: dict[str, Any] = {}
        while True:
            try:
                return import_model_proto(model, ins or None, fixed or None)
            except FrontendError as err:
                name = getattr(err, "value_name", None)
                if name not in given or name in fixed:
                    raise
                fixed[name] = given[name]

    return load


def _model_set_loader(path: Path, data_dir: Path | None, light: bool) -> Loader:
    """A model of onnx's model sets: inputs from its first test data set, zeros for a ``light`` model."""

    def inputs(model: Any) -> list[Any]:
        import numpy as np
        import onnx
        from onnx import numpy_helper

        init = {t.name for t in model.graph.initializer}
        if light:
            return [np.zeros(tuple(d.dim_value or 1 for d in vi.type.tensor_type.shape.dim), np.float32)
                    for vi in model.graph.input if vi.name not in init]
        ins = []
        for p in sorted(data_dir.glob("input_*.pb"), key=lambda p: int(p.stem.split("_")[1])) if data_dir else []:
            t = onnx.TensorProto()
            t.ParseFromString(p.read_bytes())
            ins.append(numpy_helper.to_array(t))
        return ins

    def model() -> Any:
        import onnx

        return onnx.load(str(path))

    return _onnx_loader(model, inputs)


def _node_case_loader(case: Any) -> Loader:
    """A case of onnx's backend node tests, inputs from its first data set."""

    def inputs(model: Any) -> list[Any]:
        from onnx import TensorProto, numpy_helper

        return [numpy_helper.to_array(v) if isinstance(v, TensorProto) else v for v in case.data_sets[0][0]]

    return _onnx_loader(lambda: case.model, inputs)


def _path_loader(path: Path) -> Loader:
    def load() -> Any:
        import nnkiln

        return nnkiln.load(str(path))

    return load


def _nnef_text_loader(text: str) -> Loader:
    """An NNEF document of the NNEF tests (``nnef_op_cases``, ``nnef_corpus``), its variables random (as
    ``test_lowering.make_container`` writes them)."""

    def load() -> Any:
        import tempfile

        import numpy as np

        import nnkiln
        from nnkiln.frontends.nnef import expand, parse_document, write_tensor

        with tempfile.TemporaryDirectory(prefix="arena-ratio-") as tmp:
            folder = Path(tmp)
            (folder / "graph.nnef").write_text(text)
            rng = np.random.default_rng(0)
            for op in expand(parse_document(text)).operations:
                if op.name == "variable":
                    path = folder / (str(op.attribs["label"]) + ".dat")
                    path.parent.mkdir(parents=True, exist_ok=True)
                    shape = next(iter(op.outputs.values())).shape
                    path.write_bytes(write_tensor((rng.standard_normal(shape) * 0.5).astype(np.float32)))
            return nnkiln.load(str(folder))

    return load


def corpus(node_suite: bool) -> Iterator[tuple[str, Loader]]:
    data = ROOT / "tests" / "data"
    for exporter in ("", "dynamo"):
        for p in sorted((data / "torch_onnx" / exporter).glob("*.onnx")):
            yield f"torch_onnx/{exporter + '/' if exporter else ''}{p.stem}", _path_loader(p)
    for p in sorted((ROOT / "examples").glob("*.onnx")) + sorted((ROOT / "examples").glob("*.mlir")):
        yield f"examples/{p.name}", _path_loader(p)
    manifest = json.loads((data / "nnef_torch" / "manifest.json").read_text())
    for name, entry in sorted(manifest.items()):
        if entry["exported"]:
            yield f"nnef_torch/{name}", _path_loader(data / "nnef_torch" / name / entry["path"])
    for p in sorted((data / "nnef").glob("*.nnef")):
        yield f"nnef/{p.stem}", _path_loader(p)
    sys.path.insert(0, str(ROOT / "tests" / "frontends" / "nnef"))
    from nnef_corpus import VALID
    from nnef_op_cases import CASES

    for name, text in sorted(CASES.items()):
        yield f"nnef_op_cases/{name}", _nnef_text_loader(text)
    for name, text in VALID:
        yield f"nnef_corpus/{name}", _nnef_text_loader(text)
    sys.path.insert(0, str(ROOT / "tests" / "frontends" / "onnx"))
    from model_sets import list_cases

    for case in list_cases():
        data_dir = case.data_dirs[0] if case.data_dirs else None
        yield case.name, _model_set_loader(case.model_path, data_dir, case.light_output is not None)
    if node_suite:
        from onnx.backend.test.loader import load_node_model_tests

        warnings.filterwarnings("ignore")
        for case in load_node_model_tests():
            yield f"node/{case.name}", _node_case_loader(case)


def measure(load: Loader) -> tuple[int, int, int, float]:
    """(arena bytes, lower bound bytes, planned buffers, static-allocation seconds) of one model."""
    from nnkiln.compiler import compile_to_rt
    from nnkiln.conversion.rt_to_blob import blob_in_memory_from_module
    from nnkiln.dialects.rt.ops import BufferOp
    from nnkiln.ir.passes import PassManager

    module = load()
    runs: list[PassManager] = []
    original = PassManager.run

    def run(self: PassManager, *args: Any, **kwargs: Any) -> None:
        runs.append(self)
        original(self, *args, **kwargs)

    PassManager.run = run  # type: ignore[method-assign]  # to read the pass timings of nested pipelines too
    try:
        rt = compile_to_rt(module, timing=True, stream=io.StringIO())
    finally:
        PassManager.run = original  # type: ignore[method-assign]
    seconds = sum(t.seconds for pm in runs for t in pm.timings if t.name == "static-allocation")
    buffers = sum(1 for op in rt.walk() if isinstance(op, BufferOp) and op.section.data == "arena")
    meta = blob_in_memory_from_module(rt).metadata
    return int(meta["arena_bytes"]), int(meta["arena_lower_bound_bytes"]), buffers, seconds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="regex on the model names")
    ap.add_argument("--no-node-suite", action="store_true", help="leave out onnx's backend node tests")
    ap.add_argument("--worst", type=int, default=10, help="how many of the worst ratios to list at the end")
    args = ap.parse_args()
    rx = re.compile(args.only) if args.only else None
    results: list[tuple[float, str, int, int]] = []
    skipped = 0
    start = time.perf_counter()
    print(f"{'model':<58} {'buffers':>7} {'arena':>11} {'bound':>11} {'ratio':>6} {'pass s':>7}")
    for name, load in corpus(not args.no_node_suite):
        if rx is not None and not rx.search(name):
            continue
        try:
            arena, bound, buffers, seconds = measure(load)
        except Exception as err:  # not importable / not compilable: not this tool's business
            skipped += 1
            print(f"{name:<58} skipped: {type(err).__name__}: {' '.join(str(err).split())[:90]}", flush=True)
            continue
        ratio = arena / bound if bound else 1.0
        results.append((ratio, name, arena, bound))
        print(f"{name:<58} {buffers:>7} {arena:>11} {bound:>11} {ratio:>6.3f} {seconds:>7.3f}", flush=True)
    at_bound = sum(1 for r in results if r[2] <= r[3])
    print(f"\n{len(results)} models compiled ({at_bound} at the lower bound), {skipped} skipped, "
          f"{time.perf_counter() - start:.0f} s")
    print(f"worst {args.worst} arena / lower bound:")
    for ratio, name, arena, bound in sorted(results, key=lambda r: (-r[0], r[1]))[:args.worst]:
        print(f"  {ratio:6.3f}  {name}  ({arena} / {bound} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
