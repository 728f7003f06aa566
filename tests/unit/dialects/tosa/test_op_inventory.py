"""The dialect has exactly the 69 operators of TOSA 0.30, and the lit files exercise every one."""

from __future__ import annotations

import re
from pathlib import Path

from nnkiln.dialects.tosa import OPS

FILECHECK = Path(__file__).resolve().parents[3] / "filecheck" / "dialects" / "tosa"

# Spec §2.3-§2.16, in the spec's order (inventory-tosa.md §1.2).
SPEC_OPERATORS = """
ARGMAX AVG_POOL2D CONV2D CONV3D DEPTHWISE_CONV2D FFT2D FULLY_CONNECTED MATMUL MAX_POOL2D RFFT2D TRANSPOSE_CONV2D
CLAMP SIGMOID TANH
ADD ARITHMETIC_RIGHT_SHIFT BITWISE_AND BITWISE_OR BITWISE_XOR INTDIV LOGICAL_AND LOGICAL_LEFT_SHIFT
LOGICAL_RIGHT_SHIFT LOGICAL_OR LOGICAL_XOR MAXIMUM MINIMUM MUL POW SUB TABLE
ABS BITWISE_NOT CEIL CLZ EXP FLOOR LOG LOGICAL_NOT NEGATE RECIPROCAL RSQRT
SELECT
EQUAL GREATER GREATER_EQUAL
REDUCE_ALL REDUCE_ANY REDUCE_MAX REDUCE_MIN REDUCE_PRODUCT REDUCE_SUM
CONCAT PAD RESHAPE REVERSE SLICE TILE TRANSPOSE
GATHER SCATTER
RESIZE
CAST RESCALE
CONST IDENTITY
CUSTOM
COND_IF WHILE_LOOP
""".split()


def test_the_dialect_has_the_69_spec_operators():
    assert len(SPEC_OPERATORS) == 69
    names = {op.name for op in OPS} - {"tosa.yield"}
    assert names == {f"tosa.{n.lower()}" for n in SPEC_OPERATORS}


def test_every_operator_round_trips_in_ops_mlir():
    text = (FILECHECK / "ops.mlir").read_text()
    missing = [n for n in SPEC_OPERATORS if not re.search(rf'(tosa\.{n.lower()}\b|"tosa\.{n.lower()}")', text)]
    assert not missing


def test_every_operator_has_an_invalid_case():
    text = (FILECHECK / "ops_invalid.mlir").read_text()
    chunks = [c for c in text.split("// -----") if "expected-error" in c]
    covered = set()
    for chunk in chunks:
        covered.update(re.findall(r"tosa\.([a-z0-9_]+)", chunk))
    missing = [n for n in SPEC_OPERATORS if n.lower() not in covered]
    assert not missing
