"""First touch on a phone: how long until a control answers, and how a tap feels.

    python benchmarks/first_touch.py [--runs 3] [--taps 10] [--routes /heatmap / /live]
    python benchmarks/first_touch.py --smoke      # one short run, no targets (make test)
    python benchmarks/first_touch.py --calculator --runs 5   # /cost's config.json box alone

Starts `attention-explorable serve` on a free loopback port (the static build and the live
server, as `make serve` serves them; benchmarks/lighthouse.py's `served`), adds a bare Bokeh
page (a heatmap, a toggle and a CustomJS, its scripts deferred) and opens each page in
Debian's Chromium as a Pixel 5 (Playwright's device emulation: viewport, touch) with the
CPU slowed 4x (CDP `Emulation.setCPUThrottlingRate`, Lighthouse's mobile setting), a new
context (cold cache) per load. Pages: every panel's static page, each chapter's first island
(static "/", "/math"; live "/live", "/live/math") and the bare page.

Per load it measures, in the page:
- control usable: ms from navigation (panel pages, the bare page) or from scrolling the
  first island into view (chapters) until a control of that island is on the page, enabled
  and wired: a native control over its still (static/still_controls.js sets its listeners
  as it makes it), or a Bokeh button with every Bokeh document idle (and on static pages
  every state table booted). Checked every 50 ms in the page (`wait_for_function`).
- then `--taps` taps (Playwright's touch tap) on its buttons in turn (a radio group's active
  button skipped: tapping it changes nothing). Per tap: INP as the Event Timing API gives it
  (a PerformanceObserver of type "event", durationThreshold 16, read in the page: the
  longest entry of the tap's interactionId; a tap with no entry took under 16 ms and is
  counted as 16), and tap to state: from the tap's pointerdown to the first DOM change
  (document and shadow roots; for a native control, the still redrawn in the new state, its
  island's data-ae-still), painted (the next animation frame and a task), and to the
  address written (history.replaceState / pushState; the bare page has no address).
  A tap with no change in 5 s is a sample at 5 s, counted in "timeouts". A range input is
  tapped on its track, away from its value. Taps go to the native controls while they stand,
  to Bokeh's once the island has mounted; the row counts how many were native.
- then, where native controls were tapped, the reader asks for the interactive chart (an
  island with native controls mounts only on intent) and taps once more as soon as BokehJS's
  bundle has run: its INP, apart, is what a reader meets who taps just as the mount's long
  tasks start. A live chapter's panel shows its static still with native controls until its
  session's panel takes over (app/chapters/live_stills.py); its session attaches as the reader
  nears it, and the tap apart is made as the session has attached, its panels next.

Prints one row per page: median and min-max of control usable, INP median and p95, tap to
state (painted) and to address median and p95, and the INP of the tap as the mount begins;
then a second table of where the taps' time goes (Event Timing's input delay, processing and
presentation delay of each tap's longest entry).
The issue's targets (issue 41: usable ≤ 1.5 s at the median, INP p95 ≤ 100 ms, state and
address ≤ 200 ms) are read from this table; the script asserts none. Needs Chromium at
/usr/bin/chromium ($CHROMIUM).

`--calculator` measures one thing instead, on the same phone: the static /cost page's box for
a config.json of your own (static/cost_calculator.js fills it in the page's HTML, outside the
island). Per load, ms from navigation until its file input and paste box are on the page,
enabled and wired (seen by a MutationObserver installed before the page's scripts: the
calculator wires them as it makes them), and until that is painted (the next frame and a
task); the first contentful paint beside them, and how many BokehJS requests the page had
made by then (none: the box does not wait for Bokeh). Prints each load, then the median and
min-max (issue 52's target: the box usable within 0.5 s of /cost loading, at the median).
"""

import argparse
import datetime
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import sync_playwright

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.append(str(HERE))  # after the packages: benchmarks/kernels.py must not shadow them
import lighthouse  # benchmarks/lighthouse.py: the served build, its bare page

