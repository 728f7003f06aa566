"""Run a TOSA 1.x flatbuffer with the TOSA reference model (helper of test_tosa1_export.py).

Runs in the tosa-tools venv (``.venv-tosa/bin/python``), not in nnkiln's:

    python tosa1_refmodel_run.py GRAPH.tosa INPUTS.npz OUTPUTS.npz

``INPUTS.npz`` holds ``in0``, ``in1``, ... in the graph's input order; ``OUTPUTS.npz`` receives
``out0``, ``out1``, ... Prints the graph status (``TOSA_VALID``, ``TOSA_UNPREDICTABLE``,
``TOSA_ERROR``) as the last line of stdout.
"""

from __future__ import annotations

import sys

import numpy as np
import tosa_reference_model as trm


def main(argv: list[str]) -> int:
    graph, inputs_path, outputs_path = argv
    with open(graph, "rb") as f:
        data = f.read()
    npz = np.load(inputs_path)
    inputs = [npz[f"in{i}"] for i in range(len(npz.files))]
    outputs, status = trm.run(data, inputs)
    np.savez(outputs_path, **{f"out{i}": np.asarray(o) for i, o in enumerate(outputs)})
    print(str(status).split(".")[-1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
