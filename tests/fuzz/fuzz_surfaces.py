"""The fuzzed surfaces: for each, its seed inputs, its mutators (byte-level and structure-aware) and the public entry
points a case goes through. ``make_case(surface, seed, i)`` is deterministic: case ``i`` depends only on the run's
seed, the surface's name and ``i``.

=========  ===================================================================================================
surface    entry points
=========  ===================================================================================================
mlir       ``nnkiln.load(x.mlir)`` (parse + verify) and ``nnkiln.parse`` of the same text
onnx       ``nnkiln.load(x.onnx)``, ``nnkiln.compile``, ``Executable.run`` on random inputs
tosa       ``nnkiln.load(x.tosa)`` (TOSA 1.x flatbuffer import + verify)
nnef       ``nnkiln check-nnef DIR`` and ``nnkiln.load(DIR)`` (graph.nnef + .dat files)
blob       ``nnkiln inspect --json`` (must reject what ``load`` rejects), ``Executable.load`` + ``run``
cli        ``nnkiln import|compile|run|inspect|check-nnef`` on mutated inputs of every format (exit code 3 =
           internal error = crash)
=========  ===================================================================================================
"""

from __future__ import annotations

import functools
import glob
import io
import os
import random
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import fuzz_mutators as mut
import fuzz_tosa
import numpy as np
from fuzz_harness import DEFAULT_MEMORY, DEFAULT_TIMEOUT, FAILURES, Result, run_cases

ROOT = Path(__file__).resolve().parents[2]
MAX_FEED_BYTES = 1 << 28
"""Inputs larger than this are not fed: the harness itself must not allocate what the model asks for."""


@dataclass
class Case:
    """One fuzz case: the files to write (relative path → bytes), the path handed to the entry points, a label."""

    files: dict[str, bytes]
    entry: str
    mutation: str


Files = dict[str, bytes]


def _feeds(inputs, seed: int = 0) -> dict[str, np.ndarray] | None:  # noqa: ANN001 - the blob's IODescs
    """Random inputs for ``inputs`` (``IODesc``s); None if they would be larger than ``MAX_FEED_BYTES``."""
    from nnkiln.runtime.io import random_array

    if sum(io.size for io in inputs) > MAX_FEED_BYTES:
        return None
    rng = np.random.default_rng(seed)
    return {io.name: random_array(io.name, io.kind, io.shape, rng) for io in inputs}


MAX_RUN_BYTES = 1 << 28
"""Executables whose arena and graph inputs/outputs take more than this are loaded but not run: their run time is
their work (a batch of 100000 through a CNN takes ~20 s in numpy), not a hang."""


def run_executable(exe) -> None:  # noqa: ANN001
    blob = exe.blob
    if blob.arena_bytes + sum(io.size for io in (*blob.inputs, *blob.outputs)) > MAX_RUN_BYTES:
        return
    feeds = _feeds(blob.inputs)
    if feeds is not None:
        exe.run(feeds)


def compile_and_run(module) -> None:  # noqa: ANN001
    import nnkiln

    run_executable(nnkiln.compile(module, target="cpu", threads=1))


# ------------------------------------------------------------------------------------------------
# MLIR


@functools.cache
def mlir_seeds() -> list[Files]:
    """``examples/tiny_cnn.mlir`` and the chunks of the FileCheck tests that are not expected to fail."""
    texts = [(ROOT / "examples" / "tiny_cnn.mlir").read_text()]
    for path in sorted(glob.glob(str(ROOT / "tests" / "filecheck" / "**" / "*.mlir"), recursive=True)):
        for chunk in Path(path).read_text().split("// -----"):
            if "expected-error" in chunk:
                continue
            body = "\n".join(line for line in chunk.splitlines() if not line.lstrip().startswith("//")).strip()
            if "func.func" in body and len(body) < 6000:
                texts.append(body + "\n")
    return [{"m.mlir": t.encode()} for t in texts]


def mutate_mlir(files: Files, rng: random.Random, others: list[Files]) -> tuple[Files, str]:
    text = files["m.mlir"]
    if rng.random() < 0.15:
        return {"m.mlir": mut.mutate_bytes(text, rng, [o["m.mlir"] for o in others])}, "bytes"
    return {"m.mlir": mut.mutate_text(text.decode(), rng).encode("utf-8", "surrogatepass")}, "tokens"


