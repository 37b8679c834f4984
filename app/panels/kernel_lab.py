"""The kernel lab: which SDPA kernel this very server runs, and how prefill time grows with n.

One PyTorch call, scaled_dot_product_attention, hides several kernels. The learner picks
shapes, a dtype, a kind of mask and a backend, reads which kernel will run and why the
others were refused, then runs it here: the kernel that ran, its disagreement with a
float64 numpy reference, its time and its peak memory. A sweep times a prefill at doubling
prompt lengths, fused against math, on log-log axes with linear and quadratic guides.
"""

import concurrent.futures
import dataclasses
import functools
import html
import logging
import math
import os

import panel as pn
import param
from bokeh.models import (
    ColumnDataSource,
    FixedTicker,
    HoverTool,
    Legend,
    LegendItem,
    NoOverlap,
    NumeralTickFormatter,
    Range1d,
)
from bokeh.plotting import figure
from panel.io.state import set_curdoc

import kernels
from app import chrome, lab
from app.states import is_static
from app.theme import CODE_CSS, ink

log = logging.getLogger(__name__)

CAPS = lab.caps_from_env()
TORCH = kernels.torch_or_none()  # imported once, when the server loads its pages
CUDA = kernels.cuda_available()
CPU_BACKENDS = ("auto", "flash", "math", "numpy")
AVAILABLE_BACKENDS = kernels.BACKENDS if CUDA else CPU_BACKENDS
MASKING_LABELS = {"causal": "causal", "triangular mask": "mask", "none": "none"}  # label -> code
MASKING_NOTE = (
    "<b>causal</b> passes <code>is_causal=True</code>. <b>triangular mask</b> passes the same "
    "lower triangle as an explicit boolean <code>attn_mask</code>. <b>none</b> lets every "
    "query see every key.")
INSTALL_COMMANDS = ("pip install torch==2.13.0", "pip install 'attention-explorable[kernels]'")

# Okabe-Ito: the fused kernel in blue, math in vermillion, guides in the theme's grey
BLUE, VERMILLION, BLACK = "#0072B2", "#D55E00", "#000000"

STYLE = """
.ae-label { font-size: max(12px, 0.9em); font-weight: 600; }
.ae-error { color: var(--danger-text-color, #a4001d); font-weight: 600; }
.ae-plan, .ae-result { overflow-wrap: anywhere; }
.ae-plan ul, .ae-result ul { margin: 0.2em 0 0.4em; padding-left: 1.2em; }
.ae-table-wrap { overflow-x: auto; max-width: 100%; }
.ae-table { border-collapse: collapse;
             font-variant-numeric: tabular-nums; font-size: max(12px, 0.9em); }
.ae-table th, .ae-table td { padding: 3px 8px; text-align: right; white-space: nowrap;
                             border-bottom: 1px solid var(--panel-border-color, #d0d4da); }
.ae-table th:first-child, .ae-table td:first-child { text-align: left; }
.ae-install code, .ae-plan code, .ae-result code { font-family: ui-monospace, Menlo, Consolas,
    monospace; font-size: max(12px, 0.92em); }
.ae-install pre { overflow-x: auto; padding: 0.4em 0.6em; border-radius: 6px;
                  background: var(--panel-surface-color, #f3f3f3); }
"""

INTRO = (
    "Everything above is arithmetic on paper. This lab runs the real thing on the machine "
    "serving this page. PyTorch's `scaled_dot_product_attention` is one function in front of "
    "several kernels: FlashAttention-2, a memory-efficient kernel, cuDNN's, and a plain C++ "
    "path that the backend enum calls `SDPBackend.MATH`. PyTorch takes the best one that "
    "accepts your inputs. If no fused kernel does, you land on math, which writes out the whole "
    "n × n grid of scores. PyTorch does warn when that happens, but only once, and the "
    "warning is easy to miss in a long log. Here the answer is on the page.")

LOOK_FOR = (
    "**What to try:** run with backend *auto*, then with *math*. The output agrees with "
    "the reference to about a millionth either way, but math's peak memory is far larger. "
    "Switch masking to the explicit triangular mask: a hand-made mask tells the kernel "
    "nothing about which blocks are empty, so it can no longer skip them, and the run slows "
    "down. Then sweep. If doubling the prompt roughly doubles the time, prefill is still in "
    "its linear regime. If it roughly quadruples it, the n² term has taken over.")

