"""The compositional examples of the spec's Appendix D (tests/data/nnef/appendix_d.nnef, verbatim): layer
fragments, recurrent fragments, AlexNet, GoogleNet and ResNet-101. Expected shapes are computed by hand from
§4.3 (``x = floor((p + X + q - f_d) / s) + 1``; automatic padding gives ``ceil(X / s)``), channel counts from
the fragments' arguments. Each known defect of the printed text is checked to be reported (strict) or accepted
(lenient) as ``parse_document`` documents."""

from __future__ import annotations

import os
import re

import pytest

from nnkiln import NnefError
from nnkiln.frontends.nnef import expand, parse_document

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "data", "nnef")
HEAD = ("version 1.0;\nextension KHR_enable_fragment_definitions;\n"
        "extension KHR_enable_operator_expressions;\n")


def sections() -> dict[str, str]:
    with open(os.path.join(DATA, "appendix_d.nnef")) as f:
        parts = re.split(r"^# === (\w+)\n", f.read(), flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def document(*names: str) -> str:
    s = sections()
    return HEAD + "".join(s[n] for n in ("layers",) + names)


def test_alexnet_lrn_size_defect() -> None:
    """D.3.1 passes ``size = [1,5]`` to local_response_normalization of a rank-4 tensor: strict mode names the
    rule at the document's invocation (not at the line of ``box`` inside the standard library)."""
    text = document("alexnet")
    with pytest.raises(NnefError) as info:
        expand(parse_document(text))
    err = info.value
    assert "§4.3.2: 'size' must have 4 items, found 2" in str(err) and "local_response_normalization" in str(err)
    line = text.split("\n")[err.line - 1]
    assert "norm1 = local_response_normalization(relu1" in line and line.index("local_response") + 1 == err.column


def test_alexnet_lenient_shapes() -> None:
    g = expand(parse_document(document("alexnet"), lenient=True))
    expected = {  # conv1: (224 - 11) // 4 + 1 = 54; pool1 padding (0,1): (54 + 1 - 3) // 2 + 1 = 27
        "conv1": (1, 96, 54, 54), "norm1": (1, 96, 54, 54), "pool1": (1, 96, 27, 27), "conv2": (1, 256, 27, 27),
        "pool2": (1, 256, 13, 13), "conv3": (1, 384, 13, 13), "conv4": (1, 384, 13, 13),
        "conv5": (1, 256, 13, 13), "pool5": (1, 256, 6, 6), "conv6": (1, 4096, 1, 1), "conv7": (1, 4096, 1, 1),
        "output": (1, 1000, 1, 1)}
    for name, shape in expected.items():
        assert g.shape(name) == shape, name
    filters = {op.attribs["label"]: op.outputs["output"].shape for op in g.operations if op.name == "variable"}
    # grouped convolutions: planes = C / groups
    assert filters["conv2/filter"] == (256, 48, 5, 5) and filters["conv4/filter"] == (384, 192, 3, 3)
    assert filters["conv6/filter"] == (4096, 256, 6, 6) and filters["conv8/bias"] == (1, 1000)
    # the LRN window reaches box as [1, 5, 1, 1] (trailing singleton dimensions)
    assert any(op.name == "box" and op.attribs["size"] == [1, 5, 1, 1] for op in g.operations)


def test_googlenet_result_name_defect_and_shapes() -> None:
    text = document("inception", "googlenet")
    for lenient in (False, True):
        with pytest.raises(NnefError, match="graph output 'output' is never assigned"):
            parse_document(text, lenient=lenient)
    g = expand(parse_document(text.replace("logits = softmax(conv4)", "output = softmax(conv4)")))
    expected = {  # conv1 (224 + 5 - 7) // 2 + 1 = 112; pools with padding (0,1): (X + 1 - 3) // 2 + 1
        "conv1": (1, 64, 112, 112), "pool1": (1, 64, 56, 56), "conv3": (1, 192, 56, 56), "pool2": (1, 192, 28, 28),
        "incept1": (1, 64 + 128 + 32 + 32, 28, 28), "incept2": (1, 128 + 192 + 96 + 64, 28, 28),
        "pool3": (1, 480, 14, 14), "incept7": (1, 256 + 320 + 128 + 128, 14, 14), "pool4": (1, 832, 7, 7),
        "incept9": (1, 384 + 384 + 128 + 128, 7, 7),
        "pool5": (1, 1024, 7, 7),  # avg_pool_layer(size = [7,7]) with automatic padding keeps 7x7
        "output": (1, 1000, 7, 7)}
    for name, shape in expected.items():
        assert g.shape(name) == shape, name


def test_resnet101_needs_lenient_and_has_800_variables() -> None:
    text = document("resnet_fragments", "resnet")
    with pytest.raises(NnefError, match=r"§3\.2") as info:
        parse_document(text)
    assert "(integer,integer,integer)[[]]" in text.split("\n")[info.value.line - 1]
    g = expand(parse_document(text, lenient=True))
    # conv1 stride 2 (automatic padding): 112; pool1 padding (0,1): 56; blocks 1-3 end with stride 2: 7
    for name, shape in {"conv1": (1, 64, 112, 112), "pool1": (1, 64, 56, 56), "blocks": (1, 2048, 7, 7),
                        "pooled": (1, 2048, 1, 1), "logits": (1, 1000, 1, 1), "output": (1, 1000, 1, 1)}.items():
        assert g.shape(name) == shape, name
    labels = [op.attribs["label"] for op in g.operations if op.name == "variable"]
    # 3 + 4 + 23 + 3 = 33 units of 4 conv layers, plus conv1: filter, bias and 4 batch-norm tensors each;
    # logits: filter and bias only (normalization = false)
    assert len(labels) == len(set(labels)) == (33 * 4 + 1) * 6 + 2
    assert "block3/unit23/conv2/norm/variance" in labels and "block3/unit24/conv1/filter" not in labels


@pytest.mark.parametrize("name,filters", [("lstm", "fioz"), ("gru", "zrs")])
def test_recurrent_fragments(name: str, filters: str) -> None:
    graph = (f"graph R( x ) -> ( y )\n{{\n    x = external(shape = [2, 5]);\n"
             f"    y = {name}(x, channels = 3, scope = 'cell');\n}}\n")
    g = expand(parse_document(HEAD + sections()["layers"] + sections()[name] + graph))
    assert g.shape("y") == (2, 3)
    shapes = {op.attribs["label"]: op.outputs["output"].shape for op in g.operations if op.name == "variable"}
    for k in filters:
        assert shapes[f"cell/{k}/filter"] == (3, 8) and shapes[f"cell/{k}/bias"] == (1, 3)
    assert shapes["cell/h"] == (2, 3)
    updates = [op for op in g.operations if op.name == "update"]
    assert len(updates) == (2 if name == "lstm" else 1)


def test_simple_recurrent_network_swapped_linear_is_invalid() -> None:
    """D.2 calls ``linear(W, x)`` with W [n, m] and x [k, m]: [n, k] does not broadcast with the bias [1, n]."""
    graph = "graph R( x ) -> ( y )\n{\n    x = external(shape = [2, 5]);\n    y = simple_recurrent_network(x, n = 3);\n}\n"
    text = HEAD + sections()["layers"] + sections()["simple_recurrent_network"] + graph
    for lenient in (False, True):
        with pytest.raises(NnefError, match=r"§4\.2\.2: shapes \[3, 2\], \[1, 3\] do not broadcast"):
            expand(parse_document(text, lenient=lenient))
