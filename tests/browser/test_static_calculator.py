"""Your own config.json on the static /cost page, counted in the browser (static/cost_calculator.js
and the JavaScript twin of the cost core), against `attention-explorable costs --config FILE
--json` run here as a subprocess.

The pages are the static build (tests/conftest.py's `site_build`), served by a plain static
server (Python's http.server) and opened from file://, on a desktop and in Pixel 5 emulation.
A config goes in through the file dialog's input, a drop on the drop zone and the paste box;
the readouts must hold the CLI's numbers (integers exactly, floats within 1e-12) and show
them as app/kit/fmt.py writes them; a prompt between the page's stops (3,000) is counted at
3,000; a broken file shows the CLI's own message and leaves every number as it was; the twin
is fetched only once the calculator is used; no request leaves the page's own files; axe
finds nothing serious.

The box is the page's, not Bokeh's: with every Bokeh and Panel bundle blocked it is there and
counts a pasted config as attention_core.costs does, without a request for BokehJS (then the
island's own button asks for Bokeh, the positive control, and the box counts on); mounting the
island leaves one box, the same one, which the mounted panel links to.
"""

import functools
import json
import math
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from app.kit import fmt
from app.panels.model_picker import CALCULATOR_ID
from attention_core import costs
from tests.browser.axe_core import axe
from tests.browser.conftest import DOCUMENT_IDLE_JS, RENDER_TIMEOUT_MS
from tests.browser.test_static_build import (  # noqa: F401 (built, file_server: fixtures)
    Watch,
    built,
    close_watched,
    file_server,
)

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "tests" / "fixtures" / "configs"
CLI = Path(sys.executable).parent / "attention-explorable"
PROMPT, CONTEXT = 3000, 5000  # between the page's stops (2,048 and 4,096; 4,096 and 8,192)
NO_HEADS = ("heads", "kv_heads", "head_dim", "v_head_dim")  # shown as none where none attends
SHAPE = ("layers", "heads", "kv_heads", "head_dim", "v_head_dim", "hidden", "intermediate",
         "vocab")
FAILING = ("critical", "serious")
# axe's defaults, less its preload of stylesheets (an XHR, which file:// refuses): as
# tests/browser/test_a11y.py runs it
AXE_OPTIONS = {"resultTypes": ["violations"], "preload": {"assets": ["media"]}}

# every readout: data-k -> [its text, its full value]
READOUTS_JS = """() => {
  const out = {}, roots = [document];
  while (roots.length) {
    const root = roots.pop();
    for (const e of root.querySelectorAll(".ae-calc [data-k]")) {
      out[e.dataset.k] = [e.textContent, e.dataset.value ?? null];
    }
    for (const e of root.querySelectorAll("*")) { if (e.shadowRoot) { roots.push(e.shadowRoot); } }
  }
  return out;
}"""


@functools.cache  # the same answer for every device and way in: asked once a run
def cli(config, kernel="triangular", kv_dtype="bf16", stdin=None):
    # -> (the CLI's JSON, or None, and its stderr): prompt 3,000, context 5,000
    command = [str(CLI)] if CLI.exists() else [sys.executable, "-m", "app.hosting.cli"]
    done = subprocess.run([*command, "costs", "--config", str(config), "--prompt", str(PROMPT),
                           "--generate", str(CONTEXT - PROMPT), "--kernel", kernel,
                           "--kv-dtype", kv_dtype, "--json"], input=stdin, capture_output=True,
                          text=True, timeout=120, cwd=ROOT, check=False)
    return (json.loads(done.stdout) if done.returncode == 0 else None), done.stderr.strip()


def cli_message(stderr):  # "attention-explorable costs: field: problem" -> "field: problem"
    prefix = "attention-explorable costs: "
    assert stderr.startswith(prefix), stderr
    return stderr[len(prefix):]


@pytest.fixture(params=["desktop", "Pixel 5"])
def device(request, playwright):
    if request.param == "desktop":
        return {"viewport": {"width": 1280, "height": 900}}
    return dict(playwright.devices["Pixel 5"])


