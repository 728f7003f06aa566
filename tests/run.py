"""Run the whole test suite: the lit/FileCheck tests, then pytest (whose summary line ends the output).

Usage: ``.venv/bin/python tests/run.py [pytest args...]``. Exits non-zero if either part fails.
Skip the slow oracle tests locally with ``-m "not slow"``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def main() -> int:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    lit = subprocess.run([str(BIN / "lit"), "-q", str(ROOT / "tests" / "filecheck")], env=env)
    print(f"lit: {'ok' if lit.returncode == 0 else 'FAILED'}", flush=True)
    workers = ["-n", "2"] if os.cpu_count() and os.cpu_count() > 1 else []
    py = subprocess.run([str(BIN / "pytest"), "-q", *workers, *sys.argv[1:]], cwd=ROOT, env=env)
    if lit.returncode != 0:
        print("lit tests FAILED (see above)")
    return lit.returncode or py.returncode


if __name__ == "__main__":
    sys.exit(main())
