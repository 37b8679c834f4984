// The code our Bokeh models run in the browser: each function's body is a model's `code` (a
// CustomJSTickFormatter's, a CustomJS's) or `v_func` (a CustomJSTransform's), which
// app/kit/model_code.py reads by the function's name when a panel's module is imported. Bokeh
// makes a function of each body on its own, its parameters the model's `args` and what Bokeh
// passes (a tick formatter: `tick`; a transform: `xs`, the column); the parameters written
// here must be those (model_code.py checks). No page loads this file as a script; wrapped, it
// defines nothing. A transform's arithmetic has a Python twin for the stills (app/kit/transforms.py).
(function () {
  "use strict";

  // a slider over exponents (agreement's d): the handle shows 2 to that power
  function powerOfTwoTick(tick) {
    return (2 ** tick).toLocaleString("en-US");
  }

  // a slider over stop indices: the handle shows the stop's label (one label per stop)
  function stopLabelTick(labels, tick) {
    return labels[tick] ?? String(tick);
  }

  // the √d_k sweep's bars: key k of n (1-based) centred at (k - ½) / n on a 0..1 axis
  function keyCentre(xs) {
    const n = xs.length;
    return xs.map((k) => (k - 0.5) / n);
  }

  // ... and 0.8 / n wide
  function keyWidth(xs) {
    const n = xs.length;
    return xs.map(() => 0.8 / n);
  }

  // the head's heat map: a cell's centre on the 0..1 axis from its key or query position and
  // the source's column `n`, the length it is placed by (0: not drawn, a NaN place)
  function cellCentre(xs, source) {
    const n = source.data instanceof Map ? source.data.get("n") : source.data.n;
    return xs.map((p, i) => (n[i] > 0 ? (p + 0.5) / n[i] : NaN));
  }

  // ... and `share` of one position's width, for the length in each row
  function cellShare(xs, share) {
    return xs.map((n) => (n > 0 ? share / n : 0));
  }

  // online softmax's step buttons on a static page: move the slider by `delta` (0: to the
  // start); the slider's change then switches the state like any control's
  function stepSlider(slider, delta) {
    const end = slider.end, now = Math.min(slider.value, end);
    slider.value = delta === 0 ? 0 : Math.max(0, Math.min(end, now + delta));
  }
})();