@pytest.fixture
def open_cost(browser, built, file_server, device):  # noqa: F811
    # open_cost(via) -> (page, requests): /cost of the build, rendered; every request it makes
    contexts = []

    def _open(via):
        context = browser.new_context(**device)
        page = context.new_page()
        page.set_default_timeout(RENDER_TIMEOUT_MS)
        requests = []
        page.on("request", lambda r: requests.append(r.url))
        if via == "http":
            watch = Watch(page, urlsplit(file_server).netloc)
            url = file_server + "/cost/"
        else:
            watch = Watch(page, None)
            url = (built / "cost" / "index.html").as_uri()
        contexts.append((context, watch))
        page.goto(url)
        page.wait_for_function(DOCUMENT_IDLE_JS, timeout=RENDER_TIMEOUT_MS)
        expect(calc(page)).to_be_visible()
        origin = file_server if via == "http" else built.as_uri()
        return page, requests, origin

    yield _open
    close_watched(contexts)


def calc(page):
    return page.locator(".ae-calc")


def readouts(page):
    return page.evaluate(READOUTS_JS)


def counted(page, source):  # wait until the calculator says it counts `source`
    expect(page.locator(".ae-calc-status")).to_contain_text(f", from {source}.")


def close(shown, want):
    return shown == want or abs(shown - want) <= 1e-12 * abs(want)


def check_against_cli(page, config, kv_dtype="bf16"):
    # the readouts hold the CLI's numbers and show them as app/kit/fmt.py writes them
    runs = {k: cli(config, k, kv_dtype)[0] for k in ("triangular", "naive")}
    r, got = runs["triangular"], readouts(page)
    attends = r["pair_flops"] > 0  # no layer attends: no pair to count
    for key in SHAPE:
        text, value = got[f"shape.{key}"]
        shown = (f"{r['shape'][key]:,}" if attends or key not in NO_HEADS else
                 "none (no layer attends)")  # Mamba: the heads counted back out are no model's
        assert int(value) == r["shape"][key] and text == shown, key
    for key in ("pair_flops", "matmul_params", "kv_bytes_per_token", "kv_bytes_per_user",
                "weight_bytes"):
        assert int(got[key][1]) == r[key], (key, got[key], r[key])
    assert got["pair_flops"][0] == fmt.thousands(r["pair_flops"])
    assert got["matmul_params"][0] == (f"{fmt.thousands(r['matmul_params'])} "
                                       f"(≈ {fmt.scale_words(r['matmul_params'])})")
    assert got["kv_bytes_per_token"][0] == f"{r['kv_bytes_per_token']:,} bytes ({kv_dtype})"
    assert got["kv_bytes_per_user"][0] == (f"{r['kv_bytes_per_user']:,} bytes = "
                                           f"{fmt.gb_and_gib(r['kv_bytes_per_user'])} at "
                                           f"{CONTEXT:,} tokens")
    assert got["weight_bytes"][0].startswith(fmt.gb_and_gib(r["weight_bytes"]) + " (bf16, ")
    for key in ("kv_convention", "weight_convention"):  # the line saying how each is counted
        assert got[key][0] == r[key], (key, got[key], r[key])
    for kernel, run in runs.items():
        text, value = got[f"share_{kernel}"]
        assert close(float(value), run["prefill_attention_share"]), (kernel, value)
        assert text == f"{fmt.percent(run['prefill_attention_share'])} at {PROMPT:,} tokens"
        text, value = got[f"crossover_{kernel}"]
        if run["crossover_tokens"] is None:
            assert (value, text) == ("Infinity", "never"), kernel
        else:
            assert close(float(value), run["crossover_tokens"]), (kernel, value)
            assert text == fmt.tokens_or_never(run["crossover_tokens"])
    text, value = got["kv_outweighs_weights_context"]
    if r["kv_outweighs_weights_context"] is None:
        assert value == "Infinity" and text.startswith("never"), text
    else:
        assert close(float(value), r["kv_outweighs_weights_context"])
        assert text.startswith(fmt.tokens_or_never(r["kv_outweighs_weights_context"]))
    text, value = got["decode_arithmetic_intensity"]
    assert close(float(value), r["decode_arithmetic_intensity"])
    assert text == f"{r['decode_arithmetic_intensity']:.1f} FLOP/byte"
    return got


def set_tokens(page, label, value):
    page.get_by_label(label, exact=True).fill(str(value))


def drop(page, path):  # a file dropped on the drop zone, as a drag from the desktop makes it
    data = page.evaluate_handle("""([name, text]) => {
      const dt = new DataTransfer();
      dt.items.add(new File([text], name, {type: "application/json"}));
      return dt;
    }""", [path.name, path.read_text()])
    zone = page.locator(".ae-calc-drop")
    zone.dispatch_event("dragenter", {"dataTransfer": data})
    zone.dispatch_event("dragover", {"dataTransfer": data})
    zone.dispatch_event("drop", {"dataTransfer": data})


