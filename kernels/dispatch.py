"""Which SDPA kernel runs, and why the others were refused.

attend() runs torch.nn.functional.scaled_dot_product_attention on [batch, heads, n, head_dim]
inputs and reports the backend that actually ran, by asking PyTorch's own dispatcher
(the function SDPA itself calls, a private one: kernels/torch_internals.py) on the very
tensors and under the very sdpa_kernel settings of the call. explain() answers the same
question from shapes alone, before anything runs. Reasons come from PyTorch: the debug
warnings its checks emit (torch.backends.cuda.can_use_*_attention(params, debug=True) on
CUDA; the warnings the CPU dispatcher raises when the only kernel left refuses the inputs).

What this PyTorch does, checked on 2.13.0 (CPU build):
- on CPU the dispatcher knows two kernels, flash attention then math (sdp_utils_cpp.cpp);
  flash takes float32, float64, float16 and bfloat16, bool or float masks and enable_gqa;
- efficient attention and cuDNN attention exist only on CUDA;
- an explicit mask with is_causal=True is silently ANDed by the CPU flash kernel and rejected
  by math; here it is a ValueError on every device.

torch is imported inside the functions, never at module import, so `import kernels` works
without it and attend(backend="auto") falls back to the numpy reference.
"""

import contextlib
import threading
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from attention_core.reference import (  # kernels builds on the core's numpy reference
    ALL_KERNELS,
    NOTE,
    NUMPY,
    AttendResult,
    kv_group,
    numpy_reference,
)
from kernels.torch_internals import (  # torch's private names, fenced there
    DEBUG_HEADERS,
    KERNEL_OPS,
    TRIGGERED,
    fused_sdp_choice,
    sdp_priority_order,
)

BACKENDS = ("auto", "flash", "efficient", "cudnn", "math", "numpy")
# torch.nn.attention.SDPBackend values -> the names PyTorch's docs and warnings use
NAMES = {0: "math", 1: "flash attention", 2: "efficient attention", 3: "cudnn attention",
         4: "overrideable"}
FUSED_NAMES = ("flash attention", "efficient attention", "cudnn attention")
_ENUM = {"math": "MATH", "flash": "FLASH_ATTENTION", "efficient": "EFFICIENT_ATTENTION",
         "cudnn": "CUDNN_ATTENTION", "overrideable": "OVERRIDEABLE"}
BOTTOM_RIGHT = ("causal with n_q != n_k passed as an explicit bottom-right mask: PyTorch's "
                "is_causal aligns the triangle top-left")
# sdpa_kernel flips process-wide flags: every section that chooses a kernel or runs one under
# sdpa_kernel holds this (attend, explain, kernels.probe, the kernel lab's planner)
RUN_LOCK = threading.RLock()


class KernelUnavailable(RuntimeError):
    """The asked-for kernel cannot run these inputs here; .reasons holds PyTorch's reasons."""

    def __init__(self, message, reasons=None):
        self.reasons = MappingProxyType({k: tuple(v) for k, v in (reasons or {}).items()})
        lines = [message] + [f"  {name}: {'; '.join(why) or 'no reason given'}"
                             for name, why in self.reasons.items()]
        super().__init__("\n".join(lines))


@dataclass(frozen=True)
class Explanation:
    backend: str | None  # what would run; None when the asked-for kernel cannot
    device: str
    dtype: str
    reasons: Mapping[str, tuple] = field(default_factory=dict)
    notes: tuple = ()
    error: str | None = None  # the message attend() would raise

    def summary(self):  # -> a few lines of plain text for a readout
        head = (f"{self.backend} on {self.device} in {self.dtype}" if self.backend
                else f"nothing can run on {self.device}: {self.error}")
        lines = [head] + [f"note: {n}" for n in self.notes]
        lines += [f"{name} not used: {'; '.join(why)}" for name, why in self.reasons.items()]
        return "\n".join(lines)


def torch_or_none():  # -> the torch module, or None when it is not installed (or hidden)
    try:
        import torch
    except ImportError:
        return None
    return torch


def cuda_available():
    torch = torch_or_none()
    return bool(torch is not None and torch.cuda.is_available())


