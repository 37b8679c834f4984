// A course page's script embed of one page of the explorable: put
//   <script src="SITE/embed.js" data-panel="heatmap" data-query="mask=off"></script>
// where the panel should stand; this script puts a titled iframe of SITE/heatmap/ there
// (the panel's own page, deep link included). data-page names any page instead, relative to
// SITE ("math", "" for the first chapter, "live/heatmap"). data-height sets the frame's height
// until its page says its own (default 900), data-title its accessible name.
// The framed page posts {type: "ae:height", height} as its content grows or shrinks, and the
// frame follows; with report=parent in data-query it posts {type: "ae:answer", ...} for each
// answer, re-emitted here as an "ae:answer" CustomEvent on this script element. Messages from
// any other window or origin are ignored. Nothing else runs on the course page.
(function () {
  "use strict";
  const script = document.currentScript;
  if (!script) { return; }
  const MAX_HEIGHT = 100000; // px: a bound on what a frame may ask for
  const data = script.dataset;
  const panel = (data.panel || "").replace(/[^A-Za-z0-9_-]/g, "");
  const named = data.page !== undefined
    ? data.page.split("/").filter((p) => /^[A-Za-z0-9_-]+$/.test(p)).join("/") : null;
  if (!panel && named === null) {
    console.error("embed.js: data-panel names no panel");
    return;
  }
  const site = new URL(".", script.src);
  const path = panel || named;
  // a live page's route has no trailing slash; a static page is its folder
  const src = new URL(path ? path + (/^live(\/|$)/.test(path) ? "" : "/") : "./", site);
  src.search = (data.query || "").replace(/^\?/, "");
  const frame = document.createElement("iframe");
  frame.src = src.href;
  frame.title = data.title || `Attention explorable: ${path || "attention"}`;
  frame.loading = "lazy";
  frame.style.width = "100%";
  frame.style.border = "0";
  frame.height = String(parseInt(data.height || "900", 10) || 900);
  script.after(frame);

  window.addEventListener("message", function (event) {
    // only the frame made above, and only while it shows our site
    if (event.source !== frame.contentWindow || event.origin !== src.origin) { return; }
    const message = event.data;
    if (!message || typeof message !== "object") { return; }
    if (message.type === "ae:height") {
      const height = Number(message.height);
      if (Number.isFinite(height) && height > 0 && height <= MAX_HEIGHT) {
        frame.style.height = Math.ceil(height) + "px";
      }
    } else if (message.type === "ae:answer") {
      script.dispatchEvent(new CustomEvent("ae:answer", {detail: message}));
    }
  });
})();
