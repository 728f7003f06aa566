"""Padding conventions: framework pads → TOSA's [top, bottom, left, right] (and 3-D) lists.

ONNX gives ``pads`` as [x1_begin, x2_begin, ..., x1_end, x2_end, ...] and ``auto_pad`` modes;
TOSA wants per spatial axis (before, after) in order, and output sizes that divide exactly
(spec §2.3: idiv_check). When a framework's floor division drops input rows, the lowering trims the
excess padding at the end (the dropped rows would never be read).
"""

from __future__ import annotations

from collections.abc import Sequence


def onnx_pads_to_pairs(pads: Sequence[int], spatial: int) -> list[tuple[int, int]]:
    if not pads:
        return [(0, 0)] * spatial
    if len(pads) != 2 * spatial:
        raise ValueError(f"pads has {len(pads)} values, expected {2 * spatial}")
    return [(int(pads[i]), int(pads[i + spatial])) for i in range(spatial)]


def auto_pad_pairs(mode: str, in_sizes: Sequence[int], kernel: Sequence[int], stride: Sequence[int],
                   dilation: Sequence[int]) -> list[tuple[int, int]]:
    """SAME_UPPER / SAME_LOWER / VALID / NOTSET padding per spatial axis (ONNX semantics)."""
    pairs = []
    for size, k, s, d in zip(in_sizes, kernel, stride, dilation):
        if mode in ("SAME_UPPER", "SAME_LOWER"):
            out = -(-size // s)
            eff = (k - 1) * d + 1
            total = max(0, (out - 1) * s + eff - size)
            small, big = total // 2, total - total // 2
            pairs.append((small, big) if mode == "SAME_UPPER" else (big, small))
        else:
            pairs.append((0, 0))
    return pairs


def exact_pairs(in_sizes: Sequence[int], kernel: Sequence[int], stride: Sequence[int], dilation: Sequence[int],
                pairs: Sequence[tuple[int, int]], ceil_mode: bool = False) -> tuple[list[tuple[int, int]], list[int]]:
    """Adjust end padding so (size + pads - eff) divides by stride exactly; returns (pairs, output sizes).

    Floor mode trims end padding (and, if needed, the caller slices the input); ceil mode adds end
    padding so the last partial window exists. Returns the adjusted pairs and the output sizes.
    """
    out_pairs, outs = [], []
    for size, k, s, d, (b, e) in zip(in_sizes, kernel, stride, dilation, pairs):
        eff = (k - 1) * d + 1
        span = size + b + e - eff
        if ceil_mode:
            out = -(-span // s) + 1
            if (out - 1) * s >= size + b:  # the last window must start inside input or begin padding
                out -= 1
        else:
            out = span // s + 1
        need = (out - 1) * s + eff - size - b  # end padding that makes it exact
        out_pairs.append((b, need))
        outs.append(out)
    return out_pairs, outs
