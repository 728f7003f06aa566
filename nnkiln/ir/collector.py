"""``fewer_collections()``: Python's cyclic garbage collector runs less often while IR is built.

Importing and compiling a model allocate hundreds of thousands of small objects (ops, values, uses,
attributes) and free few of them, so the collector's default generation-0 threshold (700 allocations)
makes it walk a large, growing heap again and again for nothing (hundreds of collections in a BERT-base
compile: bench/RESULTS.md). Inside the context the threshold is 50,000: the same cycles are still collected,
in a few collections. Thresholds set by the user before are restored, and a larger one is kept.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_THRESHOLD = 50_000


@contextmanager
def fewer_collections() -> Iterator[None]:
    old = gc.get_threshold()
    if old[0] == 0 or old[0] >= YOUNG_THRESHOLD:  # collection disabled by threshold, or already rarer
        yield
        return
    gc.set_threshold(YOUNG_THRESHOLD, *old[1:])
    try:
        yield
    finally:
        if gc.get_threshold()[0] == YOUNG_THRESHOLD:  # nobody changed it meanwhile
            gc.set_threshold(*old)


__all__ = ["YOUNG_THRESHOLD", "fewer_collections"]
