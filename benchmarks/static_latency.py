"""Click to paint on the static pages: every control of every panel, in Chromium, no server.

    PYTHONPATH=. python benchmarks/static_latency.py [--rounds 20] [--site DIR] [--route /heatmap]

Builds the site (or reuses --site), opens each single-panel page from file:// in a tab of its
own, and operates every control the page has, round-robin: buttons by a click, sliders by an
arrow key on the handle (ArrowRight, then ArrowLeft, so every step is a real change; odd
rounds go through the controls backwards). Each interaction is timed in the page: a
MutationObserver on the document and on every shadow root from the event until the first
DOM change (text, nodes or attributes), then to the end of the next animation frame
(requestAnimationFrame and a task after it: the change is on screen).
Prints, per page, the median and p95 of both, how many interactions changed no control's
value (not counted), and how many changed a value but no DOM within the timeout (2 s): each of
those is counted as a sample at the timeout, so it raises the p95 rather than hiding; first
the same for a bare page (one button, one text node, no Bokeh): this browser's floor.
The target is p95 ≤ 20 ms click to painted on every page. Needs Chromium at /usr/bin/chromium.
"""

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# the tests' own rule: every island mounted (a panel's document arrives in steps), every
# document idle
from tests.browser.readiness import DOCUMENT_IDLE_JS

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
TARGET_P95_MS = 20.0
TIMEOUT_MS = 2000  # an interaction with no DOM change by then: a sample at this value

# every control on the page: buttons and slider handles, in shadow roots too; disabled ones
# stay in the list (a state may enable them), so control i is the same control on every pass
CONTROLS_JS = """() => {
  const out = [];
  const walk = (root) => {
    for (const e of root.querySelectorAll("button.bk-btn, .noUi-handle")) {
      const label = e.textContent.trim();
      if (/live explorable|kernel lab|theme/i.test(label)) { continue; }
      out.push(e);
    }
    for (const e of root.querySelectorAll("*")) { if (e.shadowRoot) { walk(e.shadowRoot); } }
  };
  walk(document);
  window.__controls = out;
  return out.length;
}"""

# operate control i once; -> {dom, painted}: ms to the first DOM change and to painted; null if
# it is disabled or no control's value changed (a "previous" at the first step); {dom, painted,
# timedOut: true} at timeoutMs each if a value changed but no DOM change came by then
OPERATE_JS = """async ([i, key, timeoutMs]) => {
  const e = window.__controls[i];
  if (e.disabled || e.closest("[disabled]")) { return null; }  // nothing to operate now
  const values = () => JSON.stringify([...AE.states.panels.values()].map(
    (p) => p.spec.table.controls.map((c, j) => p.controls[j][c.prop])));
  const was = values();
  const roots = [document];
  const walk = (root) => {
    for (const x of root.querySelectorAll("*")) {
      if (x.shadowRoot) { roots.push(x.shadowRoot); walk(x.shadowRoot); }
    }
  };
  walk(document);
  return await new Promise((resolve) => {
    let t0 = 0;
    const observers = [];
    const done = (value) => { observers.forEach((o) => o.disconnect()); resolve(value); };
    const seen = () => {
      const dom = performance.now() - t0;
      observers.forEach((o) => o.disconnect());
      requestAnimationFrame(() => setTimeout(() => {
        const painted = performance.now() - t0;
        resolve(values() === was ? null : {dom, painted});
      }, 0));
    };
    for (const root of roots) {
      const o = new MutationObserver(seen);
      o.observe(root, {subtree: true, childList: true, characterData: true, attributes: true});
      observers.push(o);
    }
    setTimeout(() => done(values() === was ? null  // no DOM change: a slow sample, if it changed
      : {dom: timeoutMs, painted: timeoutMs, timedOut: true}), timeoutMs);
    t0 = performance.now();
    if (e.classList.contains("noUi-handle")) {
      e.dispatchEvent(new KeyboardEvent("keydown", {key, bubbles: true}));
    } else {
      e.click();
    }
  });
}"""


# the floor: a page with no Bokeh and one button that changes one text node, measured the
# same way (the stubs stand in for what measure() waits for and reads)
BARE_HTML = """<!doctype html><html lang="en"><head><title>floor</title></head><body>
<button class="bk-btn" id="go">go</button> <span id="out">0</span>
<script>
const counter = {value: 0};
window.Bokeh = {documents: [{is_idle: true}]};
window.AE = {states: {panels: new Map([[0, {booted: true, controls: [counter],
                                              spec: {table: {controls: [{prop: "value"}]}}}]])}};
document.getElementById("go").addEventListener("click", () => {
  counter.value += 1;
  document.getElementById("out").textContent = String(counter.value);
});
</script></body></html>"""


# control i's name as a reader sees it: a button's text, a slider's title
LABEL_JS = """(i) => { const e = window.__controls[i];
  const title = e.getRootNode().querySelector && e.getRootNode().querySelector(".bk-slider-title");
  const name = e.getAttribute("aria-label")
    || (title ? title.textContent.replace(/:[^:]*$/, "").trim() : "") || e.textContent.trim();
  return (e.classList.contains("noUi-handle") ? "slider: " : "") + name; }"""


