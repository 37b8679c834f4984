// The browser half of "states in Python, switching in the browser" (app/states.py).
//
// A static page ships, per panel, the table of every state its controls can take, each
// computed in Python by the same state() a live session pushes. When a control changes,
// its CustomJS calls AEStates.change: read every control's stop, look up each part's
// state, set those values on the models they name. No server, no round trip.
//
// On load, AEStates.boot() finds the panels (the CustomJS models carrying a spec), applies
// the page's query string (deep links; bad values are clamped or ignored with a note, as
// the live pages do) and from then on mirrors each change back into the address bar.
(function () {
  "use strict";
  if (window.AEStates) { return; }

  const get = (o, k) => (o instanceof Map ? o.get(k) : o[k]);
  const panels = new Map(); // spec id -> {spec, controls: [model], targets: [model], log: []}
  const tables = new Map(); // table ref -> table, from assets/states/<ref>.js

  function register(ref, table) { tables.set(ref, table); }

  function parseSpec(source) { // the spec's JSON travels as one string in a data source
    const column = get(source.data, "spec");
    const spec = JSON.parse(column[0]);
    if (spec.table === undefined && spec.table_ref !== undefined) {
      spec.table = tables.get(spec.table_ref);
      if (spec.table === undefined) { throw new Error(`no table ${spec.table_ref} on this page`); }
    }
    return spec;
  }

  // A panel that follows another (the ladder reads the head's controls) can sit in two roots
  // of one document, as two islands of a chapter page. Panel gives each root's callbacks the
  // models of that root only, so each carries part of the arguments: merge them.
  function panelFor(specSource, controls, targets) {
    const id = specSource.id;
    let p = panels.get(id);
    if (p === undefined) {
      const spec = parseSpec(specSource);
      p = {spec, controls: [...controls], targets: [...targets], log: [], drawn: [],
           booted: false};
      panels.set(id, p);
    }
    controls.forEach((m, i) => { if (p.controls[i] == null) { p.controls[i] = m; } });
    targets.forEach((m, i) => { if (p.targets[i] == null) { p.targets[i] = m; } });
    return p;
  }

  // the index of each control's current stop; -1 when its widget holds no stop
  function stops(p) {
    return p.spec.table.controls.map((c, i) => {
      const raw = p.controls[i][c.prop];
      return c.raw.findIndex((r) => r === raw || (typeof r === "number" && Number(raw) === r));
    });
  }

  function valueAt(p, part, at) { // -> the index of a part's value at these stops
    let index = 0;
    for (const c of part.controls) {
      const n = p.spec.table.controls[c].raw.length;
      index = index * n + at[c];
    }
    return part.index[index];
  }

  // Targets set on every change, even when their part's value is the one already drawn:
  // the log gains a line per change, and a button's element `disabled` (see below) must be
  // set again on a button Bokeh rebuilt.
  const everyTime = (name) => name.startsWith("log:") || name.endsWith(".disabled");

  // -> the state at these stops, less the parts whose value is already drawn: setting a
  // source or a readout again, unchanged, makes Bokeh redraw it all the same
  function changedState(p, at) {
    const state = {};
    p.spec.table.parts.forEach((part, j) => {
      const v = valueAt(p, part, at);
      const value = part.values[v];
      if (p.drawn[j] !== v) {
        p.drawn[j] = v;
        Object.assign(state, value);
        return;
      }
      stats.partsSkipped += 1;
      for (const name of Object.keys(value)) {
        if (everyTime(name)) { state[name] = value[name]; }
      }
    });
    return state;
  }

  function setProperty(model, attr, value) {
    if (model[attr] !== value) { model[attr] = value; }
  }

  function setSlots(model, values) { // a Readout: the slots' texts (the others kept)
    const patch = {};
    const old = model.data.patch;
    for (const key of (old instanceof Map ? old.keys() : Object.keys(old ?? {}))) {
      patch[key] = get(old, key);
    }
    model.data.patch = Object.assign(patch, values);
  }

  function setSource(source, columns) {
    const data = {};
    const old = source.data;
    for (const key of (old instanceof Map ? old.keys() : Object.keys(old))) {
      data[key] = get(old, key);
    }
    Object.assign(data, columns);
    source.data = data;
  }

  function writeLog(p, model, changed, lines) {
    if (changed === undefined || lines === undefined) { return; }
    const line = lines[changed];
    if (line) {
      p.log = [line, ...p.log].slice(0, p.spec.log_lines);
    }
    const values = {};
    for (let i = 0; i < p.spec.log_lines; i++) { values["log" + i] = p.log[i] ?? ""; }
    if (p.log.length === 0) { values.log0 = p.spec.log_empty; }
    setSlots(model, values);
  }

  function apply(p, state, changed) {
    p.spec.targets.forEach((name, i) => {
      if (!(name in state)) { return; }
      const value = state[name];
      const model = p.targets[i];
      const [kind, rest] = [name.slice(0, name.indexOf(":")), name.slice(name.indexOf(":") + 1)];
      if (kind === "source") { setSource(model, value); }
      else if (kind === "slots") { setSlots(model, value); }
      else if (kind === "prop") {
        const attr = rest.slice(rest.lastIndexOf(".") + 1);
        if (!(attr === "disabled" && setButtonDisabled(model, value))) {
          setProperty(model, attr, value);
        }
      }
      else if (kind === "log") { writeLog(p, model, changed, value); }
    });
  }

  function encode(value) {
    if (value === true) { return "on"; }
    if (value === false) { return "off"; }
    return String(value);
  }

  // The address bar follows the controls, under the page's keys. It is written once the page
  // is idle after the change's frame (at most 250 ms on), not before: Chromium treats each
  // replaceState as a navigation (0.2-3 ms here) and reads the page's icon again, work that
  // would otherwise delay the change's frame, or the next one while a slider is dragged.
  let pendingUrl = null;
  const whenIdle = typeof window.requestIdleCallback === "function"
    ? (fn) => window.requestIdleCallback(fn, {timeout: 250}) : (fn) => setTimeout(fn, 50);
  function flushUrl() {
    if (pendingUrl === null) { return; }
    const href = pendingUrl;
    pendingUrl = null;
    try {
      if (href !== window.location.href) { window.history.replaceState(null, "", href); }
    } catch (e) { /* file:// pages may refuse; the state itself is applied */ }
  }
  window.addEventListener("pagehide", flushUrl);

  function mirror(p, at) {
    const url = new URL(pendingUrl === null ? window.location.href : pendingUrl);
    for (const [key, name] of Object.entries(p.spec.url)) {
      const i = p.spec.table.controls.findIndex((c) => c.name === name);
      url.searchParams.set(key, encode(p.spec.table.controls[i].values[at[i]]));
    }
    if (pendingUrl === null) { requestAnimationFrame(() => whenIdle(flushUrl)); }
    pendingUrl = url.href;
  }

  function change(specSource, controls, targets, changedModel) {
    const p = panelFor(specSource, controls, targets);
    const at = stops(p);
    if (at.some((i) => i < 0)) { return; } // a widget between stops: wait for the next change
    const index = controls.indexOf(changedModel);
    const changed = index >= 0 ? p.spec.table.controls[index].name : undefined;
    apply(p, changedState(p, at), changed);
    if (p.booted) { mirror(p, at); }
  }

  // --- deep links: the query string, coerced as app/url_state.py coerces it -------------

  const TRUE = ["1", "true", "on", "yes"];
  const FALSE = ["0", "false", "off", "no"];
  const MAX_VALUE_CHARS = 100;

  // (control, key, raw) -> [stop index or -1 to ignore, note or null]
  function coerce(control, key, raw) {
    raw = raw.trim().slice(0, MAX_VALUE_CHARS);
    const shown = raw.length <= 24 ? raw : raw.slice(0, 24) + "…";
    const values = control.values;
    if (control.kind === "boolean") {
      const low = raw.toLowerCase();
      if (TRUE.includes(low)) { return [values.indexOf(true), null]; }
      if (FALSE.includes(low)) { return [values.indexOf(false), null]; }
      return [-1, `${key}='${shown}' is not on/off; ignored`];
    }
    if (control.kind === "choice") {
      const i = values.findIndex((v) => String(v).toLowerCase() === raw.toLowerCase());
      if (i >= 0) { return [i, null]; }
      return [-1, `${key}='${shown}' is not one of ${values.join(", ")}; ignored`];
    }
    if (!FLOAT.test(raw)) { return [-1, `${key}='${shown}' is not a number; ignored`]; }
    const value = pythonFloat(raw);
    if (!Number.isFinite(value)) { return [-1, `${key}='${shown}' is not a finite number; ignored`]; }
    const low = Math.min(...values);
    const high = Math.max(...values);
    const clamped = Math.min(Math.max(value, low), high);
    const consecutive = values.every((v, i) => Number.isInteger(v) && (i === 0 || v === values[i - 1] + 1));
    if (consecutive) { // every whole number in its bounds: clamp and round as Python does
      const using = roundHalfEven(clamped);
      const i = values.indexOf(using);
      return [i, using === value ? null : `${key}=${shown} is out of range; using ${using}`];
    }
    let best = 0;
    values.forEach((v, i) => {
      if (Math.abs(v - clamped) < Math.abs(values[best] - clamped)) { best = i; }
    });
    if (values[best] === value) { return [best, null]; }
    if (value < low || value > high) {
      return [best, `${key}=${shown} is out of range; using ${values[best]}`];
    }
    return [best, `${key}=${shown} is not one of this page's stops; using ${values[best]}` +
      " (the live explorable takes any value)"];
  }

  // what Python's float() accepts: digits with single underscores, a point, an exponent,
  // inf / infinity / nan, a sign
  const DIGITS = "\\d(?:_?\\d)*";
  const FLOAT = new RegExp(`^[+-]?(?:(?:${DIGITS})?\\.?${DIGITS}(?:[eE][+-]?${DIGITS})?` +
    `|${DIGITS}\\.(?:[eE][+-]?${DIGITS})?|inf|infinity|nan)$`, "i");

  function pythonFloat(raw) {
    const text = raw.replace(/_/g, "").toLowerCase();
    const sign = text.startsWith("-") ? -1 : 1;
    const body = text.replace(/^[+-]/, "");
    if (body === "inf" || body === "infinity") { return sign * Infinity; }
    if (body === "nan") { return NaN; }
    return Number(text);
  }

  function roundHalfEven(x) {
    const r = Math.round(x);
    return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
  }

  function restore(p, query) { // -> notes; sets each control the query (default: the URL's) names
    const params = new URLSearchParams(query === undefined ? window.location.search : query);
    const notes = [];
    for (const [key, name] of Object.entries(p.spec.url)) {
      const given = params.getAll(key);
      if (given.length === 0) { continue; }
      if (given.length > 1) { notes.push(`${key} given ${given.length} times; using the last`); }
      const i = p.spec.table.controls.findIndex((c) => c.name === name);
      const control = p.spec.table.controls[i];
      const [stop, note] = coerce(control, key, given[given.length - 1]);
      if (note) { notes.push(note); }
      if (stop >= 0) { setProperty(p.controls[i], control.prop, control.raw[stop]); }
    }
    return notes;
  }

  // "Show me": put the page's panels in the state a query names ("mask=off&query=2"), as a
  // deep link does; each control set runs its panel's change, which writes the address bar.
  function set(query) { // -> the number of panels the query reached
    findPanels();
    let reached = 0;
    for (const p of panels.values()) {
      if (!p.booted) { continue; }
      const params = new URLSearchParams(query);
      if (!Object.keys(p.spec.url).some((key) => params.has(key))) { continue; }
      showNotes(p, restore(p, params));
      reached += 1;
    }
    return reached;
  }

  function showNotes(p, notes) {
    const i = p.spec.targets.indexOf("slots:url_note");
    if (i < 0) { return; }
    setSlots(p.targets[i], {url: notes.length ? "URL: " + notes.join("; ") : ""});
  }

  function findPanels() { // every CustomJS that carries a spec -> its panel, once
    for (const doc of window.Bokeh.documents) {
      for (const model of doc.all_models) {
        const args = model.args;
        const spec = args === undefined ? undefined : get(args, "ae_spec");
        if (spec === undefined) { continue; }
        const n = parseSpec(spec).table.controls.length;
        const controls = [...Array(n).keys()].map((i) => get(args, "c" + i));
        const targets = parseSpec(spec).targets.map((_, i) => get(args, "t" + i));
        panelFor(spec, controls, targets);
      }
    }
  }

  // ==== fence: BokehJS internals (3.9; Bokeh is pinned below 3.10) =====================
  // Every private name (`._name`) and undocumented surface of BokehJS (its module paths,
  // views' methods and elements) that the site's scripts reach is in this section and
  // nowhere else in static/; tests/test_fence.py fails on one outside it. Each says why,
  // and AEStates.internals says whether it took (tests/browser/test_static_head.py and
  // test_static_math.py check it):
  //   VisualProperties.prototype._get_css_value (core/visuals/visual)   cssVisualsSkipped
  //   PlotView.prototype._invalidate_layout_if_needed, ._needs_layout   sidePanelsWatched
  //   InlineStyleSheet.prototype._update (core/dom)                      sameStylesKept
  //   GlyphRendererView.prototype.update_position, view.position       glyphElementsLeft
  //   Bokeh.index.find(model), a ButtonView's button_el, a view's el    buttonElementsSet
  //   GlyphRendererView.prototype.lazy_initialize                        buildsSliced
  //
  // On every repaint Bokeh 3.9 looks up each visual property of axes, titles, grids and
  // legends (colour, font, width, ...) as a CSS variable (--bk-...) through
  // getComputedStyle before it uses the model's value: about a quarter of a figure's full
  // repaint on a slow machine. These pages define no such variables (tests/test_build.py
  // checks the built files), so the lookup always answers "" and can be skipped. Bokeh has
  // no public switch for it. AEStates.internals says whether this took (browser tests).
  const internals = {cssVisualsSkipped: false, buttonElementsSet: 0,
                     sidePanelsWatched: false, sidePanelChecksSkipped: 0,
                     sameStylesKept: false, sameStylesSkipped: 0,
                     glyphElementsLeft: false, glyphPlacesSkipped: 0,
                     buildsSliced: false, buildYields: 0, buildsPending: 0};
  function skipCssVisuals() {
    try {
      const proto = window.Bokeh.require("core/visuals/visual").VisualProperties.prototype;
      if (typeof proto._get_css_value !== "function") { return; }
      proto._get_css_value = function () { return ""; };
      internals.cssVisualsSkipped = true;
    } catch (e) { /* another Bokeh: its own lookups stay */ }
  }

  // On every repaint Bokeh 3.9 also asks each side panel of a figure (its axes, a legend
  // outside the frame) whether its size changed, and an axis answers by measuring every
  // tick label again: 0.5-2.5 ms a change on these pages, though no state moves an axis.
  // An axis whose model, ticker or formatter changes asks for a new layout itself, and a
  // legend watches its own size; what else resizes an axis is a new range. So the question
  // is asked again only when one of the figure's ranges has moved since it was last asked.
  function rangesOf(view) { // -> a text that changes when any range of the figure moves
    const f = view.frame;
    return [...f.x_ranges.values(), ...f.y_ranges.values()]
      .map((r) => `${r.start},${r.end},${r.factors ? r.factors.join("|") : ""}`).join(";");
  }
  function watchSidePanels() {
    try {
      const proto = window.Bokeh.require("models/plots/plot").PlotView.prototype;
      const check = proto._invalidate_layout_if_needed;
      if (typeof check !== "function") { return; }
      proto._invalidate_layout_if_needed = function () {
        const ranges = rangesOf(this);
        if (!this._needs_layout && ranges === this.aeRangesChecked) {
          internals.sidePanelChecksSkipped += 1;
          return;
        }
        this.aeRangesChecked = ranges;
        return check.call(this);
      };
      internals.sidePanelsWatched = true;
    } catch (e) { /* another Bokeh: its own checks stay */ }
  }

  // On every paint Bokeh 3.9 writes each renderer's position into that renderer's own
  // <style> element again, even when the text is what it already holds, and the browser then
  // parses it and works out the styles anew: a figure with many renderers (the head has one
  // masked layer per length) pays for each of them on every change. The text is written only
  // when it differs; what the page shows is the same.
  function keepSameStyles() {
    try {
      const proto = window.Bokeh.require("core/dom").InlineStyleSheet.prototype;
      const update = proto._update;
      if (typeof update !== "function") { return; }
      proto._update = function (css) {
        if (this.el.textContent === css) {
          internals.sameStylesSkipped += 1;
          return;
        }
        update.call(this, css);
      };
      internals.sameStylesKept = true;
    } catch (e) { /* another Bokeh: it writes them all */ }
  }

  // Bokeh 3.9 also gives every glyph renderer an element of its own, empty and transparent
  // to the pointer (the glyphs are drawn on the canvas), and on every paint writes the box of
  // the glyphs' data into that element's <style>. When the drawn cells move (a new length,
  // decode's one row) the text differs, and the browser works out the figure's styles anew
  // in the middle of Bokeh's paint: about 2 ms of the head's new length. Nothing is drawn in
  // those elements, so each is placed at its first paint and left there. A renderer with a
  // context menu (none here) is still placed on every paint.
  function leaveGlyphElements() {
    try {
      const proto = window.Bokeh.require("models/renderers/glyph_renderer")
        .GlyphRendererView.prototype;
      const place = proto.update_position;
      if (typeof place !== "function") { return; }
      proto.update_position = function () {
        const placed = this.position !== undefined && this.position.css !== "";
        if (placed && this.model.context_menu == null && this.el.childElementCount === 0) {
          internals.glyphPlacesSkipped += 1;
          return;
        }
        return place.call(this);
      };
      internals.glyphElementsLeft = true;
    } catch (e) { /* another Bokeh: it places them on every paint */ }
  }

  // Bokeh 3.9 builds the views of a figure's renderers one after another in one task (the
  // head has 29, most of them the hidden layers of other lengths): with the figure's layout
  // and first paint, a task of about 0.5 s on a phone, during which the page answers no tap
  // and no scroll. Each renderer's view is built behind an `await`, so letting the browser
  // run its own tasks before one that comes after 10 ms of work cuts the build into short
  // tasks; Bokeh awaits every view before it lays the figure out, so what it draws is the
  // same. It matters only while a panel mounts (islands.js): no state adds a renderer.
  const SLICE_MS = 10;
  let sliceStart = null; // when the current task's run of view builds began
  function nextTask() { // -> Promise resolved in a task of its own
    return new Promise((resolve) => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => resolve();
      channel.port2.postMessage(null);
    });
  }
  function sliceRendererBuilds() {
    try {
      const proto = window.Bokeh.require("models/renderers/glyph_renderer")
        .GlyphRendererView.prototype;
      const init = proto.lazy_initialize;
      if (typeof init !== "function") { return; }
      function startSlice() { // time this task's builds from now, until the task ends
        sliceStart = performance.now();
        nextTask().then(() => { sliceStart = null; });
      }
      async function slice() { // a new task when this one has run long enough
        if (sliceStart === null) {
          startSlice();
        } else if (performance.now() - sliceStart > SLICE_MS) {
          internals.buildYields += 1;
          await nextTask();
          startSlice();
        }
      }
      proto.lazy_initialize = async function () {
        internals.buildsPending += 1;
        try {
          await slice();
          await init.call(this);
          await slice(); // what follows the last build (the figure's layout) starts afresh
        } finally {
          internals.buildsPending -= 1;
        }
      };
      internals.buildsSliced = true;
    } catch (e) { /* another Bokeh: a figure's views are built in one task */ }
  }

  // A Button's `disabled` set on its model makes Bokeh 3.9 rebuild the button and lay out
  // the whole page again: about 8 ms here on every step of a walk whose end disables
  // "Next". The browser, the keyboard and screen readers act on the element's own
  // `disabled`, so a static page sets that instead (on every apply, so a button Bokeh
  // rebuilds for another reason gets it back). The model keeps the value the page was
  // built with; Bokeh's click handler does not read it.
  const buttonViews = new WeakMap(); // button model -> its views
  function setButtonDisabled(model, value) { // -> true if the button's element took it
    if (model.properties === undefined || model.properties.button_type === undefined) {
      return false;
    }
    let views = buttonViews.get(model);
    if (views === undefined) {
      views = [...window.Bokeh.index.find(model)];
      buttonViews.set(model, views);
    }
    const elements = views.map((v) => v.button_el).filter((e) => e instanceof HTMLButtonElement);
    for (const el of elements) { el.disabled = Boolean(value); }
    internals.buttonElementsSet += elements.length;
    return elements.length > 0;
  }

  function viewElements(model) { // -> the root elements of a model's views on this page
    return [...window.Bokeh.index.find(model)].map((v) => v.el)
      .filter((el) => el instanceof HTMLElement);
  }
  // ==== end of fence ======================================================================

  // A readout keeps the tallest height it has had at its width. When a change makes its
  // text a line shorter, the page below it would move up, and Bokeh lays out the whole panel
  // again (its figures measure their axes), about 4 ms; held, only the text changes. A new
  // width (a turned phone, a resized window) starts afresh.
  const heldHeights = new WeakMap(); // readout element -> {width, height}
  const stats = {readoutsHeld: 0, partsSkipped: 0}; // heights taken, parts not set again (tests)
  const holder = typeof ResizeObserver === "function" ? new ResizeObserver((entries) => {
    for (const entry of entries) {
      const el = entry.target;
      const box = entry.borderBoxSize && entry.borderBoxSize[0];
      const [width, height] = box ? [box.inlineSize, box.blockSize]
        : [el.offsetWidth, el.offsetHeight];
      const held = heldHeights.get(el);
      if (held !== undefined) {
        if (Math.abs(held.width - width) >= 0.5) {
          el.style.minHeight = ""; // a new width: measure the text as it now wraps
          heldHeights.delete(el);
          continue; // the observer reports the unheld height next
        }
        if (height <= held.height) { continue; }
      }
      heldHeights.set(el, {width, height});
      el.style.minHeight = `${height}px`;
      stats.readoutsHeld += 1;
    }
  }) : null;

  function holdReadoutHeights(p) {
    if (holder === null) { return; }
    p.spec.targets.forEach((name, i) => {
      if (!name.startsWith("slots:")) { return; }
      for (const el of viewElements(p.targets[i])) { holder.observe(el); }
    });
  }

  // -> Promise, in a later task, once no view build is waiting for its turn: what a change of
  // the document started (a layout's new children) is then built and laid out, since the
  // rest of Bokeh's work after the last build runs without leaving its task
  async function built() {
    do { await nextTask(); } while (internals.buildsPending > 0);
  }

  // before a document is drawn (islands.js calls it ahead of Bokeh's embed, and boot after)
  function beforeMount() {
    if (!internals.cssVisualsSkipped) { skipCssVisuals(); }
    if (!internals.sidePanelsWatched) { watchSidePanels(); }
    if (!internals.sameStylesKept) { keepSameStyles(); }
    if (!internals.glyphElementsLeft) { leaveGlyphElements(); }
    if (!internals.buildsSliced) { sliceRendererBuilds(); }
  }

  function boot() {
    beforeMount();
    findPanels();
    // A new document holds the state it was built in (app/states.py pushes it into the
    // models): at the controls' stops as built, no part needs setting again, and setting them
    // would make Bokeh redraw every figure just drawn. Read for every panel before any takes
    // the address's values: a panel that follows another shares its controls.
    for (const p of panels.values()) {
      const asBuilt = stops(p);
      if (!p.booted && p.drawn.length === 0 && asBuilt.every((i) => i >= 0)) {
        p.spec.table.parts.forEach((part, j) => { p.drawn[j] = valueAt(p, part, asBuilt); });
      }
    }
    for (const p of panels.values()) {
      if (p.booted) { continue; }
      holdReadoutHeights(p);
      const notes = restore(p);
      const at = stops(p);
      if (at.every((i) => i >= 0)) { apply(p, changedState(p, at), undefined); }
      showNotes(p, notes);
      p.booted = true;
    }
  }

  function whenReady(fn, tries) { // after every Bokeh document on the page has rendered
    const B = window.Bokeh;
    if (B && B.documents.length > 0 && B.documents.every((d) => d.is_idle)) { fn(); return; }
    if (tries > 0) { setTimeout(() => whenReady(fn, tries - 1), 25); }
  }

  // The live counterpart of this page: window.AE_LIVE_URL if the page sets it, else "live/"
  // at the site's root (the folder holding assets/, where this script lies), as `make serve`
  // has; then this page's own route (a chapter's keys only a chapter reads) and its query.
  const here = document.currentScript ? document.currentScript.src : window.location.href;
  function siteRoot() {
    const root = new URL(here);
    const at = root.pathname.lastIndexOf("/assets/");
    root.pathname = at >= 0 ? root.pathname.slice(0, at + 1)
      : root.pathname.slice(0, root.pathname.lastIndexOf("/") + 1);
    root.search = "";
    root.hash = "";
    return root;
  }

  function liveUrl() {
    flushUrl();
    const root = siteRoot();
    const base = window.AE_LIVE_URL ? String(window.AE_LIVE_URL).replace(/\/$/, "")
      : new URL("live", root).href;
    let route = window.location.pathname.startsWith(root.pathname)
      ? window.location.pathname.slice(root.pathname.length) : "";
    route = route.replace(/(^|\/)index\.html$/, "").replace(/\/$/, "");
    return base + (route ? "/" + route : "") + window.location.search;
  }

  window.AEStates = {change, boot, beforeMount, built, nextTask, coerce, liveUrl, flushUrl,
                     register, panels, get, set, internals, stats};
  // a page of islands boots each panel group when islands.js has mounted all of it
  if (!window.AEIslands) { whenReady(boot, 2400); }
})();
