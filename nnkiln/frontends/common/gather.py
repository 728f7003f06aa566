"""Gather helpers shared by the frontends (ONNX GatherND, TFLite GATHER_ND)."""

from __future__ import annotations

import math

import numpy as np


def gather_nd(data: np.ndarray, indices: np.ndarray, batch_dims: int = 0) -> np.ndarray:
    """GatherND on numpy arrays (indices already normalised, non-negative): the last indices dimension indexes
    the leading non-batch data dimensions (ONNX GatherND; TFLite/TF ``gather_nd`` is ``batch_dims = 0``)."""
    bshape = data.shape[:batch_dims]
    q = indices.shape[-1]
    nb = math.prod(bshape)
    d = data.reshape((nb,) + data.shape[batch_dims:])
    ind = indices.reshape((nb, -1, q))
    out = np.stack([d[b][tuple(ind[b].T)] for b in range(nb)]) if nb else np.zeros((0,))
    return out.reshape(indices.shape[:-1] + data.shape[batch_dims + q:])
