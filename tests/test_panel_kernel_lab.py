"""The kernel lab panel without a browser: the plan before running, runs, sweeps, URL state,
and the page without torch."""

import pathlib
import subprocess
import sys
import textwrap

import pytest

from app import lab
from app.kit import registry, url_state
from app.panels import kernel_lab as panel_module
from app.panels import kernel_lab_text
from app.panels.kernel_lab import KernelLabPanel

ROOT = pathlib.Path(__file__).resolve().parents[1]
import torch  # a test dependency: missing torch fails here, it does not skip


@pytest.fixture
def runner():
    r = lab.LabRunner(on_start=lambda: lab.set_torch_threads(1))
    yield r
    r.shutdown()


def finish(ticket):
    assert ticket is not None and ticket.wait(60), "the job did not finish"
    return ticket


def test_defaults_url_keys_and_backends_on_this_machine():
    panel = KernelLabPanel()
    assert panel.url_keys == ("batch", "heads", "kv_heads", "length", "head_dim", "dtype",
                              "masking", "backend")
    assert (panel.batch, panel.heads, panel.kv_heads, panel.length) == (1, 8, 8, 1024)
    assert panel.param.length.bounds == (1, panel_module.CAPS.max_length)
    if not torch.cuda.is_available():
        assert list(panel.param.backend.objects) == ["auto", "flash", "math", "numpy"]
    assert list(panel.param.masking.objects) == ["causal", "mask", "none"]
    assert "Will run: flash attention" in panel.plan_pane.object
    assert not panel.run_button.disabled and panel.cancel_button.disabled


def test_the_plan_updates_on_control_changes_without_running(runner):
    panel = KernelLabPanel(runner=runner)
    panel.backend = "math"
    assert "Will run: math" in panel.plan_pane.object
    assert "flash attention</b>: excluded" in panel.plan_pane.object
    panel.backend = "auto"
    panel.kv_heads = 2
    assert "enable_gqa=True" in panel.plan_pane.object
    panel.masking = "mask"
    assert "Will run: flash attention" in panel.plan_pane.object
    assert "explicit mask" in panel.plan_pane.object
    assert panel.ticket is None and runner.queue_length() == 0
    assert panel.result_pane.object == ""


def test_the_plan_never_waits_on_a_busy_dispatcher(runner):
    import threading

    import kernels
    panel = KernelLabPanel(runner=runner, length=96)
    held, release = threading.Event(), threading.Event()

    def hold():  # a lab job in the middle of a torch call holds kernels' lock
        with kernels.RUN_LOCK:
            held.set()
            release.wait(10)

    threading.Thread(target=hold, daemon=True).start()
    assert held.wait(5)
    panel.head_dim = 40  # a shape not asked about before: it must not block here
    assert "Asking PyTorch" in panel.plan_pane.object
    release.set()
    panel.plan_future.result(10)
    assert "Will run: flash attention" in panel.plan_pane.object
    assert "[1, 8, 96, 40]" in panel.plan_pane.object


def test_math_over_the_byte_cap_is_refused_before_running(runner):
    panel = KernelLabPanel(runner=runner, length=8192, backend="math")
    assert "Refused" in panel.plan_pane.object and "1.50 GB" in panel.plan_pane.object
    assert panel.run_button.disabled
    assert panel.run() is None
    assert "1.50 GB" in panel.status.object and runner.queue_length() == 0
    panel.backend = "auto"
    assert "Will run: flash attention" in panel.plan_pane.object
    assert not panel.run_button.disabled


def test_kv_heads_not_dividing_heads_shows_an_inline_error_and_does_not_run(runner):
    panel = KernelLabPanel(runner=runner, heads=8, kv_heads=3)
    assert panel.kv_error.visible
    assert "must divide" in panel.kv_error.object and 'role="alert"' in panel.kv_error.object
    assert panel.run_button.disabled and panel.sweep_button.disabled
    assert panel.run() is None and panel.sweep() is None
    assert runner.queue_length() == 0 and panel.ticket is None
    panel.kv_heads = 4
    assert not panel.kv_error.visible and not panel.run_button.disabled


