"""Progress bars of long commands (compile, conformance, bench): ``tqdm`` on a terminal's stderr, nothing otherwise.

A bar shows only when stderr is a terminal and the user did not ask for ``--quiet`` (or machine output such as
``--json``): logs and pipes stay clean.
"""

from __future__ import annotations

import sys
from typing import Any


def progress(total: int, desc: str, quiet: bool = False, unit: str = "step") -> Any:
    """A ``tqdm`` bar of ``total`` steps on stderr, disabled off a terminal or when ``quiet``."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=False,
                disable=quiet or not sys.stderr.isatty(), dynamic_ncols=True)