def environment():  # -> dict: what this process's PyTorch offers, for a readout or a log
    torch = torch_or_none()
    if torch is None:
        return {"torch": None, "cuda": False, "backends": (NUMPY,)}
    env = {"torch": torch.__version__, "cuda": torch.cuda.is_available(),
           "cuda_build": torch.version.cuda, "threads": torch.get_num_threads()}
    order = sdp_priority_order(torch)
    if order is not None:
        env["priority"] = tuple(NAMES.get(i, str(i)) for i in order)
    flags = {"flash attention": "flash_sdp_enabled", "efficient attention":
             "mem_efficient_sdp_enabled", "cudnn attention": "cudnn_sdp_enabled",
             "math": "math_sdp_enabled"}
    env["enabled"] = tuple(n for n, f in flags.items()
                           if getattr(torch.backends.cuda, f, lambda: False)())
    if env["cuda"]:
        env["device"] = torch.cuda.get_device_name()
        env["capability"] = torch.cuda.get_device_capability()
        env["bf16"] = torch.cuda.is_bf16_supported()
    return env


# ---------------------------------------------------------------- asking PyTorch

def clean(message):  # one warning's text, without the C++ source location
    return TRIGGERED.sub("", str(message)).strip()


def group_reasons(messages, default):  # [str] -> {backend name: [reason]} using PyTorch's headers
    out, current = {}, default
    for text in messages:
        low = text.lower()
        header = next((name for key, name in DEBUG_HEADERS.items()
                       if low.startswith(key) and low.rstrip(":").endswith("because")), None)
        if header:
            current = header
            out.setdefault(current, [])
        elif text:
            out.setdefault(current, []).append(text)
    return out


@contextlib.contextmanager
def captured():  # collects every warning raised inside, cleaned, into the yielded list
    got = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield got
    got.extend(clean(w.message) for w in caught)


def backend_enums(torch, names):  # ("flash", ...) -> [SDPBackend...] this torch knows
    from torch.nn.attention import SDPBackend
    return [getattr(SDPBackend, _ENUM[n]) for n in names if hasattr(SDPBackend, _ENUM[n])]


def fused_choice(torch, q, k, v, mask, is_causal, scale, gqa, allowed):
    # -> (SDPBackend index or -1, [warning text], error text or None), under sdpa_kernel(allowed)
    from torch.nn.attention import sdpa_kernel
    kwargs = {"scale": scale}
    if gqa:
        kwargs["enable_gqa"] = True
    ctx = sdpa_kernel(allowed) if allowed is not None else contextlib.nullcontext()
    index, error = -1, None
    with captured() as said:
        try:
            with ctx:
                index = fused_sdp_choice(torch, q, k, v, mask, is_causal, **kwargs)
        except TypeError as e:  # a torch without enable_gqa (< 2.5)
            error = f"this PyTorch does not take enable_gqa ({e})"
        except RuntimeError as e:
            error = clean(e)
    return index, said, error


def sdpa_params(torch, q, k, v, mask, is_causal, gqa):  # -> torch.backends.cuda.SDPAParams
    SDPAParams = torch.backends.cuda.SDPAParams
    try:
        return SDPAParams(q, k, v, mask, 0.0, is_causal, gqa)
    except TypeError:  # before 2.5 there was no enable_gqa argument
        return SDPAParams(q, k, v, mask, 0.0, is_causal)


_CAN_USE = {"flash attention": "can_use_flash_attention",
            "efficient attention": "can_use_efficient_attention",
            "cudnn attention": "can_use_cudnn_attention"}


def cuda_check(torch, name, params):  # -> (can run?, [PyTorch's debug reasons])
    fn = getattr(torch.backends.cuda, _CAN_USE[name], None)
    if fn is None:
        return False, [f"this PyTorch has no torch.backends.cuda.{_CAN_USE[name]}"]
    with captured() as said:
        ok = bool(fn(params, True))
    grouped = group_reasons(said, name)
    return ok, [r for rs in grouped.values() for r in rs]


def observed_kernels(fn):  # -> (fn(), tuple of backend names torch.profiler saw, in call order)
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        out = fn()
    seen = [KERNEL_OPS[e.name] for e in sorted(prof.events(), key=lambda e: e.time_range.start)
            if e.name in KERNEL_OPS]
    return out, tuple(dict.fromkeys(seen))