def test_a_small_run_reports_flash_and_agrees_with_the_reference(runner):
    panel = KernelLabPanel(runner=runner, length=64)
    finish(panel.run())
    assert panel.ticket.state == lab.DONE, panel.ticket.error
    text = panel.result_pane.object
    assert "Ran: flash attention</b> on cpu in float32" in text
    assert panel.last_result.backend == "flash attention"
    assert panel.last_result.comparison.disagreement < 1e-5
    assert "median of" in text and "Peak memory" in text
    assert "Finished the run" in panel.status.object
    assert not panel.run_button.disabled and panel.cancel_button.disabled


def test_the_math_backend_reports_math(runner):
    panel = KernelLabPanel(runner=runner, length=64, backend="math")
    finish(panel.run())
    assert panel.last_result.backend == "math"
    assert "Ran: math</b>" in panel.result_pane.object
    assert panel.last_result.comparison.disagreement < 1e-5


def test_a_second_panel_waits_in_line_and_can_cancel(runner):
    import threading
    gate = threading.Event()
    runner.submit(lambda ctx: gate.wait(10), timeout_s=20)  # someone else's job
    panel = KernelLabPanel(runner=runner, length=64)
    ticket = panel.run()
    assert ticket.position == 1
    assert "2nd in line" in panel.status.object
    assert not panel.cancel_button.disabled and panel.run_button.disabled
    panel.cancel()
    assert finish(ticket).state == lab.CANCELLED
    assert "cancelled" in panel.status.object
    assert not panel.run_button.disabled
    gate.set()


def test_a_sweep_fills_the_figures_with_progress(runner, monkeypatch):
    caps = lab.Caps(max_length=1024)
    panel = KernelLabPanel(runner=runner, caps=caps, heads=2, kv_heads=2, head_dim=16)
    steps = []
    original = panel._sweep_progress

    def spy(done, total, result):
        original(done, total, result)
        steps.append((done, total, panel.progress.value, panel.progress_text.object))

    monkeypatch.setattr(panel, "_sweep_progress", spy)
    assert not panel.time_pane.visible and panel.sweep_hint.visible
    finish(panel.sweep())
    assert panel.time_pane.visible and panel.memory_pane.visible and not panel.sweep_hint.visible
    assert panel.ticket.state == lab.DONE, panel.ticket.error
    assert [(d, t, v) for d, t, v, _ in steps] == [(1, 3, 1), (2, 3, 2), (3, 3, 3)]
    assert "2 of 3" in steps[1][3]
    assert list(panel.charts.fused_source.data["n"]) == [256, 512, 1024]
    assert list(panel.charts.math_source.data["n"]) == [256, 512, 1024]
    assert set(panel.charts.fused_source.data["kernel"]) == {"flash attention"}
    guides = panel.charts.guide_source.data
    assert guides["quadratic"][-1] == pytest.approx(guides["linear"][-1] * 4)
    assert "2 × 1,024² × 4 B" in panel.sweep_table.object
    assert "log-log slope" in panel.sweep_note.object
    assert not panel.progress.visible


def test_figures_and_sources_are_built_once(runner):
    panel = KernelLabPanel(runner=runner)
    charts = panel.charts
    before = [id(x) for x in (charts.time_figure, charts.memory_figure, charts.fused_source,
                              charts.math_source)]
    panel.param.update(length=64, heads=4, kv_heads=1, dtype="bfloat16", masking="none")
    after = [id(x) for x in (charts.time_figure, charts.memory_figure, charts.fused_source,
                             charts.math_source)]
    assert before == after and panel.__panel__() is panel.__panel__()


def test_url_restore_clamps_length_to_the_cap_with_a_note(runner):
    panel = KernelLabPanel(runner=runner)
    repairs = url_state.restore(panel, panel.url_keys,
                                args={"length": [str(10 ** 9).encode()], "backend": [b"cudnn"],
                                      "masking": [b"mask"], "dtype": [b"bfloat16"]})
    cap = panel_module.CAPS.max_length
    assert panel.length == cap
    assert any("length" in n and str(cap) in n for n in repairs)
    assert (panel.masking, panel.dtype) == ("mask", "bfloat16")
    if not torch.cuda.is_available():
        assert panel.backend == "auto" and any("backend" in n for n in repairs)
    assert panel.ticket is None and runner.queue_length() == 0  # never runs on load


