"""Textual pass pipelines (``nnkiln opt -p``): ``"canonicalize,cse,fold-constants{max-elements=1024}"`` → passes.

Pass names are those of ``nnkiln.transforms.registry``; options use mlir-opt syntax (dashed names). A
``tosa-to-buf`` gets ``nnkiln.pipelines.region_passes`` for the programs of control-flow regions, as the named
pipelines give it: ``tosa-to-buf{target=cpu region-pipeline=default}`` (the defaults) compiles them with the
default pipeline for the cpu target.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import parse_pipeline

from nnkiln.conversion.tosa_to_buf import TosaToBuf
from nnkiln.errors import InputError, did_you_mean
from nnkiln.pipelines import region_passes
from nnkiln.transforms import registry


def available_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Every registered pass by name (see ``nnkiln.transforms``)."""
    return registry()


def parse_pass_pipeline(spec: str) -> list[ModulePass]:
    """The passes ``spec`` lists, in order; unknown names and bad options are an ``InputError``."""
    passes = available_passes()
    result: list[ModulePass] = []
    try:
        specs = list(parse_pipeline(spec))
    except Exception as err:
        raise InputError(f"bad pass pipeline '{spec}': {err}") from None
    unknown = [s.name for s in specs if s.name not in passes]
    if unknown:
        hints = "".join(did_you_mean(u, passes) for u in unknown)
        raise InputError(f"unknown pass(es) {unknown}{hints} (available: {', '.join(sorted(passes))})")
    for s in specs:
        try:
            p = passes[s.name]().from_pass_spec(s)
        except Exception as err:
            raise InputError(f"bad options for pass '{s.name}': {err}") from None
        result.append(replace(p, region_passes=region_passes) if isinstance(p, TosaToBuf) else p)
    return result


__all__ = ["available_passes", "parse_pass_pipeline"]
