"""torch's side of the project: fused SDPA dispatch, backend introspection, timing and memory.

attend() runs scaled dot-product attention and says which kernel ran (flash attention,
efficient attention, cudnn attention, math, or the numpy reference when torch is missing);
explain() says which would run for given shapes, and why the others were refused, before
running anything. RUN_LOCK is held by every section that chooses or runs a kernel
(sdpa_kernel flips process-wide flags): take it to ask the dispatcher without racing a run.
probe holds the timing and memory measurements the kernel lab shows.
torch is imported lazily: `import kernels` works without it.
"""

from kernels.dispatch import (
    BACKENDS,
    NUMPY,
    RUN_LOCK,
    AttendResult,
    Explanation,
    KernelUnavailable,
    attend,
    cuda_available,
    environment,
    explain,
    torch_or_none,
)

__all__ = ["BACKENDS", "NUMPY", "RUN_LOCK", "AttendResult", "Explanation", "KernelUnavailable",
           "attend", "cuda_available", "environment", "explain", "torch_or_none"]