def run_mlir(path: str) -> None:
    import nnkiln

    nnkiln.load(path)
    with open(path, encoding="utf-8", errors="replace") as f:
        nnkiln.verify(nnkiln.parse(f.read(), filename=path))


# ------------------------------------------------------------------------------------------------
# ONNX


def _onnx_builtin_models() -> list[bytes]:
    """Small hand-built models: a CNN, a matmul/softmax block, a Constant-shaped Reshape, gather/concat/slice."""
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh

    def model(nodes, inputs, outputs, inits=()) -> bytes:  # noqa: ANN001
        g = h.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
        return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8).SerializeToString()

    f = np.random.default_rng(0).standard_normal
    x4 = h.make_tensor_value_info("x", T.FLOAT, [1, 3, 8, 8])
    cnn = model([h.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[1, 1]),
                 h.make_node("Relu", ["c"], ["r"]),
                 h.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
                 h.make_node("Flatten", ["p"], ["fl"]),
                 h.make_node("Gemm", ["fl", "fw"], ["y"], transB=1)],
                [x4], [h.make_tensor_value_info("y", T.FLOAT, [1, 5])],
                [nh.from_array(f((4, 3, 3, 3)).astype(np.float32), "w"), nh.from_array(np.zeros(4, np.float32), "b"),
                 nh.from_array(f((5, 64)).astype(np.float32), "fw")])
    attn = model([h.make_node("MatMul", ["x", "w"], ["m"]), h.make_node("Add", ["m", "b"], ["a"]),
                  h.make_node("Softmax", ["a"], ["s"], axis=-1), h.make_node("Transpose", ["s"], ["y"], perm=[0, 2, 1])],
                 [h.make_tensor_value_info("x", T.FLOAT, [2, 4, 6])],
                 [h.make_tensor_value_info("y", T.FLOAT, [2, 6, 4])],
                 [nh.from_array(f((6, 6)).astype(np.float32), "w"), nh.from_array(f((6,)).astype(np.float32), "b")])
    reshape = model([h.make_node("Constant", [], ["shape"], value=nh.from_array(np.array([4, 6], np.int64))),
                     h.make_node("Reshape", ["x", "shape"], ["r"]),
                     h.make_node("Expand", ["r", "es"], ["e"]),
                     h.make_node("ReduceSum", ["e", "axes"], ["y"], keepdims=0)],
                    [h.make_tensor_value_info("x", T.FLOAT, [2, 3, 4])],
                    [h.make_tensor_value_info("y", T.FLOAT, [2, 4, 6])],
                    [nh.from_array(np.array([2, 4, 6], np.int64), "es"), nh.from_array(np.array([0], np.int64), "axes")])
    gather = model([h.make_node("Gather", ["x", "idx"], ["g"], axis=1),
                    h.make_node("Concat", ["g", "x"], ["c"], axis=1),
                    h.make_node("Slice", ["c", "st", "en", "ax"], ["s"]),
                    h.make_node("Cast", ["s"], ["y"], to=T.INT32)],
                   [h.make_tensor_value_info("x", T.FLOAT, [3, 5])],
                   [h.make_tensor_value_info("y", T.INT32, [3, 4])],
                   [nh.from_array(np.array([4, 0, 2], np.int64), "idx"), nh.from_array(np.array([1], np.int64), "st"),
                    nh.from_array(np.array([5], np.int64), "en"), nh.from_array(np.array([1], np.int64), "ax")])
    for m in (cnn, attn, reshape, gather):
        onnx.checker.check_model(onnx.load_from_string(m))
    return [cnn, attn, reshape, gather]


@functools.cache
def onnx_seeds() -> list[Files]:
    found = [(ROOT / "tests" / "data" / "torch_onnx" / f"{n}.onnx").read_bytes()
             for n in ("misc", "audioish", "effnetish", "unetish")]
    return [{"m.onnx": b} for b in _onnx_builtin_models() + found]


def _pick_tensor(model, rng: random.Random):  # noqa: ANN001, ANN202
    tensors = list(model.graph.initializer) + [a.t for n in model.graph.node for a in n.attribute if a.HasField("t")]
    return rng.choice(tensors) if tensors else None


