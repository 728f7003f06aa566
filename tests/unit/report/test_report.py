"""``nnkiln report`` (issue 26, item 2): the page of the bundled example is self-contained, has the graph, the
timeline and the memory as inline SVGs, names every ONNX op type of the model, and states the blob's numbers;
the command line writes it, and says how to install the extra when it is missing; a headless browser renders it
when one is installed."""

from __future__ import annotations

import html
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("grandalf", reason="the report extra (pip install nnkiln[report]) is not installed")

from nnkiln.cli.main import main  # noqa: E402
from nnkiln.report import report  # noqa: E402
from nnkiln.report.charts import live_bytes  # noqa: E402
from nnkiln.report.graph import Node, collapse_chains, dag, to_svg  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "small_resnet.onnx"


@pytest.fixture(scope="module")
def page() -> str:
    return report(str(EXAMPLE), runs=1)


def test_the_page_has_the_graph_timeline_and_memory_as_inline_svgs(page: str) -> None:
    svgs = re.findall(r"<svg\b[^>]*>", page)
    labels = html.unescape(" ".join(re.findall(r'aria-label="([^"]*)"', " ".join(svgs))))
    assert len(svgs) >= 3
    for what in ("source graph", "task graph", "tasks per executor instance", "memory 'host'"):
        assert what in labels
    assert page.count("<svg") == page.count("</svg>")


def test_the_page_references_nothing_outside_itself(page: str) -> None:
    assert not re.search(r"https?://", page)
    assert not re.search(r"\b(src|href|xlink:href)\s*=", page)
    assert "@import" not in page and "<script" not in page and "<link" not in page


def test_every_onnx_op_type_and_node_name_is_named(page: str) -> None:
    import onnx

    graph = onnx.load(str(EXAMPLE)).graph
    for node in graph.node:
        assert f">{node.op_type}<" in page, node.op_type
        if node.name:
            assert node.name in page, node.name


def test_the_summary_numbers_are_the_blobs(page: str) -> None:
    import warnings

    import nnkiln

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exe = nnkiln.compile(nnkiln.load(str(EXAMPLE)))
    meta = exe.blob.metadata
    values = dict(re.findall(r'data-key="([^"]+)" data-value="([^"]*)"', page))
    assert int(values["arena_bytes"]) == meta["arena_bytes"] == exe.blob.arena_bytes
    assert int(values["arena_lower_bound_bytes"]) == meta["arena_lower_bound_bytes"]
    assert int(values["constants_bytes"]) == len(exe.blob.constants)
    assert int(values["num_tasks"]) == len(exe.blob.tasks)
    assert values["target"] == meta["target"] and values["pipeline"] == meta["pipeline"]
    assert float(values["compile_seconds"]) > 0
    for io in (*exe.blob.inputs, *exe.blob.outputs):
        assert f"<td>{io.name}</td><td>{list(io.shape)}</td><td>{io.kind.value}</td>" in page


def test_a_blob_file_gets_a_report_too(tmp_path: Path) -> None:
    import warnings

    import nnkiln

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nnkiln.compile(nnkiln.load(str(EXAMPLE))).save(tmp_path / "m.kiln")
    page = report(str(tmp_path / "m.kiln"), runs=1)
    assert page.count("<svg") >= 3 and "source graph" not in page and "unknown (a loaded blob)" in page


def test_memory_live_bytes_count_base_buffers_over_their_live_range() -> None:
    inspect = {"tasks": [{}] * 3, "buffers": [
        {"memory": "arena", "alias_of": None, "live": [0, 1], "size": 10},
        {"memory": "arena", "alias_of": 0, "live": [0, 1], "size": 4},  # a view: its base counts
        {"memory": "arena", "alias_of": None, "live": [1, 2], "size": 5},
        {"memory": "constant", "alias_of": None, "live": [0, 2], "size": 99},
        {"memory": "arena", "alias_of": None, "live": None, "size": 7}]}
    assert live_bytes(inspect, "arena") == [10, 15, 5]


def test_linear_chains_collapse_and_large_graphs_are_capped() -> None:
    chain = dag([Node([f"op{i}"], "cpu:0", f"op{i}") for i in range(5)], [(i, i + 1) for i in range(4)])
    assert [n.lines for n in collapse_chains(chain)] == [["op0", "op1", "op2", "… 2 more"]]
    # a diamond keeps its branches: only the single-successor / single-predecessor links merge
    diamond = dag([Node([n], "k", n) for n in "abcd"], [(0, 1), (0, 2), (1, 3), (2, 3)])
    assert len(collapse_chains(diamond)) == 4
    wide = dag([Node([f"n{i}"], "k", "") for i in range(30)], [(0, i) for i in range(1, 30)])
    svg = to_svg(wide, {"k": "#fff"}, "wide", max_nodes=10)
    assert "showing the first 10 of 30 boxes" in svg and svg.count("<rect") == 10 + 1  # boxes + legend


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    return code, capsys.readouterr().err


def test_the_command_writes_the_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.html"
    code, err = _cli(["report", str(EXAMPLE), "-o", str(out), "--runs", "1", "--quiet"], capsys)
    assert code == 0 and err == ""
    text = out.read_text()
    assert text.startswith("<!DOCTYPE html>") and text.count("<svg") >= 3


def test_without_the_extra_the_command_says_how_to_install_it(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "grandalf", None)  # import grandalf now raises ImportError
    out = tmp_path / "report.html"
    code, err = _cli(["report", str(EXAMPLE), "-o", str(out)], capsys)
    assert code != 0 and not out.exists()
    assert err.count("\n") == 1 and "pip install nnkiln[report]" in err


@pytest.mark.slow
def test_a_headless_browser_renders_the_page(tmp_path: Path, page: str) -> None:
    browser = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)),
                   None)
    if browser is None:
        pytest.skip("no headless browser (chromium) installed: apt-get install chromium")
    html = tmp_path / "report.html"
    html.write_text(page)
    shot = tmp_path / "shot.png"
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1200,2400",
                    f"--screenshot={shot}", html.as_uri()], check=True, capture_output=True, timeout=120)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000  # a rendered page, not a blank one


def test_an_npu_blob_shows_its_simulated_schedule_and_every_memory(tmp_path: Path) -> None:
    """On an npu target the Gantt chart is the replay the blob records (cycles, nothing measured) and there is one
    memory chart per arena: DDR and the scratchpads the blob uses."""
    import json

    import nnkiln
    from nnkiln.blob.inspect import describe

    exe = nnkiln.compile(nnkiln.load(str(EXAMPLE)), target="npu")
    blob = tmp_path / "m.kiln"
    exe.save(blob)
    page = report(str(blob), runs=1)
    labels = html.unescape(" ".join(re.findall(r'aria-label="([^"]*)"', page)))
    memories = {a["name"] for a in json.loads(json.dumps(describe(exe.blob)))["metadata"]["arenas"]}
    assert "DDR" in memories and any(m.startswith("CMX") for m in memories)
    for m in memories:
        assert f"memory '{m}'" in labels
    assert "simulated (cycles)" in page and "profiled run" not in page
    # the blob's tasks name their source node, so the ONNX graph's convolutions are coloured by the NCE running them
    from_model = report(str(EXAMPLE), target="npu", runs=1)
    assert re.search(r"stem/conv \(Conv\)[^<]*runs on NCE:\d", html.unescape(from_model))
    assert any(t.get("source") == "stem/conv" and t["executor"] == "NCE"
               for t in json.loads(json.dumps(describe(exe.blob)))["tasks"])
