"""The numpy reference for batched attention: [batch, heads, n, head_dim] in, the same out.

Shape checks, grouped-query attention (key/value heads may be fewer than query heads:
query head h reads key/value head h // group), and three ways to compute it on every
(batch, head): naive (n_q x n_k scores, online_softmax.naive_attention), tiled
(FlashAttention-style, one tile of scores at a time, online_softmax.tiled_attention) and
masked (an explicit bool or additive mask). kernels builds on this module (its numpy backend
and its shape checks are these); attention_core.attend is the one entry that picks a backend.

AttendResult is what every attend() in the project returns: the output and which backend
ran. This module imports numpy and attention_core only.

"causal" follows the documents: query i sits at position i + (n_k - n_q), so the last
query sees every key (the decode picture). When n_q = n_k that is the ordinary lower
triangle.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from attention_core.online_softmax import naive_attention, tiled_attention

NUMPY = "numpy reference"  # the backend name of everything here


@dataclass(frozen=True)
class AttendResult:
    output: Any  # [b, h, n_q, d_v]: numpy in -> numpy out; a tensor keeps q's device and dtype
    backend: str  # what ran: "flash attention", "efficient attention", "cudnn attention",
    #               "math", "overrideable" or "numpy reference"
    device: str  # where it ran, e.g. "cpu", "cuda:0"
    dtype: str  # the dtype it ran in, e.g. "float32", "bfloat16"
    reasons: Mapping[str, tuple] = field(default_factory=dict)  # backend -> why it did not run
    notes: tuple = ()  # what was done to the inputs on the way (casts, expanded kv heads, masks)
    observed: tuple | None = None  # kernels torch.profiler saw (kernels.attend(..., verify=True))


def kv_group(q_shape, k_shape, v_shape, *, causal=False):
    # [b, h, n_q, d], [b, h_kv, n_k, d], [b, h_kv, n_k, d_v] -> h // h_kv (query heads per kv head)
    q_shape, k_shape, v_shape = tuple(q_shape), tuple(k_shape), tuple(v_shape)
    for name, shape in (("q", q_shape), ("k", k_shape), ("v", v_shape)):
        if len(shape) != 4:
            raise ValueError(f"{name} must be [batch, heads, n, head_dim], got shape {shape}")
    if not q_shape[0] == k_shape[0] == v_shape[0]:
        raise ValueError(f"batch sizes differ: q {q_shape[0]}, k {k_shape[0]}, v {v_shape[0]}")
    if k_shape[1] != v_shape[1] or k_shape[2] != v_shape[2]:
        raise ValueError(f"k {k_shape} and v {v_shape} must have the same heads and length")
    if q_shape[3] != k_shape[3]:
        raise ValueError(f"q and k head_dim differ: {q_shape[3]} vs {k_shape[3]}")
    if k_shape[1] < 1 or q_shape[1] % k_shape[1]:
        raise ValueError(f"key/value heads ({k_shape[1]}) must divide query heads ({q_shape[1]})")
    if q_shape[2] < 1 or k_shape[2] < 1:
        raise ValueError(f"sequence lengths must be at least 1: n_q {q_shape[2]}, n_k {k_shape[2]}")
    if causal and q_shape[2] > k_shape[2]:
        raise ValueError(f"causal attention with more queries ({q_shape[2]}) than keys "
                         f"({k_shape[2]}) leaves the first queries nothing to attend to")
    return q_shape[1] // k_shape[1]


def per_head(fn, q, k, v, *, causal=False):
    # fn: [n_q, d], [n_k, d], [n_k, d_v] -> [n_q, d_v]
    # [b, h, n_q, d], [b, h_kv, n_k, d], [b, h_kv, n_k, d_v] -> [b, h, n_q, d_v]
    group = kv_group(q.shape, k.shape, v.shape, causal=causal)
    out = np.empty(q.shape[:3] + v.shape[3:], dtype=np.result_type(q, k, v))
    for b in range(q.shape[0]):
        for h in range(q.shape[1]):
            out[b, h] = fn(q[b, h], k[b, h // group], v[b, h // group])
    return out


def as_float_arrays(*arrays):  # numpy-convertible inputs -> float arrays (ints become float32)
    out = [np.asarray(a) for a in arrays]
    return [a if a.dtype.kind == "f" else a.astype(np.float32) for a in out]


def numpy_attention(q, k, v, *, causal=False, scale=None):
    # [b, h, n_q, d], [b, h_kv, n_k, d], [b, h_kv, n_k, d_v] -> [b, h, n_q, d_v]; n_q x n_k per head
    q, k, v = as_float_arrays(q, k, v)
    return per_head(lambda qh, kh, vh: naive_attention(qh, kh, vh, causal=causal, scale=scale),
                    q, k, v, causal=causal)


def tiled_numpy_attention(q, k, v, *, causal=False, scale=None, block=64):
    # [b, h, n_q, d], [b, h_kv, n_k, d], [b, h_kv, n_k, d_v] -> [b, h, n_q, d_v]; one tile per head
    q, k, v = as_float_arrays(q, k, v)
    return per_head(lambda qh, kh, vh: tiled_attention(qh, kh, vh, causal=causal, scale=scale,
                                                       block_q=block, block_k=block).output,
                    q, k, v, causal=causal)


def numpy_reference(q, k, v, *, causal=False, mask=None, scale=None):
    # [b, h, n_q, d], [b, h_kv, n_k, d], [b, h_kv, n_k, d_v], mask ~[b, h, n_q, n_k]
    #   -> [b, h, n_q, d_v]; mask: bool (True = attend) or additive float, or None
    q, k, v = as_float_arrays(q, k, v)
    if mask is None:
        return numpy_attention(q, k, v, causal=causal, scale=scale)
    mask = np.asarray(mask)
    scale = 1.0 / np.sqrt(q.shape[-1]) if scale is None else scale
    full = np.broadcast_to(mask, (*q.shape[:2], q.shape[2], k.shape[2]))
    index = iter([(b, h) for b in range(q.shape[0]) for h in range(q.shape[1])])

    def one_head(qh, kh, vh):  # [n_q, d], [n_k, d], [n_k, d_v] -> [n_q, d_v]
        m = full[next(index)]
        s = (qh @ kh.T) * scale
        s = np.where(m, s, -np.inf) if m.dtype == bool else s + m
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        return (e / e.sum(axis=-1, keepdims=True)) @ vh

    return per_head(one_head, q, k, v)


NOTE = "naive_attention on every (batch, head): n_q x n_k scores each"
ALL_KERNELS = ("flash attention", "efficient attention", "cudnn attention", "math")


def reference_result(q, k, v, *, causal=False, mask=None, scale=None,
                     why="torch is not installed"):
    # numpy-convertible [b, h, n_q, d], [b, h_kv, n_k, d] x2 -> AttendResult, backend NUMPY
    out = numpy_reference(q, k, v, causal=causal, mask=mask, scale=scale)
    return AttendResult(out, NUMPY, "cpu", str(out.dtype),
                        MappingProxyType({name: (why,) for name in ALL_KERNELS}), (NOTE,))
