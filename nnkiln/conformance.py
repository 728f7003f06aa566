"""Run TOSA 1.x generated conformance tests (``tosa_verif_build_tests`` layout) against nnkiln.

Every directory under ``DIR`` holding a ``desc.json`` is one test case (``test.tosa``, ``input-N.npy``
and, for positive cases, the expected outputs named by ``ofm_file``, as ``bench/gen_tosa_conformance.sh`` writes
them, or as ``tosa_verif_run_tests`` does: ``ref-result-N.runner.tosa_refmodel_sut_run.npy``). A positive case
without expected files has them computed by the TOSA reference model when its Python module is installed
(``tosa-tools``), else it is skipped with that reason (said once above the report). Each case is:

positive (``expected_failure`` false)
    imported with ``nnkiln.frontends.tosa1`` → verified (``verify_module``) → executed by
    ``nnkiln.reference.run`` → compared with the expected outputs. PASS when every output matches;
    FAIL on an importer rejection, a ``VerifyError``, a run-time error (including ``TosaUnpredictable``:
    the 1.x reference model ran the graph without a REQUIRE failure) or a mismatch.
negative (``expected_failure`` true, an ERROR_IF test)
    PASS when nnkiln rejects the graph: the importer raises ``InvalidTosa1Graph`` (or another non-skip
    ``FrontendError``), verification raises ``VerifyError``, or — for rules that are REQUIRE conditions in
    0.30 (e.g. GATHER/SCATTER index bounds) — running it raises ``TosaUnpredictable``. FAIL when the graph
    verifies and runs. SKIP when the rule has no 0.30 counterpart (``TOSA1_ONLY_RULES``).
skipped
    when the importer raises ``UnsupportedIn030`` / ``NotImported`` (the reason is printed).

Comparison (decision, documented here): a result tensor with compliance mode ``EXACT`` (every integer
test) must be bit-identical, same shape, with the bits of an unsigned 0.30 type compared to the signed
storage the 1.x model writes (``ui8`` ↔ int8 bits). Float modes: ``ULP`` uses the desc's
``ulp_info.ulp`` bound in units of ``np.spacing`` of the expected value; every other float mode
(``DOT_PRODUCT``, ``ABS_ERROR``, ``FP_SPECIAL``, ``REDUCE_PRODUCT``, ``RESCALE_INEXACT`` …) uses a
relative tolerance ``rtol = 1e-3`` with ``atol = 1e-6``; NaNs must sit in the same places. When
``tosa_verif_run_tests``'s compliance runner wrote the reference model's float64 result and its bound
(``ref-result-N.runner.tosa_refmodel_compliance_sut_run.npy``, ``bounds_...``), ``DOT_PRODUCT`` outputs are checked
by 1.x's statistical rule instead (``compare_dot_product``): both sides round, so comparing two rounded results with a
fixed tolerance fails correct fp16 convolutions. bfloat16 arrays, which the TOSA tools save as 2-byte void, are read
as bfloat16. A positive case whose operand types fall outside the op's 0.30 table (the verifier's ``[supported data
types]`` rule) is skipped: the 1.x reference model ran it, so it is a 1.x type mode 0.30 lacks.

The report has one line per failing case (``FAIL <case>: <reason>``), one per skipped case
(``SKIP <case>: <reason>``) and ends with the exact line ``N passed, M failed, K skipped``.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum

import numpy as np

TOSA1_ONLY_RULES: dict[str, str] = {
    "BorderSmallerMin": "RESIZE border range is a 1.x rule (0.30's border only sizes the output)",
    "BorderLargerEqualMax": "RESIZE border range is a 1.x rule (0.30's border only sizes the output)",
    "OffsetSmallerMin": "RESIZE offset >= -scale_n is a 1.x rule (0.30 allows offset > -16<<shift)",
    "ResizeOutputShapeNonInteger": "RESIZE exact output division is a 1.x rule (0.30 uses idiv + border)",
    "ResizeOutputShapeMismatch": "RESIZE output size rule differs in 0.30 (border absorbs it)",
    "InputRank1WrongRank": "the rank of a 1.x scalar operand (MUL shift, zero points) is a 1.x rule: 0.30 takes "
                           "these as attributes",
}
"""1.x ERROR_IF rules (generator names) with no 0.30 counterpart: such negative cases are skipped."""

STRICTER_030_REQUIRES: dict[str, str] = {
    "apply_scale_32: value >=": "0.30's apply_scale_32 REQUIREs -2^(shift-2) <= value < 2^(shift-2); 1.x allows "
                                "a wider value range, so this 1.x-valid input is unpredictable in 0.30",
}
"""REQUIRE rules that are stricter in 0.30 than in 1.x (substring of the ``TosaUnpredictable`` message):
a positive 1.x case that trips one is skipped (its 1.x expected output is no 0.30 expectation)."""


class Status(Enum):
    PASS = "PASS"
    FAIL = "FAIL"
    SKIP = "SKIP"


@dataclass
class CaseResult:
    name: str
    status: Status
    reason: str = ""

    def line(self) -> str:
        return f"{self.status.value} {self.name}: {self.reason}" if self.reason else f"{self.status.value} {self.name}"


@dataclass
class Summary:
    """Results of a conformance run; ``str(summary)`` is the full report."""

    results: list[CaseResult] = field(default_factory=list)

    @property
    def passed(self) -> int:
        return sum(r.status is Status.PASS for r in self.results)

    @property
    def failed(self) -> int:
        return sum(r.status is Status.FAIL for r in self.results)

    @property
    def skipped(self) -> int:
        return sum(r.status is Status.SKIP for r in self.results)

    @property
    def failures(self) -> list[CaseResult]:
        return [r for r in self.results if r.status is Status.FAIL]

    def total_line(self) -> str:
        return f"{self.passed} passed, {self.failed} failed, {self.skipped} skipped"

    def report(self, *, show_skipped: bool = True, show_passed: bool = False) -> str:
        lines = [r.line() for r in self.results
                 if r.status is Status.FAIL or (show_skipped and r.status is Status.SKIP)
                 or (show_passed and r.status is Status.PASS)]
        return "\n".join([*lines, self.total_line()])

    def __str__(self) -> str:
        return self.report()


# ------------------------------------------------------------------------------------------------


def find_cases(root: str) -> list[str]:
    """Every directory under ``root`` (or ``root`` itself) that holds a ``desc.json``, sorted."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        if "desc.json" in filenames:
            found.append(dirpath)
    return sorted(found)


