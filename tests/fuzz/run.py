"""Run the fuzzer on demand and print the table (issue 21).

    python tests/fuzz/run.py --surface S --cases N [--seed K] [--jobs J] [--timeout T] [--memory-gb G] [--save DIR]

``S`` is one of mlir, onnx, tosa, nnef, blob, cli, or ``all``. Case ``i`` is a function of (K, S, i) only: a failing
case is reproduced with ``--first i --cases 1``. ``--save DIR`` writes every failing case's files to
``DIR/<surface>-<i>/`` (with ``mutation.txt``). Exits 1 if any case crashed, hung or ran out of memory.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from fuzz_harness import DEFAULT_MEMORY, DEFAULT_TIMEOUT, FAILURES, OUTCOMES, table  # noqa: E402
from fuzz_surfaces import SURFACES, fuzz  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--surface", default="all", choices=["all", *SURFACES])
    p.add_argument("--cases", type=int, default=200)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--first", type=int, default=0, help="index of the first case (to reproduce one)")
    p.add_argument("--jobs", type=int, default=1, help="cases run at once")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per case")
    p.add_argument("--memory-gb", type=float, default=DEFAULT_MEMORY / 2**30, help="address-space limit per case")
    p.add_argument("--save", default=None, help="copy failing cases here")
    p.add_argument("-v", "--verbose", action="store_true", help="print every failing case")
    args = p.parse_args(argv)
    surfaces = list(SURFACES) if args.surface == "all" else [args.surface]
    rows: dict[str, dict[str, int]] = {}
    failed = False
    for s in surfaces:
        start = time.perf_counter()
        results = fuzz(s, args.cases, args.seed, first=args.first, jobs=args.jobs, timeout=args.timeout,
                       memory=int(args.memory_gb * 2**30), save=args.save, progress=True)
        rows[SURFACES[s].title] = dict(Counter(r.outcome for r in results))
        bad = [r for r in results if r.outcome in FAILURES]
        failed |= bool(bad)
        print(f"{s}: {len(results)} cases in {time.perf_counter() - start:.1f} s, "
              + ", ".join(f"{o} {sum(r.outcome == o for r in results)}" for o in OUTCOMES), flush=True)
        groups = Counter((r.outcome, r.detail.split(" at ")[-1] if " at " in r.detail else r.detail[:80]) for r in bad)
        for (outcome, where), n in groups.most_common():
            example = next(r for r in bad if r.outcome == outcome and where in r.detail)
            print(f"  {n:5d} {outcome} {where}  e.g. case {example.index} [{example.mutation}]: {example.detail[:200]}")
        if args.verbose:
            for r in bad:
                print(f"  case {r.index} {r.outcome} [{r.mutation}] {r.detail}")
    print()
    print(f"seed {args.seed}, cases {args.first}..{args.first + args.cases - 1} per surface, timeout {args.timeout} s, "
          f"address space {args.memory_gb} GiB")
    print(table(rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
