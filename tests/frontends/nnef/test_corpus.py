"""Valid and invalid NNEF documents; each invalid one must fail naming its rule (spec §3, §4, §6)."""

from __future__ import annotations

import pytest
from nnef_corpus import INVALID, STAGE3, VALID

from nnkiln import NnefError
from nnkiln.frontends.nnef import expand, parse_document


@pytest.mark.parametrize("name,text", VALID, ids=[v[0] for v in VALID])
def test_valid(name: str, text: str) -> None:
    expand(parse_document(text))


@pytest.mark.parametrize("name,text,rule", INVALID, ids=[v[0] for v in INVALID])
def test_invalid(name: str, text: str, rule: str) -> None:
    with pytest.raises(NnefError) as info:
        doc = parse_document(text)
        assert name in STAGE3, "accepted by parse_document, but this rule belongs to stages 1-2"
        expand(doc)
    err = info.value
    assert rule in str(err.args[0])
    assert str(err.args[0]).startswith("§")
    assert err.line > 0 and err.column > 0
    # the location is in the document even when the rule fails inside a standard fragment's body
    assert err.file == "graph.nnef" and err.line <= text.count("\n") + 1
    assert err.column <= len(text.split("\n")[err.line - 1]) + 1
