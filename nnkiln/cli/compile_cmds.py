"""Command-line commands of the lower levels: ``compile``, ``inspect`` and ``run`` of a ``.kiln`` blob.

- ``nnkiln compile MODEL -o model.kiln [--target cpu|npu|npu-small] [--pipeline default] [--threads N] [--queues Q]
  [--print-ir-after-all] [--emit rt]``: MODEL is ``.mlir``/``.onnx``/... (``nnkiln.load``); writes the
  blob (or, with ``--emit rt``, the rt-level IR as text).
- ``nnkiln inspect model.kiln [--json]``: validates the blob and prints every buffer (memory, offset,
  size, producing task, last consuming task), task (executor, kernel, inputs, outputs, waits,
  updates) and barrier; ``--json`` prints the same as JSON (``nnkiln.blob.inspect.describe``).
- ``nnkiln run model.kiln --input name=file.npy ... [--output out.npz] [--print-values] [--threads N]``: runs a
  blob with the runtime (no xDSL import).

Each ``*_main(argv)`` returns the exit code; a deliberate error is one line on stderr with the exit
code of its class (``nnkiln.errors``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

from nnkiln.errors import InputError, NnkilnError


def _guard(fn: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    try:
        return fn(args)
    except NnkilnError as err:
        describe = getattr(err, "describe", None)
        sys.stderr.write(f"error: {describe() if callable(describe) else err}\n")
        return err.exit_code


# -- compile ------------------------------------------------------------------------------------------


def compile_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="nnkiln compile", description="compile a model to a .kiln blob")
    p.add_argument("model", help="model file (.mlir, .onnx, ...)")
    p.add_argument("-o", "--output", required=True, help="output blob (.kiln), or '-' with --emit rt")
    p.add_argument("--target", default="cpu", help="cpu (default), npu or npu-small (nnkiln.targets)")
    p.add_argument("--pipeline", default="default")
    p.add_argument("--threads", type=positive_int, default=None, help="cpu threads the program uses (default: every "
                   "core of the machine that runs it)")
    p.add_argument("--queues", type=positive_int, default=None, help="executor queues to spread tasks over (inter-op "
                   "parallelism; default 1: the kernels use the threads)")
    p.add_argument("--shape", action="append", default=[], help="bind input dims: name=1,3,224,224")
    p.add_argument("--const", action="append", default=[], metavar="NAME=V0,V1,...|NAME=FILE.npy",
                   help="bind an input's value (ONNX shape, axes, pads ... inputs): it is then no longer an input")
    p.add_argument("--print-ir-after-all", action="store_true")
    p.add_argument("--timing", action="store_true", help="print the time of each pass")
    p.add_argument("--emit", choices=("blob", "rt"), default="blob")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def positive_int(text: str) -> int:
    """An argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def parse_shapes(specs: Sequence[str] | None) -> dict[str, list[int]]:
    """``--shape NAME=D0,D1,...`` options (``x`` also separates dims) as a name -> dims mapping."""
    out: dict[str, list[int]] = {}
    for spec in specs or []:
        name, sep, dims = spec.partition("=")
        try:
            if not sep or not name:
                raise ValueError
            out[name] = [int(d) for d in dims.replace("x", ",").split(",") if d]
        except ValueError:
            raise InputError(f"--shape {spec!r}: expected NAME=D0,D1,... (e.g. input=1,3,224,224)") from None
    return out


def parse_consts(specs: Sequence[str] | None) -> dict[str, Any]:
    """``--const NAME=V0,V1,...`` (integers, or floats when one has a point or exponent) or ``--const NAME=FILE.npy``
    options as a name -> array mapping (``nnkiln.load``'s ``constants``)."""
    import numpy as np

    out: dict[str, Any] = {}
    for spec in specs or []:
        name, sep, value = spec.partition("=")
        if not sep or not name or not value:
            raise InputError(f"--const {spec!r}: expected NAME=V0,V1,... or NAME=FILE.npy (e.g. axes=1 or shape=2,-1)")
        if value.endswith(".npy"):
            from nnkiln.arrayfiles import load_inputs

            out[name] = load_inputs([f"{name}={value}"])[name]
            continue
        items = [v for v in value.split(",") if v]
        try:
            floats = any(c in v for v in items for c in ".eE") and not all(v.lstrip("-").isdigit() for v in items)
            out[name] = np.array([float(v) if floats else int(v) for v in items], np.float32 if floats else np.int64)
        except ValueError:
            raise InputError(f"--const {spec!r}: {value!r} is not a list of numbers or a .npy file") from None
    return out