from app.kit import registry

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
CPU_SLOWDOWN = 4
TAP_TIMEOUT_MS = 5000
USABLE_TIMEOUT_MS = 60_000
BARE = "/assets/bench/first-touch-bare.html"
CHAPTERS = ["/", "/math", "/live", "/live/math"]
SMOKE_ROUTES = ["/heatmap", "/", "/live", BARE]

# Installed before any script of the page: Event Timing entries, and when the address is
# written (the page's own replaceState / pushState, wrapped).
INIT_JS = """
window.__ft = {events: [], address: []};
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    if (e.interactionId) {  // its parts: input delay, processing, presentation
      __ft.events.push([e.interactionId, e.duration, e.processingStart - e.startTime,
                        e.processingEnd - e.processingStart,
                        e.startTime + e.duration - e.processingEnd]);
    }
  }
}).observe({type: "event", durationThreshold: 16, buffered: true});
for (const name of ["replaceState", "pushState"]) {
  const own = history[name];
  history[name] = function (...args) { __ft.address.push(performance.now());
                                       return own.apply(this, args); };
}
"""

# the region of the page whose controls count: the first island of a chapter, else the page
REGION_JS = """(chapter) => {
  if (!chapter) { return document.body; }
  return document.querySelector(".ae-island, .ae-live-panel");
}"""

# -> the region's tappable controls, in page order: the native controls over a still while
# they stand (static/still_controls.js: buttons and range inputs), else Bokeh's buttons (in
# shadow roots too); with `any`, every control (slider handles, selects, inputs too: a page of
# Bokeh sliders alone is usable, not tapped)
BUTTONS_JS = """(region, any) => {
  const native = [...region.querySelectorAll(".ae-still-controls " + (any
    ? "button, input, select" : "button, input[type=range]"))];
  if (native.length) { return native; }
  const out = [];
  const walk = (root) => {
    const kinds = any ? "button.bk-btn, .noUi-handle, select, input" : "button.bk-btn";
    for (const e of root.querySelectorAll(kinds)) {
      if (/live explorable|kernel lab|theme|run|embed/i.test(e.textContent)) { continue; }
      out.push(e);
    }
    for (const e of root.querySelectorAll("*")) { if (e.shadowRoot) { walk(e.shadowRoot); } }
  };
  walk(region);
  return out;
}"""

# usable: a native control over the still, shown (it is in the page as built; an input made
# before still_controls.js wires it is kept by page_head.js and played once it has, and
# that keeping is there: AE.earlyInput), or a Bokeh control with every document idle and
# every state table booted
USABLE_JS = """([chapter, t0]) => {
  const region = (REGION)(chapter);
  if (!region) { return false; }
  const buttons = (BUTTONS)(region, true).filter((b) => !b.disabled && b.getClientRects().length);
  if (!buttons.length) { return false; }
  if (buttons[0].closest(".ae-still-controls")) {
    return window.AE && AE.earlyInput ? performance.now() - t0 : false;
  }
  if (window.Bokeh === undefined || Bokeh.documents.length === 0
      || !Bokeh.documents.every((d) => d.is_idle)) { return false; }
  if (window.AE && AE.states && [...AE.states.panels.values()].some((p) => !p.booted)) {
    return false;
  }
  return performance.now() - t0;
}""".replace("REGION", REGION_JS).replace("BUTTONS", BUTTONS_JS)

