// A course page's script embed of one panel of a static build: put
//   <script src="SITE/embed.js" data-panel="heatmap" data-query="mask=off"></script>
// where the panel should stand; this script puts a titled iframe of SITE/heatmap/ there
// (the panel's own page, deep link included). data-height sets its height (default 900),
// data-title its accessible name. Nothing else runs on the course page.
(function () {
  "use strict";
  const script = document.currentScript;
  if (!script) { return; }
  const panel = (script.dataset.panel || "").replace(/[^A-Za-z0-9_-]/g, "");
  if (!panel) { console.error("embed.js: data-panel names no panel"); return; }
  const site = new URL(".", script.src);
  const src = new URL(panel + "/", site);
  src.search = (script.dataset.query || "").replace(/^\?/, "");
  const frame = document.createElement("iframe");
  frame.src = src.href;
  frame.title = script.dataset.title || `Attention explorable: ${panel}`;
  frame.loading = "lazy";
  frame.style.width = "100%";
  frame.style.border = "0";
  frame.height = String(parseInt(script.dataset.height || "900", 10) || 900);
  script.after(frame);
})();