@pytest.mark.parametrize("via", ["http", "file"])
def test_your_config_counted_in_the_browser_is_the_clis(open_cost, via, tmp_path):
    page, requests, origin = open_cost(via)
    assert not [u for u in requests if u.endswith("cost_model.js")]  # not before first use
    expect(page.locator(".ae-calc-out")).to_be_hidden()  # nothing counted yet

    # the file dialog's input, then a prompt and a context between the stops
    mistral = CONFIGS / "mistral-7b-v0.1.json"
    page.locator(".ae-calc input[type=file]").set_input_files(mistral)
    counted(page, mistral.name)
    set_tokens(page, "Prompt tokens", PROMPT)
    set_tokens(page, "Context tokens", CONTEXT)
    expect(page.locator('[data-k="share_triangular"]')).to_contain_text(f"at {PROMPT:,} tokens")
    expect(page.locator('[data-k="kv_bytes_per_user"]')).to_contain_text(f"at {CONTEXT:,} tokens")
    check_against_cli(page, mistral)

    # a broken file: the CLI's message, in an alert; every number stays
    before = readouts(page)
    broken = tmp_path / "broken.json"
    broken.write_text('{"num_hidden_layers": 0, "hidden_size": 4096}')
    page.locator(".ae-calc input[type=file]").set_input_files(broken)
    alert = page.get_by_role("alert").filter(has_text="Could not count broken.json")
    expect(alert).to_be_visible()
    message = cli_message(cli(str(broken))[1])
    expect(alert.locator(".ae-calc-message")).to_have_text(message)
    expect(alert).to_contain_text("Still counting")
    assert readouts(page) == before
    assert "broken.json" not in page.locator(".ae-calc-status").text_content()

    # a prompt that is not a count: said beside the field; the numbers stay
    set_tokens(page, "Prompt tokens", "3.5")
    expect(page.locator(".ae-calc-bad").first).to_contain_text("expected a whole number")
    expect(page.get_by_label("Prompt tokens", exact=True)).to_have_attribute("aria-invalid", "true")
    assert readouts(page) == before
    set_tokens(page, "Prompt tokens", PROMPT)

    # a drop on the drop zone, with an fp8 cache: OPT's numbers, and the alert clears
    opt = CONFIGS / "opt-13b.json"
    page.get_by_label("KV cache dtype").select_option("fp8")
    drop(page, opt)
    counted(page, opt.name)
    expect(page.locator('[data-k="kv_bytes_per_token"]')).to_contain_text("(fp8)")
    expect(page.get_by_role("alert").filter(has_text="Could not")).to_have_count(0)
    check_against_cli(page, opt, kv_dtype="fp8")

    # an AWQ upload: its weights as the checkpoint packs them, not as bf16
    awq = CONFIGS / "qwen2.5-7b-instruct-awq.json"
    page.get_by_label("KV cache dtype").select_option("bf16")
    drop(page, awq)
    counted(page, awq.name)
    expect(page.locator('[data-k="weight_convention"]')).to_contain_text("packed by awq")
    check_against_cli(page, awq)

    # Mamba: no layer attends, so it has no heads to show and its cache never outweighs
    mamba = tmp_path / "mamba-130m.json"
    mamba.write_text(json.dumps({
        "model_type": "mamba", "hidden_size": 768, "intermediate_size": 1536,
        "num_hidden_layers": 24, "vocab_size": 50280, "state_size": 16, "conv_kernel": 4,
        "expand": 2, "time_step_rank": 48, "tie_word_embeddings": True}))
    drop(page, mamba)
    counted(page, mamba.name)
    check_against_cli(page, mamba)
    expect(page.locator('[data-k="shape.heads"]')).to_have_text("none (no layer attends)")
    expect(page.locator('[data-k="kv_outweighs_weights_context"]')).to_have_text(
        "never: no layer attends, so there is no KV cache")

    # a broken paste: the same message the CLI gives for the same text on stdin
    page.get_by_label("or paste config.json here").fill('{"num_hidden_layers": 32,')
    page.get_by_role("button", name="Count the pasted config").click()
    message = cli_message(cli("-", stdin='{"num_hidden_layers": 32,')[1])
    alert = page.get_by_role("alert").filter(has_text="Could not count the pasted text")
    expect(alert.locator(".ae-calc-message")).to_have_text(message)

    # the twin came once, from the page's own files; nothing else left the page
    twins = [u for u in requests if u.endswith("cost_model.js")]
    assert len(twins) == 1 and twins[0].startswith(origin), twins
    away = [u for u in requests if not u.startswith((origin, "data:", "blob:"))]
    assert not away, away
    found = axe().run(page, options=AXE_OPTIONS).response["violations"]
    serious = [(v["id"], v["nodes"][0]["target"]) for v in found if v["impact"] in FAILING]
    assert not serious, serious