def run_conformance(root: str, *, name_filter: str | None = None, quiet: bool = True) -> Summary:
    """Run every test case under ``root`` (see the module docstring); never raises for a case. Unless ``quiet``, a
    progress bar on a terminal."""
    from nnkiln.progress import progress

    summary = Summary()
    pattern = re.compile(name_filter) if name_filter else None
    cases = [(c, os.path.relpath(c, root) if c != root else os.path.basename(c)) for c in find_cases(root)]
    cases = [(c, n) for c, n in cases if not pattern or pattern.search(n)]
    with progress(len(cases), "conformance", quiet=quiet, unit="case") as bar:
        for case, name in cases:
            summary.results.append(run_case(case, name))
            bar.update(1)
    return summary


def run_case(case_dir: str, name: str | None = None) -> CaseResult:
    """Run one test directory."""
    name = name or os.path.basename(case_dir)
    try:
        with open(os.path.join(case_dir, "desc.json")) as f:
            desc = json.load(f)
    except (OSError, ValueError) as err:
        return CaseResult(name, Status.FAIL, f"unreadable desc.json: {err}")
    try:
        if desc.get("expected_failure", False):
            return _negative(case_dir, name, desc)
        return _positive(case_dir, name, desc)
    except Exception as err:  # noqa: BLE001 - a crash anywhere in nnkiln is this case's failure
        return CaseResult(name, Status.FAIL, f"internal error: {type(err).__name__}: {_first_line(err)}")


def _first_line(err: BaseException) -> str:
    text = err.describe() if hasattr(err, "describe") else str(err)  # type: ignore[attr-defined]
    text = text.strip()
    return text.splitlines()[0] if text else type(err).__name__


def _import(case_dir: str, desc: dict):  # -> Tosa1Import
    from nnkiln.frontends.tosa1 import import_tosa1_file

    return import_tosa1_file(os.path.join(case_dir, desc.get("tosa_file", "test.tosa")))


