"""One attention call for the whole project: [batch, heads, n, head_dim] in, an AttendResult out.

attend() is the single entry that picks a backend. When torch imports, it hands the work to
kernels.attend (PyTorch's scaled_dot_product_attention, a fused kernel where one applies);
otherwise it runs the numpy reference (attention_core.reference). Either way the result says
which backend ran: result.backend is the kernel's name ("flash attention", "math", ...) or
"numpy reference", and result.output holds [b, h, n_q, d_v] in q's kind.

Nothing from torch or kernels is imported until attend() is called, and only attend() does
it, so this module runs wherever numpy runs. kernels builds on attention_core.reference, not
on this module, so no import goes round in a circle.

The reference's names (kv_group, numpy_attention, tiled_numpy_attention, ...) are re-exported
here for the callers that have always found them here.
"""

from attention_core.reference import (
    NUMPY,
    AttendResult,
    as_float_arrays,
    kv_group,
    numpy_attention,
    numpy_reference,
    per_head,
    reference_result,
    tiled_numpy_attention,
)

__all__ = ["NUMPY", "AttendResult", "as_float_arrays", "attend", "kv_group", "numpy_attention",
           "numpy_reference", "per_head", "tiled_numpy_attention", "torch_importable"]


def torch_importable():  # -> bool, importing torch only when asked
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def attend(q, k, v, causal=False, scale=None):
    # [b, h, n_q, d], [b, h_kv, n_k, d], [b, h_kv, n_k, d_v] -> AttendResult
    #   .output [b, h, n_q, d_v], same kind as q; .backend: the kernel that ran, or NUMPY
    if torch_importable():
        from kernels import attend as kernel_attend  # lazy: kernels is torch's side of the project
        return kernel_attend(q, k, v, causal=causal, scale=scale)
    return reference_result(*as_float_arrays(q, k, v), causal=causal, scale=scale)
