#!/usr/bin/env bash
# Regenerate the TOSA 1.x conformance corpus used by `nnkiln conformance` / tests/e2e/test_tosa_conformance.py.
#
#   bench/gen_tosa_conformance.sh [small|large] [OUT_DIR]
#
#   small (default): the committed corpus, tests/data/tosa_conformance/ (a few MB): per operator at most
#                    $PER_OP_POS positive tests (one per distinct type/attribute signature first) and per
#                    (operator, ERROR_IF rule) at most $PER_RULE_NEG negative tests.
#   large          : every generated test (≈1900 positive + ≈6000 negative, ≈60 MB, several minutes),
#                    default OUT_DIR /tmp/tosa_conformance_large.
#
# Needs the tosa-tools venv (TOSA 1.x reference model + test generator), kept apart from the main venv
# because it pins numpy<2.2 / ml-dtypes==0.5.3:
#   python3 -m venv .venv-tosa && .venv-tosa/bin/pip install tosa-tools
#
# Generation is deterministic (fixed --seed); only operators that exist in both TOSA 0.30 and 1.x, the
# integer profile without extensions (tosa-pro-int, --extension none), and small tensors (dims 1..6).
# Expected outputs come from the TOSA 1.x reference model (python binding tosa_reference_model.run) and are
# written as the `ofm_file` names of each desc.json (ref-result-N.npy); positive tests whose reference run
# is not TOSA_VALID are dropped (e.g. REQUIRE violations flagged UNPREDICTABLE).
set -euo pipefail

MODE=${1:-small}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case "$MODE" in
  small) OUT=${2:-$ROOT/tests/data/tosa_conformance} ;;
  large) OUT=${2:-/tmp/tosa_conformance_large} ;;
  *) echo "usage: $0 [small|large] [OUT_DIR]" >&2; exit 2 ;;
esac
VENV=${TOSA_VENV:-$ROOT/.venv-tosa}
PY=$VENV/bin/python
[ -x "$PY" ] || { echo "missing $VENV (python3 -m venv $VENV && $VENV/bin/pip install tosa-tools)" >&2; exit 2; }
SP=$("$PY" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
GENLIB=$SP/tosa_reference_model/libtosa_reference_generate_lib.so
SEED=${SEED:-42}
PER_OP_POS=${PER_OP_POS:-8}
PER_RULE_NEG=${PER_RULE_NEG:-1}

OPS='^(argmax|avg_pool2d|conv2d|conv3d|depthwise_conv2d|matmul|max_pool2d|transpose_conv2d|clamp|add|arithmetic_right_shift|bitwise_and|bitwise_or|bitwise_xor|intdiv|logical_and|logical_left_shift|logical_right_shift|logical_or|logical_xor|maximum|minimum|mul|sub|table|abs|bitwise_not|clz|logical_not|negate|select|equal|greater|greater_equal|reduce_all|reduce_any|reduce_max|reduce_min|reduce_sum|concat|pad|reshape|reverse|slice|tile|transpose|gather|scatter|resize|cast|rescale|identity)$'

WORK=${WORK:-$(mktemp -d /tmp/tosa_conf_gen.XXXXXX)}
echo "generating into $WORK (seed $SEED)"
COMMON=(--generate-lib-path "$GENLIB" --profile tosa-pro-int --extension none --seed "$SEED" --num-rand-permutations 1)
build() {  # build TYPE FILTER [extra args...]
  local type=$1 filter=$2; shift 2
  "$VENV/bin/tosa_verif_build_tests" "${COMMON[@]}" --test-type "$type" --filter "$filter" -o "$WORK/$type" "$@" \
    >> "$WORK/$type.log" 2>&1
}
if [ ! -d "$WORK/positive" ]; then
  build positive "$OPS" --tensor-dim-range 1,6
fi
# negative (ERROR_IF) tests: one generator run per operator (a generator crash on one operator, e.g.
# "INTERNAL ERROR: Failure creating test output for concat", must not stop the others); a marker file per
# operator lets an interrupted run resume with the same WORK directory
for op in $(echo "$OPS" | tr -d '^$()' | tr '|' ' '); do
  [ -e "$WORK/negative.done.$op" ] && continue
  case "$op" in
    pad|rescale) extra=(--tensor-dim-range 1,6 --target-rank 2) ;;
    avg_pool2d|max_pool2d)
      extra=(--target-shape 1,4,4,2 --max-pooling-kernel 2 --max-pooling-stride 1 --max-pooling-padding 0) ;;
    *) extra=(--tensor-dim-range 1,6) ;;
  esac
  [ "$MODE" = large ] && extra=(--tensor-dim-range 1,6)
  build negative "^${op}\$" "${extra[@]}" || echo "warning: negative generation failed for $op (see $WORK/negative.log)"
  touch "$WORK/negative.done.$op"
