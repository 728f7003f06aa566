"""TFLite WHILE and IF (subgraphs by index) on models built in the test (``tflite_builder.build_graphs``),
against a Python implementation, through the reference interpreter and the compiled program."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import nnkiln
import nnkiln.reference

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tflite_builder import build_graphs  # noqa: E402

F32, I32 = np.float32, np.int32


def _both(path: Path, feeds: dict[str, np.ndarray]) -> list[dict[str, np.ndarray]]:
    module = nnkiln.load(str(path))
    return [{k: np.asarray(v) for k, v in r.items()}
            for r in (nnkiln.reference.run(module, feeds), nnkiln.compile(module).run(feeds))]


def _while_model() -> bytes:
    """(i, n, acc, x) → WHILE i < n: (i + 1, n, acc + x, x); outputs the final i and acc."""
    loop_t = [("i", [], I32, None), ("n", [], I32, None), ("acc", [2, 3], F32, None), ("x", [2, 3], F32, None)]
    main = (loop_t + [("i_out", [], I32, None), ("n_out", [], I32, None), ("acc_out", [2, 3], F32, None),
                      ("x_out", [2, 3], F32, None)],
            [("WHILE", [0, 1, 2, 3], [4, 5, 6, 7], ("WhileOptions", {"CondSubgraphIndex": 1,
                                                                   "BodySubgraphIndex": 2}))],
            [0, 1, 2, 3], [4, 6])
    cond = (loop_t + [("c", [], np.bool_, None)], [("LESS", [0, 1], [4], None)], [0, 1, 2, 3], [4])
    body = (loop_t + [("one", [], I32, np.array(1, I32)), ("i1", [], I32, None), ("acc1", [2, 3], F32, None)],
            [("ADD", [0, 4], [5], None), ("ADD", [2, 3], [6], None)], [0, 1, 2, 3], [5, 1, 6, 3])
    return build_graphs([main, cond, body])


@pytest.mark.parametrize("i0,n", [(0, 5), (2, 3), (4, 1)])
def test_while_counter(tmp_path: Path, i0: int, n: int) -> None:
    path = tmp_path / "while.tflite"
    path.write_bytes(_while_model())
    x = np.random.default_rng(0).uniform(-1, 1, (2, 3)).astype(F32)
    acc0 = np.full((2, 3), 0.5, F32)
    i, acc = i0, acc0.copy()
    while i < n:
        i, acc = i + 1, acc + x
    feeds = {"i": np.array(i0, I32), "n": np.array(n, I32), "acc": acc0, "x": x}
    for out in _both(path, feeds):
        assert out["i_out"].dtype == np.int32 and out["i_out"].shape == () and int(out["i_out"]) == i
        assert out["acc_out"].dtype == F32 and out["acc_out"].shape == (2, 3)
        np.testing.assert_allclose(out["acc_out"], acc, rtol=1e-6, atol=1e-6)


def _if_model() -> bytes:
    """(c, a, b) → IF c: a + b else a * b."""
    args = [("a", [2, 2], F32, None), ("b", [2, 2], F32, None)]
    main = ([("c", [1], np.bool_, None)] + args + [("y", [2, 2], F32, None)],
            [("IF", [0, 1, 2], [3], ("IfOptions", {"ThenSubgraphIndex": 1, "ElseSubgraphIndex": 2}))],
            [0, 1, 2], [3])
    then = (args + [("s", [2, 2], F32, None)], [("ADD", [0, 1], [2], None)], [0, 1], [2])
    other = (args + [("p", [2, 2], F32, None)], [("MUL", [0, 1], [2], None)], [0, 1], [2])
    return build_graphs([main, then, other])


@pytest.mark.parametrize("c", [True, False])
def test_if(tmp_path: Path, c: bool) -> None:
    path = tmp_path / "if.tflite"
    path.write_bytes(_if_model())
    rng = np.random.default_rng(1)
    a, b = rng.uniform(-2, 2, (2, 2)).astype(F32), rng.uniform(-2, 2, (2, 2)).astype(F32)
    want = a + b if c else a * b
    for out in _both(path, {"c": np.array([c]), "a": a, "b": b}):
        assert out["y"].dtype == F32 and out["y"].shape == (2, 2)
        np.testing.assert_allclose(out["y"], want, rtol=1e-6, atol=1e-6)


def test_while_recursion_and_type_change_are_errors(tmp_path: Path) -> None:
    t = [("x", [1], F32, None), ("y", [1], F32, None)]
    main = (t, [("WHILE", [0], [1], ("WhileOptions", {"CondSubgraphIndex": 1, "BodySubgraphIndex": 0}))], [0], [1])
    cond = (t[:1] + [("c", [1], np.bool_, None)], [("LESS", [0, 0], [1], None)], [0], [1])
    path = tmp_path / "rec.tflite"
    path.write_bytes(build_graphs([main, cond]))
    with pytest.raises(nnkiln.errors.FrontendError, match="itself"):
        nnkiln.load(str(path))
    body = ([("x", [1], F32, None), ("z", [1], I32, None)], [("CAST", [0], [1], None)], [0], [1])
    main = (t, [("WHILE", [0], [1], ("WhileOptions", {"CondSubgraphIndex": 1, "BodySubgraphIndex": 2}))], [0], [1])
    path.write_bytes(build_graphs([main, cond, body]))
    with pytest.raises(nnkiln.errors.FrontendError, match="loop-carried"):
        nnkiln.load(str(path))