# Pick the next button to tap (round robin, skipping a radio group's active one), mark it
# for Playwright, and arm the probe: pointerdown -> first DOM change -> painted; address.
ARM_JS = """([chapter, i]) => {
  const region = (REGION)(chapter);
  const all = (BUTTONS)(region).filter((b) => !b.disabled && b.getClientRects().length);
  const radio = (b) => (b.classList.contains("bk-active")
    || (b.getAttribute("aria-pressed") === "true" && b.closest(".ae-still-choice")))
    && b.parentElement && b.parentElement.querySelectorAll("button").length > 1;
  const choices = all.filter((b) => !radio(b));
  if (!choices.length) { return false; }
  // unmark every control, a disabled or hidden one too (a state may disable the last tapped)
  for (const b of (BUTTONS)(region)) { b.removeAttribute("data-ft-tap"); }
  document.querySelectorAll("[data-ft-tap]").forEach((b) => b.removeAttribute("data-ft-tap"));
  const chosen = choices[i % choices.length];
  chosen.setAttribute("data-ft-tap", "");
  // a range input is tapped on its track, a quarter from the end away from its value
  let at = null;
  if (chosen.type === "range") {
    const box = chosen.getBoundingClientRect();
    const span = Number(chosen.max) - Number(chosen.min);
    const high = span > 0 && (Number(chosen.value) - Number(chosen.min)) / span > 0.5;
    at = {x: box.width * (high ? 0.2 : 0.8), y: box.height / 2};
  }
  // a native control's state is applied when the still is redrawn in it (data-ae-still), not
  // when the control itself shows pressed
  const island = chosen.closest(".ae-island");
  const native = chosen.closest(".ae-still-controls") !== null;
  // a native control the address has no key for (online softmax's attention step) writes none,
  // nor does the bare Bokeh page (no AE: nothing binds its address), so no tap waits for one
  let addressed = window.AE !== undefined;
  if (native) {
    const panel = AE.stillControls.panels.find((x) => x.island === island);
    const k = panel.elements.findIndex((e) => e !== null && e.contains(chosen));
    addressed = k >= 0 && Object.values(panel.data.url).includes(panel.data.controls[k].name);
  }
  const roots = [document];
  const walk = (root) => {
    for (const x of root.querySelectorAll("*")) {
      if (x.shadowRoot) { roots.push(x.shadowRoot); walk(x.shadowRoot); }
    }
  };
  walk(document);
  const probe = {t0: null, state: null, painted: null};
  const addressBefore = __ft.address.length;
  probe.done = new Promise((resolve) => {
    const observers = [];
    const finish = () => {
      observers.forEach((o) => o.disconnect());
      const written = __ft.address.slice(addressBefore).find((t) => t >= probe.t0);
      resolve({state: probe.painted - probe.t0,
               address: written === undefined ? null : written - probe.t0});
    };
    const seen = () => {
      if (probe.t0 === null || probe.state !== null) { return; }
      probe.state = performance.now();
      requestAnimationFrame(() => setTimeout(() => {
        probe.painted = performance.now();
        // the address follows the state: give it until the timeout
        const wait = () => {
          if (!addressed || __ft.address.slice(addressBefore).some((t) => t >= probe.t0)
              || performance.now() - probe.t0 > TIMEOUT) { finish(); }
          else { setTimeout(wait, 10); }
        };
        wait();
      }, 0));
    };
    if (native) {
      const o = new MutationObserver(seen);
      o.observe(island, {attributes: true, attributeFilter: ["data-ae-still"]});
      observers.push(o);
    } else {
      for (const r of roots) {
        const o = new MutationObserver(seen);
        o.observe(r, {subtree: true, childList: true, characterData: true, attributes: true});
        observers.push(o);
      }
    }
    setTimeout(() => { if (probe.state === null) {
      observers.forEach((o) => o.disconnect()); resolve({timedOut: true}); } }, TIMEOUT);
  });
  addEventListener("pointerdown", (e) => { probe.t0 = e.timeStamp; },
                   {capture: true, once: true});
  window.__probe = probe;
  return {kind: native ? "native" : "bokeh", at};
}""".replace("REGION", REGION_JS).replace("BUTTONS", BUTTONS_JS).replace(
    "TIMEOUT", str(TAP_TIMEOUT_MS))

