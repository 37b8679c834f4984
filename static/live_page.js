// A live chapter before its session (app/chapters/live_chapter.py). The page arrives as text;
// Bokeh's and Panel's scripts and the session's plot script wait in <template id=ae-session>
// and run when a part that needs the session (a panel, a question, the review) comes within a
// screen of view, at the reader's first scroll or key press (a head start: the first panel is
// some screens down; a page whose panels stand as stills waits for the reader to pause), when
// the address names a part, or when asked (AE.livePage.attach). So a
// phone paints the prose without parsing some 2 MB of script first, as a static chapter's
// islands wait to be neared. The header's controls are native: the theme link keeps the
// page's address, and "Hide questions" hides every question and the review with a class on
// <html>, kept in this browser.
(function () {
  "use strict";
  const AE = window.AE = window.AE || {};
  if (AE.livePage) { return; }
  const PARTS = ".ae-live-panel, .ae-live-question, .ae-live-review";
  const HIDDEN_KEY = "ae-questions:" + window.location.pathname + ":hidden";
  let attached = null; // the promise of the scripts' run, once started

  function load(src) { // -> a promise settled once the script has run; scripts asked for
    // together download in parallel and run in the order asked (async = false), as
    // islands.js's load does on a static page
    return new Promise(function (resolve) {
      const script = document.createElement("script");
      script.src = src;
      script.async = false;
      script.addEventListener("load", resolve, {once: true});
      script.addEventListener("error", resolve, {once: true}); // the next still runs, as a
      document.body.appendChild(script); // page's own failed <script> would let it
    });
  }

  async function run(template) { // the held scripts, in their order; data blocks as they are
    const nodes = [...template.content.childNodes];
    template.remove();
    let loading = []; // the bundles asked for since the last inline script
    for (const node of nodes) {
      const type = node.nodeName === "SCRIPT" ? (node.getAttribute("type") || "") : null;
      if (type === null || !["", "module", "text/javascript"].includes(type)) {
        document.body.appendChild(document.importNode(node, true)); // JSON, options, text
      } else if (node.hasAttribute("src")) {
        loading.push(load(node.getAttribute("src")));
      } else { // a classic script now, once the bundles before it have run
        await Promise.all(loading);
        loading = [];
        const script = document.createElement("script");
        script.textContent = node.textContent;
        document.body.appendChild(script);
      }
    }
    await Promise.all(loading);
  }

  function needed() { return document.querySelector(PARTS) !== null; }

  // A page whose panels stand as stills with native controls (live_stills.js) attaches on its
  // own once the reader has paused (and not in the page's first second): Bokeh's bundles and
  // the session's first render are long tasks that a tap on a still would wait behind (on a
  // slowed phone, taps made as the session attached had an INP p95 of 120-2160 ms;
  // benchmarks/first_touch.py).
  const QUIET_MS = 1000;
  let lastInput = performance.now();
  for (const type of ["pointerdown", "keydown", "input"]) {
    document.addEventListener(type, function () { lastInput = performance.now(); },
      {capture: true, passive: true});
  }
  function attachWhenQuiet() {
    if (document.querySelector(".ae-live-panel > .ae-island") === null) {
      attach();
      return;
    }
    (function wait() {
      const quiet = performance.now() - lastInput;
      if (quiet >= QUIET_MS) { attach(); } else { setTimeout(wait, QUIET_MS - quiet); }
    })();
  }

  // -> whether this page has a session to attach (the text alone has none); starts it once
  function attach() {
    const template = document.getElementById("ae-session");
    if (attached === null && template !== null && needed()) { attached = run(template); }
    return attached !== null;
  }

  function whenNear() { // the first part within a screen of view attaches the session
    if (!("IntersectionObserver" in window)) { attach(); return; }
    const seen = new IntersectionObserver(function (entries) {
      if (entries.some((entry) => entry.isIntersecting)) {
        seen.disconnect();
        attachWhenQuiet();
      }
    }, {rootMargin: "100% 0px"});
    for (const part of document.querySelectorAll(PARTS)) { seen.observe(part); }
  }

  function kept() {
    try { return JSON.parse(window.localStorage.getItem(HIDDEN_KEY)) === true; } catch (error) {
      return false; // storage can throw (private modes): nothing kept
    }
  }

  function setHidden(toggle, hidden) {
    document.documentElement.classList.toggle("ae-questions-hidden", hidden);
    toggle.setAttribute("aria-pressed", String(hidden));
  }

  function wireToggle() {
    const toggle = document.querySelector(".ae-live-page .ae-q-toggle");
    if (toggle === null) { return; }
    const asked = new URLSearchParams(window.location.search).get("questions");
    if (asked !== null && asked.trim().toLowerCase() === "off") { // the session shows none;
      toggle.remove(); // the page may be the plain address's, reused (--reuse-sessions)
      return;
    }
    setHidden(toggle, kept());
    toggle.addEventListener("click", function () {
      const hidden = toggle.getAttribute("aria-pressed") !== "true";
      setHidden(toggle, hidden);
      try { window.localStorage.setItem(HIDDEN_KEY, JSON.stringify(hidden)); } catch (error) {
        /* not kept */
      }
    });
  }

  function wireTheme() { // the link's own href is the plain address; the click keeps the state
    for (const link of document.querySelectorAll("a[data-ae-switch-theme]")) {
      link.addEventListener("click", function (event) {
        if (event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey
            || event.altKey) { return; } // a new tab or window: the link's own address
        event.preventDefault();
        AE.page.switchTheme(link.dataset.aeSwitchTheme);
      });
    }
  }

  function start() {
    wireToggle();
    wireTheme();
    if (window.location.hash.length > 1) { attach(); } // a link to a part: it needs the session
    document.addEventListener("keydown", attachWhenQuiet, {once: true});
    // a head start
    window.addEventListener("scroll", attachWhenQuiet, {once: true, passive: true});
    whenNear();
  }

  AE.livePage = {attach};
  start(); // the page inlines this file last in its body: the header and the parts are parsed
})();
