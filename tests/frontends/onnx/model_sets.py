"""The model sets shipped with onnx (``simple``, ``pytorch-converted``, ``pytorch-operator``, ``light``)
through nnkiln: import + reference interpreter, compared with the shipped expected outputs.

``light`` models (AlexNet, DenseNet-121, Inception v1/v2, ResNet-50, ShuffleNet, SqueezeNet, VGG-19,
ZFNet-512 with weights replaced by ConstantOfShape) take the deterministic input onnx's runner uses:
``arange(n).reshape(shape) / n``. Run as a script for a summary: ``python tests/frontends/onnx/model_sets.py``.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SETS = ("simple", "pytorch-converted", "pytorch-operator", "light")


@dataclass
class ModelCase:
    name: str
    model_path: Path
    data_dirs: list[Path]
    light_output: Path | None = None


def data_root() -> Path:
    import onnx

    return Path(os.path.dirname(onnx.__file__)) / "backend" / "test" / "data"


def list_cases() -> list[ModelCase]:
    root = data_root()
    cases: list[ModelCase] = []
    for kind in SETS[:3]:
        for d in sorted((root / kind).iterdir()):
            if (d / "model.onnx").exists():
                cases.append(ModelCase(f"{kind}/{d.name}", d / "model.onnx", sorted(d.glob("test_data_set_*"))))
    for model in sorted((root / "light").glob("light_*.onnx")):
        out = model.with_name(model.stem + "_output_0.pb")
        cases.append(ModelCase(f"light/{model.stem}", model, [], out))
    return cases


def _load_pb(path: Path) -> np.ndarray:
    import onnx
    from onnx import numpy_helper

    t = onnx.TensorProto()
    t.ParseFromString(path.read_bytes())
    return numpy_helper.to_array(t)


def run(case: ModelCase, compiled: bool = False) -> tuple[str, str]:
    """(status, reason): status is passed, failed or unsupported; ``compiled``: through ``nnkiln.compile``."""
    import onnx

    from nnkiln.ir.errors import FrontendError, NnkilnError
    from nnkiln.onnx_backend import run_model

    model = onnx.load(str(case.model_path))
    init = {t.name for t in model.graph.initializer}
    graph_inputs = [i for i in model.graph.input if i.name not in init]
    datasets: list[tuple[list[np.ndarray], list[np.ndarray]]] = []
    if case.light_output is not None:
        ins = []
        for vi in graph_inputs:
            shape = tuple(d.dim_value if d.HasField("dim_value") else 1 for d in vi.type.tensor_type.shape.dim)
            n = int(np.prod(shape))
            ins.append((np.arange(n).reshape(shape) / n).astype(np.float32))
        datasets.append((ins, [_load_pb(case.light_output)]))
    for d in case.data_dirs:
        ins = [_load_pb(p) for p in sorted(d.glob("input_*.pb"), key=lambda p: int(p.stem.split("_")[1]))]
        outs = [_load_pb(p) for p in sorted(d.glob("output_*.pb"), key=lambda p: int(p.stem.split("_")[1]))]
        datasets.append((ins, outs))
    try:
        for ins, outs in datasets:
            got = run_model(model, ins, compiled=compiled)
            for i, (g, e) in enumerate(zip(got, outs)):
                if g.shape != e.shape:
                    return "failed", f"output {i}: shape {g.shape} != {e.shape}"
                if not np.allclose(g.astype(np.float64), e.astype(np.float64), rtol=1e-3, atol=1e-7, equal_nan=True):
                    diff = float(np.max(np.abs(g.astype(np.float64) - e.astype(np.float64))))
                    return "failed", f"output {i}: max abs diff {diff:.3g}"
        return "passed", ""
    except FrontendError as err:
        text = " ".join(str(err).split())
        status = "unsupported" if ("unsupported" in text or "not supported" in text or "no TOSA 0.30" in text) else "failed"
        return status, text[:300]
    except NnkilnError as err:
        return "failed", f"{type(err).__name__}: {' '.join(str(err).split())[:300]}"
    except Exception as err:  # a crash is ours
        return "failed", f"crash {type(err).__name__}: {str(err)[:300]}"


def main() -> int:
    compiled = "--compiled" in sys.argv
    counts = {"passed": 0, "failed": 0, "unsupported": 0}
    for case in list_cases():
        status, reason = run(case, compiled)
        counts[status] += 1
        if status != "passed":
            print(f"{status:<12} {case.name}: {reason}")
    print(f"total {sum(counts.values())}: {counts['passed']} passed, {counts['failed']} failed, "
          f"{counts['unsupported']} not supported")
    return 0


if __name__ == "__main__":
    sys.exit(main())