# ---------------------------------------------------------------- the plan

@dataclass(frozen=True)
class Plan:
    index: int  # SDPBackend value that runs, -1 when none can
    allowed: tuple | None  # the sdpa_kernel list to run under; None = PyTorch's own settings
    gqa: bool  # pass enable_gqa=True
    expand: bool  # repeat key/value heads up to the query heads first
    reasons: dict
    notes: tuple
    error: str | None


def expand_kv(k, v, group):  # [b, h_kv, n, d] -> [b, h_kv * group, n, d]; head h reads h // group
    return k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)


def allowed_for(torch, backend, require_fused):  # -> sdpa_kernel list, or None for PyTorch's own
    if backend == "auto":
        return backend_enums(torch, ("flash", "efficient", "cudnn", "overrideable")) \
            if require_fused else None
    return backend_enums(torch, (backend,))


def plan(torch, q, k, v, mask, is_causal, scale, backend, require_fused):
    # q, k, v, mask: tensors on the run device, in the run dtype -> Plan
    group = q.shape[1] // k.shape[1]
    allowed = allowed_for(torch, backend, require_fused)
    allowed_t = tuple(allowed) if allowed is not None else None
    if backend != "auto" and not allowed:
        return Plan(-1, allowed_t, False, False, {}, (),
                    f"this PyTorch has no SDPBackend.{_ENUM[backend]}")

    def good(index):  # a fused kernel, or math when math was asked for
        return index > 0 or (index == 0 and backend == "math")

    tried = {}
    variants = [(False, False)] if group == 1 else [(True, False), (False, True)]
    for gqa, expand in variants:
        kk, vv = expand_kv(k, v, group) if expand else (k, v)
        tried[(gqa, expand)] = fused_choice(torch, q, kk, vv, mask, is_causal, scale, gqa, allowed)
        if good(tried[(gqa, expand)][0]):
            break
    pick = next((key for key, t in tried.items() if good(t[0])),
                next((key for key, t in tried.items() if t[0] >= 0), variants[0]))
    index, said, error = tried[pick]
    gqa, expand = pick
    notes = []
    if expand:
        first = tried[(True, False)]
        why = "; ".join(first[1] + ([first[2]] if first[2] else [])) or \
            f"enable_gqa would give {NAMES.get(first[0], 'no kernel')}"
        notes.append(f"expanded key/value heads {k.shape[1]} -> {q.shape[1]} with "
                     f"repeat_interleave ({why})")
    elif gqa:
        notes.append(f"grouped-query attention: {k.shape[1]} key/value heads shared by "
                     f"{q.shape[1]} query heads (enable_gqa=True)")
    kk, vv = expand_kv(k, v, group) if expand else (k, v)
    reasons = why_not(torch, q, kk, vv, mask, is_causal, scale, gqa, allowed, index, backend,
                      require_fused)
    if index < 0:  # add what PyTorch said when it refused; only about the kernels we asked for
        asked = set(FUSED_NAMES) if backend == "auto" else {_name_of(backend)}
        for name, rs in group_reasons(said, _name_of(backend)).items():
            if name in asked:
                reasons[name] = list(dict.fromkeys(rs + reasons.get(name, [])))
        if error:
            reasons.setdefault(_name_of(backend), []).append(error)
    return Plan(index, allowed_t, gqa, expand, {k_: tuple(v_) for k_, v_ in reasons.items()},
                tuple(notes), None if index >= 0 else (error or "no kernel accepted the inputs"))


LONG_NAMES = {"flash": "flash attention", "efficient": "efficient attention",
              "cudnn": "cudnn attention", "math": "math", "auto": "flash attention"}


def _name_of(backend):  # "flash" -> "flash attention"; "auto" -> "flash attention" (the first)
    return LONG_NAMES.get(backend, "flash attention")


