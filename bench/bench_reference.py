"""Speed of the reference interpreter (issue 3): a ResNet-18-sized float graph and its int8 twin.

Run: ``.venv/bin/python bench/bench_reference.py``. The ResNet-18-like model is the one bench_compile.py
builds (random weights, 1x3x224x224, 1.8 GMACs); it is imported from ONNX and run with
``nnkiln.reference.run`` (the bit-exact interpreter, no compilation).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))


def main() -> None:
    import onnx
    from bench_compile import resnet18_like

    import nnkiln

    model, feed = resnet18_like(1)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "resnet18.onnx")
        onnx.save(model, path)
        t = time.perf_counter()
        module = nnkiln.load(path)
        print(f"import ResNet-18-like:            {time.perf_counter() - t:6.2f} s")
    for i in range(3):
        t = time.perf_counter()
        nnkiln.reference.run(module, feed)
        print(f"reference run {i + 1} (float32):       {time.perf_counter() - t:6.2f} s")


if __name__ == "__main__":
    main()
