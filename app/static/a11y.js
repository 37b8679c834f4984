// Names for the controls Bokeh draws without one, in one place for every page, live or
// static (app/chrome.py runs this from the page's first component).
//
// - A slider's handle (noUiSlider, role=slider) gets aria-label = the slider's visible
//   title without its value ("sequence length"), and aria-valuetext = the value as the
//   page shows it ("4,096" where the slider shows the power, not the exponent).
// - A number box's spin buttons get "increase <label>" / "decrease <label>".
// - The page's root gets role=main, so all its content sits in a landmark.
// - Every shadow root adopts one stylesheet: a focus ring that shows in both themes
//   (Okabe-Ito vermillion, over 3:1 against the light and the dark background).
// - A box that scrolls sideways (.ae-scroll, a wide table on a phone) joins the Tab order,
//   so a keyboard can scroll it.
// - While a slider's handle is dragged, every live region is aria-busy: a screen reader
//   announces the value the handle lands on, not every step it passes.
// - A figure's event layer (focusable in Bokeh, though our figures take no keys) leaves the
//   Tab order: each figure's numbers are in its caption or table.
// Bokeh re-renders widgets (a new shadow root, a new handle), so every shadow root is
// watched and the fix is applied again to the roots whose nodes changed, after the page has
// painted (a short timer, never inside the frame that shows a change).
(function () {
  "use strict";
  if (window.AEA11y) { return; }

  const watched = new WeakSet();
  let pending = false;

  function titleOf(root) { // the widget's visible label, without ": value"
    const title = root.querySelector(".bk-slider-title, .bk-input-group > label, label");
    if (!title) { return ""; }
    return title.textContent.replace(/\s*:\s*[^:]*$/, "").trim() || title.textContent.trim();
  }

  function nameSliders(root) {
    for (const handle of root.querySelectorAll(".noUi-handle[role=slider]")) {
      const label = titleOf(root);
      if (label && handle.getAttribute("aria-label") !== label) {
        handle.setAttribute("aria-label", label);
      }
      const value = root.querySelector(".bk-slider-value");
      const shown = value ? value.textContent.trim() : "";
      if (shown && handle.getAttribute("aria-valuetext") !== shown) {
        handle.setAttribute("aria-valuetext", shown); // the value as the page shows it
      }
    }
  }

  function nameSpinButtons(root) {
    const label = titleOf(root) || "value";
    for (const button of root.querySelectorAll(".bk-spin-btn-up, .bk-spin-btn-down")) {
      const verb = button.classList.contains("bk-spin-btn-up") ? "increase" : "decrease";
      const name = `${verb} ${label}`;
      if (button.getAttribute("aria-label") !== name) { button.setAttribute("aria-label", name); }
      if (!button.hasAttribute("tabindex")) { button.setAttribute("tabindex", "-1"); }
    }
  }

  function markMain() { // the page's Bokeh root: the one main landmark
    if (document.querySelector("main, [role=main]")) { return; }
    const root = document.querySelector("body > [data-root-id], body > div > [data-root-id]")
      || document.querySelector("[data-root-id]");
    if (root) { root.setAttribute("role", "main"); }
  }

  const FOCUS_CSS = `
    :focus-visible, .noUi-handle:focus-visible, .bk-btn:focus-visible, input:focus-visible,
    select:focus-visible, textarea:focus-visible {
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
    for (const layer of root.querySelectorAll(".bk-events[tabindex]")) {
      if (layer.getAttribute("tabindex") !== "-1") { layer.setAttribute("tabindex", "-1"); }
    }
  }

  function focusableScrollers(root) { // a box that scrolls sideways: reachable by keyboard
    for (const box of root.querySelectorAll(".ae-scroll:not([tabindex])")) {
      box.setAttribute("tabindex", "0");
    }
  }

  function fix(root) {
    adoptFocusRing(root);
    focusableScrollers(root);
    nameSliders(root);
    nameSpinButtons(root);
    quietFigures(root);
    for (const el of root.querySelectorAll("*")) {
      if (el.shadowRoot) {
        watch(el.shadowRoot);
        fix(el.shadowRoot);
      }
    }
  }

  // The roots whose nodes changed since the last fix: only those are walked again (each
  // with the shadow roots below it). A walk of the whole page costs 1-3 ms on a slow
  // machine; run 120 ms after every slider step, it landed inside the next step's frame.
  const dirty = new Set();
  const stats = {pageWalks: 0, rootWalks: 0}; // fixes of the whole page, of one root (tests)

  function schedule(records) {
    if (records === undefined) { dirty.add(document); }
    else { for (const record of records) { dirty.add(record.target.getRootNode()); } }
    if (pending) { return; }
    pending = true;
    setTimeout(() => {
      pending = false;
      markMain();
      const roots = dirty.has(document) ? [document] : [...dirty];
      dirty.clear();
      for (const root of roots) {
        if (!root.isConnected) { continue; } // a root Bokeh has since replaced needs nothing
        stats[root === document ? "pageWalks" : "rootWalks"] += 1;
        fix(root);
      }
    }, 120);
  }

  // Nodes added or removed, not text changed: Bokeh draws a widget again by replacing its
  // nodes (a slider's value too), and a readout only changes the text of its slots, which
  // asks for no new name.
  function watch(root) {
    if (watched.has(root)) { return; }
    watched.add(root);
    new MutationObserver(schedule).observe(root, {subtree: true, childList: true});
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
      && (el.classList.contains("noUi-handle") || el.classList.contains("noUi-base")));
    if (onSlider) { dragging = true; setBusy(true); }
  }, true);
  for (const type of ["pointerup", "pointercancel"]) {
    document.addEventListener(type, () => {
      if (dragging) { dragging = false; setBusy(false); }
    }, true);
  }

  // idle: no walk waiting (tests wait for it instead of guessing how long a walk takes)
  window.AEA11y = {fix, schedule, stats, idle: () => !pending && dirty.size === 0};
  watch(document);
  schedule(undefined);
})();