def _inputs(case_dir: str, desc: dict, imp) -> dict[str, np.ndarray]:  # imp: Tosa1Import
    from xdsl.dialects.builtin import TensorType

    from nnkiln.ir.elements import dtype_of
    from nnkiln.reference.interpreter import entry_function

    func = entry_function(imp.module)
    arg_dtypes = {n: dtype_of(t.element_type) for n, t in zip(imp.input_names, func.function_type.inputs.data)
                  if isinstance(t, TensorType)}
    out: dict[str, np.ndarray] = {}
    for tname, fname in zip(desc.get("ifm_name", []), desc.get("ifm_file", [])):
        arr = _typed(np.load(os.path.join(case_dir, fname)))
        want = arg_dtypes.get(tname)
        if want is not None and arr.dtype != want and arr.dtype.kind in "iu" and want.kind in "iu" \
                and arr.dtype.itemsize == want.itemsize:
            arr = arr.view(want)  # 1.x stores unsigned RESCALE data in signed tensors: same bits
        out[tname] = arr
    return out


def _typed(arr: np.ndarray) -> np.ndarray:
    """An array as the TOSA tools store it, typed: bfloat16 data is saved as 2-byte void (``|V2``)."""
    if arr.dtype.kind == "V" and arr.dtype.itemsize == 2:
        import ml_dtypes

        return arr.view(ml_dtypes.bfloat16)
    return arr


TYPE_MODE_030 = "[supported data types]"
"""The verifier's rule name for an operand type combination outside the op's 0.30 table: for a graph the 1.x
reference model ran (a positive case), it is a 1.x type mode that 0.30 lacks, so the case is skipped."""


def _positive(case_dir: str, name: str, desc: dict) -> CaseResult:
    from nnkiln.frontends.tosa1 import InvalidTosa1Graph, NotImported, UnsupportedIn030
    from nnkiln.ir.errors import FrontendError, NotExecutableError, TosaUnpredictable, VerifyError
    from nnkiln.ir.verify import verify_module
    from nnkiln.reference import run

    try:
        imp = _import(case_dir, desc)
    except (UnsupportedIn030, NotImported) as err:
        return CaseResult(name, Status.SKIP, str(err.args[0]))
    except InvalidTosa1Graph as err:
        return CaseResult(name, Status.FAIL, f"importer rejected a valid graph [{err.rule}]: {err.args[0]}")
    except FrontendError as err:
        return CaseResult(name, Status.FAIL, f"import failed: {err}")
    try:
        verify_module(imp.module)
    except VerifyError as err:
        if TYPE_MODE_030 in _first_line(err):
            return CaseResult(name, Status.SKIP, f"a 1.x type mode that 0.30 lacks: {_first_line(err)}")
        return CaseResult(name, Status.FAIL, f"verifier rejected a valid graph: {_first_line(err)}")
    inputs = _inputs(case_dir, desc, imp)
    try:
        outputs = run(imp.module, inputs)
    except TosaUnpredictable as err:
        for key, why in STRICTER_030_REQUIRES.items():
            if key in str(err):
                return CaseResult(name, Status.SKIP, why)
        return CaseResult(name, Status.FAIL, f"unpredictable where the 1.x model is valid: {_first_line(err)}")
    except NotExecutableError as err:
        return CaseResult(name, Status.FAIL, f"not executable: {_first_line(err)}")
    except VerifyError as err:
        return CaseResult(name, Status.FAIL, f"verifier rejected a valid graph: {_first_line(err)}")
    compliance = desc.get("meta", {}).get("compliance", {}).get("tensors", {})
    expected = _expected_outputs(case_dir, desc)
    if isinstance(expected, str):
        return CaseResult(name, Status.SKIP, expected)
    for oname, fname, want in zip(desc.get("ofm_name", []), desc.get("ofm_file", []), expected):
        if oname not in outputs:
            return CaseResult(name, Status.FAIL, f"no output named '{oname}' (got {sorted(outputs)})")
        precise = _precise_results(case_dir, fname)
        mode = str(compliance.get(oname, {}).get("mode", ""))
        if mode == "DOT_PRODUCT" and precise is not None:
            problem = compare_dot_product(outputs[oname], *precise, compliance[oname].get("dot_product_info", {}))
        else:
            problem = compare(outputs[oname], want, compliance.get(oname, {}))
        if problem:
            return CaseResult(name, Status.FAIL, f"output '{oname}': {problem}")
    return CaseResult(name, Status.PASS)


RUNNER_RESULT = ".runner.{runner}.npy"
"""How ``tosa_verif_run_tests`` names an expected output it computed: ``ref-result-0.npy`` becomes
``ref-result-0.runner.tosa_refmodel_sut_run.npy`` (the runner's module name in the middle)."""

