// The fence: the one file of static/ that touches BokehJS (3.9; Bokeh is pinned below 3.10)
// beyond its documented embedding API. Everything else in static/ uses only that API
// (Bokeh.embed.embed_items, Bokeh.documents, a document's get_model_by_id, a model's
// properties read and set, its data, its id) and what this file exports as AE.fence;
// tests/test_fence.py fails on a name of the list below (or any `._name`) in another file.
//
// What it touches, and why (AE.fence.internals says whether each patch took: the browser
// tests check it):
//
// Part 1, Bokeh's page surface (also run on live pages, ahead of a11y.js: app/kit/chrome.py)
//   CSS classes and attributes of Bokeh's and Panel's markup   AE.fence.dom
//     .bk-slider-title, .bk-slider-value, .bk-input-group > label, .bk-spin-btn-up,
//     .bk-spin-btn-down, .bk-btn, .bk-events, noUiSlider's .noUi-handle and .noUi-base
//     (Bokeh's slider draws one), [data-root-id] (a root's element), Panel's .pn-loading
//     (a panel still to come on a live page): a11y.js names the controls Bokeh draws
//     without a name, and finds them by these. Not an API: a new Bokeh may rename them
//     (a11y's browser tests would then find a control unnamed).
//   Document.is_idle                                             AE.fence.documentsIdle()
//     whether a document has rendered; Bokeh's own export (bokeh/io/export.py) waits on
//     it, but BokehJS documents no such property.
//
// Part 2, BokehJS internals (static pages only)
//   Bokeh.require(module path), a module's classes               (each patch below)
//     BokehJS's module loader: the only way to a view class's prototype.
//   VisualProperties.prototype._get_css_value (core/visuals/visual)   cssVisualsSkipped
//   PlotView.prototype._invalidate_layout_if_needed, ._needs_layout,
//     a PlotView's frame.x_ranges / y_ranges                         sidePanelsWatched
//   InlineStyleSheet.prototype._update, its el (core/dom)            sameStylesKept
//   GlyphRendererView.prototype.update_position, its position, el,
//     model.context_menu                                             glyphElementsLeft
//   GlyphRendererView.prototype.lazy_initialize                      buildsSliced
//     each says why below: work Bokeh 3.9 does on every paint, or in one long task, that
//     these pages do not need; Bokeh has no public switch for any of it.
//   Bokeh.index.find(model), a view's el, a ButtonView's button_el  buttonElementsSet,
//     AE.fence.viewElements(model), AE.fence.setButtonDisabled(model, value)
//     Bokeh.index is the page's registry of views (Bokeh's export reads it too), but
//     its shape is not documented and changed in 3.0 (a map of root views became a
//     ViewManager), and a view's elements are its own business: inside the fence.
//   model.properties                                             setButtonDisabled
//     tells a Button (it has button_type) from another model with `disabled`.
//   Document.all_models                                          AE.fence.allModels()
//     every model of a document, to find the panels' CustomJS; undocumented.
//   Bokeh.register_plugin(modules, entry, aliases)             AE.fence.standInForTables()
//     how every extension bundle adds its modules; used to stand in for bokeh-tables
//     (301 KB, 77 KB brotli), which panel.min.js imports as it loads for one class its
//     Tabulator names (TableColumn) and no island of ours mounts (app/hosting/build.py).
//   Document.apply_json_patch with a ModelChanged event          AE.fence.setFromJson()
//     sets a property to a value written as the document's JSON, making the models defined
//     in it (a plot made after its layout, Part 3); the event is Bokeh's wire protocol.
//
// Part 3, Bokeh's document format (static pages)                    AE.fence.document
//   a document's JSON: an object definition's type "object", its attributes, a Layout's
//   children, a model's tags and stylesheets, Plot.hold_render; a document's render_items
//   and their roots. Bokeh documents the format only as what its own serializer writes.
//   The edits: each recurring stylesheet stands once in what a page ships and is put back
//   (withSheets; app/kit/island_documents.py takes it out); a panel mounts in steps, its
//   layouts' children waiting in their tags and each plot's paint held (holdChildren, then
//   putBack, each step a task of its own: a phone keeps answering while a panel arrives).
//
// Not here, because it is the documented API: Bokeh.embed.embed_items (islands.js mounts
// with it), Bokeh.documents, Document.get_model_by_id, models' properties and data.
(function () {
  "use strict";
  const AE = window.AE = window.AE || {};
  const fence = AE.fence = AE.fence || {};
  if (fence.dom) { return; } // run once (a static page runs this part twice: see above)

  fence.dom = {
    sliderTitle: "bk-slider-title", sliderValue: "bk-slider-value",
    inputLabel: ".bk-input-group > label", spinUp: "bk-spin-btn-up",
    spinDown: "bk-spin-btn-down", button: "bk-btn", eventLayer: "bk-events",
    handle: "noUi-handle", sliderBase: "noUi-base", rootAttribute: "data-root-id",
    loading: "pn-loading",
  };

  fence.documentsIdle = function () { // -> whether every Bokeh document on the page has rendered
    const B = window.Bokeh;
    return B !== undefined && B.documents.every((doc) => doc.is_idle);
  };
})();
// ==== end of the page part (app/kit/chrome.py runs the file up to here before a11y.js)
(function () {
  "use strict";
  const AE = window.AE = window.AE || {};
  const fence = AE.fence;
  if (fence.internals) { return; }

  const internals = {cssVisualsSkipped: false, buttonElementsSet: 0,
                     sidePanelsWatched: false, sidePanelChecksSkipped: 0,
                     sameStylesKept: false, sameStylesSkipped: 0,
                     glyphElementsLeft: false, glyphPlacesSkipped: 0,
                     buildsSliced: false, buildYields: 0, buildsPending: 0,
                     tablesStoodIn: false};
  const bokehModule = (path) => window.Bokeh.require(path);

  // Runs `install`, which replaces a method of one of BokehJS's classes and answers false when
  // that method is not there, and records in internals[flag] whether it took. Another Bokeh
  // (a method, class or module gone) keeps its own, and beforeMount asks again next time.
  function tryPatch(flag, install) {
    try {
      internals[flag] = install() !== false;
    } catch (e) { /* another Bokeh: no such module or class */ }
  }

  // -> a method that, when `skip` (called as the method) says its work would change nothing,
  // only counts that in internals[counter]; otherwise it is `original`
  function skipping(original, counter, skip) {
    return function (...args) {
      if (skip.apply(this, args)) {
        internals[counter] += 1;
        return undefined;
      }
      return original.apply(this, args);
    };
  }

  // On every repaint Bokeh 3.9 looks up each visual property of axes, titles, grids and
  // legends (colour, font, width, ...) as a CSS variable (--bk-...) through
  // getComputedStyle before it uses the model's value: about a quarter of a figure's full
  // repaint on a slow machine. These pages define no such variables (tests/test_build.py
  // checks the built files), so the lookup always answers "" and can be skipped.
  function skipCssVisuals() { // another Bokeh: its own lookups stay
    tryPatch("cssVisualsSkipped", () => {
      const proto = bokehModule("core/visuals/visual").VisualProperties.prototype;
      if (typeof proto._get_css_value !== "function") { return false; }
      proto._get_css_value = function () { return ""; };
    });
  }

  // On every repaint Bokeh 3.9 also asks each side panel of a figure (its axes, a legend
  // outside the frame) whether its size changed, and an axis answers by measuring every
  // tick label again: 0.5-2.5 ms a change on these pages, though no state moves an axis.
  // An axis whose model, ticker or formatter changes asks for a new layout itself, and a
  // legend watches its own size; what else resizes an axis is a new range. So the question
  // is asked again only when one of the figure's ranges has moved since it was last asked.
  function rangesOf(view) { // -> a text that changes when any range of the figure moves
    const f = view.frame;
    return [...f.x_ranges.values(), ...f.y_ranges.values()]
      .map((r) => `${r.start},${r.end},${r.factors ? r.factors.join("|") : ""}`).join(";");
  }
  function watchSidePanels() { // another Bokeh: its own checks stay
    tryPatch("sidePanelsWatched", () => {
      const proto = bokehModule("models/plots/plot").PlotView.prototype;
      const check = proto._invalidate_layout_if_needed;
      if (typeof check !== "function") { return false; }
      const skip = function () { // no layout asked for, and no range moved since the last ask
        const ranges = rangesOf(this), moved = ranges !== this.aeRangesChecked;
        this.aeRangesChecked = ranges;
        return !this._needs_layout && !moved;
      };
      proto._invalidate_layout_if_needed = skipping(check, "sidePanelChecksSkipped", skip);
    });
  }

  // On every paint Bokeh 3.9 writes each renderer's position into that renderer's own
  // <style> element again, even when the text is what it already holds, and the browser then
  // parses it and works out the styles anew: a figure with many renderers (the head has one
  // masked layer per length) pays for each of them on every change. The text is written only
  // when it differs; what the page shows is the same.
  function keepSameStyles() { // another Bokeh: it writes them all
    tryPatch("sameStylesKept", () => {
      const proto = bokehModule("core/dom").InlineStyleSheet.prototype;
      const update = proto._update;
      if (typeof update !== "function") { return false; }
      proto._update = skipping(update, "sameStylesSkipped", function (css) {
        return this.el.textContent === css;
      });
    });
  }

  // Bokeh 3.9 also gives every glyph renderer an element of its own, empty and transparent
  // to the pointer (the glyphs are drawn on the canvas), and on every paint writes the box of
  // the glyphs' data into that element's <style>. When the drawn cells move (a new length,
  // decode's one row) the text differs, and the browser works out the figure's styles anew
  // in the middle of Bokeh's paint: about 2 ms of the head's new length. Nothing is drawn in
  // those elements, so each is placed at its first paint and left there. A renderer with a
  // context menu (none here) is still placed on every paint.
  function leaveGlyphElements() { // another Bokeh: it places them on every paint
    tryPatch("glyphElementsLeft", () => {
      const proto = bokehModule("models/renderers/glyph_renderer").GlyphRendererView.prototype;
      const place = proto.update_position;
      if (typeof place !== "function") { return false; }
      proto.update_position = skipping(place, "glyphPlacesSkipped", function () {
        const placed = this.position !== undefined && this.position.css !== "";
        return placed && this.model.context_menu == null && this.el.childElementCount === 0;
      });
    });
  }

  // Bokeh 3.9 builds the views of a figure's renderers one after another in one task (the
  // head has 29, most of them the hidden layers of other lengths): with the figure's layout
  // and first paint, a task of about 0.5 s on a phone, during which the page answers no tap
  // and no scroll. Each renderer's view is built behind an `await`, so letting the browser
  // run its own tasks before one that comes after 10 ms of work cuts the build into short
  // tasks; Bokeh awaits every view before it lays the figure out, so what it draws is the
  // same. It matters only while a panel mounts (islands.js): no state adds a renderer.
  const SLICE_MS = 10;
  let sliceStart = null; // when the current task's run of view builds began
  function nextTask() { // -> Promise resolved in a task of its own (not Bokeh's: it is here
    // because the slicing needs it first; islands.js uses it too)
    return new Promise((resolve) => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => resolve();
      channel.port2.postMessage(null);
    });
  }
  function sliceRendererBuilds() { // another Bokeh: a figure's views are built in one task
    tryPatch("buildsSliced", () => {
      const proto = bokehModule("models/renderers/glyph_renderer").GlyphRendererView.prototype;
      const init = proto.lazy_initialize;
      if (typeof init !== "function") { return false; }
      function startSlice() { // time this task's builds from now, until the task ends
        sliceStart = performance.now();
        nextTask().then(() => { sliceStart = null; });
      }
      async function slice() { // a new task when this one has run long enough
        if (sliceStart === null) {
          startSlice();
        } else if (performance.now() - sliceStart > SLICE_MS) {
          internals.buildYields += 1;
          await nextTask();
          startSlice();
        }
      }
      proto.lazy_initialize = async function () {
        internals.buildsPending += 1;
        try {
          await slice();
          await init.call(this);
          await slice(); // what follows the last build (the figure's layout) starts afresh
        } finally {
          internals.buildsPending -= 1;
        }
      };
    });
  }

  // -> Promise, in a later task, once no view build is waiting for its turn: what a change of
  // the document started (a layout's new children) is then built and laid out, since the
  // rest of Bokeh's work after the last build runs without leaving its task
  async function built() {
    do { await nextTask(); } while (internals.buildsPending > 0);
  }

  // every patch, before a document is drawn (islands.js calls it ahead of Bokeh's embed,
  // switcher.js's boot after, for a page saved with its documents inline)
  function beforeMount() {
    if (!internals.cssVisualsSkipped) { skipCssVisuals(); }
    if (!internals.sidePanelsWatched) { watchSidePanels(); }
    if (!internals.sameStylesKept) { keepSameStyles(); }
    if (!internals.glyphElementsLeft) { leaveGlyphElements(); }
    if (!internals.buildsSliced) { sliceRendererBuilds(); }
  }

  function views(model) { return [...window.Bokeh.index.find(model)]; }

  function viewElements(model) { // -> the root elements of a model's views on this page
    return views(model).map((v) => v.el).filter((el) => el instanceof HTMLElement);
  }

  // A Button's `disabled` set on its model makes Bokeh 3.9 rebuild the button and lay out
  // the whole page again: about 8 ms here on every step of a walk whose end disables
  // "Next". The browser, the keyboard and screen readers act on the element's own
  // `disabled`, so a static page sets that instead (on every apply, so a button Bokeh
  // rebuilds for another reason gets it back). The model keeps the value the page was
  // built with; Bokeh's click handler does not read it.
  const buttonViews = new WeakMap(); // button model -> its views
  function setButtonDisabled(model, value) { // -> true if the button's element took it
    if (model.properties === undefined || model.properties.button_type === undefined) {
      return false;
    }
    let found = buttonViews.get(model);
    if (found === undefined) {
      found = views(model);
      buttonViews.set(model, found);
    }
    const elements = found.map((v) => v.button_el).filter((e) => e instanceof HTMLButtonElement);
    for (const el of elements) { el.disabled = Boolean(value); }
    internals.buttonElementsSet += elements.length;
    return elements.length > 0;
  }

  function* allModels() { // every model of every Bokeh document on the page
    for (const doc of window.Bokeh.documents) { yield* doc.all_models; }
  }

  function setFromJson(doc, model, attr, value) { // value: as the document's JSON writes it
    doc.apply_json_patch({events: [{kind: "ModelChanged", model: {id: model.id}, attr,
                                    new: value}]});
  }

  // Panel's bundle requires "@bokehjs/models/widgets/tables" as it loads and reads only
  // TableColumn from it, to name a property's type; a page that mounts no table loads this
  // stand-in instead of bokeh-tables (static/no_tables.js, run between bokeh and panel). A
  // TableColumn made from it throws: the build loads the real bundle where one is used.
  function standInForTables() {
    if (internals.tablesStoodIn) { return; }
    class TableColumn {
      constructor() { throw new Error("bokeh-tables is not loaded on this page"); }
    }
    TableColumn.__name__ = "TableColumn";
    const id = "ae-no-tables";
    window.Bokeh.register_plugin({[id]: function (require, module, exports, esModule) {
      esModule(); // not enumerable: register_plugin copies what is onto the Bokeh global
      Object.defineProperty(exports, "TableColumn", {value: TableColumn});
    }}, id, {"models/widgets/tables": id});
    internals.tablesStoodIn = true;
  }

  Object.assign(fence, {internals, beforeMount, built, nextTask, viewElements,
                        setButtonDisabled, allModels, setFromJson, standInForTables});
})();

