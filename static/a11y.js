// Names for the controls Bokeh draws without one, in one place for every page, live or
// static (app/kit/chrome.py runs this from the page's first component).
//
// - A slider's handle (noUiSlider, role=slider) gets aria-label = the slider's visible
//   title without its value ("sequence length"), and aria-valuetext = the value as the
//   page shows it ("4,096" where the slider shows the power, not the exponent).
// - A number box's spin buttons get "increase <label>" / "decrease <label>".
// - The page's root gets role=main, so all its content sits in a landmark.
// - Every shadow root adopts one stylesheet: a focus ring that shows in both themes
//   (Okabe-Ito vermillion, over 3:1 against the light and the dark background).
// - A box that scrolls sideways (.ae-scroll, a wide table on a phone) is in the Tab order,
//   so a keyboard can scroll it (its template says so: app/kit/readout.py scroll_box; this is
//   the fallback for one that does not).
// - While a slider's handle is dragged, every live region is aria-busy: a screen reader
//   announces the value the handle lands on, not every step it passes.
// - A figure's event layer (focusable in Bokeh, though our figures take no keys) leaves the
//   Tab order: each figure's numbers are in its caption or table.
// Bokeh draws widgets again (a new view, new shadow root and handle, when a layout's children
// change; a slider's title on every value), and a live page's panels arrive after the page
// does. So every shadow root is watched, and the names are given in the observer's callback:
// a microtask, after the script that changed the nodes and before anything else can run or
// the page paint: no one (a screen reader, a test, axe) ever sees a control without its
// name. The callback names the controls of the roots whose nodes changed (a few
// querySelectorAll over a small shadow root, microseconds: never the 1-3 ms walk of the
// whole page) and fixes any shadow root that the added nodes bring. AE.a11y.unnamed() lists
// what still lacks a name, and AE.a11y.ready() is what a test waits for: every document
// rendered, no panel still to come, nothing unnamed.
// Bokeh's class names come from bokeh_fence.js (AE.fence.dom), whose first part every page
// runs just before this file (app/kit/chrome.py).
(function () {
  "use strict";
  const AE = window.AE = window.AE || {};
  if (AE.a11y) { return; }
  const {dom, documentsIdle} = AE.fence;

  const watched = new WeakSet();

  function titleOf(root) { // the widget's visible label, without ": value"
    const title = root.querySelector(`.${dom.sliderTitle}, ${dom.inputLabel}, label`);
    if (!title) { return ""; }
    return title.textContent.replace(/\s*:\s*[^:]*$/, "").trim() || title.textContent.trim();
  }

  function nameSliders(root) {
    for (const handle of root.querySelectorAll(`.${dom.handle}[role=slider]`)) {
      const label = titleOf(root);
      if (label && handle.getAttribute("aria-label") !== label) {
        handle.setAttribute("aria-label", label);
      }
      const value = root.querySelector(`.${dom.sliderValue}`);
      const shown = value ? value.textContent.trim() : "";
      if (shown && handle.getAttribute("aria-valuetext") !== shown) {
        handle.setAttribute("aria-valuetext", shown); // the value as the page shows it
      }
    }
  }

  function nameSpinButtons(root) {
    const label = titleOf(root) || "value";
    for (const button of root.querySelectorAll(`.${dom.spinUp}, .${dom.spinDown}`)) {
      const verb = button.classList.contains(dom.spinUp) ? "increase" : "decrease";
      const name = `${verb} ${label}`;
      if (button.getAttribute("aria-label") !== name) { button.setAttribute("aria-label", name); }
      if (!button.hasAttribute("tabindex")) { button.setAttribute("tabindex", "-1"); }
    }
  }

  function markMain() { // the page's Bokeh root: the one main landmark
    if (document.querySelector("main, [role=main]")) { return; }
    const at = `[${dom.rootAttribute}]`;
    const root = document.querySelector(`body > ${at}, body > div > ${at}`)
      || document.querySelector(at);
    if (root) { root.setAttribute("role", "main"); }
  }

  const FOCUS_CSS = `
    :focus-visible, .${dom.handle}:focus-visible, .${dom.button}:focus-visible,
    input:focus-visible, select:focus-visible, textarea:focus-visible {
      outline: 3px solid #d55e00 !important; outline-offset: 2px !important; }
    :host { --handle-width: 24px; --handle-height: 24px; }`;  /* a slider handle is a 24 px target */
  let focusSheet = null;

  function adoptFocusRing(root) {
    if (typeof CSSStyleSheet === "undefined" || !("adoptedStyleSheets" in root)) { return; }
    if (focusSheet === null) {
      focusSheet = new CSSStyleSheet();
      focusSheet.replaceSync(FOCUS_CSS);
    }
    if (!root.adoptedStyleSheets.includes(focusSheet)) {
      root.adoptedStyleSheets = [...root.adoptedStyleSheets, focusSheet];
    }
  }

  function quietFigures(root) {
    for (const layer of root.querySelectorAll(`.${dom.eventLayer}[tabindex]`)) {
      if (layer.getAttribute("tabindex") !== "-1") { layer.setAttribute("tabindex", "-1"); }
    }
  }

  function focusableScrollers(root) { // a box that scrolls sideways: reachable by keyboard
    for (const box of root.querySelectorAll(".ae-scroll:not([tabindex])")) {
      box.setAttribute("tabindex", "0");
    }
  }

  function nameIn(root) { // one root's own controls, not the shadow roots below it
    adoptFocusRing(root);
    focusableScrollers(root);
    nameSliders(root);
    nameSpinButtons(root);
    quietFigures(root);
  }

  function fixShadowsIn(node) { // every shadow root in a subtree, with the ones below it
    if (node.shadowRoot) { fix(node.shadowRoot); }
    for (const el of node.querySelectorAll("*")) {
      if (el.shadowRoot) { fix(el.shadowRoot); }
    }
  }

  function fix(root) { // a root and every shadow root below it (the page at start: 1-3 ms)
    watch(root);
    nameIn(root);
    fixShadowsIn(root);
  }

  const stats = {pageWalks: 0, rootWalks: 0}; // fixes of the whole page, of one root (tests)

  // The observer's callback, a microtask after the nodes changed: name the controls of each
  // root whose nodes changed, and fix the shadow roots the added nodes bring (a panel that
  // arrives, a widget Bokeh draws again). A slider's step touches one small root.
  function onChange(records) {
    const roots = new Set();
    for (const record of records) {
      const root = record.target.getRootNode();
      if (!root.isConnected) { continue; } // a root Bokeh has since replaced: no one sees it
      roots.add(root);
      for (const node of record.addedNodes) {
        if (node.nodeType === Node.ELEMENT_NODE && node.isConnected) { fixShadowsIn(node); }
      }
    }
    for (const root of roots) {
      if (root === document) { markMain(); }
      stats.rootWalks += 1;
      nameIn(root);
    }
  }

  // Nodes added or removed, not text changed: Bokeh draws a widget again by replacing its
  // nodes (a slider's title too), and a readout only changes the text of its holes' text
  // nodes, which asks for no new name.
  function watch(root) {
    if (watched.has(root)) { return; }
    watched.add(root);
    new MutationObserver(onChange).observe(root, {subtree: true, childList: true});
  }

  // -> every shown control without an accessible name, through shadow roots: [what]. The
  // names this script gives and the ones Bokeh's own markup carries (text, <label>, title).
  function unnamed() {
    const out = [], roots = [document];
    const named = (el) => Boolean((el.getAttribute("aria-label") || "").trim()
      || el.getAttribute("aria-labelledby") || (el.getAttribute("title") || "").trim()
      || el.closest("label")
      || (el.id && el.getRootNode().querySelector(`label[for="${CSS.escape(el.id)}"]`)));
    while (roots.length > 0) {
      const root = roots.pop();
      for (const el of root.querySelectorAll("*")) {
        if (el.shadowRoot) { roots.push(el.shadowRoot); }
        if (el.getClientRects().length === 0 || el.closest("[aria-hidden=true]")) { continue; }
        const role = el.getAttribute("role"), tag = el.localName;
        let bad = false;
        if (role === "slider" || role === "spinbutton") { bad = !named(el); }
        else if (tag === "button" || role === "button") {
          bad = !named(el) && !el.textContent.trim();
        } else if ((tag === "input" && !["hidden", "button", "submit"].includes(el.type))
                   || tag === "select" || tag === "textarea") { bad = !named(el); }
        else if (el.classList.contains("ae-scroll")) { bad = el.tabIndex < 0; }
        if (bad) { out.push(`${tag}.${[...el.classList].join(".")}`); }
      }
    }
    return out;
  }

  function loading() { // a live page's panel still to come, or a document not yet drawn
    if (!documentsIdle()) { return true; }
    const roots = [document];
    while (roots.length > 0) {
      const root = roots.pop();
      if (root.querySelector(`.${dom.loading}`)) { return true; }
      for (const el of root.querySelectorAll("*")) {
        if (el.shadowRoot) { roots.push(el.shadowRoot); }
      }
    }
    return false;
  }

  function liveRegions(root, out) {
    for (const el of root.querySelectorAll("[aria-live]")) { out.push(el); }
    for (const el of root.querySelectorAll("*")) {
      if (el.shadowRoot) { liveRegions(el.shadowRoot, out); }
    }
    return out;
  }

  function setBusy(busy) {
    for (const region of liveRegions(document, [])) {
      if (busy) { region.setAttribute("aria-busy", "true"); }
      else { region.removeAttribute("aria-busy"); }
    }
  }

  let dragging = false;
  document.addEventListener("pointerdown", (event) => {
    const onSlider = event.composedPath().some((el) => el.classList
      && (el.classList.contains(dom.handle) || el.classList.contains(dom.sliderBase)));
    if (onSlider) { dragging = true; setBusy(true); }
  }, true);
  for (const type of ["pointerup", "pointercancel"]) {
    document.addEventListener(type, () => {
      if (dragging) { dragging = false; setBusy(false); }
    }, true);
  }

  // idle: no walk waiting (there is none since names are given in the observer's callback;
  // kept for callers). ready: rendered, no panel to come, every control named.
  AE.a11y = {fix, stats, unnamed, idle: () => true,
             ready: () => !loading() && unnamed().length === 0};
  markMain();
  stats.pageWalks += 1;
  fix(document);
})();
