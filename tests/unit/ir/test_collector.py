"""``fewer_collections``: a larger young-generation threshold inside, the caller's restored after."""

from __future__ import annotations

import gc

import pytest

from nnkiln.ir.collector import YOUNG_THRESHOLD, fewer_collections


@pytest.fixture
def thresholds():  # noqa: ANN201
    old = gc.get_threshold()
    yield
    gc.set_threshold(*old)


def test_raised_inside_and_restored(thresholds) -> None:  # noqa: ANN001
    gc.set_threshold(700, 10, 10)
    with fewer_collections():
        assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
    assert gc.get_threshold() == (700, 10, 10)


def test_restored_after_an_error(thresholds) -> None:  # noqa: ANN001
    gc.set_threshold(700, 10, 10)
    with pytest.raises(RuntimeError), fewer_collections():
        raise RuntimeError("boom")
    assert gc.get_threshold() == (700, 10, 10)


@pytest.mark.parametrize("young", [0, 100_000])
def test_a_disabled_or_rarer_setting_is_left_alone(thresholds, young: int) -> None:  # noqa: ANN001
    gc.set_threshold(young, 10, 10)
    with fewer_collections():
        assert gc.get_threshold()[0] == young
    assert gc.get_threshold()[0] == young


def test_a_change_made_inside_is_kept(thresholds) -> None:  # noqa: ANN001
    gc.set_threshold(700, 10, 10)
    with fewer_collections():
        gc.set_threshold(1234, 10, 10)
    assert gc.get_threshold()[0] == 1234