// Part 3: the document's JSON, as app/kit/panel_internals.py document_parts serializes it and
// app/kit/island_documents.py ships it (static pages; the edits in that format, each with why,
// are here and in island_documents.py alone)
(function () {
  "use strict";
  const AE = window.AE = window.AE || {};
  const fence = AE.fence;
  if (fence.document) { return; }

  // A document script's call: each stylesheet text that recurs stands once, in `sheets`, and a
  // model's stylesheets name it by its index (app/kit/island_documents.py); put them back.
  function withSheets(node, sheets) {
    if (Array.isArray(node)) {
      for (const value of node) {
        if (value !== null && typeof value === "object") { withSheets(value, sheets); }
      }
    } else {
      for (const key in node) {
        const value = node[key];
        if (key === "stylesheets" && Array.isArray(value)) {
          node[key] = value.map((v) => (typeof v === "number" ? sheets[v] : v));
        }
        if (value !== null && typeof value === "object") { withSheets(node[key], sheets); }
      }
    }
    return node;
  }

  function rootOf(renderItems) { // -> the id of the first root of a document's render items
    return Object.keys(renderItems[0].roots)[0];
  }

  // A panel's document mounts in steps, each its own task, so no single task holds the
  // page for long (a phone keeps scrolling and answering taps while a panel arrives): the
  // roots render with their layouts empty, then each layout's children are put back one at
  // a time, in order, plots last (a plot is the costliest child, and every later step lays
  // out what is already there again). Each layout's children wait in its `tags`, behind a
  // marker, so the document's JSON keeps its order (a model is defined where first named).
  // The root is hidden until the end (chapter.css), so no step is ever seen.
  // A plot is also made later: its models (most of a panel's) leave the document's JSON, to
  // be made in a step of their own just before it comes back, where nothing outside the plot
  // names one of them (else it stays in the JSON, behind the marker).
  const WAITING = "ae-waiting-children", LATER = "ae-made-later:";
  const LAYOUT = /(^|\.)(Column|Row)$/;
  const PLOT = /(^|\.)(Figure|Plot)$/;
  // how many children arrived as steps, and how many plots were painted after their layout
  // (tests read them)
  const steps = {taken: 0, paintsHeld: 0, madeLater: 0};

  function walk(o, visit) { // every object in a document's JSON, in its order
    if (Array.isArray(o)) { o.forEach((v) => walk(v, visit)); return; }
    if (o === null || typeof o !== "object") { return; }
    visit(o);
    for (const key of Object.keys(o)) { walk(o[key], visit); }
  }

  function isRef(o) { return typeof o.id === "string" && Object.keys(o).length === 1; }

  function holdChildren(docs) { // -> [{layout, child, plot, json}]: the children taken out,
    // in order (json: a plot's definition, taken out of the document)
    const defs = new Map(), held = [];
    walk(docs, (o) => {
      if (o.type === "object" && typeof o.id === "string" && !defs.has(o.id)) {
        defs.set(o.id, o);
      }
    });
    for (const o of defs.values()) {
      const a = o.attributes;
      if (!a || !LAYOUT.test(o.name) || !Array.isArray(a.children) || a.children.length === 0 ||
          !a.children.every((c) => c !== null && typeof c.id === "string")) { continue; }
      const waiting = [], mine = [];
      for (const c of a.children) {
        const def = defs.get(c.id);
        const plot = PLOT.test(def?.name ?? "");
        // a plot comes back with its paint held (Plot.hold_render), so that Bokeh lays it
        // out in one task and paints it in a later one, not both in one
        if (plot && def.attributes && def.attributes.hold_render !== true) {
          def.attributes.hold_render = true;
        }
        const later = plot && def === c; // defined here, as a child: it can be made later
        waiting.push(later ? LATER + c.id : c);
        mine.push({layout: o.id, child: c.id, plot, json: later ? c : null});
      }
      const attrs = {};
      for (const key of Object.keys(a)) { // tags right after children: the same order
        if (key === "children") {
          attrs.children = [];
          attrs.tags = [...(a.tags ?? []), WAITING, ...waiting];
        } else if (key !== "tags") {
          attrs[key] = a[key];
        }
      }
      o.attributes = attrs;
      for (const h of mine) { held.push({...h, tags: attrs.tags}); }
    }
    // a plot whose models something left in the document names stays in it, and so does
    // one that holds a layout (its children wait for it)
    for (let changed = true; changed;) {
      changed = false;
      const named = new Set();
      walk(docs, (o) => { if (isRef(o)) { named.add(o.id); } });
      for (const h of held) {
        if (h.json === null) { continue; }
        let clash = false;
        walk(h.json, (o) => {
          if (o.type === "object" && (named.has(o.id) || LAYOUT.test(o.name))) { clash = true; }
        });
        if (clash) {
          h.tags[h.tags.indexOf(LATER + h.child)] = h.json;
          h.json = null;
          changed = true;
        }
      }
    }
    return held.filter((h) => !h.plot).concat(held.filter((h) => h.plot));
  }

  async function putBack(held, rootId) { // the held children back into their layouts
    const doc = window.Bokeh.documents.find((d) => d.get_model_by_id(rootId) !== null);
    const wanted = new Map(), shown = new Set(); // layout -> its children's ids, in order
    for (const {layout} of held) {
      if (wanted.has(layout)) { continue; }
      const model = doc.get_model_by_id(layout);
      const at = model.tags.indexOf(WAITING);
      wanted.set(layout, model.tags.slice(at + 1).map(
        (c) => (typeof c === "string" ? c.slice(LATER.length) : c.id)));
      model.tags = model.tags.slice(0, at);
    }
    const {nextTask, built} = fence; // Part 2's
    for (const {layout, child, json} of held) {
      const model = doc.get_model_by_id(layout), tags = model.tags;
      if (json !== null) { // its models, made from its JSON in the layout's tags for now
        await nextTask();
        fence.setFromJson(doc, model, "tags", [...tags, json]);
        steps.madeLater += 1;
      }
      await nextTask();
      shown.add(child);
      model.children = wanted.get(layout).filter((id) => shown.has(id))
        .map((id) => doc.get_model_by_id(id));
      if (json !== null) { model.tags = tags; } // the plot is a child now: out of its tags
      steps.taken += 1;
      await built(); // a plot's views may take several tasks to build
    }
    for (const {child, plot} of held) { // each plot's first paint, a task of its own
      if (!plot) { continue; }
      await nextTask();
      const model = doc.get_model_by_id(child);
      if (model.hold_render) {
        model.hold_render = false;
        steps.paintsHeld += 1;
      }
    }
  }

  fence.document = {withSheets, holdChildren, putBack, rootOf, steps};
})();
