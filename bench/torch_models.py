"""The benchmark models built in torch with random weights and exported to ONNX (issue 5).

Plain torch (torchvision does not import beside the CPU build of torch 2.13.0 used here): the
topologies of torchvision's ResNet-18 and MobileNetV2 (width 1.0, 1000 classes) and a BERT encoder as in
``bench_compile.bert`` (word + position embeddings, post-LN ``LayerNorm(eps=1e-12)``, softmax attention
without mask, exact GELU, no pooler; BERT-tiny: 2 layers, hidden 128, 2 heads; BERT-base: 12 layers,
hidden 768, 12 heads; FFN 4·hidden, sequence 128, vocabulary 30522). BatchNorm running statistics are
randomised so that folding them is not a no-op. Weights come from ``torch.manual_seed(0)``.

Export: ``torch.onnx.export(..., dynamo=False, opset_version=17)`` (the TorchScript exporter: it folds
BatchNorm into the convolutions in eval mode and needs no onnxscript; GELU becomes Div/Erf/Add/Mul).

Needs torch (not a dependency of nnkiln): ``pip install torch==2.13.0`` into the bench venv (see
``bench/README.md``). ``MODELS[name](batch) -> (onnx.ModelProto, feed)`` has the signature of
``bench_compile.MODELS``; ``bench_compile.py --source torch`` uses it. Stand-alone::

    python bench/torch_models.py --models resnet18,bert_tiny --batch 1 --out /tmp/models

writes ``<name>.onnx`` and ``<name>_feed.npz`` and prints the largest difference between onnxruntime (if
installed) and torch on the same input.
"""

from __future__ import annotations

import argparse
import io
import math
import os
from collections.abc import Callable

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

# -- ResNet-18 ------------------------------------------------------------------------------------------


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (self.down(x) if self.down is not None else x))


