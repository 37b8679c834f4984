// Your own config.json on a static cost page, counted in this browser.
// The build writes an empty box, class "ae-cost-calculator" (app/panels/model_picker.py),
// into the cost panel's own page, under its island and outside Bokeh's root, and loads this
// script on that page only (app/hosting/build.py): the box works before Bokeh, or without
// it, and mounting the island adds no second box. It fills the box: a drop zone, a file
// dialog and a paste box, a prompt length, a context and two dtypes the reader types or
// picks, and readouts of what `attention-explorable costs --config FILE --json` prints,
// computed by the JavaScript twin of the cost core (static/cost_model.js with its table,
// AE.costModel.create(AE.costModel.table)). The twin loads on first use (a focus, a tap or a drag
// over the box), from the address this script's tag names in data-model (else beside it),
// so a reader who never counts a config never fetches it. A file is read here
// (Blob.arrayBuffer, at most one byte past the limit, as the CLI reads): nothing is sent
// anywhere, no fetch, no XHR. A bad config shows the CLI's own message (the twin's
// ConfigError, "field: problem") in an alert, and the numbers stay as they were.
// Numbers read as app/kit/fmt.py writes them (Python's rounding: half to even, on the exact
// value); each readout also carries its full value in data-value (tests compare it).
// Classic script, one global name: AE.costCalculator.
(function () {
  "use strict";
  const AE = window.AE = window.AE || {};
  if (AE.costCalculator) { return; }
  const BOX = "ae-cost-calculator";
  const here = document.currentScript;
  const MODEL_SRC = (here && here.getAttribute("data-model"))
    || (here && here.src ? new URL("cost_model.js", here.src).href : "cost_model.js");
  const MAX_TOKENS = 100000000; // the CLI's --prompt and --generate: 1..100,000,000
  let MAX_BYTES = 1000000; // costs.MAX_CONFIG_BYTES (the table says it again once loaded)
  const DTYPES = ["bf16", "fp16", "fp8", "int8", "fp32"];
  const DTYPE_BYTES = {bf16: 2, fp16: 2, fp8: 1, int8: 1, fp32: 4};

  // --- app/kit/fmt.py, with Python's rounding ----------------------------------------------

  function exact(x) { // |x| -> [integer digits, fraction digits], the double's exact value
    const a = Math.abs(x);
    if (a >= 1e21) { return [BigInt(a).toString(), ""]; }
    const parts = a.toFixed(100).split(".");
    return [parts[0], parts[1].replace(/0+$/, "")];
  }

  function rounded(x, places) { // -> [integer digits, fraction digits]: Python's round,
    // half to even on the exact value; places < 0 rounds to tens, hundreds, ...
    const e = exact(x), digits = e[0] + e[1].padEnd(Math.max(places, 0), "0");
    const cut = e[0].length + places; // digits kept
    const rest = (e[0] + e[1]).slice(Math.max(cut, 0));
    let kept = cut > 0 ? digits.slice(0, cut) : "0";
    let up = false;
    if (cut >= 0 && rest.length) {
      const first = rest[0], tail = /[1-9]/.test(rest.slice(1));
      up = first > "5" || (first === "5" && (tail || Number(kept[kept.length - 1]) % 2 === 1));
    }
    if (up) { kept = (BigInt(kept) + 1n).toString().padStart(kept.length, "0"); }
    const fracLen = Math.max(places, 0), intLen = kept.length - fracLen;
    let whole = intLen > 0 ? kept.slice(0, intLen) : "0";
    if (places < 0) { whole = (BigInt(whole) * 10n ** BigInt(-places)).toString(); }
    whole = whole.replace(/^0+(?=\d)/, "");
    return [whole, fracLen ? kept.slice(intLen).padStart(fracLen, "0") : ""];
  }

  function grouped(digits) { return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ","); }

  function fixed(x, places, group) { // f"{x:,.{places}f}" (group) or f"{x:.{places}f}"
    const r = rounded(x, places), whole = group ? grouped(r[0]) : r[0];
    const neg = x < 0 && /[1-9]/.test(r[0] + r[1]) ? "-" : "";
    return neg + whole + (places > 0 ? "." + r[1] : "");
  }

  function count(n) { // f"{n:,}" of a Python int (a BigInt or a whole Number)
    return typeof n === "bigint" ? grouped(n.toString()) : fixed(n, 0, true);
  }

  function thousands(x) { return typeof x === "bigint" ? count(x) : fixed(Number(x), 0, true); }

  function significant(x, digits) {
    if (x === 0) { return "0"; }
    const places = digits - 1 - Math.floor(Math.log10(Math.abs(x)));
    return fixed(x, places, true);
  }

  function scaleWords(x, digits) {
    if (digits === undefined) { digits = 3; }
    if (!isFinite(x)) { return "\u221e"; }
    const scales = [[1e12, "trillion"], [1e9, "billion"], [1e6, "million"], [1e3, "thousand"]];
    for (let i = 0; i < scales.length; i++) {
      if (Math.abs(x) >= scales[i][0]) {
        return significant(x / scales[i][0], digits) + " " + scales[i][1];
      }
    }
    return significant(x, digits);
  }

  function percent(share, digits) {
    if (digits === undefined) { digits = 2; }
    let text = significant(share * 100, digits);
    while (/^100(\.00?)?$/.test(text) && share < 1 && digits < 8) {
      digits += 1; // never 100% for something short of all of it
      text = significant(share * 100, digits);
    }
    return text + "%";
  }

  function gbAndGib(nbytes, digits) {
    if (digits === undefined) { digits = 2; }
    if (!isFinite(nbytes)) { return "\u221e"; }
    const units = [[3, "GB", "GiB"], [2, "MB", "MiB"], [1, "kB", "KiB"]];
    for (let i = 0; i < units.length; i++) {
      const p = units[i][0];
      if (nbytes >= Math.pow(1000, p) / 10) {
        return significant(nbytes / Math.pow(1000, p), digits) + " " + units[i][1] + " ("
          + significant(nbytes / Math.pow(1024, p), digits) + " " + units[i][2] + ")";
      }
    }
    return fixed(nbytes, 0, true) + " bytes";
  }

  function tokensOrNever(n) { return isFinite(n) ? thousands(n) : "never"; }

  const fmt = {fixed: fixed, count: count, thousands: thousands, significant: significant,
             scaleWords: scaleWords, percent: percent, gbAndGib: gbAndGib,
             tokensOrNever: tokensOrNever};

  // --- the twin, loaded on first use ---------------------------------------------------

  let twin = null; // Promise of AE.costModel.create(AE.costModel.table)
  let twinReady = null; // the same once made: show() is synchronous

  function loadModel() {
    if (twin) { return twin; }
    twin = new Promise(function (resolve, reject) {
      if (AE.costModel && AE.costModel.table) { resolve(); return; }
      const s = document.createElement("script");
      s.src = MODEL_SRC;
      s.onload = function () { resolve(); };
      s.onerror = function () { reject(new Error("could not load " + MODEL_SRC)); };
      document.head.appendChild(s);
    }).then(function () {
      twinReady = AE.costModel.create(AE.costModel.table);
      MAX_BYTES = AE.costModel.table.MAX_CONFIG_BYTES;
      return twinReady;
    });
    twin.catch(function () { twin = null; }); // a later use tries again
    return twin;
  }

  // --- the box -------------------------------------------------------------------------

  // the box is in the page (chapter.css's colours, both themes), styled as its questions are
  const CSS = [
    ".ae-calc{--ae-calc-bad:#9b1c1c;margin:1.2rem 0;padding:0.2rem 1rem 0.8rem;color:var(--ae-ink);"
      + "background:var(--ae-surface);border:1px solid var(--ae-border);border-radius:8px}",
    ".ae-theme-dark .ae-calc{--ae-calc-bad:#ffb4ab}",
    ".ae-calc h2{font-size:1.15em;margin:8px 0 4px}",
    ".ae-calc .ae-hint{color:var(--ae-muted);font-size:max(12px,.9em);margin:2px 0}",
    ".ae-calc-drop{border:2px dashed var(--ae-muted);border-radius:6px;padding:8px 10px;"
      + "margin:6px 0}",
    ".ae-calc-drop.ae-over{background:rgba(0,114,178,.15)}",
    ".ae-calc label{display:block;font-weight:600;margin:6px 0 2px}",
    ".ae-calc input,.ae-calc select,.ae-calc button,.ae-calc textarea{font-size:16px;"
      + "color:var(--ae-ink);background:var(--ae-bg);border:1px solid var(--ae-muted);"
      + "border-radius:6px;min-height:32px;box-sizing:border-box;max-width:100%}",
    ".ae-calc input[type=file]{border:0;background:none;padding:0}",
    ".ae-calc textarea{width:100%;padding:4px 6px;font:14px/1.4 ui-monospace,monospace}",
    ".ae-calc button{min-height:40px;padding:4px 14px;margin:6px 0;border-color:var(--ae-link);"
      + "font-weight:600;cursor:pointer}",
    ".ae-calc :focus-visible{outline:3px solid var(--ae-link);outline-offset:2px}",
    ".ae-calc-row{display:flex;flex-wrap:wrap;gap:4px 16px;align-items:flex-start}",
    ".ae-calc-row input{width:9em;padding:2px 6px}",
    ".ae-calc .ae-error{border-left:4px solid #d55e00;padding:2px 8px;margin:4px 0;"
      + "overflow-wrap:anywhere}",
    ".ae-calc .ae-error:empty{border:0;padding:0;margin:0}",
    ".ae-calc-bad{color:var(--ae-calc-bad);font-size:max(12px,.85em)}",
    ".ae-calc-status{margin:4px 0}",
    ".ae-calc table{border-collapse:collapse;margin:6px 0;font-variant-numeric:tabular-nums}",
    ".ae-calc caption{text-align:left}",
    ".ae-calc th,.ae-calc td{text-align:left;vertical-align:top;padding:2px 10px 2px 0}",
    ".ae-calc th{font-weight:normal}",
    ".ae-calc td{overflow-wrap:anywhere}",
    // print: the figures counted, not the controls that took the file (nothing if none was)
    "@media print{.ae-calc:not(.ae-calc-counted){display:none}.ae-calc-drop,.ae-calc-paste,"
      + ".ae-calc button{display:none}}",
  ].join("");

  let uid = 0;

  function el(tag, attrs, children) {
    const e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") { e.textContent = attrs[k]; } else { e.setAttribute(k, attrs[k]); }
    });
    (children || []).forEach(function (c) {
      e.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return e;
  }

  // the readouts: [key, label]; a key is the CLI's JSON name (shape.x: its shape's field)
  const ROWS = [
    ["shape.layers", "Layers"], ["shape.heads", "Query heads"], ["shape.kv_heads", "KV heads"],
    ["shape.head_dim", "Head width (head_dim)"], ["shape.v_head_dim", "Value head width"],
    ["shape.hidden", "Hidden size"], ["shape.intermediate", "MLP width"],
    ["shape.vocab", "Vocabulary"],
    ["pair_flops", "FLOPs per (query, key) pair, all layers"],
    ["matmul_params", "Matmul parameters"],
    ["crossover_triangular", "Crossover, triangular kernel (tokens)"],
    ["crossover_naive", "Crossover, naive kernel (tokens)"],
    ["share_triangular", "Attention share of prefill, triangular kernel"],
    ["share_naive", "Attention share of prefill, naive kernel"],
    ["kv_bytes_per_token", "KV cache bytes per token"],
    ["kv_bytes_per_user", "KV cache per user"],
    ["state_bytes_per_user", "Fixed state per user (Mamba, linear attention)"],
    ["kv_convention", "How the cache is counted"],
    ["weight_bytes", "Weights"],
    ["weight_convention", "How the weights are counted"],
    ["kv_outweighs_weights_context", "One user's cache outweighs the weights at"],
    ["decode_arithmetic_intensity", "Decode arithmetic intensity (attention over the cache)"],
  ];

  // what the box shows, apart from its elements: every filled box draws the same state
  const state = {model: null, source: "", error: "", errorSource: "", errorId: 0,
               prompt: "4096", context: "8192", kvDtype: "bf16", weightDtype: "bf16", status: ""};
  let views = []; // every filled box: {box, refs}

  function input(id, label, value, hint) {
    const field = el("input", {id: id, type: "text", inputmode: "numeric", autocomplete: "off",
                             spellcheck: "false", "aria-describedby": id + "-bad"});
    field.value = value;
    return el("div", {}, [el("label", {for: id, text: label}), field,
                          el("div", {id: id + "-bad", class: "ae-calc-bad"}),
                          el("div", {class: "ae-hint", text: hint})]);
  }

  function select(id, label, value) {
    const s = el("select", {id: id});
    DTYPES.forEach(function (d) {
      const o = el("option", {value: d, text: d + " (" + DTYPE_BYTES[d] + " byte"
        + (DTYPE_BYTES[d] > 1 ? "s" : "") + ")"});
      s.appendChild(o);
    });
    s.value = value;
    return el("div", {}, [el("label", {for: id, text: label}), s]);
  }

  function fill(box) { // an empty box -> the calculator in it
    const id = "ae-calc-" + (++uid);
    const file = el("input", {id: id + "-file", type: "file", accept: ".json,application/json"});
    const text = el("textarea", {id: id + "-text", rows: "4", spellcheck: "false",
                               placeholder: "{\"num_hidden_layers\": 32, ...}"});
    const use = el("button", {type: "button", text: "Count the pasted config"});
    const drop = el("div", {class: "ae-calc-drop"}, [
      el("p", {class: "ae-hint", text: "Drop a config.json here, or choose one:"}),
      el("label", {for: id + "-file", text: "Your config.json"}), file]);
    const table = el("table", {class: "ae-calc-out"});
    const caption = el("caption", {class: "ae-hint",
                                 text: "What it costs, counted in this browser"});
    table.appendChild(caption);
    const cells = {};
    ROWS.forEach(function (row) {
      const td = el("td", {"data-k": row[0]});
      cells[row[0]] = td;
      table.appendChild(el("tr", {}, [el("th", {scope: "row", text: row[1]}), td]));
    });
    const refs = {
      file: file, text: text, use: use, drop: drop, table: table, cells: cells,
      error: el("div", {class: "ae-error", role: "alert"}),
      status: el("p", {class: "ae-calc-status", "aria-live": "polite"}),
      notes: el("ul", {class: "ae-hint ae-calc-notes"}),
      prompt: null, context: null, kv: null, weight: null,
    };
    const prompt = input(id + "-prompt", "Prompt tokens", state.prompt,
                       "for prefill's attention share");
    const context = input(id + "-context", "Context tokens", state.context,
                        "for one user's KV cache");
    const kv = select(id + "-kv", "KV cache dtype", state.kvDtype);
    const weight = select(id + "-weights", "Weights dtype", state.weightDtype);
    refs.prompt = prompt.querySelector("input");
    refs.context = context.querySelector("input");
    refs.kv = kv.querySelector("select");
    refs.weight = weight.querySelector("select");
    const section = el("section", {class: "ae-calc", "aria-labelledby": id + "-h"}, [
      el("style", {text: CSS}),
      el("h2", {id: id + "-h", text: "Or count a config.json of your own, here"}), // under the h1
      el("p", {class: "ae-hint", text: "Counted by this page's script in your browser: the "
        + "file is read here and sent nowhere, and the address stays as it is. Limit: "
        + count(MAX_BYTES) + " bytes."}),
      drop, el("div", {class: "ae-calc-paste"}, [
        el("label", {for: id + "-text", text: "or paste config.json here"}), text, use]),
      refs.error, refs.status,
      el("div", {class: "ae-calc-row"}, [prompt, context, kv, weight]),
      table, refs.notes,
    ]);
    refs.section = section;
    box.textContent = "";
    box.appendChild(section);
    wire(box, refs);
    const view = {box: box, refs: refs};
    views.push(view);
    show(view);
  }

  function wire(box, refs) {
    const warm = function () { loadModel().catch(function () {}); };
    ["focusin", "pointerdown", "dragenter"].forEach(function (type) {
      box.addEventListener(type, warm, {once: true, passive: true});
    });
    box.addEventListener("dragover", function (event) { // a file dropped anywhere in the
      event.preventDefault(); // box is counted, never opened by the browser instead
      refs.drop.classList.add("ae-over");
    });
    box.addEventListener("dragleave", function () { refs.drop.classList.remove("ae-over"); });
    box.addEventListener("drop", function (event) {
      event.preventDefault();
      refs.drop.classList.remove("ae-over");
      const files = event.dataTransfer && event.dataTransfer.files;
      if (files && files.length) { readFile(files[0]); }
    });
    refs.file.addEventListener("change", function () {
      if (refs.file.files.length) { readFile(refs.file.files[0]); }
    });
    refs.use.addEventListener("click", function () {
      countConfig(refs.text.value, "the pasted text");
    });
    [["prompt", refs.prompt], ["context", refs.context]].forEach(function (pair) {
      pair[1].addEventListener("input", function () {
        state[pair[0]] = pair[1].value;
        redraw();
      });
    });
    refs.kv.addEventListener("change", function () { state.kvDtype = refs.kv.value; redraw(); });
    refs.weight.addEventListener("change", function () {
      state.weightDtype = refs.weight.value;
      redraw();
    });
  }

  function readFile(file) { // at most one byte over the limit, as the CLI reads
    const name = file.name || "the file";
    file.slice(0, MAX_BYTES + 1).arrayBuffer().then(function (buffer) {
      return countConfig(new Uint8Array(buffer), name);
    }, function (error) {
      fail(name, "config.json: cannot read " + name + ": " + (error.message || error));
    });
  }

  function countConfig(data, source) { // -> Promise; the numbers change only on success
    return loadModel().then(function (cm) {
      let shape;
      try {
        shape = cm.from_config(cm.parse_config_text(data));
      } catch (error) {
        if (error.name === "ConfigError") { fail(source, error.message); return; }
        fail(source, "config.json: could not be read (" + (error.name || "Error") + ")");
        return;
      }
      state.model = shape;
      state.source = source;
      state.error = "";
      state.errorId += 1;
      state.status = "Counting " + shape.name + ", from " + source + ".";
      redraw();
    }, function (error) {
      fail(source, "the calculator could not start (" + error.message + ")");
    });
  }

  function fail(source, message) {
    state.error = message;
    state.errorSource = source;
    state.errorId += 1;
    redraw();
  }

  function tokens(text) { // -> a whole number in 1..100,000,000, or an error string
    const clean = String(text).replace(/[\s,_]/g, "");
    if (!/^\d+$/.test(clean)) { return "expected a whole number, got '" + text + "'"; }
    const n = Number(clean);
    if (n < 1 || n > MAX_TOKENS) { return "expected 1..100,000,000, got " + count(n); }
    return n;
  }

  function figures(cm, m, prompt, context) { // -> {key: [value, text]}
    const kvB = cm.dtype_bytes(state.kvDtype), wB = cm.dtype_bytes(state.weightDtype);
    const out = {};
    ["layers", "heads", "kv_heads", "head_dim", "v_head_dim", "hidden", "intermediate",
     "vocab"].forEach(function (k) { out["shape." + k] = [m[k], count(m[k])]; });
    if (!m.attention_layers) { // Mamba: the heads the core counts back out are no model's
      ["heads", "kv_heads", "head_dim", "v_head_dim"].forEach(function (k) {
        out["shape." + k] = [m[k], "none (no layer attends)"];
      });
    }
    const params = cm.matmul_params(m);
    out.pair_flops = [cm.pair_flops(m), thousands(cm.pair_flops(m))];
    out.matmul_params = [params, thousands(params) + " (\u2248 "
      + scaleWords(Number(params)) + ")"];
    ["triangular", "naive"].forEach(function (k) {
      const cross = cm.crossover_tokens(m, k);
      out["crossover_" + k] = [cross, tokensOrNever(cross)];
      if (typeof prompt === "number") {
        const share = cm.prefill_attention_share(m, prompt, k);
        out["share_" + k] = [share, percent(share) + " at " + count(prompt) + " tokens"];
      }
    });
    const perToken = cm.kv_bytes_per_token(m, kvB);
    out.kv_bytes_per_token = [perToken, thousands(perToken) + " bytes (" + state.kvDtype + ")"];
    if (typeof context === "number") {
      const user = BigInt(Math.trunc(cm.kv_cache_bytes(m, context, 1, kvB))); // int(), as the CLI
      out.kv_bytes_per_user = [user, count(user) + " bytes = " + gbAndGib(Number(user))
        + " at " + count(context) + " tokens"];
    }
    const held = BigInt(Math.trunc(cm.state_bytes(m, 1, kvB))); // int(), as the CLI
    out.state_bytes_per_user = [held, held ? count(held) + " bytes = " + gbAndGib(Number(held))
      + " (" + state.kvDtype + "), at any context" : "none: no layer keeps a fixed state"];
    const kvRule = cm.cache_convention(m), wRule = cm.weight_convention(m, state.weightDtype);
    out.kv_convention = [kvRule, kvRule];
    out.weight_convention = [wRule, wRule];
    const weights = cm.weight_bytes(m, wB);
    out.weight_bytes = [weights, gbAndGib(Number(weights)) + " (" + state.weightDtype + ", "
      + thousands(weights) + " bytes)"];
    const cross = cm.kv_outweighs_weights_context(m, 1, kvB, {weight_bytes_per_value: wB});
    out.kv_outweighs_weights_context = [cross, isFinite(cross)
      ? tokensOrNever(cross) + " tokens (\u2248 " + scaleWords(cross, 2) + ")"
      : m.attention_layers ? "never: the window caps the cache below the weights"
        : "never: no layer attends, so there is no KV cache"];
    const intensity = cm.decode_arithmetic_intensity(m, 1, kvB);
    out.decode_arithmetic_intensity = [intensity, fixed(intensity, 1, false) + " FLOP/byte"];
    return out;
  }

  function show(view) { // state -> one box
    const r = view.refs;
    if (r.shownError !== state.errorId) { // an alert speaks once per failure, not per redraw
      r.shownError = state.errorId;
      r.error.textContent = "";
      if (state.error) {
        r.error.appendChild(el("b", {text: "Could not count " + state.errorSource + ". "}));
        r.error.appendChild(el("span", {class: "ae-calc-message", text: state.error}));
        r.error.appendChild(document.createTextNode(state.model
          ? " Still counting " + state.model.name + "." : ""));
      }
    }
    const status = state.model ? state.status
      : "No config counted yet: the readouts below fill in when one is.";
    if (r.status.textContent !== status) { r.status.textContent = status; }
    if (r.prompt.value !== state.prompt) { r.prompt.value = state.prompt; }
    if (r.context.value !== state.context) { r.context.value = state.context; }
    r.kv.value = state.kvDtype;
    r.weight.value = state.weightDtype;
    const prompt = tokens(state.prompt), context = tokens(state.context);
    [[r.prompt, prompt], [r.context, context]].forEach(function (pair) {
      const bad = typeof pair[1] === "string";
      pair[0].setAttribute("aria-invalid", bad ? "true" : "false");
      const note = pair[0].parentNode.querySelector(".ae-calc-bad");
      const text = bad ? pair[1] + "; the readouts keep the last good value" : "";
      if (note.textContent !== text) { note.textContent = text; }
    });
    r.table.hidden = !state.model;
    r.section.classList.toggle("ae-calc-counted", Boolean(state.model));
    r.notes.textContent = "";
    if (!state.model || !twinReady) { return; }
    const got = figures(twinReady, state.model, prompt, context);
    const fresh = view.model !== state.model; // a new model: no figure of the last one stays
    view.model = state.model;
    Object.keys(r.cells).forEach(function (k) {
      const cell = r.cells[k];
      if (got[k]) {
        cell.textContent = got[k][1];
        cell.setAttribute("data-value", String(got[k][0]));
      } else if (fresh) { // its count is not a number yet: said beside the field
        cell.textContent = "\u2014";
        cell.removeAttribute("data-value");
      }
    });
    state.model.notes.forEach(function (note) { r.notes.appendChild(el("li", {text: note})); });
  }

  function redraw() {
    views = views.filter(function (v) { return v.box.isConnected; });
    views.forEach(show);
  }

  // --- the box: the page's own (the build writes it outside the islands) ----------------

  function scan() { // fill every box on the page not filled yet
    const found = document.querySelectorAll("." + BOX);
    for (let i = 0; i < found.length; i++) {
      if (!found[i].querySelector(".ae-calc")) { fill(found[i]); }
    }
  }

  // the build puts this script's tag right after the box: fill it as the parser gets here,
  // not at the end of the parse, after the page's deferred scripts
  scan();
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", scan); }

  AE.costCalculator = {scan: scan, load: loadModel, count: countConfig, fmt: fmt,
                       state: state};
})();