def _onnx_edit(model, rng: random.Random) -> str:  # noqa: ANN001
    """One structure-aware edit of an ONNX ModelProto, in place; returns its name."""
    from onnx import AttributeProto, NodeProto

    g = model.graph
    choice = rng.randrange(12)
    value_infos = list(g.input) + list(g.output) + list(g.value_info)
    if choice == 0 and value_infos:
        dims = rng.choice(value_infos).type.tensor_type.shape.dim
        if dims:
            d = rng.choice(dims)
            if rng.random() < 0.2:
                d.dim_param = "N"
            else:
                d.dim_value = rng.choice([0, -1, 1, 2**31 - 1, 2**31, 10**9, 100000, 65536, 2**62])
        return "dim"
    if choice == 1 and value_infos:
        rng.choice(value_infos).type.tensor_type.elem_type = rng.randrange(0, 26)
        return "elem_type"
    t = _pick_tensor(model, rng) if choice in (2, 3, 4) else None
    if choice == 2 and t is not None:
        if t.dims:
            t.dims[rng.randrange(len(t.dims))] = rng.choice([0, -1, 2**31, 10**9, 2**40, 3])
        else:
            t.dims.append(rng.choice([0, 10**9, 2]))
        return "tensor dims"
    if choice == 3 and t is not None:
        from onnx import numpy_helper

        try:
            arr = numpy_helper.to_array(t).copy()
        except Exception:  # noqa: BLE001 - an earlier edit broke it: fine, leave it
            return "tensor values (unreadable)"
        if arr.size and arr.dtype.kind in "iu":
            arr.flat[rng.randrange(arr.size)] = rng.choice([0, -1, -2, 10**9, 2**31 - 1, 2**62, 100000])
        elif arr.size and arr.dtype.kind == "f":
            arr.flat[rng.randrange(arr.size)] = rng.choice([np.nan, np.inf, -np.inf, 1e38, 0.0])
        t.CopyFrom(numpy_helper.from_array(arr, t.name))
        return "tensor values"
    if choice == 4 and t is not None:
        if rng.random() < 0.5 and t.raw_data:
            t.raw_data = t.raw_data[: rng.randrange(len(t.raw_data))]
        else:
            t.data_type = rng.choice([0, 1, 2, 3, 6, 7, 8, 9, 10, 11, 16, 17, 23, 99])
        return "tensor data/type"
    nodes = list(g.node)
    if not nodes:
        return "nothing"
    node = rng.choice(nodes)
    if choice == 5:
        names = [n for nd in nodes for n in list(nd.input) + list(nd.output)] + [i.name for i in g.initializer]
        if node.input:
            k = rng.randrange(len(node.input))
            node.input[k] = rng.choice(names + ["dangling", ""])
        return "node input"
    if choice == 6:
        node.op_type = rng.choice(["Conv", "Relu", "Reshape", "Gather", "Concat", "Resize", "Pad", "Slice", "Split",
                                   "Loop", "If", "Scan", "Einsum", "TopK", "NonZero", "Unknown", "MatMul", "Tile"])
        return "op_type"
    if choice == 7 and node.attribute:
        a = rng.choice(node.attribute)
        kind = rng.randrange(4)
        if kind == 0:
            a.type, a.i = AttributeProto.INT, rng.choice([0, -1, 2**31, 10**9, -(2**62), 7])
        elif kind == 1:
            a.type, a.f = AttributeProto.FLOAT, float("nan")
        elif kind == 2:
            a.type, a.s = AttributeProto.STRING, b"bogus"
        else:
            a.type = AttributeProto.INTS
            del a.ints[:]
            a.ints.extend(rng.choice([[], [0], [-1, 2**31], [1] * 70, [10**9, 10**9]]))
        return "attribute"
    if choice == 8:
        if rng.random() < 0.5:
            g.node.remove(node)
        else:
            copy = NodeProto()
            copy.CopyFrom(node)
            g.node.insert(rng.randrange(len(g.node) + 1), copy)
        return "node removed/duplicated"
    if choice == 9:
        model.opset_import[0].version = rng.choice([1, 6, 11, 13, 21, 99, -1])
        return "opset"
    if choice == 10:
        node.input.append(rng.choice(["", "x", "extra"]))
        return "extra input"
    if g.output:
        g.output[0].name = rng.choice([o for nd in nodes for o in nd.output] + ["dangling"])
    return "graph output"