def _compile(args: argparse.Namespace) -> int:
    import time

    import nnkiln
    from nnkiln.compiler import compile_to_rt
    from nnkiln.conversion.rt_to_blob import blob_and_bytes_from_module
    from nnkiln.progress import progress

    start = time.perf_counter()
    bar = progress(3, "import", quiet=args.quiet or args.print_ir_after_all or args.timing)

    def on_pass(i: int, n: int, name: str) -> None:  # steps: import, the n passes, the blob
        bar.total = n + 2
        bar.set_description(name)
        bar.update(1)

    with bar:
        module = nnkiln.load(args.model, parse_shapes(args.shape) or None, parse_consts(args.const) or None)
        rt = compile_to_rt(module, args.target, args.pipeline, args.threads, queues=args.queues,
                           print_ir_after_all=args.print_ir_after_all, timing=args.timing, on_pass=on_pass)
        bar.set_description("blob")
        bar.update(1)
        if args.emit != "rt":
            blob, raw = blob_and_bytes_from_module(rt, target=args.target, pipeline=args.pipeline)  # deterministic
    if args.emit == "rt":
        from nnkiln.ir.text import print_module

        text = print_module(rt)
        if args.output == "-":
            sys.stdout.write(text)
        else:
            with open(args.output, "w", encoding="utf-8") as f:
                f.write(text)
        return 0
    seconds = time.perf_counter() - start
    try:
        with open(args.output, "wb") as f:
            f.write(raw)
    except OSError as err:
        raise InputError(f"{args.output}: cannot write: {err}") from None
    m = blob.metadata
    print(f"{args.model}: compiled to {args.output} ({len(raw)} bytes, {len(blob.tasks)} tasks, "
          f"arena {m['arena_bytes']} bytes, lower bound {m['arena_lower_bound_bytes']} bytes{_scratchpads(m)}, "
          f"{seconds:.3f} s)")
    return 0


def _scratchpads(meta: dict) -> str:  # type: ignore[type-arg]
    """``, CMX0 24576 bytes, CMX1 ...``: the blob's other arenas (the npu's scratchpads), else nothing."""
    arenas = meta.get("arenas") or []
    return "".join(f", {a['name']} {a['bytes']} bytes" for a in sorted(arenas[1:], key=lambda a: a["name"]))


def compile_main(argv: Sequence[str]) -> int:
    """``nnkiln compile ...``"""
    return _guard(_compile, compile_parser().parse_args(list(argv)))


# -- inspect ------------------------------------------------------------------------------------------


def inspect_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="nnkiln inspect", description="validate and describe a .kiln blob")
    p.add_argument("blob")
    p.add_argument("--json", action="store_true", help="print JSON")
    return p


def _read_blob(path: str):  # noqa: ANN202
    """Decode and validate the blob as ``run`` does: the decoder's rules, then every task's kernel is built
    (``Executable``), so that ``inspect`` accepts exactly the blobs that ``run`` loads."""
    from nnkiln.blob.reader import decode
    from nnkiln.runtime.executable import Executable

    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as err:
        raise InputError(f"{path}: cannot read: {err}") from None
    try:
        blob = decode(raw)
        Executable(blob, raw, threads=1)
    except NnkilnError as err:
        raise type(err)(f"{path}: {err}") from None
    return blob


