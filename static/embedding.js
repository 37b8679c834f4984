// A page of ours inside a course page's frame, and the "Embed" dialog that writes that frame.
// - Framed (window.parent !== window): the page posts its content's height to its parent,
//   {type: "ae:height", height} and Canvas's {subject: "lti.frameResize", height}, whenever
//   it changes (a ResizeObserver), so static/embed.js, a course page's few lines, or Canvas
//   size the frame to it.
// - ?report=parent: each answer to a question (static/questions.js's "ae:answer" event) is
//   posted to the parent once, {type: "ae:answer", question, choice | value, correct, time}.
//   Without it nothing leaves the frame.
// - ?embed=1 drops the page's chrome (the head's inline script sets the class early).
// - The "Embed" link (the build's embed page, without scripts) opens a dialog with the iframe
//   code and the embed.js snippet for the page as its address bar stands when opened.
// Plain ES2017; loaded on static pages (bundled with questions.js) and on live ones.
(function () {
  "use strict";
  const AE = window.AE = window.AE || {};
  const params = new URLSearchParams(window.location.search);
  const framed = window.parent !== window;
  const embedded = params.get("embed") === "1";
  if (embedded) { document.documentElement.classList.add("ae-embedded"); }

  function post(message) { // the parent may be any course site: nothing secret is sent
    try { window.parent.postMessage(message, "*"); } catch (error) { /* a parent gone */ }
  }

  // A live Panel page sizes html and body to the viewport and renders into Bokeh's roots,
  // <div style="display: contents"> children of the body: there the body is the frame, not
  // its content, so the content is the lowest box among the roots' elements.
  function rooted() {
    return [...document.body.children].some((e) => window.getComputedStyle(e).display
      === "contents");
  }

  function lowest(parent) { // the lowest margin-box bottom among parent's rendered children
    let bottom = 0;
    for (const e of parent.children) {
      const style = window.getComputedStyle(e);
      if (style.display === "none" || style.position === "fixed") { continue; }
      if (style.display === "contents") { bottom = Math.max(bottom, lowest(e)); continue; }
      bottom = Math.max(bottom, e.getBoundingClientRect().bottom
                                + (parseFloat(style.marginBottom) || 0));
    }
    return bottom;
  }

  function contentHeight() { // the body's margin box: not the frame's own height
    const body = document.body;
    if (!body) { return 0; }
    const style = window.getComputedStyle(body);
    const margin = parseFloat(style.marginBottom) || 0;
    if (rooted()) {
      const pad = (parseFloat(style.paddingBottom) || 0) + (parseFloat(style.borderBottomWidth) || 0);
      return Math.ceil(lowest(body) + pad + window.scrollY + margin);
    }
    return Math.ceil(body.getBoundingClientRect().bottom + window.scrollY + margin);
  }

  // the elements whose size is the content's: the body, or on a rooted page each rendered
  // element of the roots (Bokeh adds them after the page loads: watched, and observed as
  // they come)
  function observeContent(observer) {
    const seen = new WeakSet();
    const scan = () => {
      const visit = (parent) => {
        for (const e of parent.children) {
          if (window.getComputedStyle(e).display === "contents") { visit(e); continue; }
          if (!seen.has(e)) { seen.add(e); observer.observe(e); }
        }
      };
      visit(document.body);
      sendHeight();
    };
    AE.embedding.roots = new MutationObserver(scan);
    AE.embedding.roots.observe(document.body, {childList: true, subtree: true});
    scan();
  }

  let sent = -1;
  function sendHeight() {
    const height = contentHeight();
    if (height <= 0 || height === sent) { return; }
    sent = height;
    AE.embedding.sent = height; // what the parent was told last
    post({type: "ae:height", height: height});
    post({subject: "lti.frameResize", height: height});
  }

  function watchHeight() {
    // the width must not depend on whether a scrollbar shows: else a frame just short of its
    // content gains a scrollbar, its text rewraps taller, the frame grows, the bar goes...
    document.documentElement.style.scrollbarGutter = "stable";
    // the body holds its children's margins (a block formatting context): a first child's
    // top margin, collapsed through it, would move the body without resizing it, unseen
    document.body.style.display = "flow-root";
    window.addEventListener("resize", sendHeight);
    if (typeof ResizeObserver === "function") {
      // held by the page: an observer only its targets refer to may be garbage collected
      AE.embedding.observer = new ResizeObserver(sendHeight);
      AE.embedding.observer.observe(document.body);
      AE.embedding.observer.observe(document.documentElement);
      if (rooted()) { observeContent(AE.embedding.observer); }
    }
    window.addEventListener("load", sendHeight);
    sendHeight();
  }

  function reportAnswers() { // one message per answer: questions.js fires one event per check
    document.addEventListener("ae:answer", function (event) {
      const d = event.detail || {};
      const message = {type: "ae:answer", question: d.question, correct: d.correct,
                       time: d.time};
      if (d.choice !== undefined) { message.choice = d.choice; } else { message.value = d.value; }
      post(message);
    });
  }

  // --- the Embed dialog ---------------------------------------------------------------------

  function siteRoot(link) { // the build's root (static: the link says), or the server's
    return new URL(link && link.dataset.root !== undefined ? link.dataset.root : "/",
                   window.location.href);
  }

  function currentState(root) { // -> {page, query, href}: this page as the address bar has it
    if (AE.url && typeof AE.url.flush === "function") { AE.url.flush(); }
    const here = new URL(window.location.href);
    let page = here.pathname.startsWith(root.pathname)
      ? here.pathname.slice(root.pathname.length) : here.pathname.replace(/^\//, "");
    const query = new URLSearchParams(here.search);
    if (/index-dark\.html$/.test(page)) { query.set("theme", "dark"); }
    page = page.replace(/index(-dark)?\.html$/, "").replace(/\/$/, "");
    for (const key of ["embed", "report"]) { query.delete(key); }
    const framedQuery = new URLSearchParams(query);
    framedQuery.set("embed", "1");
    const folder = root.protocol === "file:" ? "index.html" : ""; // from disk, name the file
    const src = new URL(page ? page + "/" + folder : "./" + folder, root);
    if (/^live(\/|$)/.test(page)) { src.pathname = src.pathname.replace(/\/$/, ""); }
    src.search = framedQuery.toString();
    return {page: page, query: query.toString(), src: src.href};
  }

  function escapeAttr(text) {
    return String(text).replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
  }

  function codes(link) { // -> {iframe, script}: what a course page pastes
    const root = siteRoot(link);
    const state = currentState(root);
    const title = document.title.split(" · ")[0];
    const iframe = '<iframe src="' + escapeAttr(state.src) + '" title="' + escapeAttr(title) +
      '" width="100%" height="900" style="border:0" loading="lazy"></iframe>';
    const embedQuery = new URLSearchParams(state.query);
    embedQuery.set("embed", "1");
    const script = '<script src="' + escapeAttr(new URL("embed.js", root).href) +
      '" data-page="' + escapeAttr(state.page) + '" data-query="' +
      escapeAttr(embedQuery.toString()) + '" data-title="' + escapeAttr(title) +
      '"></' + "script>";
    return {iframe: iframe, script: script};
  }

  // -> a new <tag> with these properties (className, textContent, ...) and attributes (aria-*)
  function element(tag, props, attrs) {
    const made = Object.assign(document.createElement(tag), props);
    Object.entries(attrs || {}).forEach(([name, value]) => made.setAttribute(name, value));
    return made;
  }

  function field(dialog, id, label, hint) {
    const name = element("label", {htmlFor: id, textContent: label});
    const box = element("textarea", {id: id, readOnly: true, rows: 4, spellcheck: false},
      {"aria-describedby": id + "-hint"});
    const note = element("p", {className: "ae-embed-hint", id: id + "-hint", textContent: hint});
    const copy = element("button", {type: "button", className: "ae-embed-copy",
      textContent: "Copy"}, {"aria-label": "Copy: " + label});
    copy.addEventListener("click", function () { copyText(dialog, box); });
    const wrap = element("div", {className: "ae-embed-field"});
    wrap.append(name, box, note, copy);
    return wrap;
  }

  function copyText(dialog, box) {
    const status = dialog.querySelector(".ae-embed-status");
    const done = function () { status.textContent = "Copied."; };
    const fallback = function () { // older browsers, or a clipboard the page may not use
      box.focus();
      box.select();
      try {
        status.textContent = document.execCommand("copy") ? "Copied." : "Press Ctrl+C to copy.";
      } catch (error) { status.textContent = "Press Ctrl+C to copy."; }
    };
    status.textContent = "";
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(box.value).then(done, fallback);
    } else { fallback(); }
  }

  // the dialog's and the button's look, here so live pages (without chapter.css) share it
  const CSS = ".ae-embed-button{font:inherit;font-size:0.95em;min-height:28px;" +
    "padding:0.15rem 0.7rem;border:1px solid var(--ae-border,#d0d4da);border-radius:6px;" +
    "background:var(--ae-bg,#fff);color:var(--ae-ink,#1f2328);cursor:pointer}" +
    ".ae-embed-dialog{max-width:min(42rem,calc(100vw - 2rem));box-sizing:border-box;" +
    "border:1px solid var(--ae-border,#d0d4da);border-radius:10px;padding:1rem 1.25rem;" +
    "background:var(--ae-bg,#fff);color:var(--ae-ink,#1f2328);font-family:system-ui,sans-serif;" +
    "line-height:1.5}" +
    ".ae-embed-dialog::backdrop{background:rgba(0,0,0,0.45)}" +
    ".ae-embed-dialog h2{margin:0 0 0.4rem;font-size:1.25rem}" +
    ".ae-embed-dialog label{display:block;font-weight:600;margin-top:0.8rem}" +
    ".ae-embed-dialog textarea{display:block;width:100%;box-sizing:border-box;" +
    "font:0.85rem ui-monospace,Menlo,Consolas,monospace;color:inherit;" +
    "background:var(--ae-surface,#f3f4f6);border:1px solid var(--ae-border,#d0d4da);" +
    "border-radius:6px;padding:0.4rem}" +
    ".ae-embed-hint{margin:0.2rem 0;font-size:0.9rem}" +
    ".ae-embed-dialog button{font:inherit;min-height:28px;padding:0.15rem 0.8rem;" +
    "border:1px solid var(--ae-border,#d0d4da);border-radius:6px;cursor:pointer;" +
    "background:var(--ae-bg,#fff);color:var(--ae-ink,#1f2328)}" +
    ".ae-embed-close{margin-top:0.6rem}" +
    ".ae-foot{max-width:60rem;margin:0 auto;padding:0.5rem 1rem;text-align:right}";

  function addStyle() {
    if (document.getElementById("ae-embed-style")) { return; }
    document.head.appendChild(element("style", {id: "ae-embed-style", textContent: CSS}));
  }

  function makeDialog() {
    const dialog = element("dialog", {className: "ae-embed-dialog"},
      {"aria-labelledby": "ae-embed-title"});
    const title = element("h2", {id: "ae-embed-title", textContent: "Embed this page"});
    const intro = element("p", {textContent: "Paste one of these into a course page. It " +
      "opens where this page is now, its settings included, without the page's header."});
    const status = element("p", {className: "ae-embed-status"}, {role: "status"});
    const close = element("button", {type: "button", className: "ae-embed-close",
      textContent: "Close"});
    close.addEventListener("click", function () { dialog.close(); });
    dialog.append(title, intro,
      field(dialog, "ae-embed-iframe", "iframe",
            "A frame of fixed height; the page posts its height for the course page to use."),
      field(dialog, "ae-embed-script", "embed.js",
            "A frame that takes its content's height by itself."),
      status, close);
    document.body.appendChild(dialog);
    return dialog;
  }

  function open(link, opener) {
    const dialog = document.querySelector("dialog.ae-embed-dialog") || makeDialog();
    const made = codes(link);
    dialog.querySelector("#ae-embed-iframe").value = made.iframe;
    dialog.querySelector("#ae-embed-script").value = made.script;
    dialog.querySelector(".ae-embed-status").textContent = "";
    dialog.addEventListener("close", function () { opener.focus(); }, {once: true});
    dialog.showModal(); // modal: the page behind is inert, Escape closes it
    dialog.querySelector("#ae-embed-iframe").focus();
  }

  function embedControl() { // the static page's link becomes a button; a live page gets one
    let link = document.querySelector("a.ae-embed-link");
    if (!link) {
      if (!window.HTMLDialogElement) { return; }
      const top = document.querySelector("header.ae-top");
      const holder = top || document.createElement("footer");
      if (!top) {
        holder.className = "ae-foot";
        document.body.appendChild(holder);
      }
      link = element("a", {className: "ae-embed-link"});
      holder.appendChild(link);
    }
    if (!window.HTMLDialogElement) { return; } // the link to the embed page stays
    addStyle();
    const button = element("button", {type: "button", className: "ae-embed-button",
      textContent: "Embed"}, {"aria-haspopup": "dialog"});
    button.addEventListener("click", function () { open(link, button); });
    if (link.dataset.root !== undefined) { button.dataset.root = link.dataset.root; }
    link.replaceWith(button);
    link = button;
  }

  function start() {
    if (framed) { watchHeight(); }
    if (framed && params.get("report") === "parent") { reportAnswers(); }
    if (!embedded) { embedControl(); }
  }

  AE.embedding = {contentHeight: contentHeight};
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start, {once: true});
  } else {
    start();
  }
})();
