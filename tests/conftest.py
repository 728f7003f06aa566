"""Shared pytest fixtures for nnkiln's tests."""

from __future__ import annotations

import pytest

from nnkiln.ir.context import make_context


@pytest.fixture
def ctx():
    """A fresh xDSL context with all nnkiln dialects loaded."""
    return make_context()
