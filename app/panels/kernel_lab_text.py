"""The kernel lab's words: its notes, and the HTML of its plan, results and sweep table.

Pure functions of the lab's requests and results (no widgets), so tests read them directly.
"""

import dataclasses
import html
import os

import kernels
from app import lab
from app.kit import resources

MASKING_NOTE = (
    "<b>causal</b> passes <code>is_causal=True</code>. <b>triangular mask</b> passes the same "
    "lower triangle as an explicit boolean <code>attn_mask</code>. <b>none</b> lets every "
    "query see every key.")
INSTALL_COMMANDS = ("pip install torch==2.13.0", "pip install 'attention-explorable[kernels]'")

STYLE = resources.stylesheet("kernel-lab.css")

INTRO = (
    "Everything above is arithmetic on paper. This lab runs the real thing on the machine "
    "serving this page. PyTorch's `scaled_dot_product_attention` is one function in front of "
    "several kernels: FlashAttention-2, a memory-efficient kernel, cuDNN's, and a plain C++ "
    "path that the backend enum calls `SDPBackend.MATH`. PyTorch takes the first, in a fixed "
    "order of preference, that accepts your inputs. If no fused kernel does, you land on "
    "math, which writes out the whole n × n grid of scores. That fallback can pass without "
    "any warning (on CPU, this page's PyTorch gives none), so this lab asks PyTorch's "
    "dispatcher which kernel ran and puts the answer on the page.")

LOOK_FOR = (
    "**What to try:** run with backend *auto*, then with *math*. In float32 the output "
    "agrees with the reference to about a millionth either way, but math's peak memory is "
    "far larger. "
    "Switch masking to the explicit triangular mask: a hand-made mask tells the kernel "
    "nothing about which blocks are empty, so it can no longer skip them, and the run slows "
    "down. Then sweep. This times one attention call, no projections or MLP: if doubling the "
    "prompt roughly doubles the time, overheads and reading the O(n) inputs q, k and v still "
    "dominate; near 4×, the n² arithmetic does. For a whole model's prefill, see the cost "
    "panel.")

EAGER_NOTE = (
    "Asking a model for its attention weights means giving up the fused kernels, since they "
    "never write those weights down. Hugging Face's `attn_implementation=\"eager\"` holds "
    "batch (sequences per call) × heads × n² × bytes per layer. For one sequence of 4,096 "
    "tokens on a 32-head model in bfloat16, that is 1 GiB per layer, and more at its peak, "
    "because eager attention takes the softmax in float32. The right-hand column of the "
    "sweep table gives that size for your shapes. To be sure you never fall back silently, "
    "call SDPA inside `torch.nn.attention.sdpa_kernel` with the math backend left out, as "
    "PyTorch's docs recommend. A fallback then raises an error instead of just running slower.")


def esc(text):
    return html.escape(str(text))


def fmt_seconds(s):  # seconds -> "0.12 ms" / "340 ms" / "2.04 s"
    if s is None:
        return "—"
    if s >= 1:
        return f"{s:.2f} s"
    ms = s * 1e3
    return f"{ms:.2f} ms" if ms < 10 else f"{ms:,.0f} ms" if ms >= 100 else f"{ms:.1f} ms"


def fmt_peak(b):
    return "not measured" if b is None else lab.fmt_bytes(b)


def expected_error(dtype):  # -> what size of disagreement is ordinary rounding in this dtype
    return {"float32": "float32 carries about 7 significant digits, so up to ~1e-6 is rounding",
            "bfloat16": "bfloat16 keeps 8 significant bits, so ~1e-2 is rounding",
            "float16": "float16 keeps 11 significant bits, so ~1e-3 is rounding"}[dtype]


def dtype_note(cuda):  # what the dtypes mean where the lab runs (torch is there)
    if cuda:
        return ("On CUDA, flash and cuDNN attention take only float16 and bfloat16. With "
                "backend auto, kernels casts float32 inputs down and says so.")
    return ("On CPU all three run. PyTorch's CPU flash kernel takes float32, bfloat16 and "
            "float16, and the math path works internally in float32. On most CPUs the 16-bit "
            "types don't run faster, so use them to see the rounding, not for speed.")


