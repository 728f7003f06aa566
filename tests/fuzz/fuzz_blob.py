"""Structure-aware edits of blobs: decode a valid blob, change one or more fields (metadata values of the wrong type
or size, kernel attrs, buffer offsets/sizes/shapes, io shapes, operands, barriers), re-encode it with valid
checksums. The decoder then sees well-formed containers holding hostile contents."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

from fuzz_mutators import INTERESTING_INTS

WRONG_VALUES: list[Any] = [None, True, -1, 0, 1, 2**31, 2**35, 2**63, 1.5, float("inf"), "x", "", [], [1, 2], {},
                           {"a": 1}, [[1]], -(2**40)]


def _value_like(old: Any, rng: random.Random) -> Any:
    """A hostile replacement: the wrong type, or a boundary value of the right one."""
    if rng.random() < 0.5:
        return rng.choice(WRONG_VALUES)
    if isinstance(old, bool):
        return not old
    if isinstance(old, int):
        return rng.choice(INTERESTING_INTS)
    if isinstance(old, (tuple, list)) and old:
        items = list(old)
        k = rng.randrange(len(items))
        items[k] = _value_like(items[k], rng)
        if rng.random() < 0.3:
            items = items[: rng.randrange(len(items))] if rng.random() < 0.5 else items * 2
        return tuple(items)
    if isinstance(old, str):
        return rng.choice(["", "bogus", old * 2, "tosa.conv2d", "rt.fused"])
    if isinstance(old, dict) and old:
        key = rng.choice(sorted(old))
        return {**old, key: _value_like(old[key], rng)}
    return rng.choice(WRONG_VALUES)


def _edit(blob: Any, rng: random.Random) -> str:
    choice = rng.randrange(8)
    if choice == 0:
        meta = blob.metadata
        key = rng.choice(sorted(meta) + ["output_dtypes", "ignored_inputs", "threads", "gemm", "compile_seconds"])
        if rng.random() < 0.1:
            meta.pop(key, None)
        elif key == "arena_bytes" and rng.random() < 0.5:
            meta[key] = rng.choice([2**35, 2**36, 2**33, 2**40])
        else:
            meta[key] = _value_like(meta.get(key), rng)
        return f"metadata {key}"
    if choice in (1, 2) and blob.tasks:
        i = rng.randrange(len(blob.tasks))
        t = blob.tasks[i]
        attrs = dict(t.args.get("attrs", {}))
        if attrs and rng.random() < 0.8:
            key = rng.choice(sorted(attrs))
            attrs[key] = None if rng.random() < 0.05 else _value_like(attrs[key], rng)
            if rng.random() < 0.1:
                del attrs[key]
        else:
            key = "kernel"
            t.kernel = rng.choice([tk.kernel for tk in blob.tasks] + ["tosa.transpose", "unknown.kernel"])
        blob.tasks[i] = dataclasses.replace(t, args={**t.args, "attrs": attrs})
        return f"task attr {key}"
    if choice == 3 and blob.tasks:
        i = rng.randrange(len(blob.tasks))
        t = blob.tasks[i]
        n = len(blob.buffers)
        ins, outs = list(t.ins), list(t.outs)
        group = ins if (rng.random() < 0.5 and ins) or not outs else outs
        if group:
            group[rng.randrange(len(group))] = rng.randrange(n)
        if rng.random() < 0.2:
            ins = ins[:-1] if rng.random() < 0.5 else ins + [rng.randrange(n)]
        blob.tasks[i] = dataclasses.replace(t, ins=tuple(ins), outs=tuple(outs))
        return "task operands"
    if choice in (4, 5) and blob.buffers:
        from nnkiln.blob.format import _itemsize

        i = rng.randrange(len(blob.buffers))
        b = blob.buffers[i]
        what = rng.randrange(4)
        if what == 0 and b.shape:
            shape = list(b.shape)
            shape[rng.randrange(len(shape))] = rng.choice([0, 1, 2, 3, 2**20, 2**31, 2**39])
            b = dataclasses.replace(b, shape=tuple(shape))
            if rng.random() < 0.8:  # consistent size: the check that stays is the memory bound
                size = _itemsize(b.kind)
                for d in shape:
                    size *= d
                b = dataclasses.replace(b, size=size)
        elif what == 1:
            b = dataclasses.replace(b, offset=rng.choice([0, 1, 64, 2**32, b.offset + 64, max(0, b.offset - 64)]))
        elif what == 2:
            b = dataclasses.replace(b, shape=tuple(reversed(b.shape)))
        else:
            b = dataclasses.replace(b, alias_of=rng.choice([-1, 0, i - 1, i]))
        blob.buffers[i] = b
        return "buffer"
    if choice == 6 and blob.barriers:
        i = rng.randrange(len(blob.barriers))
        blob.barriers[i] = dataclasses.replace(blob.barriers[i], physical_id=rng.choice([0, 1, 2**31, 7]))
        return "barrier"
    if blob.tasks:
        i = rng.randrange(len(blob.tasks))
        t = blob.tasks[i]
        blob.tasks[i] = dataclasses.replace(t, executor_index=rng.choice([0, 1, 2, 2**31]),
                                            waits=t.waits[:0] if rng.random() < 0.5 else t.waits)
        if rng.random() < 0.3:
            blob.tasks.insert(rng.randrange(len(blob.tasks) + 1), blob.tasks.pop(i))
        return "task order/executor"
    return "nothing"


def mutate_decoded(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """Decode, edit 1-3 fields, re-encode (valid checksums)."""
    from nnkiln.blob.reader import decode
    from nnkiln.blob.writer import encode

    blob = decode(data)
    blob.constants = bytes(blob.constants)
    blob.buffers, blob.tasks, blob.barriers = list(blob.buffers), list(blob.tasks), list(blob.barriers)
    edits = [_edit(blob, rng) for _ in range(rng.randint(1, 3))]
    return encode(blob), "decoded: " + "+".join(edits)
