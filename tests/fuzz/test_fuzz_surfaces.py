"""The fuzzer's CI budget (issue 21): a fixed number of deterministic cases per surface, each in a forked process
with a 4 GiB address-space limit and a 10 s timeout; the test fails on any crash (an exception other than
``NnkilnError`` escaping a public entry point, a signal, or ``nnkiln inspect`` accepting what ``load`` rejects),
hang or out-of-memory, and lists each failing case with the command that reproduces it.

``NNKILN_FUZZ_CASES`` and ``NNKILN_FUZZ_SEED`` change the budget and the seed (e.g. a nightly run with new seeds);
``python tests/fuzz/run.py`` runs more on demand."""

from __future__ import annotations

import os
from collections import Counter

import pytest
from fuzz_harness import FAILURES
from fuzz_surfaces import SURFACES, fuzz

CASES = int(os.environ.get("NNKILN_FUZZ_CASES", "300"))
SEED = int(os.environ.get("NNKILN_FUZZ_SEED", "2106"))


@pytest.mark.parametrize("surface", list(SURFACES))
def test_no_crash_hang_or_oom(surface: str) -> None:
    results = fuzz(surface, CASES, SEED)
    assert len(results) == CASES
    counts = Counter(r.outcome for r in results)
    bad = [r for r in results if r.outcome in FAILURES]
    lines = [f"case {r.index} {r.outcome} [{r.mutation}]: {r.detail}\n  reproduce: python tests/fuzz/run.py "
             f"--surface {surface} --seed {SEED} --first {r.index} --cases 1 --save /tmp/fuzz" for r in bad[:20]]
    assert not bad, f"{surface}: {dict(counts)}\n" + "\n".join(lines)
    assert counts["error"] > 0  # the mutators do reach the readers' checks
