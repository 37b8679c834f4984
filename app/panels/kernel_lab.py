"""The kernel lab: which SDPA kernel this very server runs, and how prefill time grows with n.

One PyTorch call, scaled_dot_product_attention, hides several kernels. The learner picks
shapes, a dtype, a kind of mask and a backend, reads which kernel will run and why the
others were refused, then runs it here: the kernel that ran, its disagreement with a
float64 numpy reference, its time and its peak memory. A sweep times a prefill at doubling
prompt lengths, fused against math, on log-log axes with linear and quadratic guides.
"""

import dataclasses
import functools
import html
import logging

import panel as pn
import param
from panel.io.state import set_curdoc

import kernels
from app import lab
from app.kit import chrome, registry
from app.kit.theme import CODE_CSS
from app.lab.plan import EXPLAINER, explain
from app.panels.kernel_lab_charts import SweepCharts
from app.panels.kernel_lab_text import (
    EAGER_NOTE,
    INTRO,
    LOOK_FOR,
    MASKING_NOTE,
    STYLE,
    dtype_note,
    environment_html,
    esc,
    fmt_seconds,
    install_html,
    plan_html,
    result_html,
    slope_text,
    sweep_table_html,
)

log = logging.getLogger(__name__)

CAPS = lab.caps_from_env()
CPU_BACKENDS = ("auto", "flash", "math", "numpy")


@functools.cache
def runtime():  # -> (torch is here, CUDA is here, the backends offered here). torch is
    # imported when the first lab is built, not when this module is: the build and the
    # static pages never pay for it
    cuda = kernels.cuda_available()
    return (kernels.torch_or_none() is not None, cuda,
            kernels.BACKENDS if cuda else CPU_BACKENDS)
MASKING_LABELS = {"causal": "causal", "triangular mask": "mask", "none": "none"}  # label -> code


def label(text):  # a visible label above a button group
    return pn.pane.HTML(f'<span class="ae-label">{html.escape(text)}</span>',
                        margin=(4, 10, 0, 10), stylesheets=[STYLE])


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

    def __init__(self, runner=None, caps=None, in_chapter=False, **params):
        # in_chapter: the chapter's section right above already says what the lab's heading,
        # introduction, "what to try" and eager-weights notes say; leave those to /kernel-lab
        self.in_chapter = in_chapter
        self._runner = runner
        self.caps = caps or CAPS
        self.available, self.cuda, self.backends = runtime()
        super().__init__(**params)
        self.param.backend.objects = list(self.backends)  # this instance: what runs here
        self.ticket = None
        self.last_result = None
        self.plan_future = None
        self._doc = None
        self._build_readouts()
        self.charts = SweepCharts(self.caps)
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
        self.env_pane = html_pane(environment_html(self.caps) if self.available else "")
        self.kv_error = html_pane("", visible=False)
        self.dtype_pane = html_pane(f'<p class="ae-readout">{MASKING_NOTE} '
                                    f"{esc(dtype_note(self.cuda) if self.available else '')}</p>")
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
            sizing_mode="stretch_width", max_width=60 * len(self.backends) + 40,
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
        with pn.io.hold():
            self.charts.clear(req, lengths)
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
        self.charts.show(result)
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
        self.time_pane = pn.Column(pn.pane.Bokeh(self.charts.time_figure,
                                                 sizing_mode="stretch_width"),
                                   visible=False, sizing_mode="stretch_width", margin=0)
        self.memory_pane = pn.Column(pn.pane.Bokeh(self.charts.memory_figure,
                                                   sizing_mode="stretch_width"),
                                     visible=False, sizing_mode="stretch_width", margin=0)
        buttons = pn.FlexBox(self.run_button, self.sweep_button, self.cancel_button,
                             self.progress, self.progress_text, align_items="center",
                             sizing_mode="stretch_width")
        md = functools.partial(pn.pane.Markdown, sizing_mode="stretch_width",
                               disable_anchors=True, stylesheets=[CODE_CSS])

        def alone(*objects):  # shown on /kernel-lab; in the article the prose says it
            return [] if self.in_chapter else list(objects)

        return pn.Column(
            *alone(chrome.heading(registry.title_of(type(self))), md(INTRO)),
            self.install_pane,
            self.env_pane,
            shapes,
            self.kv_error,
            choices,
            self.dtype_pane,
            chrome.heading("Before you run", 1, titled=not self.in_chapter),
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
