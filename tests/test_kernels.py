"""kernels.attend against the numpy reference, and the kernel it says ran against what ran.

torch is a test dependency: these tests fail (they do not skip) when it is missing.
Tests marked gpu need CUDA and skip without it.
"""

import numpy as np
import pytest
import torch  # a missing torch must fail this file, not skip it
from hypothesis import given, settings
from hypothesis import strategies as st

import kernels
from attention_core.attend import attend as core_attend
from attention_core.attend import numpy_attention
from kernels import KernelUnavailable
from kernels.dispatch import numpy_reference

CUDA = torch.cuda.is_available()
gpu = pytest.mark.gpu
needs_cuda = pytest.mark.skipif(not CUDA, reason="needs CUDA; none on this machine")
FUSED = ("flash attention", "efficient attention", "cudnn attention")


def qkv(batch, heads, kv_heads, n_q, n_k, d, d_v=None, seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    d_v = d if d_v is None else d_v
    return (rng.standard_normal((batch, heads, n_q, d)).astype(dtype),
            rng.standard_normal((batch, kv_heads, n_k, d)).astype(dtype),
            rng.standard_normal((batch, kv_heads, n_k, d_v)).astype(dtype))


# batch, heads, kv heads, n_q, n_k, head_dim, causal
SHAPES = [
    (1, 1, 1, 1, 1, 8, False),
    (1, 1, 1, 1, 1, 8, True),
    (2, 4, 4, 7, 7, 16, True),
    (1, 8, 2, 33, 33, 16, True),  # GQA: 4 query heads per key/value head
    (1, 8, 2, 33, 33, 16, False),
    (2, 6, 3, 7, 33, 8, False),
    (1, 4, 1, 1, 33, 32, True),  # one decode step against 33 cached keys: multi-query
    (1, 2, 2, 7, 33, 64, True),  # a chunk of 7 new queries after 26 cached keys
]


@pytest.mark.parametrize("batch,heads,kv_heads,n_q,n_k,d,causal", SHAPES)
def test_auto_matches_the_numpy_reference(batch, heads, kv_heads, n_q, n_k, d, causal):
    q, k, v = qkv(batch, heads, kv_heads, n_q, n_k, d)
    got = kernels.attend(q, k, v, causal=causal, device="cpu")
    assert isinstance(got.output, np.ndarray) and got.output.dtype == np.float32
    assert got.output.shape == (batch, heads, n_q, d)
    np.testing.assert_allclose(got.output, numpy_attention(q, k, v, causal=causal),
                               atol=2e-5, rtol=1e-4)


@settings(max_examples=25, deadline=None)
@given(batch=st.integers(1, 2), kv_heads=st.integers(1, 3), group=st.sampled_from([1, 2, 4]),
       n_q=st.integers(1, 40), extra_k=st.integers(0, 9), d=st.sampled_from([4, 8, 16, 32]),
       causal=st.booleans(), scaled=st.booleans(), backend=st.sampled_from(["auto", "math"]),
       seed=st.integers(0, 2**16))
def test_random_shapes_match_the_reference(batch, kv_heads, group, n_q, extra_k, d, causal,
                                           scaled, backend, seed):
    q, k, v = qkv(batch, kv_heads * group, kv_heads, n_q, n_q + extra_k, d, seed=seed)
    scale = None if scaled else 0.3
    got = kernels.attend(q, k, v, causal=causal, scale=scale, backend=backend, device="cpu")
    want = numpy_attention(q, k, v, causal=causal, scale=scale)
    np.testing.assert_allclose(got.output, want, atol=3e-5, rtol=1e-4)
    assert got.backend == ("flash attention" if backend == "auto" else "math")


def test_auto_on_cpu_float32_runs_the_flash_kernel_and_the_profiler_agrees():
    q, k, v = qkv(1, 8, 8, 64, 64, 64)
    expected = kernels.explain(q.shape, k.shape, "float32", "cpu", True, False)
    got = kernels.attend(q, k, v, causal=True, device="cpu", verify=True)
    assert expected.backend == got.backend == "flash attention"
    assert got.observed == ("flash attention",)  # aten::_scaled_dot_product_flash_attention_for_cpu
    assert (got.device, got.dtype) == ("cpu", "float32")
    assert "CUDA only" in got.reasons["efficient attention"][0]
    assert "math" in got.reasons


@pytest.mark.parametrize("dtype", ["float64", "bfloat16", "float16"])
def test_cpu_flash_takes_other_float_dtypes(dtype):
    assert kernels.explain((1, 2, 16, 8), (1, 2, 16, 8), dtype, "cpu", True, False).backend \
        == "flash attention"


def test_named_math_runs_math_and_matches():
    q, k, v = qkv(1, 4, 2, 33, 33, 16)
    got = kernels.attend(q, k, v, causal=True, backend="math", device="cpu", verify=True)
    assert got.backend == "math" and got.observed == ("math",)
    assert "excluded" in got.reasons["flash attention"][0]
    np.testing.assert_allclose(got.output, numpy_attention(q, k, v, causal=True), atol=2e-5)


def test_named_flash_runs_on_cpu():
    q, k, v = qkv(1, 2, 2, 7, 7, 8)
    assert kernels.attend(q, k, v, backend="flash", device="cpu").backend == "flash attention"


@pytest.mark.parametrize("backend,name", [("cudnn", "cudnn attention"),
                                          ("efficient", "efficient attention")])
def test_a_cuda_only_backend_on_cpu_raises_with_reasons(backend, name):
    q, k, v = qkv(1, 2, 2, 7, 7, 8)
    with pytest.raises(KernelUnavailable) as err:
        kernels.attend(q, k, v, backend=backend, device="cpu")
    assert isinstance(err.value, RuntimeError)
    assert any("CUDA only" in r for r in err.value.reasons[name])
    assert name in str(err.value) and "No viable backend" in str(err.value)  # PyTorch's own words
    assert kernels.explain(q.shape, k.shape, "float32", "cpu", False, False,
                           backend=backend).backend is None


def test_require_fused_passes_on_cpu_where_the_flash_kernel_applies():
    q, k, v = qkv(1, 8, 2, 33, 33, 16)
    got = kernels.attend(q, k, v, causal=True, require_fused=True, device="cpu", verify=True)
    assert got.backend == "flash attention" and got.observed == ("flash attention",)
    assert "excluded by require_fused" in got.reasons["math"][0]


def test_require_fused_turns_a_silent_math_fallback_into_an_error():
    q, k, v = qkv(1, 2, 2, 7, 7, 16, d_v=8)  # CPU flash needs one head_dim for q, k and v
    assert kernels.attend(q, k, v, device="cpu").backend == "math"  # the silent fallback
    with pytest.raises(KernelUnavailable) as err:
        kernels.attend(q, k, v, require_fused=True, device="cpu")
    assert any("same last dimension" in r for r in err.value.reasons["flash attention"])


def test_the_fallback_reports_why_flash_refused():
    q, k, v = qkv(1, 2, 2, 7, 7, 16, d_v=8)
    got = kernels.attend(q, k, v, device="cpu")
    np.testing.assert_allclose(got.output, numpy_attention(q, k, v), atol=2e-5)
    assert any("same last dimension" in r for r in got.reasons["flash attention"])


@pytest.mark.parametrize("backend", ["auto", "math", "flash", "numpy"])
def test_mask_and_causal_together_raise_on_every_path(backend):
    q, k, v = qkv(1, 2, 2, 7, 7, 8)
    mask = np.tril(np.ones((7, 7), bool))
    with pytest.raises(ValueError, match="not both"):
        kernels.attend(q, k, v, causal=True, mask=mask, backend=backend)
    with pytest.raises(ValueError, match="not both"):
        kernels.explain(q.shape, k.shape, "float32", None, True, True, backend=backend)


@pytest.mark.parametrize("kind", ["bool", "additive"])
def test_an_explicit_mask_matches_the_reference(kind):
    q, k, v = qkv(2, 4, 2, 7, 9, 8)
    rng = np.random.default_rng(1)
    keep = rng.random((2, 4, 7, 9)) > 0.4
    keep[..., 0] = True  # every query keeps a key
    mask = keep if kind == "bool" else np.where(keep, 0.0, -1e9).astype(np.float32)
    got = kernels.attend(q, k, v, mask=mask, device="cpu")
    assert got.backend == "flash attention"  # an explicit mask keeps the CPU flash kernel
    np.testing.assert_allclose(got.output, numpy_reference(q, k, v, mask=mask), atol=2e-5)
    np.testing.assert_allclose(kernels.attend(q, k, v, mask=mask, backend="numpy").output,
                               got.output, atol=2e-5)


def test_an_explicit_causal_mask_equals_is_causal():
    q, k, v = qkv(1, 2, 2, 33, 33, 8)
    tri = np.tril(np.ones((33, 33), bool))
    np.testing.assert_allclose(kernels.attend(q, k, v, mask=tri, device="cpu").output,
                               kernels.attend(q, k, v, causal=True, device="cpu").output,
                               atol=2e-6)


def test_tensors_in_tensors_out_and_the_core_entry_uses_the_kernels():
    q, k, v = qkv(1, 4, 2, 7, 7, 8)
    tq, tk, tv = (torch.from_numpy(a).double() for a in (q, k, v))
    got = kernels.attend(tq, tk, tv, causal=True, device="cpu")
    assert isinstance(got.output, torch.Tensor) and got.output.dtype == torch.float64
    np.testing.assert_allclose(got.output.numpy(), numpy_attention(q, k, v, causal=True),
                               atol=1e-5)
    core = core_attend(q, k, v, causal=True)  # auto: bfloat16 on a GPU
    assert isinstance(core, kernels.AttendResult)  # the same result type as kernels.attend's
    assert core.backend in FUSED + ("math",), "with torch, the core entry runs a torch kernel"
    assert core.backend == kernels.attend(q, k, v, causal=True).backend
    assert isinstance(core.output, np.ndarray) and core.output.dtype == np.float32
    np.testing.assert_allclose(core.output, got.output.numpy(), atol=3e-2 if CUDA else 1e-5)


def test_numpy_backend_is_the_reference():
    q, k, v = qkv(1, 4, 2, 7, 7, 8)
    got = kernels.attend(q, k, v, causal=True, backend="numpy")
    assert got.backend == "numpy reference" and got.device == "cpu"
    np.testing.assert_array_equal(got.output, numpy_attention(q, k, v, causal=True))


@pytest.mark.parametrize("kwargs,message", [
    ({"backend": "fast"}, "backend must be one of"),
    ({"backend": "math", "require_fused": True}, "contradicts"),
    ({"backend": "numpy", "require_fused": True}, "contradicts"),
])
def test_bad_arguments(kwargs, message):
    q, k, v = qkv(1, 2, 2, 3, 3, 4)
    with pytest.raises(ValueError, match=message):
        kernels.attend(q, k, v, **kwargs)


@pytest.mark.parametrize("shapes,message", [
    (((1, 3, 4, 8), (1, 2, 4, 8), (1, 2, 4, 8)), "must divide"),
    (((1, 2, 4, 8), (1, 2, 4, 4), (1, 2, 4, 4)), "head_dim differ"),
    (((2, 4, 8), (2, 4, 8), (2, 4, 8)), r"\[batch, heads, n, head_dim\]"),
    (((1, 2, 4, 8), (1, 2, 5, 8), (1, 2, 4, 8)), "same heads and length"),
])
def test_bad_shapes(shapes, message):
    arrays = [np.zeros(s, np.float32) for s in shapes]
    with pytest.raises(ValueError, match=message):
        kernels.attend(*arrays)


def test_causal_needs_at_least_as_many_keys_as_queries():
    q, k, v = qkv(1, 1, 1, 5, 3, 4)
    with pytest.raises(ValueError, match="more queries"):
        kernels.attend(q, k, v, causal=True)


def test_explain_agrees_with_attend_before_running():
    cases = [((1, 8, 64, 64), (1, 8, 64, 64), True, None, "auto"),
             ((1, 8, 64, 64), (1, 2, 64, 64), False, None, "auto"),
             ((1, 2, 16, 8), (1, 2, 16, 8), False, np.ones((16, 16), bool), "auto"),
             ((1, 2, 16, 8), (1, 2, 16, 8), True, None, "math")]
    for q_shape, k_shape, causal, mask, backend in cases:
        q, k, v = (np.zeros(s, np.float32) for s in (q_shape, k_shape, k_shape))
        said = kernels.explain(q_shape, k_shape, "float32", "cpu", causal, mask is not None,
                               backend=backend)
        ran = kernels.attend(q, k, v, causal=causal, mask=mask, backend=backend, device="cpu")
        assert said.backend == ran.backend and dict(said.reasons) == dict(ran.reasons)
        assert said.backend in said.summary()


def test_environment_names_the_kernels():
    env = kernels.environment()
    assert env["torch"] == torch.__version__ and env["cuda"] == CUDA
    assert "math" in env["enabled"]


# ---------------------------------------------------------------- CUDA only

@gpu
@needs_cuda
def test_cuda_auto_casts_to_half_and_runs_a_fused_kernel():
    q, k, v = qkv(1, 8, 8, 256, 256, 64)
    got = kernels.attend(q, k, v, causal=True, verify=True)
    assert got.device.startswith("cuda") and got.dtype in ("bfloat16", "float16")
    assert got.backend in FUSED and got.observed == (got.backend,)
    assert any(n.startswith("cast float32") for n in got.notes)
    assert got.output.dtype == np.float32
    np.testing.assert_allclose(got.output, numpy_attention(q, k, v, causal=True), atol=3e-2)


def run_each(backends, call):  # -> ({backend: what call returned}, {backend: reasons})
    # call(backend) runs it or raises KernelUnavailable (kernels' refusal, with PyTorch's
    # reasons); a refusal must say why
    ran, refused = {}, {}
    for backend in backends:
        try:
            ran[backend] = call(backend)
        except KernelUnavailable as e:
            assert e.reasons and all(e.reasons.values()), f"{backend} refused without a reason"
            refused[backend] = dict(e.reasons)
    return ran, refused


def at_least_one_ran(backends, ran, refused):  # -> a line naming what ran; fails if none did
    said = "; ".join(f"{b} refused ({', '.join(r)})" for b, r in refused.items())
    assert ran, f"every backend asked for was refused: {said}"
    return f"ran: {', '.join(ran)}" + (f"; {said}" if said else "")


def test_a_test_whose_every_backend_was_refused_fails():
    # on CPU, with fakes: what the GPU test below does with each backend's outcome
    def refuse(backend):
        raise KernelUnavailable(f"{backend} cannot run these", {backend: ("not on this GPU",)})

    asked = ("flash", "efficient", "cudnn")
    ran, refused = run_each(asked, refuse)
    assert ran == {} and set(refused) == set(asked)
    with pytest.raises(AssertionError, match="every backend asked for was refused"):
        at_least_one_ran(asked, ran, refused)

    def only_cudnn(backend):
        return "cudnn ran" if backend == "cudnn" else refuse(backend)

    ran, refused = run_each(asked, only_cudnn)
    assert at_least_one_ran(asked, ran, refused).startswith("ran: cudnn; flash refused")

    def silent(backend):  # a refusal with no reason is a failure of its own
        raise KernelUnavailable("no")

    with pytest.raises(AssertionError, match="refused without a reason"):
        run_each(asked, silent)


# the fused kernels as one test: any of them may refuse these shapes on a given GPU and
# PyTorch, but the test fails if all three do; math as another
@gpu
@needs_cuda
@pytest.mark.parametrize("backends", [("flash", "efficient", "cudnn"), ("math",)])
def test_cuda_named_backends_run_or_say_why(backends):
    q, k, v = qkv(1, 8, 2, 128, 128, 64)
    want = numpy_attention(q, k, v, causal=True)

    def call(backend):
        got = kernels.attend(q, k, v, causal=True, backend=backend, verify=True)
        assert got.observed == (got.backend,)
        assert got.backend.startswith(backend)
        np.testing.assert_allclose(got.output, want, atol=3e-2)
        return got.backend

    ran, refused = run_each(backends, call)
    print(at_least_one_ran(backends, ran, refused))  # in -rA / -s output: what ran here


@gpu
@needs_cuda
def test_cuda_require_fused_with_a_mask_forbidding_flash():
    q, k, v = qkv(1, 4, 4, 128, 128, 64)
    mask = np.tril(np.ones((128, 128), bool))
    with pytest.raises(KernelUnavailable) as err:
        kernels.attend(q, k, v, mask=mask, backend="flash")
    assert err.value.reasons["flash attention"]
    got = kernels.attend(q, k, v, mask=mask, require_fused=True)
    assert got.backend in FUSED and got.backend != "flash attention"


def test_causal_with_fewer_queries_than_keys_is_bottom_right_and_says_so():
    q, k, v = qkv(1, 2, 2, 3, 9, 8)
    got = kernels.attend(q, k, v, causal=True, device="cpu")
    assert any("bottom-right" in n for n in got.notes)
    # the last query sees every key: the same as no mask at all for that row
    unmasked = kernels.attend(q, k, v, device="cpu").output
    np.testing.assert_allclose(got.output[:, :, -1], unmasked[:, :, -1], atol=2e-6)


def test_forcing_a_backend_leaves_pytorchs_global_settings_alone():
    before = (torch.backends.cuda.flash_sdp_enabled(), torch.backends.cuda.math_sdp_enabled(),
              torch.backends.cuda.mem_efficient_sdp_enabled())
    q, k, v = qkv(1, 2, 2, 7, 7, 8)
    kernels.attend(q, k, v, backend="math", device="cpu")
    kernels.attend(q, k, v, require_fused=True, device="cpu")
    with pytest.raises(KernelUnavailable):
        kernels.attend(q, k, v, backend="cudnn", device="cpu")
    assert before == (torch.backends.cuda.flash_sdp_enabled(),
                      torch.backends.cuda.math_sdp_enabled(),
                      torch.backends.cuda.mem_efficient_sdp_enabled())


# ---------------------------------------------------------------- kernels.probe


def test_timings_warm_up_then_time_at_least_repeats_calls():
    from kernels import probe
    calls, checks, syncs = [], [], []
    got = probe.timings(lambda: calls.append(1), repeats=3, warmup=2, sync=lambda: syncs.append(1),
                        check=lambda: checks.append(1))
    assert len(got) == 3 and all(s >= 0 for s in got)
    assert len(calls) == len(checks) == 5 and len(syncs) == 1 + 3  # after warm-up, each call


def test_timings_keep_going_to_the_target_but_not_past_max_repeats():
    import time

    from kernels import probe
    quick = probe.timings(lambda: None, repeats=2, warmup=0, target_s=10.0, max_repeats=6)
    assert len(quick) == 6  # never reached 10 s: stops at max_repeats
    # the sleep is the thing timed: a call slower than the target, not a wait
    slow = probe.timings(lambda: time.sleep(0.02), repeats=2, warmup=0, target_s=0.01,
                         max_repeats=6)
    assert len(slow) == 2  # past the target after the first: stops at repeats
    assert len(probe.timings(lambda: None, repeats=4, warmup=0)) == 4


def test_timings_stop_when_check_raises():
    from kernels import probe
    calls = []

    def check():
        if len(calls) >= 2:
            raise TimeoutError("budget")

    with pytest.raises(TimeoutError):
        probe.timings(lambda: calls.append(1), repeats=5, warmup=1, check=check)
    assert len(calls) == 2


def test_peak_memory_names_its_method_and_sees_a_large_allocation():
    from kernels import probe
    assert probe.sync_for("cpu") is None and probe.sync_for(torch.device("cpu")) is None
    peak, method = probe.peak_memory(lambda: np.ones(64 * 2**20 // 8).sum(), torch.device("cpu"))
    if peak is None:
        assert method == probe.PEAK_METHODS[None]
    else:
        assert method == probe.PEAK_METHODS["rss"]
        assert peak >= 32 * 2**20  # a 64 MiB array touched in one call


@needs_cuda
@gpu
def test_peak_memory_on_cuda_uses_the_allocator():
    from kernels import probe
    dev = torch.device("cuda")
    peak, method = probe.peak_memory(lambda: torch.ones(2**24, device=dev).sum(), dev)
    assert method == probe.PEAK_METHODS["cuda"] and peak >= 2**26
    assert probe.sync_for(dev) is torch.cuda.synchronize


# --- torch's private names (kernels/torch_internals.py): still there, still saying the same ---

def test_the_dispatchers_choice_is_still_torchs_own_and_speaks_sdpbackend():
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from kernels import dispatch
    from kernels import torch_internals as ti
    for short, member in dispatch._ENUM.items():  # NAMES reads SDPBackend's integer values
        if hasattr(SDPBackend, member):
            want = dispatch.LONG_NAMES.get(short, short)
            assert dispatch.NAMES[int(getattr(SDPBackend, member))] == want, short
    q, k, v = (torch.randn(1, 2, 8, 16) for _ in range(3))
    assert ti.fused_sdp_choice(torch, q, k, v, None, False) == int(SDPBackend.FLASH_ATTENTION)
    with sdpa_kernel([SDPBackend.MATH]):
        assert ti.fused_sdp_choice(torch, q, k, v, None, False) == int(SDPBackend.MATH)


def test_the_priority_order_is_still_readable():
    from torch.nn.attention import SDPBackend

    from kernels import torch_internals as ti
    order = ti.sdp_priority_order(torch)
    assert order is not None, "torch._C._get_sdp_priority_order is gone: the readout loses it"
    assert int(SDPBackend.FLASH_ATTENTION) in order and int(SDPBackend.MATH) in order


def test_pytorchs_debug_warnings_still_have_the_header_and_location_we_strip():
    # on CPU too: flash refuses a value head_dim unlike the query's, and says why
    from torch.nn.attention import SDPBackend

    from kernels import dispatch
    from kernels import torch_internals as ti
    q, k, v = (torch.randn(1, 2, 8, d) for d in (16, 16, 12))
    index, said, error = dispatch.fused_choice(torch, q, k, v, None, False, None, False,
                                               [SDPBackend.FLASH_ATTENTION])
    assert index == -1 and error
    assert said and not any("Triggered internally" in s for s in said), said  # TRIGGERED
    grouped = dispatch.group_reasons(said, "math")  # DEBUG_HEADERS put them under flash
    assert any("same last dimension" in r for r in grouped["flash attention"]), grouped
    assert "flash attention kernel" in ti.DEBUG_HEADERS


def test_the_profiler_still_names_the_kernel_ops():
    # KERNEL_OPS: the aten operators torch.profiler records for each CPU kernel
    from kernels import torch_internals as ti
    q, k, v = (torch.randn(1, 2, 8, 16) for _ in range(3))
    for backend, name in (("flash", "flash attention"), ("math", "math")):
        got = kernels.attend(q, k, v, backend=backend, device="cpu", verify=True)
        assert got.observed == (name,) and name in ti.KERNEL_OPS.values(), (backend, got)


@gpu
@needs_cuda
def test_cuda_debug_warnings_still_carry_the_headers():
    # the CUDA checks (can_use_*_attention(params, debug=True)) warn under these headers
    from kernels import dispatch
    from kernels import torch_internals as ti
    q, k, v = (torch.randn(1, 2, 8, d, device="cuda", dtype=torch.float16) for d in (16, 16, 12))
    params = dispatch.sdpa_params(torch, q, k, v, None, False, False)
    with dispatch.captured() as said:
        torch.backends.cuda.can_use_efficient_attention(params, True)
    assert any(s.lower().startswith(tuple(ti.DEBUG_HEADERS)) for s in said), said


def test_a_fallback_to_math_is_silent_while_math_is_allowed():
    # the first chapter says so: PyTorch's docs promise a warning with the reasons, but on
    # CPU the reasons come only once math is ruled out and no kernel is left
    import re
    import warnings

    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from app.chapters import content

    q, k, v = (torch.randn(2, 8, 16) for _ in range(3))  # 3-D: the fused kernels refuse it
    with warnings.catch_warnings(record=True) as quiet:
        warnings.simplefilter("always")
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]):
            F.scaled_dot_product_attention(q, k, v)
    assert not quiet, [str(w.message) for w in quiet]
    with warnings.catch_warnings(record=True) as told:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="No available kernel"), \
                sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
            F.scaled_dot_product_attention(q, k, v)
    assert any("4 dimensional" in str(w.message) for w in told)
    said = re.search(r"[Oo]n this page's PyTorch \((\d+\.\d+), CPU\)",
                     " ".join(content.read("attention.md").split()))
    assert said and torch.__version__.startswith(said.group(1) + "."), torch.__version__


def test_is_causal_with_one_query_against_a_cache_sees_key_0_alone():
    # the first chapter warns: PyTorch aligns is_causal's triangle top-left, so a decode
    # query passed with is_causal=True attends to the first key only
    import torch.nn.functional as F

    torch.manual_seed(0)
    q, k, v = torch.randn(1, 1, 1, 8), torch.randn(1, 1, 6, 8), torch.randn(1, 1, 6, 8)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert torch.allclose(out[0, 0, 0], v[0, 0, 0])  # all its weight on key 0
    assert not torch.allclose(out, F.scaled_dot_product_attention(q, k, v))