NO_EXPECTED = "no expected results, and the TOSA reference model (tosa-tools) is not installed"
"""The reason of a positive case skipped because nothing gives its expected outputs (``main`` explains it once)."""


def expected_file(case_dir: str, fname: str) -> str | None:
    """The file holding an expected output named ``fname`` in ``desc.json``: itself (``bench/gen_tosa_conformance.sh``
    writes those), else what a ``tosa_verif_run_tests`` runner wrote (``RUNNER_RESULT``; the reference model's
    ``tosa_refmodel_sut_run`` first), else None."""
    path = os.path.join(case_dir, fname)
    if os.path.isfile(path):
        return path
    stem = path[:-4] if path.endswith(".npy") else path
    preferred = stem + RUNNER_RESULT.format(runner="tosa_refmodel_sut_run")
    if os.path.isfile(preferred):
        return preferred
    others = sorted(glob.glob(glob.escape(stem) + RUNNER_RESULT.format(runner="*")))
    return others[0] if others else None


def reference_model():  # noqa: ANN201  (the tosa_reference_model module, or None)
    """The TOSA reference model's Python module (package ``tosa-tools``) when it is installed, else None."""
    try:
        import tosa_reference_model
    except ImportError:
        return None
    return tosa_reference_model


def _expected_outputs(case_dir: str, desc: dict) -> list[np.ndarray] | str:
    """The expected outputs of a positive case in ``ofm_name`` order: from its files, else computed by the TOSA
    reference model when installed; a string is the reason to skip the case instead."""
    files = [expected_file(case_dir, f) for f in desc.get("ofm_file", [])]
    if all(f is not None for f in files):
        return [_typed(np.load(f)) for f in files]  # type: ignore[arg-type]
    trm = reference_model()
    if trm is None:
        return NO_EXPECTED
    with open(os.path.join(case_dir, desc.get("tosa_file", "test.tosa")), "rb") as f:
        graph = f.read()
    inputs = [np.load(os.path.join(case_dir, f)) for f in desc.get("ifm_file", [])]
    outputs, status = trm.run(graph, inputs)
    state = str(status).split(".")[-1]
    if state != "TOSA_VALID":
        return f"the TOSA reference model finds the graph {state}: no expected results to compare with"
    return [np.asarray(o) for o in outputs]


def _negative(case_dir: str, name: str, desc: dict) -> CaseResult:
    from nnkiln.frontends.tosa1 import InvalidTosa1Graph, NotImported, UnsupportedIn030
    from nnkiln.ir.errors import FrontendError, TosaUnpredictable, VerifyError
    from nnkiln.ir.verify import verify_module
    from nnkiln.reference import run

    m = re.search(r"ERRORIF_([A-Za-z0-9]+)", name)
    rule = m.group(1) if m else "?"
    if rule == "WrongRank" and re.match(r"(pad|transpose)_", os.path.basename(case_dir)):
        return CaseResult(name, Status.SKIP, "ERRORIF_WrongRank: PAD/TRANSPOSE rank > 6 is a 1.x level limit "
                                             "(0.30 PAD/TRANSPOSE have no maximum rank)")
    if rule in TOSA1_ONLY_RULES:
        return CaseResult(name, Status.SKIP, f"ERRORIF_{rule}: {TOSA1_ONLY_RULES[rule]}")
    try:
        imp = _import(case_dir, desc)
    except (UnsupportedIn030, NotImported) as err:
        return CaseResult(name, Status.SKIP, str(err.args[0]))
    except InvalidTosa1Graph:
        return CaseResult(name, Status.PASS)
    except FrontendError:
        return CaseResult(name, Status.PASS)
    try:
        verify_module(imp.module)
    except VerifyError:
        return CaseResult(name, Status.PASS)
    # rules that are REQUIRE (run time) in 0.30: the graph must be unpredictable when run
    try:
        run(imp.module, _inputs(case_dir, desc, imp))
    except TosaUnpredictable:
        return CaseResult(name, Status.PASS)
    except VerifyError:
        return CaseResult(name, Status.PASS)
    except Exception as err:  # noqa: BLE001 - e.g. inputs missing in the test: the graph was still accepted
        return CaseResult(name, Status.FAIL, f"ERRORIF_{rule}: graph accepted by the verifier (then "
                                             f"{type(err).__name__}: {_first_line(err)})")
    return CaseResult(name, Status.FAIL, f"ERRORIF_{rule}: graph accepted by import, verifier and interpreter")


