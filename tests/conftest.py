"""Shared pytest fixtures for nnkiln's tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "support"))  # shared test helpers (tests/support), imported by name

from nnkiln.ir.context import make_context


@pytest.fixture
def ctx():
    """A fresh xDSL context with all nnkiln dialects loaded."""
    return make_context()


def pytest_collection_modifyitems(config, items):  # noqa: ANN001
    """Test modules are imported by basename (pytest's default 'prepend' mode, no __init__.py files):
    two test files with the same name would shadow each other, so refuse that early."""
    seen: dict[str, str] = {}
    for item in items:
        path = str(item.fspath)
        base = path.rsplit("/", 1)[-1]
        if seen.setdefault(base, path) != path:
            raise pytest.UsageError(f"two test modules named {base}: {seen[base]} and {path}; rename one")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Tests marked ``native`` need the native library: skipped when ``NNKILN_NO_NATIVE=1`` disables it on
    purpose, failed (never skipped) when it is missing, so that a broken build cannot pass as a green run."""
    if item.get_closest_marker("native") is None:
        return
    from nnkiln.runtime import native

    if native.disabled():
        pytest.skip("native kernels disabled by NNKILN_NO_NATIVE")
    if native.load() is None:
        pytest.fail(f"this test needs the native library, which is {native.status()}", pytrace=False)
