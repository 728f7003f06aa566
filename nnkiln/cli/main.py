"""``nnkiln``: the command line.

Every deliberate error becomes one line on stderr and the exit code of its class
(``nnkiln.ir.errors``): 1 invalid IR or model, 2 unreadable input, 3 internal error (a pass broke an
invariant, or a bug), 4 ``tosa_unpredictable``, 5 not executable. Set ``NNKILN_DEBUG=1`` to see the
Python traceback of an internal error.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import traceback
import warnings
from collections.abc import Sequence

from nnkiln.ir.errors import InputError, NnkilnError, VerifyError


def _read(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"{path}: cannot read: {err}") from None


def _write(path: str | None, text: str) -> None:
    if path in (None, "-"):
        sys.stdout.write(text)
        return
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as err:
        raise InputError(f"{path}: cannot write: {err}") from None


def _error_text(err: Exception) -> str:
    if isinstance(err, VerifyError):
        return err.describe()
    return str(err)


# -- opt ------------------------------------------------------------------------------------------

_EXPECTED = re.compile(r"//\s*expected-error\s*(?:@[+-]?\d+)?\s*\{\{(.*?)\}\}")


def cmd_opt(args: argparse.Namespace) -> int:
    from nnkiln.ir.passes import PassManager
    from nnkiln.ir.text import parse_module, print_module, split_input_file
    from nnkiln.ir.verify import verify_module
    from nnkiln.pipelines.text import parse_pass_pipeline

    text = _read(args.file)
    passes = parse_pass_pipeline(args.passes) if args.passes else []
    chunks = list(split_input_file(text)) if args.split_input_file else [(1, text)]
    outputs: list[str] = []
    failures = 0
    for first_line, chunk in chunks:
        expected = _EXPECTED.findall(chunk)
        try:
            module = parse_module(chunk, filename=f"{args.file}:{first_line}" if args.split_input_file else args.file)
            verify_module(module)
            PassManager(
                passes,
                verify_each=not args.no_verify_each,
                print_ir_after_all=args.print_ir_after_all,
                print_ir_after=frozenset(args.print_ir_after or ()),
                timing=args.timing,
            ).run(module)
        except NnkilnError as err:
            if not args.verify_diagnostics:
                raise
            message = _error_text(err)
            missing = [e for e in expected if e not in message]
            if not expected:
                sys.stderr.write(f"{args.file}:{first_line}: unexpected error: {message}\n")
                failures += 1
            elif missing:
                sys.stderr.write(
                    f"{args.file}:{first_line}: expected error {{{{{missing[0]}}}}} but got: {message}\n"
                )
                failures += 1
            continue
        if args.verify_diagnostics and expected:
            sys.stderr.write(f"{args.file}:{first_line}: expected error {{{{{expected[0]}}}}} was not produced\n")
            failures += 1
            continue
        outputs.append(print_module(module, generic=args.generic))
    if args.verify_diagnostics:
        if failures:
            sys.stderr.write(f"{failures} diagnostic check(s) failed\n")
            return 1
        _write(args.output, "// -----\n".join(outputs))
        return 0
    _write(args.output, "// -----\n".join(outputs))
    return 0


# -- verify -----------------------------------------------------------------------------------------


def cmd_verify(args: argparse.Namespace) -> int:
    from nnkiln.ir.errors import VerifyError
    from nnkiln.ir.text import parse_module
    from nnkiln.ir.verify import verify_module

    module = parse_module(_read(args.file), filename=args.file)
    try:
        verify_module(module)
    except VerifyError as err:
        sys.stderr.write(f"error: {args.file}: {err.describe()}\n")
        return err.exit_code
    print(f"{args.file}: valid")
    return 0


# -- run --------------------------------------------------------------------------------------------


def _parse_shapes(specs: Sequence[str] | None) -> dict[str, list[int]]:
    from nnkiln.cli.compile_cmds import parse_shapes

    return parse_shapes(specs)


def _positive_int(text: str) -> int:
    from nnkiln.cli.compile_cmds import positive_int

    return positive_int(text)


def random_inputs(module, seed: int = 0) -> dict:  # noqa: ANN001
    """Deterministic random inputs for every argument of the entry function (for demos and smoke tests)."""
    import numpy as np

    from nnkiln.dialects.tosa.base import kind_of
    from nnkiln.kinds import Kind
    from nnkiln.reference.interpreter import entry_function, input_names
    from nnkiln.runtime.io import random_array

    func = entry_function(module)
    rng = np.random.default_rng(seed)
    return {name: random_array(name, kind_of(arg.type) or Kind.I8, arg.type.get_shape(), rng)
            for name, arg in zip(input_names(func), func.args)}


def cmd_import(args: argparse.Namespace) -> int:
    from nnkiln.frontends import load
    from nnkiln.ir.text import print_module

    module = load(args.model, _parse_shapes(args.shape), _parse_consts(args.const))
    _write(args.output, print_module(module, generic=args.generic))
    if args.output not in (None, "-"):
        print(f"{args.model}: imported to {args.output}")
    return 0


def _parse_consts(specs: Sequence[str] | None) -> dict | None:
    from nnkiln.cli.compile_cmds import parse_consts

    return parse_consts(specs) or None


def _shapes_of_symbolic_inputs(path: str, inputs: dict) -> dict[str, list[int]]:
    """The shapes of the given arrays for the ONNX model's inputs that have a symbolic dimension
    (an input with a fixed shape keeps it: a mismatching array is then reported by the run)."""
    import onnx

    try:
        graph = onnx.load(path, load_external_data=False).graph
    except Exception:  # unreadable: the importer reports it properly
        return {}
    shapes = {}
    for vi in graph.input:
        dims = vi.type.tensor_type.shape.dim if vi.type.HasField("tensor_type") else []
        if vi.name in inputs and any(not d.HasField("dim_value") or d.dim_value <= 0 for d in dims):
            shapes[vi.name] = list(inputs[vi.name].shape)
    return shapes


def cmd_run(args: argparse.Namespace) -> int:
    """``nnkiln run model.kiln|MODEL``: a blob runs on the runtime; a model is compiled in memory (the
    ``default`` pipeline for the cpu target) and run the same way, or, with ``--reference``, run by the
    reference interpreter. The shapes of the arrays given with ``--input`` bind the model's input
    shapes unless ``--shape`` does."""
    if args.file.endswith(".kiln"):  # a compiled blob: the runtime, not the reference interpreter
        if args.shape or args.reference or args.const:
            raise InputError(f"{args.file}: --shape, --const and --reference apply to models, not to compiled blobs")
        from nnkiln.cli.compile_cmds import run_main

        argv = [args.file, *[f"--input={i}" for i in args.input or []]]
        if args.random_inputs:
            argv += ["--random-inputs", f"--seed={args.seed}"]
        if args.output:
            argv.append(f"--output={args.output}")
        if args.print_values:
            argv.append("--print-values")
        if args.threads is not None:
            argv.append(f"--threads={args.threads}")
        return run_main(argv)

    from nnkiln.arrayfiles import load_inputs
    from nnkiln.frontends import detect_format, load
    from nnkiln.runtime.io import report_outputs

    inputs = load_inputs(args.input or [])
    consts = _parse_consts(args.const)
    both = sorted(set(inputs) & set(consts or {}))
    if both:
        raise InputError(f"{args.file}: {', '.join(both)} given both as --input and as --const")
    shapes = _parse_shapes(args.shape)
    if detect_format(args.file) == "onnx":
        shapes = {**_shapes_of_symbolic_inputs(args.file, inputs), **shapes}
    module = load(args.file, shapes or None, consts)
    if args.reference:
        from nnkiln.reference import interpreter

        if args.random_inputs:
            inputs = {**random_inputs(module, args.seed), **inputs}
        outputs = interpreter.run(module, inputs)
    else:
        import numpy as np

        from nnkiln.compiler import compile as compile_module
        from nnkiln.runtime.io import random_array

        exe = compile_module(module, target="cpu", pipeline="default", threads=args.threads)
        if args.random_inputs:
            rng = np.random.default_rng(args.seed)
            inputs = {**{io.name: random_array(io.name, io.kind, io.shape, rng) for io in exe.blob.inputs}, **inputs}
        outputs = exe.run(inputs)
    report_outputs(outputs, args.print_values, args.output)
    return 0


# -- conformance ------------------------------------------------------------------------------------


def cmd_conformance(args: argparse.Namespace) -> int:
    from nnkiln import conformance

    return conformance.main([args.dir, *args.rest])


# -- compile, inspect, export ---------------------------------------------------------------------------


def cmd_compile(args: argparse.Namespace) -> int:
    from nnkiln.cli.compile_cmds import compile_main

    return compile_main(args.rest)


def cmd_inspect(args: argparse.Namespace) -> int:
    from nnkiln.cli.compile_cmds import inspect_main

    return inspect_main(args.rest)


def cmd_export_tosa1(args: argparse.Namespace) -> int:
    from nnkiln.frontends.tosa1.export import export_main

    return export_main(args.rest)


def cmd_translate(args: argparse.Namespace) -> int:
    from nnkiln.frontends.nnef.writer import translate_main

    return translate_main(args.rest)


# -- check-nnef -------------------------------------------------------------------------------------


def cmd_check_nnef(args: argparse.Namespace) -> int:
    from nnkiln.frontends.nnef import check_main

    return check_main(args.path, lenient=args.lenient)


# -- entry point ------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="nnkiln", description="nnkiln neural-network compiler")
    sub = p.add_subparsers(dest="command", required=True)

    opt = sub.add_parser("opt", help="parse, verify, run passes and print MLIR (like mlir-opt)")
    opt.add_argument("file", help="an .mlir file, or - for stdin")
    opt.add_argument("-p", "--passes", default="", help="comma-separated pass pipeline, e.g. cse,dce")
    opt.add_argument("-o", "--output", default=None)
    opt.add_argument("--split-input-file", action="store_true", help="treat '// -----' as file separators")
    opt.add_argument("--verify-diagnostics", action="store_true", help="check '// expected-error {{...}}'")
    opt.add_argument("--print-ir-after-all", action="store_true")
    opt.add_argument("--print-ir-after", action="append", metavar="PASS")
    opt.add_argument("--timing", action="store_true", help="report the time of each pass")
    opt.add_argument("--generic", action="store_true", help="print the generic op form")
    opt.add_argument("--no-verify-each", action="store_true", help="do not verify after each pass")
    opt.set_defaults(fn=cmd_opt)

    ver = sub.add_parser("verify", help="verify an .mlir file: exit 0 valid, 1 invalid, 2 unreadable")
    ver.add_argument("file")
    ver.set_defaults(fn=cmd_verify)

    imp = sub.add_parser("import", help="import a model (.onnx, ...) and write it as tosa-level MLIR")
    imp.add_argument("model")
    imp.add_argument("-o", "--output", default=None)
    imp.add_argument("--shape", action="append", metavar="NAME=D0,D1,...", help="bind an input's symbolic shape")
    imp.add_argument("--const", action="append", metavar="NAME=V0,V1,...|NAME=FILE.npy",
                     help="bind an input's value (ONNX shape, axes, pads ... inputs)")
    imp.add_argument("--generic", action="store_true", help="print the generic op form")
    imp.set_defaults(fn=cmd_import)

    run = sub.add_parser("run", help="run a compiled blob (.kiln) or a model (.mlir, .onnx, NNEF, ...): compiled for the "
                         "cpu, or with --reference by the reference interpreter")
    run.add_argument("file")
    run.add_argument("--input", "-i", action="append", metavar="NAME=PATH.npy")
    run.add_argument("--random-inputs", action="store_true", help="random values for inputs not given")
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--shape", action="append", metavar="NAME=D0,D1,...", help="bind an input's symbolic shape")
    run.add_argument("--const", action="append", metavar="NAME=V0,V1,...|NAME=FILE.npy",
                     help="bind an input's value (ONNX shape, axes, pads ... inputs)")
    run.add_argument("-o", "--output", default=None, help="save outputs (.npz, or .npy for one output)")
    run.add_argument("--print-values", action="store_true")
    run.add_argument("--threads", type=_positive_int, default=None, help="cpu threads (default: the blob's, or "
                     "every core)")
    run.add_argument("--reference", action="store_true", help="run a model with the reference interpreter "
                     "(bit-exact TOSA semantics; slow) instead of compiling it")
    run.set_defaults(fn=cmd_run)

    comp = sub.add_parser("compile", help="compile a model to a blob: nnkiln compile MODEL -o model.kiln "
                          "[--target cpu] [--pipeline default] [--threads N] [--queues Q] [--print-ir-after-all]", add_help=False)
    comp.add_argument("rest", nargs=argparse.REMAINDER)
    comp.set_defaults(fn=cmd_compile)

    insp = sub.add_parser("inspect", help="print a compiled blob's buffers, tasks and barriers: nnkiln inspect model.kiln [--json]",
                          add_help=False)
    insp.add_argument("rest", nargs=argparse.REMAINDER)
    insp.set_defaults(fn=cmd_inspect)

    exp = sub.add_parser("export-tosa1", help="write a TOSA 0.30 .mlir file as TOSA 1.x MLIR (generic form): "
                         "nnkiln export-tosa1 FILE.mlir [-o out.mlir]", add_help=False)
    exp.add_argument("rest", nargs=argparse.REMAINDER)
    exp.set_defaults(fn=cmd_export_tosa1)

    trans = sub.add_parser("translate", help="translate a model to another format: nnkiln translate --to nnef MODEL -o DIR",
                           add_help=False)
    trans.add_argument("rest", nargs=argparse.REMAINDER)
    trans.set_defaults(fn=cmd_translate)

    nnef = sub.add_parser("check-nnef", help="parse and check an NNEF document, folder or .tgz (exit 0 valid, 1 invalid)")
    nnef.add_argument("path")
    nnef.add_argument("--lenient", action="store_true", help="accept the known defects of the spec's own examples")
    nnef.set_defaults(fn=cmd_check_nnef)

    bench = sub.add_parser("bench", help="measure a model's latency: nnkiln bench MODEL [--runs N] [--threads T] "
                           "[--batch B] [--compare onnxruntime] [--json]", add_help=False)
    bench.add_argument("rest", nargs=argparse.REMAINDER)
    bench.set_defaults(fn=cmd_bench)

    report = sub.add_parser("report", help="a self-contained HTML report (graph, schedule, memory, tasks): "
                            "nnkiln report MODEL|X.kiln -o report.html [--target T] [--threads N] [--runs N]")
    report.add_argument("rest", nargs=argparse.REMAINDER)
    report.set_defaults(fn=cmd_report)

    conf = sub.add_parser("conformance", help="run tosa_verif_build_tests cases under DIR")
    conf.add_argument("dir")
    conf.add_argument("rest", nargs=argparse.REMAINDER)
    conf.set_defaults(fn=cmd_conformance)
    return p


def cmd_bench(args: argparse.Namespace) -> int:
    from nnkiln.cli.bench_cmd import bench_main

    return bench_main(args.rest)


def cmd_report(args: argparse.Namespace) -> int:
    from nnkiln.cli.report_cmd import report_main

    return report_main(args.rest)


_PASSTHROUGH = {
    "bench": cmd_bench,
    "report": cmd_report,
    "compile": cmd_compile,
    "inspect": cmd_inspect,
    "export-tosa1": cmd_export_tosa1,
    "translate": cmd_translate,
}
"""Subcommands whose own parsers (in other modules) read the rest of the command line."""


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ANN001
    from nnkiln.errors import NnkilnWarning

    if issubclass(category, NnkilnWarning):
        sys.stderr.write(f"warning: {message}\n")
    else:
        _default_showwarning(message, category, filename, lineno, file, line)


_default_showwarning = warnings.showwarning


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    warnings.showwarning = _show_warning
    if argv and argv[0] in _PASSTHROUGH:
        args = argparse.Namespace(fn=_PASSTHROUGH[argv[0]], rest=argv[1:])
    else:
        args = build_parser().parse_args(argv)
    try:
        return int(args.fn(args) or 0)
    except NnkilnError as err:
        sys.stderr.write(f"error: {_error_text(err)}\n")
        return err.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
    except BrokenPipeError:  # output piped into e.g. `head`, which stopped reading
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except RecursionError:
        sys.stderr.write("error: input nested too deeply\n")
        return 1
    except MemoryError:
        sys.stderr.write("error: out of memory (the model or its data needs more memory than this process may use)\n")
        return 1
    except Exception as err:  # a bug: say so, briefly
        if os.environ.get("NNKILN_DEBUG"):
            traceback.print_exc()
        sys.stderr.write(f"internal error: {type(err).__name__}: {err} (set NNKILN_DEBUG=1 for a traceback)\n")
        return 3


if __name__ == "__main__":
    sys.exit(main())