def why_not(torch, q, k, v, mask, is_causal, scale, gqa, allowed, chosen, backend,
            require_fused):  # -> {backend name: [reason]} for every kernel that did not run
    ran = NAMES.get(chosen)
    on_cuda = q.device.type == "cuda"
    params = sdpa_params(torch, q, k, v, mask, is_causal, gqa) if on_cuda else None
    allowed_names = None if allowed is None else {NAMES.get(int(a)) for a in allowed}
    out = {}
    for name in (*FUSED_NAMES, "math"):
        if name == ran:
            continue
        why = []
        excluded = allowed_names is not None and name not in allowed_names
        if excluded:
            why.append("excluded by require_fused (the math fallback would be silent)"
                       if name == "math" and require_fused else
                       f"excluded: backend={backend!r} asks for one kernel only")
        if name == "math":
            if not excluded and ran is not None:
                why.append("PyTorch tries math only after every fused kernel refuses")
        elif on_cuda:
            ok, rs = cuda_check(torch, name, params)
            if ok:
                why.append("would accept these inputs" if excluded or not ran else
                           f"accepts these inputs, but PyTorch ranks {ran} first")
            else:
                why.extend(rs or ["refused (PyTorch gave no debug reason)"])
        elif q.device.type == "cpu" and name != "flash attention":
            why.append("CUDA only: on CPU PyTorch chooses between flash attention and math "
                       "(aten/src/ATen/native/transformers/sdp_utils_cpp.cpp)")
        elif q.device.type == "cpu":  # flash on CPU did not run: ask it alone for its reasons
            flash = backend_enums(torch, ("flash",))
            index, said, error = fused_choice(torch, q, k, v, mask, is_causal, scale, gqa, flash)
            if index == 1:
                why.append("would accept these inputs" if excluded else
                           "accepts these inputs but is disabled in PyTorch's global SDPA settings")
            else:
                grouped = group_reasons(said, name)
                why.extend(grouped.get(name, []) + [r for n, rs in grouped.items()
                                                    if n != name for r in rs])
                if error and not why:
                    why.append(error)
        else:
            why.append(f"not checked on device {q.device.type!r}")
        out[name] = list(dict.fromkeys(why))
    return out


# ---------------------------------------------------------------- inputs

def call_device(torch, device, q):  # -> torch.device one attend/explain call runs on
    if device is not None:
        return torch.device(device)
    if torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device())
    if isinstance(q, torch.Tensor):
        return q.device
    return torch.device("cpu")


def run_dtype(torch, backend, dev, dtype):  # -> (torch dtype to run in, note or None)
    if dev.type != "cuda" or dtype not in (torch.float32, torch.float64):
        return dtype, None
    if backend not in ("auto", "flash", "cudnn"):
        return dtype, None
    half = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return half, (f"cast {str(dtype).removeprefix('torch.')} to {str(half).removeprefix('torch.')}:"
                  " flash and cuDNN attention on CUDA take only float16/bfloat16")


def to_tensor(torch, a, dev, dtype=None):  # numpy array or tensor -> tensor on dev
    t = a if isinstance(a, torch.Tensor) else torch.from_numpy(_writable(a))
    return t.to(device=dev, dtype=dtype) if dtype is not None else t.to(device=dev)


def _writable(a):  # torch.from_numpy warns on read-only arrays; copy those
    a = np.ascontiguousarray(a)
    return a if a.flags.writeable else a.copy()


def causal_allowed_mask(torch, n_q, n_k, dev):
    # -> [n_q, n_k] bool, True where a key is visible (SDPA's attn_mask): query i sees keys
    # ≤ i + n_k - n_q. attention_core.head.causal_mask is the opposite: True where hidden.
    return torch.ones(n_q, n_k, dtype=torch.bool, device=dev).tril(diagonal=n_k - n_q)


def check_call(q_shape, k_shape, v_shape, causal, has_mask, backend, require_fused):
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}; got {backend!r}")
    if causal and has_mask:
        raise ValueError("pass either causal=True or a mask, not both: PyTorch's CPU flash "
                         "kernel would silently AND them and its math kernel rejects them; "
                         "fold the causal triangle into your mask instead")
    if require_fused and backend in ("math", "numpy"):
        raise ValueError(f"require_fused=True contradicts backend={backend!r}")
    return kv_group(q_shape, k_shape, v_shape, causal=causal)


# ---------------------------------------------------------------- numpy path