def test_the_keyboard_alone_counts_a_pasted_config(open_cost):
    page, _, _ = open_cost("file")
    text = (CONFIGS / "qwen3-8b.json").read_text()
    box = page.get_by_label("or paste config.json here")
    box.focus()
    box.fill(text)
    page.keyboard.press("Tab")  # to the button
    focused = page.evaluate("""() => { let a = document.activeElement;
      while (a && a.shadowRoot && a.shadowRoot.activeElement) { a = a.shadowRoot.activeElement; }
      return a.textContent; }""")
    assert focused == "Count the pasted config"
    page.keyboard.press("Enter")
    counted(page, "the pasted text")
    assert readouts(page)["pair_flops"][0] == "589,824"  # the documents' Qwen3-8B
    assert not math.isnan(float(readouts(page)["crossover_triangular"][1]))


# --- the box before and without Bokeh ---------------------------------------------------------

# what an island mounts with: BokehJS and its widget bundles (test_mount_on_intent's BOKEH_JS)
# and Panel's
BUNDLE_JS = re.compile(r"/(bokeh|panel)[^/]*\.js$")
# the calculator's boxes and filled boxes, in the page and in every shadow root
BOXES_JS = """() => {
  const out = {boxes: 0, filled: 0}, roots = [document];
  while (roots.length) {
    const root = roots.pop();
    out.boxes += root.querySelectorAll(".ae-cost-calculator").length;
    out.filled += root.querySelectorAll(".ae-calc").length;
    for (const e of root.querySelectorAll("*")) { if (e.shadowRoot) { roots.push(e.shadowRoot); } }
  }
  return out;
}"""


@pytest.fixture
def cost_page(browser, file_server, device):  # noqa: F811
    # cost_page(block) -> (page, blocked, uncaught): /cost from the plain static server, not
    # yet waited on; with `block`, every bundle request aborted and listed in `blocked`
    contexts = []

    def _open(block):
        context = browser.new_context(**device)
        contexts.append(context)
        blocked, uncaught = [], []

        def abort(route):
            blocked.append(route.request.url)
            route.abort()

        if block:
            context.route(lambda url: BUNDLE_JS.search(url) is not None, abort)
        page = context.new_page()
        page.set_default_timeout(RENDER_TIMEOUT_MS)
        page.on("pageerror", lambda e: uncaught.append(str(e)))
        page.goto(file_server + "/cost/")
        return page, blocked, uncaught

    yield _open
    for context in contexts:
        context.close()


def core_figures(config, prompt, context, kv_dtype, weight_dtype):
    # -> {readout: value}: the config counted by attention_core.costs, as the box counts it
    m = costs.ModelShape.from_config(costs.parse_config_text(config.read_bytes()))
    kv_b, w_b = costs.dtype_bytes(kv_dtype), costs.dtype_bytes(weight_dtype)
    out = {f"shape.{key}": getattr(m, key) for key in SHAPE}
    out |= {"pair_flops": costs.pair_flops(m), "matmul_params": costs.matmul_params(m),
            "kv_bytes_per_token": costs.kv_bytes_per_token(m, kv_b),
            "kv_bytes_per_user": int(costs.kv_cache_bytes(m, context, bytes_per_value=kv_b)),
            "state_bytes_per_user": int(costs.state_bytes(m, 1, kv_b)),
            "weight_bytes": costs.weight_bytes(m, w_b),
            "kv_outweighs_weights_context": costs.kv_outweighs_weights_context(
                m, 1, kv_b, weight_bytes_per_value=w_b),
            "decode_arithmetic_intensity": costs.decode_arithmetic_intensity(m, prompt, kv_b)}
    for kernel in costs.KERNELS:
        out[f"share_{kernel}"] = costs.prefill_attention_share(m, prompt, kernel)
        out[f"crossover_{kernel}"] = costs.crossover_tokens(m, kernel)
    return out