EAGER_NOTE = (
    "Asking a model for its attention weights means giving up the fused kernels, since they "
    "never write those weights down. Hugging Face's `attn_implementation=\"eager\"` holds "
    "batch × heads × n² × bytes per layer. For one sequence of 4,096 tokens on a 32-head model "
    "in bfloat16, that is 1 GiB per layer, and more at its peak, because eager attention "
    "takes the softmax in float32. The right-hand column of the sweep table gives that size "
    "for your shapes. To be sure you never fall back silently, call SDPA inside "
    "`torch.nn.attention.sdpa_kernel` with the math backend left out, as PyTorch's docs "
    "recommend. A fallback then raises an error instead of just running slower.")


def label(text):  # a visible label above a button group
    return pn.pane.HTML(f'<span class="ae-label">{html.escape(text)}</span>',
                        margin=(4, 10, 0, 10), stylesheets=[STYLE])


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


def dtype_note():
    if TORCH is None:
        return ""
    if CUDA:
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


def environment_html():
    if TORCH is None:
        return ""
    env = kernels.environment()
    where = f"GPU {esc(env.get('device', 'cuda'))}" if env.get("cuda") else "CPU"
    cores = os.cpu_count() or 1
    return ('<div class="ae-readout"><p>'
            f"This server runs PyTorch {esc(env['torch'])} on {where}. Lab runs use "
            f"<code>torch.set_num_threads({CAPS.threads})</code>, which is {CAPS.threads} "
            f"of its {cores} CPU threads. Only one lab job runs at a time for everyone on "
            "this server, so other visitors' pages stay responsive. Jobs that arrive while "
            "one is running wait in line. The times and memory readings here are the "
            "server's, not your computer's.</p>"
            f"<p>Limits per run: prompt length up to {CAPS.max_length:,} tokens; about "
            f"{lab.fmt_bytes(CAPS.max_bytes)} held (q, k, v, the output, and for math its "
            f"n × n scores); {lab.times_ten(CAPS.max_flops)} floating-point operations; "
            f"{CAPS.run_timeout_s:g} s per run and {CAPS.sweep_timeout_s:g} s per sweep. "
            "One torch call can't be stopped partway through, so the size limits are what "
            "keep a single call short.</p></div>")


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


def sweep_columns(result):  # lab.SweepResult -> {backend: source columns}
    out = {}
    for backend in lab.SWEEP_BACKENDS:
        pts = [p for p in result.points if p.backend == backend and p.seconds]
        out[backend] = {
            "n": [p.length for p in pts],
            "ms": [p.median * 1e3 for p in pts],
            "lo": [min(p.seconds) * 1e3 for p in pts],
            "hi": [max(p.seconds) * 1e3 for p in pts],
            "peak_mb": [p.peak_bytes / 1e6 if p.peak_bytes else math.nan for p in pts],
            "kernel": [p.ran for p in pts],
        }
    return out


def guide_columns(result):  # reference lines through the first fused point: ∝ n and ∝ n²
    first = next((p for p in result.points if p.backend == "auto" and p.seconds), None)
    if first is None:
        return {"n": [], "linear": [], "quadratic": []}
    ns = list(result.lengths)
    t0, n0 = first.median * 1e3, first.length
    return {"n": ns, "linear": [t0 * n / n0 for n in ns],
            "quadratic": [t0 * (n / n0) ** 2 for n in ns]}


def scores_columns(req, lengths):  # the score matrix math/eager builds, in MB, per n
    sizes = [lab.estimate(dataclasses.replace(req, length=n)).score_matrix / 1e6
             for n in lengths]
    return {"n": list(lengths), "mb": sizes}


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


