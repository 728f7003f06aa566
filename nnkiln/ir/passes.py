"""The pass manager: runs ``ModulePass``es in order and verifies the IR after every pass.

Verification after each pass is on by default (architecture §2: every pass must leave valid IR).
When a pass leaves invalid IR, ``PassError`` names the pass, the op and the broken rule: that is a
compiler bug, not a user error. Options mirror mlir-opt: print the IR after all passes or after
named ones, and time each pass.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TextIO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from nnkiln.ir.errors import NnkilnError, PassError, VerifyError
from nnkiln.ir.text import print_module
from nnkiln.ir.verify import verify_module


@dataclass
class PassTiming:
    name: str
    seconds: float
    verify_seconds: float = 0.0


@dataclass
class PassManager:
    """Runs passes with verification after each, optional IR dumps and timing."""

    passes: Sequence[ModulePass]
    verify_each: bool = True
    print_ir_after_all: bool = False
    print_ir_after: frozenset[str] = frozenset()
    timing: bool = False
    stream: TextIO = field(default_factory=lambda: sys.stderr)
    timings: list[PassTiming] = field(default_factory=list)
    on_pass: Callable[[int, int, str], None] | None = None
    """Called before each pass with (its index, the number of passes, its name): progress reporting."""

    def run(self, module: ModuleOp, ctx: Context | None = None) -> None:
        from nnkiln.ir.context import make_context

        ctx = ctx or make_context()
        for i, p in enumerate(self.passes):
            if self.on_pass is not None:
                self.on_pass(i, len(self.passes), p.name)
            start = time.perf_counter()
            try:
                p.apply(ctx, module)
            except NnkilnError:
                raise
            except Exception as err:  # a bug in the pass itself
                raise PassError(f"internal error in pass '{p.name}': {type(err).__name__}: {err}") from err
            elapsed = time.perf_counter() - start
            verified = time.perf_counter()
            if self.verify_each:
                try:
                    verify_module(module)
                except VerifyError as err:
                    raise PassError(
                        f"internal error: pass '{p.name}' left invalid IR: {err.describe()}"
                    ) from err
            self.timings.append(PassTiming(p.name, elapsed, time.perf_counter() - verified))
            if self.print_ir_after_all or p.name in self.print_ir_after:
                self.stream.write(f"// -----// IR Dump After {p.name} //----- //\n")
                self.stream.write(print_module(module))
        if self.timing:
            self.report_timing()

    def report_timing(self) -> None:
        total = sum(t.seconds for t in self.timings) or 1e-12
        checks = sum(t.verify_seconds for t in self.timings)
        self.stream.write("===- Pass execution timing report -===\n")
        self.stream.write(f"  Total: {total:.4f} s (+ {checks:.4f} s verifying the IR after the passes)\n")
        for t in self.timings:
            self.stream.write(f"  {t.seconds:10.4f} s ({100 * t.seconds / total:5.1f}%)  {t.name}"
                              f"  (+ {t.verify_seconds:.4f} s verify)\n")


def pass_names(passes: Iterable[ModulePass]) -> list[str]:
    return [p.name for p in passes]
