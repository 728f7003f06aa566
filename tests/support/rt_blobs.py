"""Blobs built directly in Python for the runtime tests (no xDSL)."""

from __future__ import annotations

import numpy as np

from nnkiln.blob.format import Blob
from nnkiln.blob.writer import BlobBuilder
from nnkiln.kinds import Kind


def two_executor_blob(seed: int = 0) -> tuple[Blob, dict[str, np.ndarray]]:
    """y = clamp(conv3x3(x) + b, 0, 6) on executor 0, then z = y + x1x1-conv(x) on executor 1 (barrier)."""
    rng = np.random.default_rng(seed)
    b = BlobBuilder()
    x = b.add_io("x", Kind.F32, (1, 6, 6, 3), output=False)
    z = b.add_io("z", Kind.F32, (1, 6, 6, 4), output=True)
    w1 = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b1 = rng.standard_normal(4).astype(np.float32)
    w2 = rng.standard_normal((4, 1, 1, 3)).astype(np.float32)
    b2 = np.zeros(4, np.float32)
    cw1, cb1, cw2, cb2 = (b.add_const(a, Kind.F32) for a in (w1, b1, w2, b2))
    t1 = b.add_arena(Kind.F32, (1, 6, 6, 4), 0)
    t2 = b.add_arena(Kind.F32, (1, 6, 6, 4), 576)
    bar0 = b.add_barrier(0)
    bar1 = b.add_barrier(1)
    conv = {"pad": (1, 1, 1, 1), "stride": (1, 1), "dilation": (1, 1), "input_zp": 0, "weight_zp": 0}
    b.add_task("tosa.conv2d", [x, cw1, cb1], [t1], attrs=conv,
               post_ops=[{"kernel": "tosa.clamp", "attrs": {"min_val": 0.0, "max_val": 6.0}}],
               executor_index=0, updates=[bar0])
    b.add_task("tosa.conv2d", [x, cw2, cb2], [t2], attrs={**conv, "pad": (0, 0, 0, 0)}, executor_index=1,
               updates=[bar1])
    b.add_task("tosa.add", [t1, t2], [z], executor_index=1, waits=[bar0])
    # bar1 is updated but never waited: a barrier with producers and no consumer is legal
    return b.finish(arena_lower_bound_bytes=1152, target="cpu", pipeline="test"), {
        "w1": w1, "b1": b1, "w2": w2, "b2": b2}
