"""Regenerate the torch-to-nnef fixtures of ``tests/frontends/nnef/test_torch_to_nnef.py``.

Runs ONLY in a scratch venv that has torch (never a dependency of nnkiln; CI does not run this)::

    python3 -m venv /work/venv-torch
    /work/venv-torch/bin/pip install torch==2.13.0            # the local CPU wheel; install it alone first
    /work/venv-torch/bin/pip install torch-to-nnef==0.24.12 numpy onnx
    /work/venv-torch/bin/python tests/data/nnef_torch/generate.py

Every model is small (a few channels), built with a fixed seed and random weights (BatchNorm running
statistics randomised too), put in eval mode and exported with torch-to-nnef into
``<name>/model/`` (an NNEF folder: ``graph.nnef`` + ``.dat`` files) or ``<name>/model.nnef.tgz``,
beside ``input.npy`` (the single input: float32, int64 token ids for ``embedding``) and ``output.npy``
(torch's output: the oracle).

Targets: ``khronos`` is ``KhronosNNEF("1.0.5")`` with its default ``check_io=True`` (plain NNEF; the
exporter re-reads its output with nnef-tools, i.e. the Khronos parser, and runs it). When that check
rejects the exporter's own output, the unchecked export (``check_io=False``) is kept instead. ``tract`` is
``TractNNEF`` with its default settings (tract's dialect, ``tract_core_*`` operations; ``check_io=False``
because checking needs the tract binary, which cannot be downloaded here: a stub script answering
``--version`` stands in for it).

``manifest.json`` records, per fixture, the target, the archive form, whether the export succeeded (and
the exporter's error if not: no model files then) and ``khronos_parser``: ``"valid"`` when the Khronos
parser (``nnef.load_graph`` + ``nnef.infer_shapes``) accepts the document, else its message. Khronos
documents it rejects are invalid NNEF, which nnkiln must reject too, naming the rule (tract documents are
read in tract's dialect instead).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sys
import tarfile
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from torch_to_nnef import KhronosNNEF, TractNNEF, export_model_to_nnef

HERE = Path(__file__).resolve().parent


def _randomise_bn(m: nn.Module) -> None:
    for mod in m.modules():
        if isinstance(mod, (nn.BatchNorm1d, nn.BatchNorm2d)):
            with torch.no_grad():
                mod.running_mean.uniform_(-0.5, 0.5)
                mod.running_var.uniform_(0.5, 1.5)
                mod.weight.uniform_(0.5, 1.5)
                mod.bias.uniform_(-0.5, 0.5)


class SmallCNN(nn.Module):
    """conv/bn/relu, max pool, a residual block, global average pool, linear."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 3, stride=2, padding=1, bias=False)
        self.bn0 = nn.BatchNorm2d(4)
        self.pool = nn.MaxPool2d(3, stride=2, padding=1)
        self.c1 = nn.Conv2d(4, 4, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(4)
        self.c2 = nn.Conv2d(4, 4, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(F.relu(self.bn0(self.stem(x))))
        y = F.relu(self.bn1(self.c1(x)))
        y = self.bn2(self.c2(y))
        x = F.relu(x + y)
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


class SmallCNNNoBN(nn.Module):
    """conv(+bias)/relu, max and average pools, residual add, flatten, linear (no BatchNorm)."""

    def __init__(self) -> None:
        super().__init__()
        self.c0 = nn.Conv2d(3, 4, 3, stride=2, padding=1)
        self.c1 = nn.Conv2d(4, 4, 3, padding=1)
        self.c2 = nn.Conv2d(4, 4, 1)
        self.fc = nn.Linear(4 * 2 * 2, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.c0(x))
        x = F.max_pool2d(x, 2)
        x = F.relu(x + self.c2(F.relu(self.c1(x))))
        x = F.avg_pool2d(x, 2)
        return self.fc(x.flatten(1))


class MobileBlock(nn.Module):
    """Depthwise 3x3 + pointwise 1x1 convolutions with BatchNorm, ReLU6 and hardswish, residual add."""

    def __init__(self) -> None:
        super().__init__()
        self.expand = nn.Conv2d(4, 8, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8, bias=False)
        self.bn2 = nn.BatchNorm2d(8)
        self.pw = nn.Conv2d(8, 4, 1)
        self.dw2 = nn.Conv2d(4, 4, 3, stride=2, padding=1, groups=4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu6(self.bn1(self.expand(x)))
        y = F.hardswish(self.bn2(self.dw(y)))
        y = x + self.pw(y)
        return F.relu6(self.dw2(y))


class MLP(nn.Module):
    """linear + GELU + layer norm (token-wise on a [B, T, C] input), then a residual."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 8)
        self.ln = nn.LayerNorm(8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x + self.fc2(F.gelu(self.fc1(x))))


class Attention(nn.Module):
    """Single-head-per-split self-attention: q/k/v projections, reshape/transpose to heads, scaled
    matmul, softmax, matmul, merge heads, output projection."""

    def __init__(self, dim: int = 8, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        h = self.heads
        q, k, v = self.qkv(x).split(c, dim=2)
        q = q.reshape(b, t, h, c // h).transpose(1, 2)
        k = k.reshape(b, t, h, c // h).transpose(1, 2)
        v = v.reshape(b, t, h, c // h).transpose(1, 2)
        att = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / (c // h) ** 0.5)
        att = torch.softmax(att, dim=-1)
        y = torch.matmul(att, v).transpose(1, 2).reshape(b, t, c)
        return self.proj(y)


class Upsample(nn.Module):
    """Nearest x2 and bilinear x2 (align_corners False and True) upsampling around a convolution."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(2, 2, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = F.interpolate(x, scale_factor=2, mode="nearest")
        b = F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)
        c = F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True)
        return self.conv(a) + b - c


class ShapeOps(nn.Module):
    """concat, split, slicing with steps and negative bounds, constant and reflect padding, permute."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a, b = torch.split(x, [2, 2], dim=1)
        c = torch.cat([b, a, a[:, :, 1:-1, :]], dim=2)
        d = F.pad(c, (1, 2, 0, 1), mode="constant", value=0.5)
        e = F.pad(d, (1, 1, 1, 1), mode="reflect")
        f = e[:, :, ::2, 1:]
        return f.permute(0, 2, 3, 1)


class Activations(nn.Module):
    """sigmoid, tanh, leaky ReLU, ELU, softplus, SiLU, hardsigmoid, clamp (element-wise)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (torch.sigmoid(x) + torch.tanh(x) * F.leaky_relu(x, 0.1) + F.elu(x)
                - F.silu(x) + F.hardsigmoid(x) * torch.clamp(x, -0.5, 0.75) + F.softplus(x))


class Reductions(nn.Module):
    """mean/max/min/sum over one and several dimensions, with and without keepdim."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        m = x.mean(dim=(2, 3))
        mx = x.amax(dim=3).amax(dim=2)
        mn = torch.amin(x, dim=(2, 3))
        s = x.sum(dim=1, keepdim=True).mean(dim=(2, 3))
        v = torch.max(x, dim=2).values.mean(dim=2)
        return m + mx * 0.5 - mn + s + v


class Recurrent(nn.Module):
    """A one-layer LSTM followed by a one-layer GRU (batch_first), returning the GRU's sequence output."""

    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(4, 6, batch_first=True)
        self.gru = nn.GRU(6, 5, batch_first=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y, _ = self.lstm(x)
        z, _ = self.gru(y)
        return z


class Embedding(nn.Module):
    """Token embedding (an integer input) plus a learned position table, layer norm, linear head."""

    def __init__(self) -> None:
        super().__init__()
        self.tok = nn.Embedding(20, 8)
        self.pos = nn.Parameter(torch.randn(1, 6, 8) * 0.1)
        self.ln = nn.LayerNorm(8)
        self.head = nn.Linear(8, 3)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.ln(self.tok(ids) + self.pos))


class SDPA(nn.Module):
    """torch's fused scaled_dot_product_attention on projected q/k/v (2 heads)."""

    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(8, 24)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(x).reshape(b, t, 3, 2, c // 2).permute(2, 0, 3, 1, 4)
        return F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, t, c)


# name -> (module factory, input shape)
MODELS: dict[str, tuple[Callable[[], nn.Module], tuple[int, ...]]] = {
    "cnn_bn": (SmallCNN, (1, 3, 16, 16)),
    "cnn": (SmallCNNNoBN, (1, 3, 16, 16)),
    "mobile": (MobileBlock, (1, 4, 8, 8)),
    "mlp": (MLP, (1, 5, 8)),
    "attention": (Attention, (1, 6, 8)),
    "upsample": (Upsample, (1, 2, 5, 6)),
    "shape_ops": (ShapeOps, (1, 4, 6, 5)),
    "activations": (Activations, (2, 3, 4, 5)),
    "reductions": (Reductions, (1, 3, 4, 5)),
    "recurrent": (Recurrent, (1, 4, 4)),
    "embedding": (Embedding, (1, 6)),
    "sdpa": (SDPA, (1, 5, 8)),
}

# fixture name -> (model, target, form); form "dir" (folder) or "tgz"
FIXTURES: dict[str, tuple[str, str, str]] = {
    **{f"{m}_khronos": (m, "khronos", "dir") for m in MODELS},
    **{f"{m}_tract": (m, "tract", "tgz" if m == "cnn_bn" else "dir") for m in MODELS},
}


def _tract_stub() -> Path:
    """A stand-in ``tract`` executable that only answers ``--version``.

    ``TractNNEF`` asks the tract binary its version at construction (and downloads it when no path is given,
    which is impossible offline); with ``check_io=False`` the binary is never run otherwise.
    """
    stub = Path(tempfile.gettempdir()) / "nnkiln-tract-stub" / "tract"
    stub.parent.mkdir(parents=True, exist_ok=True)
    version = TractNNEF.latest_version().to_str()
    stub.write_text(f'#!/bin/sh\nif [ "$1" = "--version" ]; then echo "tract {version}"; exit 0; fi\n'
                    'echo "tract stub: only --version" >&2; exit 1\n')
    stub.chmod(0o755)
    return stub


def _target(kind: str, check_io: bool):  # noqa: ANN202
    if kind == "khronos":
        return KhronosNNEF(version="1.0.5", check_io=check_io)
    return TractNNEF(TractNNEF.latest_version(), check_io=False, dump_identity_properties=False,
                     specific_tract_binary_path=_tract_stub())


def _khronos_verdict(path: Path) -> str:
    """``"valid"`` if the Khronos parser (``nnef.load_graph`` + ``infer_shapes``) accepts the document,
    else its message (without the temporary path)."""
    import nnef

    with tempfile.TemporaryDirectory() as td:
        folder = path
        if path.is_file():
            with tarfile.open(path) as tf:
                tf.extractall(td, filter="data")
            folder = Path(td)
        try:
            graph = nnef.load_graph(str(folder))
            nnef.infer_shapes(graph)
        except Exception as err:  # noqa: BLE001
            return str(err).split("] ", 1)[-1].strip()
    return "valid"


def build(fixture: str) -> dict:
    model_name, kind, form = FIXTURES[fixture]
    factory, shape = MODELS[model_name]
    seed = sorted(MODELS).index(model_name)
    torch.manual_seed(1000 + seed)
    model = factory()
    _randomise_bn(model)
    model.eval()
    gen = torch.Generator().manual_seed(2000 + seed)
    if model_name == "embedding":  # token ids
        x = torch.randint(0, 20, shape, generator=gen)
    else:
        x = torch.randn(*shape, generator=gen)
    with torch.no_grad():
        y = model(x)
    out = HERE / fixture
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    np.save(out / "input.npy", x.numpy() if x.dtype == torch.int64 else x.numpy().astype(np.float32))
    np.save(out / "output.npy", y.numpy().astype(np.float32))
    entry: dict = {"model": model_name, "target": kind, "form": form, "input_shape": list(shape)}

    def export(check_io: bool) -> None:
        for p in out.iterdir():
            if p.name.startswith("model"):
                shutil.rmtree(p) if p.is_dir() else p.unlink()
        export_model_to_nnef(
            model=model, args=(x,), file_path_export=(out / "model.nnef").resolve(),
            inference_target=_target(kind, check_io), input_names=["input"], output_names=["output"],
            compression_level=0 if form == "dir" else 9, log_level=logging.CRITICAL)

    try:
        try:
            export(kind == "khronos")
        except Exception as err:  # noqa: BLE001
            if kind != "khronos" or "Parse error" not in str(err):
                raise
            # the exporter's own check (the Khronos parser via nnef-tools) rejects its output: keep the
            # unchecked export as a document that nnkiln must reject too
            export(False)
        if form == "dir":  # exported as a .tar (the Khronos check needs an archive), kept as a folder
            tar = next(p for p in out.iterdir() if p.name.startswith("model.nnef"))
            with tarfile.open(tar) as tf:
                tf.extractall(out / "model", filter="data")
            tar.unlink()
            entry["path"] = "model"
        else:
            tgz = out / "model.nnef.tgz"
            if not tgz.exists():  # the exporter names archives after the base name
                cand = [p for p in out.iterdir() if p.name.startswith("model.nnef")]
                cand[0].rename(tgz)
            entry["path"] = "model.nnef.tgz"
        entry["exported"] = True
        entry["khronos_parser"] = _khronos_verdict(out / entry["path"])
    except Exception as err:  # noqa: BLE001  (recorded in the manifest)
        entry["exported"] = False
        for p in out.iterdir():
            if p.name.startswith("model"):
                shutil.rmtree(p) if p.is_dir() else p.unlink()
        entry["error"] = f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
    return entry


def main(argv: list[str]) -> None:
    names = argv or list(FIXTURES)
    manifest_path = HERE / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    for name in names:
        manifest[name] = build(name)
        print(name, "ok" if manifest[name]["exported"] else manifest[name]["error"])
    manifest = {k: manifest[k] for k in sorted(manifest) if k in FIXTURES}
    manifest_path.write_text(json.dumps(manifest, indent=1) + "\n")
    total = sum(f.stat().st_size for f in HERE.rglob("*") if f.is_file())
    print(f"total size {total / 1e6:.2f} MB")


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main(sys.argv[1:])