# scroll the first island into view; -> the time it was asked
SCROLL_JS = """(chapter) => { (REGION)(chapter).scrollIntoView({block: "start"});
  return performance.now(); }""".replace("REGION", REGION_JS)

# the longest Event Timing entry of each interaction so far: {interactionId: [ms, input
# delay, processing, presentation]}
INTERACTIONS_JS = """() => {
  const out = {};
  for (const [id, ...entry] of __ft.events) {
    if (!(id in out) || entry[0] > out[id][0]) { out[id] = entry; }
  }
  return out;
}"""


CALCULATOR_ROUTE = "/cost"
# installed before any script of the page: when the calculator's box is usable (its file input
# and paste box on the page, enabled; the calculator wires each as it makes it), then painted
CALCULATOR_INIT_JS = """
window.__calc = {usable: null, painted: null};
new MutationObserver(function (records, observer) {
  const box = document.querySelector(".ae-cost-calculator");
  const fields = box ? [box.querySelector("input[type=file]"), box.querySelector("textarea")]
    : [];
  if (fields.length === 0 || fields.some((f) => !f || f.disabled || !f.getClientRects().length)) {
    return;
  }
  observer.disconnect();
  __calc.usable = performance.now();
  requestAnimationFrame(() => setTimeout(() => { __calc.painted = performance.now(); }, 0));
}).observe(document, {childList: true, subtree: true});
"""
BOKEH_JS = re.compile(r"/bokeh[^/]*\.js$")  # BokehJS and its widget bundles


def calculator_once(browser, device, base):  # -> {usable, painted, fcp, bokeh}: ms from
    # navigation, and the BokehJS requests made by the time the box was painted
    context = browser.new_context(**device)
    context.add_init_script(CALCULATOR_INIT_JS)
    page = context.new_page()
    page.set_default_timeout(USABLE_TIMEOUT_MS)
    context.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": CPU_SLOWDOWN})
    requested = []
    page.on("request", lambda r: requested.append(r.url))
    try:
        page.goto(base + CALCULATOR_ROUTE, wait_until="commit")
        page.wait_for_function("() => window.__calc && __calc.painted !== null", polling=50)
        out = page.evaluate("""() => ({usable: __calc.usable, painted: __calc.painted,
          fcp: (performance.getEntriesByName("first-contentful-paint")[0] || {}).startTime})""")
        out["bokeh"] = sum(bool(BOKEH_JS.search(u)) for u in requested)
    finally:
        context.close()
    return out


def calculator_report(loads, runs):  # the --calculator lines: each load, then the summary
    print("| load | box usable ms | box painted ms | first contentful paint ms "
          "| BokehJS requests by then |")
    print("|---|---|---|---|---|")
    for i, x in enumerate(loads, 1):
        print(f"| {i} | {ms(x['usable'])} | {ms(x['painted'])} | {ms(x['fcp'])} | {x['bokeh']} |")
    for name in ("usable", "painted"):
        values = [x[name] for x in loads]
        print(f"box {name}: median {ms(statistics.median(values))} ms, "
              f"min-max {ms(min(values))}-{ms(max(values))} ms over {runs} loads")


def bare_page():  # -> HTML: Bokeh alone, a heatmap and a toggle, its scripts deferred
    import numpy as np
    from bokeh.embed import file_html
    from bokeh.layouts import column
    from bokeh.models import ColumnDataSource, CustomJS, Div, Toggle
    from bokeh.plotting import figure
    from bokeh.resources import CDN

    n = 8
    xs, ys = np.meshgrid(np.arange(n), np.arange(n))
    w = np.random.default_rng(0).random((n, n))
    source = ColumnDataSource({"x": xs.ravel(), "y": ys.ravel(), "w": w.ravel()})
    fig = figure(width=360, height=360, tools="")
    fig.rect("x", "y", 1, 1, source=source, fill_color="#0072b2", fill_alpha="w")
    toggle = Toggle(label="causal mask", active=True)
    readout = Div(text="mask on")
    toggle.js_on_change("active", CustomJS(args={"source": source, "readout": readout}, code="""
      const d = source.data; d.w = d.w.map((v) => 1 - v); source.change.emit();
      readout.text = cb_obj.active ? "mask on" : "mask off";"""))
    page = file_html(column(toggle, readout, fig), CDN, "A bare Bokeh page")
    page = page.replace('<script type="text/javascript" src=', '<script defer src=')
    return page.replace("<head>", '<head>\n<meta name="viewport" '
                        'content="width=device-width, initial-scale=1">', 1)


