// A chapter page's panels as islands (app/chapters/chapter_page.py writes the page). The prose is
// already HTML. An island whose still has native controls (still_controls.js) already shows
// every state, so its Bokeh document mounts only on intent: a mouse resting on one of its
// charts (Bokeh's hover and zoom), the keyboard entering it, its "interactive chart" button,
// a deep link or a link in the prose that targets it. An island without native controls
// mounts when the reader nears it (on its own page, at idle once it has painted). A group
// loads only the Bokeh and Panel bundles its models need (the build lists them), with the
// switcher and its tables of states, on its first mount, never before.
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
  const REST_MS = 300; // a mouse resting this long on a still's chart mounts its island
  let mountedCount = 0;
  const received = new Map(); // group -> its document, as its script (assets/docs/) gave it
  // a document script's call: its documents, each recurring stylesheet standing once
  function receive(name, sheets, docs) {
    received.set(name, fence.document.withSheets(docs, sheets));
  }

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
      const held = fence.document.holdChildren(docs);
      const rootId = fence.document.rootOf(group.render_items);
      fence.beforeMount(); // the fence's Bokeh patches, before Bokeh draws
      // Bokeh's public embed, in a task of its own: the document's models made (most of a
      // plot's wait in the layouts' tags, above) and its roots' views built, sliced by the
      // fence where a figure's renderers take long
      return window.Bokeh.embed.embed_items(docs, group.render_items).then(function () {
        return fence.document.putBack(held, rootId);
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
    // the islands without native controls mount as the reader nears them; those with native
    // controls never mount by themselves (Bokeh's mount holds the main thread for long tasks
    // that buy nothing their still lacks, and a tap made meanwhile would wait on them)
    const nearing = Array.from(document.querySelectorAll(".ae-island"))
      .filter(function (el) { return !switchable.includes(el); });
    if (config.when === "idle") { // a panel's page: its island is the page, mounted once
      // the text and stills have painted, when the page is idle, or at a first touch
      for (const el of nearing) {
        el.addEventListener("pointerdown", function () { mountFor(el); }, {once: true});
      }
      requestAnimationFrame(function () {
        setTimeout(function () {
          for (const el of nearing) { mount(el.dataset.group); }
        }, 0);
      });
    } else if ("IntersectionObserver" in window) {
      const seen = new IntersectionObserver(function (entries) {
        for (const entry of entries) {
          if (entry.isIntersecting) {
            seen.unobserve(entry.target);
            mount(entry.target.dataset.group);
          }
        }
      }, {rootMargin: "600px 0px"});
      for (const el of nearing) { seen.observe(el); }
    } else {
      for (const el of nearing) { mount(el.dataset.group); }
    }
    for (const el of switchable) { // a mouse resting on a chart wants Bokeh's hover and zoom
      let resting = null;
      el.addEventListener("pointerover", function (event) {
        if (event.pointerType === "mouse" && event.target.closest("[data-ae-pane]")
            && resting === null) {
          resting = setTimeout(function () { mountFor(el); }, REST_MS);
        }
      });
      el.addEventListener("pointerout", function (event) {
        const to = event.relatedTarget;
        if (resting !== null && !(to instanceof Element && to.closest("[data-ae-pane]"))) {
          clearTimeout(resting);
          resting = null;
        }
      });
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

  // steps and holdChildren (the fence's): for tests; receive: a document script's call
  AE.islands = {mount, mountAll, mountFor, mounts, show, receive, printValues,
                steps: fence.document.steps, holdChildren: fence.document.holdChildren};
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start, {once: true});
  } else {
    start();
  }
})();
