"""Which kernel would run for a request, asked of PyTorch's dispatcher before anything runs,
and remembered per request (dispatch depends only on the shapes, dtype, mask and backend)."""

import concurrent.futures

import kernels

# kernels.explain asks PyTorch's dispatcher under kernels' lock, because sdpa_kernel flips
# process-wide flags; a lab job holds that lock for the length of one torch call. The event
# loop must never wait on it, so a plan is made at once when the lock is free (or cached) and
# otherwise on this small thread, then applied back to the session.
EXPLAINER = concurrent.futures.ThreadPoolExecutor(max_workers=1,
                                                  thread_name_prefix="kernel-lab-explain")
_EXPLAINED = {}  # LabRequest -> Explanation (or the ValueError text); dispatch is per shape
_EXPLAINED_MAX = 1024


def explain(req, blocking=True):  # LabRequest -> Explanation | str (error) | None (lock busy)
    if req in _EXPLAINED:
        return _EXPLAINED[req]
    lock = kernels.RUN_LOCK
    if not lock.acquire(blocking=blocking):
        return None
    try:
        try:
            got = kernels.explain((req.batch, req.heads, req.length, req.head_dim),
                                  (req.batch, req.kv_heads, req.length, req.head_dim), req.dtype,
                                  None, req.causal, req.masking == "mask", backend=req.backend)
        except ValueError as e:
            got = str(e)
    finally:
        lock.release()
    if len(_EXPLAINED) >= _EXPLAINED_MAX:
        _EXPLAINED.clear()
    _EXPLAINED[req] = got
    return got