def add_bare_page(site):  # into the served build, its scripts from the build's Bokeh copy
    import re

    import bokeh

    page = re.sub(r"https://cdn\.bokeh\.org/bokeh/release/(bokeh[a-z-]*)-[0-9.]+(\.min)?\.js",
                  rf"../bokeh-{bokeh.__version__}/\1\2.js", bare_page())
    folder = Path(site) / "assets" / "bench"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / Path(BARE).name).write_text(page, encoding="utf-8")


def default_routes():  # every panel page with controls (not the kernel lab's link), chapters
    stand_ins = {r.route for r in registry.PANELS if r.static_stand_in}
    return [*(r for r in registry.panel_routes() if r not in stand_ins), *CHAPTERS, BARE]


def load_once(browser, device, base, route, taps, slowdown=CPU_SLOWDOWN):  # -> {usable, inp:
    # [], state: [], ...}
    context = browser.new_context(**device)
    context.add_init_script(INIT_JS)
    page = context.new_page()
    page.set_default_timeout(USABLE_TIMEOUT_MS)
    cdp = context.new_cdp_session(page)
    cdp.send("Emulation.setCPUThrottlingRate", {"rate": slowdown})
    chapter = route in CHAPTERS
    out = {"usable": None, "inp": [], "parts": [], "state": [], "address": [], "timeouts": 0,
           "native": 0, "mount_inp": None}
    try:
        page.goto(base + route, wait_until="load" if chapter else "commit")
        t0 = 0.0  # navigation start, performance.now()'s origin
        if chapter:  # the reader scrolls to the first island once the text has loaded
            t0 = page.evaluate(SCROLL_JS, chapter)
        try:
            usable = page.wait_for_function(USABLE_JS, arg=[chapter, t0], polling=50)
        except PlaywrightTimeout:  # no control came: the row says so ("-"), the run goes on
            print(f"{route}: no usable control in {USABLE_TIMEOUT_MS} ms", file=sys.stderr)
            return out
        out["usable"] = usable.json_value()
        done, mount_key = 0, None
        for i in range(taps):
            armed = page.evaluate(ARM_JS, [chapter, i])
            if not armed:
                break
            result = tap(page, armed)
            if result is None:  # its control went with the hand-over
                continue
            done += 1
            out["native"] += armed["kind"] == "native"
            if result.get("timedOut"):
                out["timeouts"] += 1
                out["state"].append(TAP_TIMEOUT_MS)
                continue
            out["state"].append(result["state"])
            if result["address"] is not None:
                out["address"].append(result["address"])
        if out["native"]:  # one more tap, as the mount begins: what a reader meets who taps
            # just when the island, left alone, starts to mount
            out["mount_inp"], mount_key = tap_as_the_mount_begins(page, chapter, taps)
        page.wait_for_timeout(200)  # Event Timing entries are reported after their frame
        longest = page.evaluate(INTERACTIONS_JS)
        longest.pop(mount_key, None)  # the tap as the mount began is not one of the row's
        out["inp"] = sorted(e[0] for e in longest.values()) + [16.0] * max(0, done - len(longest))
        out["parts"] = [e[1:] for e in longest.values()]
    finally:
        context.close()
    return out


