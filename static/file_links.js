// On file:// a link to a folder opens a listing, not its index.html: a click on one goes to
// the folder's index.html instead. Inline in every page the static build writes
// (app/hosting/build.py finish_page); it defines nothing.
(function () {
  "use strict";
  if (window.location.protocol !== "file:") { return; }
  addEventListener("click", function (event) {
    const a = event.composedPath().find((n) => n.tagName === "A" && n.href);
    if (!a || a.target || !a.href.startsWith("file:")) { return; }
    const url = new URL(a.href);
    if (url.pathname.endsWith("/")) {
      event.preventDefault();
      url.pathname += "index.html";
      window.location.assign(url.href);
    }
  }, true);
})();