def pages(site, only=None):  # -> [(route, path)] of the single-panel pages with controls in
    # the browser: every panel of the registry but a stand-in (the lab links to its live page)
    from app.kit import registry
    routes = sorted(r.route for r in registry.PANELS if not r.static_stand_in)
    return [(r, site / r.strip("/") / "index.html") for r in routes if only in (None, r)]


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def tally(results):  # OPERATE_JS's answers -> ([dom ms], [painted ms], no change, timed out)
    # a timed-out interaction is a sample at its timeout (in both lists), and counted
    dom, painted, nothing, timeouts = [], [], 0, 0
    for got in results:
        if got is None:
            nothing += 1
            continue
        timeouts += bool(got.get("timedOut"))
        dom.append(got["dom"])
        painted.append(got["painted"])
    return dom, painted, nothing, timeouts


def measure(page, path, rounds, by_control=None, timeout_ms=TIMEOUT_MS):
    # -> ([dom ms], [painted ms], no-change count, timed-out count, controls);
    # by_control: {label: [painted]}
    page.goto(path.as_uri())
    page.wait_for_function(DOCUMENT_IDLE_JS, timeout=30_000)  # islands mounted
    page.wait_for_function("() => window.AE && AE.states && [...AE.states.panels.values()]"
                           ".every((p) => p.booted)", timeout=30_000)
    n = page.evaluate(CONTROLS_JS)
    results = []
    for r in range(rounds):  # odd rounds backwards: a control another one disables gets its turn
        for i in (range(n) if r % 2 == 0 else reversed(range(n))):
            key = "ArrowRight" if r % 2 == 0 else "ArrowLeft"
            page.evaluate(CONTROLS_JS)  # afresh: a widget whose range a state set is redrawn
            label = page.evaluate(LABEL_JS, i) if by_control is not None else None
            got = page.evaluate(OPERATE_JS, [i, key, timeout_ms])
            page.wait_for_timeout(30)  # a reader's gap between two interactions
            results.append(got)
            if got is not None and by_control is not None:
                by_control.setdefault(label, []).append(got["painted"])
    return (*tally(results), n)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=20, help="passes over every control")
    parser.add_argument("--site", type=Path, help="a built site (default: build one now)")
    parser.add_argument("--route", help="one page only, e.g. /heatmap")
    parser.add_argument("--by-control", action="store_true",
                        help="also print each control's median / p95, slowest first")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ae-latency-") as scratch:  # removed at the end
        rows, worst, controls = run(args, Path(scratch))
    report(rows, worst, controls)
    return 0


def run(args, scratch):  # -> (rows, worst p95, per-control rows); builds into scratch if asked
    site = args.site.resolve() if args.site else None
    if site is None:
        from app.hosting import build

        site = scratch / "site"
        build.build(site, log=lambda line: None)
    rows, worst, controls = [], 0.0, []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        bare = scratch / "floor.html"
        bare.write_text(BARE_HTML)
        for route, path in [("(floor: a bare page)", bare), *pages(site, args.route)]:
            per = {} if args.by_control else None
            # each page in a tab of its own, as a reader opens it: not after the others
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            dom, painted, nothing, timeouts, n = measure(page, path, args.rounds, per)
            page.close()
            for label, times in sorted((per or {}).items(), key=lambda kv: -pct(kv[1], 0.95)):
                controls.append((route, label, len(times), statistics.median(times),
                                 pct(times, 0.95)))
            if not painted:
                rows.append((route, n, 0, nothing, 0, None, None, None, None))
                continue
            p95 = pct(painted, 0.95)
            worst = max(worst, p95) if path != bare else worst
            rows.append((route, n, len(painted), nothing, timeouts, statistics.median(dom),
                         pct(dom, 0.95), statistics.median(painted), p95))
        browser.close()
    return rows, worst, controls


def report(rows, worst, controls):
    print(f"| page | controls | interactions | no change | timed out (counted at "
          f"{TIMEOUT_MS} ms) | to DOM median / p95 | "
          f"to painted median / p95 (target p95 ≤ {TARGET_P95_MS:.0f} ms) |")
    print("|---|---:|---:|---:|---:|---|---|")
    for route, n, count, nothing, timeouts, dm, d95, pm, p95 in rows:
        if pm is None:
            print(f"| {route} | {n} | 0 | {nothing} | 0 | - | - |")
            continue
        print(f"| {route} | {n} | {count} | {nothing} | {timeouts} | {dm:.1f} / {d95:.1f} ms | "
              f"{pm:.1f} / {p95:.1f} ms |")
    if controls:
        print("\n| page | control | interactions | to painted median / p95 |")
        print("|---|---|---:|---|")
        for route, label, count, med, p95 in controls:
            print(f"| {route} | {label} | {count} | {med:.1f} / {p95:.1f} ms |")
    print(f"worst p95 click to painted: {worst:.1f} ms "
          f"({'within' if worst <= TARGET_P95_MS else 'OVER'} the {TARGET_P95_MS:.0f} ms target)")


if __name__ == "__main__":
    sys.exit(main())