def mutate_onnx(files: Files, rng: random.Random, others: list[Files]) -> tuple[Files, str]:
    import onnx

    data = files["m.onnx"]
    if rng.random() < 0.2:
        return {"m.onnx": mut.mutate_bytes(data, rng, [o["m.onnx"] for o in others])}, "bytes"
    model = onnx.load_from_string(data)
    edits = [_onnx_edit(model, rng) for _ in range(rng.randint(1, 3))]
    return {"m.onnx": model.SerializeToString()}, "+".join(edits)


def run_onnx(path: str) -> None:
    import nnkiln

    compile_and_run(nnkiln.load(path))


# ------------------------------------------------------------------------------------------------
# TOSA flatbuffers


@functools.cache
def tosa_seeds() -> list[Files]:
    """Every 5th positive ``test.tosa`` of the conformance corpus (every operator) and every 40th negative one."""
    corpus = ROOT / "tests" / "data" / "tosa_conformance"
    paths = sorted(glob.glob(str(corpus / "positive" / "*" / "*" / "test.tosa")))[::5]
    paths += sorted(glob.glob(str(corpus / "negative" / "*" / "*" / "test.tosa")))[::40]
    return [{"m.tosa": Path(p).read_bytes()} for p in paths]


def mutate_tosa(files: Files, rng: random.Random, others: list[Files]) -> tuple[Files, str]:
    data = files["m.tosa"]
    r = rng.random()
    if r < 0.3:
        return {"m.tosa": mut.mutate_bytes(data, rng, [o["m.tosa"] for o in others])}, "bytes"
    out, what = fuzz_tosa.mutate_fields(data, rng)
    if r > 0.9:
        out = mut.mutate_bytes(out, rng, rounds=1)
        what += "+bytes"
    return {"m.tosa": out}, what


def run_tosa(path: str) -> None:
    import nnkiln

    nnkiln.load(path)


# ------------------------------------------------------------------------------------------------
# NNEF


@functools.cache
def nnef_seeds() -> list[Files]:
    """Folders written by nnkiln's NNEF writer (tiny_cnn.mlir and small ONNX models) and graph-only documents."""
    import nnkiln
    from nnkiln.frontends.nnef.writer import write_nnef

    seeds: list[Files] = []
    sources = [ROOT / "examples" / "tiny_cnn.mlir"] + [ROOT / "tests" / "data" / "torch_onnx" / f"{n}.onnx"
                                                      for n in ("misc", "effnetish", "audioish")]
    with tempfile.TemporaryDirectory() as tmp:
        for k, src in enumerate(sources):
            folder = os.path.join(tmp, str(k))
            try:
                write_nnef(nnkiln.load(str(src)), folder)
            except nnkiln.NnkilnError:
                continue
            seeds.append({os.path.relpath(p, folder): Path(p).read_bytes()
                          for p in glob.glob(os.path.join(folder, "**", "*"), recursive=True) if os.path.isfile(p)})
    import sys

    sys.path.insert(0, str(ROOT / "tests" / "frontends" / "nnef"))
    from nnef_corpus import VALID

    seeds += [{"graph.nnef": text.encode()} for _, text in VALID if "variable" not in text]
    return seeds


_DAT_FIELDS = [(2, 1, "version"), (4, 4, "data length"), (8, 4, "rank")] + [
    (12 + 4 * k, 4, f"dim {k}") for k in range(8)] + [(44, 4, "bits"), (48, 4, "item type"), (52, 4, "quant")]


def mutate_nnef(files: Files, rng: random.Random, others: list[Files]) -> tuple[Files, str]:
    out = dict(files)
    dats = sorted(k for k in files if k.endswith(".dat"))
    r = rng.random()
    if r < 0.6 or not dats:
        text = files["graph.nnef"].decode("ascii", "replace")
        out["graph.nnef"] = mut.mutate_text(text, rng).encode("utf-8", "surrogatepass")
        return out, "graph tokens"
    name = rng.choice(dats)
    data = bytearray(files[name])
    if r < 0.85 and len(data) >= 128:
        pos, size, what = rng.choice(_DAT_FIELDS)
        data[pos:pos + size] = mut.pack_int(rng.choice(mut.INTERESTING_INTS + [rng.randrange(16)]), size)
        out[name] = bytes(data)
        return out, f".dat {what}"
    if r < 0.95:
        out[name] = mut.mutate_bytes(bytes(data), rng)
        return out, ".dat bytes"
    del out[name]
    return out, ".dat removed"