COMPLIANCE_RUNNER = "tosa_refmodel_compliance_sut_run"
"""The ``tosa_verif_run_tests`` runner that writes the reference model's float64 results and their error bounds
(``ref-result-N.runner.<it>.npy`` and ``bounds_ref-result-N.runner.<it>.npy``): what 1.x's compliance checks use."""


def _precise_results(case_dir: str, fname: str) -> tuple[np.ndarray, np.ndarray] | None:
    """The float64 reference result and its bound for expected output ``fname``, when the compliance runner wrote
    them, else None."""
    stem = os.path.join(case_dir, fname[:-4] if fname.endswith(".npy") else fname)
    ref = stem + RUNNER_RESULT.format(runner=COMPLIANCE_RUNNER)
    bnd = os.path.join(case_dir, "bounds_" + os.path.basename(ref))
    if not (os.path.isfile(ref) and os.path.isfile(bnd)):
        return None
    return np.load(ref), np.load(bnd)


_FRACTION_BITS = {"float16": (10, 2.0 ** -14), "bfloat16": (7, 2.0 ** -126), "float32": (23, 2.0 ** -126)}
"""Per output type: fraction bits and smallest normal, which scale the 1.x dot-product error bound."""


def compare_dot_product(got: np.ndarray, ref: np.ndarray, bnd: np.ndarray, info: dict) -> str:
    """'' if ``got`` meets TOSA 1.x's DOT_PRODUCT compliance rule against the float64 reference ``ref`` and the
    bound ``bnd`` (the sum of the products' magnitudes), else the reason. Decision, documented here: the rule the 1.x
    conformance suite applies (its verify library), since 0.30 states none for float dot products. Per element, with
    ``err_unit = max(bnd * 2^(-1-fraction bits), smallest normal)`` of the output type: a NaN reference needs a NaN;
    a NaN bound, or a bound that overflows the output type, sets no limit; a zero bound needs exact zeros; otherwise
    ``|got - ref| / err_unit <= abs_bound``. Over the tensor: ``sum(err^2) <= variance_error_bound * T`` and, for
    the unbiased test sets ``s`` 3..5, ``|sum(err)| <= sqrt(10 * variance_error_bound * T)``."""
    got = np.asarray(got)
    if got.shape != ref.shape:
        return f"shape {list(got.shape)} != expected {list(ref.shape)}"
    if got.dtype.name not in _FRACTION_BITS:
        return f"DOT_PRODUCT output of type {got.dtype} cannot be checked"
    frac, normal_min = _FRACTION_BITS[got.dtype.name]
    ksb = int(info.get("ksb", 0))
    abs_bound = int(info.get("abs_bound", 0)) or 2 * ksb
    var_bound = float(info.get("variance_error_bound", 0.0)) or 4.0 * 0.4 * ksb
    g = got.astype(np.float64).reshape(-1)
    r = np.asarray(ref, np.float64).reshape(-1)
    b = np.asarray(bnd, np.float64).reshape(-1)
    with np.errstate(over="ignore", invalid="ignore"):
        overflows = ~np.isfinite((b * (1 + abs_bound * 2.0 ** (-1 - frac))).astype(got.dtype).astype(np.float64))
    err = np.zeros_like(r)
    nan_ref = np.isnan(r)
    if (nan_ref & ~np.isnan(g)).any():
        return _mismatch(got, np.asarray(ref), (nan_ref & ~np.isnan(g)).reshape(got.shape), "NaN reference, not NaN")
    free = nan_ref | np.isnan(b) | overflows
    zero = ~free & (b == 0)
    if (zero & ((r != 0) | (g != 0))).any():
        return _mismatch(got, np.asarray(ref), (zero & ((r != 0) | (g != 0))).reshape(got.shape), "zero bound, non-zero value")
    rest = ~free & ~zero
    err[rest] = (g[rest] - r[rest]) / np.maximum(b[rest] * 2.0 ** (-1 - frac), normal_min)
    bad = np.abs(err) > abs_bound
    if bad.any():
        return _mismatch(got, np.asarray(ref), bad.reshape(got.shape), f"error beyond {abs_bound} units of the bound")
    t = r.size
    if np.sum(err * err) > var_bound * t:
        return f"error variance {np.sum(err * err):.4g} beyond {var_bound * t:.4g}"
    if 3 <= int(info.get("s", -1)) <= 5 and abs(np.sum(err)) > np.sqrt(10 * var_bound * t):
        return f"error bias {np.sum(err):.4g} beyond {np.sqrt(10 * var_bound * t):.4g}"
    return ""