class ResNet18(nn.Module):
    """torchvision's resnet18 topology: 7x7/2 stem, 3x3/2 max pool, 4 stages x 2 blocks, GAP, FC-1000."""

    def __init__(self, classes: int = 1000) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1))
        layers, cin = [], 64
        for i, cout in enumerate((64, 128, 256, 512)):
            for b in range(2):
                layers.append(BasicBlock(cin, cout, 2 if i > 0 and b == 0 else 1))
                cin = cout
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(512, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.layers(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


# -- MobileNetV2 ----------------------------------------------------------------------------------------


def _conv_bn(cin: int, cout: int, k: int, s: int, groups: int = 1, act: bool = True) -> nn.Sequential:
    mods: list[nn.Module] = [nn.Conv2d(cin, cout, k, s, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    if act:
        mods.append(nn.ReLU6())
    return nn.Sequential(*mods)


class InvertedResidual(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int, expand: int) -> None:
        super().__init__()
        hidden = cin * expand
        mods: list[nn.Module] = [] if expand == 1 else [_conv_bn(cin, hidden, 1, 1)]
        mods += [_conv_bn(hidden, hidden, 3, stride, groups=hidden), _conv_bn(hidden, cout, 1, 1, act=False)]
        self.body = nn.Sequential(*mods)
        self.residual = stride == 1 and cin == cout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.body(x) if self.residual else self.body(x)


class MobileNetV2(nn.Module):
    """torchvision's mobilenet_v2 topology (width 1.0): stem, 17 inverted residuals, 1x1 to 1280, GAP, FC."""

    SETTINGS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
                (6, 320, 1, 1))

    def __init__(self, classes: int = 1000) -> None:
        super().__init__()
        mods: list[nn.Module] = [_conv_bn(3, 32, 3, 2)]
        cin = 32
        for t, c, n, s in self.SETTINGS:
            for i in range(n):
                mods.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                cin = c
        mods.append(_conv_bn(cin, 1280, 1, 1))
        self.features = nn.Sequential(*mods)
        self.classifier = nn.Linear(1280, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(torch.flatten(F.adaptive_avg_pool2d(self.features(x), 1), 1))


# -- BERT encoder ---------------------------------------------------------------------------------------


class EncoderLayer(nn.Module):
    def __init__(self, hidden: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v = nn.Linear(hidden, hidden), nn.Linear(hidden, hidden), nn.Linear(hidden, hidden)
        self.o = nn.Linear(hidden, hidden)
        self.ln1 = nn.LayerNorm(hidden, eps=1e-12)
        self.f1, self.f2 = nn.Linear(hidden, 4 * hidden), nn.Linear(4 * hidden, hidden)
        self.ln2 = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        h, d = self.heads, c // self.heads
        q = self.q(x).reshape(b, t, h, d).transpose(1, 2)
        k = self.k(x).reshape(b, t, h, d).permute(0, 2, 3, 1)
        v = self.v(x).reshape(b, t, h, d).transpose(1, 2)
        a = torch.softmax(torch.matmul(q, k) * (1.0 / math.sqrt(d)), dim=-1)
        ctx = torch.matmul(a, v).transpose(1, 2).reshape(b, t, c)
        x = self.ln1(x + self.o(ctx))
        return self.ln2(x + self.f2(F.gelu(self.f1(x))))


class BertEncoder(nn.Module):
    def __init__(self, layers: int, hidden: int, heads: int, seq: int = 128, vocab: int = 30522) -> None:
        super().__init__()
        self.word = nn.Embedding(vocab, hidden)
        self.pos = nn.Parameter(0.02 * torch.randn(1, seq, hidden))
        self.ln = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList(EncoderLayer(hidden, heads) for _ in range(layers))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.ln(self.word(ids) + self.pos)
        for layer in self.layers:
            x = layer(x)
        return x


# -- building and export --------------------------------------------------------------------------------


def _randomise(m: nn.Module) -> nn.Module:
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            with torch.no_grad():
                mod.running_mean.uniform_(-0.1, 0.1)
                mod.running_var.uniform_(0.5, 1.5)
                mod.weight.uniform_(0.5, 1.5)
                mod.bias.uniform_(-0.1, 0.1)
        if isinstance(mod, nn.Embedding):
            with torch.no_grad():
                mod.weight.normal_(0.0, 0.02)
    return m.eval()


def build(name: str, batch: int) -> tuple[nn.Module, dict[str, np.ndarray]]:
    """The torch module (eval mode, seeded random weights) and its input feed."""
    torch.manual_seed(0)
    rng = np.random.default_rng(1)
    if name in ("resnet18", "mobilenetv2"):
        model = _randomise(ResNet18() if name == "resnet18" else MobileNetV2())
        return model, {"input": rng.standard_normal((batch, 3, 224, 224)).astype(np.float32)}
    layers, hidden, heads = {"bert_tiny": (2, 128, 2), "bert_base": (12, 768, 12)}[name]
    model = _randomise(BertEncoder(layers, hidden, heads))
    return model, {"input_ids": rng.integers(0, 30522, (batch, 128)).astype(np.int64)}


def export(name: str, batch: int):  # noqa: ANN201 - (onnx.ModelProto, feed)
    """``build`` exported with the TorchScript exporter at opset 17 (``dynamo=False``)."""
    import onnx

    model, feed = build(name, batch)
    (in_name, arr), = feed.items()
    out_name = "hidden_out" if name.startswith("bert") else "output"
    buf = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(model, (torch.from_numpy(arr),), buf, dynamo=False, opset_version=17,
                          input_names=[in_name], output_names=[out_name])
    return onnx.load_from_string(buf.getvalue()), feed


MODELS: dict[str, Callable[[int], tuple[object, dict[str, np.ndarray]]]] = {
    n: (lambda b, n=n: export(n, b)) for n in ("resnet18", "mobilenetv2", "bert_tiny", "bert_base")
}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)
    import onnx

    os.makedirs(args.out, exist_ok=True)
    for name in args.models.split(","):
        m, feed = export(name, args.batch)
        path = os.path.join(args.out, f"{name}.onnx")
        onnx.save(m, path)
        np.savez(os.path.join(args.out, f"{name}_feed.npz"), **feed)
        model, _ = build(name, args.batch)
        with torch.no_grad():
            want = model(*(torch.from_numpy(v) for v in feed.values())).numpy()
        msg = ""
        try:
            import onnxruntime as ort

            got = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feed)[0]
            msg = f"  onnxruntime vs torch max abs diff {float(np.max(np.abs(got - want))):.2e}"
        except ImportError:
            pass
        ops: dict[str, int] = {}
        for node in m.graph.node:
            ops[node.op_type] = ops.get(node.op_type, 0) + 1
        print(f"{name}: {os.path.getsize(path) / 1e6:.1f} MB, ops {dict(sorted(ops.items()))}{msg}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
