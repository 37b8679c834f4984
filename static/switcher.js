// The browser half of "states in Python, switching in the browser" (app/kit/states.py): state
// lookup and switching.
//
// A static page ships, per panel, the table of every state its controls can take, each
// computed in Python by the same state() a live session pushes. When a control changes,
// its CustomJS calls AE.states.onControl: read every control's stop, look up each part's
// state, set those values on the models they name. No server, no round trip.
//
// On load, AE.states.boot() finds the panels (the CustomJS models carrying a spec), applies
// the page's query string (deep links, read by page_url.js) and from then on mirrors each
// change back into the address bar. It needs bokeh_fence.js, page_url.js and
// readout_heights.js loaded first (a built page's islands.js holds them: app/hosting/build.py).
(function () {
  "use strict";
  const AE = window.AE = window.AE || {};
  if (AE.states) { return; }
  const {fence, url, heights} = AE;

  const get = (o, k) => (o instanceof Map ? o.get(k) : o[k]);
  const panels = new Map(); // spec id -> {spec, controls: [model], targets: [model], log: []}
  const tables = new Map(); // table ref -> table, from assets/states/<ref>.js
  const stats = {partsSkipped: 0}; // parts not set again, as already drawn (tests)

  // a table's file hands over its JSON text (app/kit/states.py table_script: faster to parse);
  // run again at a mount (islands.js loads it again), it is not parsed again
  function register(ref, text) { if (!tables.has(ref)) { tables.set(ref, JSON.parse(text)); } }

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
           booted: false, named: new Map(spec.targets.map((t) => [t.name, t]))};
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
  // the log gains a line per change, and a button's element `disabled` (bokeh_fence.js) must be
  // set again on a button Bokeh rebuilt.
  // A target is a record the page ships ({name, kind, attr}: app/kit/targets.py), never parsed here.
  function everyTime(p, name) {
    const target = p.named.get(name);
    return target !== undefined && (target.kind === "log" || target.attr === "disabled");
  }

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
        if (everyTime(p, name)) { state[name] = value[name]; }
      }
    });
    return state;
  }

  function setProperty(model, attr, value) {
    if (model[attr] !== value) { model[attr] = value; }
  }

  function setHoles(model, values) { // a Readout: its holes' texts (the others kept)
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
    setHoles(model, values);
  }

  function apply(p, state, changed) {
    p.spec.targets.forEach((target, i) => {
      if (!(target.name in state)) { return; }
      const value = state[target.name];
      const model = p.targets[i];
      if (target.kind === "source") { setSource(model, value); }
      else if (target.kind === "holes") { setHoles(model, value); }
      else if (target.kind === "prop") {
        if (!(target.attr === "disabled" && fence.setButtonDisabled(model, value))) {
          setProperty(model, target.attr, value);
        }
      }
      else if (target.kind === "log") { writeLog(p, model, changed, value); }
    });
  }

  function mirror(p, at) {
    const values = {};
    for (const [key, name] of Object.entries(p.spec.url)) {
      const i = p.spec.table.controls.findIndex((c) => c.name === name);
      values[key] = p.spec.table.controls[i].values[at[i]];
    }
    url.write(values);
  }

  // a control's CustomJS (app/kit/states.py SWITCH_CALL) hands over its panel: {spec,
  // controls, targets}, the models of its own root; look again while any is missing
  function onControl(changedModel, panelArg) {
    const id = get(panelArg, "spec").id;
    let p = panels.get(id);
    if (p === undefined || p.controls.some((m) => m == null)
        || p.targets.some((m) => m == null)) {
      findPanels();
      p = panels.get(id);
    }
    if (p !== undefined) { switchTo(p, changedModel); }
  }

  function switchTo(p, changedModel) {
    const controls = p.controls;
    const at = stops(p);
    if (at.some((i) => i < 0)) { return; } // a widget between stops: wait for the next change
    const index = controls.indexOf(changedModel);
    const changed = index >= 0 ? p.spec.table.controls[index].name : undefined;
    apply(p, changedState(p, at), changed);
    if (p.booted) { mirror(p, at); }
  }

  // --- deep links ----------------------------------------------------------------------

  function restore(p, query) { // -> repairs; sets each control the query (default: the URL's) names
    const params = new URLSearchParams(query === undefined ? window.location.search : query);
    const repairs = [];
    for (const [key, name] of Object.entries(p.spec.url)) {
      const given = params.getAll(key);
      if (given.length === 0) { continue; }
      if (given.length > 1) { repairs.push(`${key} given ${given.length} times; using the last`); }
      const i = p.spec.table.controls.findIndex((c) => c.name === name);
      const control = p.spec.table.controls[i];
      const [stop, repair] = url.coerce(control, key, given[given.length - 1]);
      if (repair) { repairs.push(repair); }
      if (stop >= 0) { setProperty(p.controls[i], control.prop, control.raw[stop]); }
    }
    return repairs;
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
      showRepairs(p, restore(p, params));
      reached += 1;
    }
    return reached;
  }

  function showRepairs(p, repairs) { // in the panel's URL note
    const i = p.spec.targets.findIndex((t) => t.name === "holes:url_note");
    if (i < 0) { return; }
    setHoles(p.targets[i], {url: repairs.length ? "URL: " + repairs.join("; ") : ""});
  }

  function findPanels() { // every CustomJS that carries a panel (app/kit/states.py) -> its panel
    for (const model of fence.allModels()) {
      const args = model.args;
      const panelArg = args === undefined ? undefined : get(args, "ae_panel");
      if (panelArg === undefined) { continue; }
      panelFor(get(panelArg, "spec"), get(panelArg, "controls"), get(panelArg, "targets"));
    }
  }

  function boot() {
    fence.beforeMount(); // a page saved with its documents inline is patched only now
    url.flush(); // what a still's native controls set (still_controls.js) is the address now
    findPanels();
    // A new document holds the state it was built in (app/kit/states.py pushes it into the
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
      p.spec.targets.forEach((t, i) => { // readouts keep their height (readout_heights.js)
        if (t.kind === "holes") { heights.hold(p.targets[i]); }
      });
      const repairs = restore(p);
      // what a reader set on the still's native controls (still_controls.js), those the
      // address has no key for included
      const still = AE.stillControls ? AE.stillControls.stopsOf(p.spec.table_ref) : null;
      if (still) {
        p.spec.table.controls.forEach((c, i) => {
          setProperty(p.controls[i], c.prop, c.raw[still[i]]);
        });
      }
      const at = stops(p);
      if (at.every((i) => i >= 0)) { apply(p, changedState(p, at), undefined); }
      showRepairs(p, repairs);
      p.booted = true;
    }
  }

  function whenReady(fn, tries) { // after every Bokeh document on the page has rendered
    if (fence.documentsIdle() && window.Bokeh.documents.length > 0) { fn(); return; }
    if (tries > 0) { setTimeout(() => whenReady(fn, tries - 1), 25); }
  }

  // also what Python writes into pages calls: a table's script AE.states.register, a
  // control's CustomJS AE.states.onControl
  // table: a registered table by its ref (a still's native controls read it before Bokeh)
  AE.states = {onControl, boot, register, panels, get, set, stats,
    table: (ref) => tables.get(ref)};
  // a page of islands boots each panel group when islands.js has mounted all of it; a live
  // chapter loads this file for its stills' tables alone (live_stills.js): its session's
  // panels switch on the server
  if (!AE.islands && !AE.liveStills) { whenReady(boot, 2400); }
})();