def _inspect(args: argparse.Namespace) -> int:
    from nnkiln.blob.inspect import describe

    d = describe(_read_blob(args.blob))
    if args.json:
        json.dump(d, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    m = d["metadata"]
    threads = f"threads {m['threads']}" if "threads" in m else "threads: every core"
    print(f"blob {args.blob}: version {d['version']}, target {m.get('target')}, pipeline {m.get('pipeline')}, "
          f"{threads}, arena {m['arena_bytes']} bytes (lower bound {m['arena_lower_bound_bytes']}){_scratchpads(m)}, "
          f"constants {d['constants_bytes']} bytes"
          + (f", simulated {m['simulated_cycles']} cycles" if "simulated_cycles" in m else ""))
    for io in d["io"]:
        print(f"  {io['direction']:6} {io['name']}: {io['dtype']}{io['shape']} -> buffer {io['buffer']}")
    print(f"buffers ({len(d['buffers'])}):")
    for b in d["buffers"]:
        alias = f" view of {b['alias_of']}" if b["alias_of"] is not None else ""
        print(f"  #{b['index']:<4} {b['memory']:8} [{b['offset']}, {b['offset'] + b['size']}) "
              f"{b['dtype']}{b['shape']}{alias} producer={b['producer']} last_consumer={b['last_consumer']}")
    print(f"tasks ({len(d['tasks'])}):")
    for t in d["tasks"]:
        print(f"  #{t['index']:<4} {t['executor']}[{t['executor_index']}] {t['kernel']} in={t['inputs']} "
              f"out={t['outputs']} waits={t['waits']} updates={t['updates']}"
              + (f" cycles=[{t['start_cycle']}, +{t['cycles']}]" if "cycles" in t else "")
              + (f" post_ops={[p['kernel'] for p in t['post_ops']]}" if t["post_ops"] else "") + _decisions(t))
    print(f"barriers ({len(d['barriers'])}):")
    for b in d["barriers"]:
        print(f"  #{b['index']:<4} physical {b['physical_id']} producers={b['producer_tasks']} "
              f"consumers={b['consumer_tasks']}")
    return 0


def _decisions(t: dict) -> str:
    """What the compiler decided about a task, for the text listing: its kernel variant, permuted operands, and a
    row program's steps and geometry."""
    from nnkiln.blob import row_program

    attrs, out = t["attrs"], ""
    if "variant" in attrs:
        out += f" variant={attrs['variant']}"
    if t.get("operand_perms"):
        out += f" operand_perms={t['operand_perms']}"
    if t["kernel"] == row_program.KERNEL:
        try:
            prog = row_program.decode(attrs["code"], attrs["bounds"])
            names = [row_program.Op(i[6] if i[0] == row_program.Op.STEP else i[0]).name.lower() for i in prog
                     if i[0] != row_program.Op.CHAIN]
            out += f" program=[{', '.join(names)}] rows={attrs['rows']}x{attrs['cols']}"
        except (KeyError, ValueError, TypeError):
            out += " program=<unreadable>"
    return out


def inspect_main(argv: Sequence[str]) -> int:
    """``nnkiln inspect model.kiln [--json]``"""
    return _guard(_inspect, inspect_parser().parse_args(list(argv)))


# -- run a blob ---------------------------------------------------------------------------------------


def run_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="nnkiln run", description="run a compiled .kiln blob")
    p.add_argument("blob")
    p.add_argument("--input", action="append", default=[], help="name=file.npy, name=file.npz or file.npz")
    p.add_argument("--output", default=None, help="write outputs to .npz (or .npy for one output)")
    p.add_argument("--random-inputs", action="store_true", help="random values for inputs not given")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--print-values", action="store_true")
    p.add_argument("--stats", action="store_true", help="print the executable's stats")
    p.add_argument("--threads", type=positive_int, default=None, help="cpu threads (default: the blob's, or every core)")
    return p


def _run(args: argparse.Namespace) -> int:
    from nnkiln.arrayfiles import load_inputs
    from nnkiln.runtime import load_blob
    from nnkiln.runtime.io import report_outputs

    exe = load_blob(args.blob, threads=args.threads)
    inputs = load_inputs(args.input)
    if args.random_inputs:
        import numpy as np

        from nnkiln.runtime.io import random_array

        rng = np.random.default_rng(args.seed)
        inputs = {**{io.name: random_array(io.name, io.kind, io.shape, rng) for io in exe.blob.inputs}, **inputs}
    outputs = exe.run(inputs)
    report_outputs(outputs, args.print_values, args.output)
    if args.stats:
        print(json.dumps(exe.stats, indent=1))
    return 0


def run_main(argv: Sequence[str]) -> int:
    """``nnkiln run model.kiln --input ...``"""
    return _guard(_run, run_parser().parse_args(list(argv)))


__all__ = ["compile_main", "inspect_main", "parse_consts", "parse_shapes", "run_main"]