class KernelLabPanel(pn.viewable.Viewer):
    """Runs SDPA on this server: the kernel chosen, its error, time and memory; a prefill sweep."""

    batch = param.Integer(default=1, bounds=(1, 8), label="batch", doc="Sequences per call.")
    heads = param.Integer(default=8, bounds=(1, 64), label="query heads")
    kv_heads = param.Integer(default=8, bounds=(1, 64), label="KV heads", doc="""
        Key/value heads; fewer than the query heads is grouped-query attention.""")
    length = param.Integer(default=1024, bounds=(1, CAPS.max_length), label="prompt length n",
                           doc="Queries = keys = n: one prefill.")
    head_dim = param.Integer(default=64, bounds=(1, 256), label="head_dim")
    dtype = param.Selector(default="float32", objects=list(lab.DTYPES))
    masking = param.Selector(default="causal", objects=MASKING_LABELS)
    backend = param.Selector(default="auto", objects=list(kernels.BACKENDS))

    url_keys = ("batch", "heads", "kv_heads", "length", "head_dim", "dtype", "masking", "backend")

    def __init__(self, runner=None, caps=None, in_article=False, **params):
        # in_article: the article's section right above already says what the lab's heading,
        # introduction, "what to try" and eager-weights notes say; leave those to /kernel-lab
        self.in_article = in_article
        self._runner = runner
        self.caps = caps or CAPS
        self.available = TORCH is not None
        super().__init__(**params)
        self.param.backend.objects = list(AVAILABLE_BACKENDS)  # this instance: what runs here
        self.ticket = None
        self.last_result = None
        self.plan_future = None
        self._doc = None
        self._build_readouts()
        self._build_figures()
        self._build_widgets()
        self.param.watch(self._update_plan, list(self.url_keys))
        self._update_plan()
        self._layout = self._build_layout()
        doc = pn.state.curdoc
        if doc is not None and doc.session_context is not None:
            doc.on_session_destroyed(self._on_session_destroyed)

    # ---- the numbers: pure in the parameters ----
    def request(self):  # -> lab.LabRequest for the current controls
        return lab.LabRequest(self.batch, self.heads, self.kv_heads, self.length, self.head_dim,
                              self.dtype, self.masking, self.backend)

    def runner(self):
        return self._runner or lab.shared_runner(self.caps)

    # ---- readouts ----
    def _build_readouts(self):
        def html_pane(text="", **kw):
            kw.setdefault("sizing_mode", "stretch_width")
            return pn.pane.HTML(text, stylesheets=[chrome.CSS, STYLE], **kw)

        self.install_pane = html_pane(install_html() if not self.available else "",
                                      visible=not self.available)
        self.env_pane = html_pane(environment_html())
        self.kv_error = html_pane("", visible=False)
        self.dtype_pane = html_pane(f'<p class="ae-readout">{MASKING_NOTE} '
                                    f"{esc(dtype_note())}</p>")
        self.plan_pane = html_pane()
        self.status = html_pane('<p aria-live="polite"></p>')
        self.progress = pn.indicators.Progress(value=0, max=1, visible=False, bar_color="primary",
                                               sizing_mode="stretch_width", max_width=420,
                                               height=20, margin=(8, 10))
        self.progress_text = html_pane("", visible=False, width=200, sizing_mode=None)
        self.result_pane = html_pane()
        self.sweep_note = html_pane()
        self.sweep_table = html_pane()
        self.sweep_hint = html_pane(
            '<p class="ae-readout">Press <b>Sweep prompt length</b> to time a prefill at '
            f"n = {', '.join(f'{n:,}' for n in lab.sweep_lengths(self.caps))} with the shapes, "
            "dtype and masking above, fused (auto) against math. The charts and a table "
            "appear here as the points come in.</p>")

    def _build_figures(self):
        empty = {"n": [], "ms": [], "lo": [], "hi": [], "peak_mb": [], "kernel": []}
        self.fused_source = ColumnDataSource(dict(empty))
        self.math_source = ColumnDataSource(dict(empty))
        self.guide_source = ColumnDataSource({"n": [], "linear": [], "quadratic": []})
        self.scores_source = ColumnDataSource({"n": [], "mb": []})
        lengths = lab.sweep_lengths(self.caps)
        x_range = Range1d(lengths[0] / 1.4, lengths[-1] * 1.4)
        grey = ink().rule

        def base(title, y_label):
            fig = figure(title=title, height=320, sizing_mode="stretch_width", min_width=200,
                         x_axis_type="log", y_axis_type="log", x_range=x_range,
                         tools="", toolbar_location=None)
            fig.xaxis.axis_label = "prompt length n (log scale)"
            fig.xaxis.ticker = FixedTicker(ticks=list(lengths))
            fig.xaxis.formatter = NumeralTickFormatter(format="0,0")
            fig.xaxis.major_label_policy = NoOverlap(min_distance=8)
            fig.yaxis.axis_label = y_label
            fig.title.text_font_size = "13px"
            return fig

        t = base("Prefill time against prompt length, this server", "milliseconds (log scale)")
        items = []
        for source, name, colour, dash, marker in (
                (self.fused_source, "fused (auto)", BLUE, "solid", "circle"),
                (self.math_source, "math", VERMILLION, "dashed", "square")):
            line = t.line("n", "ms", source=source, line_color=colour, line_dash=dash,
                          line_width=2.5)
            dots = t.scatter("n", "ms", source=source, marker=marker, size=8, fill_color=colour,
                             line_color=BLACK)
            t.segment("n", "lo", "n", "hi", source=source, line_color=colour, line_width=2)
            items.append(LegendItem(label=name, renderers=[line, dots]))
            t.add_tools(HoverTool(renderers=[dots], tooltips=[
                ("n", "@n{0,0}"), ("kernel", "@kernel"), ("median", "@ms{0.000} ms"),
                ("fastest", "@lo{0.000} ms"), ("slowest", "@hi{0.000} ms")]))
        for column, name, dash in (("linear", "∝ n (linear)", "dotted"),
                                   ("quadratic", "∝ n² (quadratic)", "dashdot")):
            guide = t.line("n", column, source=self.guide_source, line_color=grey,
                           line_dash=dash, line_width=1.5)
            items.append(LegendItem(label=name, renderers=[guide]))
        t.add_layout(Legend(items=items, ncols=2, border_line_alpha=0, padding=4,
                            label_text_font_size="12px", spacing=12, location="center"),
                     "below")
        self.time_figure = t

        m = base("Peak memory during one call", "MB (log scale)")
        items = []
        for source, name, colour, dash, marker in (
                (self.fused_source, "fused (auto), measured", BLUE, "solid", "circle"),
                (self.math_source, "math, measured", VERMILLION, "dashed", "square")):
            line = m.line("n", "peak_mb", source=source, line_color=colour, line_dash=dash,
                          line_width=2.5)
            dots = m.scatter("n", "peak_mb", source=source, marker=marker, size=8,
                             fill_color=colour, line_color=BLACK)
            items.append(LegendItem(label=name, renderers=[line, dots]))
            m.add_tools(HoverTool(renderers=[dots], tooltips=[
                ("n", "@n{0,0}"), ("kernel", "@kernel"), ("peak", "@peak_mb{0,0.0} MB")]))
        sline = m.line("n", "mb", source=self.scores_source, line_color=grey, line_dash="dotted",
                       line_width=2)
        items.append(LegendItem(label="score matrix, batch × heads × n² × bytes",
                                renderers=[sline]))
        m.add_tools(HoverTool(renderers=[sline], tooltips=[("n", "@n{0,0}"),
                                                           ("score matrix", "@mb{0,0.0} MB")]))
        m.add_layout(Legend(items=items, ncols=1, border_line_alpha=0, padding=4,
                            label_text_font_size="12px", location="center"), "below")
        self.memory_figure = m

    # ---- controls ----
    def _build_widgets(self):
        def int_input(name, width=150):
            p = self.param[name]
            lo, hi = p.bounds
            return pn.widgets.IntInput.from_param(p, label=f"{p.label} ({lo}–{hi:,})",
                                                  width=width, start=lo, end=hi)

        self.batch_input = int_input("batch", 120)
        self.heads_input = int_input("heads", 150)
        self.kv_input = int_input("kv_heads", 150)
        self.length_input = int_input("length", 190)
        self.head_dim_input = int_input("head_dim", 150)
        self.dtype_buttons = pn.widgets.RadioButtonGroup.from_param(
            self.param.dtype, name="dtype", color="primary", variant="outline", width=280)
        self.masking_buttons = pn.widgets.RadioButtonGroup.from_param(
            self.param.masking, name="masking", color="primary", variant="outline",
            sizing_mode="stretch_width", max_width=460, min_width=200)
        self.backend_buttons = pn.widgets.RadioButtonGroup.from_param(
            self.param.backend, name="backend", color="primary", variant="outline",
            sizing_mode="stretch_width", max_width=60 * len(AVAILABLE_BACKENDS) + 40,
            min_width=200)
        self.run_button = pn.widgets.Button(label="Run", color="primary", width=110)
        self.sweep_button = pn.widgets.Button(label="Sweep prompt length", color="primary",
                                              variant="outline", width=180)
        self.cancel_button = pn.widgets.Button(label="Cancel", width=100, disabled=True)
        self.run_button.on_click(self.run)
        self.sweep_button.on_click(self.sweep)
        self.cancel_button.on_click(self.cancel)

    # ---- before running: what will run, and why ----
    def _update_plan(self, *events):
        req = self.request()
        problem = lab.shape_error(req)
        kv_problem = problem if problem and "KV heads" in problem else None
        with pn.io.hold():
            self.kv_error.object = (f'<p class="ae-error" role="alert">{esc(kv_problem)}</p>'
                                    if kv_problem else "")
            self.kv_error.visible = bool(kv_problem)
            self._sync_buttons()
            if lab.refusal(req, self.caps):
                self.plan_pane.object = plan_html(req, self.caps)
                return
            ex = explain(req, blocking=False)
            self.plan_pane.object = plan_html(req, self.caps, ex)
        if ex is None:  # a lab job holds the dispatcher: ask off the event loop, apply later
            self._doc = pn.state.curdoc
            self.plan_future = EXPLAINER.submit(self._explain_later, req,
                                                self._later(self._apply_plan))

    def _explain_later(self, req, apply):  # on the EXPLAINER thread
        apply(req, explain(req, blocking=True))

    def _apply_plan(self, req, ex):  # on the session: unless the controls moved on meanwhile
        if req == self.request():
            self.plan_pane.object = plan_html(req, self.caps, ex)

    def _sync_buttons(self):
        busy = self.ticket is not None and not self.ticket.done
        can = self.available and lab.shape_error(self.request()) is None
        self.run_button.disabled = busy or not can or lab.refusal(self.request(), self.caps) \
            is not None
        sweep_req = dataclasses.replace(self.request(), length=256, backend="auto")
        self.sweep_button.disabled = busy or not can or lab.refusal(sweep_req, self.caps) \
            is not None
        self.cancel_button.disabled = not busy

    # ---- running: off the event loop, results applied back on this session ----
    def _later(self, fn):  # -> a callable the worker thread may call; fn runs on this session
        doc = self._doc

        def call(*args):
            if doc is None or doc.session_context is None:  # no server: tests, notebooks
                fn(*args)
                return
            try:
                with set_curdoc(doc):
                    pn.state.execute(functools.partial(fn, *args), schedule=True)
            except Exception:  # e.g. the session closed meanwhile
                log.debug("kernel lab: could not reach the session", exc_info=True)

        return call

    def _submit(self, job, timeout_s, label, on_done, on_progress=None):
        if self.ticket is not None and not self.ticket.done:
            return None
        self._doc = pn.state.curdoc
        self.ticket = self.runner().submit(
            job, timeout_s=timeout_s, label=label, on_position=self._later(self._show_position),
            on_progress=self._later(on_progress) if on_progress else None,
            on_done=self._later(on_done))
        self._sync_buttons()
        return self.ticket

    def run(self, *events):  # the Run button: one measured run -> Ticket, or None if refused
        req = self.request()
        problem = self._refuse(req)
        if problem:
            return None
        self.result_pane.object = ""
        return self._submit(lab.run_job(req, self.caps), self.caps.run_timeout_s, "run",
                            self._run_done)

    def sweep(self, *events):  # the Sweep button: prefill time against n, fused and math
        req = self.request()
        lengths = tuple(n for n in lab.sweep_lengths(self.caps)
                        if lab.refusal(dataclasses.replace(req, length=n, backend="auto"),
                                       self.caps) is None)
        first = lengths[0] if lengths else lab.SWEEP_START
        problem = self._refuse(dataclasses.replace(req, length=first, backend="auto"))
        if problem:
            return None
        self._reset_sweep(req, lengths)
        return self._submit(lab.sweep_job(req, self.caps, lengths), self.caps.sweep_timeout_s,
                            "sweep", self._sweep_done, self._sweep_progress)

    def _refuse(self, req):  # -> the reason a job must not start (shown), or None
        if not self.available:
            problem = "PyTorch is not installed on this server, so the lab cannot run."
        else:
            problem = lab.refusal(req, self.caps)
        if problem:
            self.status.object = f'<p class="ae-error" aria-live="polite">{esc(problem)}</p>'
        return problem

    def cancel(self, *events):
        if self.ticket is not None and self.ticket.cancel() and \
                self.ticket.state == lab.RUNNING:
            self.status.object = ('<p aria-live="polite">Cancelling: the torch call under '
                                  "way finishes first, then the job stops.</p>")

    def _on_session_destroyed(self, session_context):
        if self.ticket is not None:
            self.ticket.cancel()

    def _show_position(self, position):
        what = "sweep" if self.ticket is not None and self.ticket.label == "sweep" else "run"
        text = lab.place_text(position)
        if position == 0:
            text = f"Your {what} is running on this server…"
        elif text:
            text = f"Your {what} is {text}."
        self.status.object = f'<p aria-live="polite">{esc(text)}</p>'

    def _finished_text(self, ticket):
        what = ticket.label
        took = (ticket.finished_at - ticket.started_at) if ticket.started_at else 0.0
        if ticket.state == lab.DONE:
            return f"Finished the {what} in {fmt_seconds(took)}."
        if ticket.state == lab.CANCELLED:
            return f"The {what} was cancelled."
        if ticket.state == lab.TIMED_OUT:
            return f"The {what} timed out: {ticket.error}."
        return f"The {what} failed: {ticket.error}"

    def _run_done(self, ticket):
        with pn.io.hold():
            cls = "" if ticket.state == lab.DONE else ' class="ae-error"'
            self.status.object = (f'<p{cls} aria-live="polite">'
                                  f"{esc(self._finished_text(ticket))}</p>")
            if ticket.state == lab.DONE:
                self.last_result = ticket.result
                self.result_pane.object = result_html(ticket.result)
            self._sync_buttons()

    def _reset_sweep(self, req, lengths):
        empty = {"n": [], "ms": [], "lo": [], "hi": [], "peak_mb": [], "kernel": []}
        with pn.io.hold():
            self.fused_source.data = dict(empty)
            self.math_source.data = dict(empty)
            self.guide_source.data = {"n": [], "linear": [], "quadratic": []}
            self.scores_source.data = scores_columns(req, lengths)
            self.progress.max = max(1, len(lengths))
            self.progress.value = 0
            self.progress.visible = self.progress_text.visible = True
            self.time_pane.visible = self.memory_pane.visible = True
            self.sweep_hint.visible = False
            self.progress_text.object = (f'<span aria-live="polite">0 of {len(lengths)} '
                                         "lengths</span>")
            self.sweep_note.object = ""
            self.sweep_table.object = ""

    def _show_sweep(self, result):
        cols = sweep_columns(result)
        self.fused_source.data = cols["auto"]
        self.math_source.data = cols["math"]
        self.guide_source.data = guide_columns(result)
        self.sweep_table.object = sweep_table_html(result)

    def _sweep_progress(self, done, total, result):
        with pn.io.hold():
            self.progress.max = total
            self.progress.value = done
            self.progress_text.object = (f'<span aria-live="polite">{done} of {total} '
                                         f"lengths (n = {result.lengths[done - 1]:,} done)</span>")
            self._show_sweep(result)

    def _sweep_done(self, ticket):
        result = ticket.result
        with pn.io.hold():
            cls = "" if ticket.state == lab.DONE else ' class="ae-error"'
            self.status.object = (f'<p{cls} aria-live="polite">'
                                  f"{esc(self._finished_text(ticket))}</p>")
            self.progress.visible = self.progress_text.visible = False
            if result is not None:
                self.last_result = result
                self._show_sweep(result)
                notes = [slope_text(result)]
                if result.stopped:
                    notes.append(f"The sweep {result.stopped}.")
                if result.peak_method:
                    notes.append(f"Peak memory is {result.peak_method}. Times are medians of "
                                 "3 to 7 calls after a warm-up call; the bars span fastest to "
                                 "slowest. The grey guides start at the first fused point.")
                self.sweep_note.object = ('<div class="ae-readout" aria-live="polite">'
                                          + "".join(f"<p>{esc(n)}</p>" for n in notes if n)
                                          + "</div>")
            self._sync_buttons()

    # ---- layout ----
    def __panel__(self):
        return self._layout

    def _build_layout(self):
        shapes = pn.FlexBox(self.batch_input, self.heads_input, self.kv_input, self.length_input,
                            self.head_dim_input, align_items="flex-end",
                            sizing_mode="stretch_width")
        choices = pn.FlexBox(
            pn.Column(label("dtype"), self.dtype_buttons, margin=0),
            pn.Column(label("masking"), self.masking_buttons, margin=0,
                      sizing_mode="stretch_width", max_width=480),
            pn.Column(label("backend"), self.backend_buttons, margin=0,
                      sizing_mode="stretch_width", max_width=420),
            sizing_mode="stretch_width")
        # a Bokeh pane's own `visible` does not hide its figure: hide a column around it
        self.time_pane = pn.Column(pn.pane.Bokeh(self.time_figure, sizing_mode="stretch_width"),
                                   visible=False, sizing_mode="stretch_width", margin=0)
        self.memory_pane = pn.Column(pn.pane.Bokeh(self.memory_figure,
                                                   sizing_mode="stretch_width"),
                                     visible=False, sizing_mode="stretch_width", margin=0)
        buttons = pn.FlexBox(self.run_button, self.sweep_button, self.cancel_button,
                             self.progress, self.progress_text, align_items="center",
                             sizing_mode="stretch_width")
        md = functools.partial(pn.pane.Markdown, sizing_mode="stretch_width",
                               disable_anchors=True, stylesheets=[CODE_CSS])

        def alone(*objects):  # shown on /kernel-lab; in the article the prose says it
            return [] if self.in_article else list(objects)

        return pn.Column(
            *alone(chrome.heading("Checking it on a real system: the kernel lab"), md(INTRO)),
            self.install_pane,
            self.env_pane,
            shapes,
            self.kv_error,
            choices,
            self.dtype_pane,
            chrome.heading("Before you run", 1, titled=not self.in_article),
            self.plan_pane,
            buttons,
            self.status,
            self.result_pane,
            *alone(md(LOOK_FOR)),
            self.sweep_hint,
            self.time_pane,
            self.sweep_note,
            self.sweep_table,
            self.memory_pane,
            *alone(md(EAGER_NOTE)),
            css_classes=["ae-panel"], sizing_mode="stretch_width", stylesheets=[STYLE])


