"""``nnkiln report MODEL|X.kiln -o report.html [--target cpu] [--threads N] [--runs N] [--seed S] [--quiet]``.

Writes one self-contained HTML page (``nnkiln.report``): summary, source and task graphs, the schedule per
executor instance (measured by ``--runs`` profiled runs on seeded random inputs, or simulated when the target
provides a timeline), memory over time and a per-task table. Needs the optional extra ``nnkiln[report]``; without
it the command fails with one line naming the install command.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from nnkiln.cli.compile_cmds import _guard, positive_int
from nnkiln.errors import InputError


def report_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="nnkiln report", description="write a self-contained HTML report of a model")
    p.add_argument("model", help="a model (.onnx, .mlir, NNEF, .tosa) or a compiled blob (.kiln)")
    p.add_argument("-o", "--output", required=True, help="the HTML file to write")
    p.add_argument("--target", default="cpu")
    p.add_argument("--threads", type=positive_int, default=None, help="cpu threads (default: every core)")
    p.add_argument("--runs", type=positive_int, default=3, help="profiled runs (default 3; the median is shown)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    p.add_argument("--quiet", action="store_true", help="print nothing but errors")
    return p


def report_main(argv: Sequence[str]) -> int:
    return _guard(_report, report_parser().parse_args(list(argv)))


def _report(args: argparse.Namespace) -> int:
    from nnkiln.report import report, require_extra

    require_extra()  # before compiling: the missing extra is the first thing said
    say = (lambda label: None) if args.quiet else (lambda label: sys.stderr.write(f"report: {label}\n"))
    text = report(args.model, target=args.target, threads=args.threads, runs=args.runs, seed=args.seed,
                  on_step=say)
    try:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as err:
        raise InputError(f"{args.output}: cannot write: {err}") from None
    if not args.quiet:
        sys.stderr.write(f"report: wrote {args.output} ({len(text.encode()) / 1024:.0f} KiB)\n")
    return 0
