"""The fence for torch: every private name and undocumented surface of PyTorch that kernels
depends on, what each is for, and the version checked.

Nothing outside this module reaches a private name of torch; tests/test_fence.py scans the
sources and fails on a new one elsewhere, and tests/test_kernels.py checks that each name
below is still there and still says what kernels reads from it (the CUDA-only ones skip,
saying so, on a machine without a GPU). Checked on PyTorch 2.13.0 (CPU build).

1. torch._fused_sdp_choice(q, k, v, mask, dropout, is_causal, scale=, enable_gqa=)
   The function scaled_dot_product_attention itself calls to pick a kernel: asked on the
   very tensors and under the very sdpa_kernel settings of a call, it says which kernel runs
   (an SDPBackend value, -1 when none can). No public API answers this before the call.
2. torch._C._get_sdp_priority_order()
   The order the dispatcher tries the fused kernels in, for the environment readout.
3. The aten operators SDPA dispatches to (KERNEL_OPS): the names torch.profiler records,
   read to see which kernel actually ran.
4. The text of PyTorch's debug warnings (DEBUG_HEADERS, TRIGGERED): the header that names
   the kernel the reasons after it belong to, and the C++ source location to strip.

torch is never imported here: callers pass the module in, so `import kernels` works without it.
"""

import re

CHECKED = "2.13"  # the torch minor these were read from

# (internal, where it lives, what we do with it)
INTERNALS = (
    ("torch._fused_sdp_choice", "torch", "asked which kernel SDPA would run"),
    ("torch._C._get_sdp_priority_order", "torch._C", "read: the fused kernels' order"),
)

# aten operators SDPA dispatches to -> the backend names kernels.dispatch uses (NAMES)
KERNEL_OPS = {
    "aten::_scaled_dot_product_flash_attention_for_cpu": "flash attention",
    "aten::_scaled_dot_product_flash_attention": "flash attention",
    "aten::_scaled_dot_product_efficient_attention": "efficient attention",
    "aten::_scaled_dot_product_cudnn_attention": "cudnn attention",
    "aten::_scaled_dot_product_attention_math": "math",
    "aten::_scaled_dot_product_attention_math_for_mps": "math",
    "aten::_scaled_dot_product_fused_attention_overrideable": "overrideable",
}

# headers PyTorch warns before the debug reasons of one kernel (sdp_utils.cpp, sdp_utils_cpp.cpp)
DEBUG_HEADERS = {"memory efficient kernel": "efficient attention",
                 "flash attention kernel": "flash attention",
                 "cudnn attention kernel": "cudnn attention"}
# the source location PyTorch appends to a warning raised from C++
TRIGGERED = re.compile(r"\s*\(Triggered internally at [^)]*\)\s*$")


def fused_sdp_choice(torch, q, k, v, mask, is_causal, **kwargs):  # -> SDPBackend value or -1
    return int(torch._fused_sdp_choice(q, k, v, mask, 0.0, is_causal, **kwargs))


def sdp_priority_order(torch):  # -> (SDPBackend value, ...) in the order tried, or None
    order = getattr(torch._C, "_get_sdp_priority_order", None)
    return None if order is None else tuple(int(i) for i in order())
