"""Blobs re-encoded with valid checksums but hostile contents (issue 21): metadata of the wrong type, an arena or an
input over the tensor budget, kernel attrs the kernels cannot use. Each is a BlobError naming the file, from
``Executable.load`` and from ``nnkiln inspect`` alike (inspect validates as run does)."""

from __future__ import annotations

import dataclasses
import io
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import numpy as np
import pytest

import nnkiln
from nnkiln.blob.reader import decode
from nnkiln.blob.writer import encode
from nnkiln.cli.compile_cmds import inspect_main
from nnkiln.errors import BlobError, NotExecutableError

TINY = Path(__file__).resolve().parents[3] / "examples" / "tiny_cnn.mlir"


@pytest.fixture(scope="module")
def raw() -> bytes:
    return nnkiln.compile(nnkiln.load(str(TINY)), target="cpu", threads=1).to_bytes()


def _edited(raw: bytes, edit) -> bytes:  # noqa: ANN001
    blob = decode(raw)
    blob.constants = bytes(blob.constants)
    edit(blob)
    return encode(blob)


def _inspect(path: Path) -> tuple[int, str]:
    err = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        code = inspect_main([str(path), "--json"])
    return code, err.getvalue()


def _refused(tmp_path: Path, data: bytes, match: str, error: type[Exception] = BlobError) -> None:
    path = tmp_path / "hostile.kiln"
    path.write_bytes(data)
    with pytest.raises(error, match=f"hostile.kiln: .*{match}"):
        nnkiln.Executable.load(str(path))
    code, err = _inspect(path)
    assert code == error.exit_code and "hostile.kiln" in err and "error:" in err, err


@pytest.mark.parametrize("value", [[1, 2], "1.5", None, True, -1.0, float("inf")])
def test_metadata_of_the_wrong_type(tmp_path: Path, raw: bytes, value: object) -> None:
    data = _edited(raw, lambda b: b.metadata.__setitem__("compile_seconds", value))
    _refused(tmp_path, data, "METADATA compile_seconds")


def test_an_arena_over_the_budget_is_refused_before_it_is_allocated(tmp_path: Path, raw: bytes,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    data = _edited(raw, lambda b: b.metadata.__setitem__("arena_bytes", 32 << 30))
    _refused(tmp_path, data, "arena of 34359738368 bytes exceeds the limit of 1073741824 bytes")
    monkeypatch.setenv("NNKILN_MAX_TENSOR_BYTES", "4096")
    _refused(tmp_path, raw, "arena of 10240 bytes exceeds the limit of 4096 bytes")


def test_a_kernel_unknown_to_the_runtime_is_refused_by_inspect_too(tmp_path: Path, raw: bytes) -> None:
    def unknown(b) -> None:  # noqa: ANN001
        b.tasks[1] = dataclasses.replace(b.tasks[1], kernel="no.such")

    _refused(tmp_path, _edited(raw, unknown), "no runtime kernel for 'no.such'", NotExecutableError)


def test_kernel_attrs_the_kernel_cannot_use_fail_naming_the_task(tmp_path: Path, raw: bytes) -> None:
    def break_pool(b) -> None:  # noqa: ANN001
        i = next(i for i, t in enumerate(b.tasks) if t.kernel == "tosa.max_pool2d")
        t = b.tasks[i]
        b.tasks[i] = dataclasses.replace(t, args={**t.args, "attrs": {**t.args["attrs"], "kernel": 7}})

    # refused when the task's kernel is bound (the pool geometry is checked against the shapes), not at run time
    with pytest.raises(BlobError, match=r"tosa.max_pool2d: kernel 7, stride \(2, 2\).* do not map"):
        nnkiln.Executable.load(_edited(raw, break_pool))


def test_the_unedited_blob_still_loads_and_inspects(tmp_path: Path, raw: bytes) -> None:
    path = tmp_path / "ok.kiln"
    path.write_bytes(_edited(raw, lambda b: None))
    nnkiln.Executable.load(str(path))
    assert _inspect(path)[0] == 0


def test_attrs_a_native_binding_cannot_take_are_a_blob_error(tmp_path: Path, raw: bytes) -> None:
    """A zero point beyond int64 made kernels.bound raise OverflowError while chaining the tasks (issue 21)."""
    def huge_zp(b) -> None:  # noqa: ANN001
        t = b.tasks[0]
        b.tasks[0] = dataclasses.replace(t, args={**t.args, "attrs": {**t.args["attrs"], "input_zp": 2**63}})

    with pytest.raises(BlobError):
        nnkiln.Executable.load(_edited(raw, huge_zp)).run({"image": np.zeros((1, 16, 16, 3), np.int8)})


def test_a_pool_window_the_shapes_do_not_allow_is_refused_at_load(tmp_path) -> None:  # noqa: ANN001
    """Found by the fuzzer (seed 20261201, blob cases 9475, 9879): an int8 MAX_POOL2D task whose kernel was edited to
    2^24 rows over a 16-row input ran for 20 s; the geometry is now checked against the shapes when the task's
    kernel is bound (TOSA's ERROR_IF rules), so load and inspect refuse the blob."""
    from onnx import TensorProto as TP
    from onnx import helper as oh

    import nnkiln
    from nnkiln.blob.reader import decode
    from nnkiln.blob.writer import encode
    from nnkiln.errors import BlobError

    g = oh.make_graph([oh.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2])], "g",
                      [oh.make_tensor_value_info("x", TP.FLOAT, [1, 8, 16, 16])],
                      [oh.make_tensor_value_info("y", TP.FLOAT, None)])
    onnx_path = tmp_path / "p.onnx"
    import onnx

    onnx.save(oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)]), onnx_path)
    blob = decode(nnkiln.compile(nnkiln.load(str(onnx_path)), threads=1).to_bytes())
    pools = [t for t in blob.tasks if t.kernel == "tosa.max_pool2d"]
    assert pools, [t.kernel for t in blob.tasks]
    pools[0].args["attrs"]["kernel"] = (1 << 24, 2)
    bad = tmp_path / "bad.kiln"
    bad.write_bytes(encode(blob))
    with pytest.raises(BlobError, match=r"tosa.max_pool2d: kernel \(16777216, 2\).* do not map"):
        nnkiln.Executable.load(bad)