def install_html():  # the hint shown where torch is missing
    cmds = "".join(f"<pre><code>{esc(c)}</code></pre>" for c in INSTALL_COMMANDS)
    return ('<div class="ae-install" role="note"><p><b>PyTorch is not installed</b> in the '
            "Python serving this page, so the live lab is switched off. Everything else on "
            "the page works without it. To turn the lab on, install the CPU wheel (the first "
            "command) or the project's optional <code>kernels</code> extra, then restart the "
            f"server:</p>{cmds}</div>")


def environment_html(caps):  # where the lab runs and its limits (torch is there)
    env = kernels.environment()
    where = f"GPU {esc(env.get('device', 'cuda'))}" if env.get("cuda") else "CPU"
    cores = os.cpu_count() or 1
    return ('<div class="ae-readout"><p>'
            f"This server runs PyTorch {esc(env['torch'])} on {where}. Lab runs use "
            f"<code>torch.set_num_threads({caps.threads})</code>, which is {caps.threads} "
            f"of its {cores} CPU threads. Only one lab job runs at a time for everyone on "
            "this server, so other visitors' pages stay responsive. Jobs that arrive while "
            "one is running wait in line. The times and memory readings here are the "
            "server's, not your computer's.</p>"
            f"<p>Limits per run: prompt length up to {caps.max_length:,} tokens; about "
            f"{lab.fmt_bytes(caps.max_bytes)} held (q, k, v, the output, and for math its "
            f"n × n scores); {lab.times_ten(caps.max_flops)} floating-point operations; "
            f"{caps.run_timeout_s:g} s per run and {caps.sweep_timeout_s:g} s per sweep. "
            "One torch call can't be stopped partway through, so the size limits are what "
            "keep a single call short.</p></div>")


def call_text(req):  # -> the SDPA call these controls make, in PyTorch's terms
    kw = {"causal": "is_causal=True", "mask": "attn_mask=a lower-triangular bool [n, n]",
          "none": "no mask"}[req.masking]
    gqa = ", enable_gqa=True" if req.kv_heads != req.heads else ""
    return (f"q [{req.batch}, {req.heads}, {req.length:,}, {req.head_dim}], k and v "
            f"[{req.batch}, {req.kv_heads}, {req.length:,}, {req.head_dim}], {req.dtype}, "
            f"{kw}{gqa}")


def reasons_html(reasons):  # {backend: (reason, ...)} -> <ul>, escaped
    if not reasons:
        return ""
    items = "".join(f"<li><b>{esc(name)}</b>: {esc('; '.join(why) or 'no reason given')}</li>"
                    for name, why in reasons.items())
    return f"<ul>{items}</ul>"


def estimate_text(req, caps):
    est = lab.estimate(req)
    parts = f"q, k, v and the output come to {lab.fmt_bytes(est.inputs)}"
    if est.mask:
        parts += f"; the explicit mask and the kernel's float copy of it, {lab.fmt_bytes(est.mask)}"
    if est.scores:
        parts += (f"; math's n × n scores and their softmax, about "
                  f"{lab.fmt_bytes(est.scores)}")
    else:
        parts += (f". The math path would build a {lab.fmt_bytes(est.score_matrix)} score "
                  "matrix that a fused kernel never writes down")
    return (f"Estimated memory: {parts}. This server's limit is "
            f"{lab.fmt_bytes(caps.max_bytes)} per run.")


def plan_html(req, caps, ex=None):
    # LabRequest, Caps, explain() answer -> what will run and why not the others (before running)
    problem = lab.refusal(req, caps)
    if problem:
        return (f'<div class="ae-plan" aria-live="polite"><p class="ae-error">{esc(problem)}'
                "</p></div>")
    if ex is None:
        return ('<div class="ae-plan" aria-live="polite"><p>Asking PyTorch which kernel '
                "would run… (a lab job is using it this moment)</p></div>")
    if isinstance(ex, str):
        return f'<div class="ae-plan" aria-live="polite"><p class="ae-error">{esc(ex)}</p></div>'
    if ex.backend:
        head = (f"<p><b>Will run: {esc(ex.backend)}</b> on {esc(ex.device)} in {esc(ex.dtype)} "
                "(asked of PyTorch's own dispatcher for these shapes, before running).</p>")
    else:
        head = (f'<p class="ae-error">Nothing can run this on {esc(ex.device)}: '
                f"{esc(ex.error)}</p>")
    notes = "".join(f"<li>{esc(n)}</li>" for n in ex.notes)
    notes = f"<p>Notes:</p><ul>{notes}</ul>" if notes else ""
    why = reasons_html(ex.reasons)
    why = f"<p>Not chosen:</p>{why}" if why else ""
    return (f'<div class="ae-plan" aria-live="polite">{head}'
            f"<p>The call: <code>{esc(call_text(req))}</code>.</p>{notes}{why}"
            f"<p>{esc(estimate_text(req, caps))}</p></div>")