class KernelLabLink(pn.viewable.Viewer):
    """The lab on a static page: it runs PyTorch on the server, so it is always live; a
    reader who never opens it costs nothing. One click opens it, in the page's state."""

    url_keys = KernelLabPanel.url_keys  # the URL plan of a chapter is the same either way

    def __init__(self, in_article=False, route="/kernel-lab"):
        super().__init__()
        for name in self.url_keys:  # the parameters, so a chapter's URL plan can name them
            self.param.add_parameter(name, param.Parameter(KernelLabPanel.param[name].default))
        md = functools.partial(pn.pane.Markdown, sizing_mode="stretch_width",
                               disable_anchors=True, stylesheets=[CODE_CSS])
        heading = [] if in_article else [
            chrome.heading("Checking it on a real system: the kernel lab"), md(INTRO)]
        self._layout = pn.Column(
            *heading,
            md("The kernel lab runs PyTorch's scaled dot-product attention on the explorable's "
               "server: which kernel it picks, how far it lands from a float64 reference, its "
               "time and peak memory, and a prefill sweep. That needs Python, so it opens on "
               "the live explorable."),
            chrome.live_button(route, "Open the kernel lab (live)"),
            css_classes=["ae-panel"], sizing_mode="stretch_width", stylesheets=[STYLE])

    def __panel__(self):
        return self._layout


def page():
    if is_static():
        return chrome.single_page(KernelLabLink, "The kernel lab")
    return chrome.single_page(KernelLabPanel, "The kernel lab")
