// The page that shows how to embed one page of the site (OUT/embed/<name>.html, written by
// app/hosting/build.py embed_page), inline in it: served over http(s), its two snippets name
// the site's own address instead of "[this site]". The script element's data attributes say
// what is embedded: data-page (its address, relative to this page), data-name (the frame's
// title), data-height, and data-attr and data-target (the script embed's attribute and value).
(function () {
  "use strict";
  const data = document.currentScript.dataset;
  if (window.location.protocol !== "http:" && window.location.protocol !== "https:") { return; }
  const page = new URL(data.page, window.location.href);
  document.getElementById("snippet").textContent =
    '<iframe src="' + page.href + '?embed=1" title="' + data.name + '" width="100%" height="'
    + data.height + '" loading="lazy"></iframe>';
  document.getElementById("script").textContent =
    '<script src="' + new URL("../embed.js", window.location.href).href + '" ' + data.attr
    + '="' + data.target + '" data-query="embed=1"></' + 'script>';
})();
