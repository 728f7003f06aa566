"""conv.c's batched MATMUL of two run-time operands (``kernels.conv.native_bmm``): strided operands (transposed
views, as attention passes them), edges of tiles and panels, thread counts, the BLAS fallback for rows whose
stride is not a multiple of k, and its bound form inside a chain."""

from __future__ import annotations

import numpy as np
import pytest

from nnkiln.runtime.kernels import conv
from nnkiln.runtime.kernels.bound import Chain

pytestmark = pytest.mark.native


@pytest.fixture(autouse=True)
def _wide_tiles() -> None:
    """The kernel is used where conv.c has its AVX-512 tiles: a build without them has nothing to test here."""
    if not conv.native_lib().nk_wide_tiles():
        pytest.skip("conv.c built without AVX-512 tiles")
RNG = np.random.default_rng(11)


def _expected(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.matmul(x.astype(np.float64), y.astype(np.float64))


def _check(got: np.ndarray, x: np.ndarray, y: np.ndarray) -> None:
    exp = _expected(x, y)
    scale = np.abs(x).astype(np.float64) @ np.abs(y).astype(np.float64)  # bound of the rounding error's size
    assert np.all(np.abs(got - exp) <= 1e-5 * scale + 1e-30)


@pytest.mark.parametrize("batch,m,k,n", [(1, 1, 1, 1), (2, 7, 5, 17), (3, 13, 64, 33), (2, 128, 64, 128),
                                         (4, 6, 300, 48), (1, 50, 16, 16)])
@pytest.mark.parametrize("threads", [1, 2])
def test_contiguous_and_transposed_operands(batch: int, m: int, k: int, n: int, threads: int,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(conv, "kernel_threads", lambda: threads)
    fn = conv.native_bmm(batch, m, k, n)
    assert fn is not None
    cases = [
        (RNG.standard_normal((batch, m, k)), RNG.standard_normal((batch, k, n))),  # contiguous
        (RNG.standard_normal((m, batch, k)).transpose(1, 0, 2), RNG.standard_normal((n, batch, k)).transpose(1, 2, 0)),
        (RNG.standard_normal((batch, m, k)), RNG.standard_normal((k, batch, n)).transpose(1, 0, 2)),
    ]
    for x, y in cases:
        x, y = x.astype(np.float32), y.astype(np.float32)
        out = np.full((batch, m, n), np.nan, np.float32)
        fn([x, y], [out], ())
        _check(out, x, y)


def test_row_stride_not_a_multiple_of_k_falls_back_to_blas() -> None:
    fn = conv.native_bmm(2, 9, 6, 20)
    base = RNG.standard_normal((2, 9, 7)).astype(np.float32)
    x = base[:, :, :6]  # rows 7 floats apart
    y = RNG.standard_normal((2, 6, 20)).astype(np.float32)
    assert fn.bind([x, y], [np.empty((2, 9, 20), np.float32)], ()) is None  # not bindable: run-time path only
    out = np.empty((2, 9, 20), np.float32)
    fn([x, y], [out], ())
    _check(out, x, y)


def test_bound_call_in_a_chain_matches_the_direct_call() -> None:
    x = RNG.standard_normal((3, 40, 32)).astype(np.float32)
    y = RNG.standard_normal((3, 32, 24)).astype(np.float32)
    y2 = RNG.standard_normal((3, 24, 16)).astype(np.float32)
    mid, out = np.empty((3, 40, 24), np.float32), np.empty((3, 40, 16), np.float32)
    f1, f2 = conv.native_bmm(3, 40, 32, 24), conv.native_bmm(3, 40, 24, 16)
    chain = Chain([f1.bind([x, y], [mid], ()), f2.bind([mid, y2], [out], ())], [0, 1])
    assert chain.scratch.size >= 3 * 2 * 32 * 16  # the larger packed right operand
    chain([])
    direct_mid, direct = np.empty_like(mid), np.empty_like(out)
    f1([x, y], [direct_mid], ())
    f2([direct_mid, y2], [direct], ())
    np.testing.assert_array_equal(out, direct)
    _check(mid, x, y)