def test_page_builds():
    record = registry.by_route("/kernel-lab")
    assert record.page().name == record.title == registry.title_of(KernelLabPanel)


NO_TORCH = textwrap.dedent("""
    import sys
    sys.modules["torch"] = None  # `import torch` now raises ImportError
    from app.panels import kernel_lab as k
    panel = k.KernelLabPanel()
    assert k.runtime()[0] is False and not panel.available
    assert panel.install_pane.visible
    text = panel.install_pane.object
    assert "PyTorch is not installed" in text, text
    assert "pip install torch==2.13.0" in text
    assert "pip install &#x27;attention-explorable[kernels]&#x27;" in text
    assert panel.run_button.disabled and panel.sweep_button.disabled
    assert panel.run() is None and "not installed" in panel.status.object
    panel.length = 4096  # the rest still answers
    assert "numpy reference" in panel.plan_pane.object
    from app.kit import registry
    registry.by_route("/kernel-lab").page()
    registry.by_route("/sqrt-dk").page()
    print("ok")
""")


def test_without_torch_the_panel_shows_the_install_hint():
    out = subprocess.run([sys.executable, "-c", NO_TORCH], cwd=ROOT, capture_output=True,
                         check=False,
                         text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
                         timeout=60)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().endswith("ok")


def shown_text(panel):  # the text of every Markdown and HTML pane in the panel's layout
    import panel as pn

    return " ".join(str(p.object) for p in panel.__panel__().select(
        lambda o: isinstance(o, (pn.pane.Markdown, pn.pane.HTML))))


def test_in_the_article_the_lab_leaves_its_heading_and_notes_to_the_prose():
    alone, in_chapter = shown_text(KernelLabPanel()), shown_text(KernelLabPanel(in_chapter=True))
    for text in ("Checking it on a real system: the kernel lab", kernel_lab_text.INTRO,
                 kernel_lab_text.LOOK_FOR, kernel_lab_text.EAGER_NOTE):
        assert text in alone and text not in in_chapter
    for text in ("Before you run", "Sweep prompt length"):  # the lab itself stays
        assert text in in_chapter


def test_inline_code_in_the_notes_is_not_pale_blue():
    import panel as pn

    from app.kit.theme import CODE_CSS

    notes = KernelLabPanel().__panel__().select(pn.pane.Markdown)
    assert notes and all(CODE_CSS in md.stylesheets for md in notes)
    assert "color: inherit" in CODE_CSS


def test_the_notes_say_what_this_pytorch_does():
    # "the first, in a fixed order of preference": SDPA does not measure which is best
    assert "takes the first, in a fixed order of preference" in kernel_lab_text.INTRO
    assert "best one" not in kernel_lab_text.INTRO
    # "on CPU, this page's PyTorch gives none": a math fallback (flash needs one head_dim for
    # q, k and v) raises no warning at all
    assert "without any warning (on CPU, this page's PyTorch gives none)" in kernel_lab_text.INTRO
    import warnings

    q, v = torch.randn(1, 2, 7, 16), torch.randn(1, 2, 7, 8)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.nn.functional.scaled_dot_product_attention(q, q, v)
    assert caught == []
    # "a millionth" holds for float32 alone; the sweep times one call, not a whole prefill
    assert "In float32 the output agrees with the reference to about a millionth" in (
        kernel_lab_text.LOOK_FOR)
    assert "~1e-6" in kernel_lab_text.expected_error("float32")
    assert "linear regime" not in kernel_lab_text.LOOK_FOR
    assert "near 4×, the n² arithmetic does" in kernel_lab_text.LOOK_FOR
    assert "batch (sequences per call) × heads × n² × bytes" in kernel_lab_text.EAGER_NOTE
