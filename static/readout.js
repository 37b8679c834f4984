// A Readout's browser half (app/kit/readout.py): text drawn once from its template, then only
// its holes' text. Panel runs this file at the start of every Readout's render script (a
// ReactiveHTML's scripts are all it carries into a page, live or static); it defines
// AE.readout once, and the scripts call it: render(box, state, data, template), patch(state,
// data). `data.base` holds each hole's first text, `data.patch` the holes that differ from it.
(function () {
  "use strict";
  const AE = window.AE = window.AE || {};
  if (AE.readout) { return; }
  const get = (o, k) => (o instanceof Map ? o.get(k) : o[k]);

  function render(box, state, data, template) {
    box.innerHTML = template;
    state.holes = [...box.querySelectorAll("[data-s]")].map((e) => [e.dataset.s, e]);
    patch(state, data);
  }

  function patch(state, data) {
    for (const [name, e] of state.holes) {
      const text = get(data.patch, name) ?? get(data.base, name) ?? "";
      // a hole's one text node keeps its place (only its data changes): a new node would be
      // styled and laid out afresh, and :empty rules checked again
      const node = e.firstChild;
      if (node !== null && node.nodeType === 3 && node.nextSibling === null) {
        if (node.data !== text) { node.data = text; }
      } else {
        e.replaceChildren(document.createTextNode(text));
      }
    }
  }

  AE.readout = {render, patch};
})();
