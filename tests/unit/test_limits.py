"""``nnkiln.limits``: the tensor budget (``NNKILN_MAX_TENSOR_BYTES``), TOSA's element limit and the nesting bound."""

from __future__ import annotations

import pytest

from nnkiln.errors import InputError
from nnkiln.limits import (
    DEFAULT_MAX_TENSOR_BYTES,
    MAX_ELEMENTS,
    LimitError,
    check_nesting,
    check_tensor,
    max_tensor_bytes,
    nesting_depth,
)


def test_the_budget_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NNKILN_MAX_TENSOR_BYTES", raising=False)
    assert max_tensor_bytes() == DEFAULT_MAX_TENSOR_BYTES == 1 << 30
    for text, value in (("4096", 4096), ("512M", 512 << 20), ("2g", 2 << 30), ("1T", 1 << 40)):
        monkeypatch.setenv("NNKILN_MAX_TENSOR_BYTES", text)
        assert max_tensor_bytes() == value
    for bad in ("-1", "0", "lots", "1.5G"):
        monkeypatch.setenv("NNKILN_MAX_TENSOR_BYTES", bad)
        with pytest.raises(InputError, match="NNKILN_MAX_TENSOR_BYTES"):
            max_tensor_bytes()


def test_check_tensor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NNKILN_MAX_TENSOR_BYTES", "1024")
    assert check_tensor([16, 16], 4, "f.onnx: w") == 256
    with pytest.raises(LimitError, match=r"f.onnx: w: 1028 bytes \(shape \[257, 1\].*budget of 1024 bytes"):
        check_tensor([257, 1], 4, "f.onnx: w")
    monkeypatch.setenv("NNKILN_MAX_TENSOR_BYTES", "1T")
    with pytest.raises(LimitError, match="over TOSA's limit"):
        check_tensor([MAX_ELEMENTS + 1], 0.5, "t")
    with pytest.raises(LimitError, match="negative dimension"):
        check_tensor([2, -1], 1, "t")
    assert check_tensor([], 4, "scalar") == 1


def test_nesting() -> None:
    assert nesting_depth("f(a, [b, <c>]) -> (d)")[0] == 3
    assert nesting_depth('x = "(((((" // ((((((\n(y)')[0] == 1  # strings and comments do not count
    assert nesting_depth("# ((((\n(", hash_comments=True)[0] == 1
    check_nesting("(" * 64 + ")" * 64, "ok.mlir")
    with pytest.raises(LimitError, match=r"deep.mlir:2:65: brackets nested more than 64 deep"):
        check_nesting("\n" + "[" * 100, "deep.mlir")