def run_nnef(path: str) -> None:
    import nnkiln
    from nnkiln.frontends.nnef import check_main

    code = check_main(path)
    if code not in (0, 1):
        raise AssertionError(f"check-nnef exited {code}")
    nnkiln.load(path)


# ------------------------------------------------------------------------------------------------
# blobs


@functools.cache
def blob_seeds() -> list[Files]:
    """Blobs compiled from tiny_cnn.mlir and small ONNX models, one with two executor queues (barriers)."""
    import nnkiln

    seeds: list[Files] = []
    sources = [(ROOT / "examples" / "tiny_cnn.mlir", {}), (ROOT / "examples" / "tiny_cnn.mlir", {"queues": 2})]
    sources += [(ROOT / "tests" / "data" / "torch_onnx" / f"{n}.onnx", {}) for n in ("misc", "effnetish", "lstmish")]
    for src, kw in sources:
        exe = nnkiln.compile(nnkiln.load(str(src)), target="cpu", threads=kw.get("queues", 1), **kw)
        seeds.append({"m.kiln": exe.to_bytes()})
    return seeds


def mutate_blob(files: Files, rng: random.Random, others: list[Files]) -> tuple[Files, str]:
    import fuzz_blob

    data = files["m.kiln"]
    if rng.random() < 0.15:
        return {"m.kiln": mut.mutate_bytes(data, rng, [o["m.kiln"] for o in others])}, "bytes"
    out, what = fuzz_blob.mutate_decoded(data, rng)
    return {"m.kiln": out}, what


def run_blob(path: str) -> None:
    import contextlib

    import nnkiln
    from nnkiln.cli.compile_cmds import inspect_main

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        inspected = inspect_main([path, "--json"])
    try:
        exe = nnkiln.Executable.load(path, threads=2)
    except nnkiln.NnkilnError as err:
        if inspected == 0:
            raise AssertionError(f"nnkiln inspect accepts a blob that Executable.load rejects: {err}") from None
        raise
    run_executable(exe)


# ------------------------------------------------------------------------------------------------
# the command line


class CliRefused(Exception):
    """A non-zero exit code other than 3: a clean refusal (classified as an NnkilnError by ``run_cli``)."""


_CLI_FORMATS = {"mlir": ("m.mlir", mlir_seeds, mutate_mlir), "onnx": ("m.onnx", onnx_seeds, mutate_onnx),
                "tosa": ("m.tosa", tosa_seeds, mutate_tosa), "nnef": (".", nnef_seeds, mutate_nnef),
                "blob": ("m.kiln", blob_seeds, mutate_blob)}


def make_cli_case(rng: random.Random) -> Case:
    fmt = rng.choice(sorted(_CLI_FORMATS))
    entry, seeds, mutate = _CLI_FORMATS[fmt]
    files, what = mutate(rng.choice(seeds()), rng, seeds())
    if fmt == "blob":
        command = rng.choice([["inspect"], ["inspect", "--json"], ["run", "--random-inputs"]])
    else:
        command = rng.choice([["import"], ["compile", "-o", "{dir}/out.kiln"], ["run", "--random-inputs"]]
                             + ([["check-nnef"]] if fmt == "nnef" else []))
    files["argv"] = " ".join(command).encode()
    return Case(files, entry, f"{fmt} {what}: nnkiln {command[0]}")


def run_cli(path: str) -> None:
    import contextlib

    from nnkiln.cli.main import main
    from nnkiln.errors import NnkilnError

    folder = path if os.path.isdir(path) else os.path.dirname(path)
    words = Path(folder, "argv").read_text().replace("{dir}", folder).split()
    argv = [words[0], path, *words[1:]]
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(argv)
    text = err.getvalue().strip()
    if code == 3 or "\ninternal error:" in "\n" + text:  # the CLI's message for an exception it did not expect
        raise AssertionError(f"exit {code}: {text[-300:]}")
    if "error: out of memory (" in text:  # the CLI's MemoryError handler
        raise MemoryError(text[-300:])
    if "error: input nested too deeply\n" in text + "\n":  # the CLI's RecursionError handler
        raise RecursionError(text[-300:])
    if code:
        raise type("CliError", (NnkilnError,), {})(f"exit {code}: {text[-300:]}")


# ------------------------------------------------------------------------------------------------
# the table of surfaces


