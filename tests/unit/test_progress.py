"""Progress bars show on a terminal only, and never with ``quiet``: logs and pipes stay clean."""

from __future__ import annotations

import io
import sys

import pytest

from nnkiln.cli.main import main
from nnkiln.progress import progress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("tty,quiet,shown", [(True, False, True), (True, True, False), (False, False, False)])
def test_bar_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch, tty: bool, quiet: bool, shown: bool) -> None:
    err = _Terminal() if tty else io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    with progress(3, "work", quiet=quiet) as bar:
        for _ in range(3):
            bar.update(1)
    assert ("work" in err.getvalue()) is shown


def test_compile_and_conformance_print_no_bar_into_a_pipe(tmp_path, capsys) -> None:  # noqa: ANN001
    from pathlib import Path

    root = Path(__file__).parents[2]
    assert main(["compile", str(root / "examples" / "tiny_cnn.mlir"), "-o", str(tmp_path / "t.kiln")]) == 0
    assert main(["conformance", str(root / "tests" / "data" / "tosa_conformance" / "positive" / "abs")]) == 0
    err = capsys.readouterr().err
    assert "\r" not in err and "%|" not in err
