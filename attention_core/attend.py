"""One attention call for the whole project: [batch, heads, n, head_dim] in, the same out.

attend() hands the work to kernels.attend (PyTorch's scaled_dot_product_attention, a fused
kernel where one applies) when torch imports, and otherwise runs the numpy reference kept
here: online_softmax.naive_attention on every (batch, head). Key/value heads may be fewer
than query heads (grouped-query attention): query head h reads key/value head h // group.
Nothing from torch or kernels is imported until attend() is called, so this module runs
wherever numpy runs.

"causal" follows the documents: query i sits at position i + (n_k - n_q), so the last
query sees every key (the decode picture). When n_q = n_k that is the ordinary lower
triangle.
"""

import numpy as np

from attention_core.online_softmax import naive_attention, tiled_attention


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


def torch_importable():  # -> bool, importing torch only when asked
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def attend(q, k, v, causal=False, scale=None):
    # [b, h, n_q, d], [b, h_kv, n_k, d], [b, h_kv, n_k, d_v] -> [b, h, n_q, d_v], same kind as q
    if torch_importable():
        from kernels import attend as kernel_attend  # lazy: kernels is torch's side of the project
        return kernel_attend(q, k, v, causal=causal, scale=scale).output
    return numpy_attention(q, k, v, causal=causal, scale=scale)