def check_against_core(page, config):  # the readouts hold what attention_core.costs counts
    # at the box's own prompt, context and dtypes
    def field(label):
        return page.get_by_label(label, exact=True).input_value()

    prompt = int(field("Prompt tokens"))
    want = core_figures(config, prompt, int(field("Context tokens")), field("KV cache dtype"),
                        field("Weights dtype"))
    got = readouts(page)
    wrong = {k: (got[k][1], v) for k, v in want.items() if not close(float(got[k][1]), v)}
    assert not wrong, wrong
    assert got["pair_flops"][0] == fmt.thousands(want["pair_flops"])
    assert got["share_triangular"][0] == (f"{fmt.percent(want['share_triangular'])} at "
                                          f"{prompt:,} tokens")


def paste(page, config):
    page.get_by_label("or paste config.json here").fill(config.read_text())
    page.get_by_role("button", name="Count the pasted config").click()
    counted(page, "the pasted text")


def test_the_box_counts_a_pasted_config_with_every_bokeh_bundle_blocked(cost_page):
    page, blocked, uncaught = cost_page(block=True)
    box = page.locator(f"#{CALCULATOR_ID}")
    expect(box.locator(".ae-calc")).to_be_visible()
    expect(box.get_by_label("or paste config.json here")).to_be_enabled()
    expect(box.get_by_label("Your config.json")).to_be_enabled()
    gpt2 = CONFIGS / "gpt2.json"
    paste(page, gpt2)
    check_against_core(page, gpt2)
    assert blocked == [] and page.evaluate("window.Bokeh === undefined"), blocked
    assert page.locator(".ae-island.ae-mounted").count() == 0
    assert not uncaught, uncaught

    # the positive control: the island's own button asks for Bokeh, which is blocked...
    page.get_by_role("button", name="Load the interactive chart").click()
    expect(page.locator(".ae-island-error")).to_contain_text("could not be loaded")
    assert [u for u in blocked if "/bokeh" in u], blocked
    # ...and the box counts on: another prompt, the core's numbers for it
    set_tokens(page, "Prompt tokens", PROMPT)
    expect(page.locator('[data-k="share_triangular"]')).to_contain_text(f"at {PROMPT:,} tokens")
    check_against_core(page, gpt2)


def test_mounting_the_island_leaves_the_one_box_it_links_to(cost_page):
    page, _, uncaught = cost_page(block=False)
    expect(page.locator(".ae-calc")).to_be_visible()
    assert page.evaluate(BOXES_JS) == {"boxes": 1, "filled": 1}
    qwen = CONFIGS / "qwen3-8b.json"
    paste(page, qwen)
    before = readouts(page)
    page.evaluate("document.querySelector('.ae-calc').dataset.seen = 'before the mount'")
    # asked for as test_mount_on_intent asks: the island's own button
    page.get_by_role("button", name="Load the interactive chart").click()
    expect(page.locator(".ae-island.ae-mounted")).to_have_count(1, timeout=RENDER_TIMEOUT_MS)
    page.wait_for_function(DOCUMENT_IDLE_JS, timeout=RENDER_TIMEOUT_MS)
    assert page.evaluate(BOXES_JS) == {"boxes": 1, "filled": 1}
    assert page.locator(".ae-island .ae-calc").count() == 0
    expect(page.locator(".ae-calc")).to_have_attribute("data-seen", "before the mount")
    assert readouts(page) == before  # the same box, its figures as they were
    # the mounted panel, where a live page takes an upload, links to the box
    page.get_by_role("link", name="the box under this panel").click()
    expect(page.locator(".ae-calc")).to_be_in_viewport()
    assert not uncaught, uncaught


def test_without_scripts_the_box_says_so_and_print_keeps_the_figures_alone(
        cost_page, browser, file_server, device):  # noqa: F811
    context = browser.new_context(**device, java_script_enabled=False)
    try:
        bare = context.new_page()
        bare.goto(file_server + "/cost/")
        # read as a reader sees it: Playwright's text matchers skip a <noscript>
        said = bare.locator(f"#{CALCULATOR_ID}").inner_text()
        assert "needs JavaScript" in said and "costs --config FILE" in said, said
    finally:
        context.close()
    page, _, _ = cost_page(block=True)
    expect(page.locator(".ae-calc")).to_be_visible()
    page.emulate_media(media="print")
    expect(page.locator(".ae-calc")).to_be_hidden()  # nothing counted: nothing to print
    page.emulate_media(media="screen")
    paste(page, CONFIGS / "gpt2.json")
    page.emulate_media(media="print")
    expect(page.locator(".ae-calc-out")).to_be_visible()
    for part in (".ae-calc-drop", ".ae-calc-paste", ".ae-calc button"):
        expect(page.locator(part)).to_be_hidden()
