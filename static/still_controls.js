// Native controls over a still, before Bokeh has loaded (issue 41: controls that work before
// Bokeh does).
//
// An island whose still carries its data (app/chapters/chapter_page.py `still`: a
// <script type="application/json" class="ae-still-data">, on a static panel page and in a
// static chapter) has, over its still, its controls as native HTML, in the page as built so
// that nothing moves when this script runs (still_figures.controls_html; shown with scripts
// on only): a range input for a slider, a pressed button for a toggle, a group of pressed
// buttons for a radio button group, a <select> for a select, each named as the Bokeh widget
// is. This script wires them. A change looks the state up in
// the panel's table of states (loaded on the first change, with switcher.js, which registers
// it), redraws the still's charts and readouts with AE.stills (stills.js), sets the widget
// properties the state gives (a slider's end, a control disabled) and writes the address
// (page_url.js). A follower (the ladder in a chapter) shows only its own controls and takes
// its leader's stops for the rest, as its live widgets are the leader's.
//
// Hand-over: when the island mounts (islands.js waits until these controls have been left
// alone for a moment), switcher.js's boot() flushes the address, applies it to the Bokeh
// widgets and then every stop set here (stopsOf), so the live panel opens in the state the
// reader set; islands.js then removes the still, and these controls with it (never two of one
// control for a screen reader); the focus, if it was on one of them, goes to the live control
// of that name. Runs after islands.js (bokeh_fence.js, page_url.js); one global, AE.
(function () {
  "use strict";
  const AE = window.AE = window.AE || {};
  if (AE.stillControls) { return; }

  const loading = new Map(); // src -> Promise: a script run once by us (islands.js may run it
  // again at mount: switcher.js then returns at once, a table's second register is ignored)
  function load(src) {
    if (!loading.has(src)) {
      loading.set(src, new Promise((resolve, reject) => {
        const s = document.createElement("script");
        s.src = src; // async: never queued behind Bokeh's bundles, which islands.js runs in order
        s.onload = resolve;
        s.onerror = () => reject(new Error("could not load " + src));
        document.head.appendChild(s);
      }));
    }
    return loading.get(src);
  }

  function config() { return JSON.parse(document.getElementById("ae-islands").textContent); }

  function tableOf(p) { // -> Promise of the panel's table of states
    if (!p.table) {
      const c = config();
      const group = c.groups[p.island.dataset.group];
      const src = group.tables.find((t) => t.endsWith("/" + p.data.table + ".js"));
      p.table = load(c.switcher).then(() => load(src)).then(() => loadedTable(p));
    }
    return p.table;
  }
  // -> the table if its script has run (the switcher keeps it), else undefined
  function loadedTable(p) { return AE.states ? AE.states.table(p.data.table) : undefined; }

  // Each control's element is in the page as built (still_figures.controls_html, marked
  // data-ae-control="i"); these give it its listeners.
  function slider(p, c, i, box) {
    const input = box.querySelector("input");
    input.addEventListener("input", () => {
      p.at[i] = Math.round((Number(input.value) - c.min) / c.step);
      change(p);
    });
  }

  function toggle(p, c, i, button) {
    button.addEventListener("click", () => {
      p.at[i] = 1 - p.at[i]; // a toggle's stops: off, on
      change(p);
    });
  }

  function choice(p, c, i, box) {
    box.querySelectorAll("button").forEach((button, k) => {
      button.addEventListener("click", () => {
        p.at[i] = k;
        change(p);
      });
    });
  }

  function select(p, c, i, box) {
    const menu = box.querySelector("select");
    menu.addEventListener("change", () => {
      p.at[i] = menu.selectedIndex;
      change(p);
    });
  }

  // sets what differs only: an equal value set again still invalidates the control's style
  // and layout, twice a tap, on every control of the island
  function put(e, key, value) { if (e[key] !== value) { e[key] = value; } }
  function pressed(e, on) {
    if (e.getAttribute("aria-pressed") !== String(on)) { e.setAttribute("aria-pressed", on); }
  }

  function reflect(p) { // the controls show the stops in p.at and what the state gives them
    p.data.controls.forEach((c, i) => {
      const box = p.elements[i];
      if (box === null) { return; } // the leader's control, on the leader's island
      if (c.widget === "slider") {
        const input = box.querySelector("input");
        put(input, "max", String(c.max));
        put(input, "value", String(c.min + p.at[i] * c.step));
        put(input, "disabled", c.disabled);
        put(box.querySelector("output"), "textContent", String(c.values[p.at[i]]));
      } else if (c.widget === "toggle") {
        pressed(box, p.at[i] === 1);
        put(box, "disabled", c.disabled);
      } else if (c.widget === "select") {
        const menu = box.querySelector("select");
        put(menu, "selectedIndex", p.at[i]);
        put(menu, "disabled", c.disabled);
      } else {
        box.querySelectorAll("button").forEach((b, k) => {
          pressed(b, k === p.at[i]);
          put(b, "disabled", c.disabled);
        });
      }
    });
  }

  function widgetProps(p, state) { // a state's properties of the widgets: end, start, disabled
    for (const {name, attr, control} of p.data.widget_props) { // records: app/kit/targets.py
      if (!(name in state)) { continue; }
      const c = p.data.controls.find((x) => x.name === control);
      if (attr === "end") { c.max = state[name]; }
      else if (attr === "start") { c.min = state[name]; }
      else if (attr === "disabled") { c.disabled = Boolean(state[name]); }
    }
  }

  // A redraw changes the nodes in place, matched by position where their tags agree: a state
  // mostly recolours cells and rewrites a few numbers, and the browser then lays out only the
  // text that changed. Replacing the whole chart made it lay out every node of it again
  // (300-450 objects on the head's still; patched, a tap's layout takes about half as long).
  const parser = document.createElement("template");
  function patch(old, next) { // old, next: nodes of one type and tag -> old made equal to next
    if (old.nodeType !== Node.ELEMENT_NODE) {
      if (old.nodeValue !== next.nodeValue) { old.nodeValue = next.nodeValue; }
      return;
    }
    for (const name of old.getAttributeNames()) { // the stills' markup has no namespaced names
      if (!next.hasAttribute(name)) { old.removeAttribute(name); }
    }
    for (const name of next.getAttributeNames()) {
      const value = next.getAttribute(name);
      if (old.getAttribute(name) !== value) { old.setAttribute(name, value); }
    }
    patchChildren(old, next);
  }
  function patchChildren(old, next) {
    const nexts = [...next.childNodes];
    nexts.forEach((n, i) => {
      const o = old.childNodes[i];
      if (o === undefined) { old.appendChild(n); }
      else if (o.nodeType === n.nodeType && o.nodeName === n.nodeName) { patch(o, n); }
      else { old.replaceChild(n, o); }
    });
    while (old.childNodes.length > nexts.length) { old.lastChild.remove(); }
  }
  function redraw(box, html) {
    parser.innerHTML = html;
    patchChildren(box, parser.content);
  }

  function draw(p, state) { // the still's charts and readouts in `state`
    const body = p.island.querySelector(".ae-still-body");
    if (body === null) { return; } // the island has mounted: its still is gone
    AE.stills.draw(p.data.description, state).forEach((svg, i) => {
      const pane = body.querySelector(`[data-ae-pane="${i}"]`);
      if (pane && p.drawn.get(pane) !== svg) {
        redraw(pane, svg);
        p.drawn.set(pane, svg);
      }
    });
    AE.stills.readouts(p.data.description, state).forEach(({html, empty}, i) => {
      const box = body.querySelector(`[data-ae-readout="${i}"]`);
      if (box && p.drawn.get(box) !== html) {
        redraw(box, html);
        box.hidden = empty;
        p.drawn.set(box, html);
      }
    });
    widgetProps(p, state);
    reflect(p);
    p.island.dataset.aeStill = p.at.join(","); // the stops the still shows (tests)
  }

  function writeAddress(p) {
    const values = {};
    for (const [key, name] of Object.entries(p.data.url)) {
      const c = p.data.controls.find((x) => x.name === name);
      values[key] = c.values[p.at[p.data.controls.indexOf(c)]];
    }
    AE.url.write(values);
  }

  // A tap is answered in two frames: the control itself (pressed, moved) is painted at once,
  // and the still is drawn in a task after that frame. Drawn in the tap's own task, the
  // still's parse, patch and layout held the control's paint back: on a 4x-slowed phone a
  // tap's INP p95 was 64-88 ms on /heatmap, /, /sqrt-dk and /cost, and 32-40 deferred, while
  // the still itself came 5-15 ms later (benchmarks/first_touch.py's "tap to state").
  const afterPaint = () => new Promise((resolve) => {
    requestAnimationFrame(() => setTimeout(resolve, 0));
  });

  function change(p) { // a control moved: the controls and the address now, the still after
    p.version += 1;
    const table = loadedTable(p);
    if (table) { widgetProps(p, AE.stills.stateAt(table, p.at)); } // a new end, disabled
    reflect(p);
    writeAddress(p);
    // one draw waits at a time, and draws the stops as they are when it runs: a drag's inputs
    // can come faster than frames
    p.pending = p.pending || tableOf(p).then(afterPaint).then(() => {
      if (p.island.isConnected) { draw(p, AE.stills.stateAt(loadedTable(p), p.at)); }
    }).catch((error) => { p.island.dataset.aeStillError = error.message; })
      .finally(() => { p.pending = null; });
    followers(p).forEach((q) => { if (follow(q, p)) { change(q); } });
    // a live chapter hands the stops to its session (live_stills.js)
    p.island.dispatchEvent(new CustomEvent("ae:still-change", {bubbles: true}));
  }

  // a follower (the ladder in a chapter) takes its leader's stops for the controls that are
  // the leader's widgets
  function followers(p) { return panels.filter((q) => q.data.follows === p.data.table); }

  function follow(q, p) { // -> whether q's stops moved
    let moved = false;
    q.data.controls.forEach((c, j) => {
      const k = p.data.controls.findIndex((x) => x.name === c.name);
      if (c.leader && k >= 0 && q.at[j] !== p.at[k]) {
        q.at[j] = p.at[k];
        moved = true;
      }
    });
    return moved;
  }

  function restore(p) { // a deep link's values (coerced as switcher.js does), once the table is here
    const params = new URLSearchParams(window.location.search);
    if (!Object.keys(p.data.url).some((key) => params.has(key))) { return; }
    tableOf(p).then((table) => {
      if (p.version > 0) { return; } // a reader's tap came first: it, and the address it wrote, win
      for (const [key, name] of Object.entries(p.data.url)) {
        const given = params.getAll(key);
        if (given.length === 0) { continue; }
        const i = table.controls.findIndex((c) => c.name === name);
        const [stop] = AE.url.coerce(table.controls[i], key, given[given.length - 1]);
        if (stop >= 0) { p.at[i] = stop; }
      }
      if (p.version === 0 && p.island.isConnected) { draw(p, AE.stills.stateAt(table, p.at)); }
      followers(p).forEach((q) => { if (follow(q, p) && q.version === 0) { change(q); } });
    }).catch((error) => { p.island.dataset.aeStillError = error.message; });
  }

  const WIRES = {slider, toggle, choice, select};

  // Focus follows the hand-over: the control a keyboard reader was on goes with the still, so
  // the mounted panel's control of the same name takes the focus (a Bokeh button by its text,
  // a slider's handle by the name a11y.js gave it), found through the widgets' shadow roots.
  function deepFind(root, match) {
    for (const e of root.querySelectorAll("*")) {
      if (match(e)) { return e; }
      if (e.shadowRoot) {
        const found = deepFind(e.shadowRoot, match);
        if (found) { return found; }
      }
    }
    return null;
  }

  function followFocus(p, box) {
    box.addEventListener("focusin", (event) => {
      const t = event.target;
      p.focus = t.tagName === "SELECT" ? t.labels[0].textContent.trim()
        : t.getAttribute("aria-label") || t.textContent.trim();
    });
    box.addEventListener("focusout", (event) => { // to another element: not a hand-over
      if (event.relatedTarget !== null) { p.focus = null; }
    });
    document.addEventListener("ae:mounted", () => {
      const lost = document.activeElement === null || document.activeElement === document.body;
      if (!p.focus || !lost || p.island.isConnected === false) { return; }
      const name = p.focus;
      const target = deepFind(p.island, (e) => (e.tagName === "SELECT"
        && e.labels && e.labels.length && e.labels[0].textContent.trim() === name)
        || ((e.getAttribute("role") === "slider" || e.tagName === "BUTTON")
        && (e.getAttribute("aria-label") === name || e.textContent.trim() === name)));
      if (target) { target.focus(); }
      p.focus = null;
    });
  }

  function setUp(island, data) {
    const p = {island, data, at: data.controls.map((c) => c.at), table: null, elements: [],
      drawn: new Map(), version: 0, pending: null, focus: null};
    const body = island.querySelector(".ae-still-body");
    const box = body.querySelector(".ae-still-controls");
    p.elements = data.controls.map((c, i) => {
      const element = box && box.querySelector(`[data-ae-control="${i}"]`);
      if (element) { WIRES[c.widget](p, c, i, element); }
      return element || null; // null: the leader's control, on the leader's island
    });
    if (box) { followFocus(p, box); }
    // a readout the live panel announces (a live region in its template) is announced here
    // too as the native controls switch it; a still as built has none (nothing changes there)
    data.description.readouts.forEach((r, i) => {
      const readout = body.querySelector(`[data-ae-readout="${i}"]`);
      if (readout && /aria-live="polite"|role="status"/.test(r.template)) {
        readout.setAttribute("aria-live", "polite");
      }
    });
    reflect(p); // as built they show these stops, but a browser may restore a form's old values
    if (box) {
      box.aeWired = true;
      replay(box);
    }
    restore(p); // a reader's early input, played above, wins over a deep link
    return p;
  }

  // Inputs a reader made on this box before it was wired (page_head.js kept them), played on
  // the wired controls in order: a button clicked again, a range or menu set to the value it
  // was left at, then its event sent, so each runs through change() as a tap would.
  function replay(box) {
    const early = AE.earlyInput || [];
    const mine = early.filter((e) => box.contains(e.target));
    early.splice(0, early.length, ...early.filter((e) => !box.contains(e.target)));
    for (const {target, type, value} of mine) {
      if (type === "click") {
        const button = target.closest("button");
        if (button && !button.disabled) { button.click(); }
      } else if (target.tagName === "INPUT" || target.tagName === "SELECT") {
        target.value = value;
        target.dispatchEvent(new Event(type, {bubbles: true}));
      }
    }
  }

  const panels = [];
  // A still's table is fetched and run once its island is in view, at idle, and the still is
  // drawn from it once, in the state it shows (nothing on the page changes): a reader's first
  // tap then finds the table there and the drawing code compiled, instead of waiting for both
  // (on a slowed phone the first tap took 90-140 ms against 50-100 for the next ones)
  function prepare(p) {
    tableOf(p).then((table) => {
      if (p.version === 0 && p.island.isConnected) { draw(p, AE.stills.stateAt(table, p.at)); }
    }).catch(() => {}); // a failure is shown when a tap needs the table
  }
  const inView = "IntersectionObserver" in window ? new IntersectionObserver((entries) => {
    for (const entry of entries.filter((e) => e.isIntersecting)) {
      inView.unobserve(entry.target);
      const p = panels.find((x) => x.island === entry.target);
      if ("requestIdleCallback" in window) { window.requestIdleCallback(() => prepare(p)); }
      else { prepare(p); }
    }
  }) : null;

  function start() {
    for (const island of document.querySelectorAll(".ae-island:not(.ae-mounted)")) {
      const data = island.querySelector("script.ae-still-data");
      if (data) {
        panels.push(setUp(island, JSON.parse(data.textContent)));
        if (inView) { inView.observe(island); }
      }
    }
  }

  // the stops a reader set on a still's native controls, by its table: what the switcher gives
  // the mounted panel (static/switcher.js boot), the controls the address has no key for too
  function stopsOf(table) {
    const p = panels.find((x) => x.data.table === table && x.version > 0);
    return p ? p.at.slice() : null;
  }

  AE.stillControls = {panels, stopsOf};
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start, {once: true});
  } else {
    start();
  }
})();
