"""AlexNet of Appendix C.1, expansion, lenient mode, containers, graph.quant and check_main."""

from __future__ import annotations

import io
import os
import tarfile

import numpy as np
import pytest

from nnkiln import NnefError
from nnkiln.frontends.nnef import (
    check_main,
    expand,
    load_container,
    parse_document,
    parse_quant,
    standard_fragments,
    write_tensor,
)

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "data", "nnef")
ALEXNET = os.path.join(DATA, "alexnet.nnef")


def alexnet_text() -> str:
    with open(ALEXNET) as f:
        return f.read()


def test_standard_library_has_96_operations() -> None:
    from nnkiln.frontends.nnef.document import V105_ADDITIONS

    ops = [n for n in standard_fragments() if not n.startswith("_") and n not in V105_ADDITIONS]
    assert len(ops) == 96
    prims = [n for n in ops if standard_fragments()[n].body is None]
    assert len(prims) == 51   # §4 group counts (inventory §1.8)
    assert len(V105_ADDITIONS) == 23 and V105_ADDITIONS <= set(standard_fragments())  # NNEF 1.0.5 additions


def test_alexnet_shapes() -> None:
    g = expand(parse_document(alexnet_text()))
    # hand computation with §4.3: x = floor((p + X + q - fd) / s) + 1
    expected = {
        "conv1": (1, 64, 54, 54), "pool1": (1, 64, 26, 26), "conv2": (1, 192, 26, 26), "pool2": (1, 192, 12, 12),
        "conv3": (1, 384, 12, 12), "conv4": (1, 384, 12, 12), "conv5": (1, 256, 12, 12), "pool3": (1, 256, 5, 5),
        "conv6": (1, 4096, 1, 1), "conv7": (1, 4096, 1, 1), "conv8": (1, 1000, 1, 1), "output": (1, 1000, 1, 1),
    }
    for name, shape in expected.items():
        assert g.shape(name) == shape, name
    assert {op.name for op in g.operations} <= {n for n, f in standard_fragments().items() if f.body is None}


def test_alexnet_keep_compounds() -> None:
    g = expand(parse_document(alexnet_text()), keep={"max_pool", "relu", "softmax"})
    names = [op.name for op in g.operations]
    assert names.count("max_pool") == 3 and names.count("relu") == 7 and names.count("softmax") == 1
    pool = next(op for op in g.operations if op.name == "max_pool")
    assert pool.attribs["border"] == "ignore" and pool.attribs["size"] == [1, 1, 3, 3]
    assert pool.outputs["output"].name == "pool1"


def test_expansion_evaluates_with_actual_values() -> None:
    doc = parse_document("version 1.0;\ngraph g(x) -> (y) { x = external(shape = [2, 3]);"
                         " y = unsqueeze(x, axes = [0, 3]); }")
    g = expand(doc)
    # _unsqueeze_shape inserts 1 at 0 then at 3: [2,3] -> [1,2,3] -> [1,2,3,1]
    assert g.shape("y") == (1, 2, 3, 1)
    assert [op.name for op in g.operations] == ["external", "reshape"]
    assert g.operations[1].attribs["shape"] == [1, 2, 3, 1]


def test_add_n_recursion_and_auto_padding() -> None:
    text = ("version 1.0;\ngraph g(a, b) -> (y, p) { a = external(shape = [1, 1, 5, 5]);"
            " b = external(shape = [1, 1, 5, 5]); y = add_n([a, b]);"
            " p = avg_pool(a, size = [1, 1, 3, 3], stride = [1, 1, 2, 2]); }")
    g = expand(parse_document(text))
    assert [op.name for op in g.operations].count("add") == 2   # a + (b + 0.0)
    assert g.shape("p") == (1, 1, 3, 3)                          # ceil(5 / 2) = 3 (automatic padding)


LENIENT_DOCS = [
    "version 1.0;\ngraph g(x) -> (y) { x = external(shape = [1, 1, 4]); y = debbox(x, size = [1, 1, 2]); }",
    "version 1.0;\ngraph g(x) -> (y) { x = external(shape = [2, 3]); w = external(shape = [4, 3]);"
    " y = matmul(x, w, trB = true); }".replace("graph g(x)", "graph g(x, w)"),
    "version 1.0;\ngraph g(x) -> (y) { x = external(shape = [1]); c = constant(shape = [1], value = [1]);"
    " y = copy(c); }".replace("graph g(x) -> (y)", "graph g(x) -> (y)"),
    "version 1.0;\ngraph g(x) -> (y) { x = external(shape = [1, 2]); y = leaky_relu(x, alpha = 1); }",
    "version 1.0;\nextension KHR_enable_fragment_definitions;\n"
    "fragment f( a: tensor<scalar>, p: (integer, integer)[[]] ) -> ( b: tensor<scalar> ) { b = copy(a); }\n"
    "graph g(x) -> (y) { x = external(shape = [1]); y = f(x, p = [[(1, 2)]]); }",
]


@pytest.mark.parametrize("text", LENIENT_DOCS)
def test_lenient_accepts_spec_defects(text: str) -> None:
    with pytest.raises(NnefError):
        expand(parse_document(text))
    expand(parse_document(text, lenient=True))


def test_lenient_generic_deduction() -> None:
    g = expand(parse_document(LENIENT_DOCS[2], lenient=True))
    assert g.tensors["c"].dtype.value == "integer"


# -- containers -------------------------------------------------------------------------------------

GRAPH = ("version 1.0;\ngraph g(x) -> (y) { x = external(shape = [1, 2]);"
         " w = variable(shape = [1, 2], label = 'layer/w'); y = add(x, w); }\n")


