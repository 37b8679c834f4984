// A defined term's later use, and a citation, show what they point at in a popover: the
// term's definition from the chapter's glossary, the reference from its list. The page ships
// each as a plain link to that entry, described by it (aria-describedby), so without this
// script, and in print, it is an ordinary link. Here the link opens one shared popover (the
// HTML popover attribute: the top layer, so nothing below moves) on hover, on keyboard focus
// and on a tap or click; Escape, a tap elsewhere, leaving it or blurring it closes it.
// Plain ES2017, no libraries.
(function () {
  "use strict";
  const AE = window.AE = window.AE || {};
  let tip = null; // the one popover of the page
  let owner = null; // the link it shows now
  let hideTimer = 0;

  function popover() {
    if (tip) { return tip; }
    tip = document.createElement("div");
    tip.id = "ae-term-tip";
    tip.className = "ae-term-tip";
    tip.setAttribute("popover", "auto");
    tip.setAttribute("role", "note");
    tip.addEventListener("toggle", function (event) {
      if (event.newState === "closed") { owner = null; }
    });
    tip.addEventListener("pointerenter", function () { clearTimeout(hideTimer); });
    tip.addEventListener("pointerleave", function () { hideSoon(); });
    document.body.appendChild(tip);
    return tip;
  }

  function entry(link) { // -> the element the link is described by: a definition, a reference
    const id = link.getAttribute("aria-describedby");
    return id ? document.getElementById(id) : null;
  }

  function place(link) { // under the link, inside the viewport (above it if there is no room)
    const r = link.getBoundingClientRect();
    const width = Math.min(352, window.innerWidth - 16);
    tip.style.width = width + "px";
    tip.style.left = Math.max(8, Math.min(r.left, window.innerWidth - width - 8)) + "px";
    const below = r.bottom + 6;
    const height = tip.offsetHeight;
    tip.style.top = (below + height > window.innerHeight - 8 && r.top - 6 - height > 8
      ? r.top - 6 - height : below) + "px";
  }

  function show(link) {
    const source = entry(link);
    if (!source || typeof HTMLElement.prototype.showPopover !== "function") { return false; }
    clearTimeout(hideTimer);
    const box = popover();
    if (owner !== link) {
      const copy = source.cloneNode(true); // its words and links, without its ids
      copy.removeAttribute("id");
      for (const el of copy.querySelectorAll("[id]")) { el.removeAttribute("id"); }
      box.replaceChildren(...copy.childNodes);
      const more = document.createElement("a");
      more.href = link.getAttribute("href");
      more.className = "ae-term-more";
      more.textContent = link.classList.contains("ae-cite") ? "In the references" : "In the glossary";
      box.append(" ", more);
      owner = link;
    }
    if (!box.matches(":popover-open")) { box.showPopover(); }
    place(link);
    return true;
  }

  function hide() {
    if (tip && tip.matches(":popover-open")) { tip.hidePopover(); }
    owner = null;
  }

  function hideSoon() { // time to move the pointer from the link onto the popover
    clearTimeout(hideTimer);
    hideTimer = setTimeout(hide, 250);
  }

  function start() {
    const links = document.querySelectorAll("a.ae-term, a.ae-cite");
    for (const link of links) {
      let openAtPress = false;
      link.addEventListener("pointerdown", function () {
        openAtPress = owner === link && tip.matches(":popover-open");
      });
      link.addEventListener("click", function (event) { // a tap or a click: toggle
        if (event.metaKey || event.ctrlKey || event.shiftKey) { return; } // a new tab: let it
        event.preventDefault();
        if (openAtPress) { openAtPress = false; hide(); return; }
        show(link);
      });
      link.addEventListener("pointerenter", function (event) {
        if (event.pointerType === "mouse") { show(link); }
      });
      link.addEventListener("pointerleave", function (event) {
        if (event.pointerType === "mouse") { hideSoon(); }
      });
      link.addEventListener("focus", function () {
        if (link.matches(":focus-visible")) { show(link); } // the keyboard, not a tap
      });
      link.addEventListener("blur", function () { hideSoon(); });
      link.addEventListener("keydown", function (event) {
        if (event.key === "Escape" && owner === link) { hide(); }
      });
    }
    window.addEventListener("scroll", function () { if (owner) { place(owner); } }, {passive: true});
    window.addEventListener("resize", function () { if (owner) { place(owner); } });
  }

  AE.terms = {show: show, hide: hide};
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start, {once: true});
  } else {
    start();
  }
})();