def tap(page, armed):  # taps the armed control -> the probe's result, or None if it went
    target = page.locator("[data-ft-tap]")
    try:
        if armed["at"]:
            target.tap(position=armed["at"], timeout=TAP_TIMEOUT_MS)
        else:
            target.tap(timeout=TAP_TIMEOUT_MS)
    except PlaywrightTimeout:
        return None
    return page.evaluate("() => __probe.done")


# a live chapter's hand-over begins: its session has attached (its HandOver has rendered,
# app/chapters/live_stills.py); its panels arrive next, are drawn under their stills and take
# over (a tap any later lands on a still already gone: Playwright's round trip outlasts the
# two frames between a panel's views being built and its still going)
HAND_OVER_JS = "() => window.AE !== undefined && AE.handOver !== undefined"


def tap_as_the_mount_begins(page, chapter, i):  # -> (that tap's INP ms, its interaction id),
    # (None, None) where no tap was made
    # an island with native controls mounts only on intent (static/islands.js): the reader
    # asks for the interactive chart, then taps as the mount begins; a live chapter's session
    # attached as the reader neared it (static/live_page.js): the reader taps as its first
    # panel takes over from its still (static/live_stills.js)
    live = page.evaluate("() => window.AE.islands === undefined")
    if not live:
        page.evaluate("() => { AE.islands.mountAll(); }")
    try:  # BokehJS's bundle has run: the panel's bundles and its views are next; live: the
        # session has attached, its panels are next
        page.wait_for_function(HAND_OVER_JS if live else "() => window.Bokeh !== undefined",
                               polling=16, timeout=USABLE_TIMEOUT_MS)
    except PlaywrightTimeout:
        return None, None
    armed = page.evaluate(ARM_JS, [chapter, i])
    before = set(page.evaluate(INTERACTIONS_JS))
    if not armed or tap(page, armed) is None:
        return None, None
    try:  # Event Timing reports an entry after its frame is painted
        page.wait_for_function(f"() => Object.keys(({INTERACTIONS_JS})()).length > {len(before)}",
                               timeout=3000)
    except PlaywrightTimeout:
        return 16.0, None  # no entry: under the 16 ms threshold
    longest = page.evaluate(INTERACTIONS_JS)
    key = max((k for k in longest if k not in before), key=int)
    return longest[key][0], key


def pct(values, q):  # nearest-rank percentile; None for no values
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, max(0, round(q * len(values) + 0.5) - 1))]


def ms(value):
    return "-" if value is None else f"{value:.0f}"


def row(route, loads):  # one table row of a page's loads
    usable = [x["usable"] for x in loads if x["usable"] is not None]
    if not usable:
        return f"| {route} | no usable control | - | - | - | - | 0 (0 native) | 0 | - |"
    inp = [v for x in loads for v in x["inp"]]
    state = [v for x in loads for v in x["state"]]
    address = [v for x in loads for v in x["address"]]
    timeouts = sum(x["timeouts"] for x in loads)
    native = sum(x["native"] for x in loads)
    mount = [x["mount_inp"] for x in loads if x["mount_inp"] is not None]
    as_mount = f"{ms(statistics.median(mount))} ({ms(max(mount))})" if mount else "-"
    spread = f" ({ms(min(usable))}-{ms(max(usable))})" if len(usable) > 1 else ""
    label = "bare Bokeh page" if route == BARE else route
    kind = "chapter, first island" if route in CHAPTERS else "page"
    return (f"| {label} | {kind} | {ms(statistics.median(usable))}{spread} "
            f"| {ms(pct(inp, 0.5))} / {ms(pct(inp, 0.95))} | {ms(pct(state, 0.5))} / "
            f"{ms(pct(state, 0.95))} | {ms(pct(address, 0.5))} / {ms(pct(address, 0.95))} "
            f"| {len(state)} ({native} native) | {timeouts} | {as_mount} |")