@dataclass
class Surface:
    name: str
    title: str
    seeds: Callable[[], list[Files]]
    mutate: Callable[[Files, random.Random, list[Files]], tuple[Files, str]]
    entry: str
    run: Callable[[str], None]


SURFACES: dict[str, Surface] = {s.name: s for s in [
    Surface("mlir", "MLIR parse + verify", mlir_seeds, mutate_mlir, "m.mlir", run_mlir),
    Surface("onnx", "ONNX load + compile + run", onnx_seeds, mutate_onnx, "m.onnx", run_onnx),
    Surface("tosa", "TOSA 1.x flatbuffer load (import + verify)", tosa_seeds, mutate_tosa, "m.tosa", run_tosa),
    Surface("nnef", "NNEF check-nnef + load", nnef_seeds, mutate_nnef, ".", run_nnef),
    Surface("blob", "blob inspect + load + run", blob_seeds, mutate_blob, "m.kiln", run_blob),
    Surface("cli", "command line (import/compile/run/inspect/check-nnef)", lambda: [], lambda f, r, o: (f, ""), "",
            run_cli),
]}


def make_case(surface: str, seed: int, index: int) -> Case:
    """Case ``index`` of ``surface`` for run seed ``seed`` (deterministic)."""
    rng = random.Random(f"{seed}:{surface}:{index}")
    if surface == "cli":
        return make_cli_case(rng)
    s = SURFACES[surface]
    seeds = s.seeds()
    base = rng.choice(seeds)
    try:
        files, what = s.mutate(base, rng, seeds)
    except Exception as err:  # noqa: BLE001 - a structure-aware edit that its own encoder refuses: bytes instead
        key = sorted(base)[0]
        files, what = {**base, key: mut.mutate_bytes(base[key], rng)}, f"bytes ({type(err).__name__} in the mutator)"
    return Case(files, s.entry, what)


def warm_up(surface: str) -> None:
    """Run the surface's entry points once on a seed in this (parent) process: the imports, dialect contexts and
    caches they build are then inherited by every forked case instead of being rebuilt in each."""
    import contextlib
    import warnings

    names = [n for n in SURFACES if n != "cli"] if surface == "cli" else [surface]
    for name in names:
        s = SURFACES[name]
        with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings(), \
                contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            with contextlib.suppress(Exception):
                s.run(write_case(Case(dict(s.seeds()[0]), s.entry, "seed"), tmp))
    import nnkiln.cli.main  # noqa: F401


def write_case(case: Case, folder: str) -> str:
    """Write the case's files under ``folder``; returns the path for the entry points."""
    for rel, data in case.files.items():
        path = os.path.join(folder, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    return os.path.normpath(os.path.join(folder, case.entry))


def fuzz(surface: str, cases: int, seed: int = 0, *, first: int = 0, jobs: int = 1, timeout: float = DEFAULT_TIMEOUT,
         memory: int = DEFAULT_MEMORY, save: str | None = None, progress: bool = False) -> list[Result]:
    """Run cases ``first .. first+cases-1`` of ``surface``; returns their results in index order."""
    tmp = tempfile.mkdtemp(prefix=f"nnkiln-fuzz-{surface}-")
    surf = SURFACES[surface]
    folders: dict[int, str] = {}
    made: dict[int, str] = {}

    def gen():  # noqa: ANN202
        for i in range(first, first + cases):
            case = make_case(surface, seed, i)
            folder = os.path.join(tmp, str(i))
            os.makedirs(folder)
            path = write_case(case, folder)
            folders[i], made[i] = folder, case.mutation
            yield i, case.mutation, (lambda p=path: surf.run(p))

    warm_up(surface)
    results: list[Result] = []
    start = time.perf_counter()
    try:
        for r in run_cases(gen(), jobs=jobs, timeout=timeout, memory=memory):
            results.append(r)
            if r.outcome in FAILURES and save:
                dest = os.path.join(save, f"{surface}-{r.index}")
                shutil.rmtree(dest, ignore_errors=True)
                shutil.copytree(folders[r.index], dest)
                Path(dest, "mutation.txt").write_text(f"{made[r.index]}\n{r.outcome}: {r.detail}\n")
            shutil.rmtree(folders.pop(r.index), ignore_errors=True)
            if progress and len(results) % 500 == 0:
                print(f"  {surface}: {len(results)}/{cases} in {time.perf_counter() - start:.0f} s", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return sorted(results, key=lambda r: r.index)
