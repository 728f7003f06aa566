"""Passes, one per file: ``transforms/<dialect>/<pass_name>.py``. ``registry()`` maps names to classes."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def registry() -> dict[str, Callable[[], type[ModulePass]]]:
    """Pass name → a function returning the pass class (imported lazily)."""

    def generic(module: str, cls: str) -> Callable[[], type[ModulePass]]:
        def load() -> type[ModulePass]:
            import importlib

            return getattr(importlib.import_module(f"nnkiln.transforms.{module}"), cls)

        return load

    return {
        "canonicalize": generic("generic.canonicalize", "Canonicalize"),
        "cse": generic("generic.cse", "Cse"),
        "dce": generic("generic.dce", "Dce"),
        "fold-constants": generic("tosa.fold_constants", "FoldConstants"),
    }