def to_numpy(torch, a):  # tensor or array -> numpy array on the CPU (16-bit floats widened)
    if torch is not None and isinstance(a, torch.Tensor):
        a = a.detach().cpu()
        keep = a.dtype in (torch.float32, torch.float64, torch.bool) or not a.is_floating_point()
        return (a if keep else a.float()).numpy()
    return np.asarray(a)


def _shape(a):
    return tuple(a.shape)


def _dtype_name(a):
    return str(a.dtype).removeprefix("torch.")


# ---------------------------------------------------------------- public

def attend(q, k, v, *, causal=False, mask=None, scale=None, backend="auto", require_fused=False,
           device=None, verify=False):
    # q [b, h, n_q, d], k [b, h_kv, n_k, d], v [b, h_kv, n_k, d_v] -> AttendResult
    """Scaled dot-product attention through PyTorch's SDPA, reporting which kernel ran.

    backend: "auto" (CUDA if present, else torch on CPU, else numpy), or one of "flash",
    "efficient", "cudnn", "math", "numpy" to force it (KernelUnavailable when it cannot run).
    require_fused: run with math excluded, so a silent fallback raises KernelUnavailable.
    mask: bool (True = attend) or additive float, broadcastable to [b, h, n_q, n_k]; never
    together with causal=True. device: override where it runs. verify: also record the
    kernels torch.profiler sees (slower; the first call pays the profiler's start-up).
    """
    check_call(_shape(q), _shape(k), _shape(v), causal, mask is not None, backend, require_fused)
    torch = torch_or_none()
    if backend == "numpy" or (backend == "auto" and torch is None):
        if require_fused:
            raise KernelUnavailable("require_fused=True needs PyTorch, which is not importable",
                                    {"flash attention": ["torch is not installed"]})
        return _attend_numpy(torch, q, k, v, causal, mask, scale, backend)
    if torch is None:
        raise KernelUnavailable(f"backend={backend!r} needs PyTorch, which is not importable",
                                {_name_of(backend): ["torch is not installed"]})
    import torch.nn.functional as F
    from torch.nn.attention import sdpa_kernel

    dev = call_device(torch, device, q)
    dtype = q.dtype if isinstance(q, torch.Tensor) else \
        torch.from_numpy(np.empty(0, dtype=_numpy_dtype(q))).dtype
    dtype = dtype if dtype.is_floating_point else torch.float32
    dtype, cast_note = run_dtype(torch, backend, dev, dtype)
    qt, kt, vt = (to_tensor(torch, a, dev, dtype) for a in (q, k, v))
    mt = _mask_tensor(torch, mask, dev, dtype)
    notes = [cast_note] if cast_note else []
    is_causal = causal
    if causal and qt.shape[2] != kt.shape[2]:
        mt, is_causal = causal_allowed_mask(torch, qt.shape[2], kt.shape[2], dev), False
        notes.append(BOTTOM_RIGHT)
    with RUN_LOCK:
        p = plan(torch, qt, kt, vt, mt, is_causal, scale, backend, require_fused)
        if p.index < 0:
            what = "a fused kernel (require_fused=True)" if require_fused and backend == "auto" \
                else f"{_name_of(backend) if backend != 'auto' else 'any kernel'}"
            raise KernelUnavailable(f"{what} cannot run these inputs on {dev}: {p.error}",
                                    p.reasons)
        if p.expand:
            kt, vt = expand_kv(kt, vt, qt.shape[1] // kt.shape[1])
        kwargs = {"attn_mask": mt, "is_causal": is_causal, "scale": scale}
        if p.gqa:
            kwargs["enable_gqa"] = True

        def call():
            with sdpa_kernel(list(p.allowed)) if p.allowed is not None else \
                    contextlib.nullcontext():
                return F.scaled_dot_product_attention(qt, kt, vt, **kwargs)

        try:
            if verify:
                out, observed = observed_kernels(call)
            else:
                out, observed = call(), None
        except RuntimeError as e:
            raise KernelUnavailable(f"{NAMES.get(p.index)} failed on {dev}: {clean(e)}",
                                    p.reasons) from e
    ran = NAMES.get(p.index, f"SDPBackend {p.index}")
    notes.extend(p.notes)
    if observed is not None and observed and observed[0] != ran:
        notes.append(f"the dispatcher said {ran}, the profiler saw {observed[0]}")
        ran = observed[0]
    return AttendResult(_like(torch, out, q), ran, str(dev), _dtype_name(qt),
                        MappingProxyType(dict(p.reasons)), tuple(notes), observed)


def _mask_tensor(torch, mask, dev, dtype):  # bool stays bool; a float mask takes the run dtype
    if mask is None:
        return None
    t = mask if isinstance(mask, torch.Tensor) else torch.from_numpy(_writable(mask))
    return t.to(device=dev) if t.dtype == torch.bool else t.to(device=dev, dtype=dtype)


def _like(torch, out, q):  # output in q's kind: numpy for numpy; tensors keep q's device and dtype
    if isinstance(q, torch.Tensor):
        return out.to(device=q.device, dtype=q.dtype)
    return to_numpy(torch, out).astype(_numpy_dtype(q), copy=False)


def _numpy_dtype(a):  # the float dtype a numpy-convertible input computes in
    dt = np.asarray(a).dtype
    return dt if dt.kind == "f" else np.dtype(np.float32)


def _attend_numpy(torch, q, k, v, causal, mask, scale, backend):
    qa, ka, va = (to_numpy(torch, a) for a in (q, k, v))
    ma = None if mask is None else to_numpy(torch, mask)
    out = numpy_reference(qa, ka, va, causal=causal, mask=ma, scale=scale)
    why = "torch is not installed" if torch is None else f"excluded: backend={backend!r}"
    dtype = str(out.dtype)
    if torch is not None and isinstance(q, torch.Tensor):
        out = torch.from_numpy(out).to(device=q.device, dtype=q.dtype)
    return AttendResult(out, NUMPY, "cpu", dtype,
                        MappingProxyType({n: (why,) for n in ALL_KERNELS}), (NOTE,))


def explain(q_shape, k_shape, dtype="float32", device=None, causal=False, has_mask=False, *,
            v_shape=None, scale=None, backend="auto", require_fused=False):
    # shapes [b, h, n_q, d], [b, h_kv, n_k, d] -> Explanation: what would run, why not the rest
    """Which kernel attend() would pick for these shapes, before running anything.

    It builds uninitialised tensors of the shapes on the device (and a bool mask when
    has_mask), then asks PyTorch's dispatcher exactly as attend() does.
    """
    q_shape, k_shape = tuple(q_shape), tuple(k_shape)
    v_shape = k_shape if v_shape is None else tuple(v_shape)
    check_call(q_shape, k_shape, v_shape, causal, has_mask, backend, require_fused)
    torch = torch_or_none()
    dname = dtype if isinstance(dtype, str) else str(dtype).removeprefix("torch.") \
        if "torch." in str(dtype) else np.dtype(dtype).name
    if backend == "numpy" or torch is None:
        if backend in ("numpy", "auto") and not require_fused:
            return Explanation(NUMPY, "cpu", dname, MappingProxyType(
                {n: ("torch is not installed" if torch is None else "excluded: backend='numpy'",)
                 for n in (*FUSED_NAMES, "math")}))
        return Explanation(None, "cpu", dname, MappingProxyType(
            {_name_of(backend): ("torch is not installed",)}), (), "PyTorch is not importable")
    tdtype = getattr(torch, dname)
    dev = call_device(torch, device, None)
    tdtype, cast_note = run_dtype(torch, backend, dev, tdtype)
    q, k, v = (torch.empty(s, dtype=tdtype, device=dev) for s in (q_shape, k_shape, v_shape))
    mask = torch.ones(q_shape[2], k_shape[2], dtype=torch.bool, device=dev) if has_mask else None
    notes = [cast_note] if cast_note else []
    is_causal = causal
    if causal and q_shape[2] != k_shape[2]:
        mask, is_causal = causal_allowed_mask(torch, q_shape[2], k_shape[2], dev), False
        notes.append(BOTTOM_RIGHT)
    with RUN_LOCK:
        p = plan(torch, q, k, v, mask, is_causal, scale, backend, require_fused)
    return Explanation(NAMES.get(p.index) if p.index >= 0 else None, str(dev),
                       str(tdtype).removeprefix("torch."), MappingProxyType(dict(p.reasons)),
                       tuple(notes) + p.notes, p.error)
