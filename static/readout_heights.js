// A readout keeps the tallest height it has had at its width. When a change makes its
// text a line shorter, the page below it would move up, and Bokeh lays out the whole panel
// again (its figures measure their axes), about 4 ms; held, only the text changes. A new
// width (a turned phone, a resized window) starts afresh.
// AE.heights: {hold(model), stats}; switcher.js holds each panel's readouts as it boots.
(function () {
  "use strict";
  const AE = window.AE = window.AE || {};
  if (AE.heights) { return; }

  const heldHeights = new WeakMap(); // readout element -> {width, height}
  const stats = {readoutsHeld: 0}; // heights taken (tests)
  const holder = typeof ResizeObserver === "function" ? new ResizeObserver((entries) => {
    for (const entry of entries) {
      const el = entry.target;
      const box = entry.borderBoxSize && entry.borderBoxSize[0];
      const [width, height] = box ? [box.inlineSize, box.blockSize]
        : [el.offsetWidth, el.offsetHeight];
      const held = heldHeights.get(el);
      if (held !== undefined) {
        if (Math.abs(held.width - width) >= 0.5) {
          el.style.minHeight = ""; // a new width: measure the text as it now wraps
          heldHeights.delete(el);
          continue; // the observer reports the unheld height next
        }
        if (height <= held.height) { continue; }
      }
      heldHeights.set(el, {width, height});
      el.style.minHeight = `${height}px`;
      stats.readoutsHeld += 1;
    }
  }) : null;

  function hold(model) { // a readout's model: every element that shows it keeps its height
    if (holder === null) { return; }
    for (const el of AE.fence.viewElements(model)) { holder.observe(el); }
  }

  AE.heights = {hold, stats};
})();