def result_html(res):  # lab.RunResult -> the readout of one run
    c = res.comparison
    lo, hi = min(res.seconds), max(res.seconds)
    notes = "".join(f"<li>{esc(n)}</li>" for n in res.notes)
    notes = f"<p>Notes:</p><ul>{notes}</ul>" if notes else ""
    why = reasons_html(res.reasons)
    why = f"<p>Not used:</p>{why}" if why else ""
    threads = "thread" if res.threads == 1 else "threads"
    return (
        '<div class="ae-result ae-readout" aria-live="polite">'
        f"<p><b>Ran: {esc(res.backend)}</b> on {esc(res.device)} in {esc(res.dtype)}, "
        f"{res.threads} {threads}.</p>"
        f"<p>Largest disagreement with the numpy reference: <b>{c.disagreement:.1e}</b>. "
        f"The reference runs in float64 on the same (rounded) inputs and is compared on "
        f"{esc(c.where)}. {esc(expected_error(res.request.dtype))}.</p>"
        f"<p>Time: <b>{fmt_seconds(res.median)}</b>, the median of {len(res.seconds)} calls "
        f"after one warm-up call (fastest {fmt_seconds(lo)}, slowest {fmt_seconds(hi)}).</p>"
        f"<p>Peak memory: <b>{fmt_peak(res.peak_bytes)}</b>, measured as "
        f"{esc(res.peak_method)}.</p>{notes}{why}</div>")


def score_matrix_text(req, n):  # -> "8 × 8,192² × 4 B = 2.15 GB"
    r = dataclasses.replace(req, length=n)
    heads = r.batch * r.heads
    return (f"{heads:,} × {n:,}² × {r.bytes_per_value} B = "
            f"{lab.fmt_bytes(lab.estimate(r).score_matrix)}")


def sweep_table_html(result):
    by = {(p.length, p.backend): p for p in result.points}
    rows = []
    for n in result.lengths:
        cells = [f"{n:,}"]
        for backend in lab.SWEEP_BACKENDS:
            p = by.get((n, backend))
            if p is None:
                cells.append("not measured")
            elif p.refused:
                cells.append(f'<span title="{esc(p.refused)}">refused</span>')
            else:
                cells.append(f"{fmt_seconds(p.median)} ({esc(p.ran)})")
        for backend in lab.SWEEP_BACKENDS:
            p = by.get((n, backend))
            cells.append(fmt_peak(p.peak_bytes) if p and p.seconds else "—")
        cells.append(esc(score_matrix_text(result.request, n)))
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    head = ("<tr><th>n</th><th>fused (auto): time</th><th>math: time</th>"
            "<th>fused: peak</th><th>math: peak</th>"
            "<th>score matrix math/eager builds (batch × heads × n² × bytes)</th></tr>")
    refused = sorted({p.refused for p in result.points if p.refused})
    why = "".join(f"<li>{esc(r)}</li>" for r in refused)
    why = f"<p>Refused points:</p><ul>{why}</ul>" if why else ""
    return (f'<div class="ae-table-wrap" tabindex="0" role="region" aria-label="sweep results">'
            f'<table class="ae-table">{head}{"".join(rows)}</table></div>{why}')


def slope_text(result):  # -> how the last doubling scaled, per backend
    parts = []
    for backend, name in (("auto", "fused (auto)"), ("math", "math")):
        pts = [(p.length, p.median) for p in result.points if p.backend == backend and p.seconds]
        s = lab.slope(pts)
        if s is None:
            continue
        (n0, t0), (n1, t1) = pts[-2], pts[-1]
        parts.append(f"{name}: from n = {n0:,} to {n1:,} the time grew {t1 / t0:.1f}× "
                     f"(log-log slope {s:.2f})")
    if not parts:
        return ""
    return ("; ".join(parts) + ". Linear growth would be 2× per doubling (slope 1), "
            "quadratic 4× (slope 2).")
