"""A memo that lives for one verification walk (``nnkiln.ir.verify.verify_op``).

The IR does not change while a walk verifies it, so a verifier that needs a fact about its block (the ``rt``
dialect's barrier declarations: one scan of the block instead of one per task) may compute it once per walk.
Outside a walk (``op.verify()`` called directly) there is no memo and the fact is computed each time.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import Any

_MEMO: list[dict[Hashable, Any]] = []


@contextmanager
def walk_memo() -> Iterator[None]:
    """Open a memo for the duration of one verification walk."""
    _MEMO.append({})
    try:
        yield
    finally:
        _MEMO.pop()


def memoized(key: Hashable, compute: Callable[[], Any]) -> Any:
    """``compute()``, once per key within the current walk (every time outside one)."""
    if not _MEMO:
        return compute()
    memo = _MEMO[-1]
    if key not in memo:
        memo[key] = compute()
    return memo[key]
