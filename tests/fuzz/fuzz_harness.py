"""Running fuzz cases in isolation and classifying what happened.

Each case runs in a forked child with an address-space limit (``RLIMIT_AS``) and a wall-clock timeout; the child
writes one JSON line (the outcome) into a pipe and exits with ``os._exit``. Outcomes:

- ``accepted``: the entry point returned;
- ``error``: it raised an ``NnkilnError`` (a clean refusal);
- ``crash``: any other exception escaped, or the child died of a signal (the bug class the fuzzer hunts);
- ``hang``: no answer within the timeout (the child is killed);
- ``oom``: ``MemoryError``, i.e. an allocation beyond the address-space limit was attempted.

The targets of issue 21 are zero ``crash``, ``hang`` and ``oom``.
"""

from __future__ import annotations

import json
import os
import resource
import select
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

OUTCOMES = ("accepted", "error", "crash", "hang", "oom")
FAILURES = ("crash", "hang", "oom")
DEFAULT_TIMEOUT = 10.0
DEFAULT_MEMORY = 4 << 30


@dataclass
class Result:
    """What one case did: its index, outcome, a one-line detail (exception, location) and its duration."""

    index: int
    outcome: str
    detail: str = ""
    mutation: str = ""
    seconds: float = 0.0


def _where(tb: traceback.StackSummary) -> str:
    """The innermost frame in nnkiln (else the innermost frame), as ``file:line (function)``."""
    frames = [f for f in tb if "/nnkiln/" in f.filename] or list(tb)
    if not frames:
        return "?"
    f = frames[-1]
    return f"{f.filename.split('/nnkiln/')[-1]}:{f.lineno} ({f.name})"


def classify(fn: Callable[[], None]) -> tuple[str, str]:
    """Run ``fn`` here and classify it (the child's side of ``run_case``)."""
    from nnkiln.errors import NnkilnError

    try:
        fn()
    except NnkilnError as err:
        return "error", f"{type(err).__name__}: {str(err)[:300]}"
    except MemoryError as err:
        return "oom", f"MemoryError: {str(err)[:200]} at {_where(traceback.extract_tb(err.__traceback__))}"
    except BaseException as err:  # noqa: BLE001 - everything else is what the fuzzer reports
        where = _where(traceback.extract_tb(err.__traceback__))
        return "crash", f"{type(err).__name__}: {str(err)[:300]} at {where}"
    return "accepted", ""


def _child(fn: Callable[[], None], w: int, memory: int) -> None:
    try:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        import warnings

        warnings.simplefilter("ignore")
        outcome, detail = classify(fn)
        os.write(w, (json.dumps({"outcome": outcome, "detail": detail}) + "\n").encode())
    finally:
        os._exit(0)


@dataclass
class _Running:
    pid: int
    fd: int
    index: int
    mutation: str
    start: float
    data: bytearray = field(default_factory=bytearray)


def _finish(run: _Running, timed_out: bool) -> Result:
    if timed_out:
        os.kill(run.pid, signal.SIGKILL)
    _, status = os.waitpid(run.pid, 0)
    os.close(run.fd)
    seconds = time.perf_counter() - run.start
    if timed_out:
        return Result(run.index, "hang", "no answer within the timeout", run.mutation, seconds)
    try:
        msg = json.loads(bytes(run.data).decode())
        return Result(run.index, msg["outcome"], msg["detail"], run.mutation, seconds)
    except ValueError:
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            outcome = "oom" if sig == signal.SIGKILL else "crash"  # SIGKILL unasked: the kernel's OOM killer
            return Result(run.index, outcome, f"killed by signal {signal.Signals(sig).name}", run.mutation, seconds)
        return Result(run.index, "crash", f"exited with status {status} without an answer", run.mutation, seconds)


def run_cases(cases: Iterable[tuple[int, str, Callable[[], None]]], *, jobs: int = 1,
              timeout: float = DEFAULT_TIMEOUT, memory: int = DEFAULT_MEMORY) -> Iterator[Result]:
    """Run ``(index, mutation, fn)`` cases, up to ``jobs`` at once, each in its own forked child; yields results
    as they finish (not necessarily in order)."""
    running: dict[int, _Running] = {}
    pending = iter(cases)
    exhausted = False
    while running or not exhausted:
        while not exhausted and len(running) < jobs:
            try:
                index, mutation, fn = next(pending)
            except StopIteration:
                exhausted = True
                break
            r, w = os.pipe()
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                os.close(r)
                _child(fn, w, memory)
            os.close(w)
            running[r] = _Running(pid, r, index, mutation, time.perf_counter())
        if not running:
            break
        now = time.perf_counter()
        wait = max(0.0, min(run.start + timeout - now for run in running.values()))
        ready, _, _ = select.select(list(running), [], [], wait)
        for fd in ready:
            chunk = os.read(fd, 65536)
            if chunk:
                running[fd].data += chunk
            else:
                yield _finish(running.pop(fd), timed_out=False)
        now = time.perf_counter()
        for fd in [fd for fd, run in running.items() if now - run.start > timeout]:
            yield _finish(running.pop(fd), timed_out=True)


def table(rows: dict[str, dict[str, int]]) -> str:
    """A markdown table: surface, cases, then one column per outcome."""
    head = "| surface | cases | accepted | clean NnkilnError | other exception | hang | out of memory |"
    lines = [head, "|---|---|---|---|---|---|---|"]
    for name, counts in rows.items():
        total = sum(counts.get(o, 0) for o in OUTCOMES)
        lines.append(f"| {name} | {total} | " + " | ".join(str(counts.get(o, 0)) for o in OUTCOMES) + " |")
    return "\n".join(lines)
