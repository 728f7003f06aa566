"""Run the whole test suite: ruff (``pyproject.toml``), the lit/FileCheck tests, then pytest (whose summary line ends the output).

Usage: ``.venv/bin/python tests/run.py [pytest args...]``. Exits non-zero if either part fails.
Skip the slow oracle tests locally with ``-m "not slow"``.

Three oracles need their own venvs because of pinned dependencies (numpy < 2.2 for tosa-tools): the TOSA
reference model (``.venv-tosa``, tosa-tools), the Khronos NNEF tools (``.venv-nnef``, nnef and nnef-tools)
and the TFLite interpreter (``.venv-litert``, ai-edge-litert, for quantized models). They are
created on the first run (a few seconds each, from the package registry); if that fails, the tests that
need them are skipped with the reason. ``NNKILN_NO_ORACLE_VENVS=1`` skips creating them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


ORACLES = {
    ".venv-tosa": ["tosa-tools==2026.8.0"],
    ".venv-nnef": ["nnef==1.0.10", "nnef-tools==1.0.11", "onnx", "flatbuffers"],
    ".venv-litert": ["ai-edge-litert==2.3.0"],
}


def ensure_oracle_venvs() -> None:
    if os.environ.get("NNKILN_NO_ORACLE_VENVS"):
        return
    for name, packages in ORACLES.items():
        venv = ROOT / name
        if (venv / "bin" / "python").exists():
            continue
        print(f"creating {name} ({' '.join(packages)}) for the oracle tests", flush=True)
        ok = subprocess.run(["python3", "-m", "venv", str(venv)]).returncode == 0
        ok = ok and subprocess.run([str(venv / "bin" / "pip"), "install", "-q", *packages]).returncode == 0
        if not ok:
            shutil.rmtree(venv, ignore_errors=True)  # absent venv = the tests that need it are skipped
            print(f"warning: could not create {name}; the tests that need it will be skipped", flush=True)


def main() -> int:
    ensure_oracle_venvs()
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    ruff = subprocess.run([str(BIN / "ruff"), "check", "-q", "nnkiln", "tests", "bench"], cwd=ROOT, env=env)
    print(f"ruff: {'ok' if ruff.returncode == 0 else 'FAILED'}", flush=True)
    lit = subprocess.run([str(BIN / "lit"), "-q", str(ROOT / "tests" / "filecheck")], env=env)
    print(f"lit: {'ok' if lit.returncode == 0 else 'FAILED'}", flush=True)
    workers = ["-n", "2"] if os.cpu_count() and os.cpu_count() > 1 else []
    py = subprocess.run([str(BIN / "pytest"), "-q", *workers, *sys.argv[1:]], cwd=ROOT, env=env)
    if lit.returncode != 0:
        print("lit tests FAILED (see above)")
    if ruff.returncode != 0:
        print("ruff FAILED (see above; the configuration is pyproject.toml's [tool.ruff])")
    return ruff.returncode or lit.returncode or py.returncode


if __name__ == "__main__":
    sys.exit(main())
