"""``common.quant.softmax_i8`` (integer softmax of int8 codes) against the exact softmax in float64.

The oracle is the definition: ``p = exp(r - max r) / sum exp(r - max r)`` with ``r = (q - zp)·s_in``, then the
output code ``p / s_out + z_out``. A correct integer implementation lands within half a step of that real code
(plus its own small approximation error); we require 0.51 steps, i.e. the correctly rounded code or, at a
near-tie, its neighbour. Every graph runs on the reference interpreter; some also compiled for the cpu (same
codes required).
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType

import nnkiln
import nnkiln.reference
from nnkiln.dialects.tosa.base import Kind, element_type
from nnkiln.frontends.common import quant as cq
from nnkiln.frontends.common.graph import GraphBuilder


def _module(shape: tuple[int, ...], s_in: float, axes: list[int], s_out: float, z_out: int):  # noqa: ANN202
    g = GraphBuilder("softmax", [("x", TensorType(element_type(Kind.I8), list(shape)))])
    return g.finish([("y", cq.softmax_i8(g, g.block.args[0], s_in, axes, s_out, z_out))])


def _exact_codes(x: np.ndarray, s_in: float, axes: list[int], s_out: float, z_out: int) -> np.ndarray:
    r = x.astype(np.float64) * s_in
    r -= r.max(axis=tuple(axes), keepdims=True)
    p = np.exp(r)
    p /= p.sum(axis=tuple(axes), keepdims=True)
    return np.clip(p / s_out + z_out, -128, 127)


def _check(x: np.ndarray, s_in: float, axes: list[int], s_out: float = 1 / 256, z_out: int = -128,
           compiled: bool = False) -> float:
    module = _module(x.shape, s_in, axes, s_out, z_out)
    ours = nnkiln.reference.run(module, {"x": x})["y"]
    assert ours.dtype == np.int8
    if compiled:
        np.testing.assert_array_equal(nnkiln.compile(module).run({"x": x})["y"], ours)
    err = float(np.abs(ours.astype(np.float64) - _exact_codes(x, s_in, axes, s_out, z_out)).max())
    assert err <= 0.51, err
    return err


@pytest.mark.parametrize("seed", range(6))
def test_random_rows_are_correctly_rounded(seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape = (3, int(rng.integers(1, 1500)))
    x = rng.integers(-128, 128, shape).astype(np.int8)
    _check(x, float(rng.uniform(0.005, 0.4)), [1], compiled=seed < 2)


@pytest.mark.parametrize("length", [100, 1000, 5000, 40000])
@pytest.mark.parametrize("gap", [38, 41, 44, 47])
def test_one_peak_over_many_tiny_values(length: int, gap: int) -> None:
    """The case that needs the guard bits: thousands of values whose exp is about one unit of the exp values'
    last place. Summing rounded exp values instead put the peak's code 3.3 steps off at 5000 (measured)."""
    x = np.full((1, length), 127 - gap, np.int8)
    x[0, 0] = 127
    _check(x, 0.3, [1])


def test_several_axes_rank_4_and_other_output_grids() -> None:
    rng = np.random.default_rng(7)
    x = rng.integers(-128, 128, (2, 3, 5, 7)).astype(np.int8)
    _check(x, 0.1, [1, 3], compiled=True)
    _check(x, 0.05, [2], s_out=1 / 128, z_out=0)  # half the range: probabilities above 127/128 saturate
    _check(x, 0.2, [-1], s_out=0.003, z_out=-100)


def test_uniform_rows_and_single_element_axes() -> None:
    _check(np.zeros((2, 10), np.int8), 0.1, [1])  # 1/10 each
    _check(np.full((4, 1), -128, np.int8), 0.1, [1])  # softmax of one element is 1 (code 127 saturates)


def test_axes_too_long_are_refused() -> None:
    assert cq.softmax_fraction_bits(1 << 18) == (12, 12)
    assert cq.softmax_fraction_bits((1 << 18) + 1) is None
    with pytest.raises(cq.QuantError, match="more than 2"):
        _module((1, (1 << 18) + 1), 0.1, [1], 1 / 256, -128)
