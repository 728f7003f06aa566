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


def test_an_onnx_input_and_a_compiled_arena_are_held_to_the_budget(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """Found by the fuzzer (seed 9001, onnx case 2817): an input dimension edited to 100000 compiled a 4.9 GB arena,
    which a 4 GiB process could not allocate. Now the input is refused at import, and a program whose arena is over
    the budget is refused before the arena is allocated (compile and load alike)."""
    import numpy as np
    import onnx
    from onnx import TensorProto as TP
    from onnx import helper as oh

    import nnkiln
    from nnkiln.errors import FrontendError
    from nnkiln.limits import LimitError

    def save(shape: list[int]) -> str:
        nodes = [oh.make_node("Relu", ["x"], ["r"]), oh.make_node("Neg", ["r"], ["n"]),
                 oh.make_node("Sub", ["r", "n"], ["y"])]  # r and n live together: an arena of twice the input
        g = oh.make_graph(nodes, "g",
                          [oh.make_tensor_value_info("x", TP.FLOAT, shape)], [oh.make_tensor_value_info("y", TP.FLOAT, shape)])
        path = str(tmp_path / f"m{len(shape)}.onnx")
        onnx.save(oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)]), path)
        return path

    monkeypatch.setenv("NNKILN_MAX_TENSOR_BYTES", "64K")
    with pytest.raises(FrontendError, match=r"m4.onnx: input 'x': 131072 bytes .* exceed the tensor budget of 65536"):
        nnkiln.load(save([8, 4, 32, 32]))
    module = nnkiln.load(save([16, 1024]))  # 64 KiB: the input fits, the arena (r and n) does not
    with pytest.raises(LimitError, match="the program's arena"):
        nnkiln.compile(module, threads=1)
    monkeypatch.setenv("NNKILN_MAX_TENSOR_BYTES", "1M")
    x = np.ones((16, 1024), np.float32)
    np.testing.assert_array_equal(nnkiln.compile(module, threads=1).run({"x": x})["y"], 2 * x)
