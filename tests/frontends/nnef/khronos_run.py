"""Run inside .venv-nnef: ``khronos_run.py FOLDER IN.npz OUT.npz LOWERED_JSON`` executes an NNEF folder with
the Khronos ``nnef.Session`` (inputs ``arg_0, arg_1, ...`` in graph order) and saves the outputs."""

import json
import sys

import nnef
import numpy as np

folder, inp, outp = sys.argv[1], sys.argv[2], sys.argv[3]
lowered = json.loads(sys.argv[4]) if len(sys.argv) > 4 else []
data = np.load(inp)
args = [data[f"arg_{i}"] for i in range(len(data.files))]
with nnef.Session(folder, stdlib="", lowered=lowered) as s:
    outs = s(*args)
np.savez(outp, *[np.asarray(o) for o in outs])