def compare(got: np.ndarray, want: np.ndarray, compliance: dict) -> str:
    """'' if ``got`` matches ``want`` under the compliance entry of desc.json, else the reason."""
    got = np.asarray(got)
    want = np.asarray(want)
    if got.shape != want.shape:
        return f"shape {list(got.shape)} != expected {list(want.shape)}"
    mode = str(compliance.get("mode", "EXACT"))
    if got.dtype.kind in "biu" or want.dtype.kind in "biu" or mode == "EXACT":
        if got.dtype.kind == "b" or want.dtype.kind == "b":
            g, w = got.astype(bool), want.astype(bool)
        elif got.dtype.kind in "iu" and want.dtype.kind in "iu":
            g, w = got.astype(np.int64), want.astype(np.int64)
            if got.dtype.itemsize == want.dtype.itemsize and got.dtype.kind != want.dtype.kind:
                g = got.view(want.dtype).astype(np.int64)  # unsigned 0.30 type vs signed 1.x storage
        else:
            g, w = got.astype(np.float64), want.astype(np.float64)
            same = (g == w) | (np.isnan(g) & np.isnan(w))
            if not same.all():
                return _mismatch(got, want, ~same)
            return ""
        bad = g != w
        return _mismatch(got, want, bad) if bad.any() else ""
    g, w = got.astype(np.float64), want.astype(np.float64)
    nan_g, nan_w = np.isnan(g), np.isnan(w)
    if (nan_g != nan_w).any():
        return _mismatch(got, want, nan_g != nan_w, "NaN positions differ")
    if mode == "ULP":
        ulp = float(compliance.get("ulp_info", {}).get("ulp", 0.5))
        tol = ulp * np.spacing(np.abs(want).astype(want.dtype if want.dtype.kind == "f" else np.float32)).astype(np.float64)
        bad = ~nan_w & ~(np.abs(g - w) <= tol) & ~(g == w)
    else:
        bad = ~nan_w & ~np.isclose(g, w, rtol=1e-3, atol=1e-6)
    return _mismatch(got, want, bad, f"outside the {mode} tolerance") if bad.any() else ""


def _mismatch(got: np.ndarray, want: np.ndarray, bad: np.ndarray, what: str = "values differ") -> str:
    idx = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.ndim else ()
    return (f"{what} at {int(bad.sum())}/{bad.size} elements; first at {list(idx)}: "
            f"got {got[idx]!r}, expected {want[idx]!r}")


# ------------------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """``nnkiln conformance DIR [--filter REGEX] [--no-skipped] [--verbose]``: exit 0 iff no case failed."""
    ap = argparse.ArgumentParser(prog="nnkiln conformance",
                                 description="Run TOSA 1.x generated conformance tests against nnkiln.")
    ap.add_argument("dir", help="directory of tosa_verif_build_tests cases (each with desc.json)")
    ap.add_argument("--filter", default=None, help="only cases whose relative path matches this regex")
    ap.add_argument("--no-skipped", action="store_true", help="do not list skipped cases")
    ap.add_argument("-v", "--verbose", action="store_true", help="also list passing cases")
    ap.add_argument("--quiet", action="store_true", help="no progress bar")
    args = ap.parse_args(list(argv) if argv is not None else None)
    if not os.path.isdir(args.dir):
        print(f"nnkiln conformance: {args.dir}: not a directory", file=sys.stderr)
        return 2
    summary = run_conformance(args.dir, name_filter=args.filter, quiet=args.quiet)
    missing = sum(r.reason == NO_EXPECTED for r in summary.results)
    if missing:
        print(f"note: {missing} positive cases have no expected results (neither the desc.json names nor "
              f"{RUNNER_RESULT.format(runner='<runner>')} files from tosa_verif_run_tests) and the TOSA reference "
              "model is not installed (pip install tosa-tools): they are skipped")
    print(summary.report(show_skipped=not args.no_skipped, show_passed=args.verbose))
    return 0 if summary.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