done

rm -rf "$OUT"
mkdir -p "$OUT"
"$PY" - "$WORK" "$OUT" "$MODE" "$PER_OP_POS" "$PER_RULE_NEG" <<'EOF'
import json, os, re, shutil, sys
from collections import defaultdict

import numpy as np
import tosa_reference_model as trm

work, out, mode, per_op_pos, per_rule_neg = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])


def cases(kind):
    root = os.path.join(work, kind)
    for op in sorted(os.listdir(root)):
        d = os.path.join(root, op)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if os.path.exists(os.path.join(d, name, "desc.json")):
                yield op, name, os.path.join(d, name)


def size(path):
    return sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))


def signature(name):
    # drop the shape-like fields (1x3x5, 0, 5) so that tests differing only by shape share a signature
    return "_".join(f for f in name.split("_") if not re.fullmatch(r"\d+(x\d+)*", f))


selected = []
by_op = defaultdict(list)
for op, name, path in cases("positive"):
    by_op[op].append((name, path))
for op, items in by_op.items():
    if mode == "large":
        selected += [("positive", op, n, p) for n, p in items]
        continue
    items = [it for it in items if size(it[1]) <= 24_000] or items[:1]
    seen, first, rest = set(), [], []
    for n, p in items:
        (rest if signature(n) in seen else first).append((n, p))
        seen.add(signature(n))
    selected += [("positive", op, n, p) for n, p in (first + rest)[:per_op_pos]]

by_rule = defaultdict(list)
for op, name, path in cases("negative"):
    m = re.search(r"ERRORIF_([A-Za-z0-9]+)", name)
    by_rule[(op, m.group(1) if m else "?")].append((name, path))
for (op, rule), items in sorted(by_rule.items()):
    take = items if mode == "large" else sorted(items, key=lambda it: size(it[1]))[:per_rule_neg]
    selected += [("negative", op, n, p) for n, p in take]

kept = dropped = 0
for kind, op, name, path in selected:
    dest = os.path.join(out, kind, op, name)
    with open(os.path.join(path, "desc.json")) as f:
        desc = json.load(f)
    files = [desc.get("tosa_file", "test.tosa")] + list(desc.get("ifm_file", []))
    if kind == "positive":
        with open(os.path.join(path, desc.get("tosa_file", "test.tosa")), "rb") as f:
            graph = f.read()
        inputs = [np.load(os.path.join(path, x)) for x in desc["ifm_file"]]
        try:
            outputs, status = trm.run(graph, inputs)
        except Exception as err:  # noqa: BLE001
            print(f"drop {name}: reference model raised {err}", file=sys.stderr)
            dropped += 1
            continue
        if "TOSA_VALID" not in str(status):
            print(f"drop {name}: reference model status {status}", file=sys.stderr)
            dropped += 1
            continue
    os.makedirs(dest, exist_ok=True)
    for x in ["desc.json", *files]:
        shutil.copy(os.path.join(path, x), os.path.join(dest, x))
    if kind == "positive":
        for fname, arr in zip(desc["ofm_file"], outputs):
            np.save(os.path.join(dest, fname), np.asarray(arr))
    kept += 1
print(f"{kept} tests written to {out} ({dropped} positive tests dropped)")
EOF
du -sh "$OUT"
