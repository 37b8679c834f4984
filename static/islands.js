// A chapter page's panels as islands (app/chapters/chapter_page.py writes the page). The prose is
// already HTML; a panel's Bokeh document mounts when the reader nears it, when a deep link
// or a link in the prose targets it, or when the keyboard reaches it; a panel's own page
// mounts its island at idle once it has painted (with native controls over its still, once
// the reader has left them alone for a moment). A group loads only the Bokeh and Panel
// bundles its models need (the build lists them), with the switcher and its tables of
// states, on its first mount, never before.
// AE.islands: {mount, mountAll, mountFor, show, ...}. It runs after bokeh_fence.js,
// page_url.js and readout_heights.js (one file as built: app/hosting/build.py SITE_SCRIPTS);
// A panel's document script calls AE.islands.receive.
(function () {
  "use strict";
  const AE = window.AE = window.AE || {};
  if (AE.islands) { return; }
  const {fence} = AE;
  const config = JSON.parse(document.getElementById("ae-islands").textContent);
  const mounts = new Map(); // group -> Promise of its mount
  const loaded = new Map(); // script URL -> Promise of its load
  const PAGE_KEYS = ["theme", "questions", "ask"]; // the page's own keys: no panel reads them
  const QUIET_MS = 1500; // an island with native controls mounts once they rest this long
  let mountedCount = 0;
  const received = new Map(); // group -> its document, as its script (assets/docs/) gave it
  // A document script's call: each stylesheet text that recurs stands once, in `sheets`, and a
  // model's stylesheets name it by its index (app/kit/island_documents.py); put them back.
  function withSheets(node, sheets) {
    if (Array.isArray(node)) {
      for (const value of node) {
        if (value !== null && typeof value === "object") { withSheets(value, sheets); }
      }
    } else {
      for (const key in node) {
        const value = node[key];
        if (key === "stylesheets" && Array.isArray(value)) {
          node[key] = value.map((v) => (typeof v === "number" ? sheets[v] : v));
        }
        if (value !== null && typeof value === "object") { withSheets(node[key], sheets); }
      }
    }
    return node;
  }
  function receive(name, sheets, docs) { received.set(name, withSheets(docs, sheets)); }

  function load(src) { // scripts run in the order they are asked for, fetched in parallel
    if (!loaded.has(src)) {
      loaded.set(src, new Promise(function (resolve, reject) {
        const s = document.createElement("script");
        s.src = src;
        s.async = false;
        s.onload = resolve;
        s.onerror = function () { reject(new Error("could not load " + src)); };
        document.head.appendChild(s);
      }));
    }
    return loaded.get(src);
  }

  function idle() { // -> Promise: every Bokeh document on the page has rendered
    return new Promise(function (resolve) {
      (function check() {
        if (fence.documentsIdle()) { resolve(); return; }
        setTimeout(check, 16);
      })();
    });
  }

  // A panel's document mounts in steps, each its own task, so no single task holds the
  // page for long (a phone keeps scrolling and answering taps while a panel arrives): the
  // roots render with their layouts empty, then each layout's children are put back one at
  // a time, in order, plots last (a plot is the costliest child, and every later step lays
  // out what is already there again). Each layout's children wait in its `tags`, behind a
  // marker, so the document's JSON keeps its order (a model is defined where first named).
  // The root is hidden until the end (chapter.css), so no step is ever seen.
  // A plot is also made later: its models (most of a panel's) leave the document's JSON, to
  // be made in a step of their own just before it comes back, where nothing outside the plot
  // names one of them (else it stays in the JSON, behind the marker).
  const WAITING = "ae-waiting-children", LATER = "ae-made-later:";
  const LAYOUT = /(^|\.)(Column|Row)$/;
  const PLOT = /(^|\.)(Figure|Plot)$/;
  // how many children arrived as steps, and how many plots were painted after their layout
  // (tests read them)
  const steps = {taken: 0, paintsHeld: 0, madeLater: 0};

  function walk(o, visit) { // every object in a document's JSON, in its order
    if (Array.isArray(o)) { o.forEach((v) => walk(v, visit)); return; }
    if (o === null || typeof o !== "object") { return; }
    visit(o);
    for (const key of Object.keys(o)) { walk(o[key], visit); }
  }

  function isRef(o) { return typeof o.id === "string" && Object.keys(o).length === 1; }

  function holdChildren(docs) { // -> [{layout, child, plot, json}]: the children taken out,
    // in order (json: a plot's definition, taken out of the document)
    const defs = new Map(), held = [];
    walk(docs, (o) => {
      if (o.type === "object" && typeof o.id === "string" && !defs.has(o.id)) {
        defs.set(o.id, o);
      }
    });
    for (const o of defs.values()) {
      const a = o.attributes;
      if (!a || !LAYOUT.test(o.name) || !Array.isArray(a.children) || a.children.length === 0 ||
          !a.children.every((c) => c !== null && typeof c.id === "string")) { continue; }
      const waiting = [], mine = [];
      for (const c of a.children) {
        const def = defs.get(c.id);
        const plot = PLOT.test(def?.name ?? "");
        // a plot comes back with its paint held (Plot.hold_render), so that Bokeh lays it
        // out in one task and paints it in a later one, not both in one
        if (plot && def.attributes && def.attributes.hold_render !== true) {
          def.attributes.hold_render = true;
        }
        const later = plot && def === c; // defined here, as a child: it can be made later
        waiting.push(later ? LATER + c.id : c);
        mine.push({layout: o.id, child: c.id, plot, json: later ? c : null});
      }
      const attrs = {};
      for (const key of Object.keys(a)) { // tags right after children: the same order
        if (key === "children") {
          attrs.children = [];
          attrs.tags = [...(a.tags ?? []), WAITING, ...waiting];
        } else if (key !== "tags") {
          attrs[key] = a[key];
        }
      }
      o.attributes = attrs;
      for (const h of mine) { held.push({...h, tags: attrs.tags}); }
    }
    // a plot whose models something left in the document names stays in it, and so does
    // one that holds a layout (its children wait for it)
    for (let changed = true; changed;) {
      changed = false;
      const named = new Set();
      walk(docs, (o) => { if (isRef(o)) { named.add(o.id); } });
      for (const h of held) {
        if (h.json === null) { continue; }
        let clash = false;
        walk(h.json, (o) => {
          if (o.type === "object" && (named.has(o.id) || LAYOUT.test(o.name))) { clash = true; }
        });
        if (clash) {
          h.tags[h.tags.indexOf(LATER + h.child)] = h.json;
          h.json = null;
          changed = true;
        }
      }
    }
    return held.filter((h) => !h.plot).concat(held.filter((h) => h.plot));
  }

  async function putBack(held, rootId) { // the held children back into their layouts
    const doc = window.Bokeh.documents.find((d) => d.get_model_by_id(rootId) !== null);
    const wanted = new Map(), shown = new Set(); // layout -> its children's ids, in order
    for (const {layout} of held) {
      if (wanted.has(layout)) { continue; }
      const model = doc.get_model_by_id(layout);
      const at = model.tags.indexOf(WAITING);
      wanted.set(layout, model.tags.slice(at + 1).map(
        (c) => (typeof c === "string" ? c.slice(LATER.length) : c.id)));
      model.tags = model.tags.slice(0, at);
    }
    const {nextTask, built} = fence;
    for (const {layout, child, json} of held) {
      const model = doc.get_model_by_id(layout), tags = model.tags;
      if (json !== null) { // its models, made from its JSON in the layout's tags for now
        await nextTask();
        fence.setFromJson(doc, model, "tags", [...tags, json]);
        steps.madeLater += 1;
      }
      await nextTask();
      shown.add(child);
      model.children = wanted.get(layout).filter((id) => shown.has(id))
        .map((id) => doc.get_model_by_id(id));
      if (json !== null) { model.tags = tags; } // the plot is a child now: out of its tags
      steps.taken += 1;
      await built(); // a plot's views may take several tasks to build
    }
    for (const {child, plot} of held) { // each plot's first paint, a task of its own
      if (!plot) { continue; }
      await nextTask();
      const model = doc.get_model_by_id(child);
      if (model.hold_render) {
        model.hold_render = false;
        steps.paintsHeld += 1;
      }
    }
  }

  function islandsOf(name) {
    return Array.from(document.querySelectorAll('.ae-island[data-group="' + name + '"]'));
  }

  function mount(name) { // -> Promise: the group's panels are live (and booted)
    if (mounts.has(name)) { return mounts.get(name); }
    const group = config.groups[name];
    if (!group) { return Promise.reject(new Error("no panel group " + name)); }
    // a bundle another group loaded already is not asked for again (`loaded`)
    const scripts = group.scripts.concat([config.switcher], group.tables, [group.doc]);
    const done = Promise.all(scripts.map(load)).then(function () {
      if (!received.has(name)) { throw new Error("its document did not arrive"); }
      const docs = received.get(name);
      const held = holdChildren(docs);
      const rootId = Object.keys(group.render_items[0].roots)[0];
      fence.beforeMount(); // the fence's Bokeh patches, before Bokeh draws
      // Bokeh's public embed, in a task of its own: the document's models made (most of a
      // plot's wait in the layouts' tags, above) and its roots' views built, sliced by the
      // fence where a figure's renderers take long
      return window.Bokeh.embed.embed_items(docs, group.render_items).then(function () {
        return putBack(held, rootId);
      });
    }).then(idle).then(function () {
      if (AE.states) { AE.states.boot(); }
      for (const el of islandsOf(name)) { // the live panel replaces its still
        el.classList.add("ae-mounted");
        const still = el.querySelector(".ae-island-still");
        if (still) { still.remove(); }
      }
      mountedCount += 1;
      document.documentElement.dataset.aeMounted = String(mountedCount);
      document.dispatchEvent(new CustomEvent("ae:mounted", {detail: {group: name}}));
    }).catch(function (error) {
      for (const el of islandsOf(name)) {
        const wait = el.querySelector(".ae-island-wait");
        if (wait) {
          wait.textContent = "This panel could not be loaded (" + error.message + "). " +
            "The text around it still holds its numbers; reloading may help.";
          wait.classList.add("ae-island-error");
        }
      }
      throw error;
    });
    mounts.set(name, done);
    return done;
  }

  function mountAll() {
    return Promise.all(Object.keys(config.groups).map(mount));
  }

  function mountFor(el) { // an island (or an element inside one) -> its group's mount
    const island = el.closest(".ae-island");
    return island ? mount(island.dataset.group) : Promise.resolve();
  }

  // A link asking for the other theme (a deep link's ?theme=, the header's link) opens the
  // page's other file, keeping the query and the fragment.
  function themeFile() {
    const params = new URLSearchParams(window.location.search);
    const wanted = params.get("theme");
    if (wanted === null) { return false; }
    const theme = wanted.trim().toLowerCase() === "dark" ? "dark" : "default";
    if (theme === ((AE.page && AE.page.theme) || "default")) { return false; } // page_head.js
    const url = new URL(window.location.href);
    url.pathname = url.pathname.replace(/index(-dark)?\.html$/, "")
      .replace(/\/?$/, "/") + (theme === "dark" ? "index-dark.html" : "index.html");
    window.location.replace(url.href);
    return true;
  }

  function start() {
    if (themeFile()) { return; }
    for (const link of document.querySelectorAll("a[data-theme-file]")) {
      link.addEventListener("click", function () { // keep the reader's deep link
        AE.url.flush();
        const url = new URL(link.href);
        const params = new URLSearchParams(window.location.search);
        params.delete("theme");
        url.search = params.toString();
        url.hash = window.location.hash;
        link.href = url.href;
      });
    }
    for (const button of document.querySelectorAll(".ae-island-load")) {
      button.addEventListener("click", function () { mountFor(button); });
    }
    // an island whose still has native controls (still_controls.js) works without Bokeh: a
    // touch or a key on those controls is answered by them and does not mount it
    const native = function (el) { return el.closest(".ae-still-controls") !== null; };
    const switchable = Array.from(document.querySelectorAll(".ae-island"))
      .filter(function (el) { return el.querySelector("script.ae-still-data") !== null; });
    document.addEventListener("focusin", function (event) {
      if (event.target instanceof Element && !native(event.target)) { mountFor(event.target); }
    });
    // a deep link sets some panel's controls: mount them all, so every key finds its panel
    // (native controls read the address themselves)
    const params = new URLSearchParams(window.location.search);
    for (const key of PAGE_KEYS) { params.delete(key); }
    if (Array.from(params.keys()).length > 0) { // the stills' data is read only then
      const nativeKeys = new Set(switchable.flatMap(function (el) {
        return Object.keys(JSON.parse(el.querySelector("script.ae-still-data").textContent).url);
      }));
      if (Array.from(params.keys()).some(function (key) { return !nativeKeys.has(key); })) {
        mountAll();
      }
    }
    const target = window.location.hash ? document.getElementById(window.location.hash.slice(1))
      : null;
    if (target) { mountFor(target); }
    // Bokeh's mount holds the main thread for long tasks: an island with native controls
    // mounts once it has been near for QUIET_MS with none of them touched, so no tap made
    // meanwhile waits on a mount
    if (switchable.length) {
      for (const type of ["pointerdown", "keydown", "input"]) {
        document.addEventListener(type, function (event) {
          if (event.target instanceof Element && native(event.target)) {
            lastTouch = performance.now();
          }
        }, {capture: true, passive: true});
      }
    }
    const mountWhenQuiet = function (el) {
      if (!switchable.includes(el)) { mount(el.dataset.group); return; }
      whenQuiet(function () { mount(el.dataset.group); }, performance.now());
    };
    if (config.when === "idle") { // a panel's page: its island is the page, mounted once
      // the text and stills have painted, when the page is idle, or at a first touch
      // (one with native controls does not mount at a touch: on a phone a touch on its still
      // is most often the start of a scroll, and its controls answer without Bokeh)
      for (const el of document.querySelectorAll(".ae-island")) {
        if (switchable.includes(el)) { continue; }
        el.addEventListener("pointerdown", function () { mountFor(el); }, {once: true});
      }
      requestAnimationFrame(function () {
        setTimeout(function () {
          for (const el of document.querySelectorAll(".ae-island")) { mountWhenQuiet(el); }
        }, 0);
      });
    } else if ("IntersectionObserver" in window) {
      const seen = new IntersectionObserver(function (entries) {
        for (const entry of entries) {
          if (entry.isIntersecting) {
            seen.unobserve(entry.target);
            mountWhenQuiet(entry.target);
          }
        }
      }, {rootMargin: "600px 0px"});
      for (const el of document.querySelectorAll(".ae-island")) { seen.observe(el); }
    } else {
      mountAll();
    }
    for (const el of switchable) { // a mouse over a chart wants Bokeh's hover
      el.addEventListener("pointerover", function (event) {
        if (event.pointerType === "mouse" && event.target.closest("[data-ae-pane]")) {
          mountFor(el);
        }
      });
    }
  }

  let lastTouch = -Infinity; // when the reader last worked a native control
  // fn, at idle, once the reader has been QUIET_MS without touching a native control since
  // `since` (when the island came near: they may be about to)
  function whenQuiet(fn, since) {
    const wait = Math.max(lastTouch, since) + QUIET_MS - performance.now();
    if (wait > 0) { setTimeout(function () { whenQuiet(fn, since); }, wait); return; }
    if ("requestIdleCallback" in window) {
      window.requestIdleCallback(fn, {timeout: 500});
    } else {
      fn();
    }
  }

  // "Show me": mount a panel, set it to the state a query names, bring it into view, focus it
  function show(slot, query) { // -> Promise
    const island = document.getElementById("panel-" + slot);
    if (!island) { return Promise.reject(new Error("no panel " + slot + " on this page")); }
    return mount(island.dataset.group).then(function () {
      if (query && AE.states) { AE.states.set(query); }
      island.scrollIntoView({block: "start", behavior: "auto"});
      if (!island.hasAttribute("tabindex")) { island.setAttribute("tabindex", "-1"); }
      island.focus({preventScroll: true});
    });
  }

  // Print: a widget prints as a box, not its setting. Before printing, each mounted panel's
  // controls are hidden and the island lists them as their values ("sequence length: 6");
  // an island not mounted prints its still, the default state.
  const hidden = []; // [element, its display before printing]

  function islandOf(el) { // an element, maybe deep in shadow roots -> its island, or null
    while (el) {
      const island = el.closest(".ae-island");
      if (island) { return island; }
      const root = el.getRootNode();
      el = root instanceof ShadowRoot ? root.host : null;
    }
    return null;
  }

  function shown(value) {
    if (typeof value === "boolean") { return value ? "on" : "off"; }
    if (typeof value === "number") { return value.toLocaleString("en-US"); }
    return String(value);
  }

  function printValues() {
    afterPrint();
    const S = AE.states;
    if (!S) { return; }
    const lists = new Map(), seen = new Set(); // island -> [[label, value]]
    for (const p of S.panels.values()) {
      p.spec.table.controls.forEach(function (c, i) {
        const model = p.controls[i];
        if (!model || seen.has(model.id)) { return; }
        seen.add(model.id);
        const [el] = fence.viewElements(model); // the control's element
        const island = el ? islandOf(el) : null;
        if (!island) { return; }
        const raw = model[c.prop];
        const at = c.raw.findIndex((r) => r === raw || (typeof r === "number" && Number(raw) === r));
        const label = model.title || model.label || c.name;
        if (!lists.has(island)) { lists.set(island, []); }
        lists.get(island).push([label, shown(at >= 0 ? c.values[at] : raw)]);
        hidden.push([el, el.style.display]);
        el.style.display = "none";
      });
    }
    for (const [island, lines] of lists) {
      const list = document.createElement("ul");
      list.className = "ae-print-values";
      list.setAttribute("aria-label", "The panel's controls, as set");
      for (const [label, value] of lines) {
        const item = document.createElement("li");
        item.textContent = label + ": " + value;
        list.appendChild(item);
      }
      island.insertBefore(list, island.firstChild);
    }
  }

  function afterPrint() {
    for (const list of document.querySelectorAll(".ae-print-values")) { list.remove(); }
    for (const [el, display] of hidden.splice(0)) { el.style.display = display; }
  }

  window.addEventListener("beforeprint", printValues);
  window.addEventListener("afterprint", afterPrint);

  AE.islands = {mount, mountAll, mountFor, mounts, show, receive, printValues, steps,
                holdChildren}; // holdChildren: for tests; receive: a document script's call
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start, {once: true});
  } else {
    start();
  }
})();
