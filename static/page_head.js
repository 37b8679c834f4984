// A page's first script, inline in its <head> so that it runs before the first paint (static
// pages: app/chapters/templates/chapter.html; live pages: app/kit/embedding.py live_head).
// It sets the classes the stylesheets read (scripts run: ae-js; in a course page's frame:
// ae-embedded) and AE.page: what the <html> element's data attributes say (the theme this
// file was built in, the live server's address), and the actions every page has, live or
// static: switching the theme (a live chapter's theme link, static/live_page.js) and opening
// the live page (app/kit/chrome.py's button calls it from its CustomJS).
(function () {
  "use strict";
  const AE = window.AE = window.AE || {};
  if (AE.page) { return; }
  const root = document.documentElement;
  root.classList.add("ae-js");
  if (/[?&]embed=1(&|$)/.test(window.location.search)) { root.classList.add("ae-embedded"); }

  // the theme is a query parameter, so switching reloads the page at the same deep link
  function switchTheme(target) {
    if (AE.url) { AE.url.flush(); } // a static page writes the address once idle after a change
    const url = new URL(window.location.href);
    url.searchParams.set("theme", target);
    window.location.assign(url.toString());
  }

  // the live explorable's twin of this page, in its state (page_url.js knows it on a static
  // page; elsewhere the route beside this page's)
  function openLive(route) {
    window.location.assign(AE.url ? AE.url.liveUrl() : "live" + route + window.location.search);
  }

  // theme: "default" | "dark" on a static page, undefined on a live one (Panel's ?theme=);
  // liveUrl: where "open live" leads, when the build was given one (build --live-url)
  AE.page = {theme: root.dataset.aeTheme, liveUrl: root.dataset.aeLiveUrl, switchTheme,
             openLive};

  // A still's native controls are in the page as built, so a reader can tap one before
  // still_controls.js has wired it (on a slowed phone its deferred script runs 100-300 ms
  // after the first paint). Such an input is kept here, with the value it left, and
  // still_controls.js plays it once it has wired that control: nothing the reader did is
  // lost, and the control answers from the first paint. A wired box is marked `aeWired`.
  const early = AE.earlyInput = [];
  function keep(event) {
    const target = event.target;
    const box = target instanceof Element ? target.closest(".ae-still-controls") : null;
    if (box === null || box.aeWired) { return; }
    early.push({target, type: event.type, value: target.value});
  }
  for (const type of ["click", "input", "change"]) {
    document.addEventListener(type, keep, true);
  }
})();
