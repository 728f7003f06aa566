"""Run inside .venv-nnef: read JSON {name: text} on stdin, print JSON {name: error-or-null} (parse+infer_shapes)."""

import json
import re
import sys

import nnef

out = {}
for name, text in json.load(sys.stdin).items():
    try:
        graph = nnef.parse_string(text, lowered=re.findall(r"fragment\s+(\w+)", text))
        nnef.infer_shapes(graph)
        out[name] = None
    except Exception as err:  # noqa: BLE001 - we only record the verdict
        out[name] = f"{type(err).__name__}: {err}"
json.dump(out, sys.stdout)
