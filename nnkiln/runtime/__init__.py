"""L0 runtime: loads a blob (full validation) and executes it with numpy kernels. Imports no xDSL.

``load_blob(bytes | path) -> Executable``; ``Executable.run(inputs) -> outputs`` (by name),
``.save(path)``, ``Executable.load(path)``, ``.stats``; ``register_custom(identifier, kernel)`` supplies the
kernel of ``tosa.custom`` ops (shared with the reference interpreter).
"""

from __future__ import annotations

from nnkiln.reference.registry import register_custom
from nnkiln.runtime.executable import Executable, load_blob

__all__ = ["Executable", "load_blob", "register_custom"]
