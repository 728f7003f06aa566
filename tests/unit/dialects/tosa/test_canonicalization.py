"""Canonicalization cases the FileCheck test cannot express (tests/filecheck/transforms/generic/canonicalize.mlir
has the others): a same-type CAST (not a TOSA 0.30 mode, so no verified input has one) and the exact size
limit of constant folding."""

from __future__ import annotations

import numpy as np
import pytest

from nnkiln.dialects.tosa.canonicalization import CANONICAL_FOLD_ELEMENTS
from nnkiln.ir.context import make_context
from nnkiln.ir.elements import to_numpy
from nnkiln.ir.text import parse_module
from nnkiln.transforms.generic.canonicalize import Canonicalize

Q = "!quant.uniform<i8:f32, 0.5:3>"


def _ops(module) -> list[str]:  # noqa: ANN001
    return [op.name for op in module.walk() if op.name.startswith("tosa.")]


def test_a_cast_to_its_own_type_is_removed() -> None:
    m = parse_module("""func.func @main(%x: tensor<2xi8>) -> tensor<2xi8> {
  %a = tosa.cast %x : (tensor<2xi8>) -> tensor<2xi8>
  func.return %a : tensor<2xi8>
}""")
    Canonicalize().apply(make_context(), m)
    assert _ops(m) == []
    m.verify()


def test_a_cast_between_storage_and_quantized_type_is_kept() -> None:
    m = parse_module(f"""func.func @main(%x: tensor<2x{Q}>) -> tensor<2xi8> {{
  %a = tosa.cast %x : (tensor<2x{Q}>) -> tensor<2xi8>
  func.return %a : tensor<2xi8>
}}""")
    Canonicalize().apply(make_context(), m)
    assert _ops(m) == ["tosa.cast"]


@pytest.mark.parametrize("n,folded", [(CANONICAL_FOLD_ELEMENTS, True), (CANONICAL_FOLD_ELEMENTS + 1, False)])
def test_folding_stops_above_the_size_limit(n: int, folded: bool) -> None:
    assert CANONICAL_FOLD_ELEMENTS == 65536
    m = parse_module(f"""func.func @main() -> tensor<{n}xi32> {{
  %c = tosa.const {{values = dense<3> : tensor<1xi32>}} : tensor<1xi32>
  %t = tosa.tile %c {{multiples = array<i64: {n}>}} : (tensor<1xi32>) -> tensor<{n}xi32>
  func.return %t : tensor<{n}xi32>
}}""")
    Canonicalize().apply(make_context(), m)
    if folded:
        assert _ops(m) == ["tosa.const"]
        (const,) = [op for op in m.walk() if op.name == "tosa.const"]
        np.testing.assert_array_equal(to_numpy(const.values), np.full(n, 3, np.int32))
    else:
        assert _ops(m) == ["tosa.const", "tosa.tile"]