def parts_row(route, loads):  # where a page's taps spend their time, Event Timing's parts
    parts = [x for load in loads for x in load["parts"]]
    label = "bare Bokeh page" if route == BARE else route
    if not parts:
        return f"| {label} | - | - | - | 0 |"
    cells = []
    for k in range(3):
        values = [p[k] for p in parts]
        cells.append(f"{ms(pct(values, 0.5))} / {ms(pct(values, 0.95))} / {ms(max(values))}")
    return f"| {label} | {' | '.join(cells)} | {len(parts)} |"


def chromium_version():
    done = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True, check=False)
    return done.stdout.strip() or "unknown"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=3, help="loads per page (new context each)")
    p.add_argument("--taps", type=int, default=10, help="taps per load")
    p.add_argument("--routes", nargs="+", default=None)
    p.add_argument("--smoke", action="store_true", help="one short run of a few pages")
    p.add_argument("--calculator", action="store_true",
                   help="time /cost's config.json box alone (--runs loads)")
    args = p.parse_args(argv)
    if args.calculator:
        return calculator_main(args.runs)
    slowdown = CPU_SLOWDOWN
    if args.smoke:  # the code paths alone, so the CPU at its own speed (1x: a CDP call still)
        args.runs, args.taps, args.routes, slowdown = 1, 2, args.routes or SMOKE_ROUTES, 1
    routes = args.routes or default_routes()
    commit = lighthouse.git("rev-parse", "--short", "HEAD") or "?"
    rows = {}
    with lighthouse.served(ROOT, prepare=add_bare_page) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        device = dict(pw.devices["Pixel 5"])
        try:
            for route in routes:
                rows[route] = [load_once(browser, device, base, route, args.taps, slowdown)
                               for _ in range(args.runs)]
                print(f"measured {route}", file=sys.stderr, flush=True)
        finally:
            browser.close()
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(f"first touch, {when}, commit {commit}, {chromium_version()}, Pixel 5 emulation, "
          + ("CPU at its own speed" if slowdown == 1 else f"CPU {slowdown}x slower")
          + f", loopback, {args.runs} load(s) x {args.taps} taps a page"
          + (" (smoke: no targets)" if args.smoke else ""))
    print("control usable: from navigation (pages) or from scrolling the first island into "
          "view (chapters); INP: Event Timing, a tap under 16 ms counted as 16; tap to state: "
          "pointerdown to the change painted; to address: to replaceState/pushState")
    print("| page | what | control usable ms, median (min-max) | INP ms, median / p95 "
          "| tap to state ms, median / p95 | tap to address ms, median / p95 | taps "
          "| timeouts | INP of a tap as the mount begins, median (max) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for route, loads in rows.items():
        print(row(route, loads))
    print("\nINP's parts (Event Timing: input delay = processingStart - startTime; processing = "
          "the handlers; presentation = to the next paint), over the taps of 16 ms or more")
    print("| page | input delay ms, median / p95 / max | processing | presentation | taps |")
    print("|---|---|---|---|---|")
    for route, loads in rows.items():
        print(parts_row(route, loads))
    return 0


def calculator_main(runs):  # --calculator: /cost's box, `runs` loads
    commit = lighthouse.git("rev-parse", "--short", "HEAD") or "?"
    with lighthouse.served(ROOT) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            loads = [calculator_once(browser, dict(pw.devices["Pixel 5"]), base)
                     for _ in range(runs)]
        finally:
            browser.close()
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(f"first touch of the calculator, {when}, commit {commit}, {chromium_version()}, "
          f"Pixel 5 emulation, CPU {CPU_SLOWDOWN}x slower, loopback, {CALCULATOR_ROUTE}, "
          f"{runs} load(s), each in a new context (cold cache)")
    print("box usable: from navigation until its file input and paste box are on the page, "
          "enabled and wired; painted: the next frame after")
    calculator_report(loads, runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