def make_folder(tmp_path, quant: str | None = None, w: np.ndarray | None = None):  # noqa: ANN001, ANN201
    (tmp_path / "layer").mkdir()
    (tmp_path / "graph.nnef").write_text(GRAPH)
    (tmp_path / "layer" / "w.dat").write_bytes(write_tensor(np.array([[1.5, -2.0]], np.float32) if w is None else w))
    if quant is not None:
        (tmp_path / "graph.quant").write_text(quant)
    return tmp_path


def test_folder_container(tmp_path) -> None:  # noqa: ANN001
    quant = ('"x": linear_quantize(min = -1.0, max = 1.0, bits = 8);\n'
             "'w': logarithmic_quantize(max = [1.0, 2.0], bits = 4);\n")
    c = load_container(str(make_folder(tmp_path, quant)))
    assert c.array("layer/w").tolist() == [[1.5, -2.0]]
    assert c.quantization["x"].args == {"min": -1.0, "max": 1.0, "bits": 8}
    assert c.quantization["w"].args["max"] == [1.0, 2.0]   # per channel
    assert check_main(str(tmp_path)) == 0


def test_a_leading_slash_in_a_label_is_relative_to_the_container(tmp_path) -> None:  # noqa: ANN001
    """nnef-tools keeps ONNX names such as '/layer/w' as labels and writes layer/w.dat (Khronos strips the '/')."""
    import nnkiln

    make_folder(tmp_path)
    (tmp_path / "graph.nnef").write_text(GRAPH.replace("'layer/w'", "'/layer/w'"))
    assert load_container(str(tmp_path)).array("/layer/w").tolist() == [[1.5, -2.0]]
    module = nnkiln.load(str(tmp_path))
    y = nnkiln.reference.run(module, {"x": np.array([[1.0, 1.0]], np.float32)})
    assert next(iter(y.values())).tolist() == [[2.5, -1.0]]


def test_dat_shape_conflict(tmp_path, capsys) -> None:  # noqa: ANN001
    make_folder(tmp_path, w=np.zeros((2, 1), np.float32))
    with pytest.raises(NnefError, match="stage 4"):
        load_container(str(tmp_path))
    assert check_main(str(tmp_path)) == 1
    assert "w.dat: error: §6 stage 4" in capsys.readouterr().err


def tar_bytes(members: list[tarfile.TarInfo], payloads: list[bytes | None]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for m, p in zip(members, payloads):
            if p is not None:
                m.size = len(p)
            tar.addfile(m, io.BytesIO(p) if p is not None else None)
    return buf.getvalue()


def test_tgz_container(tmp_path) -> None:  # noqa: ANN001
    data = tar_bytes([tarfile.TarInfo("model/graph.nnef"), tarfile.TarInfo("model/layer/w.dat")],
                     [GRAPH.encode(), write_tensor(np.array([[1.0, 2.0]], np.float32))])
    (tmp_path / "m.tgz").write_bytes(data)
    c = load_container(str(tmp_path / "m.tgz"))
    assert c.array("layer/w").tolist() == [[1.0, 2.0]]


@pytest.mark.parametrize("bad,rule", [("../evil.dat", "escapes"), ("/abs/graph.quant", "escapes"),
                                      ("link", "link or special file")])
def test_tar_rejects_escaping_members(tmp_path, bad: str, rule: str) -> None:  # noqa: ANN001
    m = tarfile.TarInfo(bad)
    payload: bytes | None = b"x"
    if bad == "link":
        m.type, m.linkname, payload = tarfile.SYMTYPE, "/etc/passwd", None
    data = tar_bytes([tarfile.TarInfo("graph.nnef"), m], [GRAPH.encode(), payload])
    (tmp_path / "m.tgz").write_bytes(data)
    with pytest.raises(NnefError, match=rule):
        load_container(str(tmp_path / "m.tgz"))


@pytest.mark.parametrize("text,rule", [
    ('"x": linear_quantize(min = 1.0, max = 0.0, bits = 8);', "min < max"),
    ('"x": linear_quantize(min = 0.0, max = 1.0);', "needs argument 'bits'"),
    ('"x": linear_quantize(0.0, max = 1.0, bits = 8);', "must be named"),
    ('"nope": linear_quantize(min = 0.0, max = 1.0, bits = 8);', "not an exported tensor"),
    ('"x": linear_quantize(min = x, max = 1.0, bits = 8);', "compile-time"),
    ('"x": frob(bits = 8);', "unknown quantization algorithm"),
    ('x: linear_quantize(min = 0.0, max = 1.0, bits = 8);', "quoted tensor identifier"),
])
def test_quant_errors(text: str, rule: str) -> None:
    doc = parse_document(GRAPH)
    with pytest.raises(NnefError, match=rule):
        parse_quant(text, doc)


def test_check_main_reports_location(tmp_path, capsys) -> None:  # noqa: ANN001
    p = tmp_path / "bad.nnef"
    p.write_text("version 1.0;\ngraph g(x) -> (y)\n{ x = external(shape = [1]);\n  y = relu(z); }\n")
    assert check_main(str(p)) == 1
    assert f"{p}:4:12: error: §3.3.2: identifier 'z' is used before it is defined" in capsys.readouterr().err
    assert check_main(ALEXNET) == 0


def test_lenient_accepts_the_khronos_comma_between_extension_names() -> None:
    text = ("version 1.0;\nextension KHR_enable_fragment_definitions, KHR_enable_operator_expressions;\n"
            "graph g(x) -> (y) { x = external(shape = [1, 4]); y = x * 2.0; }")
    with pytest.raises(NnefError, match="separated by white space"):
        parse_document(text)
    doc = parse_document(text, lenient=True)
    assert doc.extensions == ["KHR_enable_fragment_definitions", "KHR_enable_operator_expressions"]
