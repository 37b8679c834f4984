"""What a visitor may run in the kernel lab: the caps (length, bytes, arithmetic), a run's
request and shapes, its estimated size, and why a run is refused."""

import dataclasses
import logging
import math
import os

log = logging.getLogger(__name__)

DTYPES = ("float32", "bfloat16", "float16")
DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2, "float64": 8}
MASKING_CODES = ("causal", "mask", "none")  # LabRequest.masking: what SDPA is passed
SWEEP_START = 256
REFERENCE_FULL_PAIRS = 2 ** 22  # compare every output row when b*h*n^2 is at most this
REFERENCE_ROWS = 256  # else: the last rows of two heads of batch 0
GB = 1e9
MB = 1e6


@dataclasses.dataclass(frozen=True)
class Caps:
    max_length: int = 8192  # tokens per prompt
    max_bytes: float = 1.5 * GB  # what one call may hold: inputs, output, mask, math's scores
    max_flops: float = 5e11  # 4 * batch * heads * n^2 * head_dim: about 3 s a call on a core
    numpy_max_pairs: int = 2 ** 27  # batch * heads * n^2 for the (slow) numpy reference
    run_timeout_s: float = 30.0
    sweep_timeout_s: float = 60.0
    threads: int = max(1, (os.cpu_count() or 2) // 2)  # torch.set_num_threads for lab runs


ENV = {"max_length": ("AE_LAB_MAX_LENGTH", int), "max_bytes": ("AE_LAB_MAX_GB", float),
       "run_timeout_s": ("AE_LAB_TIMEOUT_S", float),
       "sweep_timeout_s": ("AE_LAB_SWEEP_TIMEOUT_S", float), "threads": ("AE_LAB_THREADS", int)}


def caps_from_env(env=None):  # -> Caps, with AE_LAB_* environment variables applied
    env = os.environ if env is None else env
    changes = {}
    for name, (var, kind) in ENV.items():
        raw = env.get(var)
        if not raw:
            continue
        try:
            value = kind(raw)
        except ValueError:
            log.warning("ignoring %s=%r: not a number", var, raw)
            continue
        if value > 0:
            changes[name] = value * GB if name == "max_bytes" else value
    return dataclasses.replace(Caps(), **changes)


@dataclasses.dataclass(frozen=True)
class LabRequest:
    batch: int = 1
    heads: int = 8  # query heads
    kv_heads: int = 8
    length: int = 1024  # prompt length n: queries = keys = n (a prefill)
    head_dim: int = 64
    dtype: str = "float32"
    masking: str = "causal"  # "causal" (is_causal=True), "mask" (explicit triangle), "none"
    backend: str = "auto"

    @property
    def causal(self):
        return self.masking == "causal"

    @property
    def bytes_per_value(self):
        return DTYPE_BYTES[self.dtype]


def shape_error(req):  # LabRequest -> why these shapes cannot run at all, or None
    for name in ("batch", "heads", "kv_heads", "length", "head_dim"):
        if getattr(req, name) < 1:
            return f"{name.replace('_', ' ')} must be at least 1"
    if req.heads % req.kv_heads:
        fits = ", ".join(str(d) for d in range(1, req.heads + 1) if req.heads % d == 0)
        return (f"KV heads ({req.kv_heads}) must divide query heads ({req.heads}): each KV head "
                f"serves an equal group of query heads. Try {fits}.")
    if req.dtype not in DTYPES:
        return f"dtype must be one of {', '.join(DTYPES)}"
    if req.masking not in MASKING_CODES:
        return f"masking must be one of {', '.join(MASKING_CODES)}"
    return None


@dataclasses.dataclass(frozen=True)
class Estimate:
    inputs: int  # q, k, v and the output, in the run dtype
    mask: int  # an explicit mask: the bool triangle and the float copy the kernel makes
    scores: int  # the math path's working set: scores + softmax in float32, + a bool mask
    score_matrix: int  # batch x heads x n^2 x bytes: the matrix an eager/math path builds

    @property
    def total(self):
        return self.inputs + self.mask + self.scores


def pairs(req):  # -> batch * heads * n^2: (query, key) pairs of a naive prefill
    return req.batch * req.heads * req.length ** 2


def flops(req):  # -> 4 * batch * heads * n^2 * head_dim (a multiply-add = 2, score + value)
    return 4 * pairs(req) * req.head_dim


def estimate(req):  # LabRequest -> Estimate of the bytes one call holds (CPU, measured here)
    b, h, kv, n, d, by = req.batch, req.heads, req.kv_heads, req.length, req.head_dim, \
        req.bytes_per_value
    inputs = (2 * b * h * n * d + 2 * b * kv * n * d) * by
    mask = n * n * (1 + by) if req.masking == "mask" else 0
    scores = 0
    if req.backend == "math":
        # PyTorch 2.13 on CPU, measured: ~9.9 bytes per (query, key) pair in every dtype; the
        # math path widens 16-bit inputs to float32 and keeps scores and their softmax.
        scores = pairs(req) * (2 * 4 + (0 if req.masking == "none" else 1))
    return Estimate(inputs, mask, scores, pairs(req) * by)


def fmt_bytes(n):  # bytes -> "1.50 GB" / "34 MB" / "12 kB" (decimal units, as the UI says)
    if n >= GB:
        return f"{n / GB:.2f} GB"
    if n >= MB:
        return f"{n / MB:,.0f} MB" if n >= 10 * MB else f"{n / MB:.1f} MB"
    return f"{n / 1e3:,.0f} kB"


SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def times_ten(x):  # 5e11 -> "5 × 10¹¹"; 2.7e11 -> "2.7 × 10¹¹" (app.kit.fmt.sci: "5.0e+11")
    exponent = math.floor(math.log10(x))
    mantissa = f"{x / 10 ** exponent:.2g}"
    return f"{mantissa} × 10{str(exponent).translate(SUPERSCRIPT)}"


def refusal(req, caps):  # LabRequest, Caps -> why the lab will not run it, or None
    problem = shape_error(req)
    if problem:
        return problem
    if req.length > caps.max_length:
        return (f"Refused: a prompt of {req.length:,} tokens is over this server's cap of "
                f"{caps.max_length:,} tokens per run.")
    est = estimate(req)
    if est.total > caps.max_bytes:
        what = "q, k, v and the output"
        if est.mask:
            what += ", the explicit mask"
        if est.scores:
            what += (f", and the math path's {req.batch * req.heads:,} × {req.length:,}² "
                     "scores and softmax (it builds the whole n × n matrix)")
        return (f"Refused: this run would hold about {fmt_bytes(est.total)} ({what}), over "
                f"this server's cap of {fmt_bytes(caps.max_bytes)} per run.")
    if flops(req) > caps.max_flops:
        return (f"Refused: this run is {times_ten(flops(req))} floating-point operations "
                f"(4 × batch × heads × n² × head_dim), over this server's cap of "
                f"{times_ten(caps.max_flops)} per call.")
    if req.backend == "numpy" and pairs(req) > caps.numpy_max_pairs:
        return (f"Refused: the numpy reference computes {pairs(req):,} scores one head at a time; "
                f"this server caps it at {caps.numpy_max_pairs:,} (batch × heads × n²).")
    return None


def sweep_lengths(caps, start=SWEEP_START):  # -> (256, 512, ..., max_length), doubling
    out, n = [], start
    while n <= caps.max_length:
        out.append(n)
        n *= 2
    return tuple(out) or (caps.max_length,)


